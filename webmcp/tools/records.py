"""Every browser action as one record: name, schemas, annotations, where it applies, handler.

A record's input schema comes from a pydantic model (`extra="forbid"`, so unknown
arguments are refused); its output schema is the one ToolResult schema all window tools
share. Handlers take the window (or, for app-level actions, the desktop) and the checked
arguments, and call the window's own operation. `RECORDS` is the whole list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webmcp.desktop import content
from webmcp.desktop.dialogs import JsDialog
from webmcp.desktop.navigation import check_url
from webmcp.desktop.registry import Desktop
from webmcp.desktop.tab import Tab
from webmcp.errors import ToolError
from webmcp.models import ToolResult, input_schema_of

__all__ = ["RECORDS", "Answer", "ToolRecord", "WindowKind", "record_for", "records_for"]

WindowKind = Literal["tab", "dialog", "modal", "form", "app"]


@dataclass(frozen=True)
class Answer:
    """What a handler returns: the ToolResult, and an image for content when there is one."""

    result: ToolResult
    image_png: bytes | None = None


Handler = Callable[[Any, dict[str, Any]], Awaitable[ToolResult | Answer]]


@dataclass(frozen=True)
class ToolRecord:
    """One browser action, as `tools/list` shows it and the dispatcher runs it."""

    action: str
    applies_to: WindowKind
    title: str
    description: str
    input_model: type[BaseModel]
    annotations: dict[str, bool]
    handler: Handler = field(repr=False)
    offered: Callable[[Any], bool] | None = field(default=None, repr=False)
    """When set, the action exists only on windows for which it is true (else always)."""

    def offered_on(self, window: Any) -> bool:
        """True when `window` offers this action now."""
        return self.offered is None or self.offered(window)

    @property
    def input_schema(self) -> dict[str, Any]:
        return input_schema_of(self.input_model)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NoInput(_Input):
    pass


_URL_HELP = "An absolute http(s), file or about: URL."


class NavigateInput(_Input):
    url: str = Field(description=_URL_HELP)


class OpenTabInput(_Input):
    url: str = Field(default="about:blank", description=_URL_HELP)


class ReadContentInput(_Input):
    block_id: str | None = Field(default=None, alias="blockId", description="A table or list block to read in full.")
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=100, ge=1, le=1000)


class AcceptInput(_Input):
    text: str | None = Field(default=None, description="The answer to a prompt.")


async def _screenshot(tab: Tab, _args: dict[str, Any]) -> Answer:
    png = await content.screenshot(tab)
    return Answer(ToolResult(message=f"Screenshot of {tab.id}.", result={"mimeType": "image/png"}), image_png=png)


async def _read_content(tab: Tab, args: dict[str, Any]) -> ToolResult:
    return await content.read_content(tab, args.get("blockId"), int(args.get("offset", 0)), int(args.get("limit", 100)))


async def _open_tab(desktop: Desktop, args: dict[str, Any]) -> ToolResult:
    url = str(args.get("url", "about:blank"))
    check_url(desktop.policy, url)
    tab = await desktop.open_tab()
    if tab is None:
        raise ToolError("action_timeout", "The new tab did not come up in time.")
    if url == "about:blank":
        return ToolResult(message=f"Opened {tab.id}, blank.", opened_window_ids=[tab.id])
    # Answer once the page shows, with its tools listed (or with a dialog it opened on load).
    async with tab.op_lock:
        loaded = await tab.navigate(url)
    return ToolResult(
        message=f"Opened {tab.id}: {loaded.message}",
        opened_window_ids=[tab.id, *(loaded.opened_window_ids or [])],
    )


async def _answer(dialog: JsDialog, args: dict[str, Any], accept: bool) -> ToolResult:
    text = args.get("text")
    return await dialog.answer(accept, str(text) if text is not None else None)


RECORDS: tuple[ToolRecord, ...] = (
    ToolRecord(
        "focus",
        "tab",
        "Focus tab",
        "Bring this tab to the front so the user sees what you work on.",
        NoInput,
        {"readOnlyHint": False, "idempotentHint": True},
        lambda tab, _a: tab.focus(),
    ),
    ToolRecord(
        "navigate",
        "tab",
        "Navigate",
        "Load a URL in this tab.",
        NavigateInput,
        {"destructiveHint": False, "openWorldHint": True},
        lambda tab, a: tab.navigate(str(a["url"])),
    ),
    ToolRecord(
        "back",
        "tab",
        "Go back",
        "Go back one entry in this tab's history.",
        NoInput,
        {"destructiveHint": False},
        lambda tab, _a: tab.history(-1),
    ),
    ToolRecord(
        "forward",
        "tab",
        "Go forward",
        "Go forward one entry in this tab's history.",
        NoInput,
        {"destructiveHint": False},
        lambda tab, _a: tab.history(+1),
    ),
    ToolRecord(
        "reload",
        "tab",
        "Reload",
        "Reload this tab's page.",
        NoInput,
        {"destructiveHint": False, "idempotentHint": True},
        lambda tab, _a: tab.reload(),
    ),
    ToolRecord(
        "close",
        "tab",
        "Close tab",
        "Close this tab (the page is not asked to confirm).",
        NoInput,
        {"destructiveHint": True},
        lambda tab, _a: tab.close_tab(),
    ),
    ToolRecord(
        "read_content",
        "tab",
        "Read full content",
        "Return this tab's full semantic content, uncut: blocks in pages, or the rows/items of one table "
        "or list block (by blockId).",
        ReadContentInput,
        {"readOnlyHint": True, "idempotentHint": True},
        _read_content,
    ),
    ToolRecord(
        "screenshot",
        "tab",
        "Screenshot",
        "Capture what this tab shows as a PNG image.",
        NoInput,
        {"readOnlyHint": True, "idempotentHint": True},
        _screenshot,
    ),
    ToolRecord(
        "accept",
        "dialog",
        "Accept",
        "Press OK (for a prompt, answer with `text`).",
        AcceptInput,
        {"destructiveHint": False},
        lambda dialog, a: _answer(dialog, a, True),
    ),
    ToolRecord(
        "dismiss",
        "dialog",
        "Dismiss",
        "Press Cancel (an alert is simply closed).",
        NoInput,
        {"destructiveHint": False},
        lambda dialog, a: _answer(dialog, a, False),
    ),
    ToolRecord(
        "stop_dialogs",
        "dialog",
        "Stop this page's dialogs",
        "The page keeps opening dialogs: answer this one (Cancel; Leave for a 'Leave page?') and let the "
        "bridge dismiss the page's further dialogs until the tab navigates or reloads.",
        NoInput,
        {"destructiveHint": False},
        lambda dialog, _a: dialog.stop_dialogs(),
        offered=lambda dialog: bool(getattr(dialog, "repeated", False)),
    ),
    ToolRecord(
        "close_tab",
        "dialog",
        "Close the tab",
        "Close the tab this dialog belongs to without answering the dialog (the page's beforeunload "
        "handler is skipped): the way out of a page that keeps its tab blocked.",
        NoInput,
        {"destructiveHint": True},
        lambda dialog, _a: dialog.close_tab(),
    ),
    ToolRecord(
        "close",
        "modal",
        "Close dialog",
        "Close this in-page dialog without submitting it (like its Close button).",
        NoInput,
        {"destructiveHint": False},
        lambda modal, _a: modal.close_dialog(),
    ),
    ToolRecord(
        "submit",
        "form",
        "Submit form",
        "Submit the form as the page's own submit button would; the answer carries the original call's outcome.",
        NoInput,
        {"destructiveHint": True},
        lambda form, _a: form.submit(),
        offered=lambda form: form.agent_may_submit,  # --human-submit keeps it for the person
    ),
    ToolRecord(
        "cancel",
        "form",
        "Cancel",
        "Cancel the call that filled this form; the page is told, and nothing is submitted.",
        NoInput,
        {"destructiveHint": False},
        lambda form, _a: form.cancel(),
    ),
    ToolRecord(
        "open_tab",
        "app",
        "Open a new tab",
        "Open a new browser tab; answers its window id in openedWindowIds.",
        OpenTabInput,
        {"destructiveHint": False, "openWorldHint": True},
        _open_tab,
    ),
)

_BY_KEY = {(r.applies_to, r.action): r for r in RECORDS}


def record_for(kind: WindowKind, action: str) -> ToolRecord | None:
    """The record of `action` on a window of `kind`, if there is one."""
    return _BY_KEY.get((kind, action))


def records_for(kind: WindowKind) -> list[ToolRecord]:
    """Every record that applies to windows of `kind`, in list order."""
    return [r for r in RECORDS if r.applies_to == kind]
