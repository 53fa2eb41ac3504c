"""The connection over Chromium's debugging pipe, against a scripted peer on real OS pipes.

The peer speaks the pipe's framing (NUL-terminated JSON) through a second `PipeTransport`
on the other ends, so both directions run non-blocking on the event loop.
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from cdp_bridge import CommandTimeout, Connection, ConnectionClosed, ProtocolError, Timeouts
from cdp_bridge.transport import PipeTransport

pytestmark = pytest.mark.anyio

Peer = Callable[[PipeTransport, dict[str, Any]], Awaitable[None]]


@asynccontextmanager
async def pipe_pair(peer: Peer) -> AsyncIterator[PipeTransport]:
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    ours = PipeTransport(from_browser_r, to_browser_w)
    theirs = PipeTransport(to_browser_r, from_browser_w)

    async def serve() -> None:
        try:
            while True:
                await peer(theirs, json.loads(await theirs.receive()))
        except ConnectionClosed:
            await theirs.close()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        try:
            yield ours
        finally:
            await ours.close()
            await theirs.close()
            tg.cancel_scope.cancel()


async def echo(peer: PipeTransport, message: dict[str, Any]) -> None:
    await peer.send(json.dumps({"id": message["id"], "result": message["params"]}))


async def test_big_messages_pass_both_ways_without_blocking_the_loop() -> None:
    big = "y" * (12 * 1024 * 1024)  # far beyond a pipe's 64 KiB buffer: many partial writes
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with pipe_pair(echo) as transport, Connection.open(transport) as conn, anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        answer = await conn.browser.send("Big", {"data": big, "n": 1})
        tg.cancel_scope.cancel()
    assert answer == {"data": big, "n": 1}
    assert ticks > 0, "the loop kept running while the message crossed the pipe"


async def test_a_second_connection_reuses_the_pipe_after_the_first() -> None:
    async with pipe_pair(echo) as transport:
        async with Connection.open(transport, close_transport=False) as first:
            assert await first.browser.send("One", {"n": 1}) == {"n": 1}
        assert not transport.closed
        async with Connection.open(transport) as second:
            assert await second.browser.send("Two", {"n": 2}) == {"n": 2}
        assert transport.closed


async def test_browser_closing_the_pipe_fails_every_waiter() -> None:
    async def hang_up_on_crash(peer: PipeTransport, message: dict[str, Any]) -> None:
        if message["method"] == "Browser.crash":
            await peer.close()

    async with pipe_pair(hang_up_on_crash) as transport, Connection.open(transport, Timeouts(command=30)) as conn:
        failures: list[BaseException] = []

        async def waiting() -> None:
            try:
                await conn.browser.send("Runtime.evaluate")
            except ConnectionClosed as exc:
                failures.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting)
                tg.start_soon(waiting)
                with pytest.raises(ConnectionClosed):
                    await conn.browser.send("Browser.crash")
        assert len(failures) == 2 and "pipe" in str(failures[0])
        assert conn.closed.is_set()


async def test_a_command_and_those_sent_before_it_cross_the_pipe_in_one_write() -> None:
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    ours = PipeTransport(from_browser_r, to_browser_w)
    try:
        await ours.send_joined(['{"id":1}', '{"id":2}'])
        # Both are in the pipe before the browser's side reads anything: one write put them there.
        assert os.read(to_browser_r, 1 << 16) == b'{"id":1}\0{"id":2}\0'
    finally:
        await ours.close()
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)


async def test_the_answer_to_a_command_sent_before_another_is_dropped_over_the_pipe() -> None:
    got: list[str] = []

    async def peer(theirs: PipeTransport, message: dict[str, Any]) -> None:
        got.append(message["method"])
        await theirs.send(json.dumps({"id": message["id"], "result": {"n": len(got)}}))

    async with pipe_pair(peer) as transport, Connection.open(transport) as conn:
        answer = await conn.browser.send("Second", preceded_by=[("First", {})])
    assert got == ["First", "Second"]
    assert answer == {"n": 2}, "the first answer is not taken for the second's"


@asynccontextmanager
async def raw_pipe() -> AsyncIterator[tuple[PipeTransport, int]]:
    """Our transport, and the browser's end of the pipe to it as a plain (blocking) fd."""
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    ours = PipeTransport(from_browser_r, to_browser_w)
    try:
        yield ours, to_browser_r
    finally:
        await ours.close()
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)


