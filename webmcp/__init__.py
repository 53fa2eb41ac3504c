"""The agent side of webmcp-bridge: WebMCP tool mirror, windows, the MCP server."""

from .bridge import Bridge
from .errors import ToolError
from .server import INSTRUCTIONS, build_server
from .windows import WindowState, operable_ids

__all__ = ["INSTRUCTIONS", "Bridge", "ToolError", "WindowState", "build_server", "operable_ids"]
