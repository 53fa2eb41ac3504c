"""The bridge: browser pages and dialogs in, windows and window tools out.

`Bridge` listens to `BrowserTargets`, keeps one `Tab` per page target and one `JsDialog`
per open JavaScript dialog, and answers the three questions the MCP server asks: what
are the windows (`windows_json`), which tools are callable (`tool_specs`), and "call
this" (`call`, in `webmcp.actions`). Whenever anything it publishes changes it sets
`changed`, after the new state is readable.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import BrowserTargets, PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.dialogs import InPageModal, JsDialog
from webmcp.desktop.tab import Tab, install_observer
from webmcp.desktop.windows import IdMint, WindowState, operable_ids, top_of_chain
from webmcp.view.summary import dialog_blocks, dialog_summary, modal_summary

__all__ = ["Bridge"]

logger = logging.getLogger(__name__)

_DIALOG_TITLES = {"alert": "Alert", "confirm": "Confirm", "prompt": "Prompt", "beforeunload": "Leave page?"}


class Bridge:
    """Live model of the browser as seed-001 windows."""

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
        self._order: list[str] = []
        self._listeners: list[Callable[[], None]] = []
        self.targets = BrowserTargets(connection, task_group, self, self._setup_session)
        self.dialog_waiters: dict[str, anyio.Event] = {}
        """Tab window id → event set when a dialog opens there (a tool call waits on it)."""
        self.target_created = anyio.Event()
        """Set (and replaced) each time the browser announces a new page target."""
        self.opened_seq = 0
        self.opened_log: list[tuple[int, str, str]] = []
        """(sequence number, opener target id, new target id) of the latest pages opened by pages."""

    async def start(self) -> None:
        """Begin following the browser's pages."""
        self.connection.browser.on("Target.targetCreated", self._on_target_created)
        await self.targets.start()

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every change of the published state."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    # --- what the server publishes -------------------------------------------------

    def window_states(self) -> list[WindowState]:
        """Every window, in opening order."""
        states: list[WindowState] = []
        for window_id in self._order:
            tab = self.tabs.get(window_id)
            if tab is not None:
                states.append(tab.window)
                continue
            dialog = self.dialogs.get(window_id)
            if dialog is not None:
                states.append(dialog.window)
                continue
            modal = self.modals.get(window_id)
            if modal is not None:
                states.append(modal.window)
        return states

    def windows_json(self) -> dict[str, Any]:
        """The `app://windows` document (seed 001 §4.2).

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

    def tab_for_window(self, window_id: str) -> Tab | None:
        """The tab published as `window_id`."""
        return self.tabs.get(window_id)

    def tab_for_target(self, target_id: str) -> Tab | None:
        """The tab of a page target id."""
        return self._tab_by_target.get(target_id)

    # --- target events -------------------------------------------------------------

    async def _setup_session(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None and session is page.session:
            tab = Tab(self._ids.mint("tab"), page, self.timeouts, self._changed)
            tab.on_view = self.sync_modals
            self._tab_by_target[page.target_id] = tab
        if tab is None:
            return
        tab.watch(session)
        session.on("Page.javascriptDialogOpening", lambda p: self._dialog_opened(tab, session, p))
        session.on("Page.javascriptDialogClosed", lambda p: self._dialog_closed(tab, session, p))
        await install_observer(session)
        if session is page.session and page.url not in ("", "about:blank"):
            # A page that was already loaded when the bridge attached (--cdp-url).
            await tab.mirror.recover_child_frames(session)

    def _on_target_created(self, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        opener = info.get("openerId")
        created, self.target_created = self.target_created, anyio.Event()
        created.set()
        if info.get("type") == "page" and opener:
            self.opened_seq += 1
            self.opened_log.append((self.opened_seq, opener, info["targetId"]))
            del self.opened_log[:-256]

    def page_added(self, page: PageTarget) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None:
            return
        self.tabs[tab.id] = tab
        self._order.append(tab.id)
        tab.mark_dirty()
        self._tg.start_soon(tab.run_refresher)
        self._changed()

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
        if tab.id in self._order:
            self._order.remove(tab.id)
        for dialog_id in [d for d, dlg in self.dialogs.items() if dlg.tab_id == tab.id]:
            self._drop_dialog(dialog_id)
        for modal_id in [m for m, modal in self.modals.items() if modal.tab_id == tab.id]:
            self._drop_dialog(modal_id)
        self._changed()

    def frame_session_added(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is not None:
            tab.mark_dirty()

    # --- dialogs -------------------------------------------------------------------

    def _dialog_opened(self, tab: Tab, session: CDPSession, params: dict[str, Any]) -> None:
        kind = str(params.get("type", "alert"))
        message = str(params.get("message", ""))
        window = WindowState(
            id=self._ids.mint("dlg"),
            title=f"{_DIALOG_TITLES.get(kind, 'Dialog')} \u2014 {tab.window.title}",
            modal=True,
            owner_id=top_of_chain(self.window_states(), tab.id),
        )
        dialog = JsDialog(window, kind, message, str(params.get("defaultPrompt", "")), session, tab.id)
        window.summary = dialog_summary(kind, message)
        window.blocks = dialog_blocks(kind, message, dialog.default_prompt)
        tab.dialog = dialog
        self.dialogs[window.id] = dialog
        self._order.append(window.id)
        self._changed()
        waiter = self.dialog_waiters.get(tab.id)
        if waiter is not None:
            waiter.set()

    def _dialog_closed(self, tab: Tab, session: CDPSession, params: dict[str, Any]) -> None:
        dialog = tab.dialog
        if dialog is None or dialog.session is not session:
            return
        tab.dialog = None
        self._drop_dialog(dialog.window.id)
        tab.mark_dirty()
        self._changed()

    def _drop_dialog(self, dialog_id: str) -> None:
        self.dialogs.pop(dialog_id, None)
        self.modals.pop(dialog_id, None)
        if dialog_id in self._order:
            self._order.remove(dialog_id)

    def sync_modals(self, tab: Tab) -> None:
        """Publish the tab's open in-page modal dialogs as windows, after each view rebuild."""
        view = tab.view
        found = {m.key: m for m in getattr(view, "modals", None) or ()}
        mine = {m.key: m for m in self.modals.values() if m.tab_id == tab.id}
        changed = False
        for key, modal in mine.items():
            if key not in found:
                self._drop_dialog(modal.window.id)
                changed = True
        for key, seen in found.items():
            modal = mine.get(key)
            if modal is None:
                window = WindowState(
                    id=self._ids.mint("dlg"),
                    title=seen.title or "Dialog",
                    modal=True,
                    owner_id=top_of_chain(self.window_states(), tab.id),
                )
                backend = key[1] if isinstance(key, tuple) and isinstance(key[1], int) else None
                modal = InPageModal(window, tab.id, key, backend, frozenset(seen.backend_ids))
                self.modals[window.id] = modal
                self._order.append(window.id)
                changed = True
            modal.backend_ids = frozenset(seen.backend_ids)
            tools = sum(1 for t in tab.mirror.tools.values() if modal.owns(t))
            summary = modal_summary(seen.title, seen.blocks, tools)
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
            self._changed()

    def dialog_opened_event(self, tab: Tab) -> anyio.Event:
        """An event set when a JavaScript dialog opens on `tab` (one waiter per tab at a time)."""
        event = anyio.Event()
        self.dialog_waiters[tab.id] = event
        return event

    def forget_dialog_event(self, tab: Tab, event: anyio.Event) -> None:
        """Stop reporting dialogs of `tab` to `event`."""
        if self.dialog_waiters.get(tab.id) is event:
            self.dialog_waiters.pop(tab.id, None)

    async def unless_dialog(self, tab: Tab, work: Callable[[], Awaitable[Any]], timeout: float) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog opens on `tab`, or `timeout` passes.

        Returns (finished, value). A dialog (beforeunload before a navigation or close, an
        alert during a page's load) stops the wait: the page now waits for the agent.
        """
        if tab.dialog is not None:
            # One opened between two phases of an action (say, an alert as the new page loads).
            return False, None
        dialog_opened = self.dialog_opened_event(tab)
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
            self.forget_dialog_event(tab, dialog_opened)
        if "error" in outcome:
            raise outcome["error"]
        return "value" in outcome, outcome.get("value")

    def spawn(self, func: Callable[..., Any], *args: Any) -> None:
        """Run `func(*args)` in the bridge's task group (it outlives the calling request)."""
        self._tg.start_soon(func, *args)


async def safe_send(session: CDPSession, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send, returning None instead of raising when the target is already gone."""
    try:
        return await session.send(method, params, timeout=timeout)
    except CDPError as exc:
        logger.debug("%s failed: %s", method, exc)
        return None
