"""A tab's page tools as `list_page_tools` pages through them: all of them, listed or not, bounded.

A window lists at most `MAX_TOOLS_PER_WINDOW` page tools in `tools/list`; the rest of what
the page registered stays reachable: this listing gives every tool in the page's order,
described in the same words as `tools/list` (specs.py), with its input schema, a page at a
time within `MAX_LISTING_BYTES`; `call_page_tool` calls any of them by name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from webmcp.desktop.mirror import PageTool
from webmcp.models import ToolResult
from webmcp.tools.specs import page_tool_spec

__all__ = ["MAX_LISTING_BYTES", "page_tool_listing"]

MAX_LISTING_BYTES = 96 * 1024
"""JSON bytes of the tools one answer holds (one tool at least; a tool's schema is at most 16 KiB)."""


def _entry(window_id: str, origin: str, tool: PageTool, listed: bool) -> dict[str, Any]:
    spec = page_tool_spec(window_id, origin, tool)
    entry: dict[str, Any] = {"name": tool.display_name or tool.handle, "handle": tool.handle}
    if listed:
        entry["listedAs"] = spec.name
    entry.update(description=spec.description, inputSchema=tool.input_schema, annotations=spec.annotations)
    return entry


def page_tool_listing(
    window_id: str,
    origin: str,
    tools: Sequence[PageTool],
    listed: Sequence[PageTool],
    offset: int,
    limit: int,
    *,
    max_bytes: int = MAX_LISTING_BYTES,
) -> ToolResult:
    """`tools` (all of a window's, in the page's order) from `offset`: at most `limit`, within `max_bytes`."""
    listed_handles = {t.handle for t in listed}
    entries: list[dict[str, Any]] = []
    used = 0
    for tool in tools[offset : offset + limit]:
        entry = _entry(window_id, origin, tool, tool.handle in listed_handles)
        size = len(json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if entries and used + size > max_bytes:
            break
        entries.append(entry)
        used += size
    total, end = len(tools), offset + len(entries)
    result: dict[str, Any] = {"total": total, "offset": offset, "tools": entries}
    if end < total:
        result["nextOffset"] = end
    if not entries:
        shown = f"none from offset {offset}"
    else:
        shown = f"{offset + 1} to {end}, in the page's order"
    message = (
        f"Window {window_id} has {total} page tools; tools/list holds {len(listed_handles)} of them "
        f"(those with listedAs). Here: {shown}. Call any of them with {window_id}__call_page_tool "
        "{name, arguments}: the same checks apply as to a listed tool."
    )
    if end < total:
        message = f"{message} More from offset {end}."
    return ToolResult(message=message, result=result)
