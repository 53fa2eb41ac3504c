"""Starting a page tool's invocation: `invokeTool`, the page's taking of it, and its deadline.

A busy page takes the command only when its main thread is free, which may be after the
call's deadline; a call answered `action_timeout` must then never start behind the agent's
back, so whoever is left waiting cancels the invocation the moment the page takes it.

The command goes out from the call's own task when the channel takes it whole at once (the
debugging pipe with room, as it almost always has): one task switch and one task fewer on
every call than sending it from a task of its own (issue 22). Only a write that would have to
wait for a full pipe is left to a task, so that the deadline can neither cut a message in
two nor be held up by the write.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import anyio

from cdp_bridge.errors import CDPError
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.mirror import Invocation, PageTool, Starting
from webmcp.errors import ToolError, cdp_errors

__all__ = ["Invocations", "StartHost", "start_invocation"]


class Invocations(Protocol):
    """The page's side of a call: start it, cancel it, finish it (`ToolMirror`)."""

    def begin(
        self, tool: PageTool, arguments: dict[str, Any], preceded_by: list[tuple[str, dict[str, Any]]]
    ) -> Starting | None: ...
    async def start(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        timeout: float,
        preceded_by: list[tuple[str, dict[str, Any]]],
    ) -> Invocation: ...
    async def taken(self, starting: Starting, timeout: float) -> Invocation: ...
    async def cancel(self, invocation: Invocation, timeout: float, reason: str) -> bool: ...
    def finish(self, invocation: Invocation) -> None: ...
    def current(self, key: tuple[str | None, str, str]) -> PageTool | None:
        """The tool the page offers now under `key` (a new document registers new objects)."""


class StartHost(Protocol):
    """What starting a call needs of the tab it runs on (a part of `calls.CallHost`)."""

    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def replacing_document(self) -> bool:
        """The main frame began loading another document, which has not committed yet."""

    async def navigation_settled(self, budget: float) -> None: ...

    def ended(self) -> str | None:
        """ "crashed" or "closed" once the tab can no longer answer, else None."""

    def woken_by_its_end(self, event: anyio.Event) -> AbstractContextManager[None]:
        """Within the block, `event` is set too when the tab closes or its renderer crashes."""

    def spawn_follower(self, func: Any, *args: Any) -> None:
        """Run a task that follows a call past its request (supervised; its failure is noted on the tab)."""


def _left(deadline: float) -> float:
    return max(0.0, deadline - anyio.current_time())


async def start_invocation(
    host: StartHost, mirror: Invocations, tool: PageTool, arguments: dict[str, Any], deadline: float
) -> Invocation:
    """Send `invokeTool` and wait for the page to take it, at most until `deadline`.

    Written from the caller's task when the channel takes it at once (`ToolMirror.begin`),
    else from a task of its own (see the module's docstring). A call given up on before the
    page took it (its deadline, its client's cancel) leaves a task that cancels it if it
    is taken later. A call made while the tab's document is being replaced goes to the new
    document (see `_tool_of_the_document_shown`), and so does one that the old document took
    and lost with itself.

    Raises:
        ToolError: the page did not take the call by the deadline, the browser refused it,
            or the tool is gone with the document that offered it.
    """
    # The edge of the call's start: a browser failure anywhere in it is this call's tool error.
    with cdp_errors(f"the call to {tool.name!r}", host.timeouts.command):
        while True:
            tool = await _tool_of_the_document_shown(host, mirror, tool, deadline)
            invocation = await _start(host, mirror, tool, arguments, deadline)
            try:
                lost = await _lost_with_its_document(host, mirror, invocation, deadline)
            except BaseException:  # given up while it was not known where the call went: not left running
                host.spawn_follower(_cancel_taken, mirror, invocation, host.timeouts.command)
                raise
            if not lost:
                return invocation


async def _start(
    host: StartHost, mirror: Invocations, tool: PageTool, arguments: dict[str, Any], deadline: float
) -> Invocation:
    """Send `invokeTool` once and wait for the page to take it (see `start_invocation`)."""
    timeouts = host.timeouts
    wake = anyio.Event()
    starting = mirror.begin(tool, arguments, preceded_by=_acting_for_the_user(tool))
    if starting is None:
        return await _start_in_a_task(host, mirror, tool, arguments, deadline)
    starting.reply.wakes(wake)
    given_up = True
    try:
        # A crashed or closed tab never answers invokeTool: its end sets the same event. One event
        # and no task per thing that may end the wait: this is on the path of every call.
        with anyio.move_on_after(_left(deadline)), host.woken_by_its_end(wake):
            await wake.wait()
        given_up = False
    finally:
        # Given up (the client's cancel) even as the answer came: the page has the call, and
        # nobody will have the invocation to cancel it but this follower.
        if given_up or not starting.reply.answered:
            host.spawn_follower(_cancel_if_taken_late, host, mirror, starting)
    if not starting.reply.answered:
        raise _not_taken(host, tool)
    return await mirror.taken(starting, timeouts.command)


