"""The agent side of webmcp-bridge: the view, the desktop of windows, tools, UI context, MCP server.

Layers, each importing only those below it (checked by `scripts/check`):

    webmcp.server      the `mcp` SDK glue and transports
    webmcp.uicontext   `ui://current` and `ui://locate/{id}`
    webmcp.tools       tool records, the catalogue of callable tools, the dispatcher
    webmcp.desktop     tabs, dialogs and modals as windows; the WebMCP mirror
    webmcp.view        page data → blocks, budgets, masking, summary (pure)
    webmcp.models, webmcp.errors   wire models and tool errors
    cdp_bridge         the browser side (CDP only)
"""

from webmcp.desktop.registry import Desktop
from webmcp.desktop.windows import WindowState, operable_ids
from webmcp.errors import ToolError

__all__ = ["Desktop", "ToolError", "WindowState", "operable_ids"]
