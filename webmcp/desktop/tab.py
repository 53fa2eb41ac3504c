"""A tab as a window: its page, its tool mirror, its dialog, and its semantic view.

A `Tab` turns CDP events of one page into window state. Content changes are noticed by a
MutationObserver that runs in an isolated world (the page can neither see nor call it),
plus navigation and load events; each marks the tab dirty, and a refresher task rebuilds
the view at a bounded rate, raising `version` only when the summary or blocks differ.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio

from cdp_bridge.ax import FrameNodes, collect_page
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.dialogs import JsDialog
from webmcp.desktop.mirror import ToolMirror
from webmcp.desktop.windows import WindowState
from webmcp.view.build import BlockIds, View, build_view
from webmcp.view.masking import SECRET_SELECTOR, mask_secrets
from webmcp.view.summary import summarize_tab

__all__ = ["BROWSER_ACTIONS", "Tab", "install_observer"]

logger = logging.getLogger(__name__)

BROWSER_ACTIONS = frozenset(
    {
        "focus",
        "navigate",
        "back",
        "forward",
        "reload",
        "close",
        "read_content",
        "screenshot",
        "accept",
        "dismiss",
    }
)
WORLD = "webmcp_bridge"
BINDING = "__webmcpBridgeDirty"
# Runs in an isolated world in every frame: the page cannot see it, call the binding, or fake a change.
_OBSERVER_JS = f"""(() => {{
  if (globalThis.__webmcpBridgeObserving) return; globalThis.__webmcpBridgeObserving = true;
  let timer = 0;
  const ping = () => {{ if (timer) return; timer = setTimeout(() => {{ timer = 0; {BINDING}(''); }}, 15); }};
  new MutationObserver(ping).observe(document, {{subtree: true, childList: true, characterData: true,
    attributes: true}});
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin'])
    document.addEventListener(type, ping, true);
  ping();
}})();"""

_REFRESH_MIN_INTERVAL = 0.05


async def install_observer(session: CDPSession) -> None:
    """Enable the domains a tab needs and the change observer, on a page or OOPIF session."""
    await session.send("Page.enable")
    # Runtime.bindingCalled is only reported while the Runtime domain is enabled.
    await session.send("Runtime.enable")
    await session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": _OBSERVER_JS, "worldName": WORLD, "runImmediately": True},
    )
    await session.send("WebMCP.enable")


class Tab:
    """One page target, published as the window `window.id`."""

    def __init__(self, window_id: str, page: PageTarget, timeouts: Timeouts, on_change: Callable[[], None]) -> None:
        self.page = page
        self.timeouts = timeouts
        self._on_change = on_change
        self.window = WindowState(id=window_id, title=page.title or page.url or "New tab")
        self.mirror = ToolMirror(set(BROWSER_ACTIONS), self._tools_changed)
        self.dialog: JsDialog | None = None
        self.op_lock = anyio.Lock()
        self._snapshot_lock = anyio.Lock()
        self._dirty = anyio.Event()
        self._doc_seq = 0
        self.ids = BlockIds()
        self.view: View | None = None
        self._page_blocks: list[dict[str, Any]] = []
        self._secret_values: frozenset[str] = frozenset()
        self.loading = True
        self.closed = False
        self.gone = anyio.Event()
        self.on_view: Callable[[Tab], None] = lambda _tab: None
        """Called after each rebuilt view (the bridge publishes in-page modals from it)."""
        self.window_opens = 0
        """How many times the page called window.open (or the like); tabs it opens arrive later."""

    @property
    def id(self) -> str:
        return self.window.id

    def watch(self, session: CDPSession) -> None:
        """Follow `session` (the page's own, or an OOPIF's) for tools, changes and navigation."""
        self.mirror.watch(session)
        session.on("Runtime.bindingCalled", lambda p: self.mark_dirty() if p.get("name") == BINDING else None)
        session.on("Page.frameNavigated", lambda p: self._navigated(session, p))
        session.on("Page.frameDetached", lambda p: self.mirror.drop_frames(lambda t: t.frame_id != p["frameId"]))
        session.on("Page.loadEventFired", lambda _p: self._loaded())
        session.on("Page.domContentEventFired", lambda _p: self.mark_dirty())
        session.on("Page.windowOpen", lambda _p: self._window_opened())

    def _window_opened(self) -> None:
        self.window_opens += 1

    def _tools_changed(self) -> None:
        self.mark_dirty()
        self._on_change()

    def _loaded(self) -> None:
        self.loading = False
        self.mark_dirty()

    def _navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = frame.get("id", "")
        if session is self.page.session and not frame.get("parentId"):
            self._doc_seq += 1
            self.loading = True
            self.mirror.interrupt_all("The tab navigated away while the tool was running.")
            self.mirror.drop_frames(lambda t: t.session is not session)
        else:
            self.mirror.interrupt_all(
                "The frame that holds the tool navigated while it was running.",
                only=lambda inv: inv.tool.frame_id == frame_id,
            )
            self.mirror.drop_frames(lambda t: t.frame_id != frame_id)
        self.mark_dirty()

    def mark_dirty(self) -> None:
        """Note that the page may have changed; the refresher rebuilds the view soon."""
        self._dirty.set()

    def title_changed(self) -> None:
        """The target's title or URL changed."""
        new_title = (self.view.title if self.view is not None else "") or self.page.title or self.page.url or "New tab"
        if new_title != self.window.title:
            self.window.title = new_title
            self._on_change()
        self.mark_dirty()

    async def run_refresher(self) -> None:
        """Rebuild the view whenever the page changed, at most every 50 ms, until the tab closes.

        So a page that mutates without pause costs at most 20 rebuilds a second, and its
        `version` (which moves only when summary or blocks differ) at most 20 bumps a second.
        Each tab has its own refresher: a slow page never delays another tab's view.
        """
        while not self.closed:
            await self._dirty.wait()
            if self.closed:
                return
            started = anyio.current_time()
            await self.refresh()
            # A huge page's AX tree takes seconds and holds its renderer meanwhile: pausing as
            # long as the build took leaves the page (and its tool calls) at least half the time.
            await anyio.sleep(max(_REFRESH_MIN_INTERVAL, anyio.current_time() - started))

    async def refresh(self) -> None:
        """Rebuild the view now (if anything changed since the last build)."""
        async with self._snapshot_lock:
            if not self._dirty.is_set():
                return
            self._dirty = anyio.Event()
            try:
                with anyio.fail_after(self.timeouts.snapshot):
                    view = await self._build_view()
            except CDPError as exc:
                # A navigation tore the document down under us; its next event retries.
                logger.debug("snapshot of %s failed: %s", self.id, type(exc).__name__)
                return
            except TimeoutError:
                # A huge or hung page: try again later (the refresher's pause bounds the rate).
                logger.debug("snapshot of %s timed out after %s s", self.id, self.timeouts.snapshot)
                if not self.closed:
                    self._dirty.set()
                return
            self._apply(view)
            self.on_view(self)

    async def _build_view(self) -> View:
        """Collect every frame of the page (OOPIFs through their own sessions) and build the view.

        Raises:
            CDPError: the main document could not be read (it is navigating or gone).
        """
        session = self.page.session
        prefix = str(self._doc_seq)
        main = await collect_page(session.send, prefix, secret_selector=SECRET_SELECTOR)
        frames: list[FrameNodes] = list(main.frames)
        values = set(main.secret_values)
        for target_id, frame_session in list(self.page.frame_sessions.items()):
            try:
                sub = await collect_page(frame_session.send, prefix, secret_selector=SECRET_SELECTOR, oopif=True)
                owner = await session.send("DOM.getFrameOwner", {"frameId": target_id})
            except CDPError:
                continue  # Mid-navigation or gone; its next change retries.
            if sub.frames and sub.frames[0].owner_backend_id is None:
                sub.frames[0].owner_backend_id = owner.get("backendNodeId")
            frames.extend(sub.frames)
            values |= sub.secret_values
        # Values live only here, in memory, to mask echoes; never logged, never published.
        self._secret_values = frozenset(values)
        return build_view(frames, self.ids, secret_values=values)

    def secret_values(self) -> frozenset[str]:
        """Current values of the page's secret inputs (all frames), as of the last snapshot."""
        return self._secret_values

    def mask(self, value: Any) -> Any:
        """`value` with every secret input's current value replaced by the mask."""
        return mask_secrets(value, self._secret_values)

    def _apply(self, view: View) -> None:
        if view.title and view.title != self.window.title:
            self.window.title = view.title
            self._on_change()
        summary = summarize_tab(self.window.title, self.page.url, view, len(self.mirror.tools), self.loading)
        self.view = view
        # Chromium leaves everything behind a showModal() dialog out of the AX tree; the page
        # is still there (inert, under the backdrop), so the tab keeps showing what it showed.
        if not view.modals:
            self._page_blocks = view.blocks
        page_blocks = self._page_blocks if view.modals else view.blocks
        # Like a browser's address bar: the agent always knows where the tab is.
        address = {"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.page.url}]}
        blocks = [address, *page_blocks]
        if summary != self.window.summary or blocks != self.window.blocks:
            self.window.summary = summary
            self.window.blocks = blocks
            self.window.version += 1
            self._on_change()

    def close(self) -> None:
        """The target went away: end the refresher and every call in flight."""
        self.closed = True
        self.gone.set()
        self._dirty.set()
        what = "crashed" if self.page.crashed else "closed"
        self.mirror.interrupt_all(f"The tab {what} while the tool was running.")
