"""What one session of one server is measured on, step by step (the pages and their checks).

A session starts the server, then on the sample site: navigates to each page and reads its
state (checking that the state keeps every label, value, notice, header and the row count),
calls a read-only page tool 20 times, waits idle for a late-registered tool, signs in through
the page's form tool (the browser fills the fields) with a unique password and card number and
looks for both in everything the server said (outputs, stderr, files it wrote),
and ends with a tool that opens confirm() (last: it can leave a server stuck).

A second session (issue 22) starts the server on a page of `bench.site`, which the bridge was
not tuned on and no test uses, then on each such page: navigates and reads the state (with the
page's key texts checked), calls its read-only tool 20 times, its page-changing tool 20 times,
and that tool followed by a state read 10 times.
Every step is bounded; a failing step is recorded as "failed: reason" and the session goes on.
"""

from __future__ import annotations

import functools
import random
import re
import statistics
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .mcp_subject import StepFailed

__all__ = ["BENCH_PAGES", "PAGES", "PASSWORD", "BenchPage", "Page", "run_bench_session", "run_session", "shown"]

READ_ONLY_CALLS = 20
CHANGING_CALLS = 20
CHANGING_STATE_CALLS = 10
LATE_MS = 1500
LATE_WAIT = 10.0
PHASE_JITTER = 0.0
"""Seconds, at most, of idle before each timed call (not timed; `--phase-jitter`): calls made back to
back meet the page's 60 Hz frame clock at about the same phase all round long, and a page-changing
call costs a frame (~5–8 ms) or not by that phase alone. Drawn from one seeded sequence per tool, so
every subject waits the same pauses."""
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


@dataclass(frozen=True)
class Call:
    tool: str
    args: Callable[[int], dict[str, Any]]
    """The arguments of the i-th call (a page-changing call changes something new each time)."""
    expect: str
    """Text every answer holds (the tool's own result, whatever the server wraps it in)."""


@dataclass(frozen=True)
class BenchPage(Page):
    """A page of bench.site with its read-only and its page-changing tool."""

    read_only: Call | None = None
    changing: Call | None = None


# Skus of bench.site's shop that are in stock (every ninth from MR-1005 is sold out).
_IN_STOCK = [f"MR-{1001 + i}" for i in range(40) if i % 9 != 4]
_PASSAGES = [
    "The city council voted seven to two on Tuesday night",
    "the 1938 steel span will carry buses, bicycles and people on foot",
    "From March it is a street again.",
    "would ask for a review of the decision within twelve months",
    "about 21,000 vehicles a day use the bridge now",
    "a protected cycle lane on Quay Street",
    "I will believe it when I can set my watch by it.",
    "Cycling groups, who packed the public gallery for the vote",
    "It was shut for eleven weeks in 1987",
    "Work on the new crossings is due to begin in January.",
]
_COLUMNS = ["todo", "doing", "done"]

