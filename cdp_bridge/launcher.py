"""Find, start and stop the Chromium the bridge drives, and check it has WebMCP.

The browser never inherits our stdin/stdout (the bridge speaks MCP over stdio), runs in its own
process group so close() can sweep every helper process, and is tied to the bridge's life with
PR_SET_PDEATHSIG so a SIGKILLed bridge leaves no orphan browser behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio

from .connection import Connection
from .errors import BrowserLaunchError, BrowserNotFound, CDPError, ProtocolError, WebMCPUnavailable
from .timeouts import Timeouts

__all__ = ["BrowserProcess", "LaunchOptions", "check_webmcp", "find_browser", "launch_browser"]

_log = logging.getLogger(__name__)

ENV_BROWSER = "WEBMCP_BRIDGE_BROWSER"
_DEFAULT_PATHS = ("/usr/bin/chromium",)
_PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_POLL = 0.05
_LOG_NAME = "chromium.log"
# Port 0: Chromium picks a free port and writes it to <profile>/DevToolsActivePort. No
# --remote-allow-origins: it only gates websocket clients that send an Origin header (websockets doesn't).
_BASE_FLAGS = (
    "--remote-debugging-port=0 --no-first-run --no-default-browser-check --disable-background-networking "
    "--disable-component-update --disable-sync --disable-default-apps --disable-popup-blocking "
    "--password-store=basic --use-mock-keychain"
).split()
# `ModelContext` and `document.modelContext` are [SecureContext]: about:blank never has them, with or
# without the feature. A local browser's own DevTools HTTP endpoint is on loopback, a secure origin;
# for a remote one chrome://version/ is secure too (both checked with the feature on and off).
_PROBE = "location.href === %s ? ('modelContext' in document) : null"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WEBMCP_MISSING = (
    "This browser runs without WebMCP (document.modelContext is missing): use Chromium 146 or newer "
    "with --enable-features=WebMCP, e.g. Debian's chromium package."
)


def _usable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _resolve_named(value: str, origin: str) -> str:
    """Resolve a user-given path (or bare name on PATH); raise one sentence if it is unusable."""
    found = value if os.sep in value else shutil.which(value)
    if found and _usable(found):
        return found
    raise BrowserNotFound(f"The browser given by {origin} ({value!r}) does not exist or is not executable.")


def find_browser(explicit: str | None = None) -> str:
    """Return a Chromium executable: `explicit`, $WEBMCP_BRIDGE_BROWSER, /usr/bin/chromium, then PATH."""
    if explicit:
        return _resolve_named(explicit, "--browser")
    if env := os.environ.get(ENV_BROWSER):
        return _resolve_named(env, ENV_BROWSER)
    for found in (*_DEFAULT_PATHS, *map(shutil.which, _PATH_NAMES)):
        if found and _usable(found):
            return found
    raise BrowserNotFound(
        f"No Chromium found: install it with `apt-get install -y chromium`, or pass --browser PATH / set {ENV_BROWSER}."
    )


@dataclass
class LaunchOptions:
    """How to start the browser; every field has a usable default."""

    browser: str | None = None
    headless: bool | None = None
    """None: headless exactly when there is no DISPLAY / WAYLAND_DISPLAY."""
    user_data_dir: str | None = None
    """None: a fresh temporary profile, removed on close."""
    extra_args: list[str] = field(default_factory=list)
    load_extension: str | None = None
    start_urls: list[str] = field(default_factory=list)
    enable_webmcp: bool = True
    """False only to test the WebMCPUnavailable path."""


def _build_args(options: LaunchOptions, executable: str, profile: str) -> list[str]:
    headless = options.headless
    if headless is None:
        headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    features = ["WebMCP"] if options.enable_webmcp else []
    extra: list[str] = []
    for arg in options.extra_args:  # Chromium keeps only the last --enable-features: merge them.
        if arg.startswith("--enable-features="):
            features += [f for f in arg.split("=", 1)[1].split(",") if f]
        else:
            extra.append(arg)
    args = [executable, *_BASE_FLAGS, f"--user-data-dir={profile}"]
    if features:
        args.append("--enable-features=" + ",".join(dict.fromkeys(features)))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox on.
    if headless:
        args += ["--headless=new", "--disable-gpu"]
    if options.load_extension:
        ext = os.path.abspath(options.load_extension)
        args += [f"--load-extension={ext}", f"--disable-extensions-except={ext}"]
    # One URL, last: headless Chromium refuses several ("Multiple targets are not supported"), so
    # launch_browser opens the others over CDP; Debian's wrapper stops parsing at the first URL.
    return [*args, *extra, (options.start_urls or ["about:blank"])[0]]


def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to SIGKILL the child when the forking thread dies, else None."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork, only called after
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # we already died between fork and prctl
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # group already gone
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """True while a non-zombie process remains in process group `pgid` (Linux: scans /proc)."""
    if not os.path.isdir("/proc/self"):
        return False  # elsewhere we cannot tell zombies apart: do not wait
    with os.scandir("/proc") as entries:
        for entry in entries:
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone, or not a process directory
            if int(fields[2]) == pgid and fields[0] != b"Z":
                return True
    return False


def _rmtree_retrying(path: str, attempts: int = 10, pause: float = 0.1) -> None:
    """Remove `path`; Chromium's last helpers may still be writing into it for a moment."""
    for _ in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(pause)
    _log.warning("could not remove the browser's temporary directory %s", path)


