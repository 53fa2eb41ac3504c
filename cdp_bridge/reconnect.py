"""A DevTools websocket that asks for a new session when the far side drops it (browser farms).

A farm hands out one browser per WebSocket connection and may end it (a session timeout, a
restarted node). With `webmcp-bridge --cdp-url URL --cdp-reconnect` the bridge does not exit
then: this transport tells the `Connection` that every page of the lost browser is gone and
that every command in flight failed (see ledger.py), connects to URL again (a new session, a
new browser), and sends the browser-wide settings again, so the new browser's pages appear
as new windows. It gives up, and the connection closes, when no new session comes within
`give_up_after` seconds.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping

import anyio

from .errors import ConnectionClosed
from .ledger import ChannelLedger
from .timeouts import Timeouts
from .transport import WebSocketTransport

__all__ = ["ReconnectingTransport"]

logger = logging.getLogger(__name__)

_FIRST_RETRY = 0.5
_MAX_RETRY = 10.0


class ReconnectingTransport:
    """One logical channel to "a browser at `url`", over as many websockets as it takes."""

    def __init__(self, url: str, headers: Mapping[str, str] | None, timeouts: Timeouts, give_up_after: float) -> None:
        self._url = url
        self._headers = dict(headers or {})
        self._timeouts = timeouts
        self._give_up_after = give_up_after
        self._ws: WebSocketTransport | None = None
        self._ledger = ChannelLedger()
        self._queue: collections.deque[str] = collections.deque()
        self._wake = anyio.Event()
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts = Timeouts(),
        give_up_after: float = 60.0,
    ) -> ReconnectingTransport:
        """Connect the first time. Raises ConnectionClosed if `url` cannot be reached."""
        transport = cls(url, headers, timeouts, give_up_after)
        try:
            with anyio.fail_after(timeouts.launch):
                transport._ws = await WebSocketTransport.open(url, headers)
        except TimeoutError as exc:
            where = url.partition("?")[0]
            raise ConnectionClosed(f"Could not reach the browser's DevTools at {where}: timed out") from exc
        return transport

    async def send(self, text: str) -> None:
        if self._closed:
            raise ConnectionClosed("the DevTools connection is closed")
        message_id, method, session_id = self._ledger.outgoing(text)
        ws = self._ws
        if ws is None:
            if self._ledger.is_replayed(method, session_id):
                self._deliver(self._ledger.accepted(message_id))
            else:
                self._deliver(self._ledger.error(message_id, session_id, "the browser is being replaced; try again"))
            return
        self._ledger.sent(message_id, session_id)
        try:
            await ws.send(text)
        except ConnectionClosed:
            pass  # receive() notices the loss and answers what was in flight

    async def receive(self) -> str:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._closed:
                raise ConnectionClosed("the DevTools connection is closed")
            ws = self._ws
            if ws is None:
                await self._reconnect()
                continue
            try:
                frame = await ws.receive()
            except ConnectionClosed:
                self._ws = None
                logger.warning("the browser at --cdp-url dropped the connection; asking for a new session")
                self._queue.extend(self._ledger.lost("the browser went away before answering"))
                await ws.close()
                continue
            if self._ledger.incoming(frame):
                return frame

    async def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._ws is not None:
            await self._ws.close()

    def _deliver(self, message: str | None) -> None:
        if message is not None:
            self._queue.append(message)
            self._wake.set()

    async def _reconnect(self) -> None:
        """Try for a new session, with backoff; return early when there is something to deliver.

        Raises:
            ConnectionClosed: no new session within `give_up_after` seconds.
        """
        deadline = anyio.current_time() + self._give_up_after
        delay = _FIRST_RETRY
        while self._ws is None and not self._queue and not self._closed:
            try:
                with anyio.fail_after(min(self._timeouts.launch, max(0.1, deadline - anyio.current_time()))):
                    ws = await WebSocketTransport.open(self._url, self._headers)
            except (ConnectionClosed, TimeoutError) as exc:
                if anyio.current_time() >= deadline:
                    raise ConnectionClosed(f"no new session from the browser at --cdp-url: {exc}") from exc
                self._wake = anyio.Event()
                with anyio.move_on_after(delay):
                    await self._wake.wait()
                delay = min(delay * 2, _MAX_RETRY)
                continue
            for frame in self._ledger.replay():
                await ws.send(frame)
            self._ws = ws
            logger.warning("connected to a new browser session at --cdp-url")
