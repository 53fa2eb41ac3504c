"""A declarative form that waits for a person: a modal window until it is submitted or cancelled.

Without `toolautosubmit`, Chromium fills the form for an agent's call and waits for the
form to be submitted. The bridge shows that wait as a modal window owned by the tab
("Submit ‘book_table’?", by the tool's name) with the filled values as blocks, secrets masked, and two
actions: `submit` (the form's own `requestSubmit()`, as the person's button would) and
`cancel` (`WebMCP.cancelInvocation`). The person may also edit and submit the form in the
page; the window closes when the page answers, whoever submitted. With human-only submit
(`--human-submit`), `submit` is not offered to agents.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.modal_window import ModalWindow
from webmcp.errors import ToolError, cdp_errors
from webmcp.js import call, load
from webmcp.models import ToolResult, field_item, fields_block, notice_block
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.masking import MASK
from webmcp.view.secrets import IS_SECRET_JS

__all__ = ["PendingForm", "read_form_fields"]

# Runs on the <form> element: what a person sees in it (label and value of each control), secrets
# decided by the one element rule.
_FIELDS_JS = call(load("form_fields.js"), IS_SECRET_JS)
_ANSWER_TEXT = 2048
"""How much of the page's answer to a form the person submitted its notice shows."""


async def read_form_fields(session: CDPSession, timeouts: Timeouts, backend_node_id: int) -> list[dict[str, Any]]:
    """The form's fields as a `fields` block's items (label and value, as a person sees them), secrets masked here.

    Raises:
        CDPError: the form is gone.
    """
    resolved = await session.send("DOM.resolveNode", {"backendNodeId": backend_node_id}, timeout=timeouts.command)
    reply = await session.send(
        "Runtime.callFunctionOn",
        {
            "objectId": resolved["object"]["objectId"],
            "functionDeclaration": _FIELDS_JS,
            "returnByValue": True,
        },
        timeout=timeouts.command,
    )
    found = reply.get("result", {}).get("value") or {}
    items: list[dict[str, Any]] = []
    for raw in found.get("fields") or []:
        label, value = str(raw.get("label", "")), str(raw.get("value", ""))
        if raw.get("secret"):
            items.append(field_item(label, MASK if value else "", sensitive=True))
        else:
            items.append(field_item(label, value))
    return items


