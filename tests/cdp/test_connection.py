"""The CDP connection against a scripted DevTools endpoint on 127.0.0.1 (a real websocket).

The endpoint answers like Chromium does: results and errors by id, events with and without
a sessionId, replies out of order, and it can go silent or hang up. What is tested is the
connection's own logic: routing, deadlines, typed errors, large frames, failing waiters.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import websockets
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.asyncio.server import ServerConnection, serve

from cdp_bridge import CommandTimeout, Connection, ConnectionClosed, ProtocolError, SessionClosed, Timeouts
from cdp_bridge.connection import parse_message

pytestmark = pytest.mark.anyio

Handler = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]


@asynccontextmanager
async def endpoint(handler: Handler) -> AsyncIterator[str]:
    async def serve_one(ws: ServerConnection) -> None:
        try:
            async for raw in ws:
                await handler(ws, json.loads(raw))
        except websockets.ConnectionClosed:
            pass

    async with serve(serve_one, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/devtools/browser/test"


async def reply(ws: ServerConnection, message: dict[str, Any], **fields: Any) -> None:
    out = {"id": message["id"], **fields}
    if "sessionId" in message:
        out["sessionId"] = message["sessionId"]
    await ws.send(json.dumps(out))


async def test_commands_get_their_own_answers_even_out_of_order() -> None:
    held: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        held.append(message)
        if len(held) == 2:  # answer the second first
            for m in reversed(held):
                await reply(ws, m, result={"echo": m["params"]["n"]})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        results: dict[int, Any] = {}

        async def send(n: int) -> None:
            results[n] = await conn.browser.send("Echo", {"n": n})

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, 1)
            tg.start_soon(send, 2)
    assert results == {1: {"echo": 1}, 2: {"echo": 2}}


async def test_protocol_error_carries_code_and_message() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        await reply(ws, message, error={"code": -32602, "message": "Tool not found"})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        with pytest.raises(ProtocolError) as caught:
            await conn.browser.send("WebMCP.invokeTool", {})
    assert caught.value.code == -32602 and "Tool not found" in str(caught.value)


async def test_silent_browser_times_out_and_nothing_stays_pending() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        return None

    async with endpoint(handler) as url, Connection.connect(url, Timeouts(command=0.2)) as conn:
        with pytest.raises(CommandTimeout):
            await conn.browser.send("Page.navigate")
        assert conn._pending == {}


async def test_cancelled_command_leaves_nothing_pending() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        return None

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        with anyio.move_on_after(0.1):
            await conn.browser.send("Page.navigate")
        assert conn._pending == {}


async def test_all_waiters_fail_at_once_when_the_browser_goes_away() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        if message["method"] == "Browser.crash":
            await ws.close()

    async with endpoint(handler) as url, Connection.connect(url, Timeouts(command=30)) as conn:
        errors: list[BaseException] = []

        async def waiting() -> None:
            try:
                await conn.browser.send("Runtime.evaluate")
            except ConnectionClosed as exc:
                errors.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(waiting)
                await anyio.sleep(0.05)
                tg.start_soon(waiting)
                with pytest.raises(ConnectionClosed):
                    await conn.browser.send("Browser.crash")
        assert len(errors) == 4
        with pytest.raises(ConnectionClosed):
            await conn.browser.send("Browser.getVersion")


async def test_events_route_by_session_and_detach_fails_that_sessions_waiters() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        if message["method"] == "Go":
            await ws.send(json.dumps({"method": "Page.loadEventFired", "params": {"t": 1}, "sessionId": "S1"}))
            await ws.send(json.dumps({"method": "Page.loadEventFired", "params": {"t": 2}, "sessionId": "S2"}))
            await ws.send(json.dumps({"method": "Target.targetCreated", "params": {"t": 3}}))
            await reply(ws, message, result={})
        elif message["method"] == "Hang":
            await ws.send(json.dumps({"method": "Target.detachedFromTarget", "params": {"sessionId": "S1"}}))

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        s1, s2 = conn.session("S1"), conn.session("S2")
        seen: list[tuple[str, int]] = []
        s1.on("Page.loadEventFired", lambda p: seen.append(("S1", p["t"])))
        s2.on("Page.loadEventFired", lambda p: seen.append(("S2", p["t"])))
        conn.browser.on("Target.targetCreated", lambda p: seen.append(("browser", p["t"])))
        async with s2.expect("Page.loadEventFired") as loaded:
            await conn.browser.send("Go")
            assert (await loaded.wait(2))["t"] == 2
        assert seen == [("S1", 1), ("S2", 2), ("browser", 3)]
        with anyio.fail_after(5), pytest.raises(SessionClosed):
            await s1.send("Hang")
        with pytest.raises(SessionClosed):
            await s1.send("Anything")


async def test_frames_of_ten_megabytes_and_more_pass_both_ways() -> None:
    big = "x" * (12 * 1024 * 1024)

    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        await reply(ws, message, result={"length": len(message["params"]["data"]), "data": big})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        answer = await conn.browser.send("Big", {"data": big})
    assert answer["length"] == len(big) and len(answer["data"]) == len(big)


async def test_unreachable_endpoint_is_a_clear_error() -> None:
    with pytest.raises(ConnectionClosed, match="Could not reach"):
        async with Connection.connect("ws://127.0.0.1:9/devtools/browser/x", Timeouts(launch=2)):
            pass


async def test_commands_sent_before_another_go_first_and_their_answers_even_errors_are_dropped() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        seen.append(message)
        if message["method"] == "Runtime.evaluate":
            await reply(ws, message, error={"code": -32000, "message": "no context"})
        else:
            await reply(ws, message, result={"after": [m["method"] for m in seen]})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        session = conn.session("S1")
        gesture = {"expression": "0", "userGesture": True}
        answer = await session.send("WebMCP.invokeTool", {}, preceded_by=[("Runtime.evaluate", gesture)])
        assert not conn._pending, "nothing waits for the answer of a command sent before"
        assert await session.send("Echo") == {"after": ["Runtime.evaluate", "WebMCP.invokeTool", "Echo"]}
    assert answer == {"after": ["Runtime.evaluate", "WebMCP.invokeTool"]}
    assert seen[0]["sessionId"] == "S1" and seen[0]["params"] == gesture
    assert len({m["id"] for m in seen}) == 3


async def test_commands_sent_in_order_go_before_any_answer_and_each_answer_or_refusal_comes_back_in_order() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        seen.append(message)
        if len(seen) < 3:
            return  # answers only once all three are here: one round trip, not three
        for m in seen:
            if m["method"] == "Fetch.enable":
                await reply(ws, m, error={"code": -32601, "message": "'Fetch.enable' wasn't found"})
            else:
                await reply(ws, m, result={"method": m["method"]})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        session = conn.session("S1")
        with anyio.fail_after(5):
            answers = await session.send_all([("Page.enable", {}), ("Fetch.enable", {"a": 1}), ("Echo", {})])
        assert conn._pending == {}
    assert answers[0] == {"method": "Page.enable"} and answers[2] == {"method": "Echo"}
    assert isinstance(answers[1], ProtocolError) and answers[1].code == -32601
    assert [m["method"] for m in seen] == ["Page.enable", "Fetch.enable", "Echo"]
    assert all(m["sessionId"] == "S1" for m in seen) and seen[1]["params"] == {"a": 1}


async def test_commands_sent_together_time_out_together_and_nothing_stays_pending() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        if message["method"] == "Page.enable":
            await reply(ws, message, result={})

    async with endpoint(handler) as url, Connection.connect(url, Timeouts(command=0.2)) as conn:
        with anyio.fail_after(5):
            answers = await conn.browser.send_all([("Page.enable", {}), ("Runtime.enable", {})])
        assert conn._pending == {}
    assert answers[0] == {} and isinstance(answers[1], CommandTimeout)
    assert "Runtime.enable" in str(answers[1])


# What Chromium's JSON can hold: any string (lone surrogates come as `\\udXXX` escapes), numbers
# of any size, nesting.
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**100), max_value=2**100)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=None)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans())
def test_a_message_parses_to_what_json_loads_gives(value: Any, ascii_only: bool) -> None:
    text = json.dumps({"id": 1, "result": value}, ensure_ascii=ascii_only)
    assert repr(parse_message(text)) == repr(json.loads(text))  # repr: -0.0, nan and key order too


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True))
def test_a_number_parses_to_what_json_loads_gives(literal: str) -> None:
    assert repr(parse_message(literal)) == repr(json.loads(literal))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "x\\ud800y"}',  # a lone surrogate, which pydantic-core refuses
        '{"a": "x\ud800y"}',  # one raw in the text, which it refuses too (a TypeError)
        '{"b": "\\udfff"}',
        '{"c": "\\ud83d\\ude00 \\u0000"}',  # a pair and a NUL
        "[" * 600 + "]" * 600,  # deeper than pydantic-core goes
        '{"n": NaN, "i": -Infinity, "big": 123456789012345678901234567890}',
        '{"a": 1, "a": 2}',
    ],
)
def test_what_the_fast_parser_refuses_json_loads_reads(text: str) -> None:
    assert repr(parse_message(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": 1} x', "", "{'a': 1}"])
def test_a_broken_message_raises_what_json_loads_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_message(text)


async def test_a_page_string_with_a_lone_surrogate_reaches_the_caller_as_sent() -> None:
    async def handler(ws: ServerConnection, message: dict[str, Any]) -> None:
        await reply(ws, message, result={"result": {"type": "string", "value": "a\ud800b \U0001f600"}})

    async with endpoint(handler) as url, Connection.connect(url) as conn:
        with anyio.fail_after(5):
            answer = await conn.browser.send("Runtime.evaluate", {"expression": "page()"})
    assert answer == {"result": {"type": "string", "value": "a\ud800b \U0001f600"}}
