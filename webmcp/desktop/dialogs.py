"""Modal windows: JavaScript dialogs and in-page `<dialog>`s opened with showModal().

Both are modal windows owned by the top of their tab's chain at the moment they open (the
tab, or a modal already over it), so a dialog over a dialog chains. A JavaScript dialog
is answered with accept/dismiss; an in-page modal is closed with `close`, and the
declarative tools whose form lies inside it are its tools while it is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.modal_window import ModalWindow
from webmcp.desktop.ports import ModalOwner
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError, cdp_errors
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.build import Modal
from webmcp.view.shown import shown_blocks
from webmcp.view.summary import dialog_blocks, dialog_summary, modal_summary

__all__ = ["InPageModal", "JsDialog", "a_dialog"]

_MESSAGE_BYTES = 4096
"""A dialog's message as shown (the page's text, capped)."""
_DIALOG_TITLES = {"alert": "Alert", "confirm": "Confirm", "prompt": "Prompt", "beforeunload": "Leave page?"}


def a_dialog(kind: str, window_id: str) -> str:
    """How an answer names a JavaScript dialog: "an alert dialog (dialog-3)"."""
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} dialog ({window_id})"


@dataclass(eq=False)
class JsDialog(ModalWindow):
    """An open alert/confirm/prompt/beforeunload, as a modal window owned by its tab.

    Its content never changes while it is open: its version is its own (`ModalWindow.check_version`).
    """

    kind: str
    message: str
    default_prompt: str
    session: CDPSession
    repeated: bool = False
    """The page opened dialogs in quick succession: `stop_dialogs` is offered."""
    _call: Invocation | None = None
    _call_done: anyio.Event = field(default_factory=anyio.Event)
    _call_outcome: dict[str, Any] | None = None

    window_kind = "dialog"

    @classmethod
    def opened(
        cls, window: WindowState, owner: ModalOwner, session: CDPSession, params: dict[str, Any], repeated: bool
    ) -> JsDialog:
        """The window for a `Page.javascriptDialogOpening` event of `owner`'s page."""
        kind = str(params.get("type", "alert"))
        message = cap_text(str(params.get("message", "")), _MESSAGE_BYTES)
        default_prompt = str(params.get("defaultPrompt", ""))
        window.title = f"{_DIALOG_TITLES.get(kind, 'Dialog')} \u2014 {owner.title}"
        window.summary = dialog_summary(kind, message)
        window.blocks = dialog_blocks(kind, message, default_prompt)
        return cls(window, owner, kind, message, default_prompt, session, repeated)

    @property
    def opened_by_call(self) -> Invocation | None:
        """The page-tool call that opened this dialog, if one did."""
        return self._call

    def carries(self, invocation: Invocation) -> None:
        """`invocation` opened this dialog: its answer carries the call's outcome."""
        self._call = invocation

    def call_finished(self, outcome: dict[str, Any] | None) -> None:
        """The call that opened this dialog ended (`outcome` None: it had not ended in time)."""
        self._call_outcome = outcome
        self._call_done.set()

    async def answer(self, accept: bool, text: str | None) -> ToolResult:
        """Press OK (with `text` for a prompt) or Cancel; carries the outcome of the call that opened it."""
        params: dict[str, Any] = {"accept": accept}
        if accept and self.kind == "prompt" and text is not None:
            params["promptText"] = text
        # A write like any other: what the page does once the dialog is answered (a confirm() before
        # paying lets the form go on, an alert before a reload) is settled before the answer.
        closed = ToolError("window_not_found", f"Dialog {self.window.id} is already closed.")
        async with self.owner.write(answered_dialog=True) as act:
            with cdp_errors(f"answering {self.window.id}", gone=closed):
                await self.session.send("Page.handleJavaScriptDialog", params)
        answer = act.answer(ToolResult(message=f"{'Accepted' if accept else 'Dismissed'} the {self.kind} dialog."))
        if self._call is not None:
            with anyio.move_on_after(self.owner.timeouts.dialog_grace):
                await self._call_done.wait()
            name = self._call.tool.name
            if self._call_outcome is not None:
                answer.result = {"originalCall": {"tool": name, **self._call_outcome}}
                answer.message = f"{answer.message} The call to {name} that opened it has finished."
            else:
                answer.result = {"originalCall": {"tool": name, "pending": True}}
                answer.message = f"{answer.message} The call to {name} that opened it is still running."
        return answer

    async def stop_dialogs(self) -> ToolResult:
        """Answer this dialog, and let the bridge answer the page's further dialogs until it navigates."""
        self.owner.stop_dialogs()
        answer = await self.answer(self.kind == "beforeunload", None)
        self.owner.mark_dirty()
        answer.message = (
            f"{answer.message} The page's further dialogs are now dismissed automatically until {self.owner.id} "
            "navigates or reloads (a 'Leave page?' is answered Leave); the tab shows a notice."
        )
        return answer

    async def close_tab(self) -> ToolResult:
        """Close the dialog's tab without answering the dialog; the page's beforeunload does not run."""
        return await self.owner.close_unasked(f"with its {self.kind} dialog unanswered")


