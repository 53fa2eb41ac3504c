"""Find, start and stop the Chromium the bridge drives, and check it has WebMCP.

The browser never inherits our stdin/stdout (the bridge speaks MCP over stdio), runs in its own
process group so close() can sweep every helper process, and is tied to the bridge's life with
PR_SET_PDEATHSIG so a SIGKILLed bridge leaves no orphan browser behind.

How the bridge talks to it (`LaunchOptions.debugging`):

- `"pipe"` (the default, and what `webmcp-bridge` uses): `--remote-debugging-pipe`. DevTools
  runs over two pipes handed to the browser as file descriptors 3 (commands in) and 4
  (answers and events out), NUL-terminated JSON. Only this process holds the other ends, so no
  other local process can reach the browser's DevTools: no TCP port is opened and no
  DevToolsActivePort file is written. Open connections with `BrowserProcess.connect()`, one at
  a time.
- `"port"`: `--remote-debugging-port=0` on 127.0.0.1; any local process can drive the browser
  without a token. For tests and tools that attach a second client (Playwright's
  `connect_over_cdp`) next to the bridge; `BrowserProcess.ws_url` is then set.

A browser the user started is reached through `--cdp-url` instead, not through this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio

from .connection import CDPSession, Connection
from .errors import (
    BrowserLaunchError,
    BrowserNotFound,
    CDPError,
    ConnectionClosed,
    ProtocolError,
    WebMCPUnavailable,
)
from .js import call
from .timeouts import Timeouts
from .transport import PipeTransport

__all__ = [
    "BrowserProcess",
    "LaunchOptions",
    "can_tell_webmcp",
    "check_browser_arg",
    "check_webmcp",
    "find_browser",
    "launch_browser",
    "webmcp_on_page",
]

_log = logging.getLogger(__name__)

ENV_BROWSER = "WEBMCP_BRIDGE_BROWSER"
_DEFAULT_PATHS = ("/usr/bin/chromium",)
_PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_POLL = 0.05
_LOG_NAME = "chromium.log"
# Port 0: Chromium picks a free port and writes it to <profile>/DevToolsActivePort. No
# --remote-allow-origins: it only gates websocket clients that send an Origin header (websockets doesn't).
_PORT_FLAG = "--remote-debugging-port=0"
_PIPE_FLAG = "--remote-debugging-pipe"
_PIPE_FDS = (3, 4)  # Chromium reads commands from fd 3 and writes to fd 4
_BASE_FLAGS = (
    "--no-first-run --no-default-browser-check --disable-background-networking "
    "--disable-component-update --disable-sync --disable-default-apps --disable-popup-blocking "
    "--password-store=basic --use-mock-keychain"
).split()
# Headless Chromium 156 still builds the address bar's suggestion popups, each a WebUI page in a
# renderer of its own ("browser_ui" targets): ~1 s of CPU in the first 1.5 s after launch, on the
# cores the start page then loads on. Nobody sees an address bar without a window.
_HEADLESS_OFF = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
# `ModelContext` and `document.modelContext` are [SecureContext]: about:blank never has them, with or
# without the feature. A local browser's own DevTools HTTP endpoint is on loopback, a secure origin;
# for a remote one chrome://version/ is secure too (both checked with the feature on and off).
_PROBE = "(url) => location.href === url ? ('modelContext' in document) : null"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Asked in an isolated world, so a page's own `document.modelContext` (a polyfill) is not mistaken for it.
_PAGE_CHECK = "isSecureContext ? ('modelContext' in document) : null"
_WEBMCP_MISSING_ATTACHED = (
    "This browser runs without WebMCP (document.modelContext is missing): start it, or have the browser "
    "farm launch it, with --enable-features=WebMCP (Chromium 146 or newer)."
)
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
    debugging: Literal["pipe", "port"] = "pipe"
    """"pipe": only this process can reach DevTools; "port": a loopback port any local process can use."""


_OWN_SWITCHES = {
    "--remote-debugging-pipe": "the debugging pipe is how the bridge reaches the browser",
    "--remote-debugging-port": "the bridge opens its own debugging channel (the pipe)",
    "--remote-debugging-address": "the bridge opens its own debugging channel (the pipe)",
    "--remote-debugging-io-pipes": "the bridge opens its own debugging channel (the pipe)",
    "--user-data-dir": "give the profile with the bridge's own --user-data-dir DIR",
}
"""Switches a `--browser-arg` may not set: the bridge's own, which Chromium would let the last one win."""


