"""list_page_tools: every page tool, in the page's order, a bounded page at a time."""

from __future__ import annotations

import json
from typing import Any, cast

from cdp_bridge.connection import CDPSession
from webmcp.desktop.mirror import PageTool
from webmcp.tools.listing import MAX_LISTING_BYTES, page_tool_listing

ORIGIN = "http://127.0.0.1:1"


def _tool(name: str, schema: dict[str, Any] | None = None, description: str = "d") -> PageTool:
    return PageTool(
        handle=name.replace(".", "_"),
        name=name,
        frame_id="F",
        session=cast(CDPSession, object()),
        description=description,
        input_schema=schema or {"type": "object", "properties": {}},
        annotations={"readOnly": True},
        backend_node_id=None,
        display_name=name,
        origin=ORIGIN,
    )


def test_a_listing_pages_through_every_tool_in_the_pages_order() -> None:
    tools = [_tool(f"bulk_{i}") for i in range(300)] + [_tool("cart.add")]
    first = page_tool_listing("tab-1", ORIGIN, tools, tools[:128], 0, 50)
    assert first.result is not None
    assert [t["name"] for t in first.result["tools"]] == [f"bulk_{i}" for i in range(50)]
    assert first.result["total"] == 301 and first.result["nextOffset"] == 50
    assert first.result["tools"][0]["listedAs"] == "tab-1__bulk_0"
    last = page_tool_listing("tab-1", ORIGIN, tools, tools[:128], 300, 50)
    assert last.result is not None and "nextOffset" not in last.result
    [entry] = last.result["tools"]
    assert entry["name"] == "cart.add" and entry["handle"] == "cart_add" and "listedAs" not in entry
    assert entry["annotations"]["readOnlyHint"] is True
    assert "The page at http://127.0.0.1:1 says (description)" in entry["description"]
    assert "tab-1__call_page_tool" in (last.message or "")


def test_a_listing_stays_within_its_byte_bound_and_always_holds_one_tool() -> None:
    big = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 150} for i in range(90)}}
    tools = [_tool(f"big_{i}", big) for i in range(20)]
    page = page_tool_listing("tab-1", ORIGIN, tools, [], 0, 50)
    assert page.result is not None
    assert 1 <= len(page.result["tools"]) < 20
    assert len(json.dumps(page.result["tools"]).encode()) <= MAX_LISTING_BYTES
    assert page.result["nextOffset"] == len(page.result["tools"])
    one = page_tool_listing("tab-1", ORIGIN, tools, [], 0, 50, max_bytes=10)
    assert one.result is not None and len(one.result["tools"]) == 1


def test_an_offset_past_the_end_lists_nothing_and_says_so() -> None:
    page = page_tool_listing("tab-1", ORIGIN, [_tool("a")], [], 5, 20)
    assert page.result == {"total": 1, "offset": 5, "tools": []}
    assert "none from offset 5" in (page.message or "")
