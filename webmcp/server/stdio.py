"""Standard input and output for the stdio transport, on the event loop when they are pipes.

The SDK's `stdio_server` reads and writes through `anyio.wrap_file`: every line read and
every message written (a write, then a flush) is a hand-off to a worker thread and back.
Behind it, each message crosses two more tasks: a reader task parses the line and hands it
over a memory stream, and a writer task takes each answer from another stream to write it.
When stdin and stdout are pipes or sockets, as they are under every MCP client,
`stdio_transport` gives the server streams of its own instead: the task that receives a
message reads and parses it, the task that sends one serialises and writes it, from the
event loop (non-blocking descriptors, woken by the loop's selector), with no thread and no
hand-off in between (issue 22: ~0.1 ms of every request and answer, see bench/README.md).

What the SDK's transport guarantees is kept:

* framing: one JSON-RPC message per line, however the bytes arrive (several messages in one
  read, one message over many reads, megabytes in one line); bytes that are not UTF-8 are
  replaced, as the SDK's reader does, and a line that is not a JSON-RPC message reaches the
  server as the exception it raised, as from the SDK's reader;
* end of input ends the reader, and a last line without its newline is still delivered;
* a client that stops reading never blocks the loop: the writer waits for the pipe to drain,
  and answers sent meanwhile wait their turn, whole (never two interleaved on the wire);
* an answer cut short by cancellation (its request was cancelled while the pipe was full)
  leaves no half line: what it had not written goes out before the next message;
* while serving, file descriptor 1 points at stderr, so nothing else printed by the process
  or its children can break the framing; it is restored on exit;
* cancellation ends a pending read at once (no thread is left blocked in `read`).

Anything else (a terminal, a regular file, /dev/null) is served by the SDK's `stdio_server`,
with `DaemonStdin` for input and, when stdout alone is a pipe, `PipeStdout` for output. Those
may be shared with other processes, and setting them non-blocking would change them for
those processes too.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from webmcp.server.early import ACKNOWLEDGED, Handover, is_pipe
from webmcp.server.stdin import DaemonStdin

__all__ = ["MessageReader", "MessageWriter", "PipeStdin", "PipeStdout", "is_pipe", "stdio_streams", "stdio_transport"]

_READ_CHUNK = 1 << 16
_HIGH_WATER = 1 << 20
"""Bytes of input held unread at most, when not waited for (see `PipeStdin`)."""
_PRE_REQUEST_KEPT = 8
"""Frames before the client's first request kept for the server (the SDK's `_PRE_REQUEST_REPLAY_LIMIT`)."""


class PipeStdin:
    """The lines of the pipe `fd`, read on the event loop (UTF-8, undecodable bytes replaced).

    `fd` must be non-blocking. Each line comes with its newline; a last line without one
    comes at end of input. Once a line has been awaited the pipe stays registered with the
    loop, whose reader callback adds what arrives to the buffer and wakes the waiting
    reader: a registration, its removal and a read that found nothing cost more than the
    rest of a small request's reading (issue 22). Past `_HIGH_WATER` buffered bytes it stops
    reading until a reader asks again, so a client that writes faster than the server reads
    fills the pipe, not the bridge's memory. `close()` (or the end of input, or a cancelled
    wait) ends the registration.
    """

    def __init__(self, fd: int, read_before: bytes = b"", ended: bool = False) -> None:
        """`read_before`: bytes read from `fd` before (the early answers'), delivered first; `ended`:
        its end of input was met then."""
        self._fd = fd
        self._buffer = bytearray(read_before)
        self._scanned = 0
        self._eof = ended
        self._error: OSError | None = None
        self._watching: asyncio.AbstractEventLoop | None = None
        self._arrived: anyio.Event | None = None

    async def readline(self) -> str:
        """The next line, or "" at end of input.

        Raises:
            OSError: reading the pipe failed.
        """
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = self._buffer[: end + 1]
                del self._buffer[: end + 1]
                self._scanned = 0
                return line.decode("utf-8", errors="replace")
            # Only new bytes can hold the next newline: a megabyte line read in chunks is
            # scanned once, not once per chunk.
            self._scanned = len(self._buffer)
            if self._error is not None:
                raise self._error
            if self._eof:
                rest = self._buffer.decode("utf-8", errors="replace")
                self._buffer.clear()
                self._scanned = 0
                return rest
            await self._more()

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            while line := await self.readline():
                yield line
        finally:
            self.close()

    def close(self) -> None:
        """Stop watching the pipe (the descriptor stays open)."""
        if self._watching is not None:
            self._watching.remove_reader(self._fd)
            self._watching = None

    async def _more(self) -> None:
        """Until the loop's reader callback has added to the buffer, or met the end of input."""
        arrived = self._arrived = anyio.Event()
        if self._watching is None:
            loop = asyncio.get_running_loop()
            loop.add_reader(self._fd, self._readable)
            self._watching = loop
        try:
            await arrived.wait()
        except BaseException:  # cancelled: nobody reads on, so nothing is read meanwhile
            self.close()
            raise
        finally:
            self._arrived = None

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            self._error, chunk = exc, b""
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True
        if not chunk or len(self._buffer) > _HIGH_WATER:
            self.close()
        if self._arrived is not None:
            self._arrived.set()


class PipeStdout:
    """Whole messages written to the pipe `fd` from the event loop; `fd` must be non-blocking.

    `write` only collects the text; `flush` writes it, waiting for the pipe to drain when
    the client reads slowly (the SDK calls both once per message).

    Raises:
        BrokenPipeError: from `flush`, when the client closed its end.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending = bytearray()

    async def write(self, text: str) -> None:
        self._pending += text.encode("utf-8")

    async def flush(self) -> None:
        data = memoryview(bytes(self._pending))
        self._pending.clear()
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            data = data[written:]


class _Closable:
    """What the SDK asks of a stream besides sending or receiving: `aclose`, and use as a context."""

    def __init__(self) -> None:
        self._closed = False

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class MessageReader(_Closable):
    """The SDK's read stream over `lines`: each line parsed into a message by the task that receives it.

    A line that is not a JSON-RPC message is received as the exception its parsing raised,
    as the SDK's own reader hands it on.
    """

    def __init__(self, lines: PipeStdin) -> None:
        super().__init__()
        self._lines = lines
        self._replay: deque[SessionMessage | Exception] = deque()

    async def aclose(self) -> None:
        await super().aclose()
        self._lines.close()

    async def opening_request(self) -> types.JSONRPCRequest | None:
        """The client's first request, read ahead and kept to be received again, with the frames
        before it (at most `_PRE_REQUEST_KEPT`; later ones are dropped, as the SDK does);
        None if the input ends first."""
        while True:
            try:
                item = await self._receive_new()
            except anyio.EndOfStream:
                return None
            request = item.message if isinstance(item, SessionMessage) else None
            if isinstance(request, types.JSONRPCRequest):
                self._replay.append(item)
                return request
            if len(self._replay) < _PRE_REQUEST_KEPT:
                self._replay.append(item)

    async def receive(self) -> SessionMessage | Exception:
        """The next message.

        Raises:
            anyio.EndOfStream: the client closed its end.
            anyio.ClosedResourceError: this stream was closed.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        if self._replay:
            return self._replay.popleft()
        return await self._receive_new()

    async def _receive_new(self) -> SessionMessage | Exception:
        line = await self._lines.readline()
        if not line:
            raise anyio.EndOfStream
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except Exception as exc:  # boundary: the client's bytes, answered by the server as the SDK does
            return exc

    def __aiter__(self) -> MessageReader:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class MessageWriter(_Closable):
    """The SDK's write stream onto the pipe `fd` (non-blocking): each message serialised and written
    by the task that sends it, whole, one message at a time.

    Raises (from `send`):
        anyio.BrokenResourceError: the client closed its end (the SDK then drops the message).
        anyio.ClosedResourceError: this stream was closed.
    """

    def __init__(self, fd: int, early: Handover | None = None) -> None:
        """`early`: the requests answered before the server was up, whose answers are not sent again."""
        super().__init__()
        self._fd = fd
        # Taken without a turn of the loop when free, which it is but while a full pipe drains.
        self._lock = anyio.Lock(fast_acquire=True)
        self._backlog = b""
        self._early = early

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        message = item.message
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
        early = self._early
        if early is not None and (
            (early.answered and getattr(message, "id", None) in early.answered)
            or (early.acked and getattr(message, "method", None) == ACKNOWLEDGED)
        ):
            instead = early.in_place_of(json.loads(text))
            if not instead:
                return
            text = "\n".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in instead)
        data = (text + "\n").encode()
        async with self._lock:
            view = memoryview(self._backlog + data if self._backlog else data)
            try:
                while view:
                    try:
                        view = view[os.write(self._fd, view) :]
                    except BlockingIOError:
                        await anyio.wait_writable(self._fd)
            except OSError as exc:  # EPIPE, ECONNRESET: the client is gone
                self._closed = True
                raise anyio.BrokenResourceError from exc
            finally:
                # Cut short (cancelled while the pipe was full): the rest of a line begun goes out
                # first with the next message; a message none of which went out is dropped.
                unsent_backlog = len(view) - len(data)
                self._backlog = bytes(view[:unsent_backlog] if unsent_backlog >= 0 else view)


