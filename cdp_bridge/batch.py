"""Independent reads sent side by side, so their round trips overlap instead of adding up.

Chromium runs a session's commands one after another on the page's main thread anyway;
what sending them together saves is the wait between them. Reading a tab's view took ~30
commands one at a time, each ~0.4 ms of round trip on a loaded machine for ~0.05 ms of work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

import anyio

from .errors import CDPError

__all__ = ["commands_side_by_side", "side_by_side"]

T = TypeVar("T")


async def side_by_side(reads: Sequence[Callable[[], Awaitable[T]]]) -> list[T | CDPError]:
    """Run `reads` concurrently; in their order, each one's result or the CDPError it raised.

    Any other exception (cancellation included) ends them all and propagates.
    """
    results: list[T | CDPError] = []
    if len(reads) == 1:  # nothing to overlap: spare the task
        try:
            results.append(await reads[0]())
        except CDPError as exc:
            results.append(exc)
        return results
    slots: dict[int, T | CDPError] = {}

    async def run(index: int, read: Callable[[], Awaitable[T]]) -> None:
        try:
            slots[index] = await read()
        except CDPError as exc:
            slots[index] = exc

    async with anyio.create_task_group() as tg:
        for index, read in enumerate(reads):
            tg.start_soon(run, index, read)
    return [slots[i] for i in range(len(reads))]


async def commands_side_by_side(
    send: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]], commands: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[dict[str, Any] | CDPError]:
    """`send` each of `commands` side by side; in their order, each one's answer or its CDPError.

    When `send` is a session's own (`CDPSession.send`), all are written in one write
    (`CDPSession.send_all`): over the pipe each write wakes the browser's reader, which cost more
    than the command's own work when a read is a handful of them. Any other `send` (a test's,
    a wrapper) is called once per command.
    """
    send_all = getattr(getattr(send, "__self__", None), "send_all", None)
    if send_all is not None and len(commands) > 1:
        answers: list[dict[str, Any] | CDPError] = await send_all(commands)
        return answers
    return await side_by_side([partial(send, method, dict(params)) for method, params in commands])
