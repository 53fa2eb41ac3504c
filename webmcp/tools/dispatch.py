"""Carrying out a tool call: the checks in order, then the handler, one at a time per window.

Order of checks, each failing with a structured `ToolError` and no effect
(GUI bridge §7 (docs/protocols.md#gui-7)): the window exists (`window_not_found`), it is operable
(`blocked_by_modal`), the action exists (`action_not_available`), the input matches the
schema (`validation_failed`), and, under the window's lock and against the page as it is
now, `expectedVersion` is current (`stale_state`). A browser action's handler then gets its
input model built from the checked arguments. A CDP failure that no part mapped at its own
edge becomes a tool error here, in `_run`, through `errors.cdp_errors` (the generic codes of
`errors.from_cdp_error`); a part whose operation gives a failure a meaning of its own (a dialog
already answered, a form gone) maps it in that operation with the same context manager.

Concurrency policy: operations on one window take effect one at a time, in arrival order
(a per-window lock); operations on different windows run side by side, so a page that
hangs only holds up calls to its own window, and only until its deadline. No lock is held
while a JavaScript dialog waits for an answer: a tool call that opens one returns at once.

The dispatcher sees the desktop through the small `DesktopPort` protocol below and each
window through `kinds.AnyWindow`, asking for page tools only of a `kinds.PageToolWindow`
(a tab, an in-page modal), so it is tested without a browser (tests/tools/test_dispatch.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from typing import Any, Protocol

import anyio
from pydantic import BaseModel

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import VersionCheck, WindowState, blocker_of
from webmcp.errors import ToolError, cdp_errors
from webmcp.models import ToolResult
from webmcp.tools.kinds import AnyWindow, PageToolWindow, has_page_tools
from webmcp.tools.records import Answer, WindowKind, record_for
from webmcp.tools.validate import check_input, validate

__all__ = ["DesktopPort", "call_tool"]


class _Timeouts(Protocol):
    @property
    def tool_call(self) -> float: ...


class DesktopPort(Protocol):
    """What the dispatcher needs of the desktop."""

    @property
    def timeouts(self) -> _Timeouts: ...
    def window_states(self) -> list[WindowState]: ...
    def window(self, window_id: str) -> Any: ...
    def known_secrets(self) -> frozenset[str]: ...
    def listening(self, listener: Callable[[], None]) -> AbstractContextManager[None]:
        """Within the block, `listener()` is called after every change of the published state (a wait's wake)."""
        ...


async def call_tool(desktop: DesktopPort, name: str, arguments: dict[str, Any] | None) -> Answer:
    """Carry out the tool `name`.

    Raises:
        ToolError: a check failed, or the operation did (with the code that says which).
    """
    args = dict(arguments or {})
    window_id, sep, action = name.partition("__")
    if not sep or not action:
        raise ToolError(
            "action_not_available", f"{name!r} is not a window tool; tool names are {{windowId}}__{{action}}."
        )
    # Absent is fine; present it must be an integer (a null is refused too: found by fuzzing).
    has_expected = "expectedVersion" in args
    expected = args.pop("expectedVersion", None)
    if has_expected and (not isinstance(expected, int) or isinstance(expected, bool)):
        raise ToolError(
            "validation_failed",
            "expectedVersion must be an integer",
            fields=[{"field": "expectedVersion", "error": "Must be an integer"}],
        )
    if window_id == "app":
        app_record = record_for("app", action)
        if app_record is None:
            raise ToolError("action_not_available", f"There is no app-level action {action!r}.")
        validate(app_record.input_schema, args)
        app_input = app_record.input_model.model_validate(args)
        return await _run(lambda: app_record.run(desktop, app_input), f"{action} (app)")
    states = desktop.window_states()
    window: AnyWindow | None = desktop.window(window_id) if any(w.id == window_id for w in states) else None
    if window is None:
        raise ToolError(
            "window_not_found",
            f"Window {window_id} does not exist (it closed, or never existed); re-read app://windows.",
        )
    _check_operable(states, window_id)
    kind: WindowKind = window.window_kind  # type: ignore[assignment]
    record = record_for(kind, action)
    absent = None  # why a window action is not offered now, when it says
    if record is not None and not record.offered_on(window):
        absent = record.why_not(window) if record.why_not is not None else None
        record = None
    # Page tools are looked up only on a window that has them (a tab, an in-page modal).
    caller: PageToolWindow | None = window if has_page_tools(window) else None
    tool = _page_tool(caller.page_tools(), action) if record is None and caller is not None else None
    if record is None and tool is None:
        raise ToolError(
            "action_not_available",
            absent
            or f"Window {window_id} has no tool {action!r} now (the page may have removed it or navigated); "
            "re-read tools/list.",
        )
    params: BaseModel | None = None
    if record is not None:
        validate(record.input_schema, args)
        params = record.input_model.model_validate(args)
        if record.page_call is not None:
            # The record names a page tool (call_page_tool): from here on, a call of that tool.
            tool, args = record.page_call(window, params)
            record = None
    if tool is not None:
        await check_input(tool.input_schema, args, tool.fingerprint or None)
    # One deadline for the whole call: the lock wait, the version check and the page's work.
    deadline = anyio.current_time() + desktop.timeouts.tool_call
    if record is not None and record.waiter is not None:
        waiter = record.waiter

        async def wait() -> ToolResult:
            # A wait changes nothing: no lock (the window's other calls go on), the version checked as read.
            if expected is not None:
                _check_version((await _check_by(window, deadline)).version, expected)
            return await waiter(desktop, window_id, params)

        return await _run(wait, f"{action} on {window_id}")

    async def operate() -> ToolResult | Answer:
        async with _window_lock(window.op_lock, window_id, desktop.timeouts.tool_call):
            # The check is this call's own: handed to the page call, kept nowhere else.
            check = None
            if expected is not None:
                check = await _check_by(window, deadline)
                _check_version(check.version, expected)
            if not window.is_open():
                raise ToolError("window_not_found", f"Window {window_id} closed.")
            if tool is not None:
                if caller is None:
                    raise ToolError("action_not_available", f"Window {window_id} has no page tools.")
                return await caller.call(tool, args, deadline, check)
            assert record is not None
            return await record.run(window, params, check)

    return await _run(operate, f"the call to {tool.name!r}" if tool is not None else f"{action} on {window_id}")


async def _run(work: Callable[[], Awaitable[ToolResult | Answer]], what: str) -> Answer:
    """Run `work` at the tools' edge: a CDP failure no part mapped becomes the generic tool error for `what`."""
    with cdp_errors(what):
        result = await work()
    return result if isinstance(result, Answer) else Answer(result)


def _page_tool(tools: Sequence[PageTool], handle: str) -> PageTool | None:
    return next((t for t in tools if t.handle == handle), None)


def _check_operable(states: Sequence[WindowState], window_id: str) -> None:
    blocker = blocker_of(states, window_id)
    if blocker is not None:
        raise ToolError(
            "blocked_by_modal",
            f"Window {window_id} is blocked by {blocker}; answer that window first.",
            blocking_window_id=blocker,
        )


async def _check_by(window: AnyWindow, deadline: float) -> VersionCheck:
    """The window's version checked now, or `state_unverified` if the page cannot be read by `deadline`."""
    with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
        return await window.check_version()
    raise ToolError(
        "state_unverified",
        f"Window {window.window.id} could not be read before the deadline (the page is busy), so expectedVersion "
        "could not be checked; nothing was started. Read app://windows and try again.",
        current_version=window.window.version,
        page_told=False,
    )


def _check_version(current: int, expected: int) -> None:
    if expected != current:
        raise ToolError(
            "stale_state",
            f"The window changed (version {current}, you expected {expected}); re-read app://windows before deciding.",
            current_version=current,
        )


@asynccontextmanager
async def _window_lock(lock: anyio.Lock, window_id: str, timeout: float) -> AsyncIterator[None]:
    """Hold `window_id`'s lock; an operation that cannot get it in `timeout` is refused."""
    try:
        lock.acquire_nowait()  # free means nobody waits (anyio hands a released lock to the next waiter)
    except anyio.WouldBlock:
        with anyio.move_on_after(timeout) as waited:
            await lock.acquire()
        if waited.cancelled_caught:
            raise ToolError(
                "action_timeout", f"Window {window_id} stayed busy with an earlier operation; try again."
            ) from None
    try:
        yield
    finally:
        lock.release()
