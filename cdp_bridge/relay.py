"""The Chrome extension's relay: a loopback WebSocket server whose one paired client is the
extension in `extension/`, presented to the bridge as one more `Transport`.

The extension turns `chrome.debugger` into a CDP-like stream with flat sessions, so the bridge
talks to it exactly as it talks to a launched browser. What this module adds:

- **Who may connect.** Only a WebSocket whose `Origin` is `chrome-extension://…`, and that
  proves it knows the pairing code without sending it: the bridge sends a nonce, the extension
  answers HMAC-SHA256(code, "extension:" + nonce) and its own nonce, and the bridge proves
  itself back with HMAC-SHA256(code, "bridge:" + that nonce), so the extension never obeys a
  program that merely took the port. Anything else is closed (4003) before a single CDP
  message passes.
- **Reconnection.** The extension may go away (its service worker restarts, the person
  re-pairs) and come back. The `Connection` above never notices a gap: commands in flight
  when the extension left are answered with an error, every session it had announced is
  reported detached and its target destroyed (so its window closes), and when an extension
  comes back the browser-wide settings the bridge sent (`Target.setDiscoverTargets`,
  `Target.setAutoAttach`) are sent again, so the shared tabs are announced afresh (the
  bookkeeping lives in ledger.py, shared with the reconnecting farm transport).

Wire format after the handshake: one CDP message (JSON text) per frame, both ways. Frames
that carry a `relay` key are control messages (the handshake, keep-alive pings), never CDP.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import math
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from .errors import ConnectionClosed
from .ledger import ChannelLedger

if TYPE_CHECKING:
    from websockets.asyncio.server import Server, ServerConnection
    from websockets.http11 import Request, Response

__all__ = ["ExtensionRelay", "load_pairing_code", "normalize_code", "pairing_code_path", "proof"]

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8766
_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"  # no 0/O, 1/I/L, U: easy to read and type
_HANDSHAKE_TIMEOUT = 10.0
_NO_EXTENSION = "no extension is connected; it reconnects by itself"
_REFUSED = 4003
_REPLACED = 4000


def normalize_code(code: str) -> str:
    """The pairing code as compared: upper case, without spaces or dashes."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def proof(code: str, role: str, nonce: str) -> str:
    """HMAC-SHA256 over `role:nonce` keyed by the normalized pairing code, in hex."""
    return hmac.new(normalize_code(code).encode(), f"{role}:{nonce}".encode(), hashlib.sha256).hexdigest()


def new_pairing_code() -> str:
    """Twelve characters (about 59 bits), shown as XXXX-XXXX-XXXX."""
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(12))
    return "-".join(raw[i : i + 4] for i in range(0, 12, 4))


def _state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "webmcp-bridge"


def pairing_code_path() -> Path:
    """The state file that keeps the pairing code: `$XDG_STATE_HOME/webmcp-bridge/extension-pairing-code`."""
    return _state_dir() / "extension-pairing-code"


def load_pairing_code(renew: bool = False) -> str:
    """The pairing code kept between runs (created on first use, readable by this user only).

    Kept so that the person types it into the extension once; `renew` replaces it, which
    un-pairs every extension that knew the old one. Blocking file I/O: call from a thread.
    """
    path = pairing_code_path()
    if not renew:
        with contextlib.suppress(OSError):
            code = path.read_text().strip()
            if len(normalize_code(code)) >= 12:
                return code
    code = new_pairing_code()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(code + "\n")
    return code