def _fill(fd: int) -> int:
    """Write to the non-blocking `fd` until its pipe is full; the bytes written."""
    written = 0
    while True:
        try:
            written += os.write(fd, b"x" * 4096)
        except BlockingIOError:
            return written


async def test_send_now_writes_the_messages_in_one_write_without_yielding() -> None:
    async with raw_pipe() as (ours, theirs):
        assert ours.send_now(['{"id":1}', '{"id":2}']) is True
        # No await since: the bytes are in the pipe already, written by the call itself.
        assert os.read(theirs, 1 << 16) == b'{"id":1}\0{"id":2}\0'


async def test_send_now_writes_nothing_when_it_would_have_to_wait() -> None:
    async with raw_pipe() as (ours, theirs):
        # Longer than PIPE_BUF: a pipe may take such a write in part.
        assert ours.send_now(["x" * select.PIPE_BUF]) is False
        # A full pipe: the message would wait for the browser to read.
        filled = _fill(ours._write_fd)
        assert ours.send_now(['{"id":1}']) is False
        assert _drain(theirs) == b"x" * filled, "no part of either message is in the pipe"


async def test_send_now_leaves_a_write_under_way_alone() -> None:
    async with raw_pipe() as (ours, theirs):
        filled = _fill(ours._write_fd)
        async with anyio.create_task_group() as tg:
            tg.start_soon(ours.send, '{"id":1}')  # waits for the full pipe to drain, holding the writer
            await anyio.wait_all_tasks_blocked()
            assert ours.send_now(['{"id":2}']) is False, "it would cut into the write under way"
            received = b""
            while not received.endswith(b'{"id":1}\0'):
                await anyio.wait_readable(theirs)
                received += _drain(theirs)
        assert received == b"x" * filled + b'{"id":1}\0'


def _drain(fd: int) -> bytes:
    """Whatever the pipe `fd` holds now."""
    os.set_blocking(fd, False)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return data
        if not chunk:
            return data
        data += chunk


async def test_send_now_on_a_closed_pipe_raises_connection_closed() -> None:
    async with raw_pipe() as (ours, _theirs):
        await ours.close()
        with pytest.raises(ConnectionClosed):
            ours.send_now(['{"id":1}'])


async def test_a_command_sent_now_is_answered_through_its_reply() -> None:
    got: list[str] = []

    async def peer(theirs: PipeTransport, message: dict[str, Any]) -> None:
        got.append(message["method"])
        await theirs.send(json.dumps({"id": message["id"], "result": {"n": len(got)}}))

    async with pipe_pair(peer) as transport, Connection.open(transport) as conn:
        reply = conn.browser.send_now("Second", {}, preceded_by=[("First", {})])
        assert reply is not None
        assert await reply.wait(5) == {"n": 2}
    assert got == ["First", "Second"]


async def test_a_reply_nobody_waits_for_any_more_is_dropped() -> None:
    release = anyio.Event()

    async def late(theirs: PipeTransport, message: dict[str, Any]) -> None:
        await release.wait()
        await theirs.send(json.dumps({"id": message["id"], "result": {}}))

    async with pipe_pair(late) as transport, Connection.open(transport) as conn:
        reply = conn.browser.send_now("Slow")
        assert reply is not None
        with pytest.raises(CommandTimeout):
            await reply.wait(0.01)
        assert conn._pending == {}, "the command's id is forgotten once its caller stops waiting"
        release.set()
        assert await conn.browser.send("After", timeout=5) == {}


async def test_over_a_channel_without_immediate_writes_send_now_sends_nothing() -> None:
    sent: list[str] = []

    class Awaited:
        """A channel whose writes are awaited (a websocket, the relay)."""

        async def send(self, text: str) -> None:
            sent.append(text)

        async def receive(self) -> str:
            await anyio.sleep_forever()
            raise AssertionError

        async def close(self) -> None:
            pass

    async with Connection.open(Awaited()) as conn:
        assert conn.browser.send_now("Runtime.evaluate") is None
        assert conn._pending == {}
    assert sent == []


