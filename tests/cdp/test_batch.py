"""side_by_side: independent reads run together, answered in their order, failures kept per read."""

from __future__ import annotations

import anyio
import pytest

from cdp_bridge.batch import commands_side_by_side, side_by_side
from cdp_bridge.errors import CDPError, ProtocolError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_reads_run_together_and_answer_in_their_order() -> None:
    started: list[int] = []
    all_started = anyio.Event()

    async def read(n: int) -> int:
        started.append(n)
        if len(started) == 3:
            all_started.set()
        await all_started.wait()  # only returns if every read is under way at once
        return n * 10

    with anyio.fail_after(5):
        answers = await side_by_side([lambda n=n: read(n) for n in (1, 2, 3)])  # type: ignore[misc]
    assert answers == [10, 20, 30]


@pytest.mark.anyio
async def test_a_failed_read_is_answered_with_its_error_and_the_others_still_answer() -> None:
    async def ok() -> str:
        return "ok"

    async def refused() -> str:
        raise ProtocolError("DOM.describeNode", -32000, "No node with given id found")

    with anyio.fail_after(5):
        answers = await side_by_side([ok, refused, ok])
        single = await side_by_side([refused])
    assert answers[0] == answers[2] == "ok"
    assert isinstance(answers[1], CDPError) and isinstance(single[0], CDPError)


@pytest.mark.anyio
async def test_other_failures_are_not_swallowed() -> None:
    async def broken() -> str:
        raise KeyError("nodeIds")

    async def ok() -> str:
        return "ok"

    raised = False
    try:
        with anyio.fail_after(5):
            await side_by_side([ok, broken])
    except* KeyError:
        raised = True
    assert raised


@pytest.mark.anyio
async def test_commands_go_to_a_sessions_send_all_at_once_and_to_any_other_send_one_by_one() -> None:
    batches: list[list[tuple[str, dict[str, int]]]] = []

    class Session:
        async def send(self, method: str, params: dict[str, int]) -> dict[str, int]:
            raise AssertionError("a session's commands go together")

        async def send_all(self, commands: list[tuple[str, dict[str, int]]]) -> list[dict[str, int] | CDPError]:
            batches.append(list(commands))
            return [{"n": params["n"]} for _method, params in commands]

    commands = [("A", {"n": 1}), ("B", {"n": 2})]
    assert await commands_side_by_side(Session().send, commands) == [{"n": 1}, {"n": 2}]
    assert batches == [commands]
    sent: list[str] = []

    async def send(method: str, params: dict[str, int]) -> dict[str, int]:
        sent.append(method)
        if method == "B":
            raise ProtocolError(method, -32000, "gone")
        return {"n": params["n"]}

    answers = await commands_side_by_side(send, commands)
    assert sent == ["A", "B"] and answers[0] == {"n": 1} and isinstance(answers[1], ProtocolError)
