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

__all__ = [
    "EXPECTED_VERSION",
    "ACTION_OUTPUT",
    "RESULT_SCHEMA",
    "ToolSpec",
    "action_schema",
    "hints",
    "listed_schema",
    "page_tool_spec",
]

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


def action_schema(schema: dict[str, Any], versioned: bool = True) -> dict[str, Any]:
    """`schema` with the optional `expectedVersion` (when `versioned`: the tool writes to its window).

    Every window tool accepts and checks it (the dispatcher takes it out before the schema's
    check); a tool that only reads, or only brings its tab to the front, does not list it."""
    out: dict[str, Any] = copy.deepcopy(schema) if schema else {"type": "object", "properties": {}}
    out.setdefault("type", "object")
    properties: dict[str, Any] = out.setdefault("properties", {})
    if versioned:
        properties["expectedVersion"] = EXPECTED_VERSION
    return out


_GUARDS = frozenset({"minLength", "maxLength", "pattern", "minItems", "maxItems", "minimum", "exclusiveMinimum"})
"""Keywords of the bridge's own schemas that only refuse nonsense (an empty label, a negative offset,
a 1,000-character text, 51 fields at once): checked on every call, not listed. A number's `maximum`
is listed: an agent's ask reaches it (a 60 s wait, 5,000 rows at once)."""


_VALUES = frozenset({"default", "const", "enum", "examples"})


def listed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A browser action's input schema as `tools/list` shows it: `schema` less its guards.

    The call is still checked against the whole of `schema` (an unknown argument, an empty
    label: `validation_failed`, field by field); the list, which an agent pays for on every
    request, says what each argument is. `additionalProperties: false` goes too: the call
    refuses what the list does not name, and some hosts refuse the keyword."""

    def slim(node: Any) -> Any:
        if isinstance(node, list):
            return [slim(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):  # names, not keywords
                out[key] = {name: slim(v) for name, v in value.items()}
            elif key in _VALUES:  # data, not schemas: kept as they are
                out[key] = value
            elif key in _GUARDS or (key == "additionalProperties" and value is False):
                continue
            else:
                out[key] = slim(value)
        return out

    result: dict[str, Any] = slim(schema)
    return result


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
