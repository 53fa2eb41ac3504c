"""Start the browser process: the part of launching that needs no event loop. Standard library only.

`webmcp-bridge` spawns the browser here before it imports the rest of the bridge (the event loop,
the CDP connection, pydantic, the `mcp` SDK: ~100 ms of Python), so Chromium's own start-up,
~300 ms, runs beside those imports instead of after them; `launcher.launch_browser` then takes
the process over (`Spawned`) and waits for DevTools to answer. Launching from the launcher alone
spawns through here too.

The browser never inherits our stdin/stdout (the bridge speaks MCP over stdio), runs in its own
process group so the launcher can sweep every helper process, and is tied to the spawning
thread's life with PR_SET_PDEATHSIG, so a SIGKILLed bridge leaves no orphan browser behind: spawn
on the thread that lives as long as the bridge (the main thread, which runs the event loop).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO, Literal

from .errors import BrowserNotFound

__all__ = [
    "ENV_BROWSER",
    "HEADLESS_WINDOW",
    "LOG_NAME",
    "LaunchOptions",
    "Spawned",
    "build_args",
    "check_browser_arg",
    "find_browser",
    "rmtree_retrying",
    "spawn",
]

_log = logging.getLogger("cdp_bridge.launcher")

ENV_BROWSER = "WEBMCP_BRIDGE_BROWSER"
_DEFAULT_PATHS = ("/usr/bin/chromium",)
_PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LOG_NAME = "chromium.log"
# Port 0: Chromium picks a free port and writes it to <profile>/DevToolsActivePort. No
# --remote-allow-origins: it only gates websocket clients that send an Origin header (websockets doesn't).
_PORT_FLAG = "--remote-debugging-port=0"
_PIPE_FLAG = "--remote-debugging-pipe"
PIPE_FDS = (3, 4)  # Chromium reads commands from fd 3 and writes to fd 4
_BASE_FLAGS = (
    "--no-first-run --no-default-browser-check --disable-background-networking "
    "--disable-component-update --disable-sync --disable-default-apps --disable-popup-blocking "
    "--password-store=basic --use-mock-keychain"
).split()
# Headless Chromium 156 still builds the address bar's suggestion popups, each a WebUI page in a
# renderer of its own ("browser_ui" targets): ~1 s of CPU in the first 1.5 s after launch, on the
# cores the start page then loads on. Nobody sees an address bar without a window.
_HEADLESS_OFF = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
HEADLESS_WINDOW = "--window-size=1280,863"
"""Headless Chromium's window: a 1280 x 720 viewport (Chromium 156 keeps 143 px of the window for
the browser's own bars), Playwright's. Chromium's own 800 x 600 leaves 780 x 437: pages laid out
for a tablet (a menu button for their nav bar), a cookie banner over a third of the page. A
`--window-size` among the extra arguments comes later and wins."""
CONNECT_TIMEOUT = 8
"""Seconds after which the launched browser gives up a TCP connect that no answer comes to."""
CONNECT_TIMEOUT_FEATURE = (
    f"TimeoutTcpConnectAttempt:TimeoutTcpConnectAttemptMin/{CONNECT_TIMEOUT}s"
    f"/TimeoutTcpConnectAttemptMax/{CONNECT_TIMEOUT}s"
)
"""A TCP connect that no answer comes to fails after 8 s, not Linux's 127 s of SYN retries.