@dataclass(eq=False)
class InPageModal(ModalWindow):
    """An open `<dialog>` (showModal) of a tab, published as its own modal window.

    Unlike the other modal windows it has page tools (the declarative tools whose form lies
    inside it) and shows the page's content, so its version is checked against its tab's page.
    """

    key: Any
    backend_node_id: int | None
    _backend_ids: frozenset[int] = frozenset()

    window_kind = "modal"

    @classmethod
    def seen(cls, window: WindowState, *, owner: ModalOwner, seen: Modal) -> InPageModal:
        """The window for a `<dialog>` the view found open."""
        key = seen.key
        backend = key[1] if isinstance(key, tuple) and isinstance(key[1], int) else None
        modal = cls(window, owner, key, backend)
        modal.update(seen)
        return modal

    @property
    def origin(self) -> str:
        return self.owner.origin

    def owns(self, tool: PageTool) -> bool:
        """True for a declarative tool whose form lies inside this dialog."""
        return tool.backend_node_id is not None and tool.backend_node_id in self._backend_ids

    def update(self, seen: Modal) -> bool:
        """Show the dialog as the latest view found it; True when the window changed."""
        self._backend_ids = frozenset(seen.backend_ids)
        title = seen.title or "Dialog"
        blocks = shown_blocks(seen.blocks, title=title)
        summary = modal_summary(blocks)
        if (title, summary, blocks) == (self.window.title, self.window.summary, self.window.blocks):
            return False
        self.window.title = title
        self.window.summary = summary
        self.window.blocks = blocks
        self.window.version += 1
        return True

    def page_tools(self) -> list[PageTool]:
        """The declarative tools whose form lies inside the dialog."""
        return [t for t in self.owner.page_tools() if self.owns(t)]

    async def check_version(self) -> VersionCheck:
        tab = await self.owner.check_version()  # raises state_unverified when the page cannot be read
        return VersionCheck(self.window.version, tab.inputs)

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        """Call one of the dialog's form tools; the view is rebuilt before answering."""
        answer = await self.owner.call(tool, arguments, deadline, check)
        self.owner.mark_dirty()
        await self.owner.refresh()
        return answer

    async def close_dialog(self) -> ToolResult:
        """Close the dialog without submitting it (like its Close button)."""
        if self.backend_node_id is None:
            raise ToolError("action_not_available", f"Dialog {self.window.id} cannot be closed from here.")
        session = self.owner.session

        def gone(exc: CDPError) -> ToolError:
            return ToolError("window_not_found", f"Dialog {self.window.id} is gone: {exc}")

        with cdp_errors(f"closing {self.window.id}", gone=gone):
            resolved = await session.send("DOM.resolveNode", {"backendNodeId": self.backend_node_id})
            await session.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": resolved["object"]["objectId"],
                    "functionDeclaration": "function () { if (this.open) this.close(); }",
                },
            )
        self.owner.mark_dirty()
        await self.owner.refresh()
        return ToolResult(message=f"Closed the dialog {self.window.id}.")
