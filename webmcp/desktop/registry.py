"""The desktop: the registry of every window the bridge publishes, and the router of target events.

`Desktop` listens to `BrowserTargets` and keeps one `Tab` per page target; the modal
windows a tab opens (JavaScript dialogs, in-page `<dialog>`s, waiting forms) are published
here by the tab's modal stack (`publish_modal`). It answers what the server asks (the
windows, one window by id) and calls every `on_change` listener after each change of what
it publishes, once the new state is readable. Windows own their state and operations; what
they may ask of the desktop is `ports.DesktopLink`, which this class implements.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, cast

import anyio
from anyio.abc import TaskGroup

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import BrowserTargets, PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.dialogs import InPageModal, JsDialog
from webmcp.desktop.downloads import DownloadStore
from webmcp.desktop.file_chooser import FileChooser
from webmcp.desktop.forms import PendingForm
from webmcp.desktop.memory import GiveBack, KeptReads
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.permissions import PermissionPolicy
from webmcp.desktop.ports import OnFault, W
from webmcp.desktop.refresher import FLUSH_LIMIT
from webmcp.desktop.secret_values import current_secrets
from webmcp.desktop.sign_in import SignInPrompt
from webmcp.desktop.tab import Tab
from webmcp.desktop.uploads import UploadFolder
from webmcp.desktop.windows import IdMint, WindowState, operable_ids, top_of_chain
from webmcp.errors import best_effort
from webmcp.models import notice_block
from webmcp.view.masking import mask_secrets

__all__ = ["Desktop", "Window"]

logger = logging.getLogger(__name__)

Window = Tab | JsDialog | InPageModal | PendingForm | SignInPrompt | FileChooser
"""Anything published as a window."""

_OPENED_KEEP = 256


class Desktop:
    """Live model of the browser as GUI-bridge windows."""

    def __init__(
        self,
        connection: Connection,
        task_group: TaskGroup,
        timeouts: Timeouts = Timeouts(),
        *,
        policy: OriginPolicy = OriginPolicy(),
        human_submit: bool = False,
        page_actions: bool = True,
        permissions: PermissionPolicy = PermissionPolicy(),
        uploads: UploadFolder = UploadFolder(),
    ) -> None:
        """The desktop of `connection`'s browser, its tasks in `task_group`; its rules are fixed
        here, before any page is followed (webmcp.serve gives the command line's)."""
        self.connection = connection
        self._timeouts = timeouts
        self._tg = task_group
        self._give_back = GiveBack(task_group)
        """Hands the memory of closed tabs back to the system once a run of closes is over."""
        self.kept_reads = KeptReads()
        """The tabs whose last read keeps its nodes, to read only what changed (the ones read last)."""
        self._ids = IdMint()
        self._windows: dict[str, Window] = {}
        """Window id → every published window, in opening order."""
        self._tab_by_target: dict[str, Tab] = {}
        self._policy = policy
        self._human_submit = human_submit
        self._page_actions = page_actions
        self._permissions = permissions
        self._uploads = uploads
        self._downloads: DownloadStore | None = None
        self._listeners: list[Callable[[], None]] = []
        self.targets = BrowserTargets(connection, task_group, self, self._setup_session)
        self._opened_seq = 0
        self._opened: list[tuple[int, str, str]] = []
        """(sequence number, opener target id, new tab's window id) of the latest tabs pages opened."""
        self._tab_added = anyio.Event()
        self._holding = False
        self._held: list[Tab] = []
        """Tabs whose refresher waits for `release_views` (the command line's pages, loading)."""
        self._json_cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    @property
    def timeouts(self) -> Timeouts:
        return self._timeouts

    @property
    def browser(self) -> CDPSession:
        """The browser-level CDP session."""
        return self.connection.browser

    # --- the rules it was built with (read by its tabs through ports.DesktopLink) ----------

    @property
    def policy(self) -> OriginPolicy:
        """Which URLs the agent may open and which pages are shown with content (docs/security.md)."""
        return self._policy

    @property
    def human_submit(self) -> bool:
        """When True, only the person at the browser may submit a waiting form (`--human-submit`)."""
        return self._human_submit

    @property
    def page_actions(self) -> bool:
        """When False, tabs offer no window actions (fill, press, submit): `--no-page-actions`."""
        return self._page_actions

    @property
    def permissions(self) -> PermissionPolicy:
        """The browser's permission settings as `serve` made them (`--grant`)."""
        return self._permissions

    @property
    def uploads(self) -> UploadFolder:
        """The only folder agents may hand files from to a file chooser (`--upload-dir`; none by default)."""
        return self._uploads

    @property
    def downloads(self) -> DownloadStore | None:
        """Where the pages' downloads go, and their caps (`follow_downloads`); None: not followed."""
        return self._downloads

    async def start(self) -> None:
        """Begin following the browser's pages."""
        await self.targets.start()

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every change of the published state."""
        self._listeners.append(listener)

    @contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        """Within the block, `listener()` is called after every change of the published state."""
        self._listeners.append(listener)
        try:
            yield
        finally:
            self._listeners.remove(listener)

    def changed(self) -> None:
        """Tell every listener that the published state changed (it is readable now)."""
        for listener in list(self._listeners):
            listener()

    # --- what the server publishes -----------------------------------------------------

    @property
    def tabs(self) -> dict[str, Tab]:
        """Window id → tab, in opening order."""
        return {wid: w for wid, w in self._windows.items() if isinstance(w, Tab)}

    def window_states(self) -> list[WindowState]:
        """Every window, in opening order."""
        return [w.window for w in self._windows.values()]

    def window(self, window_id: str) -> Window | None:
        """The tab, dialog, in-page modal or waiting form published as `window_id`."""
        return self._windows.get(window_id)

    async def fresh_reads(self, budget: float) -> frozenset[str]:
        """Until every tab's window shows the changes its page made before now, within `budget`
        (side by side; a tab whose page reported nothing lately costs nothing): the ids of the
        windows still behind then (`windows_document(behind=)` says so in them). First the reports of
        the changes pages made before now are let arrive (`Tab.flush`)."""
        tabs = list(self.tabs.values())
        if len(tabs) == 1:
            await tabs[0].flush(min(budget, FLUSH_LIMIT))
        elif tabs:
            async with anyio.create_task_group() as tg:
                for tab in tabs:
                    tg.start_soon(tab.flush, min(budget, FLUSH_LIMIT))
        late = [tab for tab in tabs if not tab.is_fresh()]
        if not late:
            return frozenset()
        behind: set[str] = set()

        async def fresh(tab: Tab) -> None:
            if not await tab.fresh(budget):
                behind.add(tab.id)

        async with anyio.create_task_group() as tg:
            for tab in late:
                tg.start_soon(fresh, tab)
        return frozenset(behind)

    def windows_document(self, behind: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The `app://windows` document (GUI bridge §4.2 (docs/protocols.md#gui-4.2)).

        Every text in it (titles, summaries, dialog messages, blocks) is masked with the values
        of every tab's secret fields as of their last read, so a page that quotes a password in
        its title or a dialog does not publish it. Each window's JSON object is reused while the
        window and those values are unchanged (same version, title, owner and blocks list), so
        re-reading many idle tabs costs next to nothing.
        """
        states = self.window_states()
        secrets = self.known_secrets()
        fresh: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        windows: list[dict[str, Any]] = []
        for w in states:
            stamp = (w.version, w.title, w.modal, w.owner_id, w.summary, id(w.blocks), secrets)
            hit = self._json_cache.get(w.id)
            doc = hit[1] if hit is not None and hit[0] == stamp else _masked_json(w, secrets)
            fresh[w.id] = (stamp, doc)
            windows.append(_behind(doc) if w.id in behind else doc)
        self._json_cache = fresh
        return {"operableWindowIds": operable_ids(states), "windows": windows}

    def known_secrets(self) -> frozenset[str]:
        """The values of every tab's secret fields as of its last read (memory only, to mask what leaves)."""
        return frozenset().union(*(t.secret_values() for t in self.tabs.values()))

    async def secrets_for(self, window_id: str, *, live: bool = True) -> frozenset[str]:
        """`known_secrets`, and with `live` those the page of `window_id`'s tab holds right now.

        A modal window's tab is the one at the root of its owner chain; for `app` or a window
        that is gone there is no page to ask.
        """
        window = self._windows.get(window_id)
        for _ in range(len(self._windows)):
            if window is None or isinstance(window, Tab):
                break
            window = self._windows.get(window.window.owner_id or "")
        known = self.known_secrets()
        if not live or not isinstance(window, Tab):
            return known
        return known | await current_secrets(window, timeout=self._timeouts.command)

    def tab_for_target(self, target_id: str) -> Tab | None:
        """The tab of a page target id."""
        return self._tab_by_target.get(target_id)

    async def follow_downloads(self, store: DownloadStore) -> None:
        """Save the browser's downloads in `store`'s folder and list each on the tab whose page began it."""
        self._downloads = store
        await store.start(self.browser, self._tab_of_frame, self._downloads_changed, self.spawn)

    def _tab_of_frame(self, frame_id: str) -> str | None:
        # A page's main frame has its target's id; an iframe's is known to its tab's mirror.
        tab = self._tab_by_target.get(frame_id) or next(
            (t for t in self._tab_by_target.values() if t.has_frame(frame_id)), None
        )
        return tab.id if tab is not None else None

    def _downloads_changed(self, tab_id: str | None) -> None:
        tab = self._windows.get(tab_id or "")
        if isinstance(tab, Tab):
            tab.downloads_changed()

    # --- what windows may ask (ports.DesktopLink) --------------------------------------

    def publish_modal(self, tab_id: str, title: str, make: Callable[[WindowState], W]) -> W:
        """Mint a modal window over the top of `tab_id`'s chain, `make` its object, publish it."""
        owner = top_of_chain(self.window_states(), tab_id)
        window = make(WindowState(id=self._ids.mint("dlg"), title=title, modal=True, owner_id=owner))
        self._windows[window.window.id] = cast(Window, window)
        self.changed()
        return window

    def forget(self, window_id: str) -> None:
        """`window_id` is no longer published; a modal window over it now lies over its owner.

        (A waiting form's submit may open a `<dialog>` over the form, and the form's window
        closes a moment later: the dialog stays modal over the tab, never owned by a window
        that is gone.)
        """
        gone = self._windows.pop(window_id, None)
        if gone is None:
            return
        for other in self._windows.values():
            other.window.owner_closed(gone.window)

    async def browser_send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.browser.send(method, params)

    def opened_mark(self) -> int:
        """A mark to pass to `opened_since` later."""
        return self._opened_seq

    async def opened_since(self, opener_target_id: str, mark: int, expected: int, timeout: float) -> list[str]:
        """Window ids of tabs the page of `opener_target_id` opened since `mark`, waiting (bounded) for `expected`.

        A page's window.open answers the page at once; the browser creates and the bridge
        sets up the target a moment later, or never when a popup blocker stops it.
        """

        def mine() -> list[str]:
            return [tab for seq, who, tab in self._opened if seq > mark and who == opener_target_id]

        with anyio.move_on_after(timeout):
            while len(mine()) < expected:
                await self._tab_added.wait()
        return mine()

    def spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, on_fault: OnFault | None = None) -> None:
        """Run `func(*args)` in the desktop's task group (it outlives the calling request), supervised.

        Whatever a page makes such a task do, its failure is logged and told to `on_fault`
        (its tab shows it); it never ends the task group, and so never the bridge or the
        other windows.
        """
        self._tg.start_soon(self._supervised, func, args, on_fault)

    async def _supervised(
        self, func: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...], on_fault: OnFault | None
    ) -> None:
        try:
            await func(*args)
        except Exception as exc:  # boundary: a background task of one page must not end the bridge
            logger.exception("background task %s failed", getattr(func, "__qualname__", func))
            if on_fault is not None:
                on_fault(exc)

    # --- target events (TargetObserver) ------------------------------------------------

    async def _setup_session(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None and session is page.session:
            tab = Tab(self._ids.mint("tab"), page, self)
            self._tab_by_target[page.target_id] = tab
            if self._holding:
                tab.hold_view()
                self._held.append(tab)
        if tab is not None:
            await tab.attach(session)

    def page_added(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None:
            return
        opener = self._tab_by_target.get(page.opener_id) if page.opener_id else None
        if opener is not None and opener.take_unsolicited_popup():
            # A popup nobody asked for: closed before it is ever published.
            self.spawn(self._close_target, page.target_id)
            return
        self._windows[tab.id] = tab
        if page.opener_id:
            self._opened_seq += 1
            self._opened.append((self._opened_seq, page.opener_id, tab.id))
            del self._opened[:-_OPENED_KEEP]
        added, self._tab_added = self._tab_added, anyio.Event()
        added.set()
        tab.mark_dirty()
        self.spawn(tab.run, on_fault=tab.fault)
        self.changed()

    async def _close_target(self, target_id: str) -> None:
        with best_effort(logger, "could not close an unsolicited popup"):
            await self.browser.send("Target.closeTarget", {"targetId": target_id}, timeout=self._timeouts.command)

    def page_changed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.title_changed()

    def page_removed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.pop(page.target_id, None)
        if tab is None:
            return
        tab.close()  # its modal windows go with it
        self.forget(tab.id)
        self.changed()
        self._give_back.closed()

    def page_crashed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.renderer_crashed()

    def browser_lost(self, reason: str) -> None:
        """The browser went away: end every call in flight at once, on every tab."""
        for tab in list(self._tab_by_target.values()):
            tab.interrupt_calls(f"The browser went away during the call ({reason}); whether it took effect is unknown.")

    def frame_session_added(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.mark_dirty()

    # --- tabs opened by the agent, and the first view --------------------------------------

    def hold_new_views(self, hold: bool) -> None:
        """While `hold`, a tab that comes reads nothing in the background until `release_views`.

        For the start pages: until MCP is served no client sees a window, and a read while a
        page loads only competes with it for the renderer (each navigation still reads its page
        once it is usable).
        """
        self._holding = hold

    def release_views(self, keep: Container[Tab] = ()) -> None:
        """Every held tab but those in `keep` follows its page again."""
        for tab in [t for t in self._held if t not in keep]:
            self._held.remove(tab)
            tab.release_view()

    def blank_tab(self) -> Tab | None:
        """The first tab showing nothing (about:blank), if any: a launched browser's first tab."""
        return next((t for t in self.tabs.values() if t.page.url in ("", "about:blank")), None)

    async def settle_existing_tabs(self, timeout: float, *, expect_tab: bool, blank_replaced: bool = False) -> None:
        """Wait (bounded) until every page the browser has is a window with a view.

        A launched browser has its first blank tab; an attached one (--cdp-url) has the
        user's tabs, which may already be loaded. Each gets its first view built here, so
        the first read of app://windows shows what the pages show; with `blank_replaced`, but
        the blank tab (`blank_tab`) that the first start page is about to replace.
        """
        with anyio.move_on_after(timeout):
            while True:
                try:
                    reply = await self.browser.send("Target.getTargets", timeout=timeout)
                except CDPError as exc:
                    # No browser behind the connection yet (the extension has not paired): nothing to wait for.
                    logger.info("no tabs to settle yet: %s", exc)
                    break
                pages = [t["targetId"] for t in reply.get("targetInfos", ()) if t.get("type") == "page"]
                for target_id in pages:
                    await self.targets.wait_attached(target_id, timeout)
                if pages or not expect_tab:
                    break
                await self._tab_added.wait()  # a launched browser may not have opened its first tab yet
        skipped = self.blank_tab() if blank_replaced else None
        async with anyio.create_task_group() as tg:
            for tab in list(self.tabs.values()):
                if tab is not skipped:
                    tg.start_soon(tab.catch_up, timeout)

    async def open_tab(self) -> Tab | None:
        """A new blank tab, once its session is set up; None if it did not come up in time.

        It starts blank so that nothing the page registers while loading is missed; the
        caller navigates it (`Tab.navigate`, which waits for the page to load).

        Raises:
            CDPError: the browser refused to create the tab.
        """
        page = await self.targets.create_page("about:blank", self._timeouts.navigation)
        return self.tab_for_target(page.target_id) if page is not None else None


BEHIND_NOTICE = (
    "The page changed after this view was read, and it could not be read again in time (it changes "
    "without pause, or it is busy): re-read app://windows for what it shows now."
)


def _behind(doc: dict[str, Any]) -> dict[str, Any]:
    """A window's JSON object saying, after its address, that its page changed since it was read."""
    blocks = list(doc["blocks"])
    at = 1 if blocks and blocks[0].get("id") == "address" else 0
    blocks.insert(at, notice_block("behind", "warn", BEHIND_NOTICE))
    return {**doc, "blocks": blocks}


def _masked_json(window: WindowState, secrets: frozenset[str]) -> dict[str, Any]:
    """The window's JSON object with its page-made texts masked (its ids and version are the bridge's)."""
    doc = window.to_json()
    if secrets:
        doc.update(mask_secrets({k: doc[k] for k in ("title", "summary", "blocks")}, secrets))
    return doc
