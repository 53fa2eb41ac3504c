"""A stdio client is answered before the browser is up; the start tab's tools join with `tools/list_changed`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.support.mcp_harness import open_stdio_client
from tests.support.processes import browser_pids, wait_until
from webmcp.server.early import recorded_answers

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BRIDGE = [sys.executable, "-m", "webmcp"]
HELLO = {"capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def _held_chromium(tmp_path: Path) -> tuple[Path, Path]:
    """A Chromium that starts only once its gate file exists (at most 30 s): the wrapper and the gate."""
    gate = tmp_path / "gate"
    wrapper = tmp_path / "held-chromium"
    wrapper.write_text(
        "#!" + sys.executable + "\n"
        "import os, sys, time\n"
        "deadline = time.monotonic() + 30\n"
        f"while not os.path.exists({str(gate)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "os.execv('/usr/bin/chromium', ['chromium', *sys.argv[1:]])\n"
    )
    wrapper.chmod(0o755)
    return wrapper, gate


class RawClient:
    """JSON-RPC lines over the bridge's stdin and stdout, nothing in between."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, request_id: int | None, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        assert self._process.stdin is not None
        await self._process.stdin.send((json.dumps(message) + "\n").encode())

    async def receive(self, timeout: float = 20) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            message: dict[str, Any] = json.loads(await self._lines.receive_until(b"\n", 1 << 24))
        return message


async def test_initialize_and_the_first_list_come_before_the_browser_and_its_tabs_join_after(
    site: str, tmp_path: Path
) -> None:
    wrapper, gate = _held_chromium(tmp_path)
    profile = tmp_path / "profile"
    command = [*BRIDGE, "--headless", "--browser", str(wrapper), "--user-data-dir", str(profile), site + "/"]
    recorded = recorded_answers()["by_version"]["2025-11-25"]
    process = await anyio.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        client = RawClient(process)
        await client.send(0, "initialize", {"protocolVersion": "2025-11-25", **HELLO})
        assert await client.receive() == {"jsonrpc": "2.0", "id": 0, "result": recorded["initialize"]}
        await client.send(None, "notifications/initialized")
        await client.send(1, "tools/list")
        listed = await client.receive()
        assert listed == {"jsonrpc": "2.0", "id": 1, "result": recorded["tools/list"]}
        assert [t["name"] for t in listed["result"]["tools"]] == ["app__open_tab"]
        await client.send(2, "ping")
        assert await client.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        await client.send(6, "resources/subscribe", {"uri": "app://windows"})
        assert await client.receive() == {"jsonrpc": "2.0", "id": 6, "result": {}}
        # All answered while the browser was held back from starting (its wrapper waits for the gate).
        assert not gate.exists()

        # A request the bridge cannot answer yet waits for it; the start tab joins with a notification.
        await client.send(3, "resources/read", {"uri": "app://windows"})
        gate.touch()
        changed = await client.receive(60)
        assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        read = await client.receive()
        assert read["id"] == 3, read
        windows = json.loads(read["result"]["contents"][0]["text"])
        assert windows["operableWindowIds"] == ["tab-1"]
        await client.send(4, "tools/list")
        relisted = await client.receive()
        names = [t["name"] for t in relisted["result"]["tools"]]
        assert names[0] == "app__open_tab" and "tab-1__navigate" in names and "tab-1__list_tickets" in names, names
        # Nothing answered twice: the next message is the answer to the next request.
        await client.send(5, "ping")
        assert await client.receive() == {"jsonrpc": "2.0", "id": 5, "result": {}}
        # The subscription answered early is the session's: a change of the page is told.
        await client.send(7, "tools/call", {"name": "tab-1__navigate", "arguments": {"url": site + "/plain/"}})
        told: list[dict[str, Any]] = []
        while (message := await client.receive(30)).get("id") != 7:
            told.append(message)
        assert not message["result"].get("isError"), message
        while not any(m.get("method") == "notifications/resources/updated" for m in told):
            told.append(await client.receive(30))
        assert {"uri": "app://windows"} in [m.get("params") for m in told]
    finally:
        gate.touch()  # however the test ended: a bridge whose browser never came would wait for it
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(20):
            await process.wait()
    await wait_until(lambda: not browser_pids(profile))


async def test_a_handshake_client_of_the_sdk_finds_the_start_page_s_tools_after_the_early_list(
    site: str, tmp_path: Path
) -> None:
    wrapper, gate = _held_chromium(tmp_path)
    command = [*BRIDGE, "--headless", "--browser", str(wrapper), site + "/"]
    async with open_stdio_client(command, mode="legacy", subscribe=()) as mcp:
        assert [t.name for t in (await mcp.client.list_tools()).tools] == ["app__open_tab"]
        gate.touch()
        await mcp.notifications.wait_for("tools_list_changed", after=0, timeout=60)
        names = {t.name for t in (await mcp.client.list_tools()).tools}
        assert {"tab-1__list_tickets", "tab-1__navigate"} <= names, sorted(names)
        read = await mcp.client.read_resource("app://windows")
        assert json.loads(read.contents[0].text)["operableWindowIds"] == ["tab-1"]


async def test_a_2026_client_that_listens_first_is_answered_before_the_browser_and_told_when_its_tabs_join(
    site: str, tmp_path: Path
) -> None:
    wrapper, gate = _held_chromium(tmp_path)
    command = [*BRIDGE, "--headless", "--browser", str(wrapper), site + "/"]
    # The harness opens a stream for a 2026-07-28 client (tools and app://windows) before it lists.
    async with open_stdio_client(command, mode="auto") as mcp:
        assert mcp.modern
        # A second stream asks for the tools too: each one that asked is told.
        async with mcp.client.listen(tools_list_changed=True) as stream:
            assert [t.name for t in (await mcp.client.list_tools()).tools] == ["app__open_tab"]
            assert not gate.exists(), "discover, the streams and the list were answered while the browser was held"
            gate.touch()
            with anyio.fail_after(60):
                event = await anext(aiter(stream))
            assert type(event).__name__ == "ToolsListChanged"
            await mcp.notifications.wait_for("tools_list_changed", after=0, timeout=10)
            names = {t.name for t in (await mcp.client.list_tools()).tools}
            assert {"tab-1__list_tickets", "tab-1__navigate"} <= names, sorted(names)
            read = await mcp.client.read_resource("app://windows")
            assert json.loads(read.contents[0].text)["operableWindowIds"] == ["tab-1"]
            # The harness's stream is the server's now: a change of the page is told on it.
            seen = mcp.notifications.count("resource_updated")
            done = await mcp.client.call_tool("tab-1__navigate", {"url": site + "/plain/"})
            assert not done.is_error, done
            await mcp.notifications.wait_for("resource_updated", after=seen, timeout=30)


async def test_a_2026_client_that_lists_before_it_listens_gets_the_start_page_s_tools_in_that_list(
    site: str, tmp_path: Path
) -> None:
    wrapper, gate = _held_chromium(tmp_path)
    command = [*BRIDGE, "--headless", "--browser", str(wrapper), site + "/"]
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode="auto", read_timeout_seconds=60) as client:  # no stream
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        assert not gate.exists(), "connected (server/discover answered) while the browser was held"
        listed: list[str] = []

        async def first_list() -> None:
            listed.extend(t.name for t in (await client.list_tools()).tools)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first_list)
            await anyio.sleep(0.5)
            assert not listed, "nothing could tell this client that an early list grew: it waits for the server"
            gate.touch()
        assert {"app__open_tab", "tab-1__list_tickets"} <= set(listed), listed
