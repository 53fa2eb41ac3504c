"""A page answer in MCP's own shape is read for what it says: an error is an error, text is text."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp.untrusted.mcp_result import McpResult, read_mcp_result


def test_the_use_webmcp_tool_error_shape_is_an_error_with_its_text() -> None:
    shaped = read_mcp_result({"content": [{"type": "text", "text": "Error: no table"}], "isError": True})
    assert shaped == McpResult(True, "Error: no table", None)


def test_a_success_with_structured_content_gives_that_object() -> None:
    shaped = read_mcp_result(
        {"content": [{"type": "text", "text": '{"dishes":["Tarte"]}'}], "structuredContent": {"dishes": ["Tarte"]}}
    )
    assert shaped is not None and not shaped.is_error and shaped.result == {"dishes": ["Tarte"]}


def test_a_text_only_success_gives_its_text_joined() -> None:
    shaped = read_mcp_result({"content": [{"type": "text", "text": "Booked."}, {"type": "text", "text": "Table 4."}]})
    assert shaped == McpResult(False, "Booked.\nTable 4.", {"text": "Booked.\nTable 4."})


def test_a_success_with_an_image_is_passed_on_unchanged() -> None:
    shaped = read_mcp_result({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]})
    assert shaped is not None and not shaped.is_error and shaped.result is None


def test_an_error_without_text_is_still_an_error() -> None:
    assert read_mcp_result({"content": [], "isError": True}) == McpResult(True, "", None)


@pytest.mark.parametrize(
    "output",
    [
        "Error: a string",
        {"content": "text"},
        {"content": [{"type": "text", "text": "x"}], "isError": "yes"},
        {"content": [{"text": "no type"}]},
        {"content": [{"type": "text", "text": "x"}], "cart": []},  # a page's own object that has a content list
        {"content": []},
        {"isError": True},
        [{"type": "text", "text": "x"}],
        None,
    ],
)
def test_anything_else_is_not_taken_for_the_mcp_shape(output: Any) -> None:
    assert read_mcp_result(output) is None