A host behind a firewall that drops packets holds every page that loads a synchronous script
from it in its `<head>`: nothing renders until the connect fails (issue 41; on the article
corpus's mixed network, 2 of 30 pages rendered at 8 s instead of after 2 minutes). Chromium's
own feature, off by default; four SYNs go out within 8 s. A `--browser-arg` that names the
feature (to enable it with other values, or disable it) replaces this one."""
_CONNECT_TIMEOUT = CONNECT_TIMEOUT_FEATURE.split(":", 1)[0]


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


def build_args(options: LaunchOptions, executable: str, profile: str) -> list[str]:
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
    if _CONNECT_TIMEOUT not in {f.split(":", 1)[0].split("<", 1)[0] for f in (*features, *disabled)}:
        features.append(CONNECT_TIMEOUT_FEATURE)
    channel = _PIPE_FLAG if options.debugging == "pipe" else _PORT_FLAG
    args = [executable, channel, *_BASE_FLAGS, f"--user-data-dir={profile}"]
    if features:
        args.append("--enable-features=" + ",".join(dict.fromkeys(features)))
    if disabled:
        args.append("--disable-features=" + ",".join(dict.fromkeys(disabled)))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox on.
    if headless:
        args += ["--headless=new", "--disable-gpu", HEADLESS_WINDOW]
    if options.load_extension:
        ext = os.path.abspath(options.load_extension)
        args += [f"--load-extension={ext}", f"--disable-extensions-except={ext}"]
    # One URL, last: headless Chromium refuses several ("Multiple targets are not supported"), so
    # launch_browser opens the others over CDP; Debian's wrapper stops parsing at the first URL.
    return [*args, *extra, (options.start_urls or ["about:blank"])[0]]


def child_preexec(pipe_ends: tuple[int, int] | None) -> Callable[[], None]:
    """A preexec_fn: no signal blocked (the bridge blocks its stop signals while it starts, and a
    mask outlives exec), the debugging pipe's ends on fds 3 and 4, and (on Linux) SIGKILL asked
    for when the forking thread dies."""
    linux = sys.platform.startswith("linux")
    import fcntl  # POSIX only, like the debugging pipe itself; imported before the fork

    prctl = ctypes.CDLL(None, use_errno=True).prctl if linux else None  # looked up before fork
    parent = os.getpid()

    def preexec() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        if pipe_ends is not None:
            # Through fds >= 10 first: an end may itself sit on 3 or 4 and be overwritten.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in pipe_ends]
            for fd, target in zip(high, PIPE_FDS, strict=True):
                os.dup2(fd, target)
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # we already died between fork and prctl
                os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def rmtree_retrying(path: str, attempts: int = 10, pause: float = 0.1) -> None:
    """Remove `path`; Chromium's last helpers may still be writing into it for a moment."""
    for _ in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(pause)
    _log.warning("could not remove the browser's temporary directory %s", path)


def prepare(options: LaunchOptions) -> tuple[str, str, BinaryIO]:
    """Create the work dir, the profile dir and the log file (blocking)."""
    workdir = tempfile.mkdtemp(prefix="webmcp-bridge-")
    profile = options.user_data_dir or os.path.join(workdir, "profile")
    os.makedirs(profile, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):  # a kept profile may hold a stale one
        os.unlink(os.path.join(profile, "DevToolsActivePort"))
    return workdir, os.path.abspath(profile), open(os.path.join(workdir, LOG_NAME), "wb")


@dataclass
class Spawned:
    """A browser process `spawn` started, not yet waited on: `launcher.launch_browser` takes it over."""

    process: subprocess.Popen[bytes]
    executable: str
    profile: str
    workdir: str
    """Holds the log and, for a temporary profile, the profile itself."""
    pipe: tuple[int, int] | None
    """With `debugging="pipe"`: our ends of the debugging pipe (we read the first, write the second)."""
    taken: bool = False
    """Set by the launcher once it owns the process (it then stops it and removes `workdir`)."""

    def discard(self) -> None:
        """Stop a browser nobody took over, and remove what it left (blocking, bounded)."""
        if self.taken:
            return
        self.taken = True
        for fd in self.pipe or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        rmtree_retrying(self.workdir)


def spawn(options: LaunchOptions) -> Spawned:
    """Start the browser `options` describe, without waiting for it (blocking, a few ms).

    Raises:
        BrowserNotFound: no executable.
        ValueError: a switch of `options.extra_args` that may not be passed (`check_browser_arg`).
        OSError: it could not be started.
    """
    executable = find_browser(options.browser)
    workdir, profile, log = prepare(options)
    pipe_ends: tuple[int, int] | None = None  # the browser's ends: it reads the first, writes the second
    ours: tuple[int, int] | None = None
    try:
        args = build_args(options, executable, profile)
        if options.debugging == "pipe":
            to_browser, from_browser = os.pipe(), os.pipe()
            pipe_ends, ours = (to_browser[0], from_browser[1]), (from_browser[0], to_browser[1])
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,  # never our MCP stdio
            start_new_session=True,
            # fds 3 and 4 are open here (the pipes took the lowest free numbers), so they can be
            # kept; the preexec puts the browser's pipe ends on them before the others are closed.
            pass_fds=PIPE_FDS if pipe_ends else (),
            preexec_fn=child_preexec(pipe_ends),
        )
    except BaseException:
        for fd in (*(pipe_ends or ()), *(ours or ())):
            os.close(fd)
        rmtree_retrying(workdir)
        raise
    finally:
        log.close()  # the child holds its own copy
    for fd in pipe_ends or ():  # only the browser may hold them, or its exit would not end our reads
        os.close(fd)
    return Spawned(process, executable, profile, workdir, ours)
