"""The bridge: browser pages and dialogs in, windows and window tools out.

`Bridge` listens to `BrowserTargets`, keeps one `Tab` per page target and one `JsDialog`
per open JavaScript dialog, and answers the three questions the MCP server asks: what
are the windows (`windows_json`), which tools are callable (`tool_specs`), and "call
this" (`call`, in `webmcp.actions`). Whenever anything it publishes changes it sets
`changed`, after the new state is readable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import BrowserTargets, PageTarget
from cdp_bridge.timeouts import Timeouts

from .tabs import JsDialog, Tab, install_observer
from .windows import IdMint, WindowState, operable_ids

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
        self._order: list[str] = []
        self._listeners: list[Callable[[], None]] = []
        self.targets = BrowserTargets(connection, task_group, self, self._setup_session)
        self.dialog_waiters: dict[str, anyio.Event] = {}
        """Tab window id → event set when a dialog opens there (a tool call waits on it)."""
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
        return states

    def windows_json(self) -> dict[str, Any]:
        """The `app://windows` document (seed 001 §4.2)."""
        states = self.window_states()
        return {"operableWindowIds": operable_ids(states), "windows": [w.to_json() for w in states]}

    def tab_for_window(self, window_id: str) -> Tab | None:
        """The tab published as `window_id`."""
        return self.tabs.get(window_id)

    def owner_tab(self, dialog: JsDialog) -> Tab | None:
        """The tab a dialog belongs to."""
        return self.tabs.get(dialog.window.owner_id or "")

    def tab_for_target(self, target_id: str) -> Tab | None:
        """The tab of a page target id."""
        return self._tab_by_target.get(target_id)

    # --- target events -------------------------------------------------------------

    async def _setup_session(self, page: PageTarget, session: CDPSession) -> None:
        tab = self._tab_by_target.get(page.target_id)
        if tab is None and session is page.session:
            tab = Tab(self._ids.mint("tab"), page, self.timeouts, self._changed)
            self._tab_by_target[page.target_id] = tab
        if tab is None:
            return
        tab.watch(session)
        session.on("Page.javascriptDialogOpening", lambda p: self._dialog_opened(tab, session, p))
        session.on("Page.javascriptDialogClosed", lambda p: self._dialog_closed(tab, session, p))
        await install_observer(session)

    def _on_target_created(self, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        opener = info.get("openerId")
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
        for dialog_id in [d for d, dlg in self.dialogs.items() if dlg.window.owner_id == tab.id]:
            self._drop_dialog(dialog_id)
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
            owner_id=tab.id,
        )
        dialog = JsDialog(window, kind, message, str(params.get("defaultPrompt", "")), session)
        window.summary = _dialog_summary(kind, message)
        window.blocks = _dialog_blocks(window.id, kind, message, dialog.default_prompt)
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
        if dialog_id in self._order:
            self._order.remove(dialog_id)

    def spawn(self, func: Callable[..., Any], *args: Any) -> None:
        """Run `func(*args)` in the bridge's task group (it outlives the calling request)."""
        self._tg.start_soon(func, *args)


def _dialog_summary(kind: str, message: str) -> str:
    text = message.strip().replace("\n", " ")[:160] or "(no message)"
    if kind == "prompt":
        return f"The page asks for input: \u201c{text}\u201d \u2014 accept with text, or dismiss."
    if kind == "confirm":
        return f"The page asks to confirm: \u201c{text}\u201d \u2014 accept or dismiss."
    if kind == "beforeunload":
        return "The page warns that changes may be lost if you leave \u2014 accept to leave, dismiss to stay."
    return f"The page shows an alert: \u201c{text}\u201d \u2014 accept to close it."


def _dialog_blocks(window_id: str, kind: str, message: str, default_prompt: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "id": f"{window_id}-message", "text": message}]
    if kind == "prompt":
        blocks.append({"type": "fields", "id": f"{window_id}-input",
                       "items": [{"label": "Answer", "value": default_prompt}]})
    return blocks


async def safe_send(session: CDPSession, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send, returning None instead of raising when the target is already gone."""
    try:
        return await session.send(method, params, timeout=timeout)
    except CDPError as exc:
        logger.debug("%s failed: %s", method, exc)
        return None
