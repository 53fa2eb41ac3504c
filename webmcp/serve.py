"""One browser's desktop served over MCP, until the client leaves or the browser goes.

`webmcp.runner` opens the DevTools connection (the launched browser, or one attached to) and
hands it to `serve`: the desktop follows its tabs, the command line's pages are loaded, and
only then is MCP served, so the first `tools/list` the server answers already holds those pages'
tools (over stdio, webmcp.server.early has answered a handshake client's `initialize` and first
`tools/list` meanwhile; the tools join it with `tools/list_changed`).
The desktop's imports (pydantic models, jsonschema) are this module's; the MCP server's (the
`mcp` SDK) are made only once the start pages have loaded. The command line imports both in a
worker thread, while the browser starts and the pages load (see webmcp.runner).
"""

from __future__ import annotations

import logging
import secrets
import sys

import anyio

from cdp_bridge.connection import Connection
from cdp_bridge.errors import BridgeError, CDPError
from cdp_bridge.launcher import check_webmcp, webmcp_on_page
from cdp_bridge.permissions import apply_permissions
from webmcp.config import BridgeConfig, DesktopConfig
from webmcp.desktop.downloads import MB, DownloadLimits, DownloadStore
from webmcp.desktop.live_view import WORLD
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.permissions import PermissionPolicy
from webmcp.desktop.registry import Desktop
from webmcp.desktop.tab import Tab
from webmcp.desktop.uploads import UploadFolder
from webmcp.errors import ToolError
from webmcp.server.early import EarlyAnswers

__all__ = ["BrowserGone", "serve"]

logger = logging.getLogger("webmcp_bridge")


async def serve(
    connection: Connection,
    config: BridgeConfig,
    *,
    server_loaded: anyio.Event | None = None,
    webmcp_checked: bool = True,
    early: EarlyAnswers | None = None,
) -> None:
    """Serve `connection`'s browser over MCP as `config` (the command line) says.

    `server_loaded` is set once the MCP side's modules are imported (webmcp.runner imports them
    in a worker thread while the start pages load); without it they are imported here.
    Unless `webmcp_checked`, whether the browser has WebMCP is checked once the start pages
    have loaded, before MCP is served (`check_start_page`). `early`, the answers webmcp.cli began
    on stdin, hands over to the stdio server.

    Raises:
        BrowserGone: the browser went away while it was served.
        WebMCPUnavailable: not `webmcp_checked`, and the browser has no WebMCP.
    """
    timeouts, rules = config.timeouts, config.desktop
    # The downloads' folder outlives the desktop's tasks: a temporary one is removed once they end.
    store = DownloadStore.opened(rules.download_dir, download_limits(rules))
    async with store as downloads, anyio.create_task_group() as tg:
        # Before any page is followed: a start page's first request already meets the settings.
        not_set = await apply_permissions(connection.browser, rules.grants, timeouts.command)
        desktop = Desktop(
            connection,
            tg,
            timeouts,
            policy=OriginPolicy(
                allow_local=rules.allow_local_schemes, allow=rules.allow_origins, block=rules.block_origins
            ),
            human_submit=rules.human_submit,
            page_actions=rules.page_actions,
            permissions=PermissionPolicy(rules.grants, not_set),
            uploads=UploadFolder.at(rules.upload_dir),
        )
        await desktop.follow_downloads(downloads)
        reuse_blank = config.browser.launched
        start_urls = list(config.start_urls)
        # The launched browser's first tab is the first start page's: it is read once that page is usable.
        desktop.hold_new_views(reuse_blank and bool(start_urls))
        await desktop.start()
        logger.info("following the browser's tabs")
        started = await open_start_pages(desktop, start_urls, reuse_blank=reuse_blank)
        if not webmcp_checked:
            await check_start_page(desktop, started[0] if started else None)
        logger.info("%d tab(s) ready; serving MCP", len(desktop.tabs))
        if server_loaded is not None:
            await server_loaded.wait()  # then the imports below only look up sys.modules
        from webmcp.server.app import build_server, run_notifier
        from webmcp.server.http_guard import HttpGuard
        from webmcp.server.transport import Broadcaster, serve_http, serve_stdio
        from webmcp.uicontext.provider import UIContext, declare

        broadcaster = Broadcaster(send_timeout=timeouts.notify)
        ui_context = UIContext(desktop)
        server = build_server(desktop, broadcaster, extra_resources=ui_context)
        experimental = declare(server)
        tg.start_soon(run_notifier, desktop, broadcaster)
        tg.start_soon(_stop_when_browser_goes, connection, desktop, tg.cancel_scope)
        if config.http is not None:
            http = config.http
            token = http.token or secrets.token_urlsafe(24)

            def announce(url: str) -> None:
                logger.info("serving MCP on %s", url)
                # Said where a person reads it when they cannot know it otherwise: a token made up
                # here, a port the system chose (`--http 127.0.0.1:0`). A token they gave is not repeated.
                if not http.token:
                    print(f"webmcp-bridge: MCP at {url}  bearer token: {token}", file=sys.stderr, flush=True)
                elif http.port == 0:
                    print(f"webmcp-bridge: MCP at {url}", file=sys.stderr, flush=True)

            await serve_http(
                server,
                broadcaster,
                host=http.host,
                port=http.port,
                token=token,
                experimental=experimental,
                guard=HttpGuard.from_config(http),
                announce=announce,
            )
        else:
            logger.info("serving MCP on stdio")
            await serve_stdio(server, broadcaster, experimental=experimental, early=early)
        tg.cancel_scope.cancel()
    if connection.closed.is_set() and not connection.close_reason.startswith("the bridge closed"):
        raise BrowserGone(connection.close_reason)


