"""The agent side of webmcp-bridge: the view, the desktop of windows, tools, UI context, MCP server.

Layers, each importing only those below it (checked by `scripts/check`):

    webmcp.cli         the command line: parses, starts the browser, hands over to webmcp.runner
    webmcp.runner      opens (or attaches to) the browser, imports the rest meanwhile, runs webmcp.serve
    webmcp.serve       one browser's desktop served over MCP until the client or browser goes
    webmcp.server      the `mcp` SDK glue and transports
    webmcp.uicontext   `ui://current` and `ui://locate/{id}`
    webmcp.tools       tool records, the catalogue of callable tools, the dispatcher
    webmcp.desktop     tabs, dialogs and modals as windows; the WebMCP mirror
    webmcp.view        page data → blocks, budgets, masking, summary (pure)
    webmcp.models, webmcp.errors   wire models and tool errors
    webmcp.config      the command line's settings, read once into a frozen BridgeConfig
    cdp_bridge         the browser side (CDP only)

The names below load on first use: `webmcp-bridge` starts the browser before it pays for
the event loop, the `mcp` SDK and the pydantic models (see webmcp.cli).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webmcp.desktop.registry import Desktop
    from webmcp.desktop.windows import WindowState, operable_ids
    from webmcp.errors import ToolError

__all__ = ["DISTRIBUTION", "Desktop", "ToolError", "WindowState", "operable_ids", "package_version"]

DISTRIBUTION = "webmcp-gui-bridge"
"""The name this project is installed under (PyPI's webmcp-bridge is another project)."""

_LAZY = {
    "Desktop": "webmcp.desktop.registry",
    "WindowState": "webmcp.desktop.windows",
    "operable_ids": "webmcp.desktop.windows",
    "ToolError": "webmcp.errors",
}


def package_version() -> str:
    """The installed distribution's version (what `serverInfo.version` and --version report)."""
    import importlib.metadata  # ~20 ms: not before the browser is started

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'webmcp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
