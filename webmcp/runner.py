"""What `webmcp-bridge` runs once its command line is read (webmcp.cli): the browser opened (the
launched one taken over, or one attached to over `--cdp-url` or the extension's relay), the agent
side imported in a worker thread meanwhile, then webmcp.serve until the client or the browser goes.

webmcp.cli imports this module only after it has started the browser (`cdp_bridge.spawn`):
what it imports (the event loop, the connection, anyio) is paid for while Chromium starts.
"""

from __future__ import annotations

import gc
import importlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from urllib.parse import urlsplit

import anyio

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import LaunchOptions, can_tell_webmcp, check_webmcp, launch_browser
from cdp_bridge.reconnect import ReconnectingTransport
from cdp_bridge.relay import ExtensionRelay, load_pairing_code
from cdp_bridge.spawn import Spawned
from cdp_bridge.timeouts import Timeouts
from webmcp import tracemem
from webmcp.config import BridgeConfig
from webmcp.server.early import EarlyAnswers

__all__ = ["run"]

logger = logging.getLogger("webmcp_bridge")


def _cdp_ws_url(cdp_url: str, timeout: float, headers: dict[str, str] | None = None) -> str:
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url  # a farm's endpoint: used as given, query string (token, launch options) included
    import urllib.request  # only for --cdp-url http://…

    parts = urlsplit(cdp_url)
    version_url = parts._replace(path=parts.path.rstrip("/") + "/json/version").geturl()
    request = urllib.request.Request(version_url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310
        return str(json.load(reply)["webSocketDebuggerUrl"])


async def run(
    config: BridgeConfig, launch: tuple[LaunchOptions, Spawned] | None = None, early: EarlyAnswers | None = None
) -> None:
    """Run the bridge as `config` says until the client leaves, the browser goes away, or a signal arrives.

    `launch` is the browser webmcp.cli started for the command line (None when it attaches:
    `--cdp-url`, `--extension`), with the options it was started with; `early`, the answers it
    began on stdin (webmcp.server.early).
    """
    # Signals are caught from the first moment, so a Ctrl-C during launch still stops the
    # browser cleanly (the exit stack below closes it, shielded).
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, tg.cancel_scope)
        if trace := tracemem.requested():  # hidden debugging hook, off by default
            tg.start_soon(tracemem.dump_on_signal, trace)
        await _serve(config, launch, early)
        tg.cancel_scope.cancel()


async def _serve(
    config: BridgeConfig, launch: tuple[LaunchOptions, Spawned] | None, early: EarlyAnswers | None
) -> None:
    imports = _BackgroundImports()
    # The connection's own task group is entered (by the stack) inside this one, and left first.
    async with anyio.create_task_group() as tg:
        tg.start_soon(imports.run)
        async with AsyncExitStack() as stack:
            if config.browser.extension:
                # Clients connect as soon as the pairing code is printed: have the server loaded by then.
                await imports.server.wait()
            channel, checked = await _open_browser(config, stack, launch)
            connection = await stack.enter_async_context(channel)
            await imports.desktop.wait()
            from webmcp.serve import serve

            await serve(connection, config, server_loaded=imports.server, webmcp_checked=checked, early=early)


