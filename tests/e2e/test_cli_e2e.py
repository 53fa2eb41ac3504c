"""The command itself: it owns its browser, and leaves none behind however it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.mcp_harness import open_stdio_client
from tests.support.processes import browser_pids, wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BRIDGE = [sys.executable, "-m", "webmcp"]


async def test_bridge_exits_with_its_client_and_leaves_no_browser(site: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    command = [*BRIDGE, "--headless", "--user-data-dir", str(profile), site + "/"]
    async with open_stdio_client(command, mode="auto") as mcp:
        # The first list already holds the start page's tools: the bridge answers once it is ready.
        listed = await mcp.client.list_tools()
        names = {t.name for t in listed.tools}
        assert "app__open_tab" in names
        assert "tab-1__get_ticket" in names, sorted(names)
        first = await mcp.client.read_resource("app://windows")
        assert "still loading" not in first.contents[0].text
        assert browser_pids(profile), "the bridge runs its own browser"
    await wait_until(lambda: not browser_pids(profile))
    assert profile.exists(), "a profile the user named is kept"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_signal_stops_bridge_and_browser(tmp_path: Path, signum: int) -> None:
    profile = tmp_path / "profile"
    process = await anyio.open_process(
        [*BRIDGE, "--headless", "--user-data-dir", str(profile)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_until(lambda: bool(browser_pids(profile)))
        process.send_signal(signum)
        with anyio.fail_after(20):
            code = await process.wait()
        assert code in (0, 130, -signum)
        await wait_until(lambda: not browser_pids(profile))
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_missing_browser_is_one_clear_sentence(tmp_path: Path) -> None:
    result = await anyio.run_process(
        [*BRIDGE, "--browser", str(tmp_path / "nope")], check=False, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 1
    assert result.stdout == b"", "stdout belongs to MCP"
    message = result.stderr.decode().strip()
    assert "nope" in message and len(message.splitlines()) == 1
    env = {**os.environ, "WEBMCP_BRIDGE_BROWSER": str(tmp_path / "gone")}
    result = await anyio.run_process([*BRIDGE], check=False, env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert "WEBMCP_BRIDGE_BROWSER" in result.stderr.decode() and "gone" in result.stderr.decode()


async def test_browser_without_webmcp_is_refused_with_what_to_install(tmp_path: Path) -> None:
    # A Chromium that drops the WebMCP feature switch: the bridge must say so, and stop it.
    wrapper = tmp_path / "chromium-without-webmcp"
    wrapper.write_text(
        "#!" + sys.executable + "\n"
        "import os, sys\n"
        "args = [a for a in sys.argv[1:] if not a.startswith('--enable-features')]\n"
        "os.execv('/usr/bin/chromium', ['chromium', *args])\n"
    )
    wrapper.chmod(0o755)
    profile = tmp_path / "profile"
    result = await anyio.run_process(
        [*BRIDGE, "--headless", "--browser", str(wrapper), "--user-data-dir", str(profile)],
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1
    assert "WebMCP" in result.stderr.decode()
    assert not browser_pids(profile)
