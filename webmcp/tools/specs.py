"""What `tools/list` says of one tool (`ToolSpec`), and how a page tool is described there.

Page tools take their schema from WebMCP, with `expectedVersion` added, and their
annotations mapped (`readOnly` → `readOnlyHint`, `consequential` → `destructiveHint`;
docs/protocols.md#map-page-tools). `catalog` lists them; a tab's `list_page_tools`
describes the tools it does not list in the same words.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from webmcp.desktop.mirror import PageTool
from webmcp.models import tool_output_schema
from webmcp.untrusted.page_limits import page_tool_description

__all__ = ["EXPECTED_VERSION", "RESULT_SCHEMA", "ToolSpec", "action_schema", "page_tool_spec"]

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


def action_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the optional `expectedVersion` every window tool accepts."""
    out: dict[str, Any] = copy.deepcopy(schema) if schema else {"type": "object", "properties": {}}
    out.setdefault("type", "object")
    properties: dict[str, Any] = out.setdefault("properties", {})
    properties["expectedVersion"] = EXPECTED_VERSION
    return out


def page_tool_spec(window_id: str, page_origin: str, tool: PageTool) -> ToolSpec:
    """How `tools/list` shows page tool `tool` of window `window_id` (its page at `page_origin`)."""
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