BENCH_PAGES = [
    BenchPage(
        "shop",
        "/shop/",
        "bench shop (40 product cards)",
        {
            "headers": _words("All gear"),
            "notices": _words("40 of 40 products", "We use cookies to remember your cart"),
            "labels": _words("Search Meridian", "Sort by", "In stock only", "Footwear"),
            "values": _words("Featured", "Any price"),
            "rows": _words("Slate Trail shoe", "$89.00", "Sand Trekking poles", "Sold out"),
            "buttons": _words("Add Slate Trail shoe to cart", "Cart, 0 items"),
        },
        read_only=Call("search_products", lambda i: {"query": "rain shell", "maxResults": 5}, "MR-1002"),
        changing=Call("add_to_cart", lambda i: {"sku": _IN_STOCK[i % len(_IN_STOCK)], "quantity": 1}, "cartCount"),
    ),
    BenchPage(
        "story",
        "/news/story.html",
        "bench news story (~490 words)",
        {
            "headers": _words("Harbour bridge to close to cars from March after decade-long fight", "Your highlights"),
            "values": _words("Ines Park", "24 November 2026", "Comments (38)"),
            "text": _words(
                "The city council voted seven to two",
                "about 21,000 vehicles a day",
                "Work on the new crossings is due to begin in January.",
            ),
            "links": _words("Quay Street cycle lane: what the plans show", "Storm warning for the coast"),
        },
        read_only=Call("get_article", lambda i: {}, "Ines Park"),
        changing=Call("save_highlight", lambda i: {"text": _PASSAGES[i % len(_PASSAGES)]}, "saved"),
    ),
    BenchPage(
        "tasks",
        "/app/tasks.html",
        "bench task board (30 cards)",
        {
            "headers": _words("Website relaunch", "To do", "In progress", "Done"),
            "notices": [r"30 tasks\W+10 done"],
            "rows": _words(
                "T-101", "Draft the Q3 roadmap", "T-130", "Plan the team offsite (part 3)", "Assigned to Rui"
            ),
        },
        read_only=Call("list_tasks", lambda i: {"column": "doing"}, "T-102"),
        # T-101… each move once, to the next column: every call changes the board.
        changing=Call("move_task", lambda i: {"id": f"T-{101 + i}", "column": _COLUMNS[(i + 1) % 3]}, "from"),
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

    async def start_state() -> None:  # issue 22: … and the page's first state in hand
        text = await subject.state()
        values["start_state_sample"] = time.perf_counter() - started
        values["bytes_start_sample"] = len(text.encode())

    await _step(result, "start_state_sample", 60, start_state)

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
        values[key] = await _calls(subject, Call(tool, lambda i: args, expect), READ_ONLY_CALLS)

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
    listing = Call("list_tickets", lambda i: {"status": "all"}, "Cannot reset my password")
    await _step(
        result, "page_changing_state", 120, lambda: _changing_state(subject, listing, values, "page_changing_state")
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


async def _calls(subject: Any, call: Call, n: int, then_state: bool = False) -> float:
    """Median seconds of `n` calls of `call` (each followed by a state read when `then_state`)."""
    times = []
    pauses = random.Random(call.tool)
    for i in range(n):
        if PHASE_JITTER:
            await anyio.sleep(pauses.uniform(0.0, PHASE_JITTER))
        started = time.perf_counter()
        answer = await subject.page_tool(call.tool, call.args(i))
        if then_state:
            await subject.state()
        times.append(time.perf_counter() - started)
        if call.expect not in answer:
            raise StepFailed(f"{call.tool} answered without {call.expect!r}: {answer[:120]}")
    return statistics.median(times)


async def _changing_state(subject: Any, call: Call, values: dict[str, Any], key: str) -> None:
    """The page-changing tool, then a state read: what a peer's client does to see the change."""
    shifted = Call(call.tool, lambda i: call.args(i + CHANGING_CALLS), call.expect)  # changes not made yet
    values[key] = await _calls(subject, shifted, CHANGING_STATE_CALLS, then_state=True)


async def run_bench_session(subject: Any, site: str, pages: list[BenchPage]) -> SessionResult:
    """Issue 22 on bench.site: start on pages[0] (the bridge has it on its command line), then on
    each page: navigate + state (kept?), the read-only tool ×20, the page-changing tool ×20, and
    that tool + a state read ×10. The server is closed at the end."""
    result = SessionResult()
    try:
        await _bench_all(subject, site, pages, result)
    finally:
        await subject.close()
    return result


async def _bench_all(subject: Any, site: str, pages: list[BenchPage], result: SessionResult) -> None:
    values = result.values
    first = pages[0]
    started = time.perf_counter()
    try:
        await subject.open()  # outside a _step, as in run_session
    except Exception as exc:  # boundary, as in _step
        values[f"start_state_{first.key}"] = f"failed: {type(exc).__name__}: {exc}"
        return

    async def start() -> None:
        assert first.changing is not None
        elapsed, text = await subject.start_state(site + first.path, first.changing.tool, started)
        values[f"start_state_{first.key}"] = elapsed
        values[f"bytes_start_{first.key}"] = len(text.encode())

    await _step(result, f"start_state_{first.key}", 90, start)
    if isinstance(values.get(f"start_state_{first.key}"), str):
        return

    for page in pages:

        async def visit(page: BenchPage = page) -> None:
            started = time.perf_counter()
            await subject.navigate(site + page.path)
            navigated = time.perf_counter()
            text = await subject.state()
            values[f"nav_{page.key}"] = time.perf_counter() - started
            values[f"nav_only_{page.key}"] = navigated - started
            values[f"bytes_{page.key}"] = len(text.encode())
            values[f"kept_{page.key}"] = missing(page, text) if subject.key != "raw" else None

        await _step(result, f"nav_{page.key}", 120, visit)
        if page.read_only is not None:
            ro = f"ro_{page.key}"
            await _step(result, ro, 120, functools.partial(_into, values, ro, subject, page.read_only, READ_ONLY_CALLS))
        if page.changing is not None:
            rw, rws = f"rw_{page.key}", f"rws_{page.key}"
            await _step(result, rw, 180, functools.partial(_into, values, rw, subject, page.changing, CHANGING_CALLS))
            await _step(result, rws, 180, functools.partial(_changing_state, subject, page.changing, values, rws))


async def _into(values: dict[str, Any], key: str, subject: Any, call: Call, n: int) -> None:
    values[key] = await _calls(subject, call, n)