def _log_tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=lines)).strip() or "(empty log)"
    except OSError:
        return "(no log)"


class BrowserProcess:
    """A running Chromium; `close()` (or leaving `async with`) stops it and removes temp files."""

    def __init__(self, process: asyncio.subprocess.Process, executable: str, profile: str, workdir: str,
                 timeouts: Timeouts) -> None:  # fmt: skip
        self._process = process
        self.pid: int = process.pid
        self.executable = executable
        self.user_data_dir = profile
        self.log_path = os.path.join(workdir, _LOG_NAME)
        self.ws_url: str = ""
        """The browser-level DevTools websocket, ws://127.0.0.1:PORT/devtools/browser/ID."""
        self._workdir = workdir  # holds the log and, for a temporary profile, the profile itself
        self._timeouts = timeouts
        self._closed = False

    async def __aenter__(self) -> BrowserProcess:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def running(self) -> bool:
        """True until the browser's main process has exited."""
        return self._process.returncode is None

    async def _wait_exit(self, limit: float) -> None:
        with anyio.move_on_after(limit):
            await self._process.wait()

    async def _polite_close(self) -> None:
        # Any failure just means we escalate to signals; the browser may drop the socket unanswered.
        with anyio.move_on_after(self._timeouts.shutdown), contextlib.suppress(Exception):
            async with Connection.connect(self.ws_url, self._timeouts) as connection:
                await connection.browser.send("Browser.close", timeout=self._timeouts.shutdown)

    async def close(self) -> None:
        """Browser.close, then SIGTERM, then SIGKILL to the group (each bounded); reap; clean up."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            shutdown = self._timeouts.shutdown
            if self.running and self.ws_url:
                await self._polite_close()
                await self._wait_exit(shutdown)
            if self.running:
                _killpg(self.pid, signal.SIGTERM)
                await self._wait_exit(shutdown)
            # Always sweep the group: the zygote, GPU or renderers may outlive the browser process.
            # (crashpad handlers setsid() out of it, but they exit once their browser is gone.)
            # (asyncio reaps the leader at once, so a recycled pgid is possible only in theory.)
            _killpg(self.pid, signal.SIGKILL)
            await self._wait_exit(shutdown)
            with anyio.move_on_after(shutdown):  # so no helper writes into the profile we remove
                while await anyio.to_thread.run_sync(_group_alive, self.pid):  # noqa: ASYNC110
                    await anyio.sleep(_POLL)
            await anyio.to_thread.run_sync(_rmtree_retrying, self._workdir)


async def _read_active_port(path: str) -> str | None:
    """The browser websocket URL from DevToolsActivePort, or None while it is absent or partial."""
    try:
        port, ws_path = (await anyio.Path(path).read_text()).split()[:2]
    except (OSError, ValueError):
        return None
    return f"ws://127.0.0.1:{port}{ws_path}" if port.isdigit() and ws_path.startswith("/") else None


def _prepare(options: LaunchOptions) -> tuple[str, str, Any]:
    """Create the work dir, the profile dir and the log file (blocking: run in a thread)."""
    workdir = tempfile.mkdtemp(prefix="webmcp-bridge-")
    profile = options.user_data_dir or os.path.join(workdir, "profile")
    os.makedirs(profile, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):  # a kept profile may hold a stale one
        os.unlink(os.path.join(profile, "DevToolsActivePort"))
    return workdir, os.path.abspath(profile), open(os.path.join(workdir, _LOG_NAME), "wb")


async def launch_browser(options: LaunchOptions, timeouts: Timeouts = Timeouts()) -> BrowserProcess:  # noqa: B008
    """Start Chromium and wait (up to `timeouts.launch`) for its DevTools URL. asyncio backend only."""
    executable = find_browser(options.browser)
    workdir, profile, log = await anyio.to_thread.run_sync(_prepare, options)
    try:
        # asyncio forks on the event-loop thread (never a worker thread, whose exit would fire
        # PDEATHSIG at once), and unlike anyio.open_process it accepts preexec_fn.
        process = await asyncio.create_subprocess_exec(
            *_build_args(options, executable, profile),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,  # never our MCP stdio
            start_new_session=True,
            preexec_fn=_pdeathsig_preexec(),
        )
    except BaseException:
        await anyio.to_thread.run_sync(_rmtree_retrying, workdir)
        raise
    finally:
        log.close()  # the child holds its own copy
    browser = BrowserProcess(process, executable, profile, workdir, timeouts)
    try:
        active_port = os.path.join(profile, "DevToolsActivePort")
        with anyio.move_on_after(timeouts.launch):
            while not (ws_url := await _read_active_port(active_port)) and browser.running:  # noqa: ASYNC110
                await anyio.sleep(_POLL)
        if not ws_url:
            tail = await anyio.to_thread.run_sync(_log_tail, browser.log_path)
            if browser.running:
                why = f"offered no DevTools endpoint within {timeouts.launch:g} s"
            else:
                why = f"exited (code {process.returncode}) before offering DevTools"
                why += f" (is the profile {profile} in use?)" if options.user_data_dir else ""
            raise BrowserLaunchError(f"{executable} {why}; its log ends:\n{tail}")
        browser.ws_url = ws_url
        if len(options.start_urls) > 1:
            async with Connection.connect(ws_url, timeouts) as connection:
                for url in options.start_urls[1:]:
                    await connection.browser.send("Target.createTarget", {"url": url})
        return browser
    except BaseException:
        await browser.close()
        raise


def _probe_url(ws_url: str) -> str:
    """A secure-context page to test for WebMCP, ideally an ordinary http one."""
    where = urlsplit(ws_url)
    local = where.hostname in _LOOPBACK or (where.hostname or "").startswith("127.")
    return f"http://{where.netloc}/json/version" if local else "chrome://version/"


async def check_webmcp(ws_url: str, timeouts: Timeouts = Timeouts()) -> None:  # noqa: B008
    """Raise WebMCPUnavailable unless a secure page in this browser has `document.modelContext`."""
    probe_url = _probe_url(ws_url)
    found: bool | None = None
    async with Connection.connect(ws_url, timeouts) as connection:
        browser = connection.browser
        target = (await browser.send("Target.createTarget", {"url": probe_url, "background": True}))["targetId"]
        try:
            attached = await browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})
            session = connection.session(attached["sessionId"], target)
            with anyio.move_on_after(timeouts.navigation):
                while found is None:  # null until the probe page (not the first about:blank) runs
                    params = {"expression": _PROBE % json.dumps(probe_url), "returnByValue": True}
                    with contextlib.suppress(ProtocolError):  # context swapped mid-navigation
                        reply = await session.send("Runtime.evaluate", params)
                        found = reply.get("result", {}).get("value")
                    if found is None:
                        await anyio.sleep(_POLL)
        finally:
            # closeTarget answers before the tab is gone; a bridge attaching right after
            # must not see the probe as a tab of the user's: wait for the detach.
            with anyio.CancelScope(shield=True), contextlib.suppress(CDPError):
                async with browser.expect(
                    "Target.detachedFromTarget", lambda p: p.get("targetId") == target
                ) as detached:
                    await browser.send("Target.closeTarget", {"targetId": target})
                    await detached.wait(timeouts.shutdown)
    if found is None:
        raise BrowserLaunchError(f"The WebMCP probe {probe_url} did not load in {timeouts.navigation:g} s.")
    if not found:
        raise WebMCPUnavailable(_WEBMCP_MISSING)
