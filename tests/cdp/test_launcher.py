"""Tests for cdp_bridge.launcher against the real Chromium on this machine."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import connect

from cdp_bridge import launcher, spawn
from cdp_bridge.errors import BrowserLaunchError, BrowserNotFound, ConnectionClosed, WebMCPUnavailable
from cdp_bridge.launcher import BrowserProcess, LaunchOptions, check_webmcp, find_browser, launch_browser
from cdp_bridge.timeouts import Timeouts
from tests.support.processes import listening_sockets, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
HAVE_BROWSER = shutil.which("chromium") or os.path.exists("/usr/bin/chromium")
needs_browser = pytest.mark.skipif(not HAVE_BROWSER, reason="no Chromium installed")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _live_in_group(pgid: int) -> list[int]:
    """Non-zombie pids whose process group is `pgid` (zombies wait for PID 1 to reap them)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            pids.append(int(entry.name))
    return pids


def _exists(path: str | Path) -> bool:
    return os.path.exists(path)


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]) != b"Z"
    except OSError:
        return False


def _poll_until(predicate, limit: float = 10.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


async def _cdp(ws_url: str, method: str) -> dict:
    async with connect(ws_url, max_size=None, open_timeout=5) as ws:
        await ws.send(json.dumps({"id": 1, "method": method}))
        with anyio.fail_after(5):
            while True:
                reply = json.loads(await ws.recv())
                if reply.get("id") == 1:
                    return reply["result"]


@pytest.fixture
async def browser() -> AsyncIterator[BrowserProcess]:
    async with await launch_browser(LaunchOptions(headless=True, debugging="port")) as proc:
        yield proc
    assert not _live_in_group(proc.pid)


# --- find_browser -------------------------------------------------------------------------------


def test_find_browser_prefers_explicit_then_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    other = tmp_path / "env-chrome"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv(launcher.ENV_BROWSER, str(other))
    assert find_browser(str(fake)) == str(fake)
    assert find_browser() == str(other)


def test_find_browser_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(launcher.ENV_BROWSER, raising=False)
    monkeypatch.setattr(spawn, "_DEFAULT_PATHS", ())
    for name in ("google-chrome", "chromium-browser"):
        exe = tmp_path / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_browser() == str(tmp_path / "chromium-browser")


def test_find_browser_default_path_before_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "chromium"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.delenv(launcher.ENV_BROWSER, raising=False)
    monkeypatch.setattr(spawn, "_DEFAULT_PATHS", (str(exe),))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert find_browser() == str(exe)


def test_find_browser_bad_env_is_one_clear_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(launcher.ENV_BROWSER, "/nonexistent/chromium")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(BrowserNotFound, match="WEBMCP_BRIDGE_BROWSER.*does not exist or is not executable"):
        find_browser()


def test_find_browser_bad_explicit(tmp_path: Path) -> None:
    not_exec = tmp_path / "chrome"
    not_exec.write_text("")
    with pytest.raises(BrowserNotFound, match="--browser"):
        find_browser(str(not_exec))


def test_find_browser_nothing_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(launcher.ENV_BROWSER, raising=False)
    monkeypatch.setattr(spawn, "_DEFAULT_PATHS", ("/nonexistent/chromium",))
    monkeypatch.setenv("PATH", "")
    with pytest.raises(BrowserNotFound) as info:
        find_browser()
    message = str(info.value)
    assert "apt-get install -y chromium" in message and "--browser" in message
    assert "\n" not in message


def test_build_args_merges_features_and_extension(tmp_path: Path) -> None:
    options = LaunchOptions(
        headless=True,
        extra_args=["--enable-features=Foo", "--lang=en"],
        load_extension=str(tmp_path),
        start_urls=["http://127.0.0.1:1/"],
    )
    args = spawn.build_args(options, "/bin/chromium", "/p")
    assert f"--enable-features=WebMCP,Foo,{spawn.CONNECT_TIMEOUT_FEATURE}" in args
    assert not [a for a in args if a == "--enable-features=Foo"]
    assert f"--load-extension={tmp_path}" in args and f"--disable-extensions-except={tmp_path}" in args
    assert "--remote-debugging-pipe" in args and "--headless=new" in args
    assert not [a for a in args if a.startswith("--remote-debugging-port")]
    port_args = spawn.build_args(LaunchOptions(debugging="port"), "/bin/chromium", "/p")
    assert "--remote-debugging-port=0" in port_args and "--remote-debugging-pipe" not in port_args
    assert args[-1] == "http://127.0.0.1:1/"
    assert args.count("http://127.0.0.1:1/") == 1
    assert spawn.build_args(LaunchOptions(), "/bin/chromium", "/p")[-1] == "about:blank"


def test_a_connect_timeout_of_the_users_replaces_the_bridges() -> None:
    def features(*extra: str) -> list[str]:
        args = spawn.build_args(LaunchOptions(headless=True, extra_args=list(extra)), "/bin/chromium", "/p")
        return [a for a in args if a.startswith(("--enable-features=", "--disable-features="))]

    assert features() == [
        f"--enable-features=WebMCP,{spawn.CONNECT_TIMEOUT_FEATURE}",
        "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    ]
    mine = "TimeoutTcpConnectAttempt:TimeoutTcpConnectAttemptMax/20s"
    assert features(f"--enable-features={mine}")[0] == f"--enable-features=WebMCP,{mine}"
    off = features("--disable-features=TimeoutTcpConnectAttempt")
    assert off == [
        "--enable-features=WebMCP",
        "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,TimeoutTcpConnectAttempt",
    ]


def test_headless_auto_follows_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert "--headless=new" in spawn.build_args(LaunchOptions(), "/bin/chromium", "/p")
    monkeypatch.setenv("DISPLAY", ":0")
    args = spawn.build_args(LaunchOptions(), "/bin/chromium", "/p")
    assert "--headless=new" not in args
    assert ("--no-sandbox" in args) == (os.geteuid() == 0)
    assert "--enable-features=WebMCP" not in spawn.build_args(LaunchOptions(enable_webmcp=False), "/bin/chromium", "/p")


# --- launching ----------------------------------------------------------------------------------


@needs_browser
@pytest.mark.anyio
async def test_launch_answers_and_has_webmcp(browser: BrowserProcess) -> None:
    assert browser.ws_url.startswith("ws://127.0.0.1:")
    assert "/devtools/browser/" in browser.ws_url
    version = await _cdp(browser.ws_url, "Browser.getVersion")
    assert "Chrome/" in version["product"]
    await check_webmcp(browser.ws_url)
    with anyio.fail_after(5):  # closeTarget answers before the target is gone from the list
        while True:
            targets = (await _cdp(browser.ws_url, "Target.getTargets"))["targetInfos"]
            if not [t for t in targets if "/json/version" in t["url"]]:
                break
            await anyio.sleep(0.1)


@needs_browser
@pytest.mark.anyio
async def test_without_feature_check_webmcp_raises() -> None:
    async with await launch_browser(LaunchOptions(headless=True, enable_webmcp=False, debugging="port")) as proc:
        with pytest.raises(WebMCPUnavailable, match="document.modelContext is missing"):
            await check_webmcp(proc.ws_url)
        with pytest.raises(WebMCPUnavailable):
            await check_webmcp(proc.ws_url.replace("127.0.0.1", "localhost"))


def test_probe_page_is_loopback_http_or_chrome_version() -> None:
    assert launcher._probe_url("ws://127.0.0.1:9222/devtools/browser/x") == "http://127.0.0.1:9222/json/version"
    assert launcher._probe_url("ws://localhost:9/devtools/browser/x") == "http://localhost:9/json/version"
    assert launcher._probe_url("ws://10.0.0.5:9222/devtools/browser/x") == "chrome://version/"


@needs_browser
@pytest.mark.anyio
@pytest.mark.parametrize("webmcp", [True, False])
async def test_remote_probe_page_tells_too(webmcp: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "_probe_url", lambda ws_url: "chrome://version/")
    async with await launch_browser(LaunchOptions(headless=True, enable_webmcp=webmcp, debugging="port")) as proc:
        if webmcp:
            await check_webmcp(proc.ws_url)
        else:
            with pytest.raises(WebMCPUnavailable):
                await check_webmcp(proc.ws_url)


@needs_browser
@pytest.mark.anyio
async def test_close_kills_group_and_removes_temp_profile() -> None:
    urls = ["data:text/html,one", "data:text/html,two", "data:text/html,three"]
    proc = await launch_browser(LaunchOptions(headless=True, start_urls=urls, debugging="port"))
    pages = (await _cdp(proc.ws_url, "Target.getTargets"))["targetInfos"]
    assert sorted(t["url"] for t in pages if t["type"] == "page") == sorted(urls)
    profile, log = proc.user_data_dir, proc.log_path
    assert _exists(profile) and _live_in_group(proc.pid)
    await proc.close()
    await proc.close()  # idempotent
    assert not _alive(proc.pid)
    assert not _live_in_group(proc.pid)
    assert not _exists(profile) and not _exists(log)


@needs_browser
@pytest.mark.anyio
async def test_close_is_safe_in_a_cancelled_scope() -> None:
    proc = await launch_browser(LaunchOptions(headless=True))
    with anyio.CancelScope() as scope:
        scope.cancel()
        await proc.close()
    assert not _live_in_group(proc.pid)
    assert not _exists(proc.user_data_dir)


@needs_browser
@pytest.mark.anyio
async def test_a_browser_spawned_before_the_event_loop_is_taken_over_and_stopped_with_its_files() -> None:
    options = LaunchOptions(headless=True)
    spawned = spawn.spawn(options)  # as webmcp.cli does, before it imports the rest of the bridge
    assert not spawned.taken and _live_in_group(spawned.process.pid)
    proc = await launch_browser(options, Timeouts(), spawned)
    assert spawned.taken and proc.pid == spawned.process.pid
    async with proc.connect() as connection:
        assert "Chrome" in (await connection.browser.send("Browser.getVersion"))["product"]
    await proc.close()
    spawned.discard()  # the launcher owns it now: nothing left to do, nothing raised
    assert not _live_in_group(proc.pid)
    assert not _exists(spawned.workdir)


@needs_browser
def test_a_spawned_browser_nobody_took_over_is_stopped_and_its_files_removed() -> None:
    spawned = spawn.spawn(LaunchOptions(headless=True))
    assert _poll_until(lambda: len(_live_in_group(spawned.process.pid)) > 1, 10), "its helpers never started"
    spawned.discard()
    spawned.discard()  # idempotent
    assert spawned.process.poll() is not None
    assert _poll_until(lambda: not _live_in_group(spawned.process.pid), 10), _live_in_group(spawned.process.pid)
    assert not _exists(spawned.workdir)


def test_a_refused_switch_spawns_nothing_and_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    exe = tmp_path / "chromium"
    exe.write_text('#!/bin/sh\ntouch "$0.ran"\n')
    exe.chmod(0o755)
    with pytest.raises(ValueError, match="bridge's own"):
        spawn.spawn(LaunchOptions(browser=str(exe), extra_args=["--remote-debugging-port=9222"]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chromium"]


@needs_browser
@pytest.mark.anyio
async def test_kept_user_data_dir_survives(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    (profile).mkdir()
    (profile / "DevToolsActivePort").write_text("1\n/devtools/browser/stale\n")  # from a dead run
    async with await launch_browser(LaunchOptions(headless=True, user_data_dir=str(profile), debugging="port")) as proc:
        assert "stale" not in proc.ws_url
        assert "Chrome/" in (await _cdp(proc.ws_url, "Browser.getVersion"))["product"]
    assert profile.is_dir() and any(profile.iterdir())
    assert not _live_in_group(proc.pid)


@needs_browser
@pytest.mark.anyio
async def test_browser_that_exits_early_reports_its_log(tmp_path: Path) -> None:
    fake = tmp_path / "broken-chrome"
    fake.write_text("#!/bin/sh\necho 'cannot open display: nope' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(BrowserLaunchError, match="(?s)exited \\(code 3\\).*cannot open display"):
        await launch_browser(LaunchOptions(browser=str(fake), headless=True), Timeouts(launch=10))


@needs_browser
@pytest.mark.anyio
async def test_launch_timeout_is_bounded_and_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "silent-chrome"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    with anyio.fail_after(10):
        with pytest.raises(BrowserLaunchError, match="no DevTools endpoint within 0.5 s"):
            await launch_browser(LaunchOptions(browser=str(fake)), Timeouts(launch=0.5, shutdown=1))
    assert not os.listdir(tmp_path / "tmp")  # noqa: ASYNC240 - a tiny local directory


@needs_browser
@pytest.mark.anyio
async def test_load_extension_runs_its_service_worker(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps({"manifest_version": 3, "name": "t", "version": "1", "background": {"service_worker": "sw.js"}})
    )
    (tmp_path / "sw.js").write_text("self.loaded = true;\n")
    options = LaunchOptions(headless=True, load_extension=str(tmp_path), debugging="port")
    async with await launch_browser(options) as proc:
        with anyio.fail_after(10):
            while True:
                targets = (await _cdp(proc.ws_url, "Target.getTargets"))["targetInfos"]
                if [t for t in targets if t["type"] == "service_worker" and t["url"].endswith("/sw.js")]:
                    break
                await anyio.sleep(0.1)


@needs_browser
@pytest.mark.anyio
@pytest.mark.parametrize("debugging", ["pipe", "port"])
async def test_pipe_launch_listens_on_no_port_and_answers_over_the_pipe(debugging: str) -> None:
    async with await launch_browser(LaunchOptions(headless=True, debugging=debugging)) as proc:  # type: ignore[arg-type]
        await check_webmcp(proc)
        async with proc.connect() as connection:
            version = await connection.browser.send("Browser.getVersion")
            # Chromium opens DevTools lazily on some builds: a listener, if any, exists by now.
            listeners = listening_sockets(_live_in_group(proc.pid))
        assert "Chrome/" in version["product"]
        active_port_file = Path(proc.user_data_dir, "DevToolsActivePort")
        if debugging == "pipe":
            assert listeners == [] and proc.ws_url == ""
            assert not active_port_file.exists()  # noqa: ASYNC240 - one stat of a local file
        else:  # the check above can fail: with a port, it sees the listener (once /proc lists it)
            await wait_until(lambda: bool(listening_sockets(_live_in_group(proc.pid))), timeout=10)
            assert proc.ws_url.startswith("ws://127.0.0.1:")
            assert active_port_file.exists()  # noqa: ASYNC240


@needs_browser
@pytest.mark.anyio
async def test_pipe_carries_one_connection_at_a_time_and_close_still_stops_the_browser() -> None:
    proc = await launch_browser(LaunchOptions(headless=True))
    async with proc.connect():
        with pytest.raises(ConnectionClosed, match="already carries a connection"):
            async with proc.connect():
                pass
    await proc.close()
    assert not _live_in_group(proc.pid)
    assert not _exists(proc.user_data_dir)


_CHILD = textwrap.dedent(
    """
    import anyio, json, sys
    from cdp_bridge.launcher import LaunchOptions, launch_browser

    async def main():
        proc = await launch_browser(LaunchOptions(headless=True))
        print(json.dumps({"pid": proc.pid, "profile": proc.user_data_dir}), flush=True)
        await anyio.sleep(60)

    anyio.run(main)
    """
)


@needs_browser
def test_sigkilled_bridge_leaves_no_orphan_browser() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert child.stdout is not None
        info = json.loads(child.stdout.readline() or "{}")
        assert info, "the child did not launch a browser"
        assert _live_in_group(info["pid"])
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        assert _poll_until(lambda: not _live_in_group(info["pid"]), 15), _live_in_group(info["pid"])
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
        if info := locals().get("info"):
            shutil.rmtree(Path(info["profile"]).parent, ignore_errors=True)
            for pid in _live_in_group(info["pid"]):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ("--remote-debugging-port=9222", "bridge's own"),
        ("--remote-debugging-pipe", "bridge's own"),
        ("--user-data-dir=/tmp/x", "--user-data-dir DIR"),
        ("--disable-features=Foo,WebMCP", "WebMCP"),
        ("lang=de", "not a browser switch"),
        ("http://example.org/", "not a browser switch"),
    ],
)
def test_a_browser_arg_may_not_replace_what_the_bridge_depends_on(arg: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        launcher.check_browser_arg(arg)
    with pytest.raises(ValueError):
        spawn.build_args(LaunchOptions(extra_args=[arg]), "/bin/chromium", "/p")


def test_browser_args_come_before_the_start_page_and_features_are_merged() -> None:
    extra = ["--lang=de-DE", "--enable-features=Foo", "--disable-features=Bar", "--window-size=800,600"]
    options = LaunchOptions(headless=True, extra_args=extra, start_urls=["http://127.0.0.1:1/"])
    args = spawn.build_args(options, "/c", "/p")
    assert f"--enable-features=WebMCP,Foo,{spawn.CONNECT_TIMEOUT_FEATURE}" in args and "--user-data-dir=/p" in args
    assert args.index("--lang=de-DE") < args.index("http://127.0.0.1:1/") == len(args) - 1
    assert "--window-size=800,600" in args
    # Chromium keeps the last --disable-features only: the caller's and the bridge's are one switch.
    disabled = [a for a in args if a.startswith("--disable-features=")]
    assert disabled == ["--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,Bar"]


def test_a_headless_browser_goes_without_the_address_bars_popups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    shown = spawn.build_args(LaunchOptions(headless=False), "/bin/chromium", "/p")
    assert not [a for a in shown if a.startswith("--disable-features=")]  # a person may use the address bar
    headless = spawn.build_args(LaunchOptions(headless=True), "/bin/chromium", "/p")
    assert "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup" in headless


async def _evaluate_in_a_new_tab(ws_url: str, expression: str) -> Any:
    async with connect(ws_url, max_size=None) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
        target = json.loads(await ws.recv())["result"]["targetId"]
        await ws.send(json.dumps({"id": 2, "method": "Target.attachToTarget",
                                  "params": {"targetId": target, "flatten": True}}))  # fmt: skip
        session = ""
        while not session:
            reply = json.loads(await ws.recv())
            session = reply.get("result", {}).get("sessionId", "")
        await ws.send(json.dumps({"id": 3, "sessionId": session, "method": "Runtime.evaluate",
                                  "params": {"expression": expression, "returnByValue": True}}))  # fmt: skip
        while True:
            reply = json.loads(await ws.recv())
            if reply.get("id") == 3:
                return reply["result"]["result"]["value"]


@needs_browser
@pytest.mark.anyio
async def test_a_browser_arg_reaches_the_launched_browser_and_webmcp_stays_on() -> None:
    extra = ["--window-size=812,611", "--enable-features=Foo"]
    options = LaunchOptions(headless=True, debugging="port", extra_args=extra)
    async with await launch_browser(options) as proc:
        await check_webmcp(proc.ws_url)  # the merged --enable-features kept WebMCP
        assert await _evaluate_in_a_new_tab(proc.ws_url, "window.outerWidth") == 812, "the user's size wins"


@needs_browser
@pytest.mark.anyio
async def test_a_headless_browser_shows_pages_in_a_laptops_viewport() -> None:
    # Chromium's own headless window gave 780 x 437: pages laid out for a tablet. (The start page's
    # tab shows 1280 x 720; a tab opened over CDP keeps less room for bars: 1280 x 776.)
    async with await launch_browser(LaunchOptions(headless=True, debugging="port")) as proc:
        width, height = await _evaluate_in_a_new_tab(proc.ws_url, "[innerWidth, innerHeight]")
    assert width == 1280 and 720 <= height <= 800, (width, height)
