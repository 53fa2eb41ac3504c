"""The bridge over Streamable HTTP: several clients of both protocol generations at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from playwright.async_api import async_playwright

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import ANY_PORT, announced_url, open_http_client
from webmcp.desktop.navigation import HELD_LIMIT
from webmcp.server.app import PROGRESS_EVERY

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _windows(client) -> dict:
    result = await client.read_resource("app://windows")
    return json.loads(result.contents[0].text)


async def test_every_http_client_hears_every_change(site: str, browser: BrowserProcess, tmp_path: Path) -> None:
    token = "test-token-123"
    stderr = tmp_path / "stderr.log"
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--http", ANY_PORT, "--token", token]
    with stderr.open("wb") as sink:
        bridge = await anyio.open_process(
            [*command, site + "/"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink
        )
    try:
        url = await announced_url(stderr, bridge)
        assert url.startswith("http://127.0.0.1:") and not url.startswith("http://127.0.0.1:0/"), url
        assert token not in stderr.read_text(), "a token the person gave is not printed"
        with anyio.fail_after(20):
            while True:
                try:
                    async with httpx2.AsyncClient() as http:
                        denied = await http.post(url, json={})
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.1)
        assert denied.status_code == 401, "no token, no MCP"

        async with (
            open_http_client(url, token, "legacy") as old,
            open_http_client(url, token, "auto") as new,
            async_playwright() as pw,
        ):
            assert not old.modern and new.modern
            with anyio.fail_after(20):
                while True:
                    names = [t.name for t in (await new.client.list_tools()).tools]
                    if any(n.endswith("__claim_welcome_bonus") for n in names):
                        break
                    await new.notifications.wait_for("tools_list_changed", timeout=20)
            win = next(n for n in names if n.endswith("__claim_welcome_bonus")).split("__")[0]

            user = await pw.chromium.connect_over_cdp(browser.ws_url)
            page = next(p for c in user.contexts for p in c.pages if p.url.startswith(site))
            await page.fill("#subject", "Typed by the user")
            # Each client re-reads after each of its notifications until the typing shows: the
            # first notification after the fill may be for another change (the other tab).
            for mcp in (old, new):
                with anyio.fail_after(20):
                    while True:
                        seen = mcp.notifications.count("resource_updated")
                        if "Typed by the user" in json.dumps(await _windows(mcp.client)):
                            break
                        await mcp.notifications.wait_for("resource_updated", after=seen, timeout=20)

            marks = (
                old.notifications.count("tools_list_changed"),
                new.notifications.count("tools_list_changed"),
            )
            claimed = await old.client.call_tool(f"{win}__claim_welcome_bonus", {})
            assert not claimed.is_error
            await old.notifications.wait_for("tools_list_changed", after=marks[0])
            await new.notifications.wait_for("tools_list_changed", after=marks[1])
            await user.close()
    finally:
        bridge.terminate()
        with anyio.move_on_after(15):
            await bridge.wait()
        if bridge.returncode is None:
            bridge.kill()
            await bridge.wait()
    assert bridge.returncode in (0, -15)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_long_call_over_http_tells_a_client_that_asked_for_progress_that_it_goes_on(
    site: str, browser: BrowserProcess, mode: str
) -> None:
    # A navigation to a page that shows nothing (its stylesheet's host never answers) answers at
    # HELD_LIMIT; meanwhile, every PROGRESS_EVERY seconds, a progress notification on the call's own
    # stream (the request's SSE stream over Streamable HTTP), for both protocol generations.
    told: list[tuple[float, str | None]] = []

    async def progress(value: float, _total: float | None, message: str | None) -> None:
        told.append((value, message))

    async with (
        http_bridge(browser, site + "/slow/swap.html") as (url, token),
        open_http_client(url, token, mode) as mcp,
    ):
        names: list[str] = []
        with anyio.fail_after(20):
            for _ in range(200):  # the start page's tab: its tools come once it is followed
                names = [t.name for t in (await mcp.client.list_tools()).tools if t.name.endswith("__navigate")]
                if names:
                    break
                await anyio.sleep(0.1)
        began = anyio.current_time()
        with anyio.fail_after(HELD_LIMIT + 8):
            answer = await mcp.client.call_tool(
                names[0], {"url": site + "/slow/held?by=style"}, progress_callback=progress
            )
        took = anyio.current_time() - began
    assert not answer.is_error, answer.structured_content
    assert int(HELD_LIMIT // PROGRESS_EVERY) <= len(told) <= took // PROGRESS_EVERY, (told, took)
    assert [value for value, _ in told] == list(range(1, len(told) + 1))
    assert all("__navigate is still under way after" in str(message) for _, message in told), told
