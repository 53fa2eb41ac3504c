"""A declarative form that waits for a person: a modal window until it is submitted or cancelled.

Without `toolautosubmit`, Chromium fills the form for an agent's call and waits for the
form to be submitted. The bridge shows that wait as a modal window owned by the tab
("Submit ‘Book a table’?") with the filled values as blocks, secrets masked, and two
actions: `submit` (the form's own `requestSubmit()`, as the person's button would) and
`cancel` (`WebMCP.cancelInvocation`). The person may also edit and submit the form in the
page; the window closes when the page answers, whoever submitted. With human-only submit
(`--human-submit`), `submit` is not offered to agents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from cdp_bridge.errors import CDPError
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError
from webmcp.js import load
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.masking import MASK, SECRET_SELECTOR

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = ["PendingForm", "read_form_fields"]

# Runs on the <form> element: what a person sees in it (label and value of each control).
_FIELDS_JS = load("form_fields.js")


async def read_form_fields(tab: Tab, backend_node_id: int) -> tuple[str, list[dict[str, Any]]]:
    """The form's name as a person reads it, and its fields as a `fields` block's items, secrets masked here.

    Raises:
        CDPError: the form is gone.
    """
    session = tab.page.session
    resolved = await session.send("DOM.resolveNode", {"backendNodeId": backend_node_id}, timeout=tab.timeouts.command)
    reply = await session.send(
        "Runtime.callFunctionOn",
        {
            "objectId": resolved["object"]["objectId"],
            "functionDeclaration": _FIELDS_JS,
            "arguments": [{"value": SECRET_SELECTOR}],
            "returnByValue": True,
        },
        timeout=tab.timeouts.command,
    )
    found = reply.get("result", {}).get("value") or {}
    items: list[dict[str, Any]] = []
    for raw in found.get("fields") or []:
        item: dict[str, Any] = {"label": str(raw.get("label", "")), "value": str(raw.get("value", ""))}
        if raw.get("secret"):
            item["value"] = MASK if item["value"] else ""
            item["sensitive"] = True
        items.append(item)
    return cap_text(str(found.get("title") or ""), 120), items


@dataclass(eq=False)
class PendingForm:
    """A filled form waiting to be submitted, published as a modal window of its tab."""

    window: WindowState
    tab: Tab
    tool: PageTool
    invocation: Invocation
    agent_may_submit: bool
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)
    outcome: dict[str, Any] | None = None
    settled: anyio.Event = field(default_factory=anyio.Event)

    window_kind = "form"

    @property
    def tab_id(self) -> str:
        return self.tab.id

    def is_open(self) -> bool:
        return self.tab.desktop.is_published(self.window.id)

    def page_tools(self) -> list[PageTool]:
        return []

    async def fresh_version(self) -> int:
        return self.window.version

    def describe(self, title: str, items: list[dict[str, Any]]) -> None:
        """Show the form's filled values (after the page filled it, and after each edit)."""
        who = "submit it, or cancel" if self.agent_may_submit else "the person at the browser must submit it; or cancel"
        self.window.title = f"Submit \u2018{title or self.tool.display_name or self.tool.name}\u2019?"
        self.window.summary = (
            f"The page filled the form \u201c{self.tool.name}\u201d for your call and waits for it to be "
            f"submitted: {who}."
        )
        blocks: list[dict[str, Any]] = [{"type": "fields", "id": "values", "items": items}]
        if not self.agent_may_submit:
            blocks.append(
                {
                    "type": "notice",
                    "id": "human",
                    "severity": "info",
                    "text": "Only the person at the browser can submit this form (human-in-the-loop).",
                }
            )
        if blocks != self.window.blocks:
            self.window.blocks = blocks
            self.window.version += 1

    async def submit(self) -> ToolResult:
        """Submit the form as its submit button would; answers with the call's outcome."""
        if not self.agent_may_submit:
            raise ToolError("action_not_available", "Only the person at the browser may submit this form.")
        backend = self.tool.backend_node_id
        session = self.tab.page.session
        try:
            resolved = await session.send(
                "DOM.resolveNode", {"backendNodeId": backend}, timeout=self.tab.timeouts.command
            )
            await session.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": resolved["object"]["objectId"],
                    "functionDeclaration": "function () { this.requestSubmit(); }",
                },
                timeout=self.tab.timeouts.command,
            )
        except CDPError as exc:
            raise ToolError("window_not_found", f"The form of {self.window.id} is gone: {exc}") from exc
        return await self._answer("Submitted")

    async def cancel(self) -> ToolResult:
        """Cancel the call that filled the form (the page sees `toolcancel`)."""
        await self.tab.mirror.cancel(self.invocation, self.tab.timeouts.command)
        return await self._answer("Cancelled")

    async def _answer(self, what: str) -> ToolResult:
        # A form that submits to another page answers once that page has loaded.
        with anyio.move_on_after(self.tab.timeouts.navigation + self.tab.timeouts.dialog_grace):
            await self.settled.wait()
        name = self.tool.name
        if self.outcome is None:
            return ToolResult(
                message=f"{what} the form \u201c{name}\u201d; the page has not answered yet.",
                result={"originalCall": {"tool": name, "pending": True}},
            )
        return ToolResult(
            message=f"{what} the form \u201c{name}\u201d; the call to {name} has finished.",
            result={"originalCall": {"tool": name, **self.outcome}},
        )
