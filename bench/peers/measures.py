"""What one session of one server is measured on, step by step (the pages and their checks).

A session starts the server, then on the sample site: navigates to each page and reads its
state (checking that the state keeps every label, value, notice, header and the row count),
calls a read-only page tool 20 times, waits idle for a late-registered tool, signs in through
the page's form tool (the browser fills the fields) with a unique password and card number and
looks for both in everything the server said (outputs, stderr, files it wrote),
and ends with a tool that opens confirm() (last: it can leave a server stuck).
Every step is bounded; a failing step is recorded as "failed: reason" and the session goes on.
"""

from __future__ import annotations

import re
import statistics
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .mcp_subject import StepFailed

__all__ = ["PAGES", "PASSWORD", "Page", "run_session", "shown"]

READ_ONLY_CALLS = 20
LATE_MS = 1500
LATE_WAIT = 10.0
# Unique enough that finding it anywhere means the typed value itself leaked.
PASSWORD = "Tq7-hunter2-Zx91"
CARD = "4929773100526618"  # into the form's autocomplete="cc-number" field


@dataclass(frozen=True)
class Page:
    key: str
    path: str
    what: str
    kept: dict[str, list[str]] = field(default_factory=dict)
    """kind → patterns (regular expressions) the state text must hold."""
    modal: bool = False


def _words(*texts: str) -> list[str]:
    return [re.escape(t) for t in texts]


PAGES = [
    Page(
        "small",
        "/ticket.html?id=101",
        "small page (ticket)",
        {
            "labels": _words("Customer", "Status", "Priority", "Description"),
            "values": _words("Maria Lopez", "The reset email never arrives."),
            "notices": _words("Showing ticket #101."),
        },
    ),
    Page(
        "form",
        "/",
        "form page + iframe tool (queue)",
        {
            "labels": _words("Subject", "Priority", "Description", "Customer email", "Message", "Search articles"),
            "values": _words("normal"),
            "notices": _words("Queue loaded."),
            "headers": _words("ID", "Subject", "Status", "Priority"),
            "rows": _words("#101", "#102", "#103", "#104", "#105", "#106"),
        },
    ),
    Page(
        "dialog",
        "/modal.html",
        "page with an open <dialog>",
        {
            "labels": _words("Edit queue settings", "Queue name", "First response target (hours)"),
            "values": [re.escape("Tier 1"), r"\b4\b"],
        },
        modal=True,
    ),
    Page(
        "big",
        "/big.html?rows=3000",
        "3,000-row table",
        {
            "notices": _words("Loaded 3000 orders."),
            "headers": _words("ID", "Customer", "Amount", "Status"),
            "rows": [r"\b3,?000\b", r"\b10001\b"],
        },
    ),
]


def missing(page: Page, text: str) -> list[str]:
    """The kinds/patterns of `page.kept` the state text lacks."""
    return [f"{kind} “{shown(p)}”" for kind, pats in page.kept.items() for p in pats if not re.search(p, text)]


def shown(pattern: str) -> str:
    """A pattern as a reader wants to see it: `\\b3,?000\\b` → `3,?000`, `\\#101\\.` → `#101.`."""
    return re.sub(r"\\(.)", r"\1", pattern.replace(r"\b", ""))


@dataclass
class SessionResult:
    """One server, one round: measure name → seconds, a number, a bool, or 'failed: …'."""

    values: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


async def _step(result: SessionResult, name: str, timeout: float, fn: Callable[[], Awaitable[Any]]) -> Any:
    try:
        with anyio.fail_after(timeout):
            return await fn()
    except StepFailed as exc:
        result.values[name] = f"failed: {exc}"
    except TimeoutError:
        result.values[name] = f"failed: no answer within {timeout:g} s"
    except Exception as exc:  # boundary: a peer failing a measure is a result, never a crash
        result.values[name] = f"failed: {type(exc).__name__}: {exc}"
        result.notes[name + ".trace"] = traceback.format_exc(limit=3)
    return None


async def run_session(subject: Any, site: str) -> SessionResult:
    """All measures on one freshly started server; the server is closed at the end."""
    result = SessionResult()
    values = result.values
    try:
        await _measure_all(subject, site, result)
    finally:
        await subject.close()
    if subject.key != "raw":
        values.setdefault("password_leaked", "failed: not measured")
    return result


async def _measure_all(subject: Any, site: str, result: SessionResult) -> None:
    values = result.values

    started = time.perf_counter()
    try:
        # Not inside a _step: the client's task group must close in the scope it opened in.
        await subject.open()
    except Exception as exc:  # boundary, as in _step
        values["start_first_list"] = f"failed: {type(exc).__name__}: {exc}"
        return

    async def start() -> None:
        first, holds, ready = await subject.start(site, started)
        values.update(start_first_list=first, start_holds_page_tools=holds, start_page_tools=ready)

    await _step(result, "start_first_list", 90, start)
    if isinstance(values.get("start_first_list"), str):
        return  # nothing else can run

    for page in PAGES:

        async def visit(page: Page = page) -> None:
            started = time.perf_counter()
            await subject.navigate(site + page.path)
            navigated = time.perf_counter()
            text = await (subject.open_modal() if page.modal else subject.state())
            values[f"nav_{page.key}"] = time.perf_counter() - started
            values[f"nav_only_{page.key}"] = navigated - started
            values[f"bytes_{page.key}"] = len(text.encode())
            values[f"kept_{page.key}"] = missing(page, text) if subject.key != "raw" else None
            if page.modal:
                await subject.close_modal()

        await _step(result, f"nav_{page.key}", 120, visit)

    async def calls(key: str, tool: str, args: dict[str, Any], expect: str) -> None:
        times = []
        for _ in range(READ_ONLY_CALLS):
            started = time.perf_counter()
            answer = await subject.page_tool(tool, args)
            times.append(time.perf_counter() - started)
            if expect not in answer:
                raise StepFailed(f"{tool} answered without {expect!r}: {answer[:120]}")
        values[key] = statistics.median(times)

    async def read_only() -> None:
        # A read that leaves the page as it is: the call path alone.
        await subject.navigate(site + "/")
        await calls("read_only", "get_queue_summary", {}, "byStatus")

    await _step(result, "read_only", 120, read_only)

    # A read that also writes the page's activity log: the bridge answers once that is in its view.
    await _step(
        result,
        "page_changing",
        120,
        lambda: calls("page_changing", "list_tickets", {"status": "all"}, "Cannot reset my password"),
    )

    async def late() -> None:
        values["late_tool"] = await subject.late_tool(f"{site}/?late={LATE_MS}", "escalate_ticket", LATE_WAIT)

    await _step(result, "late_tool", 60, late)

    if subject.key != "raw":

        async def password() -> None:
            await subject.navigate(site + "/login.html")
            await subject.page_tool("sign_in", {"username": "sam.okafor", "password": PASSWORD, "card": CARD})
            await subject.state()
            for key, secret in (("password_leaked", PASSWORD), ("card_leaked", CARD)):
                where = subject.where_said(secret)
                values[key] = bool(where)
                if where:
                    result.notes[key] = " | ".join(where)[:1500]

        await _step(result, "password_leaked", 60, password)

    async def confirm() -> None:
        await subject.navigate(site + "/danger.html")
        started = time.perf_counter()
        delivered, note = await subject.confirm()
        values["confirm"] = time.perf_counter() - started
        values["confirm_result"] = delivered
        result.notes["confirm"] = note

    await _step(result, "confirm", 60, confirm)
