"""Commands sent together, so their round trips overlap instead of adding up.

Chromium runs a session's commands one after another on the page's main thread anyway;
what sending them together saves is the wait between them. Reading a tab's view took ~30
commands one at a time, each ~0.4 ms of round trip on a loaded machine for ~0.05 ms of work;
setting up a tab took a dozen, ~70 ms one by one while the browser was starting.

- `side_by_side`: independent reads, each in a task of its own (`succeeded`: all their results,
  or the first failure raised).
- `commands_side_by_side`: a session's independent commands, in one write.
- `set_up`: a session's set-up, written in order at once and answered together.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .errors import CDPError, ProtocolError

if TYPE_CHECKING:
    from .connection import CDPSession

__all__ = ["SetUp", "commands_side_by_side", "set_up", "side_by_side", "succeeded"]

logger = logging.getLogger(__name__)

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


def succeeded(outcomes: list[T | CDPError]) -> list[T]:
    """The results of `side_by_side` or `commands_side_by_side`, or the first CDPError raised."""
    for outcome in outcomes:
        if isinstance(outcome, CDPError):
            raise outcome
    return outcomes  # type: ignore[return-value]


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


@dataclass(frozen=True, slots=True)
class SetUp:
    """One command of a session's set-up.

    `optional`: what the session goes without when the browser refuses the command (a browser
    reached through the extension may not offer a domain); such a refusal is logged with it,
    not raised.
    """

    method: str
    params: Mapping[str, Any] = field(default_factory=dict)
    optional: str = ""


async def set_up(session: CDPSession, steps: Sequence[SetUp], timeout: float | None = None) -> list[dict[str, Any]]:
    """Send `steps` to `session` in order, in one write, and wait for all their answers (one round trip).

    Each step runs before the next, as if each had been awaited in turn. Returns each step's
    answer (`{}` for a refused optional one).

    Raises:
        ProtocolError: the browser refused a step that is not optional.
        CommandTimeout / ConnectionClosed / SessionClosed: a step had no answer in time, or the
            socket or the session went away (as `CDPSession.send_all`).
        Of these, the first in the order of `steps`.
    """
    answers = await session.send_all([(step.method, step.params) for step in steps], timeout=timeout)
    out: list[dict[str, Any]] = []
    for step, answer in zip(steps, answers, strict=True):
        if isinstance(answer, CDPError):
            if not (step.optional and isinstance(answer, ProtocolError)):
                raise answer
            logger.info("%s: %s", step.optional, answer)
            answer = {}
        out.append(answer)
    return out
