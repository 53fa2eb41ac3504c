"""The command itself: it owns its browser, and leaves none behind however it stops."""

from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from tests.support.mcp_harness import open_stdio_client
from tests.support.processes import browser_pids, wait_until
from tests.support.stage import REFUSED

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BRIDGE = [sys.executable, "-m", "webmcp"]


async def test_bridge_exits_with_its_client_and_leaves_no_browser(site: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    command = [*BRIDGE, "--headless", "--user-data-dir", str(profile), site + "/"]
    async with open_stdio_client(command, mode="auto") as mcp:
        # The first read is the server's (once its start page came up); a list before it may be an
        # early one, of the app's tools alone (tests/e2e/test_early_answers_e2e.py).
        first = await mcp.client.read_resource("app://windows")
        listed = await mcp.client.list_tools()
        names = {t.name for t in listed.tools}
        assert "app__open_tab" in names
        assert "tab-1__get_ticket" in names, sorted(names)
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


def _chromium_without_webmcp(tmp_path: Path) -> Path:
    """A Chromium that drops the WebMCP feature switch."""
    wrapper = tmp_path / "chromium-without-webmcp"
    wrapper.write_text(
        "#!" + sys.executable + "\n"
        "import os, sys\n"
        "args = [a for a in sys.argv[1:] if not a.startswith('--enable-features')]\n"
        "os.execv('/usr/bin/chromium', ['chromium', *args])\n"
    )
    wrapper.chmod(0o755)
    return wrapper


async def _refused(tmp_path: Path, *urls: str) -> None:
    """The bridge on a Chromium without WebMCP, started on `urls`: it says so, and stops its browser."""
    profile = tmp_path / "profile"
    command = [*BRIDGE, "--headless", "--browser", str(_chromium_without_webmcp(tmp_path))]
    result = await anyio.run_process(
        [*command, "--user-data-dir", str(profile), *urls], check=False, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 1
    assert result.stdout == b"", "stdout belongs to MCP"
    message = result.stderr.decode()
    assert "WebMCP" in message and "document.modelContext is missing" in message, message
    assert "--enable-features=WebMCP" in message
    assert not browser_pids(profile)


async def test_browser_without_webmcp_is_refused_with_what_to_install(tmp_path: Path) -> None:
    # No start page: a probe page tells, before the desktop starts.
    await _refused(tmp_path)


async def test_start_page_without_webmcp_is_refused_with_what_to_install(site: str, tmp_path: Path) -> None:
    # A start page on loopback is a secure context: it is what tells (no probe page), and says no.
    await _refused(tmp_path, site + "/")


async def test_a_start_page_held_by_its_alert_leaves_the_refusal_to_the_probe(site: str, tmp_path: Path) -> None:
    # The page answers nothing while its alert is open: the probe page says no in its place.
    await _refused(tmp_path, site + "/danger.html?onload=alert")


@contextmanager
def _static_site(root: Path) -> Iterator[str]:
    """`root` served over HTTP on 127.0.0.1 (a secure context, like the sample site)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            thread.join(timeout=10)


async def test_a_page_faking_model_context_does_not_pass_for_webmcp(tmp_path: Path) -> None:
    # A polyfill in the page's own world must not make a browser without WebMCP look like one.
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.html").write_text(
        "<!doctype html><title>Polyfill</title><script>document.modelContext = {registerTool() {}};"
        "window.ModelContext = function () {};</script><h1>A page with its own modelContext</h1>"
    )
    with _static_site(pages) as url:
        await _refused(tmp_path, url + "/index.html")


@pytest.mark.parametrize("webmcp", [True, False])
async def test_a_start_page_that_cannot_tell_leaves_it_to_a_probe_no_agent_sees(tmp_path: Path, webmcp: bool) -> None:
    # A loopback start page whose server is down shows an error page, not a secure context: a
    # hidden probe page tells instead, after the desktop follows the browser, and is never a tab.
    down = REFUSED
    if not webmcp:
        await _refused(tmp_path, down)
        return
    command = [*BRIDGE, "--headless", "--user-data-dir", str(tmp_path / "profile"), down]
    async with open_stdio_client(command) as mcp:
        first = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        assert [w["id"] for w in first["windows"]] == ["tab-1"], first
        opened = await mcp.client.call_tool("app__open_tab", {"url": "about:blank"})
        assert opened.structured_content["openedWindowIds"] == ["tab-2"], opened
