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
from webmcp.view.shown import Shown, page_blocks, shown_blocks

DATA = Path(__file__).parent / "data" / "ax"
PAGES = sorted(p.name.removesuffix(".json.gz") for p in DATA.glob("*.json.gz"))


def _view(name: str) -> View:
    doc = json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))
    return build_view([FrameNodes.from_json(f) for f in doc["frames"]], BlockIds())


def _without_id(block: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in block.items() if k != "id"}


def _runs(shown: list[dict[str, object]], built: list[dict[str, object]]) -> list[list[dict[str, object]]]:
    """The view's blocks each shown block stands for: one, or a run of plain text blocks it joins."""
    out: list[list[dict[str, object]]] = []
    at = 0
    for block in shown:
        if block["type"] == "text" and set(block) == {"type", "text"}:
            lines = str(block["text"]).count("\n") - sum(str(b["text"]).count("\n") for b in built[at : at + 1])
            run = [built[at]]
            at += 1
            while lines > 0:
                lines -= 1 + str(built[at]["text"]).count("\n")
                run.append(built[at])
                at += 1
            out.append(run)
        else:
            out.append([built[at]])
            at += 1
    assert at == len(built), "every block of the view is shown"
    return out


@pytest.mark.parametrize("name", PAGES)
def test_a_shown_block_is_the_views_block_with_its_id_only_where_a_tool_can_name_it(name: str) -> None:
    view = _view(name)
    shown = page_blocks(view)
    named = {t.block_id for t in view.targets if t.kind != "text"}
    joined = 0
    for block, run in zip(shown, _runs(shown, view.blocks), strict=True):
        if len(run) > 1:  # a run of text blocks no tool names, with nothing but their text: one block of lines
            joined += 1
            assert all(set(b) == {"type", "text", "id"} and b["id"] not in named for b in run), run
            assert block == {"type": "text", "text": "\n".join(str(b["text"]) for b in run)}
            continue
        (built,) = run
        assert _without_id(block) == _without_id(built), "nothing but ids differ"
        referable = block["type"] in ("table", "list") or built["id"] in named
        assert ("id" in block) == referable, block
        assert block.get("id", built["id"]) == built["id"], "an id shown is the view's own"
    plain = [i for i, b in enumerate(shown) if b["type"] == "text" and set(b) == {"type", "text"}]
    assert not any(j == i + 1 for i, j in zip(plain, plain[1:], strict=False)), "no two plain text blocks in a row"
    TypeAdapter(list[Block]).validate_python(shown)


def test_a_run_of_paragraphs_is_one_block_of_their_lines_and_a_heading_or_a_named_block_ends_it() -> None:
    blocks = [
        {"type": "text", "id": "b1", "text": "News", "heading": 1},
        {"type": "text", "id": "b2", "text": "First paragraph."},
        {"type": "text", "id": "b3", "text": "Second,\nwith a break."},
        {"type": "text", "id": "b4", "text": "Read more"},
        {"type": "text", "id": "b5", "text": "Last words."},
        {"type": "notice", "id": "b6", "severity": "info", "text": "Saved."},
        {"type": "text", "id": "b7", "text": "After the notice."},
    ]
    assert shown_blocks(blocks, {"b4"}) == [
        {"type": "text", "text": "News", "heading": 1},
        {"type": "text", "text": "First paragraph.\nSecond,\nwith a break."},
        {"type": "text", "id": "b4", "text": "Read more"},
        {"type": "text", "text": "Last words."},
        {"type": "notice", "severity": "info", "text": "Saved."},
        {"type": "text", "text": "After the notice."},
    ]
    kept = Shown()
    first = shown_blocks(blocks, {"b4"}, kept=kept)
    again = shown_blocks(blocks, {"b4"}, kept=kept)
    assert again[1] is first[1], "a run shown again is the block shown then"
    changed = [*blocks[:2], {"type": "text", "id": "b8", "text": "Another."}, *blocks[3:]]
    assert shown_blocks(changed, {"b4"}, kept=kept)[1] == {"type": "text", "text": "First paragraph.\nAnother."}


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
    kept = Shown()
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