def check_browser_arg(arg: str) -> str:
    """`arg` if it may be passed to the launched browser (`--browser-arg`), else ValueError with why.

    `--enable-features` and `--disable-features` are merged with the bridge's own (WebMCP on,
    and headless, the address bar's WebUI popups off); a `--disable-features` that names WebMCP,
    the debugging channel and the profile directory are the bridge's and refused.

    Raises:
        ValueError: one sentence naming the switch and what to do instead.
    """
    name, _, value = arg.partition("=")
    if not arg.startswith("--") or len(name) < 3:
        raise ValueError(f"{arg!r} is not a browser switch; give one as --name or --name=value")
    if name in _OWN_SWITCHES:
        raise ValueError(f"{name} is the bridge's own and cannot be passed: {_OWN_SWITCHES[name]}")
    if name == "--disable-features" and "WebMCP" in value.split(","):
        raise ValueError("--disable-features=WebMCP would switch off what the bridge serves")
    return arg


def _build_args(options: LaunchOptions, executable: str, profile: str) -> list[str]:
    headless = options.headless
    if headless is None:
        headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    features = ["WebMCP"] if options.enable_webmcp else []
    disabled = list(_HEADLESS_OFF) if headless else []
    extra: list[str] = []
    for arg in options.extra_args:  # Chromium keeps only the last --enable/disable-features: merge them.
        check_browser_arg(arg)
        if arg.startswith("--enable-features="):
            features += [f for f in arg.split("=", 1)[1].split(",") if f]
        elif arg.startswith("--disable-features="):
            disabled += [f for f in arg.split("=", 1)[1].split(",") if f]
        else:
            extra.append(arg)
    channel = _PIPE_FLAG if options.debugging == "pipe" else _PORT_FLAG
    args = [executable, channel, *_BASE_FLAGS, f"--user-data-dir={profile}"]
    if features:
        args.append("--enable-features=" + ",".join(dict.fromkeys(features)))
    if disabled:
        args.append("--disable-features=" + ",".join(dict.fromkeys(disabled)))
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