class _BackgroundImports:
    """Imports the agent side in a worker thread while the browser starts and loads the start pages.

    Half a second of Python at start-up is imports: the desktop (pydantic models, jsonschema)
    is needed once the browser answers, the MCP server (the mcp SDK, its types) only once the
    start pages have loaded. Each group's event is set when it is in `sys.modules`.
    """

    _DESKTOP = "webmcp.serve"
    _SERVER = ("webmcp.server.app", "webmcp.server.transport", "webmcp.uicontext.provider")

    def __init__(self) -> None:
        self.desktop = anyio.Event()
        self.server = anyio.Event()

    async def run(self) -> None:
        # The event loop's thread must not wait out the default 5 ms switch interval for the
        # GIL each time the browser answers while the importing thread runs.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, 0.0005))
        # The imports make ~120,000 objects that live as long as the process: the collections
        # they would trigger on the way (~8% of their CPU) free nearly nothing, and once they are
        # in, they are left out of every later collection (their few cycles of garbage are kept).
        collecting = gc.isenabled()
        gc.disable()
        try:
            await anyio.to_thread.run_sync(importlib.import_module, self._DESKTOP)
            logger.info("desktop imported")
            self.desktop.set()
            for name in self._SERVER:
                await anyio.to_thread.run_sync(importlib.import_module, name)
            gc.freeze()
            logger.info("MCP server imported")
            self.server.set()
        finally:
            sys.setswitchinterval(interval)
            if collecting:
                gc.enable()


async def _open_browser(
    config: BridgeConfig, stack: AsyncExitStack, launch: tuple[LaunchOptions, Spawned] | None
) -> tuple[AbstractAsyncContextManager[Connection], bool]:
    """The browser `config` names and its connection, not yet open; and whether
    WebMCP is checked already (False: `serve` checks it on the first start page)."""
    attach = config.browser
    timeouts = config.timeouts
    if attach.extension:
        return _extension_channel(attach.extension_port, timeouts), True
    if attach.cdp_url:
        headers = attach.headers()
        ws_url = await anyio.to_thread.run_sync(_cdp_ws_url, attach.cdp_url, timeouts.command, headers)
        await check_webmcp(ws_url, timeouts, headers=headers)
        if attach.cdp_reconnect:
            return _reconnecting_channel(ws_url, headers, timeouts), True
        return Connection.connect(ws_url, timeouts, headers=headers), True
    if launch is None:
        raise ValueError("a browser to launch comes started, with its options (webmcp.cli.launch_options)")
    options, spawned = launch
    # Over --remote-debugging-pipe: no other local process can reach this browser.
    browser = await launch_browser(options, timeouts, spawned)
    stack.push_async_callback(browser.close)
    logger.info("launched %s (pid %d), profile %s", browser.executable, browser.pid, browser.user_data_dir)
    if config.start_urls and can_tell_webmcp(config.start_urls[0]):
        # The first start page is a secure context: it shows whether WebMCP is on, so the
        # browser does not load a probe page (a renderer of its own) before it (serve.py).
        return browser.connect(timeouts), False
    await check_webmcp(browser, timeouts)
    logger.info("WebMCP is on in the browser")
    return browser.connect(timeouts), True


@asynccontextmanager
async def _reconnecting_channel(ws_url: str, headers: dict[str, str], timeouts: Timeouts) -> AsyncIterator[Connection]:
    """A connection that survives the far side dropping it (see cdp_bridge.reconnect)."""
    transport = await ReconnectingTransport.open(ws_url, headers, timeouts)
    async with Connection.open(transport, timeouts) as connection:
        yield connection


@asynccontextmanager
async def _extension_channel(port: int, timeouts: Timeouts) -> AsyncIterator[Connection]:
    """A connection through the extension's relay; windows appear once the extension pairs."""
    code = await anyio.to_thread.run_sync(load_pairing_code)
    async with ExtensionRelay.serve(code, "127.0.0.1", port) as relay:
        print(
            f"webmcp-bridge: waiting for the extension on ws://127.0.0.1:{relay.port}/  "
            f"pairing code: {code}  (enter it once in the extension's popup)",
            file=sys.stderr,
            flush=True,
        )
        async with Connection.open(relay, timeouts, close_transport=False) as connection:
            yield connection


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    with anyio.open_signal_receiver(*stops) as signals:
        # webmcp.cli blocks them while it starts the browser and imports the bridge: one sent
        # meanwhile is handled now, as any later one.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        async for signum in signals:
            logger.warning("received %s, shutting down", signal.Signals(signum).name)
            scope.cancel()
            return
