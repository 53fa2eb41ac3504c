"""Which tools exist right now: browser actions and page tools of the operable windows.

A `ToolSpec` is everything `tools/list` says of one tool. Browser actions have fixed
schemas here; page tools take theirs from WebMCP, with `expectedVersion` added and the
annotations mapped as PROTOCOLS.md B says (`readOnly` → `readOnlyHint`, `consequential`
→ `destructiveHint`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.registry import Bridge
from webmcp.desktop.windows import operable_ids

__all__ = ["ToolSpec", "tool_specs", "RESULT_SCHEMA", "EXPECTED_VERSION", "APP_ACTIONS", "action_schema"]

EXPECTED_VERSION = {
    "type": "integer",
    "description": "The window version you based this call on; if it changed since, the call is refused.",
}
RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string"},
        "openedWindowIds": {"type": "array", "items": {"type": "string"}},
        "result": {"type": "object"},
        "untrustedContent": {"type": "boolean"},
    },
}


@dataclass(frozen=True)
class ToolSpec:
    """One entry of `tools/list`."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    output_schema: dict[str, Any]


def _obj(properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": dict(properties or {}),
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


_URL = {"type": "string", "description": "An absolute http(s), file or about: URL."}
# (title, description, input schema, annotations)
TAB_ACTIONS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "focus": (
        "Focus tab",
        "Bring this tab to the front so the user sees what you work on.",
        _obj(),
        {"readOnlyHint": False, "idempotentHint": True},
    ),
    "navigate": (
        "Navigate",
        "Load a URL in this tab.",
        _obj({"url": _URL}, ["url"]),
        {"destructiveHint": False, "openWorldHint": True},
    ),
    "back": ("Go back", "Go back one entry in this tab's history.", _obj(), {"destructiveHint": False}),
    "forward": (
        "Go forward",
        "Go forward one entry in this tab's history.",
        _obj(),
        {"destructiveHint": False},
    ),
    "reload": (
        "Reload",
        "Reload this tab's page.",
        _obj(),
        {"destructiveHint": False, "idempotentHint": True},
    ),
    "close": (
        "Close tab",
        "Close this tab (the page is not asked to confirm).",
        _obj(),
        {"destructiveHint": True},
    ),
    "read_content": (
        "Read full content",
        "Return this tab's full semantic content, uncut: blocks in pages, or the rows/items of one table "
        "or list "
        "block (by blockId).",
        _obj(
            {
                "blockId": {"type": "string", "description": "A table or list block to read in full."},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
            }
        ),
        {"readOnlyHint": True, "idempotentHint": True},
    ),
    "screenshot": (
        "Screenshot",
        "Capture what this tab shows as a PNG image.",
        _obj(),
        {"readOnlyHint": True, "idempotentHint": True},
    ),
}
DIALOG_ACTIONS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "accept": (
        "Accept",
        "Press OK (for a prompt, answer with `text`).",
        _obj({"text": {"type": "string", "description": "The answer to a prompt."}}),
        {"destructiveHint": False},
    ),
    "dismiss": ("Dismiss", "Press Cancel (an alert is simply closed).", _obj(), {"destructiveHint": False}),
}
MODAL_ACTIONS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "close": (
        "Close dialog",
        "Close this in-page dialog without submitting it (like its Close button).",
        _obj(),
        {"destructiveHint": False},
    ),
}
APP_ACTIONS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "open_tab": (
        "Open a new tab",
        "Open a new browser tab; answers its window id in openedWindowIds.",
        _obj({"url": {**_URL, "default": "about:blank"}}),
        {"destructiveHint": False, "openWorldHint": True},
    ),
}


def action_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the optional `expectedVersion` every window tool accepts."""
    out = copy.deepcopy(schema) if schema else {"type": "object", "properties": {}}
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    out["properties"]["expectedVersion"] = EXPECTED_VERSION
    return out


def _page_tool_spec(window_id: str, window_title: str, tool: PageTool) -> ToolSpec:
    notes = []
    if tool.handle != tool.name:
        notes.append(f"The page names this tool \u201c{tool.name}\u201d.")
    if tool.annotations.get("untrustedContent"):
        notes.append("Its output may hold untrusted content (user-generated or third-party).")
    if tool.declarative and not tool.annotations.get("autosubmit"):
        notes.append("It fills a form that the user must submit in the page.")
    description = " ".join([tool.description or f"The page tool {tool.name}.", *notes])
    annotations: dict[str, Any] = {
        "readOnlyHint": bool(tool.annotations.get("readOnly", False)),
        "destructiveHint": bool(tool.annotations.get("consequential", False)),
        "openWorldHint": True,
    }
    return ToolSpec(
        name=f"{window_id}__{tool.handle}",
        title=f"{tool.name} \u00b7 {window_title} (window {window_id})",
        description=description,
        input_schema=action_schema(tool.input_schema),
        annotations=annotations,
        output_schema=RESULT_SCHEMA,
    )


def _action_spec(
    window_id: str, window_title: str, action: str, entry: tuple[str, str, dict[str, Any], dict[str, Any]]
) -> ToolSpec:
    title, description, schema, annotations = entry
    return ToolSpec(
        name=f"{window_id}__{action}",
        title=f"{title} \u00b7 {window_title} (window {window_id})",
        description=f"{description} Browser action on window {window_id} (\u201c{window_title}\u201d).",
        input_schema=action_schema(schema),
        annotations=annotations,
        output_schema=RESULT_SCHEMA,
    )


def tool_specs(bridge: Bridge) -> list[ToolSpec]:
    """The tools callable this moment: those of operable windows, plus app-level actions."""
    specs: list[ToolSpec] = []
    states = bridge.window_states()
    for window_id in operable_ids(states):
        tab = bridge.tabs.get(window_id)
        if tab is not None:
            specs.extend(_action_spec(window_id, tab.window.title, a, e) for a, e in TAB_ACTIONS.items())
            tools = sorted(tab.mirror.tools.values(), key=lambda t: t.handle)
            specs.extend(_page_tool_spec(window_id, tab.window.title, t) for t in tools)
            continue
        dialog = bridge.dialogs.get(window_id)
        if dialog is not None:
            specs.extend(_action_spec(window_id, dialog.window.title, a, e) for a, e in DIALOG_ACTIONS.items())
            continue
        modal = bridge.modals.get(window_id)
        owner = bridge.tabs.get(modal.tab_id) if modal is not None else None
        if modal is not None and owner is not None:
            specs.extend(_action_spec(window_id, modal.window.title, a, e) for a, e in MODAL_ACTIONS.items())
            tools = sorted((t for t in owner.mirror.tools.values() if modal.owns(t)), key=lambda t: t.handle)
            specs.extend(_page_tool_spec(window_id, modal.window.title, t) for t in tools)
    specs.extend(
        ToolSpec(f"app__{action}", title, description, copy.deepcopy(schema), annotations, RESULT_SCHEMA)
        for action, (title, description, schema, annotations) in APP_ACTIONS.items()
    )
    return specs
