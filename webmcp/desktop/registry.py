"""The desktop: every window the bridge publishes, and the events that change them.

`Desktop` listens to `BrowserTargets`, keeps one `Tab` per page target, one `JsDialog`
per open JavaScript dialog and one `InPageModal` per open `<dialog>` (showModal), in
opening order. It answers what the server asks (the windows, one window by id) and calls
every `on_change` listener after each change of what it publishes, once the new state is
readable. Window operations live on the window objects; what they need from the desktop
(the browser session, racing work against a dialog, tabs a page opened) is here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.errors import CDPError
from cdp_bridge.reads import document_loaded
from cdp_bridge.targets import BrowserTargets, PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.dialogs import InPageModal, JsDialog
from webmcp.desktop.forms import PendingForm
from webmcp.desktop.live_view import frame_origins
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.tab import Tab, install_observer
from webmcp.desktop.windows import IdMint, WindowState, operable_ids, top_of_chain
from webmcp.view.summary import modal_summary

__all__ = ["Desktop", "Window"]

logger = logging.getLogger(__name__)

Window = Tab | JsDialog | InPageModal | PendingForm
"""Anything published as a window."""

_OPENED_KEEP = 256


class Desktop:
    """Live model of the browser as GUI-bridge windows."""

    def __init__(self, connection: Connection, task_group: TaskGroup, timeouts: Timeouts = Timeouts()) -> None:
        self.connection = connection
        self.timeouts = timeouts
        self._tg = task_group
        self._ids = IdMint()
        self.tabs: dict[str, Tab] = {}
        """Window id → tab, in opening order."""
        self._tab_by_target: dict[str, Tab] = {}
        self.dialogs: dict[str, JsDialog] = {}
        self.modals: dict[str, InPageModal] = {}
        """Window id → open in-page `<dialog>` (showModal) of some tab."""
        self.forms: dict[str, PendingForm] = {}
        """Window id → a declarative form filled for a call, waiting to be submitted."""
        self.policy = OriginPolicy()
        """Which URLs the agent may open and which pages are shown with content (docs/security.md)."""
        self.human_submit = False
        """When True, only the person at the browser may submit a waiting form (`--human-submit`)."""
        self._order: list[str] = []
        self._listeners: list[Callable[[], None]] = []
        self.targets = BrowserTargets(connection, task_group, self, self._setup_session)
        self._dialog_waiters: dict[str, anyio.Event] = {}
        self._opened_seq = 0
        self._opened: list[tuple[int, str, str]] = []
        """(sequence number, opener target id, new tab's window id) of the latest tabs pages opened."""
        self._tab_added = anyio.Event()

    @property
    def browser(self) -> CDPSession:
        """The browser-level CDP session."""
        return self.connection.browser

    async def start(self) -> None:
        """Begin following the browser's pages."""
        await self.targets.start()

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every change of the published state."""
        self._listeners.append(listener)

    def changed(self) -> None:
        """Tell every listener that the published state changed (it is readable now)."""
        for listener in list(self._listeners):
            listener()

    # --- what the server publishes -------------------------------------------------

    def window_states(self) -> list[WindowState]:
        """Every window, in opening order."""
        states: list[WindowState] = []
        for window_id in self._order:
            window = self.window(window_id)
            if window is not None:
                states.append(window.window)
        return states

    def window(self, window_id: str) -> Window | None:
        """The tab, dialog or in-page modal published as `window_id`."""
        return (
            self.tabs.get(window_id)
            or self.dialogs.get(window_id)
            or self.modals.get(window_id)
            or self.forms.get(window_id)
        )

    def windows_document(self) -> dict[str, Any]:
        """The `app://windows` document (GUI bridge §4.2 (docs/protocols.md#gui-4.2)).

        Each window's JSON object is reused while the window is unchanged (same version,
        title, owner and blocks list), so re-reading many idle tabs costs next to nothing.
        """
        states = self.window_states()
        cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = getattr(self, "_window_json_cache", {})
        fresh: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        windows: list[dict[str, Any]] = []
        for w in states:
            stamp = (w.version, w.title, w.modal, w.owner_id, w.summary, id(w.blocks))
            hit = cache.get(w.id)
            doc = hit[1] if hit is not None and hit[0] == stamp else w.to_json()
            fresh[w.id] = (stamp, doc)
            windows.append(doc)
        self._window_json_cache = fresh
        return {"operableWindowIds": operable_ids(states), "windows": windows}

    def tab_for_target(self, target_id: str) -> Tab | None:
        """The tab of a page target id."""
        return self._tab_by_target.get(target_id)

    # --- target events (TargetObserver) --------------------------------------------

    async def _setup_session(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None and session is page.session:
            tab = Tab(self._ids.mint("tab"), page, self)
            self._tab_by_target[page.target_id] = tab
        if tab is None:
            return
        tab.watch(session)
        session.on("Page.javascriptDialogOpening", lambda p: self._dialog_opened(tab, session, p))
        session.on("Page.javascriptDialogClosed", lambda p: self._dialog_closed(tab, session))
        await install_observer(session)
        tab.mirror.frame_origins.update(await frame_origins(session))
        if session is page.session and page.url not in ("", "about:blank"):
            # A page that was already loaded when the bridge attached (--cdp-url).
            await tab.mirror.recover_child_frames(session)
            # Its load event is past: ask once (after Page.enable, so a load still to come is heard).
            tab.loading = not await document_loaded(session, self.timeouts.command)

    def page_added(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None:
            return
        opener = self._tab_by_target.get(page.opener_id) if page.opener_id else None
        if opener is not None and opener.unsolicited_opens > 0:
            # A popup nobody asked for: closed before it is ever published.
            opener.unsolicited_opens -= 1
            opener.popups_closed += 1
            opener.mark_dirty()
            self.spawn(self._close_target, page.target_id)
            return
        self.tabs[tab.id] = tab
        self._order.append(tab.id)
        if page.opener_id:
            self._opened_seq += 1
            self._opened.append((self._opened_seq, page.opener_id, tab.id))
            del self._opened[:-_OPENED_KEEP]
        added, self._tab_added = self._tab_added, anyio.Event()
        added.set()
        tab.mark_dirty()
        self.spawn(tab.run_refresher, tab=tab)
        self.changed()

    async def _close_target(self, target_id: str) -> None:
        try:
            await self.browser.send("Target.closeTarget", {"targetId": target_id}, timeout=self.timeouts.command)
        except CDPError as exc:
            logger.debug("could not close an unsolicited popup: %s", exc)

    def page_changed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.title_changed()

    def page_removed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.pop(page.target_id, None)
        if tab is None:
            return
        tab.close()
        self.tabs.pop(tab.id, None)
        self._forget(tab.id)
        for window_id in [d for d, dlg in self.dialogs.items() if dlg.tab_id == tab.id]:
            self._forget(window_id)
        for window_id in [m for m, modal in self.modals.items() if modal.tab_id == tab.id]:
            self._forget(window_id)
        for window_id in [f for f, form in self.forms.items() if form.tab_id == tab.id]:
            self._forget(window_id)
        self.changed()

    def page_crashed(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None:
            return
        # A crashed renderer takes its dialogs and in-page modals with it.
        for window_id in [d for d, dlg in self.dialogs.items() if dlg.tab_id == tab.id]:
            self._forget(window_id)
        for window_id in [m for m, modal in self.modals.items() if modal.tab_id == tab.id]:
            self._forget(window_id)
        tab.renderer_crashed()

    def browser_lost(self, reason: str) -> None:
        """The browser went away: end every call in flight at once, on every tab."""
        for tab in list(self.tabs.values()):
            tab.mirror.interrupt_all(
                f"The browser went away during the call ({reason}); whether it took effect is unknown."
            )

    def frame_session_added(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.mark_dirty()

    # --- dialogs and modals --------------------------------------------------------

    def _dialog_opened(self, tab: Tab, session: CDPSession, params: dict[str, Any]) -> None:
        if tab.dialog_guard.stopped(tab.doc_seq):
            # The agent or user stopped this page's dialogs: answer it, publish nothing.
            tab.dialog_guard.suppressed += 1
            self.spawn(_answer_stopped_dialog, session, str(params.get("type", "alert")))
            tab.mark_dirty()
            return
        window_id = self._ids.mint("dlg")
        owner = top_of_chain(self.window_states(), tab.id)
        dialog = JsDialog.opened(window_id, owner, tab, session, params)
        dialog.repeated = tab.dialog_guard.opened(tab.doc_seq, anyio.current_time())
        tab.dialog = dialog
        self.dialogs[window_id] = dialog
        self._order.append(window_id)
        self.changed()
        waiter = self._dialog_waiters.get(tab.id)
        if waiter is not None:
            waiter.set()

    def _dialog_closed(self, tab: Tab, session: CDPSession) -> None:
        dialog = tab.dialog
        if dialog is None or dialog.session is not session:
            return
        tab.dialog = None
        self._forget(dialog.window.id)
        tab.mark_dirty()
        self.changed()

    def _forget(self, window_id: str) -> None:
        self.dialogs.pop(window_id, None)
        self.modals.pop(window_id, None)
        self.forms.pop(window_id, None)
        if window_id in self._order:
            self._order.remove(window_id)

    def sync_modals(self, tab: Tab) -> None:
        """Publish the tab's open in-page modal dialogs as windows, after each view rebuild."""
        view = tab.view
        shown = view is not None and tab.blocked() is None
        found = {m.key: m for m in (view.modals if shown and view is not None else ())}
        mine = {m.key: m for m in self.modals.values() if m.tab_id == tab.id}
        changed = False
        for key, modal in mine.items():
            if key not in found:
                self._forget(modal.window.id)
                changed = True
        for key, seen in found.items():
            known = mine.get(key)
            if known is not None:
                modal = known
            else:
                window = WindowState(
                    id=self._ids.mint("dlg"),
                    title=seen.title or "Dialog",
                    modal=True,
                    owner_id=top_of_chain(self.window_states(), tab.id),
                )
                backend = key[1] if isinstance(key, tuple) and isinstance(key[1], int) else None
                modal = InPageModal(window, tab, key, backend, frozenset(seen.backend_ids))
                self.modals[window.id] = modal
                self._order.append(window.id)
                changed = True
            modal.backend_ids = frozenset(seen.backend_ids)
            summary = modal_summary(seen.title, seen.blocks, len(modal.page_tools()))
            if (seen.title or "Dialog", summary, seen.blocks) != (
                modal.window.title,
                modal.window.summary,
                modal.window.blocks,
            ):
                modal.window.title = seen.title or "Dialog"
                modal.window.summary = summary
                modal.window.blocks = list(seen.blocks)
                modal.window.version += 1
                changed = True
        if changed:
            self.changed()

    def open_form(self, tab: Tab, tool: PageTool, invocation: Invocation) -> PendingForm:
        """Publish a form filled for `invocation` as a modal window over `tab`."""
        window = WindowState(
            id=self._ids.mint("dlg"), title="", modal=True, owner_id=top_of_chain(self.window_states(), tab.id)
        )
        form = PendingForm(window, tab, tool, invocation, agent_may_submit=not self.human_submit)
        self.forms[window.id] = form
        self._order.append(window.id)
        self.changed()
        return form

    def close_form(self, form: PendingForm) -> None:
        """The form was submitted or cancelled: its window goes."""
        if form.window.id in self.forms:
            self._forget(form.window.id)
            form.tab.mark_dirty()
            self.changed()

    def forms_of(self, tab: Tab) -> list[PendingForm]:
        """The waiting forms of `tab`."""
        return [f for f in self.forms.values() if f.tab is tab]

    def modals_of(self, tab: Tab) -> list[InPageModal]:
        """The in-page modal dialogs of `tab` now open, oldest first."""
        return [m for m in self.modals.values() if m.tab is tab]

    def is_published(self, window_id: str) -> bool:
        """True while `window_id` is one of the published windows."""
        return window_id in self._order

    async def unless_dialog(self, tab: Tab, work: Callable[[], Awaitable[Any]], timeout: float) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog opens on `tab`, or `timeout` passes.

        Returns (finished, value). A dialog (beforeunload before a navigation or close, an
        alert during a page's load) stops the wait: the page now waits for the agent.
        """
        if tab.dialog is not None:
            # One opened between two phases of an action (say, an alert as the new page loads).
            return False, None
        dialog_opened = anyio.Event()
        self._dialog_waiters[tab.id] = dialog_opened
        outcome: dict[str, Any] = {}
        try:
            with anyio.move_on_after(timeout):
                async with anyio.create_task_group() as tg:

                    async def _work() -> None:
                        # Kept and raised below: from inside the task group it would come out wrapped
                        # in an ExceptionGroup that no caller's `except ToolError` would catch.
                        try:
                            outcome["value"] = await work()
                        except Exception as exc:  # noqa: BLE001 - re-raised as is after the group
                            outcome["error"] = exc
                        tg.cancel_scope.cancel()

                    async def _dialog() -> None:
                        await dialog_opened.wait()
                        tg.cancel_scope.cancel()

                    tg.start_soon(_work)
                    tg.start_soon(_dialog)
        finally:
            if self._dialog_waiters.get(tab.id) is dialog_opened:
                del self._dialog_waiters[tab.id]
        if "error" in outcome:
            raise outcome["error"]
        return "value" in outcome, outcome.get("value")

    async def until_answered(self, tab: Tab, invocation: Invocation, timeout: float) -> None:
        """Wait until `invocation` settles, a JavaScript dialog opens on `tab`, or `timeout` passes.

        `unless_dialog` for the hot path of a page-tool call: one event that both the answer
        and a dialog set, where a task for each cost ~0.15 ms of every call.
        """
        if tab.dialog is not None or invocation.done.is_set():
            return
        wake = anyio.Event()
        self._dialog_waiters[tab.id] = wake
        invocation.wakers.append(wake)
        try:
            with anyio.move_on_after(timeout):
                await wake.wait()
        finally:
            invocation.wakers.remove(wake)
            if self._dialog_waiters.get(tab.id) is wake:
                del self._dialog_waiters[tab.id]

    # --- tabs opened by pages, and by the agent ------------------------------------

    async def settle_existing_tabs(self, timeout: float, *, expect_tab: bool) -> None:
        """Wait (bounded) until every page the browser has is a window with a view.

        A launched browser has its first blank tab; an attached one (--cdp-url) has the
        user's tabs, which may already be loaded. Each gets its first view built here, so
        the first read of app://windows shows what the pages show.
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
        async with anyio.create_task_group() as tg:
            for tab in list(self.tabs.values()):
                tg.start_soon(tab.catch_up, timeout)

    def opened_mark(self) -> int:
        """A mark to pass to `opened_since` later."""
        return self._opened_seq

    async def opened_since(self, opener: Tab, mark: int, expected: int, timeout: float) -> list[str]:
        """Window ids of tabs `opener` opened since `mark`, waiting (bounded) for `expected` of them.

        A page's window.open answers the page at once; the browser creates and the bridge
        sets up the target a moment later, or never when a popup blocker stops it.
        """

        def mine() -> list[str]:
            return [tab for seq, who, tab in self._opened if seq > mark and who == opener.page.target_id]

        with anyio.move_on_after(timeout):
            while len(mine()) < expected:
                await self._tab_added.wait()
        return mine()

    async def open_tab(self) -> Tab | None:
        """A new blank tab, once its session is set up; None if it did not come up in time.

        It starts blank so that nothing the page registers while loading is missed; the
        caller navigates it (`Tab.navigate`, which waits for the page to load).

        Raises:
            CDPError: the browser refused to create the tab.
        """
        page = await self.targets.create_page("about:blank", self.timeouts.navigation)
        return self.tab_for_target(page.target_id) if page is not None else None

    def spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, tab: Tab | None = None) -> None:
        """Run `func(*args)` in the desktop's task group (it outlives the calling request), supervised.

        Whatever a page makes such a task do, its failure is logged and noted on `tab`; it
        never ends the task group, and so never the bridge or the other windows.
        """
        self._tg.start_soon(self._supervised, func, args, tab)

    async def _supervised(
        self, func: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...], tab: Tab | None
    ) -> None:
        try:
            await func(*args)
        except Exception as exc:  # boundary: a background task of one page must not end the bridge
            logger.exception("background task %s failed", getattr(func, "__qualname__", func))
            if tab is not None:
                tab.fault(exc)


async def _answer_stopped_dialog(session: CDPSession, kind: str) -> None:
    """Answer a dialog of a page whose dialogs were stopped: dismiss, or Leave for beforeunload."""
    try:
        await session.send("Page.handleJavaScriptDialog", {"accept": kind == "beforeunload"})
    except CDPError as exc:
        logger.debug("could not answer a stopped dialog: %s", exc)
