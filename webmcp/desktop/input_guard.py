"""The write guard: a person's typing is not overwritten by a write checked on an older view.

A page-tool call with `expectedVersion` is checked against a view rebuilt at that
moment, but the page starts the tool only later (after the check, the `invokeTool`
round trip and the page's own scheduling); a keystroke that lands in between was not in
the view the agent decided on, and a tool that writes the same field overwrites it.

The bridge's observer counts the trusted `input` events of the tab's main document in
its isolated world (whose execution context the guard keeps until its document goes, so
each step is one round trip). The guard reads that counter before the view is rebuilt for the
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
from functools import partial
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError, ProtocolError
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.live_view import WORLD
from webmcp.desktop.mirror import Invocation
from webmcp.desktop.races import first_of
from webmcp.js import call

__all__ = ["HOLD_LIMIT", "StartWatch", "WriteGuard"]

HOLD_LIMIT = 2.0
"""The longest the person's keystrokes are held back while a checked write starts (seconds)."""

logger = logging.getLogger(__name__)

_COUNTER = "globalThis.__webmcpBridgeInputs ?? -1"
_HOLD = "(expected, ms) => globalThis.__webmcpBridgeHold?.(expected, ms)"


class WriteGuard:
    """The write guard of one tab's main document: count the person's input, hold it, release it.

    Every read ends the moment the tab's renderer crashes or the tab closes (`ended`): a
    command to a dying page is never answered, and a version check must not wait out the
    command timeout on it, holding up the call and every call queued on the tab.
    """

    def __init__(self, page: PageTarget, timeouts: Timeouts, ended: Callable[[], Awaitable[Any]]) -> None:
        self._page = page
        self._timeouts = timeouts
        self._ended = ended
        self._world: tuple[CDPSession, Any] | None = None
        """The session and execution context of the observer's world in the main document, as last made."""

    async def _evaluate(self, expression: str, timeout: float) -> Any:
        """`expression`'s value in the observer's world of the main document; None on failure or crash."""
        if self._page.crashed:
            return None  # no renderer to ask; the call will not get far either
        first = await first_of(partial(self._evaluate_now, expression, timeout), self._ended, timeout=timeout)
        return first.value if first.index == 0 else None

    async def _evaluate_now(self, expression: str, timeout: float) -> Any:
        session = self._page.session
        known = self._world[1] if self._world is not None and self._world[0] is session else None
        try:
            if known is not None:
                try:
                    return await self._evaluate_in(session, known, expression, timeout)
                except ProtocolError:
                    pass  # its world went with the document (nothing ran): make the new one's
            # Returns the context of the world the observer already runs in (one world per name and frame).
            world = await session.send(
                "Page.createIsolatedWorld", {"frameId": self._page.target_id, "worldName": WORLD}, timeout=timeout
            )
            self._world = (session, world["executionContextId"])
            return await self._evaluate_in(session, world["executionContextId"], expression, timeout)
        except CDPError as exc:
            logger.debug("the write guard could not reach its page: %s", exc)
            return None

    @staticmethod
    async def _evaluate_in(session: CDPSession, context: Any, expression: str, timeout: float) -> Any:
        reply = await session.send(
            "Runtime.evaluate",
            {"expression": expression, "contextId": context, "returnByValue": True},
            timeout=timeout,
        )
        return reply.get("result", {}).get("value")

    async def count(self, timeout: float) -> int | None:
        """The main document's count of trusted input events; None when it cannot be read."""
        value = await self._evaluate(_COUNTER, timeout)
        return int(value) if isinstance(value, int | float) and value >= 0 else None

    async def hold(self, inputs: int) -> bool | None:
        """Start holding the person's keystrokes if the count is still `inputs`.

        Returns True when holding, False when the person typed since (refuse the write),
        None when the page could not be asked (the write goes on unguarded, as before the guard).
        """
        held = await self._evaluate(call(_HOLD, int(inputs), round(HOLD_LIMIT * 1000)), self._timeouts.command)
        return held if isinstance(held, bool) else None

    async def release(self) -> None:
        """End the hold: replay the keystrokes held back while the write started."""
        with anyio.CancelScope(shield=True):
            await self._evaluate("globalThis.__webmcpBridgeRelease?.()", self._timeouts.command)

    async def typed_since(self, inputs: int) -> bool:
        """True when the person typed since the count was `inputs`."""
        now = await self.count(self._timeouts.command)
        return now is not None and now != inputs


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
        await first_of(started.wait, invocation.done.wait, timeout=timeout)
        return started.is_set()

    def close(self) -> None:
        self._unsubscribe()
