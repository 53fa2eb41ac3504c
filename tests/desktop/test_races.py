"""`first_of`: the first wait to end wins, the others are cancelled, errors come out unwrapped."""

from __future__ import annotations

import anyio
import pytest

from webmcp.desktop.races import first_of
from webmcp.errors import ToolError

pytestmark = pytest.mark.anyio


async def test_the_first_wait_to_end_wins_and_the_others_are_cancelled() -> None:
    fast, slow = anyio.Event(), anyio.Event()
    cancelled: list[str] = []

    async def wait_slow() -> str:
        try:
            await slow.wait()
        except anyio.get_cancelled_exc_class():
            cancelled.append("slow")
            raise
        return "slow"

    async def wait_fast() -> str:
        await fast.wait()
        return "fast"

    async def set_fast() -> None:
        fast.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(set_fast)
        first = await first_of(wait_slow, wait_fast, timeout=5)
    assert (first.index, first.value) == (1, "fast")
    assert cancelled == ["slow"]


async def test_nothing_ending_within_the_timeout_is_no_error() -> None:
    never = anyio.Event()
    first = await first_of(never.wait, never.wait, timeout=0.01)
    assert first.timed_out and first.index is None


async def test_an_error_of_the_winner_is_raised_as_it_is_not_wrapped() -> None:
    never = anyio.Event()

    async def refuse() -> None:
        raise ToolError("stale_state", "changed", current_version=3)

    with pytest.raises(ToolError) as caught:
        await first_of(never.wait, refuse, timeout=5)
    assert caught.value.code == "stale_state"


async def test_the_callers_cancellation_goes_through() -> None:
    never = anyio.Event()
    with anyio.move_on_after(0.01) as scope:
        await first_of(never.wait, never.wait)
    assert scope.cancelled_caught
