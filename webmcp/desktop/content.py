"""What a tab shows, handed out whole: `read_content` a page at a time, and screenshots.

The window's state holds an overview (GUI bridge §9); these give the rest. A long table or
list that the view read only in part (a big page, `cdp_bridge.ax.read_frame_tree`) has the
asked rows read from the page when they are asked for.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import anyio

from cdp_bridge.errors import CDPError
from webmcp.desktop.live_view import PageRead, read_run
from webmcp.errors import ToolError, cdp_errors
from webmcp.models import ToolResult
from webmcp.view.paging import UNITS, block_page, rows_page, run_block, unread_in

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = ["read_content", "screenshot"]


async def screenshot(tab: Tab) -> bytes:
    """What the tab shows, as PNG bytes."""
    shot = await tab.page.session.send("Page.captureScreenshot", {"format": "png"}, timeout=tab.timeouts.navigation)
    return base64.b64decode(shot["data"])


async def read_content(tab: Tab, block_id: str | None, offset: int, limit: int) -> ToolResult:
    """The window's full content: blocks in pages, or one table's rows / list's items.

    Blocks of an open in-page modal are readable by `blockId` too. Values are masked already.
    """
    view = tab.view
    full = view.full_blocks if view is not None else []
    if tab.blocked() is not None:
        view, full = None, tab.window.blocks[1:]  # the notice only: no content of a blocked page
    if block_id is None:
        page = block_page(full, offset, limit)
        page["version"] = tab.window.version
        shown = len(page["blocks"])
        return ToolResult(message=f"Blocks {offset}\u2013{offset + shown} of {len(full)}.", result=page)
    modal_blocks = [b for m in view.modals for b in m.full_blocks] if view is not None else []
    blocks = [*full, *modal_blocks]
    part = rows_page(blocks, block_id, offset, limit)
    if part is None:
        raise ToolError(
            "validation_failed",
            f"{block_id!r} is not a table or list block of {tab.id}; read app://windows for the current block ids.",
            fields=[{"field": "blockId", "error": "No such table or list block"}],
        )
    key = UNITS[part["type"]]
    block = run_block(blocks, block_id)
    read = tab.last_read
    if view is not None and block is not None and read is not None and unread_in(block, offset, limit):
        run = await _read_run(tab, read, block, offset, limit)
        if run is not None:
            part[key] = run
    part["version"] = tab.window.version
    end = offset + len(part[key])
    return ToolResult(message=f"{key.capitalize()} {offset}\u2013{end} of {part['total']} of {block_id}.", result=part)


async def _read_run(tab: Tab, read: PageRead, block: dict[str, Any], offset: int, limit: int) -> list[Any] | None:
    """Rows or items `offset`… of a long run that the view holds only in part, read from the page now.

    Raises:
        ToolError: the page could not be read in time, or the table or list is gone.
    """
    block_id = block["id"]

    def gone(_exc: CDPError) -> ToolError:
        return ToolError(
            "stale_state",
            f"{block_id} is no longer on the page of {tab.id}; read app://windows for the current blocks.",
            current_version=tab.window.version,
        )

    try:
        with cdp_errors(f"reading the rows of {block_id}", gone=gone), anyio.fail_after(tab.timeouts.snapshot):
            return await read_run(read, block, offset, limit)
    except TimeoutError:
        raise ToolError("action_timeout", f"{tab.id} did not give the rows of {block_id} in time; try again.") from None
