"""The channels a `Connection` speaks CDP over: one JSON text message at a time, both ways.

    Transport (protocol)      send(text) / receive() -> text / close()
    ├── WebSocketTransport    a DevTools websocket (`--remote-debugging-port`, `--cdp-url`, farms)
    ├── PipeTransport         Chromium's `--remote-debugging-pipe`: fds 3 (to it) and 4 (from it),
    │                         each message terminated by a NUL byte; also listen(on_message,
    │                         on_end) and send_now(texts), which `Connection` uses when present
    └── RelayTransport        the Chrome extension's relay of `chrome.debugger` (see relay.py)

A transport knows nothing of ids or sessions. Every failure surfaces as `ConnectionClosed`,
whose message says which side went away; `receive()` raises it at the end of the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import select
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import anyio

from .errors import ConnectionClosed

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["PipeTransport", "Transport", "WebSocketTransport", "send_together"]

_READ_CHUNK = 1 << 20


class Transport(Protocol):
    """One full-duplex stream of CDP messages (JSON text)."""

    async def send(self, text: str) -> None:
        """Write one message. Raises ConnectionClosed when the channel is gone."""
        ...

    async def receive(self) -> str:
        """The next message. Raises ConnectionClosed at the end of the stream."""
        ...

    async def close(self) -> None:
        """Release the channel; never raises."""
        ...


class WebSocketTransport:
    """A DevTools websocket (the `websockets` library), one CDP message per text frame.

    `websockets` is imported by the first `open`: a launched browser is reached over its pipe,
    and the ~30 ms the library costs would otherwise come before the launch.
    """

    def __init__(self, ws: ClientConnection) -> None:
        import websockets

        self._closed_errors = (websockets.ConnectionClosed,)
        self._ws = ws

    @classmethod
    async def open(cls, url: str, headers: Mapping[str, str] | None = None) -> WebSocketTransport:
        """Connect to `url`. Raises ConnectionClosed (with the reason) if it cannot be reached."""
        import websockets

        try:
            # Chromium's frames can be tens of MB (a full AX tree, a screenshot): no size cap,
            # and no keepalive pings that a busy browser might fail to answer in time.
            ws = await websockets.connect(
                url,
                max_size=None,
                ping_interval=None,
                open_timeout=None,
                additional_headers=dict(headers or {}),
                # Deflate costs CPU on every frame and buys nothing on loopback (a farm keeps it).
                compression=None if _is_loopback(url) else "deflate",
            )
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise ConnectionClosed(f"Could not reach the browser's DevTools at {_redacted(url)}: {exc}") from exc
        return cls(ws)

    async def send(self, text: str) -> None:
        try:
            await self._ws.send(text)
        except self._closed_errors as exc:
            raise ConnectionClosed("the browser closed the DevTools connection") from exc

    async def receive(self) -> str:
        try:
            message = await self._ws.recv()
        except self._closed_errors as exc:
            raise ConnectionClosed("the browser closed the DevTools connection") from exc
        return message if isinstance(message, str) else message.decode()

    async def close(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(2):
            await self._ws.close()


class PipeTransport:
    """Chromium's `--remote-debugging-pipe`: NUL-terminated JSON on two pipe ends we hold.

    Both ends are non-blocking and waited on with the event loop (`anyio.wait_readable` /
    `wait_writable`, or the loop's reader callback while `listen`ing), so a browser that stops
    reading or writing never blocks the loop. Bytes read past a message boundary stay in this
    object, so one browser's pipe can carry several connections one after another (the
    launcher's, then the bridge's).
    """

    def __init__(self, read_fd: int, write_fd: int) -> None:
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._buffer = bytearray()
        # One buffer for every read: `os.read(fd, 1 MB)` allocates (and maps) a fresh megabyte
        # each time, ~18 µs for the few hundred bytes of an answer; `readv` into this, ~1.4 µs.
        self._chunk = bytearray(_READ_CHUNK)
        self._chunk_view = memoryview(self._chunk)
        # Taken without a turn of the loop when free, as it is but while a full pipe drains.
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._eof = False
        self._closed = False
        self._stop_listening: Callable[[], None] | None = None

    async def send(self, text: str) -> None:
        await self._write(memoryview(text.encode() + b"\0"))

    async def send_joined(self, texts: Sequence[str]) -> None:
        """Write the messages `texts`, in order, in one write."""
        await self._write(memoryview(b"".join(t.encode() + b"\0" for t in texts)))

    def send_now(self, texts: Sequence[str]) -> bool:
        """Write the messages `texts`, in order, in one write, now or not at all; True when written.

        False (nothing written) when that would mean waiting: another write is under way or
        waits for the pipe to drain, the pipe has no room for all of it, or it is longer than
        `select.PIPE_BUF` (only a write of at most that is all or nothing; a longer one may be
        cut, and finishing it would mean waiting). Never yields to the loop, so a caller's
        deadline can never cut a message in two.

        Raises:
            ConnectionClosed: the pipe is closed, or the browser closed it.
        """
        if self._closed:
            raise ConnectionClosed("the DevTools pipe is closed")
        data = b"".join(t.encode() + b"\0" for t in texts)
        if len(data) > select.PIPE_BUF or self._write_lock.locked():
            return False
        try:
            written = os.write(self._write_fd, data)
        except BlockingIOError:
            return False
        except OSError as exc:  # EPIPE: the browser is gone
            self._close_fds()
            raise ConnectionClosed(f"the browser closed the DevTools pipe ({exc.strerror})") from exc
        if written != len(data):  # not on a pipe (PIPE_BUF): say so rather than leave half a message
            self._close_fds()
            raise ConnectionClosed(f"the DevTools pipe took {written} of {len(data)} bytes of one write")
        return True

    async def _write(self, data: memoryview) -> None:
        async with self._write_lock:
            if self._closed:
                raise ConnectionClosed("the DevTools pipe is closed")
            written = 0
            try:
                while written < len(data):
                    # Written at once: the pipe almost always has room, and waiting to be told so
                    # first cost a turn of the loop (and an epoll registration) per command.
                    try:
                        written += os.write(self._write_fd, data[written:])
                    except BlockingIOError:
                        await anyio.wait_writable(self._write_fd)
            except anyio.ClosedResourceError as exc:
                raise ConnectionClosed("the DevTools pipe is closed") from exc
            except OSError as exc:  # EPIPE: the browser is gone
                self._close_fds()
                raise ConnectionClosed(f"the browser closed the DevTools pipe ({exc.strerror})") from exc
            finally:
                if 0 < written < len(data):
                    # Cancelled mid-message: the next message would be read as this one's tail.
                    self._close_fds()

    async def receive(self) -> str:
        while True:
            end = self._buffer.find(b"\0")
            if end >= 0:
                message = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return message.decode()
            if self._eof or self._closed:
                raise ConnectionClosed("the browser closed the DevTools pipe")
            try:
                await anyio.wait_readable(self._read_fd)
            except anyio.ClosedResourceError as exc:
                raise ConnectionClosed("the DevTools pipe is closed") from exc
            try:
                read = os.readv(self._read_fd, [self._chunk])
            except BlockingIOError:
                continue
            except OSError as exc:
                if exc.errno != errno.EBADF:
                    raise ConnectionClosed(f"reading the DevTools pipe failed ({exc.strerror})") from exc
                read = 0
            if not read:
                self._eof = True
            self._buffer += self._chunk_view[:read]

    def listen(self, on_message: Callable[[str], None], on_end: Callable[[str], None]) -> Callable[[], None]:
        """Hand each message to `on_message` as it arrives, from the event loop's own reader
        callback, until the returned function is called; `on_end(reason)` once, when the
        stream ends or a read fails (then nothing more is read).

        No task wakes up for what the browser writes and the pipe stays registered with the
        loop: `receive()` costs a task switch, a registration and its removal, and a read
        that finds nothing, every time the browser writes (issue 22: several times a call).
        Messages already buffered are handed over on the loop's next turn; what is read past
        the last whole message when listening stops stays for the next reader.
        """
        loop = asyncio.get_running_loop()
        listening = True
        scanned = 0

        def deliver() -> None:
            nonlocal scanned
            while listening:
                end = self._buffer.find(b"\0", scanned)
                if end < 0:
                    scanned = len(self._buffer)
                    return
                message = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                scanned = 0
                on_message(message.decode())

        def readable() -> None:
            try:
                read = os.readv(self._read_fd, [self._chunk])
            except BlockingIOError:
                return
            except OSError as exc:
                stop()
                on_end(f"reading the DevTools pipe failed ({exc.strerror})")
                return
            if not read:
                self._eof = True
                stop()
                on_end("the browser closed the DevTools pipe")
                return
            self._buffer += self._chunk_view[:read]
            deliver()

        def stop() -> None:
            nonlocal listening
            if listening:
                listening = False
                self._stop_listening = None
                if not self._closed:
                    loop.remove_reader(self._read_fd)

        if self._eof or self._closed:
            loop.call_soon(on_end, "the browser closed the DevTools pipe")
            return lambda: None
        self._stop_listening = stop
        loop.add_reader(self._read_fd, readable)
        loop.call_soon(deliver)
        return stop

    async def close(self) -> None:
        self._close_fds()

    @property
    def closed(self) -> bool:
        """True once the pipe is closed (by us, or because a write was cut short)."""
        return self._closed

    def _close_fds(self) -> None:
        if self._closed:
            return
        if self._stop_listening is not None:
            self._stop_listening()  # the loop must not watch a descriptor about to be closed
        self._closed = True
        for fd in (self._read_fd, self._write_fd):
            anyio.notify_closing(fd)  # wakes a task waiting on it, instead of waiting forever
            with contextlib.suppress(OSError):
                os.close(fd)


async def send_together(transport: Transport, texts: Sequence[str]) -> None:
    """Send the messages `texts` in order; over the debugging pipe, in one write.

    Each write to the pipe wakes the browser's reader: on the 2-CPU VM of bench/README.md a
    write that wakes it cost ~0.3 ms of the bridge's time, more than the command's own work.
    """
    if isinstance(transport, PipeTransport):
        await transport.send_joined(texts)
        return
    for text in texts:
        await transport.send(text)


def _redacted(url: str) -> str:
    """`url` without its query string, which may hold a farm's token."""
    head, sep, _query = url.partition("?")
    return head + ("?…" if sep else "")


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
