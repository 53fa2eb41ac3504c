"""The write guard: a person's typing is not overwritten by a write checked on an older view.

A page-tool call with `expectedVersion` is checked against a view rebuilt at that
moment, but the page starts the tool only later (after the check, the `invokeTool`
round trip and the page's own scheduling); a keystroke that lands in between was not in
the view the agent decided on, and a tool that writes the same field overwrites it.

The bridge's observer counts the trusted `input` events of the tab's main document in
its isolated world. The guard reads that counter before the view is rebuilt for the
version check. Just before `invokeTool`, in one step inside the page, it compares the
counter again (a keystroke during the rebuild or since: `stale_state`, nothing started)
and, if unchanged, starts holding the person's keystrokes: each trusted `beforeinput`
is cancelled and queued. When the page reports `WebMCP.toolInvoked` (the tool has
started, and has done whatever it does synchronously at its start) the hold ends and the
queued keystrokes are replayed where the person's caret is (`execCommand`), so they land
after the write instead of under it. The hold ends after `HOLD_LIMIT` seconds in any case.

What it cannot hold (input that is not cancellable, such as IME composition) still
moves the counter; if the counter moved by the time the tool started, the call is
cancelled and answered `stale_state`. A tool that writes a field later, after an
`await`, overwrites what was typed meanwhile: that is the tool's own doing while it runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.desktop.live_view import WORLD
from webmcp.desktop.mirror import Invocation
from webmcp.errors import ToolError
from webmcp.js import call

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = [
    "HOLD_LIMIT",
    "StartWatch",
    "read_inputs",
    "release_keys",
    "stale_after_start",
    "stale_if_typed",
    "typed_during_start",
]

HOLD_LIMIT = 2.0
"""The longest the person's keystrokes are held back while a checked write starts (seconds)."""

logger = logging.getLogger(__name__)

_COUNTER = "globalThis.__webmcpBridgeInputs ?? -1"
_HOLD = "(expected, ms) => globalThis.__webmcpBridgeHold?.(expected, ms)"


async def _evaluate(tab: Tab, expression: str, timeout: float) -> Any:
    """`expression`'s value in the observer's world of the tab's main document; None on failure."""
    if tab.page.crashed:
        return None  # no renderer to ask; the call will not get far either
    session = tab.page.session
    try:
        # Returns the context of the world the observer already runs in (one world per name and frame).
        world = await session.send(
            "Page.createIsolatedWorld", {"frameId": tab.page.target_id, "worldName": WORLD}, timeout=timeout
        )
        reply = await session.send(
            "Runtime.evaluate",
            {"expression": expression, "contextId": world["executionContextId"], "returnByValue": True},
            timeout=timeout,
        )
    except CDPError as exc:
        logger.debug("the write guard could not reach %s: %s", tab.id, exc)
        return None
    return reply.get("result", {}).get("value")


async def read_inputs(tab: Tab, timeout: float) -> int | None:
    """The main document's count of trusted input events; None when it cannot be read."""
    value = await _evaluate(tab, _COUNTER, timeout)
    return int(value) if isinstance(value, int | float) and value >= 0 else None


async def release_keys(tab: Tab) -> None:
    """End the hold: replay the keystrokes held back while the write started."""
    with anyio.CancelScope(shield=True):
        await _evaluate(tab, "globalThis.__webmcpBridgeRelease?.()", tab.timeouts.command)


class StartWatch:
    """Which invocations the page has started (`WebMCP.toolInvoked`), on one session.

    Subscribed before `invokeTool` is sent: the event may come before the command's answer.
    """

    def __init__(self, session: CDPSession) -> None:
        self._started: dict[str, anyio.Event] = {}
        self._unsubscribe = session.on("WebMCP.toolInvoked", self._invoked)

    def _invoked(self, params: dict[str, Any]) -> None:
        self._event(str(params.get("invocationId", ""))).set()

    def _event(self, invocation_id: str) -> anyio.Event:
        return self._started.setdefault(invocation_id, anyio.Event())

    async def wait_started(self, invocation: Invocation, timeout: float) -> bool:
        """Wait (bounded) until the page started `invocation`, or it ended; True if it started."""
        started = self._event(str(invocation.invocation_id))
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:

                async def _either(wait: Callable[[], Awaitable[Any]]) -> None:
                    await wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(_either, started.wait)
                tg.start_soon(_either, invocation.done.wait)
        return started.is_set()

    def close(self) -> None:
        self._unsubscribe()


async def stale_if_typed(tab: Tab, inputs: int) -> bool:
    """Refuse with `stale_state` (nothing started) if the person typed since the version check;
    otherwise hold their keystrokes until `release_keys`. Returns True when holding.

    Raises:
        ToolError: stale_state, with the version of the view rebuilt now.
    """
    held = await _evaluate(tab, call(_HOLD, int(inputs), round(HOLD_LIMIT * 1000)), tab.timeouts.command)
    if held is False:
        await tab.catch_up(tab.timeouts.snapshot)
        raise ToolError(
            "stale_state",
            "The person typed in the page after the version was checked; nothing was started. "
            "Re-read app://windows before deciding.",
            current_version=tab.window.version,
        )
    return held is True


async def typed_during_start(tab: Tab, inputs: int) -> bool:
    """True when the person typed between the last check and the tool's start."""
    now = await read_inputs(tab, tab.timeouts.command)
    return now is not None and now != inputs


def stale_after_start(tab: Tab, tool_name: str) -> ToolError:
    """The answer for a call cancelled because the person typed while it was starting."""
    return ToolError(
        "stale_state",
        f"The person typed in the page while {tool_name} was starting, after the version was checked: the call "
        "was cancelled. The page had started it already, so what the tool does at its very start may have "
        "happened; re-read app://windows before deciding.",
        current_version=tab.window.version,
        cancelled=True,
        outcome="unknown",
    )
