"""Fuzzing the MCP surface over stdio and Streamable HTTP: structured refusals only, no effect.

A short, seeded run (`FUZZ_SECONDS` per transport); bench/fuzz.py runs the same for longer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from cdp_bridge.launcher import BrowserProcess
from tests.e2e.test_browser_death_e2e import _LineClient
from tests.support.fuzz import bad_calls, bad_uris, junk_requests
from tests.support.mcp_harness import ANY_PORT, announced_url, open_http_client
from tests.support.stage import Stage
from webmcp.models import ErrorCode

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

FUZZ_SECONDS = 12.0
CODES = set(typing.get_args(ErrorCode))


async def _state(site: str) -> Any:
    async with httpx2.AsyncClient() as http:
        return (await http.get(site + "/api/state")).json()


async def fuzz_client(client: Any, seed: int, seconds: float) -> Counter[str]:
    """Send refused calls and unknown resources for `seconds`; every answer must be a structured refusal."""
    tools = [(t.name, dict(t.input_schema)) for t in (await client.list_tools()).tools]
    outcomes: Counter[str] = Counter()
    until = anyio.current_time() + seconds
    for call in bad_calls(tools, seed):
        if anyio.current_time() > until:
            break
        if not isinstance(call.arguments, dict):
            continue  # the SDK client refuses these itself; junk_requests sends them raw
        try:
            with anyio.fail_after(45):
                result = await client.call_tool(call.name, call.arguments)
        except MCPError as exc:
            assert exc.error.code < 0, call
            outcomes["jsonrpc_error"] += 1
            continue
        body = result.structured_content or {}
        assert result.is_error, f"{call} was not refused: {body}"
        assert body.get("code") in CODES, f"{call} answered without a known code: {body}"
        outcomes[str(body["code"])] += 1
    uris = bad_uris(seed)
    for _ in range(10):
        with pytest.raises(MCPError):
            await client.read_resource(next(uris))
        outcomes["resource_not_found"] += 1
    return outcomes


async def test_fuzzed_calls_over_stdio_are_refused_with_codes_and_change_nothing(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__close_ticket" in n)
    before = await _state(stage.site)
    outcomes = await fuzz_client(stage.client, seed=11, seconds=FUZZ_SECONDS)
    assert await _state(stage.site) == before, "a refused call changed the site's state"
    assert {"validation_failed", "stale_state"} <= set(outcomes), outcomes
    doc = await stage.windows()
    assert win in doc["operableWindowIds"], "the tab is still there and operable"
    assert f"{win}__close_ticket" in await stage.tool_names()


async def test_fuzzed_calls_and_junk_over_http_are_refused_and_the_bridge_stays_up(
    site: str, browser: BrowserProcess, tmp_path: Path
) -> None:
    token, stderr = "fuzz-token", tmp_path / "stderr.log"
    with stderr.open("wb") as sink:
        bridge = await anyio.open_process(
            [
                *(sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url),
                *("--http", ANY_PORT, f"--token={token}", site + "/"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        url = await announced_url(stderr, bridge)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            with anyio.fail_after(30):
                while True:
                    try:
                        await http.post(url, json={})
                        break
                    except httpx2.TransportError:
                        await anyio.sleep(0.1)
            async with open_http_client(url, token, mode="auto") as mcp:
                with anyio.fail_after(30):
                    while True:
                        seen = mcp.notifications.count("tools_list_changed")
                        if any(t.name.endswith("__close_ticket") for t in (await mcp.client.list_tools()).tools):
                            break
                        with anyio.move_on_after(0.5):  # also re-list now and then: one event may be missed
                            await mcp.notifications.wait_for("tools_list_changed", after=seen, timeout=30)
                before = await _state(site)
                outcomes = await fuzz_client(mcp.client, seed=23, seconds=FUZZ_SECONDS)
                assert {"validation_failed", "stale_state"} <= set(outcomes), outcomes
                junk = junk_requests(5)
                headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
                for _ in range(30):
                    reply = await http.post(url, content=next(junk), headers=headers)
                    assert reply.status_code < 500, reply.text
                assert await _state(site) == before, "a refused call changed the site's state"
                assert any(t.name.endswith("__close_ticket") for t in (await mcp.client.list_tools()).tools)
        assert bridge.returncode is None, "the bridge is still running"
    finally:
        bridge.terminate()
        with anyio.move_on_after(10):
            await bridge.wait()


async def test_junk_lines_on_stdio_get_json_rpc_errors_and_the_bridge_keeps_serving(
    site: str, browser: BrowserProcess
) -> None:
    process = await anyio.open_process(
        [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, site + "/"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    client = _LineClient(process)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.pump)
            with anyio.fail_after(60):
                await client.request(
                    "initialize",
                    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
                )
                await client.send("notifications/initialized", notify=True)
                assert process.stdin is not None
                junk = junk_requests(9)
                for _ in range(30):
                    await process.stdin.send(next(junk) + b"\n")
                listed = await client.request("tools/list")
                assert any(t["name"] == "app__open_tab" for t in listed["result"]["tools"])
                answered = await client.request("tools/call", {"name": "tab-1__navigate", "arguments": []})
                assert "error" in answered or answered["result"]["isError"], json.dumps(answered)[:300]
            tg.cancel_scope.cancel()
        assert process.returncode is None, "the bridge is still running"
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()
