"""One scripted agent session against one demo, through the real bridge over stdio.

`Session` is what a task sees: read `app://windows`, call a window's tool (by window id and
action name), wait until the page shows something, and note what was wrong. Every call is
timed and kept. While a call is under way a watcher re-reads `app://windows` at every
`resources/updated`, so the session knows when a dialog really opened and what the windows
said meanwhile; `call` compares that with the answer (a call that answers long after its
dialog opened, a dialog missing from `openedWindowIds`, an MCP-shaped page error reported as
success, `stale_state` when nobody typed).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio
import mcp_types as types

from bench.peers.mcp_subject import result_text
from tests.support.mcp_harness import McpTestClient
from webmcp.desktop.tab import TAB_OPERATIONS

__all__ = ["Call", "Problem", "Session", "TaskFailed", "Windows"]

Windows = dict[str, Any]
SLOW_CALL_S = 5.0
"""A call slower than this is noted: no demo's own work takes more than a second or two."""
BROWSER_ACTIONS = TAB_OPERATIONS
"""A tab's own actions (every name a page tool may not take), apart from the page's tools."""
LATE_DIALOG_S = 2.0
"""A call that answers this long after its dialog was readable made the agent wait for nothing."""


class TaskFailed(Exception):
    """The task cannot go on (a tool is missing, a call failed that the task needs)."""


@dataclass
class Problem:
    kind: str
    detail: str


@dataclass
class Call:
    tool: str
    args: dict[str, Any]
    seconds: float
    is_error: bool
    code: str | None
    message: str
    opened: list[str]
    structured: dict[str, Any] | None
    dialogs_seen_at: dict[str, float] = field(default_factory=dict)
    """Modal windows that appeared in app://windows during the call, and when (s after it began)."""
    tabs_during: list[str] = field(default_factory=list)
    """What each tab window said while the call ran: "s: id title | address | summary" (the first 20)."""

    def short(self) -> dict[str, Any]:
        record = asdict(self)
        record["structured"] = _cap(json.dumps(self.structured, ensure_ascii=False), 600) if self.structured else None
        record["args"] = json.loads(_cap(json.dumps(self.args, ensure_ascii=False), 400, as_json=True))
        return record


def _cap(text: str, limit: int, *, as_json: bool = False) -> str:
    if len(text) <= limit:
        return text
    return json.dumps(text[:limit] + "…") if as_json else text[:limit] + "…"


def text_of(window: dict[str, Any]) -> str:
    """Everything a window shows as one string: title, summary and every block's text and values."""
    return json.dumps({k: window.get(k) for k in ("title", "summary", "blocks")}, ensure_ascii=False)


def address(window: dict[str, Any]) -> str:
    for block in window.get("blocks") or []:
        if block.get("id") == "address":
            return str(block["items"][0]["value"])
    return ""


def _mcp_error_text(value: Any) -> str | None:
    """The text of a page result in MCP's own error shape `{content: [...], isError: true}`, if it is one."""
    for candidate in (value, value.get("value") if isinstance(value, dict) else None):
        if isinstance(candidate, str):
            try:
                candidate = json.loads(candidate)
            except ValueError:
                continue
        if (
            isinstance(candidate, dict)
            and candidate.get("isError") is True
            and isinstance(candidate.get("content"), list)
        ):
            return " ".join(str(c.get("text", "")) for c in candidate["content"] if isinstance(c, dict))
    return None