async def test_a_listener_gets_each_message_whole_however_the_bytes_arrive() -> None:
    to_us_r, to_us_w = os.pipe()
    ours = _reading(to_us_r)
    got: list[str] = []
    arrived = anyio.Event()
    big = "z" * (3 * 1024 * 1024)  # many reads

    def on_message(text: str) -> None:
        got.append(text)
        if len(got) == 3:
            arrived.set()

    stop = ours.listen(on_message, lambda reason: pytest.fail(reason))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_write_all, to_us_w, b'{"a":1}\0{"b":2}\0' + json.dumps({"c": big}).encode() + b"\0")
            with anyio.fail_after(10):
                await arrived.wait()
    finally:
        stop()
        await ours.close()
        os.close(to_us_w)
    assert got[:2] == ['{"a":1}', '{"b":2}'] and json.loads(got[2]) == {"c": big}


def _reading(read_fd: int) -> PipeTransport:
    """A transport reading `read_fd` (its writes go to a pipe nobody reads)."""
    unread, write_fd = os.pipe()
    os.close(unread)
    return PipeTransport(read_fd, write_fd)


async def _write_all(fd: int, data: bytes) -> None:
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


async def test_what_a_listener_read_past_its_last_message_stays_for_the_next_reader() -> None:
    to_us_r, to_us_w = os.pipe()
    ours = _reading(to_us_r)
    got: list[str] = []
    first = anyio.Event()
    os.write(to_us_w, b'{"n":1}\0{"n":2')  # the second message is cut where the first listener stops

    def on_message(text: str) -> None:
        got.append(text)
        first.set()

    stop = ours.listen(on_message, lambda reason: pytest.fail(reason))
    with anyio.fail_after(5):
        await first.wait()
        await anyio.wait_all_tasks_blocked()
    stop()
    os.write(to_us_w, b"}\0")
    try:
        with anyio.fail_after(5):
            assert await ours.receive() == '{"n":2}'
    finally:
        await ours.close()
        os.close(to_us_w)
    assert got == ['{"n":1}']


async def test_a_listener_hears_the_end_of_the_stream_once() -> None:
    to_us_r, to_us_w = os.pipe()
    ours = _reading(to_us_r)
    ends: list[str] = []
    ended = anyio.Event()

    def on_end(reason: str) -> None:
        ends.append(reason)
        ended.set()

    ours.listen(lambda text: pytest.fail(text), on_end)
    os.close(to_us_w)  # the browser exits
    try:
        with anyio.fail_after(5):
            await ended.wait()
            await anyio.wait_all_tasks_blocked()
    finally:
        await ours.close()
    assert ends == ["the browser closed the DevTools pipe"]


async def test_commands_sent_all_together_cross_the_pipe_in_one_write_and_answer_in_their_order() -> None:
    got: list[str] = []

    async def peer(theirs: PipeTransport, message: dict[str, Any]) -> None:
        got.append(message["method"])
        if message["method"] == "Missing":
            await theirs.send(json.dumps({"id": message["id"], "error": {"code": -32000, "message": "no node"}}))
        else:
            await theirs.send(json.dumps({"id": message["id"], "result": {"method": message["method"]}}))

    async with pipe_pair(peer) as transport, Connection.open(transport) as conn:
        writes: list[int] = []
        write = transport._write

        async def counted(data: memoryview) -> None:
            writes.append(bytes(data).count(b"\0"))
            await write(data)

        transport._write = counted  # type: ignore[method-assign]
        answers = await conn.browser.send_all([("First", {}), ("Missing", {}), ("Third", {"n": 3})], timeout=5)
        assert conn._pending == {}
    assert writes == [3], "the three commands are one write"
    assert got == ["First", "Missing", "Third"]
    assert answers[0] == {"method": "First"} and answers[2] == {"method": "Third"}
    assert isinstance(answers[1], ProtocolError) and "no node" in str(answers[1])


async def test_commands_sent_all_together_that_get_no_answer_time_out_each_and_leave_nothing_pending() -> None:
    async def silent(theirs: PipeTransport, message: dict[str, Any]) -> None:
        if message["method"] == "Answered":
            await theirs.send(json.dumps({"id": message["id"], "result": {}}))

    async with pipe_pair(silent) as transport, Connection.open(transport) as conn:
        answers = await conn.browser.send_all([("Answered", {}), ("Silent", {})], timeout=0.2)
        assert conn._pending == {}
    assert answers[0] == {}
    assert isinstance(answers[1], CommandTimeout)
