"""The browser dies under the bridge: pending calls end with a structured error, the bridge stops.

kill -9 of the browser the bridge launched, while a page tool runs: the call is answered
`call_interrupted` (not a dropped stream), and the bridge exits with status 1 and one
sentence on stderr, over stdio (even with stdin still open) and over Streamable HTTP. The
same when a browser farm ends the DevTools session of a bridge attached without
--cdp-reconnect.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import ANY_PORT, announced_url, open_http_client
from tests.support.processes import browser_pids, wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BRIDGE = [sys.executable, "-m", "webmcp", "--headless"]


def _main_browser(profile: Path) -> int:
    """The browser's main process (its children carry --type=)."""
    for pid in browser_pids(profile):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--type=" not in cmdline:
            return pid
    raise AssertionError("no browser process found")


class _LineClient:
    """The smallest MCP stdio client: JSON-RPC lines, answers matched by id."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._arrived = anyio.Event()
        self._buffer = b""

    async def pump(self) -> None:
        assert self.process.stdout is not None
        async for chunk in self.process.stdout:
            self._buffer += chunk
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message = json.loads(line)
                if "id" in message and ("result" in message or "error" in message):
                    self._answers[message["id"]] = message
                    arrived, self._arrived = self._arrived, anyio.Event()
                    arrived.set()

    async def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> int:
        assert self.process.stdin is not None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self._next += 1
            message["id"] = self._next
        await self.process.stdin.send((json.dumps(message) + "\n").encode())
        return self._next

    async def answer(self, request_id: int) -> dict[str, Any]:
        while request_id not in self._answers:
            await self._arrived.wait()
        return self._answers[request_id]

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.answer(await self.send(method, params))


async def _slow_report_running(client: _LineClient, window: str = "tab-1") -> int:
    """Initialize, wait for `window`'s `slow_report` tool, call it, and wait until the page shows it running.

    Returns the call's request id. No listen stream on this bare client: it polls, bounded by the caller.
    """
    await client.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    await client.send("notifications/initialized", notify=True)
    while f'"{window}__slow_report"' not in json.dumps(await client.request("tools/list")):  # noqa: ASYNC110
        await anyio.sleep(0.1)
    call = await client.send("tools/call", {"name": f"{window}__slow_report", "arguments": {"seconds": 60}})
    while "Building report" not in await _windows_text(client):  # noqa: ASYNC110
        await anyio.sleep(0.05)
    return call


async def _windows_text(client: _LineClient) -> str:
    read = await client.request("resources/read", {"uri": "app://windows"})
    return str(read["result"]["contents"][0]["text"])


async def _read_windows(mcp: Any) -> str:
    return str((await mcp.client.read_resource("app://windows")).contents[0].text)


async def test_over_stdio_a_dead_browser_ends_the_pending_call_and_the_bridge(site: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    process = await anyio.open_process(
        [*BRIDGE, "--user-data-dir", str(profile), site + "/"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    client = _LineClient(process)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.pump)
            with anyio.fail_after(60):
                call = await _slow_report_running(client)
                os.kill(_main_browser(profile), signal.SIGKILL)
                answer = await client.answer(call)
                code = await process.wait()
            tg.cancel_scope.cancel()
        result = answer["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["code"] == "call_interrupted"
        assert "browser went away" in result["structuredContent"]["message"]
        assert code == 1, "a bridge whose browser died did not do its job: non-zero status"
        assert process.stderr is not None
        stderr = (await process.stderr.receive()).decode()
        last = [line for line in stderr.splitlines() if line.startswith("webmcp-bridge:")]
        assert len(last) == 1 and "the browser went away" in last[0]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    await wait_until(lambda: not browser_pids(profile))


async def test_over_http_a_dead_browser_ends_the_pending_call_with_a_structured_error(
    site: str, tmp_path: Path
) -> None:
    profile, stderr = tmp_path / "profile", tmp_path / "stderr.log"
    token = "death-token"
    with stderr.open("wb") as sink:
        process = await anyio.open_process(
            [*BRIDGE, "--user-data-dir", str(profile), "--http", ANY_PORT, f"--token={token}", site + "/"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        url = await announced_url(stderr, process)
        with anyio.fail_after(30):
            while True:
                try:
                    async with httpx2.AsyncClient() as http:
                        await http.post(url, json={})
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.1)
        results: list[Any] = []
        async with open_http_client(url, token, mode="auto", subscribe=()) as mcp:
            with anyio.fail_after(60):
                # Not subscribed (the bridge is about to go): poll, bounded.
                names = [t.name for t in (await mcp.client.list_tools()).tools]
                while "tab-1__slow_report" not in names:  # noqa: ASYNC110
                    await anyio.sleep(0.1)
                    names = [t.name for t in (await mcp.client.list_tools()).tools]

                async def slow() -> None:
                    results.append(await mcp.client.call_tool("tab-1__slow_report", {"seconds": 60}))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(slow)
                    while "Building report" not in await _read_windows(mcp):  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    os.kill(_main_browser(profile), signal.SIGKILL)
        (result,) = results
        assert result.is_error
        assert result.structured_content["code"] == "call_interrupted"
        assert "browser went away" in result.structured_content["message"]
        with anyio.fail_after(20):
            code = await process.wait()
        assert code == 1
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    await wait_until(lambda: not browser_pids(profile))


class _FarmEnd:
    """A websocket hop between the bridge and a browser that can end the session, as a farm does.

    The browser stays up; only the bridge's DevTools connection is closed (docs/deploy.md).
    """

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream
        self._open: set[ServerConnection] = set()

    async def _hop(self, downstream: ServerConnection) -> None:
        self._open.add(downstream)
        try:
            async with connect(self._upstream, max_size=None) as upstream:

                async def pipe(source: Any, sink: Any) -> None:
                    async for frame in source:
                        await sink.send(frame)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(pipe, upstream, downstream)
                    await pipe(downstream, upstream)
                    tg.cancel_scope.cancel()
        except ConnectionClosed:
            pass
        finally:
            self._open.discard(downstream)

    async def end_sessions(self) -> None:
        for downstream in list(self._open):
            await downstream.close(1001, "session ended by the farm")


async def test_attached_without_cdp_reconnect_a_dropped_session_ends_the_pending_call_and_the_bridge(
    site: str, browser: BrowserProcess
) -> None:
    farm = _FarmEnd(browser.ws_url)
    async with serve(farm._hop, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        process = await anyio.open_process(
            [*BRIDGE, "--cdp-url", f"ws://127.0.0.1:{port}/devtools/browser/farm", site + "/"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        client = _LineClient(process)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.pump)
                with anyio.fail_after(60):
                    # Attached, the bridge leaves the browser's blank tab-1 and opens the site in tab-2.
                    call = await _slow_report_running(client, "tab-2")
                    await farm.end_sessions()
                    answer = await client.answer(call)
                    code = await process.wait()
                tg.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "call_interrupted"
    assert code == 1, "docs/deploy.md: without --cdp-reconnect the bridge exits with status 1"
    assert process.stderr is not None
    stderr = (await process.stderr.receive()).decode()
    last = [line for line in stderr.splitlines() if line.startswith("webmcp-bridge:")]
    assert len(last) == 1 and "the browser went away" in last[0]
