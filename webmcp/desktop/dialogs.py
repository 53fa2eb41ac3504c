"""Modal windows: JavaScript dialogs and in-page `<dialog>`s opened with showModal().

Both are modal windows owned by the top of their tab's chain at the moment they open (the
tab, or a modal already over it), so a dialog over a dialog chains. A JavaScript dialog
is answered with accept/dismiss; an in-page modal is closed with `close`, and the
declarative tools whose form lies inside it are its tools while it is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.summary import dialog_blocks, dialog_summary

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = ["InPageModal", "JsDialog"]

_MESSAGE_BYTES = 4096
"""A dialog's message as shown (the page's text, capped)."""
_DIALOG_TITLES = {"alert": "Alert", "confirm": "Confirm", "prompt": "Prompt", "beforeunload": "Leave page?"}


@dataclass(eq=False)
class JsDialog:
    """An open alert/confirm/prompt/beforeunload, as a modal window owned by its tab."""

    window: WindowState
    kind: str
    message: str
    default_prompt: str
    session: CDPSession
    tab: Tab
    opened_by_call: Invocation | None = None
    call_done: anyio.Event = field(default_factory=anyio.Event)
    call_outcome: dict[str, Any] | None = None
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)
    repeated: bool = False
    """The page opened dialogs in quick succession: `stop_dialogs` is offered."""

    window_kind = "dialog"

    @classmethod
    def opened(cls, window_id: str, owner_id: str, tab: Tab, session: CDPSession, params: dict[str, Any]) -> JsDialog:
        """The window for a `Page.javascriptDialogOpening` event of `tab`."""
        kind = str(params.get("type", "alert"))
        message = cap_text(str(params.get("message", "")), _MESSAGE_BYTES)
        default_prompt = str(params.get("defaultPrompt", ""))
        window = WindowState(
            id=window_id,
            title=f"{_DIALOG_TITLES.get(kind, 'Dialog')} \u2014 {tab.window.title}",
            modal=True,
            owner_id=owner_id,
            summary=dialog_summary(kind, message),
            blocks=dialog_blocks(kind, message, default_prompt),
        )
        return cls(window, kind, message, default_prompt, session, tab)

    @property
    def tab_id(self) -> str:
        return self.tab.id

    def is_open(self) -> bool:
        return self.tab.dialog is self

    def page_tools(self) -> list[PageTool]:
        return []

    async def fresh_version(self) -> int:
        return self.window.version  # A dialog's content never changes while it is open.

    async def answer(self, accept: bool, text: str | None) -> ToolResult:
        """Press OK (with `text` for a prompt) or Cancel; carries the outcome of the call that opened it."""
        params: dict[str, Any] = {"accept": accept}
        if accept and self.kind == "prompt" and text is not None:
            params["promptText"] = text
        try:
            await self.session.send("Page.handleJavaScriptDialog", params)
        except CDPError as exc:
            raise ToolError("window_not_found", f"Dialog {self.window.id} is already closed.") from exc
        answer = ToolResult(message=f"{'Accepted' if accept else 'Dismissed'} the {self.kind} dialog.")
        if self.opened_by_call is not None:
            with anyio.move_on_after(self.tab.timeouts.dialog_grace):
                await self.call_done.wait()
            name = self.opened_by_call.tool.name
            if self.call_outcome is not None:
                answer.result = {"originalCall": {"tool": name, **self.call_outcome}}
                answer.message = f"{answer.message} The call to {name} that opened it has finished."
            else:
                answer.result = {"originalCall": {"tool": name, "pending": True}}
                answer.message = f"{answer.message} The call to {name} that opened it is still running."
        return answer

    async def stop_dialogs(self) -> ToolResult:
        """Answer this dialog, and let the bridge answer the page's further dialogs until it navigates."""
        tab = self.tab
        tab.dialog_guard.stop(tab.doc_seq)
        answer = await self.answer(self.kind == "beforeunload", None)
        tab.mark_dirty()
        answer.message = (
            f"{answer.message} The page's further dialogs are now dismissed automatically until {tab.id} "
            "navigates or reloads (a 'Leave page?' is answered Leave); the tab shows a notice."
        )
        return answer

    async def close_tab(self) -> ToolResult:
        """Close the dialog's tab without answering the dialog; the page's beforeunload does not run."""
        tab = self.tab
        try:
            await tab.desktop.browser.send("Target.closeTarget", {"targetId": tab.page.target_id})
        except CDPError as exc:
            raise ToolError("browser_error", f"The browser did not close {tab.id}: {exc}", detail=str(exc)) from exc
        with anyio.move_on_after(tab.timeouts.navigation):
            await tab.gone.wait()
        if not tab.gone.is_set():
            raise ToolError("browser_error", f"{tab.id} did not close.")
        return ToolResult(
            message=f"Closed {tab.id} with its {self.kind} dialog unanswered; "
            "the page's beforeunload handler was skipped."
        )


@dataclass(eq=False)
class InPageModal:
    """An open `<dialog>` (showModal) of a tab, published as its own modal window."""

    window: WindowState
    tab: Tab
    key: Any
    backend_node_id: int | None
    backend_ids: frozenset[int]
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)

    window_kind = "modal"

    @property
    def tab_id(self) -> str:
        return self.tab.id

    @property
    def origin(self) -> str:
        return self.tab.origin

    def owns(self, tool: PageTool) -> bool:
        """True for a declarative tool whose form lies inside this dialog."""
        return tool.backend_node_id is not None and tool.backend_node_id in self.backend_ids

    def is_open(self) -> bool:
        return self.tab.desktop.is_published(self.window.id)

    def page_tools(self) -> list[PageTool]:
        """The declarative tools whose form lies inside the dialog."""
        return [t for t in self.tab.page_tools() if self.owns(t)]

    async def fresh_version(self) -> int:
        await self.tab.fresh_version()  # raises state_unverified when the page cannot be read
        return self.window.version

    async def call(self, tool: PageTool, arguments: dict[str, Any], deadline: float | None = None) -> ToolResult:
        """Call one of the dialog's form tools; the view is rebuilt before answering."""
        answer = await self.tab.call(tool, arguments, deadline)
        self.tab.mark_dirty()
        await self.tab.refresh()
        return answer

    async def close_dialog(self) -> ToolResult:
        """Close the dialog without submitting it (like its Close button)."""
        if self.backend_node_id is None:
            raise ToolError("action_not_available", f"Dialog {self.window.id} cannot be closed from here.")
        session = self.tab.page.session
        try:
            resolved = await session.send("DOM.resolveNode", {"backendNodeId": self.backend_node_id})
            await session.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": resolved["object"]["objectId"],
                    "functionDeclaration": "function () { if (this.open) this.close(); }",
                },
            )
        except CDPError as exc:
            raise ToolError("window_not_found", f"Dialog {self.window.id} is gone: {exc}") from exc
        self.tab.mark_dirty()
        await self.tab.refresh()
        return ToolResult(message=f"Closed the dialog {self.window.id}.")
