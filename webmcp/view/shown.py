"""The blocks a window publishes in `app://windows`, from the view's. Pure.

The view keeps an id on every block (build.py: stable, never reused), and `read_content`
hands them all out. The window document carries only what an agent can use: a block's id
where a tool can name it (GUI bridge §4.4 makes `id` optional, "for reference"): a table or
list (`read_content {blockId}`), and a block that shows a field, button or link the window
actions name (`fill`/`press {blockId}`, and the `candidates` of an ambiguous label). A
dialog's first heading that only repeats its window's title goes too. Everything else of a
block stays as the view built it, so a block shown here is the one `read_content` gives,
less its unused id.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from webmcp.view.build import View
from webmcp.view.paging import UNITS

__all__ = ["page_blocks", "shown_blocks"]


def page_blocks(view: View) -> list[dict[str, Any]]:
    """A tab's page blocks (`view.blocks`) as its window shows them."""
    return shown_blocks(view.blocks, {t.block_id for t in view.targets if t.block_id is not None})


def shown_blocks(
    blocks: Sequence[dict[str, Any]], named: Collection[str] = (), title: str | None = None
) -> list[dict[str, Any]]:
    """`blocks` as the window document shows them: ids only on tables, lists and the blocks in `named`.

    `title`: a dialog's window title; its first block, when that is a heading saying just
    the title, is left out (the title says it).
    """
    out: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        if i == 0 and title is not None and block["type"] == "text" and "heading" in block:
            if " ".join(block["text"].split()) == " ".join(title.split()):
                continue
        if "id" in block and block["type"] not in UNITS and block["id"] not in named:
            block = {k: v for k, v in block.items() if k != "id"}
        out.append(block)
    return out
