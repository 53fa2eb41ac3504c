"""The connection over Chromium's debugging pipe, against a scripted peer on real OS pipes.

The peer speaks the pipe's framing (NUL-terminated JSON) through a second `PipeTransport`
on the other ends, so both directions run non-blocking on the event loop.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from cdp_bridge import Connection, ConnectionClosed, Timeouts
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
