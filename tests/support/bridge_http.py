"""A bridge served over Streamable HTTP for tests where several MCP clients share one desktop."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import ANY_PORT, announced_url, wait_listening

__all__ = ["http_bridge"]

TOKEN = "files-test-token"


@asynccontextmanager
async def http_bridge(browser: BrowserProcess, *args: str) -> AsyncIterator[tuple[str, str]]:
    """Start the bridge attached to `browser` with `args`, on HTTP; yields (MCP URL, token)."""
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--http", ANY_PORT]
    with tempfile.TemporaryDirectory() as folder:
        stderr = Path(folder) / "stderr.log"
        with stderr.open("wb") as sink:
            bridge = await anyio.open_process(
                [*command, "--token", TOKEN, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink
            )
        try:
            url = await announced_url(stderr, bridge)
            await wait_listening(url, bridge)
            yield url, TOKEN
        finally:
            if bridge.returncode is None:
                bridge.terminate()
            with anyio.CancelScope(shield=True), anyio.move_on_after(15):
                await bridge.wait()
            if bridge.returncode is None:
                bridge.kill()
                with anyio.CancelScope(shield=True):
                    await bridge.wait()