def download_limits(rules: DesktopConfig) -> DownloadLimits:
    """The caps `--download-limit` and `--download-total-limit` set, from MB to bytes."""
    return DownloadLimits(each=int(rules.download_limit_mb * MB), total=int(rules.download_total_limit_mb * MB))


START_BUDGET = 3.0
"""How long start-up waits for the command line's pages to become usable before MCP is served (s)."""


async def check_start_page(desktop: Desktop, tab: Tab | None) -> None:
    """Raise WebMCPUnavailable unless the browser has WebMCP, asked of the first start page.

    That page (a secure context, see `can_tell_webmcp`) answers in one round trip, in the
    bridge's isolated world. Only when it cannot say yes (it did not load, it was sent
    elsewhere, it withholds the API, or a dialog or sign-in holds it) does a probe page tell,
    as a hidden target that never becomes a tab.

    Raises:
        WebMCPUnavailable: the browser runs without WebMCP (the message says what to install).
    """
    found: bool | None = None
    timeouts = desktop.timeouts
    # A page under a JavaScript dialog or a sign-in answers nothing until someone answers them
    # (it held start-up for the whole command timeout): the probe page tells instead. So does a
    # tab whose start page has not committed (a server that accepted and never answered):
    # Chromium answers no isolated world for it until the navigation ends, and it held the
    # client's `initialize` for the whole command timeout (13.8-14.1 s, issue 41).
    if tab is not None and _may_ask(tab):
        try:
            found = await webmcp_on_page(tab.page.session, tab.page.target_id, WORLD, min(timeouts.command, _ASK_PAGE))
        except CDPError as exc:  # navigating or gone, or busy: the probe tells
            logger.debug("the start page could not be asked about WebMCP: %s", exc)
    if not found:
        await check_webmcp(desktop.connection, timeouts, launched=True, claim=desktop.targets.leave_alone)
    logger.info("WebMCP is on in the browser")


_ERROR_READ = 1.0
"""How long a start page that failed gets for its error page to be read before MCP is served (s)."""
_ASK_PAGE = 1.0
"""How long the first start page gets to say whether it has WebMCP before the probe page tells (s)."""


def _may_ask(tab: Tab) -> bool:
    """The tab shows a start page of its own that can answer now: not blank, not replaced, not held."""
    return (
        tab.dialog is None
        and not tab.prompt_ids()
        and not tab.replacing_document
        and tab.address not in ("", "about:blank")
    )


async def open_start_pages(desktop: Desktop, urls: list[str], *, reuse_blank: bool) -> list[Tab]:
    """Before MCP is served: every tab is a window, and the command line's pages are on their way.

    So the server's first tools/list and app://windows already hold the tools of the pages that
    came up. MCP is served after at most `START_BUDGET` seconds, however slow a start page's
    server is (one that never answers included): a page not usable by then is listed as
    loading, and goes on loading; its tools come with tools/list_changed. Returns the tabs
    the pages were sent to, in the order of `urls`.
    """
    timeouts = desktop.timeouts
    # The browser we launched starts with one blank tab: the first URL goes there, unread before.
    first_in_blank = reuse_blank and bool(urls)
    await desktop.settle_existing_tabs(timeouts.launch, expect_tab=reuse_blank, blank_replaced=first_in_blank)
    logger.info("the browser's tabs are windows")
    pending = list(urls)
    targets: list[tuple[Tab, str]] = []
    if first_in_blank and (blank := desktop.blank_tab()) is not None:
        targets.append((blank, pending.pop(0)))
    # Until a start page is usable, its tab reads nothing in the background (`Desktop.hold_new_views`).
    desktop.hold_new_views(True)
    for url in pending:
        tab = await desktop.open_tab()
        if tab is not None:
            targets.append((tab, url))
    desktop.hold_new_views(False)
    desktop.release_views(keep=[tab for tab, _ in targets])
    if not targets:
        return []
    left = len(targets)
    all_usable = anyio.Event()

    async def load(tab: Tab, url: str) -> None:
        nonlocal left
        try:
            failed = False
            try:
                async with tab.op_lock:
                    await tab.navigate(url)
            except ToolError as exc:
                logger.warning("could not open %s: %s", url, exc.message)
                failed = True
            finally:
                tab.expect("")  # from now on the tab shows what it shows
                tab.release_view()
            if failed:
                # Chromium's error page says what failed (refused, no such host, a redirect loop):
                # the first state shows it rather than a page with nothing read yet.
                await tab.catch_up(_ERROR_READ)
        finally:
            left -= 1
            if not left:
                all_usable.set()

    for tab, url in targets:
        tab.expect(url)
        desktop.spawn(load, tab, url, on_fault=tab.fault)
    with anyio.move_on_after(START_BUDGET):
        await all_usable.wait()
    desktop.release_views()  # a page still loading is followed as it renders from now on
    if left:
        logger.info("%d start page(s) still loading; serving MCP meanwhile", left)
    return [tab for tab, _ in targets]


class BrowserGone(BridgeError):
    """The browser went away while the bridge served it; the bridge stops with status 1."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the browser went away ({reason}); every pending call was answered with call_interrupted, "
            "and the bridge stopped."
        )


_ANSWER_GRACE = 0.5
"""After the browser dies, how long the answers to interrupted calls get to reach their clients."""


async def _stop_when_browser_goes(connection: Connection, desktop: Desktop, scope: anyio.CancelScope) -> None:
    await connection.closed.wait()
    logger.error("the browser went away (%s); stopping", connection.close_reason)
    # Calls waiting on the page end now with a structured error; calls waiting on a CDP
    # command already failed with the connection. Their answers are written before the
    # transports are torn down, so no client sees a bare "stream ended".
    desktop.browser_lost(connection.close_reason)
    await anyio.sleep(_ANSWER_GRACE)
    scope.cancel()
