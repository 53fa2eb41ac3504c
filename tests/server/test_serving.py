"""One stdio connection served by the SDK's loop for its era, reading `MessageReader` itself.

In-process over real pipes: a client of either protocol generation gets its answers from
the loop of its era, the frames a client sends before its first request are received again
after it, and without the SDK's private loops `Server.run` serves as before.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.message import SessionMessage
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from webmcp.server import serving
from webmcp.server.serving import serve_connection
from webmcp.server.stdio import MessageReader, MessageWriter, PipeStdin

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="only", input_schema={"type": "object"})])


def _server() -> Server[Any]:
    return Server("toy", version="0.0.1", on_list_tools=_list_tools)


class Wire:
    """The client's ends of the two pipes: write a line, read the next answer."""

    def __init__(self, to_server: int, from_server: int) -> None:
        self._to_server = to_server
        self._from = PipeStdin(from_server)

    def send(self, message: dict[str, Any]) -> None:
        os.write(self._to_server, json.dumps(message).encode() + b"\n")

    async def answer(self) -> dict[str, Any]:
        with anyio.fail_after(10):
            message: dict[str, Any] = json.loads(await self._from.readline())
        return message

    def close(self) -> None:
        self._from.close()
        os.close(self._to_server)


@asynccontextmanager
async def served(server: Server[Any], read_stream: Any = None) -> AsyncIterator[Wire]:
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    for fd in (to_server_r, from_server_w, from_server_r):
        os.set_blocking(fd, False)
    reader = read_stream if read_stream is not None else MessageReader(PipeStdin(to_server_r))
    wire = Wire(to_server_w, from_server_r)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                serve_connection, server, reader, MessageWriter(from_server_w), server.create_initialization_options()
            )
            yield wire
            wire.close()  # the client's input ends: the server returns
    finally:
        for fd in (to_server_r, from_server_w, from_server_r):
            os.close(fd)


def _initialize(request_id: int) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


async def test_a_handshake_client_is_served_by_the_handshake_loop() -> None:
    async with served(_server()) as wire:
        wire.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})  # before its first request
        wire.send(_initialize(1))
        initialized = await wire.answer()
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = await wire.answer()
    assert initialized["id"] == 1 and initialized["result"]["serverInfo"]["name"] == "toy"
    assert [t["name"] for t in listed["result"]["tools"]] == ["only"]
    assert "resultType" not in listed["result"], "answered in the handshake era's shape"


async def test_a_2026_client_is_served_by_the_modern_loop() -> None:
    envelope = {
        PROTOCOL_VERSION_META_KEY: MODERN_PROTOCOL_VERSIONS[-1],
        CLIENT_INFO_META_KEY: {"name": "t", "version": "1"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    async with served(_server()) as wire:
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": envelope}})
        listed = await wire.answer()
        wire.send(_initialize(2))
        refused = await wire.answer()
    assert [t["name"] for t in listed["result"]["tools"]] == ["only"]
    assert listed["result"]["resultType"] == "complete", "answered in the 2026-07-28 shape"
    assert "error" in refused, "a connection opened by a 2026 request stays one"


async def test_without_the_sdks_loops_server_run_serves_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serving, "_LOOPS", (*serving._LOOPS, "_a_loop_a_later_sdk_renamed"))
    ran: list[str] = []
    server = _server()
    original = server.run

    async def run(*args: Any, **kwargs: Any) -> None:
        ran.append("run")
        await original(*args, **kwargs)

    monkeypatch.setattr(server, "run", run)
    async with served(server) as wire:
        wire.send(_initialize(1))
        assert (await wire.answer())["result"]["serverInfo"]["name"] == "toy"
    assert ran == ["run"]


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


async def test_the_opening_request_is_received_again_after_at_most_eight_frames_before_it(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    reader = MessageReader(PipeStdin(read_end))
    for n in range(10):
        os.write(write_end, json.dumps({"jsonrpc": "2.0", "method": f"notifications/n{n}"}).encode() + b"\n")
    os.write(write_end, json.dumps(_initialize(7)).encode() + b"\n")
    opening = await reader.opening_request()
    assert isinstance(opening, types.JSONRPCRequest) and opening.id == 7
    replayed = [await reader.receive() for _ in range(9)]
    methods = [m.message.method for m in replayed if isinstance(m, SessionMessage)]
    assert methods == [f"notifications/n{n}" for n in range(8)] + ["initialize"]
    await reader.aclose()
