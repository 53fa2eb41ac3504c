"""Window actions on pages with no WebMCP tools (issue 20): each task done through fill, press and submit alone.

The sample site's Harbor Outfitters pages (sample_site/README.md) declare nothing; the
agent reads the window's blocks and acts by the labels it reads there. Every task is run
over stdio and over Streamable HTTP, and checked against the site's own state
(`GET /api/plain/state`), never against the bridge's word.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import open_http_client, open_stdio_client
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PASSWORD = "Tide-Lantern-4417"
CARD = "4242 4242 4242 4242"
_TOKEN = "window-actions-token"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def _bridge(
    site: str, browser: BrowserProcess, transport: str, path: str, *extra: str
) -> AsyncIterator[Stage]:
    """The bridge attached to `browser` and showing `site + path`, with a client over `transport`."""
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, *extra]
    if transport == "stdio":
        async with open_stdio_client([*command, site + path], mode="auto") as mcp:
            yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]  # no Playwright user here
        return
    port = _free_port()
    process = await anyio.open_process(
        [*command, "--http", f"127.0.0.1:{port}", "--token", _TOKEN, site + path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with anyio.fail_after(20):
            while True:
                try:
                    async with httpx2.AsyncClient() as http:
                        await http.post(url, json={})
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.1)
        async with open_http_client(url, _TOKEN, "auto") as mcp:
            yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]
    finally:
        process.terminate()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await process.wait()


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _state(site: str) -> dict[str, Any]:
    with urllib.request.urlopen(site + "/api/plain/state", timeout=5) as reply:
        state: dict[str, Any] = json.load(reply)
        return state


async def _tab(stage: Stage, path: str) -> dict[str, Any]:
    return await stage.tab_for(path)


async def _ok(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert not result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


async def _error(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


def _texts(window: dict[str, Any]) -> list[str]:
    return [b["text"] for b in window["blocks"] if b["type"] == "text"]


def _everything(*parts: Any) -> str:
    return json.dumps(parts, ensure_ascii=False)


async def test_sign_in_through_fill_and_press(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/plain/signin.html") as stage:
        tab = await _tab(stage, "/plain/signin.html")
        win = tab["id"]
        names = await stage.tool_names()
        assert {f"{win}__fill", f"{win}__press", f"{win}__submit"} <= set(names)
        filled = await _ok(
            stage,
            f"{win}__fill",
            {
                "fields": [
                    {"label": "Email", "value": "ines@example.com"},
                    {"label": "Password", "value": PASSWORD},
                    {"label": "Remember me", "value": True},
                ]
            },
        )
        # The password went in, and nothing the agent can read shows it.
        after = await stage.windows()
        assert PASSWORD not in _everything(filled, after)
        fields = {i["label"]: i for b in (await _tab(stage, "/plain/signin.html"))["blocks"] if b["type"] == "fields" for i in b["items"]}
        assert fields["Email"]["value"] == "ines@example.com" and fields["Remember me"]["value"] is True
        assert fields["Password"]["sensitive"] and fields["Password"]["value"] != ""
        # "Sign in" is both the header's link and the form's button: the agent is asked which.
        ambiguous = await _error(stage, f"{win}__press", {"label": "Sign in"})
        assert ambiguous["code"] == "validation_failed"
        candidates = ambiguous["fields"][0]["candidates"]
        assert len(candidates) == 2 and all(c["blockId"] for c in candidates)
        shown = await _tab(stage, "/plain/signin.html")
        # The header's links are a list block; the form's button a line of text.
        kinds = {b["id"]: b["type"] for b in shown["blocks"]}
        button_block = next(c["blockId"] for c in candidates if kinds[c["blockId"]] == "text")
        pressed = await _ok(stage, f"{win}__press", {"label": "Sign in", "blockId": button_block})
        assert "/plain/account.html" in pressed["message"]
        assert PASSWORD not in _everything(pressed)
        account = await _tab(stage, "/plain/account.html")
        assert "Signed in as ines@example.com" in _everything(account["blocks"]), account
        assert _state(site)["signed_in"] == {"email": "ines@example.com", "remember": True}
