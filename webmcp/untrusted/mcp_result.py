"""A page tool's answer in MCP's own `CallToolResult` shape, read as what it means. Pure.

Pages built on MCP tooling answer the way an MCP server would: the `use-webmcp-tool` React
hook returns `{content: [{type: "text", text}], isError: true}` for every error the tool
throws (so its `execute` never throws, and WebMCP reports the call `Completed`), and
`{content: [...], structuredContent?}` otherwise. Passed on as it is, the first would be
answered "completed." and the second as a JSON blob inside `result`.

`read_mcp_result` recognises the shape only when it is exactly that: an object whose
`content` is a list of typed items, with no keys but `content`, `isError`,
`structuredContent` and `_meta`. Then an error is an error (its text is the page's
message), and a success's `result` is its `structuredContent` if it has an object there
(the content is by MCP's rule a rendering of it), else its text; content that is not all
text (images, resources) is passed on unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["McpResult", "read_mcp_result"]

_KEYS = frozenset({"content", "isError", "structuredContent", "_meta"})


@dataclass(frozen=True)
class McpResult:
    """What an MCP-shaped answer says."""

    is_error: bool
    text: str
    """Its text items, joined by line breaks ("" when it has none)."""
    result: dict[str, Any] | None
    """For a success, what the bridge's `result` holds; None: pass the answer on unchanged."""


def read_mcp_result(output: Any) -> McpResult | None:
    """`output` read as an MCP `CallToolResult`, or None when it is not one."""
    if not isinstance(output, dict) or not _KEYS.issuperset(output) or "content" not in output:
        return None
    content, is_error = output["content"], output.get("isError", False)
    if not isinstance(content, list) or not isinstance(is_error, bool):
        return None
    if not all(isinstance(item, dict) and isinstance(item.get("type"), str) for item in content):
        return None
    if not content and not ({"isError", "structuredContent"} & output.keys()):
        return None  # a bare {content: []} says too little to be taken for MCP's shape
    texts = [item.get("text") for item in content if item["type"] == "text"]
    text = "\n".join(t for t in texts if isinstance(t, str))
    structured = output.get("structuredContent")
    if is_error:
        return McpResult(True, text, None)
    if isinstance(structured, dict):
        return McpResult(False, text, structured)
    if len(texts) == len(content):
        return McpResult(False, text, {"text": text})
    return McpResult(False, text, None)
