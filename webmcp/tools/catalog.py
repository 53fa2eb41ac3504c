"""Which tools exist right now: the records and page tools of the operable windows.

A `ToolSpec` is everything `tools/list` says of one tool. Browser actions come from
`records`; page tools take their schema from WebMCP, with `expectedVersion` added, and
their annotations mapped (`readOnly` → `readOnlyHint`, `consequential` →
`destructiveHint`; docs/protocols.md#map-page-tools).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import WindowState, operable_ids
from webmcp.models import tool_output_schema
from webmcp.tools.records import ToolRecord, WindowKind, records_for

__all__ = ["EXPECTED_VERSION", "RESULT_SCHEMA", "ToolSpec", "action_schema", "tool_specs"]

EXPECTED_VERSION = {
    "type": "integer",
    "description": "The window version you based this call on; if it changed since, the call is refused.",
}
RESULT_SCHEMA: dict[str, Any] = tool_output_schema()


@dataclass(frozen=True)
class ToolSpec:
    """One entry of `tools/list`."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    output_schema: dict[str, Any]


class ListedWindow(Protocol):
    """What the catalogue reads of a window."""

    window: WindowState
    window_kind: str

    def page_tools(self) -> list[PageTool]: ...


class ListedDesktop(Protocol):
    """What the catalogue reads of the desktop."""

    def window_states(self) -> list[WindowState]: ...
    def window(self, window_id: str) -> Any: ...


def action_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the optional `expectedVersion` every window tool accepts."""
    out: dict[str, Any] = copy.deepcopy(schema) if schema else {"type": "object", "properties": {}}
    out.setdefault("type", "object")
    properties: dict[str, Any] = out.setdefault("properties", {})
    properties["expectedVersion"] = EXPECTED_VERSION
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


def _record_spec(window_id: str, window_title: str, record: ToolRecord) -> ToolSpec:
    return ToolSpec(
        name=f"{window_id}__{record.action}",
        title=f"{record.title} \u00b7 {window_title} (window {window_id})",
        description=f"{record.description} Browser action on window {window_id} (\u201c{window_title}\u201d).",
        input_schema=action_schema(record.input_schema),
        annotations=record.annotations,
        output_schema=RESULT_SCHEMA,
    )


def tool_specs(desktop: ListedDesktop) -> list[ToolSpec]:
    """The tools callable this moment: those of operable windows, plus app-level actions."""
    specs: list[ToolSpec] = []
    for window_id in operable_ids(desktop.window_states()):
        window: ListedWindow | None = desktop.window(window_id)
        if window is None:
            continue
        kind: WindowKind = window.window_kind  # type: ignore[assignment]
        title = window.window.title
        specs.extend(_record_spec(window_id, title, r) for r in records_for(kind) if r.offered_on(window))
        specs.extend(_page_tool_spec(window_id, title, t) for t in window.page_tools())
    specs.extend(
        ToolSpec(f"app__{r.action}", r.title, r.description, r.input_schema, r.annotations, RESULT_SCHEMA)
        for r in records_for("app")
    )
    return specs
