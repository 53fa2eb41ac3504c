"""A window's full content in pages (GUI bridge §9): blocks, or one table's rows / list's items.

A window's state holds an overview; `read_content` hands out everything, uncut, a page at
a time. In block pages a table or list longer than `READ_ROWS` is cut (`offset`/`total`)
so one page stays readable; its rows then come in pages of their own, by `blockId`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["READ_ROWS", "block_page", "rows_page"]

READ_ROWS = 100


def block_page(full: Sequence[dict[str, Any]], offset: int, limit: int) -> dict[str, Any]:
    """Blocks `offset`… of `full`, at most `limit`, long tables and lists cut to `READ_ROWS`."""
    page = [_cut_rows(b) for b in full[offset : offset + limit]]
    return {"blocks": page, "offset": offset, "total": len(full)}


def rows_page(blocks: Sequence[dict[str, Any]], block_id: str, offset: int, limit: int) -> dict[str, Any] | None:
    """Rows (or items) `offset`… of the table or list block `block_id`; None if there is none."""
    block = next((b for b in blocks if b.get("id") == block_id), None)
    if block is None or block["type"] not in ("table", "list"):
        return None
    key = "rows" if block["type"] == "table" else "items"
    part = {k: v for k, v in block.items() if k != key}
    part[key] = block[key][offset : offset + limit]
    part.update(offset=offset, total=len(block[key]))
    return part


def _cut_rows(block: dict[str, Any]) -> dict[str, Any]:
    key = {"table": "rows", "list": "items"}.get(block["type"])
    if key is None or len(block[key]) <= READ_ROWS:
        return block
    return {**block, key: block[key][:READ_ROWS], "offset": 0, "total": len(block[key])}
