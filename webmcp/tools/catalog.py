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
from webmcp.untrusted.page_limits import page_tool_description

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


def _page_tool_spec(window_id: str, page_origin: str, tool: PageTool) -> ToolSpec:
    # The bridge's words frame the page's; every page string is capped, quoted and attributed
    # to the origin of the frame that registered the tool (docs/security.md).
    origin = tool.origin or page_origin
    notes = [page_tool_description(tool, origin)]
    if tool.origin and page_origin and tool.origin != page_origin:
        notes.append(
            f"It comes from an embedded frame of {tool.origin}, not from the page itself ({page_origin}); "
            "its output is marked untrusted."
        )
    if tool.declarative and not tool.annotations.get("autosubmit"):
        notes.append("It fills a form in the page, which then waits to be submitted (a window with submit/cancel).")
    description = " ".join(notes)
    annotations: dict[str, Any] = {
        "readOnlyHint": bool(tool.annotations.get("readOnly", False)),
        "destructiveHint": bool(tool.annotations.get("consequential", False)),
        "openWorldHint": True,
    }
    return ToolSpec(
        name=f"{window_id}__{tool.handle}",
        title=f"Page tool \u201c{tool.display_name or tool.handle}\u201d (window {window_id})",
        description=description,
        input_schema=action_schema(tool.input_schema),
        annotations=annotations,
        output_schema=RESULT_SCHEMA,
    )


def _record_spec(window_id: str, record: ToolRecord[Any, Any]) -> ToolSpec:
    # Never the page's title here: a page must not be able to write the bridge's own words.
    return ToolSpec(
        name=f"{window_id}__{record.action}",
        title=f"{record.title} (window {window_id})",
        description=f"{record.description} Browser action on window {window_id}.",
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
        origin = str(getattr(window, "origin", ""))
        specs.extend(_record_spec(window_id, r) for r in records_for(kind) if r.offered_on(window))
        specs.extend(_page_tool_spec(window_id, origin, t) for t in window.page_tools())
    specs.extend(
        ToolSpec(f"app__{r.action}", r.title, r.description, r.input_schema, r.annotations, RESULT_SCHEMA)
        for r in records_for("app")
    )
    return specs
