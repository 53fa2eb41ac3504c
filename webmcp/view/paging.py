"""A window's full content in pages (GUI bridge §9): blocks, or one table's rows / list's items.

A window's state holds an overview; `read_content` hands out everything, uncut, a page at
a time. In block pages a table or list longer than `READ_ROWS` is cut (`offset`/`total`)
so one page stays readable; its rows then come in pages of their own, by `blockId`. On a
big page a long run is read only in part (`cdp_bridge.ax.read_frame_tree`): such a block
holds its first rows and a `total`, and the caller reads the rest when asked (`unread_in`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["READ_ROWS", "UNITS", "block_page", "cut_run", "rows_page", "run_block", "unread_in"]

READ_ROWS = 100
UNITS = {"table": "rows", "list": "items"}
"""Where a table block keeps its rows and a list block its items."""


def block_page(full: Sequence[dict[str, Any]], offset: int, limit: int) -> dict[str, Any]:
    """Blocks `offset`… of `full`, at most `limit`, long tables and lists cut to `READ_ROWS`."""
    page = [cut_run(b, READ_ROWS) for b in full[offset : offset + limit]]
    return {"blocks": page, "offset": offset, "total": len(full)}


def rows_page(blocks: Sequence[dict[str, Any]], block_id: str, offset: int, limit: int) -> dict[str, Any] | None:
    """Rows (or items) `offset`… of the table or list block `block_id`; None if there is none.

    A block read only in part (`unread_in`) answers what it holds of the range.
    """
    block = run_block(blocks, block_id)
    if block is None:
        return None
    key = UNITS[block["type"]]
    part = {k: v for k, v in block.items() if k != key}
    part[key] = block[key][offset : offset + limit]
    part.update(offset=offset, total=block.get("total", len(block[key])))
    return part


def run_block(blocks: Sequence[dict[str, Any]], block_id: str) -> dict[str, Any] | None:
    """The table or list block `block_id`, or None."""
    block = next((b for b in blocks if b.get("id") == block_id), None)
    return block if block is not None and block["type"] in UNITS else None


def unread_in(block: dict[str, Any], offset: int, limit: int) -> bool:
    """Whether rows or items `offset`… (at most `limit`) of `block` include some not read yet."""
    held = len(block[UNITS[block["type"]]])
    total = block.get("total", held)
    return offset < total and min(offset + limit, total) > held


def cut_run(block: dict[str, Any], limit: int) -> dict[str, Any]:
    """`block` with at most `limit` rows or items, and `offset`/`total` when it holds more (or was read in part)."""
    key = UNITS.get(block["type"])
    if key is None:
        return block
    total = block.get("total", len(block[key]))  # a long run may not have been read past its start
    if total <= limit:
        return block
    return {**block, key: block[key][:limit], "offset": 0, "total": total}
