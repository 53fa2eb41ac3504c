"""side_by_side: independent reads run together, answered in their order, failures kept per read; set_up: a
session's set-up in one round trip, a refused optional step let go."""

from __future__ import annotations

import anyio
import pytest

from cdp_bridge.batch import SetUp, commands_side_by_side, set_up, side_by_side
from cdp_bridge.errors import CDPError, CommandTimeout, ProtocolError


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


class _Session:
    """Answers `send_all` as a browser would, refusing the methods in `refuse`."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse = refuse
        self.sent: list[str] = []

    async def send_all(self, commands, *, timeout=None):  # type: ignore[no-untyped-def]
        self.sent += [method for method, _ in commands]
        return [ProtocolError(m, -32601, "not here") if m in self.refuse else {"m": m} for m, _ in commands]


@pytest.mark.anyio
async def test_a_set_up_sends_every_step_and_a_refused_optional_step_answers_empty() -> None:
    session = _Session(refuse={"Fetch.enable"})
    steps = [SetUp("Page.enable"), SetUp("Fetch.enable", optional="no sign-ins"), SetUp("Page.getFrameTree")]
    answers = await set_up(session, steps)  # type: ignore[arg-type]
    assert answers == [{"m": "Page.enable"}, {}, {"m": "Page.getFrameTree"}]
    assert session.sent == ["Page.enable", "Fetch.enable", "Page.getFrameTree"]


@pytest.mark.anyio
async def test_a_set_up_raises_the_first_refused_step_that_is_not_optional() -> None:
    session = _Session(refuse={"Runtime.enable", "WebMCP.enable"})
    with pytest.raises(ProtocolError) as caught:
        await set_up(session, [SetUp("Page.enable"), SetUp("Runtime.enable"), SetUp("WebMCP.enable")])  # type: ignore[arg-type]
    assert caught.value.method == "Runtime.enable"


@pytest.mark.anyio
async def test_a_set_up_raises_a_step_left_unanswered_even_an_optional_one() -> None:
    class Late(_Session):
        async def send_all(self, commands, *, timeout=None):  # type: ignore[no-untyped-def]
            answers = await super().send_all(commands, timeout=timeout)
            pairs = zip(commands, answers, strict=True)
            return [CommandTimeout(m, 1.0) if m == "Fetch.enable" else a for (m, _), a in pairs]

    with pytest.raises(CommandTimeout) as caught:
        await set_up(Late(set()), [SetUp("Page.enable"), SetUp("Fetch.enable", optional="no sign-ins")])  # type: ignore[arg-type]
    assert caught.value.method == "Fetch.enable"
