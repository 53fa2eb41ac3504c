"""The MCP side: the `mcp` SDK server over the desktop, its notifications and transports."""

from webmcp.server.app import INSTRUCTIONS, WINDOWS_URI, build_server, run_notifier
from webmcp.server.transport import Broadcaster, serve_http, serve_stdio

__all__ = ["INSTRUCTIONS", "WINDOWS_URI", "Broadcaster", "build_server", "run_notifier", "serve_http", "serve_stdio"]