@contextlib.contextmanager
def _non_blocking(fd: int) -> Iterator[None]:
    was_blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(fd, was_blocking)


@contextlib.contextmanager
def _claim_stdout() -> Iterator[int]:
    """A private duplicate of fd 1 for the wire, with fd 1 itself pointed at stderr until exit."""
    private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        os.dup2(2, 1)
        try:
            yield private
        finally:
            os.dup2(private, 1)
    finally:
        os.close(private)


@contextlib.contextmanager
def stdio_streams(stdin_fd: int = 0) -> Iterator[tuple[PipeStdin | DaemonStdin, PipeStdout | None]]:
    """The stdin and stdout objects to hand to the SDK's `stdio_server`.

    stdout is None when fd 1 is not a pipe: the SDK then claims it and writes it as it does.
    """
    with contextlib.ExitStack() as stack:
        stdin: PipeStdin | DaemonStdin = DaemonStdin(stdin_fd)
        if is_pipe(stdin_fd):
            stack.enter_context(_non_blocking(stdin_fd))
            stdin = PipeStdin(stdin_fd)
            stack.callback(stdin.close)
        stdout: PipeStdout | None = None
        if is_pipe(1):
            wire = stack.enter_context(_claim_stdout())
            stack.enter_context(_non_blocking(wire))
            stdout = PipeStdout(wire)
        yield stdin, stdout


@contextlib.asynccontextmanager
async def stdio_transport(stdin_fd: int = 0, early: Handover | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams to hand to `Server.run`, over stdin `stdin_fd` and stdout.

    Both pipes: `MessageReader` and `MessageWriter` on the event loop, the bytes `early` read
    first (the early answers run only where both are pipes). Otherwise the SDK's `stdio_server`,
    fed by `stdio_streams`.
    """
    if is_pipe(stdin_fd) and is_pipe(1):
        with contextlib.ExitStack() as stack:
            stack.enter_context(_non_blocking(stdin_fd))
            wire = stack.enter_context(_claim_stdout())
            stack.enter_context(_non_blocking(wire))
            lines = PipeStdin(stdin_fd, early.pending, early.eof) if early is not None else PipeStdin(stdin_fd)
            stack.callback(lines.close)  # before stdin is made blocking again
            yield MessageReader(lines), MessageWriter(wire, early)
        return
    from mcp.server.stdio import stdio_server

    with stdio_streams(stdin_fd) as (stdin, stdout):
        async with stdio_server(stdin=stdin, stdout=stdout) as streams:  # type: ignore[arg-type]
            yield streams
