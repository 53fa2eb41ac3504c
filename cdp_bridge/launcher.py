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

import contextlib
import logging
import math
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from urllib.parse import urlsplit

import anyio

from .connection import CDPSession, Connection
from .errors import (
    BrowserLaunchError,
    CDPError,
    ConnectionClosed,
    ProtocolError,
    WebMCPUnavailable,
)
from .js import call
from .spawn import (
    ENV_BROWSER,
    LOG_NAME,
    LaunchOptions,
    Spawned,
    check_browser_arg,
    find_browser,
    rmtree_retrying,
    spawn,
)
from .timeouts import Timeouts
from .transport import PipeTransport

__all__ = [
    "ENV_BROWSER",
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

_POLL = 0.05
_EXIT_POLL = 0.01
"""How often a browser being stopped is asked whether it has exited (s)."""
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


def _log_tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(deque(f, maxlen=lines)).strip() or "(empty log)"
    except OSError:
        return "(no log)"


class BrowserProcess:
    """A running Chromium; `close()` (or leaving `async with`) stops it and removes temp files."""

    def __init__(self, spawned: Spawned, timeouts: Timeouts) -> None:
        spawned.taken = True
        self._process = spawned.process
        self.pid: int = spawned.process.pid
        self.executable = spawned.executable
        self.user_data_dir = spawned.profile
        workdir = spawned.workdir
        self.log_path = os.path.join(workdir, LOG_NAME)
        self.ws_url: str = ""
        """With `debugging="port"`: the DevTools websocket, ws://127.0.0.1:PORT/devtools/browser/ID."""
        self.pipe: PipeTransport | None = None
        """With `debugging="pipe"`: our ends of the browser's debugging pipe."""
        if spawned.pipe is not None:
            self.pipe = PipeTransport(*spawned.pipe)
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
        """True until the browser's main process has exited (which reaps it)."""
        return self._process.poll() is None

    async def _wait_exit(self, limit: float) -> None:
        with anyio.move_on_after(limit):
            while self.running:  # noqa: ASYNC110 - polled: only waited for while the browser is being stopped
                await anyio.sleep(_EXIT_POLL)

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
            # (`running` may have reaped the leader already: a recycled pgid is possible only in theory.)
            _killpg(self.pid, signal.SIGKILL)
            await self._wait_exit(shutdown)
            with anyio.move_on_after(shutdown):  # so no helper writes into the profile we remove
                while await anyio.to_thread.run_sync(_group_alive, self.pid):  # noqa: ASYNC110
                    await anyio.sleep(_POLL)
            await anyio.to_thread.run_sync(rmtree_retrying, self._workdir)


async def _read_active_port(path: str) -> str | None:
    """The browser websocket URL from DevToolsActivePort, or None while it is absent or partial."""
    try:
        port, ws_path = (await anyio.Path(path).read_text()).split()[:2]
    except (OSError, ValueError):
        return None
    return f"ws://127.0.0.1:{port}{ws_path}" if port.isdigit() and ws_path.startswith("/") else None


async def launch_browser(
    options: LaunchOptions,
    timeouts: Timeouts = Timeouts(),  # noqa: B008
    spawned: Spawned | None = None,
) -> BrowserProcess:
    """Start Chromium (or take over the one `spawn.spawn(options)` started: `spawned`) and wait
    (up to `timeouts.launch`) for DevTools to answer. asyncio backend only.

    Raises:
        BrowserNotFound: no executable.
        BrowserLaunchError: it exited, or DevTools did not answer in time (with its log's tail).
    """
    # Spawned on the event loop's thread, which lives as long as the bridge (never a worker
    # thread, whose exit would fire PDEATHSIG at once).
    browser = BrowserProcess(spawned if spawned is not None else spawn(options), timeouts)
    profile = browser.user_data_dir
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
