"""The blocks a window publishes in `app://windows`, from the view's. Pure.

The view keeps an id on every block (build.py: stable, never reused), and `read_content`
hands them all out. The window document carries only what an agent can use: a block's id
where a tool can name it (GUI bridge §4.4 makes `id` optional, "for reference"): a table or
list (`read_content {blockId}`), and a block that shows a field, button or link the window
actions name (`fill`/`press {blockId}`, and the `candidates` of an ambiguous label; not the
text `press` also takes, which an ordinal tells apart: "Reply #2"). A
dialog's first heading that only repeats its window's title goes too. Everything else of a
block stays as the view built it, so a block shown here is the one `read_content` gives,
less its unused id.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from webmcp.view.build import View
from webmcp.view.paging import UNITS

__all__ = ["Shown", "page_blocks", "shown_blocks"]


Shown = dict[int, tuple[dict[str, Any], dict[str, Any]]]
"""id of a view's block → (the block, the block as shown): what the last `page_blocks` showed."""


def page_blocks(view: View, kept: Shown | None = None) -> list[dict[str, Any]]:
    """A tab's page blocks (`view.blocks`) as its window shows them.

    `kept` is what the last call showed, for the same window: a block the view gives again as the
    very object it gave then (build.py `_number`) is shown as the very object shown then, so an
    unchanged window compares fast. It is replaced with what this call showed.
    """
    named = {t.block_id for t in view.targets if t.block_id is not None and t.kind != "text"}
    return shown_blocks(view.blocks, named, kept=kept)


def shown_blocks(
    blocks: Sequence[dict[str, Any]],
    named: Collection[str] = (),
    title: str | None = None,
    kept: Shown | None = None,
) -> list[dict[str, Any]]:
    """`blocks` as the window document shows them: ids only on tables, lists and the blocks in `named`.

    `title`: a dialog's window title; its first block, when that is a heading saying just
    the title, is left out (the title says it). `kept`: as for `page_blocks`.
    """
    out: list[dict[str, Any]] = []
    before = dict(kept) if kept is not None else {}
    if kept is not None:
        kept.clear()
    for i, block in enumerate(blocks):
        if i == 0 and title is not None and block["type"] == "text" and "heading" in block:
            if " ".join(block["text"].split()) == " ".join(title.split()):
                continue
        shown = block
        if "id" in block and block["type"] not in UNITS and block["id"] not in named:
            hit = before.get(id(block))
            if hit is not None and hit[0] is block and "id" not in hit[1]:
                shown = hit[1]
            else:
                shown = {k: v for k, v in block.items() if k != "id"}
        if kept is not None:
            kept[id(block)] = (block, shown)
        out.append(shown)
    return out
