"""The blocks a window publishes (view/shown.py), on recorded sample-site pages: ids only where a tool
can name the block, nothing else of a block changed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from webmcp.models import Block
from webmcp.view.build import BlockIds, FrameNodes, View, build_view
from webmcp.view.shown import page_blocks, shown_blocks

DATA = Path(__file__).parent / "data" / "ax"
PAGES = sorted(p.name.removesuffix(".json.gz") for p in DATA.glob("*.json.gz"))


def _view(name: str) -> View:
    doc = json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))
    return build_view([FrameNodes.from_json(f) for f in doc["frames"]], BlockIds())


def _without_id(block: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in block.items() if k != "id"}


@pytest.mark.parametrize("name", PAGES)
def test_a_shown_block_is_the_views_block_with_its_id_only_where_a_tool_can_name_it(name: str) -> None:
    view = _view(name)
    shown = page_blocks(view)
    assert [_without_id(b) for b in shown] == [_without_id(b) for b in view.blocks], "nothing but ids differ"
    named = {t.block_id for t in view.targets if t.kind != "text"}
    for block, built in zip(shown, view.blocks, strict=True):
        referable = block["type"] in ("table", "list") or built["id"] in named
        assert ("id" in block) == referable, block
        assert block.get("id", built["id"]) == built["id"], "an id shown is the view's own"
    TypeAdapter(list[Block]).validate_python(shown)


def test_every_block_a_window_action_can_name_keeps_its_id() -> None:
    view = _view("home")
    ids = {b["id"] for b in page_blocks(view) if "id" in b}
    assert {t.block_id for t in view.targets if t.block_id and t.kind != "text"} <= ids
    kept = {b["type"] for b in page_blocks(view) if "id" in b}
    dropped = {b["type"] for b in page_blocks(view) if "id" not in b}
    assert {"fields", "table", "list", "text"} <= kept and {"notice", "media", "text"} <= dropped


def test_a_dialog_leaves_out_a_first_heading_that_repeats_its_title_and_nothing_else() -> None:
    (modal,) = _view("modal_open").modals
    assert modal.blocks[0] == {**modal.blocks[0], "type": "text", "heading": 2, "text": "Edit queue settings"}
    shown = shown_blocks(modal.blocks, title="Edit queue settings")
    assert [_without_id(b) for b in shown] == [_without_id(b) for b in modal.blocks[1:]]
    assert [_without_id(b) for b in shown_blocks(modal.blocks, title="Another title")] == [
        _without_id(b) for b in modal.blocks
    ], "a heading that says something the title does not stays"


@pytest.mark.parametrize("name", ["gazette_article", "cinema_book", "login"])
def test_blocks_shown_again_are_the_objects_shown_then_and_shown_as_they_would_be(name: str) -> None:
    view = _view(name)
    kept: dict[int, tuple[dict[str, object], dict[str, object]]] = {}
    first = page_blocks(view, kept)
    again = page_blocks(view, kept)
    assert again == first == page_blocks(view)
    assert all(a is b for a, b in zip(again, first, strict=True))  # an unchanged window compares fast
    # A block a tool can name now keeps its id, though it was shown without one.
    plain = next(
        b
        for b in view.blocks
        if b["type"] not in ("table", "list") and b["id"] not in {t.block_id for t in view.targets if t.kind != "text"}
    )
    named = shown_blocks(view.blocks, {plain["id"]}, kept=kept)
    assert named == shown_blocks(view.blocks, {plain["id"]})
    assert any(b is plain for b in named)
