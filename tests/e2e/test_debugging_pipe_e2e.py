"""The browser the command launches is reachable only through the bridge: no DevTools port."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.mcp_harness import open_stdio_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _browser_pids(profile: Path) -> list[int]:
    """Live processes whose command line names `profile`, the bridge itself excepted."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if str(profile).encode() in cmdline and b"cdp_bridge" not in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def _listening(pids: list[int]) -> list[str]:
    """Local addresses of listening TCP sockets that any of `pids` holds."""
    listeners: dict[str, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                listeners[fields[9]] = fields[1]
    found = []
    for pid in pids:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        found += [listeners[link[8:-1]] for link in links if link[8:-1] in listeners and link.startswith("socket:")]
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_launched_browser_opens_no_devtools_port_and_the_bridge_works_over_the_pipe(
    site: str, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    command = [sys.executable, "-m", "cdp_bridge", "--headless", "--user-data-dir", str(profile), site + "/"]
    async with open_stdio_client(command, mode="auto") as mcp:
        # The bridge drives the browser: the start page is a window with the site's page tools.
        windows = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        tools = [t.name for t in (await mcp.client.list_tools()).tools]
        pids = _browser_pids(profile)
        assert pids, "the bridge runs its own browser"
        assert any("--remote-debugging-pipe" in _cmdline(pid) for pid in pids)
        assert _listening(pids) == [], "no process of the browser listens on a TCP port"
        assert not (profile / "DevToolsActivePort").exists()
    assert windows["windows"] and "app__open_tab" in tools


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
