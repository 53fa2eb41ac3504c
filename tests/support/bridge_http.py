"""A bridge served over Streamable HTTP for tests where several MCP clients share one desktop."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import wait_listening

__all__ = ["http_bridge"]

TOKEN = "files-test-token"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def http_bridge(browser: BrowserProcess, *args: str) -> AsyncIterator[tuple[str, str]]:
    """Start the bridge attached to `browser` with `args`, on HTTP; yields (MCP URL, token)."""
    port = _free_port()
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--http", f"127.0.0.1:{port}"]
    bridge = await anyio.open_process(
        [*command, "--token", TOKEN, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await wait_listening(url, bridge)
        yield url, TOKEN
    finally:
        bridge.terminate()
        with anyio.CancelScope(shield=True), anyio.move_on_after(15):
            await bridge.wait()
        if bridge.returncode is None:
            bridge.kill()
            with anyio.CancelScope(shield=True):
                await bridge.wait()