def _child_preexec(pipe_ends: tuple[int, int] | None) -> Callable[[], None] | None:
    """A preexec_fn: put the debugging pipe's ends on fds 3 and 4, and (on Linux) ask for
    SIGKILL when the forking thread dies. None when there is nothing to do."""
    linux = sys.platform.startswith("linux")
    if not linux and pipe_ends is None:
        return None
    import fcntl  # POSIX only, like the debugging pipe itself; imported before the fork

    prctl = ctypes.CDLL(None, use_errno=True).prctl if linux else None  # looked up before fork
    parent = os.getpid()

    def preexec() -> None:
        if pipe_ends is not None:
            # Through fds >= 10 first: an end may itself sit on 3 or 4 and be overwritten.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in pipe_ends]
            for fd, target in zip(high, _PIPE_FDS, strict=True):
                os.dup2(fd, target)
        if prctl is not None:
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
        """With `debugging="port"`: the DevTools websocket, ws://127.0.0.1:PORT/devtools/browser/ID."""
        self.pipe: PipeTransport | None = None
        """With `debugging="pipe"`: our ends of the browser's debugging pipe."""
        self._pipe_in_use = False
        self._workdir = workdir  # holds the log and, for a temporary profile, the profile itself
        self._timeouts = timeouts
        self._closed = False

    @asynccontextmanager
    async def connect(self, timeouts: Timeouts | None = None) -> AsyncIterator[Connection]:
        """A DevTools connection to this browser, over its pipe or its port.

        The pipe carries one connection at a time; it stays open for the next one.

        Raises:
            ConnectionClosed: the browser is gone, or its pipe is already in use.
        """
        timeouts = timeouts or self._timeouts
        if self.pipe is None:
            async with Connection.connect(self.ws_url, timeouts) as connection:
                yield connection
            return
        if self._pipe_in_use:
            raise ConnectionClosed("the browser's debugging pipe already carries a connection")
        self._pipe_in_use = True
        try:
            async with Connection.open(self.pipe, timeouts, close_transport=False) as connection:
                yield connection
        finally:
            self._pipe_in_use = False

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
            async with self.connect() as connection:
                await connection.browser.send("Browser.close", timeout=self._timeouts.shutdown)

    async def close(self) -> None:
        """Browser.close, then SIGTERM, then SIGKILL to the group (each bounded); reap; clean up."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            shutdown = self._timeouts.shutdown
            if self.running and (self.ws_url or (self.pipe is not None and not self._pipe_in_use)):
                await self._polite_close()
                await self._wait_exit(shutdown)
            if self.pipe is not None:
                await self.pipe.close()
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
    """Start Chromium and wait (up to `timeouts.launch`) for DevTools to answer. asyncio backend only.

    Raises:
        BrowserNotFound: no executable.
        BrowserLaunchError: it exited, or DevTools did not answer in time (with its log's tail).
    """
    executable = find_browser(options.browser)
    workdir, profile, log = await anyio.to_thread.run_sync(_prepare, options)
    pipe_ends: tuple[int, int] | None = None  # the browser's ends: it reads the first, writes the second
    ours: tuple[int, int] | None = None
    try:
        if options.debugging == "pipe":
            to_browser, from_browser = os.pipe(), os.pipe()
            pipe_ends, ours = (to_browser[0], from_browser[1]), (from_browser[0], to_browser[1])
        # asyncio forks on the event-loop thread (never a worker thread, whose exit would fire
        # PDEATHSIG at once), and unlike anyio.open_process it accepts preexec_fn.
        process = await asyncio.create_subprocess_exec(
            *_build_args(options, executable, profile),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,  # never our MCP stdio
            start_new_session=True,
            # fds 3 and 4 are open here (the pipes took the lowest free numbers), so they can be
            # kept; the preexec puts the browser's pipe ends on them before the others are closed.
            pass_fds=_PIPE_FDS if pipe_ends else (),
            preexec_fn=_child_preexec(pipe_ends),
        )
    except BaseException:
        for fd in (*(pipe_ends or ()), *(ours or ())):
            os.close(fd)
        await anyio.to_thread.run_sync(_rmtree_retrying, workdir)
        raise
    finally:
        log.close()  # the child holds its own copy
    browser = BrowserProcess(process, executable, profile, workdir, timeouts)
    if pipe_ends is not None and ours is not None:
        for fd in pipe_ends:  # only the browser may hold them, or its exit would not end our reads
            os.close(fd)
        browser.pipe = PipeTransport(*ours)
    try:
        answered = False
        with anyio.move_on_after(timeouts.launch):
            if browser.pipe is not None:
                answered = await _pipe_answers(browser)
            else:
                browser.ws_url = await _active_port_url(browser, profile)
                answered = bool(browser.ws_url)
        if not answered:
            raise BrowserLaunchError(await _launch_failure(browser, options, timeouts))
        if len(options.start_urls) > 1:
            async with browser.connect() as connection:
                for url in options.start_urls[1:]:
                    await connection.browser.send("Target.createTarget", {"url": url})
        return browser
    except BaseException:
        await browser.close()
        raise


async def _active_port_url(browser: BrowserProcess, profile: str) -> str:
    """Poll DevToolsActivePort until it names the browser's websocket ("" if the browser exits)."""
    active_port = os.path.join(profile, "DevToolsActivePort")
    while not (ws_url := await _read_active_port(active_port)) and browser.running:  # noqa: ASYNC110
        await anyio.sleep(_POLL)
    return ws_url or ""


async def _pipe_answers(browser: BrowserProcess) -> bool:
    """Wait until the browser answers over its pipe (True); False if it exits first."""
    async with browser.connect() as connection:
        try:
            await connection.browser.send("Browser.getVersion", timeout=math.inf)
            return True
        except ConnectionClosed:
            pass
    assert browser.pipe is not None
    await browser.pipe.close()
    await browser._wait_exit(browser._timeouts.shutdown)
    return False


async def _launch_failure(browser: BrowserProcess, options: LaunchOptions, timeouts: Timeouts) -> str:
    tail = await anyio.to_thread.run_sync(_log_tail, browser.log_path)
    if browser.running:
        why = f"offered no DevTools endpoint within {timeouts.launch:g} s"
    else:
        why = f"exited (code {browser._process.returncode}) before offering DevTools"
        why += f" (is the profile {browser.user_data_dir} in use?)" if options.user_data_dir else ""
    return f"{browser.executable} {why}; its log ends:\n{tail}"


def can_tell_webmcp(url: str) -> bool:
    """True when a page loaded from `url` is a secure context, so it shows whether WebMCP is on.

    https:, and http: on a loopback host (`ModelContext` is [SecureContext]); the page may still
    not be (a failed load shows an error page): `webmcp_on_page` then answers None.
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    loopback = host in _LOOPBACK or host.startswith("127.") or host.endswith(".localhost")
    return parts.scheme == "https" or (parts.scheme == "http" and loopback)


async def webmcp_on_page(session: CDPSession, frame_id: str, world: str, timeout: float) -> bool | None:
    """Whether the document in `frame_id` has `document.modelContext`, asked in the isolated `world`.

    None when the document is not a secure context (it cannot tell: about:blank, an error
    page, plain http elsewhere). True means WebMCP is on in this browser; False may also be
    the page's own doing (a policy that withholds the API), so `check_webmcp` has the last word.

    Raises:
        CDPError: the frame is gone or navigating.
    """
    world_reply = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": world},
                                     timeout=timeout)  # fmt: skip
    params = {"expression": _PAGE_CHECK, "contextId": world_reply["executionContextId"], "returnByValue": True}
    value = (await session.send("Runtime.evaluate", params, timeout=timeout)).get("result", {}).get("value")
    return value if isinstance(value, bool) else None


def _probe_url(ws_url: str) -> str:
    """A secure-context page to test for WebMCP, ideally an ordinary http one."""
    where = urlsplit(ws_url)
    local = where.hostname in _LOOPBACK or (where.hostname or "").startswith("127.")
    return f"http://{where.netloc}/json/version" if local else "chrome://version/"


async def check_webmcp(
    browser: str | BrowserProcess | Connection,
    timeouts: Timeouts = Timeouts(),  # noqa: B008
    *,
    headers: Mapping[str, str] | None = None,
    launched: bool = True,
    claim: Callable[[str], None] | None = None,
) -> None:
    """Raise WebMCPUnavailable unless a secure page in this browser has `document.modelContext`.

    `browser` is a DevTools websocket URL (opened with `headers`), a browser this module
    launched (pipe or port), or an open connection to a browser the bridge already follows:
    there the probe page is a hidden target, which auto-attach does not report as a page, so
    it never becomes a tab; `claim(target_id)` is called before the probe attaches to it, so
    whoever follows the browser leaves that session alone (`launched` picks the message).
    """
    hidden = isinstance(browser, Connection)
    channel: AbstractAsyncContextManager[Connection]
    if isinstance(browser, Connection):
        probe_url, channel = "chrome://version/", contextlib.nullcontext(browser)
    elif isinstance(browser, BrowserProcess):
        probe_url = _probe_url(browser.ws_url) if browser.ws_url else "chrome://version/"
        channel = browser.connect(timeouts)
    else:
        probe_url, channel = _probe_url(browser), Connection.connect(browser, timeouts, headers)
        launched = False
    found: bool | None = None
    async with channel as connection:
        browser_session = connection.browser
        create = {"url": probe_url, "background": True, **({"hidden": True} if hidden else {})}
        target = (await browser_session.send("Target.createTarget", create))["targetId"]
        if claim is not None:
            claim(target)
        try:
            attached = await browser_session.send("Target.attachToTarget", {"targetId": target, "flatten": True})
            session = connection.session(attached["sessionId"], target)
            with anyio.move_on_after(timeouts.navigation):
                while found is None:  # null until the probe page (not the first about:blank) runs
                    params = {"expression": call(_PROBE, probe_url), "returnByValue": True}
                    with contextlib.suppress(ProtocolError):  # context swapped mid-navigation
                        reply = await session.send("Runtime.evaluate", params)
                        found = reply.get("result", {}).get("value")
                    if found is None:
                        await anyio.sleep(_POLL)
        finally:
            # closeTarget answers before the tab is gone; a bridge attaching right after
            # must not see the probe as a tab of the user's: wait for the detach.
            with anyio.CancelScope(shield=True), contextlib.suppress(CDPError):
                async with browser_session.expect(
                    "Target.detachedFromTarget", lambda p: p.get("targetId") == target
                ) as detached:
                    await browser_session.send("Target.closeTarget", {"targetId": target})
                    await detached.wait(timeouts.shutdown)
    if found is None:
        raise BrowserLaunchError(f"The WebMCP probe {probe_url} did not load in {timeouts.navigation:g} s.")
    if not found:
        raise WebMCPUnavailable(_WEBMCP_MISSING if launched else _WEBMCP_MISSING_ATTACHED)
