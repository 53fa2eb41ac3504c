"""Transport tests: a toy low-level server over real stdio and Streamable HTTP, both protocol generations.

Run as a script, this module is the toy stdio server (`python tests/test_transport.py`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.server import Server, ServerRequestContext

from tests.support.mcp_harness import WINDOWS_URI, McpTestClient, open_http_client, open_stdio_client  # noqa: E402
from webmcp.server.transport import Broadcaster, serve_http, serve_stdio  # noqa: E402

THIS_FILE = Path(__file__).resolve()
TOKEN = "s3cret-token"
EXPERIMENTAL = {"webmcp/windows": {"version": 1}}
NOISE_URI = "app://printed-by-the-server"


@dataclass
class Toy:
    """A tiny window list published as `app://windows`, plus one `focus_<n>` tool per window."""

    broadcaster: Broadcaster = field(default_factory=Broadcaster)
    windows: list[str] = field(default_factory=lambda: ["home"])

    async def add_window(self, title: str) -> None:
        self.windows.append(title)
        self.broadcaster.changed()
        await self.broadcaster.resource_updated(WINDOWS_URI)
        await self.broadcaster.tools_list_changed()

    def server(self) -> Server[Any]:
        async def list_resources(ctx: ServerRequestContext, params: Any) -> types.ListResourcesResult:
            return types.ListResourcesResult(resources=[types.Resource(uri=WINDOWS_URI, name="windows")])

        async def read_resource(
            ctx: ServerRequestContext, params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            text = json.dumps({"windows": self.windows})
            self.broadcaster.read_by(ctx, WINDOWS_URI)
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=WINDOWS_URI, mime_type="application/json", text=text)]
            )

        async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
            schema = {"type": "object", "properties": {"title": {"type": "string"}}}
            tools = [types.Tool(name="add_window", input_schema=schema)]
            tools += [types.Tool(name=f"focus_{i}", input_schema={"type": "object"}) for i in range(len(self.windows))]
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
            title = str((params.arguments or {})["title"])
            if title.startswith("noisy"):
                # Stray output of the process (or of a child it started) must not reach the wire.
                forged = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": NOISE_URI}}
                print(json.dumps(forged), flush=True)
                os.write(1, json.dumps(forged).encode() + b"\n")
            await self.add_window(title)
            return types.CallToolResult(content=[types.TextContent(text="ok")])

        return Server(
            "toy",
            version="0.0.1",
            on_list_resources=list_resources,
            on_read_resource=read_resource,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            **self.broadcaster.handlers(),
        )


async def _stdio_main() -> None:
    toy = Toy()
    await serve_stdio(toy.server(), toy.broadcaster, experimental=EXPERIMENTAL)
    await anyio.Path(os.environ["TOY_EXIT_MARKER"]).write_text("returned")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _windows(handle: McpTestClient) -> list[str]:
    result = await handle.client.read_resource(WINDOWS_URI)
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return json.loads(content.text)["windows"]


def _assert_capabilities(handle: McpTestClient) -> None:
    caps = handle.client.server_capabilities
    assert caps.resources is not None and caps.tools is not None
    assert caps.resources.subscribe is True
    assert caps.resources.list_changed is True
    assert caps.tools.list_changed is True
    if not handle.modern:
        assert caps.experimental == EXPERIMENTAL


async def _assert_change_seen(handle: McpTestClient, before: dict[str, int], title: str) -> None:
    rec = handle.notifications
    await rec.wait_for("resource_updated", after=before["resource_updated"])
    await rec.wait_for("tools_list_changed", after=before["tools_list_changed"])
    assert WINDOWS_URI in rec.updated_uris
    windows = await _windows(handle)
    assert windows[-1] == title
    tools = await handle.client.list_tools()
    assert f"focus_{len(windows) - 1}" in {t.name for t in tools.tools}


def _counts(handle: McpTestClient) -> dict[str, int]:
    rec = handle.notifications
    return {
        "resource_updated": rec.count("resource_updated"),
        "tools_list_changed": rec.count("tools_list_changed"),
    }


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_notifies_and_exits_when_client_closes(mode: str, tmp_path: Path) -> None:
    marker = tmp_path / "exited"
    command = [sys.executable, "-m", "tests.server.test_transport"]
    async with open_stdio_client(command, {"TOY_EXIT_MARKER": str(marker)}, mode) as handle:
        assert handle.modern == (mode == "auto")
        _assert_capabilities(handle)
        assert await _windows(handle) == ["home"]
        before = _counts(handle)
        await handle.client.call_tool("add_window", {"title": "docs"})
        await _assert_change_seen(handle, before, "docs")
    # The SDK client kills the child after a 2 s grace; the marker proves serve_stdio returned first.
    assert marker.read_text() == "returned"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_carries_megabyte_messages_and_keeps_stray_output_off_the_wire(mode: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tests.server.test_transport"]
    title = "noisy " + "\u00e9" * (2 << 20)
    async with open_stdio_client(command, {"TOY_EXIT_MARKER": str(tmp_path / "exited")}, mode) as handle:
        await handle.client.call_tool("add_window", {"title": title})
        assert await _windows(handle) == ["home", title]
        assert await _windows(handle) == ["home", title]
        # The server printed a notification to stdout while serving: it went to stderr, not to the client.
        assert NOISE_URI not in handle.notifications.updated_uris


@dataclass
class _Http:
    toy: Toy
    url: str


@pytest.fixture
async def http_server() -> AsyncIterator[_Http]:
    toy = Toy()
    urls: list[str] = []  # the port is the system's choice, told by `announce`
    ready = anyio.Event()
    finished = anyio.Event()

    async def run() -> None:
        try:
            await serve_http(
                toy.server(),
                toy.broadcaster,
                port=0,
                token=TOKEN,
                experimental=EXPERIMENTAL,
                ready=ready,
                announce=urls.append,
            )
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            await ready.wait()
        (url,) = urls
        assert not url.startswith("http://127.0.0.1:0/"), url
        yield _Http(toy, url)
        tg.cancel_scope.cancel()
    assert finished.is_set()


@pytest.mark.anyio
async def test_http_both_generations_at_once(http_server: _Http) -> None:
    async with (
        open_http_client(http_server.url, TOKEN, "legacy") as legacy,
        open_http_client(http_server.url, TOKEN, "auto") as modern,
    ):
        assert not legacy.modern and modern.modern
        for handle in (legacy, modern):
            _assert_capabilities(handle)
            assert await _windows(handle) == ["home"]
        assert http_server.toy.broadcaster.session_count == 1

        before = {id(h): _counts(h) for h in (legacy, modern)}
        await http_server.toy.add_window("mail")  # a change from the server side
        for handle in (legacy, modern):
            await _assert_change_seen(handle, before[id(handle)], "mail")

        before = {id(h): _counts(h) for h in (legacy, modern)}
        await modern.client.call_tool("add_window", {"title": "chat"})  # a change one client caused
        for handle in (legacy, modern):
            await _assert_change_seen(handle, before[id(handle)], "chat")


@pytest.mark.anyio
async def test_a_session_is_not_told_of_a_change_it_has_read(http_server: _Http) -> None:
    # A client re-reads app://windows on every resources/updated: told of a change it read
    # already, it would read the same document again, and pay for it.
    toy = http_server.toy
    async with (
        open_http_client(http_server.url, TOKEN, "legacy") as reader,
        open_http_client(http_server.url, TOKEN, "legacy") as other,
    ):
        toy.windows.append("mail")
        toy.broadcaster.changed()  # the change, not announced yet
        assert await _windows(reader) == ["home", "mail"]
        before = {id(h): _counts(h)["resource_updated"] for h in (reader, other)}
        await toy.broadcaster.resource_updated(WINDOWS_URI)
        await other.notifications.wait_for("resource_updated", after=before[id(other)])
        await anyio.sleep(0.3)  # the reader's notification, were one sent, would have come by now
        assert reader.notifications.count("resource_updated") == before[id(reader)]

        await toy.add_window("chat")  # a change after its read: told
        await reader.notifications.wait_for("resource_updated", after=before[id(reader)])
        assert await _windows(reader) == ["home", "mail", "chat"]


@pytest.mark.anyio
async def test_http_closed_session_is_forgotten(http_server: _Http) -> None:
    async with open_http_client(http_server.url, TOKEN, "legacy"):
        assert http_server.toy.broadcaster.session_count == 1
    with anyio.fail_after(5):
        # The SDK tears the session down after answering the DELETE and offers no event for it.
        while http_server.toy.broadcaster.session_count:  # noqa: ASYNC110
            await anyio.sleep(0.02)
    await http_server.toy.add_window("after-close")  # must not block or raise


@pytest.mark.anyio
@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {TOKEN}"])
async def test_http_rejects_missing_or_wrong_token(http_server: _Http, authorization: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(http_server.url, headers=headers, json=body)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    answer = response.json()
    assert answer["error"] == "unauthorized"
    message = answer["message"]
    # What was wrong, then how to pass the token, and the way for a client without headers.
    expected = {None: "needs the bridge's bearer token", "Bearer wrong": "not this bridge's"}
    assert expected.get(authorization, "must use the Bearer scheme") in message
    assert "Authorization: Bearer <token>" in message and "$WEBMCP_BRIDGE_TOKEN" in message
    assert "--cli webmcp-bridge" in message, "the stdio way for the MCP Inspector CLI"
    assert TOKEN not in message and "wrong" not in message, "the answer never echoes a token"


@pytest.mark.anyio
async def test_http_cancellation_with_clients_connected_stops_the_server() -> None:
    toy, urls = Toy(), list[str]()
    ready, stopped = anyio.Event(), anyio.Event()
    server_scope = anyio.CancelScope()

    async def run() -> None:
        with server_scope:
            await serve_http(toy.server(), toy.broadcaster, port=0, token=TOKEN, ready=ready, announce=urls.append)
        stopped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            await ready.wait()
        (url,) = urls
        async with open_http_client(url, TOKEN, "legacy"), open_http_client(url, TOKEN, "auto"):
            server_scope.cancel()
            # Open SSE streams get uvicorn's graceful-shutdown window, then are cancelled.
            with anyio.fail_after(8):
                await stopped.wait()


class _StuckSession:
    async def send_tool_list_changed(self) -> None:
        await anyio.sleep_forever()


class _BrokenSession:
    async def send_tool_list_changed(self) -> None:
        raise ConnectionResetError("gone")


@pytest.mark.anyio
async def test_stuck_or_broken_session_never_blocks_the_caller() -> None:
    from webmcp.server.transport import _Peer  # the registry is private; fake two bad connections

    broadcaster = Broadcaster(send_timeout=0.2)
    stuck, broken = _Peer(_StuckSession()), _Peer(_BrokenSession())  # type: ignore[arg-type]
    broadcaster._peers.update({object(): stuck, object(): broken})  # type: ignore[dict-item]
    for _ in range(3):
        with anyio.fail_after(1):
            await broadcaster.tools_list_changed()
    assert broadcaster.session_count == 0  # broken at once, stuck after three timeouts in a row


if __name__ == "__main__":
    anyio.run(_stdio_main)
