"""The blocks a window publishes in `app://windows`, from the view's. Pure.

The view keeps an id on every block (build.py: stable, never reused), and `read_content`
hands them all out. The window document carries only what an agent can use: a block's id
where a tool can name it (GUI bridge §4.4 makes `id` optional, "for reference"): a table or
list (`read_content {blockId}`), and a block that shows a field, button or link the window
actions name (`fill`/`press {blockId}`, and the `candidates` of an ambiguous label; not the
text `press` also takes, which an ordinal tells apart: "Reply #2"). A
dialog's first heading that only repeats its window's title goes too. A run of text blocks
left with nothing but their text (no id, no heading) is shown as one block of their lines: each
of them cost 24 bytes of `{"type":"text","text":…}` to say a line. Everything else of a block
stays as the view built it, so a block shown here is the one `read_content` gives, less its
unused id (or, for such a run, the lines of the blocks it gives).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from webmcp.view.build import View
from webmcp.view.paging import UNITS

__all__ = ["Shown", "page_blocks", "shown_blocks"]

Runs = dict[tuple[int, ...], tuple[tuple[dict[str, Any], ...], dict[str, Any]]]


@dataclass
class Shown:
    """What the last `page_blocks` of a window showed, so that what it shows again is the same objects."""

    blocks: dict[int, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    """id of a view's block → (the block, the block as shown)."""
    runs: Runs = field(default_factory=dict)
    """ids of a run of plain text blocks as shown → (those blocks, the one block of their lines)."""


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
    """`blocks` as the window document shows them: ids only on tables, lists and the blocks in `named`,
    and each run of text blocks left with nothing but their text as one block of their lines.

    `title`: a dialog's window title; its first block, when that is a heading saying just
    the title, is left out (the title says it). `kept`: as for `page_blocks`.
    """
    out: list[dict[str, Any]] = []
    before = Shown()
    if kept is not None:  # what the last call showed is read from; `kept` fills anew
        before, kept.blocks, kept.runs = Shown(kept.blocks, kept.runs), {}, {}
    for i, block in enumerate(blocks):
        if i == 0 and title is not None and block["type"] == "text" and "heading" in block:
            if " ".join(block["text"].split()) == " ".join(title.split()):
                continue
        shown = block
        if "id" in block and block["type"] not in UNITS and block["id"] not in named:
            hit = before.blocks.get(id(block))
            if hit is not None and hit[0] is block and "id" not in hit[1]:
                shown = hit[1]
            else:
                shown = {k: v for k, v in block.items() if k != "id"}
        if kept is not None:
            kept.blocks[id(block)] = (block, shown)
        out.append(shown)
    return _joined(out, before.runs, kept)


def _plain(block: dict[str, Any]) -> bool:
    """A text block with nothing but its text (no id, heading or mark)."""
    return block["type"] == "text" and len(block) == 2


def _joined(blocks: list[dict[str, Any]], before: Runs, kept: Shown | None) -> list[dict[str, Any]]:
    """`blocks` with each run of plain text blocks as one block of their lines.

    Paragraphs and lines with nothing to act on cost `{"type":"text","text":…}` each (24 bytes);
    as lines of one block they say the same. A run shown before as the very same blocks is the
    very block shown then (`before`), which `kept` then keeps for the next call.
    """
    out: list[dict[str, Any]] = []
    for plain, group in groupby(blocks, key=_plain):
        run = tuple(group)
        if not plain or len(run) == 1:
            out.extend(run)
            continue
        key = tuple(id(b) for b in run)
        hit = before.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], run, strict=True)):
            block = hit[1]
        else:
            block = {"type": "text", "text": "\n".join(b["text"] for b in run)}
        if kept is not None:
            kept.runs[key] = (run, block)
        out.append(block)
    return out
