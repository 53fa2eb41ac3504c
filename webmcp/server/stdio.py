"""Standard input and output for the stdio transport, on the event loop when they are pipes.

The SDK's `stdio_server` reads and writes through `anyio.wrap_file`: every line read and
every message written (a write, then a flush) is a hand-off to a worker thread and back.
On a page-tool call that is three round trips between threads, about 0.2–0.3 ms of a call
that otherwise costs ~1 ms in the bridge (measured in bench/README.md, "call latency").
When stdin and stdout are pipes or sockets, as they are under every MCP client, this module
reads and writes them from the event loop instead: non-blocking descriptors, woken by the
loop's selector (`anyio.wait_readable` / `wait_writable`), no thread at all.

What the SDK's transport guarantees is kept:

* framing: one JSON-RPC message per line, however the bytes arrive (several messages in one
  read, one message over many reads, megabytes in one line); bytes that are not UTF-8 are
  replaced, as the SDK's reader does, so the server answers them with a parse error;
* end of input ends the reader, and a last line without its newline is still delivered;
* a client that stops reading never blocks the loop: the writer waits for the pipe to drain;
* while serving, file descriptor 1 points at stderr, so nothing else printed by the process
  or its children can break the framing; it is restored on exit;
* cancellation ends a pending read at once (no thread is left blocked in `read`).

Anything else (a terminal, a regular file, /dev/null) is served as before: `DaemonStdin` for
input, the SDK's own writer for output. Those may be shared with other processes, and
setting them non-blocking would change them for those processes too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncIterator, Iterator

import anyio

from webmcp.server.stdin import DaemonStdin

__all__ = ["PipeStdin", "PipeStdout", "is_pipe", "stdio_streams"]

_READ_CHUNK = 1 << 16


def is_pipe(fd: int) -> bool:
    """True when `fd` is a pipe or a socket: a descriptor the event loop can wait on."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeStdin:
    """The lines of the pipe `fd`, read on the event loop (UTF-8, undecodable bytes replaced).

    `fd` must be non-blocking. Each line is yielded with its newline; a last line without
    one is yielded at end of input.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        buffer = bytearray()
        while True:
            chunk = await self._read()
            if not chunk:
                break
            # Only the new bytes can hold the next newline: a megabyte line read in chunks
            # is scanned once, not once per chunk.
            start = len(buffer)
            buffer += chunk
            end = buffer.find(b"\n", start)
            if end < 0:
                continue
            begin = 0
            while end >= 0:
                yield buffer[begin : end + 1].decode("utf-8", errors="replace")
                begin = end + 1
                end = buffer.find(b"\n", begin)
            del buffer[:begin]
        if buffer:
            yield buffer.decode("utf-8", errors="replace")

    async def _read(self) -> bytes:
        while True:
            try:
                return os.read(self._fd, _READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)


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
        stdout: PipeStdout | None = None
        if is_pipe(1):
            wire = stack.enter_context(_claim_stdout())
            stack.enter_context(_non_blocking(wire))
            stdout = PipeStdout(wire)
        yield stdin, stdout