class Session:
    """A connected bridge and everything the task did and saw."""

    def __init__(self, handle: McpTestClient, base: str) -> None:
        self.handle = handle
        self.base = base
        self.calls: list[Call] = []
        self.problems: list[Problem] = []
        self.notes: list[str] = []
        self.window_reads: list[float] = []
        self._listed: list[str] = []
        self._last: tuple[Call, set[str]] | None = None
        """The last call and the windows that existed before it, to find dialogs it opened but did not name."""
        self._reported: set[str] = set()
        self.seen_page_tools: set[str] = set()
        """Every page tool any tab listed during the session (the `{tab}__` prefix dropped)."""
        self.spent = {"answers": 0, "windows": 0, "lists": 0, "lists_read": 0}
        self._read_bytes = 0
        """The bytes an agent reads (issue 40): each call's answer (text and structured content), the
        windows it reads itself (the task's reads and one after each call; not the harness's watch),
        and the tool list at start and again after each `tools/list_changed` (`follow_lists`)."""

    # ---- reading -------------------------------------------------------------------------
    async def windows(self, *, counted: bool = True) -> Windows:
        """`app://windows`; `counted` when an agent would read it (its bytes go to `spent`)."""
        started = time.perf_counter()
        with anyio.fail_after(15):
            result = await self.handle.client.read_resource("app://windows")
        self.window_reads.append(time.perf_counter() - started)
        content = result.contents[0]
        assert isinstance(content, types.TextResourceContents)
        self._read_bytes = len(content.text.encode())
        if counted:
            self.spent["windows"] += self._read_bytes
        parsed: Windows = json.loads(content.text)
        return parsed

    async def tab(self, index: int = 0, *, counted: bool = True) -> dict[str, Any]:
        """The `index`-th tab window (not a modal)."""
        tabs: list[dict[str, Any]] = [w for w in (await self.windows(counted=counted))["windows"] if not w["modal"]]
        if len(tabs) <= index:
            raise TaskFailed(f"no tab window #{index}")
        return tabs[index]

    async def modals(self) -> list[dict[str, Any]]:
        return [w for w in (await self.windows())["windows"] if w["modal"]]

    async def tool_names(self) -> list[str]:
        with anyio.fail_after(15):
            listed = await self.handle.client.list_tools()
        self._listed = [t.name for t in listed.tools]
        for name in self._listed:
            window, _, action = name.partition("__")
            if window.startswith("tab-") and action not in BROWSER_ACTIONS:
                self.seen_page_tools.add(action)
        return self._listed

    async def page_tools(self, window_id: str) -> list[str]:
        """The window's page tools (what is not a browser action), as listed now."""
        prefix = f"{window_id}__"
        names = await self.tool_names()
        return [n[len(prefix) :] for n in names if n.startswith(prefix) and n[len(prefix) :] not in BROWSER_ACTIONS]

    async def until(self, holds: Callable[[Windows], bool], timeout: float = 10.0) -> float | None:
        """Seconds until the read of app://windows that showed `holds` began (0.0: the first read showed it),
        re-read at each resources/updated (and every 0.5 s); None if never.

        A read's own time is not counted: a page still animating makes the server wait for its rendering
        before it answers (45–57 ms on webmcp-maze's move), and that read still shows the write.
        """
        started = time.perf_counter()
        notes = self.handle.notifications
        began = 0.0
        with anyio.move_on_after(timeout):
            while True:
                seen = notes.count("resource_updated")
                state = await self.windows(counted=False)
                if holds(state):
                    self.spent["windows"] += self._read_bytes  # the read that shows it, once
                    return began
                with anyio.move_on_after(0.5):
                    await notes.wait_for("resource_updated", after=seen, timeout=timeout)
                began = time.perf_counter() - started
        return None

    async def wait_tool(self, window_id: str, action: str, timeout: float = 15.0) -> None:
        """Until `{window_id}__{action}` is listed (after each tools/list_changed, as an agent does)."""
        name = f"{window_id}__{action}"
        notes = self.handle.notifications
        with anyio.move_on_after(timeout):
            while True:
                seen = notes.count("tools_list_changed")
                if name in await self.tool_names():
                    return
                with anyio.move_on_after(1.0):
                    await notes.wait_for("tools_list_changed", after=seen, timeout=timeout)
        raise TaskFailed(f"{name} is not listed after {timeout:g} s (listed: {', '.join(self._listed)[:300]})")

    async def follow_lists(self) -> None:
        """Read the tool list now and again after each `tools/list_changed`, as a host does, counting its
        bytes (compact JSON, as on the wire); until cancelled."""
        notes = self.handle.notifications
        while True:
            seen = notes.count("tools_list_changed")
            with anyio.fail_after(15):
                listed = await self.handle.client.list_tools()
            self.spent["lists"] += sum(
                len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")))
                for t in listed.tools
            )
            self.spent["lists_read"] += 1
            await notes.wait_for("tools_list_changed", after=seen, timeout=3600)

    # ---- acting --------------------------------------------------------------------------
    async def call(
        self,
        window_id: str,
        action: str,
        args: dict[str, Any] | None = None,
        *,
        version: bool = False,
        timeout: float = 90.0,
        need: bool = True,
    ) -> Call:
        """Call `{window_id}__{action}`; with `version`, pass the window's current expectedVersion.

        Raises TaskFailed when `need` and the answer is an error."""
        args = dict(args or {})
        before = await self.windows(counted=False)
        if version:
            args["expectedVersion"] = next(w["version"] for w in before["windows"] if w["id"] == window_id)
        known = {w["id"] for w in before["windows"]}
        seen_at: dict[str, float] = {}
        tabs_seen: list[tuple[float, dict[str, Any]]] = []
        started = time.perf_counter()
        result: types.CallToolResult | None = None

        async def watch() -> None:
            notes = self.handle.notifications
            while True:
                seen = notes.count("resource_updated")
                for w in (await self.windows(counted=False))["windows"]:
                    if w["modal"] and w["id"] not in known and w["id"] not in seen_at:
                        seen_at[w["id"]] = time.perf_counter() - started
                    if not w["modal"]:
                        tabs_seen.append((time.perf_counter() - started, w))
                await notes.wait_for("resource_updated", after=seen, timeout=timeout + 5)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            try:
                with anyio.fail_after(timeout):
                    result = await self.handle.client.call_tool(f"{window_id}__{action}", args)
            except TimeoutError:
                pass
            finally:
                tg.cancel_scope.cancel()
        seconds = time.perf_counter() - started
        if result is None:
            call = Call(
                f"{window_id}__{action}", args, seconds, True, "no_answer", f"no answer in {timeout:g} s", [], None
            )
            self.calls.append(call)
            self.problem("no_answer", f"{call.tool} gave no answer within {timeout:g} s")
            raise TaskFailed(call.message)
        structured = result.structured_content if isinstance(result.structured_content, dict) else None
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        self.spent["answers"] += len(result_text(result).encode())
        code = (structured or {}).get("code") if result.is_error else None
        message = str((structured or {}).get("message") or (texts[0] if texts else ""))
        opened = list((structured or {}).get("openedWindowIds") or [])
        call = Call(
            f"{window_id}__{action}", args, seconds, bool(result.is_error), code, message, opened, structured, seen_at
        )
        call.tabs_during = [
            f"{at:.2f}: {w['id']} {w['title'][:60]} | {address(w)} | {w['summary'][:80]}" for at, w in tabs_seen[:20]
        ]
        self.calls.append(call)
        self._last = (call, known)
        after = await self.windows()
        self._mixed(before, tabs_seen, after)
        await self._judge(call, version, before, after)
        if need and call.is_error:
            raise TaskFailed(f"{call.tool} answered {call.code}: {call.message[:300]}")
        return call

    async def _judge(self, call: Call, version: bool, before: Windows, after: Windows) -> None:
        """What the answer said that was not true, or made the agent wait for nothing."""
        if call.seconds > SLOW_CALL_S:
            self.problem("slow_call", f"{call.tool} answered after {call.seconds:.1f} s")
        if call.code == "stale_state" and version:
            window = call.tool.partition("__")[0]

            def shown(state: Windows) -> Any:
                return next(((w["summary"], w["blocks"]) for w in state["windows"] if w["id"] == window), None)

            if shown(before) == shown(after):
                self.problem(
                    "stale_state", f"{call.tool} with the window's current expectedVersion: {call.message[:200]}"
                )
            else:  # the window shows something else than what was read: the refusal is true
                self.note(f"{call.tool} refused as stale_state: the page changed since it was read (true)")
        if re.search(r"\btyped\b", call.message) and not call.is_error:
            self.problem("says_person_typed", f"{call.tool}: {call.message[:200]}")
        page_error = _mcp_error_text((call.structured or {}).get("result"))
        if page_error is not None and not call.is_error:
            self.problem(
                "error_as_success",
                f"{call.tool} returned isError: true ({page_error[:160]!r}) and the bridge said {call.message[:80]!r}",
            )
        self._unnamed_dialogs(await self.windows(counted=False), "right after the answer")
        for dialog, at in call.dialogs_seen_at.items():
            if call.seconds - at > LATE_DIALOG_S:
                self.problem(
                    "late_after_dialog",
                    f"{call.tool}: {dialog} was in app://windows at {at:.1f} s, "
                    f"the answer came at {call.seconds:.1f} s",
                )

    def _mixed(self, before: Windows, during: list[tuple[float, dict[str, Any]]], after: Windows) -> None:
        """A tab that, while the call ran, showed the next page's title over the address of the
        page it left: one window mixing two documents."""
        old = {w["id"]: w for w in before["windows"] if not w["modal"]}
        new = {w["id"]: w for w in after["windows"] if not w["modal"]}
        for tab_id, w0 in old.items():
            w1 = new.get(tab_id)
            if w1 is None or address(w1) == address(w0) or w1["title"] == w0["title"]:
                continue
            for at, w in during:
                if w["id"] == tab_id and w["title"] != w0["title"] and address(w) == address(w0):
                    self.problem(
                        "mixed_documents",
                        f"{tab_id} at {at:.2f} s: title {w['title']!r} (the next page) over the address "
                        f"{address(w0)} and summary {w['summary'][:80]!r} of the page it left",
                    )
                    break

    def _unnamed_dialogs(self, state: Windows, when: str) -> None:
        """A modal window that the last call opened (new since it began, owned by a tab) but did not name."""
        if self._last is None:
            return
        call, known = self._last
        if call.is_error:
            return
        answered = call.tool.split("__")[0]
        for w in state["windows"]:
            new = w["modal"] and w["id"] not in known and w["id"] not in call.opened and w["id"] != answered
            if new and w["id"] not in self._reported:
                self._reported.add(w["id"])
                self.problem(
                    "missing_openedWindowIds",
                    f"{call.tool} answered openedWindowIds={call.opened}, but {w['id']} ({w['title'][:60]!r}) "
                    f"opened with it (seen {when})",
                )

    def problem(self, kind: str, detail: str) -> None:
        self.problems.append(Problem(kind, detail))

    def note(self, text: str) -> None:
        self.notes.append(text)

    async def check(
        self, what: str, holds: Callable[[Windows], bool], *, timeout: float = 10.0, sync: bool = True
    ) -> bool:
        """Whether the page comes to show `what`; with `sync` (the last call's effect was done when
        it answered), showing it only later is read-after-write broken and is noted."""
        final: list[Windows] = []

        def holds_and_keep(state: Windows) -> bool:
            final[:] = [state]
            return holds(state)

        waited = await self.until(holds_and_keep, timeout)
        if final:
            self._unnamed_dialogs(final[0], "when the task read the page")
        if waited is None:
            self.note(f"page never showed: {what} (within {timeout:g} s)")
            return False
        if sync and waited > 0:  # the first read after the answer did not show it
            last = self.calls[-1].tool if self.calls else "?"
            self.problem(
                "read_after_write", f"after {last} answered, app://windows showed {what} only {waited:.2f} s later"
            )
        return True
