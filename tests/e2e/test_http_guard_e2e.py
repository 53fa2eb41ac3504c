"""End to end: the HTTP transport's guards through the real command line (issue 10 item 7)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import ANY_PORT, announced_url, open_http_client, wait_listening

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TOKEN = "guard-test-token"


def _bridge_command(browser: BrowserProcess, site: str, bind: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--http", bind, "--token", TOKEN, *extra, site]


@asynccontextmanager
async def _running(command: list[str], stderr: Path) -> AsyncIterator[anyio.abc.Process]:
    with stderr.open("wb") as sink:
        bridge = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink)
        try:
            yield bridge
        finally:
            if bridge.returncode is None:
                bridge.terminate()
                with anyio.move_on_after(15):
                    await bridge.wait()
            if bridge.returncode is None:
                bridge.kill()
                await bridge.wait()


async def test_a_non_loopback_bind_without_the_switch_is_refused(
    site: str, browser: BrowserProcess, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.log"
    async with _running(_bridge_command(browser, site + "/", "0.0.0.0:0"), stderr) as bridge:
        with anyio.fail_after(60):
            await bridge.wait()
    assert bridge.returncode == 2
    assert "--allow-remote" in stderr.read_text()


async def test_the_cli_serves_on_ipv6_loopback(site: str, browser: BrowserProcess, tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    async with _running(_bridge_command(browser, site + "/", "[::1]:0"), stderr) as bridge:
        url = await announced_url(stderr, bridge)
        assert url.startswith("http://[::1]:"), url
        assert await wait_listening(url, bridge) == 401


async def test_debug_logs_carry_no_response_body(site: str, browser: BrowserProcess, tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    command = _bridge_command(browser, site + "/", ANY_PORT, "--log-level", "DEBUG")
    async with _running(command, stderr) as bridge:
        url = await announced_url(stderr, bridge)
        assert await wait_listening(url, bridge) == 401
        async with open_http_client(url, TOKEN, "legacy") as mcp:
            with anyio.fail_after(30):
                while True:
                    body = (await mcp.client.read_resource("app://windows")).contents[0].text
                    if "Invoice shows the wrong VAT rate" in body:  # a ticket subject on the queue page
                        break
                    await mcp.notifications.wait_for("resource_updated", timeout=30)
    log = stderr.read_text()
    assert "DEBUG" in log  # the run did log at DEBUG
    assert "Invoice shows the wrong VAT rate" not in log


async def test_foreign_host_and_origin_headers_are_refused_even_with_the_token(
    site: str, browser: BrowserProcess, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.log"
    async with _running(_bridge_command(browser, site + "/", ANY_PORT), stderr) as bridge:
        url = await announced_url(stderr, bridge)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert await wait_listening(url, bridge) == 401
        auth = {"authorization": f"Bearer {TOKEN}", "accept": "application/json, text/event-stream"}
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        async with httpx2.AsyncClient() as http:
            with anyio.fail_after(30):
                rebound = await http.post(url, json=hello, headers={**auth, "host": f"evil.example:{port}"})
                cross = await http.post(url, json=hello, headers={**auth, "origin": "http://evil.example"})
                own = await http.post(url, json=hello, headers={**auth, "origin": f"http://127.0.0.1:{port}"})
    assert rebound.status_code in (400, 403, 421)
    assert cross.status_code in (400, 403)
    assert own.status_code == 200, own.text
