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
from webmcp.untrusted.page_limits import page_tool_description

__all__ = ["EXPECTED_VERSION", "ACTION_OUTPUT", "RESULT_SCHEMA", "ToolSpec", "action_schema", "hints", "page_tool_spec"]

EXPECTED_VERSION = {"type": "integer"}
"""Said once, in the server's instructions (server/app.py): the version read; a changed window refuses."""
RESULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"result": {"type": "object"}}}
"""The `outputSchema` a page tool declares in `tools/list` (GUI bridge §12.3): its page's answer is
`result`. The common fields (`message`, `openedWindowIds`) and an error's (`code`,
`currentVersion`, `fields`, …) are allowed by it and described once, in the instructions and in the
shipped schema (`models.tool_output_schema`), not in every tool of every list (1.1 KB each)."""

ACTION_OUTPUT: dict[str, Any] = {"type": "object"}
"""The `outputSchema` of the bridge's own actions: their answer is a ToolResult, whose fields the
instructions name once (a tab lists 14 of them; RESULT_SCHEMA in each would be 2 KB of every list)."""

_HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def hints(annotations: dict[str, Any]) -> dict[str, Any]:
    """The hints of `annotations` that differ from MCP's defaults: only they tell a client anything.

    `destructiveHint` and `idempotentHint` mean something only when `readOnlyHint` is false.
    """
    read_only = bool(annotations.get("readOnlyHint", False))
    out: dict[str, Any] = {}
    for name, default in _HINT_DEFAULTS.items():
        if name not in annotations or annotations[name] == default:
            continue
        if read_only and name in ("destructiveHint", "idempotentHint"):
            continue
        out[name] = annotations[name]
    return out


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
        notes.append(f"That is an embedded frame, not the page itself ({page_origin}); its output is marked untrusted.")
    if tool.declarative and not tool.annotations.get("autosubmit"):
        notes.append("It fills a form of the page, then a window of it waits for submit or cancel.")
    description = " ".join(notes)
    annotations: dict[str, Any] = {
        "readOnlyHint": bool(tool.annotations.get("readOnly", False)),
        "destructiveHint": bool(tool.annotations.get("consequential", False)),
        "openWorldHint": True,
    }
    return ToolSpec(
        name=f"{window_id}__{tool.handle}",
        # No title: the name says it, and the page's own name, where the name had to change it, is
        # in the description (once).
        title="",
        description=description,
        input_schema=action_schema(tool.input_schema),
        annotations=annotations,
        output_schema=RESULT_SCHEMA,
    )