class ExtensionRelay:
    """The relay server and, for the `Connection`, the transport to whichever extension is paired."""

    def __init__(self, code: str) -> None:
        # websockets is imported here, not with the module: `webmcp-bridge` imports this module
        # for the pairing code's helpers, and only --extension needs the library.
        from websockets.exceptions import ConnectionClosed as WebSocketClosed

        self._ws_closed = WebSocketClosed
        self._code = code
        self._server: Server | None = None
        self._current: ServerConnection | None = None
        self._connected = anyio.Event()
        self._inbox_send, self._inbox = anyio.create_memory_object_stream[str](math.inf)
        self._ledger = ChannelLedger()
        self._closed = False

    @classmethod
    @asynccontextmanager
    async def serve(cls, code: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> AsyncIterator[ExtensionRelay]:
        """Listen on `host:port` until the block exits.

        Raises:
            OSError: the port is taken.
        """
        from websockets.asyncio.server import serve  # only with --extension (the command line stays light)

        relay = cls(code)
        async with serve(
            relay._handle,
            host,
            port,
            process_request=_check_origin,
            max_size=None,
            ping_interval=None,
            server_header=None,
        ) as server:
            relay._server = server
            try:
                yield relay
            finally:
                relay._closed = True
                relay._inbox_send.close()
                relay._inbox.close()

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        assert self._server is not None
        return int(next(iter(self._server.sockets)).getsockname()[1])

    @property
    def connected(self) -> bool:
        """True while a paired extension is connected."""
        return self._current is not None

    async def wait_connected(self) -> None:
        """Return once a paired extension is connected."""
        while self._current is None:
            await self._connected.wait()

    # --- Transport ------------------------------------------------------------------

    async def send(self, text: str) -> None:
        if self._closed:
            raise ConnectionClosed("the extension relay has stopped")
        message_id, method, session_id = self._ledger.outgoing(text)
        ws = self._current
        if ws is None:
            if self._ledger.is_replayed(method, session_id):
                self._push(self._ledger.accepted(message_id))  # sent to the extension when it comes
            else:
                self._push(
                    self._ledger.error(message_id, session_id, "no extension is connected; it reconnects by itself")
                )
            return
        self._ledger.sent(message_id, session_id)
        try:
            await ws.send(text)
        except self._ws_closed:
            pass  # the handler reports the loss and answers what was in flight

    async def receive(self) -> str:
        try:
            return await self._inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError) as exc:
            raise ConnectionClosed("the extension relay has stopped") from exc

    async def close(self) -> None:
        self._closed = True
        self._inbox_send.close()
        if self._server is not None:
            self._server.close()

    # --- one extension's socket --------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        try:
            with anyio.fail_after(_HANDSHAKE_TIMEOUT):
                paired = await self._pair(ws)
        except (TimeoutError, self._ws_closed, ValueError, KeyError, TypeError):
            paired = False
        if not paired:
            with contextlib.suppress(self._ws_closed):
                await ws.close(_REFUSED, "pairing refused")
            return
        previous, self._current = self._current, ws
        if previous is not None:
            self._lost()
            await previous.close(_REPLACED, "another extension connected")
        logger.info("the extension connected")
        for frame in self._ledger.replay():
            await ws.send(frame)
        self._connected.set()
        try:
            async for message in ws:
                if self._current is not ws:
                    break  # replaced by a newer connection: its frames no longer count
                self._from_extension(message if isinstance(message, str) else message.decode())
        except self._ws_closed:
            pass
        finally:
            if self._current is ws:
                self._current = None
                self._connected = anyio.Event()
                self._lost()
                logger.warning("the extension disconnected; waiting for it to reconnect")

    async def _pair(self, ws: ServerConnection) -> bool:
        nonce = secrets.token_hex(16)
        await ws.send(json.dumps({"relay": "challenge", "nonce": nonce, "protocol": 1}))
        hello = json.loads(await ws.recv())
        if hello.get("relay") != "hello" or not hmac.compare_digest(
            str(hello.get("proof", "")), proof(self._code, "extension", nonce)
        ):
            logger.warning("refused an extension connection: wrong pairing proof")
            return False
        their_nonce = str(hello["nonce"])
        if len(their_nonce) < 16:
            return False
        await ws.send(json.dumps({"relay": "welcome", "proof": proof(self._code, "bridge", their_nonce)}))
        return True

    def _from_extension(self, frame: str) -> None:
        if self._ledger.incoming(frame):
            self._inbox_send.send_nowait(frame)

    def _lost(self) -> None:
        """The extension went away: close what it had attached, answer what it left unanswered."""
        for message in self._ledger.lost("the extension disconnected before answering"):
            self._push(message)

    def _push(self, message: str | None) -> None:
        if message is not None and not self._closed:
            self._inbox_send.send_nowait(message)


def _check_origin(connection: ServerConnection, request: Request) -> Response | None:
    """Refuse, before the upgrade, any WebSocket that is not from a Chrome extension."""
    origin = request.headers.get("Origin", "")
    if origin.startswith("chrome-extension://") and len(origin) > len("chrome-extension://"):
        return None
    logger.warning("refused a relay connection from origin %r", origin or "(none)")
    return connection.respond(403, "Only the webmcp-bridge extension may connect here.\n")