async def _tool_of_the_document_shown(
    host: StartHost, mirror: Invocations, tool: PageTool, deadline: float
) -> PageTool:
    """`tool` as the document the tab shows offers it, once a document that replaces the last one is usable.

    Chromium 156 loses a call that reaches a document being replaced (an alert's page that
    reloads once it is accepted): it never answers `invokeTool`, or answers it and never runs
    the tool. A call made then waits for the new document and calls the tool it registered
    (a new object, with the same key), or says at once that the tool is gone.

    Raises:
        ToolError: the tool is gone, or the new document did not commit by the deadline.
    """
    if not host.replacing_document and mirror.current(tool.key) is tool:
        return tool
    await host.navigation_settled(_left(deadline))
    if host.replacing_document:
        raise ToolError(
            "action_timeout",
            f"The tab was still loading another document when the call to {tool.name} was due; it was not sent.",
            page_told=False,
        )
    live = mirror.current(tool.key)
    if live is None:
        raise ToolError(
            "action_not_available",
            f"The page no longer offers {tool.name} (it may have loaded another document); it did not run. "
            "Re-read tools/list.",
        )
    return live


async def _lost_with_its_document(
    host: StartHost, mirror: Invocations, invocation: Invocation, deadline: float
) -> bool:
    """True when the page took the call as its document was being replaced, and never ran it.

    Such a call runs if the page starts it before the new document commits; once that
    document has committed, Chromium 156 never starts it nor answers it. Waits (bounded) for
    the one or the other only when a document is being replaced.
    """
    if not host.replacing_document or invocation.started or invocation.done.is_set():
        return False
    wake = anyio.Event()
    invocation.start_wakers.append(wake)
    try:
        with anyio.move_on_after(_left(deadline)), host.woken_by_its_end(wake):
            await wake.wait()
    finally:
        invocation.start_wakers.remove(wake)
    if invocation.started or invocation.done.is_set() or invocation.navigated_to is None:
        return False
    mirror.finish(invocation)
    return True


async def _cancel_if_taken_late(host: StartHost, mirror: Invocations, starting: Starting) -> None:
    """Wait (bounded) for the page to take a call its caller gave up on, and cancel it at once."""
    try:
        late = await mirror.taken(starting, host.timeouts.command)
    except CDPError:
        return  # refused, or never taken: it does not run
    await _cancel_taken(mirror, late, host.timeouts.command, "the page took it only after its deadline")


async def _cancel_taken(
    mirror: Invocations, invocation: Invocation, timeout: float, reason: str = "the agent's request was cancelled"
) -> None:
    """Cancel a call the page took when nobody waited for it any more (`reason`: why), and stop tracking it."""
    await mirror.cancel(invocation, timeout, reason)
    mirror.finish(invocation)


async def _start_in_a_task(
    host: StartHost, mirror: Invocations, tool: PageTool, arguments: dict[str, Any], deadline: float
) -> Invocation:
    """`start_invocation` when the command cannot be written at once: a task of its own sends it."""
    taken = anyio.Event()
    wake = anyio.Event()
    box: dict[str, Any] = {}
    timeouts = host.timeouts

    async def start() -> None:
        try:
            box["invocation"] = await mirror.start(
                tool, arguments, timeouts.command + _left(deadline), preceded_by=_acting_for_the_user(tool)
            )
        except CDPError as exc:
            box["error"] = exc
        finally:
            taken.set()
            wake.set()
        late: Invocation | None = box.get("invocation") if box.get("abandoned") else None
        if late is not None:
            await _cancel_taken(mirror, late, timeouts.command, "the page took it only after its deadline")

    host.spawn_follower(start)
    given_up = True
    try:
        with anyio.move_on_after(_left(deadline)), host.woken_by_its_end(wake):
            await wake.wait()
        given_up = False
    finally:
        if not taken.is_set():
            box["abandoned"] = True
        elif given_up and "invocation" in box:  # taken as the caller gave up: `start` did not see it abandoned
            host.spawn_follower(_cancel_taken, mirror, box["invocation"], timeouts.command)
    if not taken.is_set():
        raise _not_taken(host, tool)
    if "error" in box:
        raise box["error"]
    invocation: Invocation = box["invocation"]
    return invocation


def _not_taken(host: StartHost, tool: PageTool) -> ToolError:
    """The error of a call the page did not take by its deadline (or whose tab ended meanwhile)."""
    if (ended := host.ended()) is not None:
        return ToolError(
            "call_interrupted", f"The tab {ended} before the page took the call to {tool.name}; it did not run."
        )
    return ToolError(
        "action_timeout",
        f"The page did not take the call to {tool.name} within {host.timeouts.tool_call:g} s (its main thread "
        "is busy); it has not run, and if the page takes it later the bridge cancels it at once.",
        page_told=False,
    )


def _acting_for_the_user(tool: PageTool) -> list[tuple[str, dict[str, Any]]]:
    """What gives the tool's document the transient user activation a person's click would (issue 21).

    The agent calls a tool for the person, as a click would; without activation Chromium
    refuses what a page may do only for a person (`showPicker()` and a file input's
    `click()` open no chooser, `NotAllowedError`). Only a main frame's tools get it: the
    activation of a document does not reach its iframes. Written with `invokeTool`, just
    before it on the same session, in one write, which the page handles first; nothing
    waits for its answer (awaited beside `invokeTool` in a task of its own, it cost a task
    and a write on every call), and an error of its own is dropped: `invokeTool` says what
    is wrong. A tool the page marks read-only gets none: what activation allows (a window, a
    picker, the clipboard, full screen) is a change, and the evaluation is a third of the call's
    time in the page (issue 40).
    """
    if tool.frame_id != tool.session.target_id or tool.annotations.get("readOnly") is True:
        return []
    return [("Runtime.evaluate", {"expression": "0", "userGesture": True})]