@dataclass(eq=False)
class PendingForm(ModalWindow):
    """A filled form waiting to be submitted, published as a modal window of its tab.

    Its version is its own: `refresh` bumps it when the person edits the form in the page.
    """

    tool: PageTool
    invocation: Invocation
    agent_may_submit: bool
    _outcome: dict[str, Any] | None = None
    _opened: list[str] = field(default_factory=list)
    _claimed: bool = False
    """An agent's submit or cancel waits for the outcome (its answer carries it)."""
    _settled: anyio.Event = field(default_factory=anyio.Event)

    window_kind = "form"

    def settle(self, outcome: dict[str, Any] | None, opened: list[str] | None = None) -> None:
        """The call that filled the form ended with `outcome` (its result or {"error": …}),
        having opened the windows `opened` (a "received" `<dialog>`, an alert)."""
        self._outcome = outcome
        self._opened = list(opened or ())
        self._settled.set()

    def unclaimed_answer(self) -> str | None:
        """The call's outcome as text (masked already, capped), when no agent's submit or cancel received it."""
        if self._claimed or self._outcome is None:
            return None
        if "error" in self._outcome:
            error = self._outcome["error"]
            return cap_text(f"error {error.get('code', '')}: {error.get('message', '')}", _ANSWER_TEXT)
        return cap_text(f"{self._outcome.get('message', '')} {json.dumps(self._outcome.get('result'))}", _ANSWER_TEXT)

    async def refresh(self) -> bool:
        """Show the form's values as the page holds them now (the person may have edited them).

        Returns True when the window changed.
        """
        if self.tool.backend_node_id is None:
            return False
        try:
            items = await read_form_fields(self.owner.session, self.owner.timeouts, self.tool.backend_node_id)
        except CDPError:
            return False  # The page is navigating (the form was submitted) or gone: its answer follows.
        return self._describe(items)

    def _describe(self, items: list[dict[str, Any]]) -> bool:
        """Show the form's filled values (after the page filled it, and after each edit)."""
        who = "submit it, or cancel" if self.agent_may_submit else "the person at the browser must submit it; or cancel"
        # The tool's name, as documented; not the form's description or heading (page prose).
        self.window.title = f"Submit \u2018{self.tool.display_name or self.tool.name}\u2019?"
        self.window.summary = (
            f"The page filled the form \u201c{self.tool.name}\u201d for your call and waits for it to be "
            f"submitted: {who}."
        )
        blocks = [fields_block("values", items)]
        if not self.agent_may_submit:
            text = "Only the person at the browser can submit this form (human-in-the-loop)."
            blocks.append(notice_block("human", "info", text))
        if blocks == self.window.blocks:
            return False
        self.window.blocks = blocks
        self.window.version += 1
        return True

    async def submit(self) -> ToolResult:
        """Submit the form as its submit button would; answers with the call's outcome."""
        if not self.agent_may_submit:
            raise ToolError("action_not_available", "Only the person at the browser may submit this form.")
        self._claimed = True
        backend = self.tool.backend_node_id
        session = self.owner.session
        timeouts = self.owner.timeouts

        def gone(exc: CDPError) -> ToolError:
            return ToolError("window_not_found", f"The form of {self.window.id} is gone: {exc}")

        began = False

        async def request_submit() -> None:
            nonlocal began
            began = True
            with cdp_errors(f"submitting {self.window.id}", timeouts.command, gone=gone):
                resolved = await session.send("DOM.resolveNode", {"backendNodeId": backend}, timeout=timeouts.command)
                await session.send(
                    "Runtime.callFunctionOn",
                    {
                        "objectId": resolved["object"]["objectId"],
                        "functionDeclaration": "function () { this.requestSubmit(); }",
                    },
                    timeout=timeouts.command,
                )

        # A submit handler may open a dialog (a confirm before it goes on): the page then waits for the
        # agent, and the form's answer names the dialog (the call that follows it hands it over).
        await self.owner.unless_dialog(request_submit, timeouts.command + 1)  # the command's own timeout first
        if not began:
            raise ToolError(
                "action_not_available",
                f"{self.tab_id} waits for a dialog or prompt to be answered first; nothing was submitted.",
            )
        return await self._answer("Submitted")

    async def cancel(self) -> ToolResult:
        """Cancel the call that filled the form (the page sees `toolcancel`)."""
        self._claimed = True
        why = f"the agent cancelled it with {self.window.id}__cancel"
        await self.owner.cancel_call(self.invocation, self.owner.timeouts.command, why)
        return await self._answer("Cancelled")

    async def _answer(self, what: str) -> ToolResult:
        # A form that submits to another page answers once that page has loaded.
        timeouts = self.owner.timeouts
        with anyio.move_on_after(timeouts.navigation + timeouts.dialog_grace):
            await self._settled.wait()
        name = self.tool.name
        if self._outcome is None:
            return ToolResult(
                message=f"{what} the form \u201c{name}\u201d; the page has not answered yet.",
                result={"originalCall": {"tool": name, "pending": True}},
            )
        if self._outcome.get("pending"):
            # A dialog the submit opened holds the call: its answer carries the outcome.
            said = f"{self._outcome['message']} It waits for it; its answer carries the call's outcome."
        elif self._outcome.get("submitted"):
            said = str(self._outcome["message"])
        else:
            said = f"The call to {name} has finished."
        return ToolResult(
            message=f"{what} the form \u201c{name}\u201d. {said}",
            result={"originalCall": {"tool": name, **self._outcome}},
            opened_window_ids=self._opened or None,
        )
