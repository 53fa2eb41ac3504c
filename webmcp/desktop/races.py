"""The one way to wait for whichever of several things happens first.

`first_of(a, b, …, timeout=…)` runs each wait side by side in a task group of its own,
returns as soon as one of them ends, and cancels the others. What the winner returned is
in `First.value`; what it raised is raised as it is (never wrapped in an ExceptionGroup,
so a caller's `except ToolError` still catches it). A timeout is not an error: `First.index`
is None. The caller's own cancellation always goes through.

    first = await first_of(answered.wait, dialog_opened.wait, timeout=5)
    if first.index is None: …   # neither within 5 s
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

__all__ = ["First", "first_of"]

Wait = Callable[[], Awaitable[Any]]


@dataclass(frozen=True)
class First:
    """Which wait ended first (its position among the arguments), and what it returned."""

    index: int | None
    value: Any = None

    @property
    def timed_out(self) -> bool:
        return self.index is None


async def first_of(*waits: Wait, timeout: float | None = None) -> First:
    """Run `waits` side by side until the first ends (or `timeout` seconds pass); cancel the rest.

    Raises:
        Exception: whatever the first wait to end raised, as it is.
    """
    ended: list[tuple[int, Any, BaseException | None]] = []
    with anyio.move_on_after(timeout if timeout is not None else float("inf")):
        async with anyio.create_task_group() as tg:

            async def _run(index: int, wait: Wait) -> None:
                # Kept and raised below, not from inside the group (it would come out wrapped).
                try:
                    value = await wait()
                except Exception as exc:  # noqa: BLE001 - re-raised as is once the group has ended
                    ended.append((index, None, exc))
                else:
                    ended.append((index, value, None))
                tg.cancel_scope.cancel()

            for n, wait in enumerate(waits):
                tg.start_soon(_run, n, wait)
    if not ended:
        return First(None)
    index, value, error = ended[0]
    if error is not None:
        raise error
    return First(index, value)
