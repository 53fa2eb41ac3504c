"""The agent side of webmcp-bridge: WebMCP tool mirror, windows, the MCP server."""

from webmcp.desktop.registry import Bridge
from webmcp.desktop.windows import WindowState, operable_ids
from webmcp.errors import ToolError
from webmcp.server.app import INSTRUCTIONS, build_server

__all__ = ["INSTRUCTIONS", "Bridge", "ToolError", "WindowState", "build_server", "operable_ids"]
