"""The browser the command launches is reachable only through the bridge: no DevTools port."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.mcp_harness import open_stdio_client
from tests.support.processes import browser_pids, listening_sockets

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_launched_browser_opens_no_devtools_port_and_the_bridge_works_over_the_pipe(
    site: str, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    command = [sys.executable, "-m", "webmcp", "--headless", "--user-data-dir", str(profile), site + "/"]
    async with open_stdio_client(command, mode="auto") as mcp:
        # The bridge drives the browser: the start page is a window with the site's page tools.
        windows = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        tools = [t.name for t in (await mcp.client.list_tools()).tools]
        pids = browser_pids(profile)
        assert pids, "the bridge runs its own browser"
        assert any("--remote-debugging-pipe" in _cmdline(pid) for pid in pids)
        assert listening_sockets(pids) == [], "no process of the browser listens on a TCP port"
        assert not (profile / "DevToolsActivePort").exists()
    assert windows["windows"] and "app__open_tab" in tools


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
