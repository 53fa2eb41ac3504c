"""Standard input for the stdio transport, read so that shutting down never waits on it.

The SDK reads stdin through `anyio.wrap_file`, one worker-thread `readline()` per line.
Such a read cannot be cancelled, and the worker thread is not a daemon: when the bridge
has to stop while the client keeps stdin open (the browser died), the task group waited
for the client's next line, and the process lingered for a minute and more. Here one
daemon thread reads the lines and hands them over through a memory stream, so
cancellation ends the reader at once and the interpreter exits without joining the thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["DaemonStdin"]


class DaemonStdin:
    """An async iterator over the lines of file descriptor `fd` (UTF-8, undecodable bytes replaced).

    It reads the descriptor with `os.read`, never through `sys.stdin.buffer`: a daemon thread
    blocked inside a buffered reader holds its lock, and the interpreter aborts at exit
    when it finds that lock taken.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str](16)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            try:
                pending = b""
                while chunk := os.read(self._fd, 65536):
                    *lines, pending = (pending + chunk).split(b"\n")
                    for raw in lines:
                        anyio.from_thread.run(send.send, raw.decode("utf-8", errors="replace") + "\n", token=token)
                if pending:
                    anyio.from_thread.run(send.send, pending.decode("utf-8", errors="replace"), token=token)
                # Closed on the event loop's thread: a close from here would not wake the reader.
                anyio.from_thread.run_sync(send.close, token=token)
            except (OSError, RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the event loop or the reader is gone: nobody wants the rest

        threading.Thread(target=pump, name="webmcp-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line
