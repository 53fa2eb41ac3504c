"""Browser-farm endpoints: headers the farm wants, and a token in the query string kept out of errors."""

from __future__ import annotations

import json

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from cdp_bridge import Connection, ConnectionClosed, Timeouts
from webmcp.config import parse_cdp_headers

pytestmark = pytest.mark.anyio


def _farm_gate(connection: ServerConnection, request: Request) -> Response | None:
    if request.headers.get("Authorization") != "Bearer farm-secret":
        return connection.respond(401, "token required\n")
    return None


async def _echo(ws: ServerConnection) -> None:
    async for raw in ws:
        message = json.loads(raw)
        await ws.send(json.dumps({"id": message["id"], "result": {"path": ws.request.path if ws.request else ""}}))


async def test_headers_reach_the_farm_and_the_query_string_passes_as_given() -> None:
    async with serve(_echo, "127.0.0.1", 0, process_request=_farm_gate) as server:
        port = server.sockets[0].getsockname()[1]
        url = f"ws://127.0.0.1:{port}/?token=t0k3n&launch=%7B%7D"
        headers = parse_cdp_headers(["Authorization: Bearer farm-secret"])
        async with Connection.connect(url, Timeouts(launch=5), headers=headers) as conn:
            assert (await conn.browser.send("Browser.getVersion"))["path"] == "/?token=t0k3n&launch=%7B%7D"
        with pytest.raises(ConnectionClosed, match="Could not reach") as refused:
            async with Connection.connect(url, Timeouts(launch=5)):
                pass
    assert "t0k3n" not in str(refused.value), "a token in the query string stays out of error messages"


def test_malformed_cdp_header_is_refused() -> None:
    with pytest.raises(ValueError, match="NAME:VALUE"):
        parse_cdp_headers(["no-colon"])
    assert parse_cdp_headers(["X-A: 1", "X-B:two:three"]) == {"X-A": "1", "X-B": "two:three"}
