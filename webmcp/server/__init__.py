"""The MCP side: the `mcp` SDK server over the desktop, its notifications and transports.

The names below load on first use, so the command line can read `http_guard` (its options)
without importing the `mcp` SDK; and the SDK's submodules load without its package
`__init__`s, which import the client and the high-level server too (webmcp.server.sdk).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from webmcp.server.sdk import defer_package_inits

if TYPE_CHECKING:
    from webmcp.server.app import INSTRUCTIONS, WINDOWS_URI, build_server, run_notifier
    from webmcp.server.transport import Broadcaster, serve_http, serve_stdio

__all__ = ["INSTRUCTIONS", "WINDOWS_URI", "Broadcaster", "build_server", "run_notifier", "serve_http", "serve_stdio"]

# Before any `mcp` import: the server's pieces come without the whole SDK (see webmcp.server.sdk).
defer_package_inits()

_LAZY = {
    "INSTRUCTIONS": "webmcp.server.app",
    "WINDOWS_URI": "webmcp.server.app",
    "build_server": "webmcp.server.app",
    "run_notifier": "webmcp.server.app",
    "Broadcaster": "webmcp.server.transport",
    "serve_http": "webmcp.server.transport",
    "serve_stdio": "webmcp.server.transport",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'webmcp.server' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
