"""What a person sees on the Harbor Cinema pages, from recorded AX trees (no browser).

Date and time inputs are one field each, untouched required fields are not errors, text
shown only on buttons is content, separate elements stay separate, and a re-rendered
field group keeps its block id.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

from webmcp.view.build import BlockIds, FrameNodes, View, build_view
from webmcp.view.summary import summarize_tab

DATA = Path(__file__).parent / "data" / "ax"


def _frames(name: str) -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _fields(view: View) -> dict[str, dict[str, Any]]:
    return {i["label"]: i for b in view.full_blocks if b["type"] == "fields" for i in b["items"]}


def _texts(view: View) -> list[str]:
    return [b["text"] for b in view.full_blocks if b["type"] == "text"]


def test_date_and_time_inputs_are_one_field_each_with_the_value_the_page_holds() -> None:
    fields = _fields(build_view(_frames("cinema_book"), BlockIds()))
    assert fields["Date"] == {"label": "Date", "value": "", "required": True}
    assert fields["Time"] == {"label": "Time", "value": "20:45", "required": True}
    assert fields["Arrival"]["value"] == "2026-12-03T20:15"
    assert fields["Membership month"]["value"] == ""
    assert fields["Week"]["value"] == "2026-W49"
    labels = " ".join(fields)
    for part in ("Month Month", "Day Day", "Year Year", "Hours", "AM/PM", "date picker"):
        assert part not in labels
    touched = _fields(build_view(_frames("cinema_book_touched"), BlockIds()))
    assert touched["Date"]["value"] == "2026-12-03"


def test_untouched_required_fields_are_not_errors_until_the_person_tries_to_submit() -> None:
    pristine = build_view(_frames("cinema_book"), BlockIds())
    assert pristine.invalid_fields == [], "Chromium calls the empty required date, select, check box invalid"
    fields = _fields(pristine)
    assert fields["Format"] == {
        "label": "Format",
        "value": "Choose…",
        "options": ["Choose…", "2D", "3D"],
        "required": True,
    }
    assert fields["I accept the house rules"] == {"label": "I accept the house rules", "value": False, "required": True}
    assert not [n for n in pristine.notices if n["severity"] == "error"]
    assert "needs attention" not in summarize_tab(pristine.title, "", pristine, False)
    touched = build_view(_frames("cinema_book_touched"), BlockIds())
    assert touched.invalid_fields == ["Email"], "the empty required email after pressing Book"
    assert "needs attention" in summarize_tab(touched.title, "", touched, False)


def test_without_the_dom_read_the_ax_tree_decides_as_before() -> None:
    frames = _frames("cinema_book")
    for frame in frames:
        frame.flagged_ids = frame.required_ids = None
    fields = _fields(build_view(frames, BlockIds()))
    assert fields["Date"].get("invalid") is True and "required" not in fields["Date"]
    assert fields["Format"].get("invalid") is True and fields["I accept the house rules"].get("invalid") is True


def test_text_shown_only_on_buttons_is_content_and_plain_actions_are_shown_too() -> None:
    view = build_view(_frames("cinema_home"), BlockIds())
    lists = [b["items"] for b in view.full_blocks if b["type"] == "list"]
    assert ["18:30", "20:45", "22:10 (unavailable)"] in lists
    assert ["17:15", "19:00"] in lists
    assert ["1", "2", "3", "4"] in lists, "the numbered doors"
    assert "Large popcorn Add to cart \u2014 $12" in _texts(view)
    assert "1 2 3 Next" in _texts(view), "the pagination row"
    book = build_view(_frames("cinema_book"), BlockIds())
    # Issue 20: what a window action can press is what the blocks show, a plain submit button too.
    assert "Book" in _texts(book)
    assert any(t.kind == "button" and t.label == "Book" and t.block_id for t in book.targets)


def test_separate_elements_stay_separate_when_text_is_joined() -> None:
    view = build_view(_frames("cinema_home"), BlockIds())
    texts = _texts(view)
    assert "Hello Ada,\nWe look forward to seeing you this week." in texts
    assert "The art of the\nslow brew." in texts
    films = next(b["items"] for b in view.full_blocks if b["type"] == "list" and "Harbor Lights" in b["items"][0])
    assert films == ["Harbor Lights\nDrama \u00b7 1h 52m", "The Art of the Slow Brew\nDocumentary \u00b7 1h 18m"]
    joined = json.dumps(view.full_blocks, ensure_ascii=False)
    assert "theslow" not in joined and "Ada,We" not in joined and "LightsDrama" not in joined


def test_a_span_inside_a_paragraph_still_runs_on_with_its_text() -> None:
    view = build_view(_frames("churn"), BlockIds())
    assert any(t.endswith(" updates") and "\n" not in t for t in _texts(view))


def _re_rendered(frames: list[FrameNodes], legend: str) -> list[FrameNodes]:
    """The tree after a script replaced the fieldset named `legend` with a fresh copy."""
    changed = copy.deepcopy(frames)
    nodes = changed[0].nodes
    by_id = {n["nodeId"]: n for n in nodes}
    group = next(n for n in nodes if n["role"]["value"] == "group" and n.get("name", {}).get("value") == legend)
    fresh = 900_000
    stack = [group]
    while stack:
        node = stack.pop()
        if "backendDOMNodeId" in node:
            fresh += 1
            node["backendDOMNodeId"] = fresh
        stack.extend(by_id[c] for c in node.get("childIds", ()) if c in by_id)
    return changed


def test_a_re_rendered_field_group_keeps_its_block_id_and_no_other_id_moves() -> None:
    ids = BlockIds()
    frames = _frames("cinema_book")
    first = build_view(frames, ids)
    second = build_view(_re_rendered(frames, "Guests"), ids)
    assert [(b["type"], b["id"]) for b in first.full_blocks] == [(b["type"], b["id"]) for b in second.full_blocks]


def test_a_group_re_rendered_with_other_fields_is_a_new_block() -> None:
    ids = BlockIds()
    frames = _frames("cinema_book")
    first = build_view(frames, ids)
    other = _re_rendered(frames, "Guests")
    for node in other[0].nodes:
        if node["role"]["value"] == "textbox" and node.get("name", {}).get("value") == "Email":
            node["name"]["value"] = "Phone"
    second = build_view(other, ids)
    guests = next(b["id"] for b in second.full_blocks if b["type"] == "fields" and b["items"][0]["label"] == "Name")
    assert guests not in {b["id"] for b in first.full_blocks}


def test_page_without_a_title_has_an_empty_document_title() -> None:
    view = build_view(_frames("cinema_receipt"), BlockIds())
    assert view.title == ""
    assert summarize_tab(view.title, "http://127.0.0.1/cinema/receipt.html", view, False).startswith(
        "Shows \u201cGift card receipt\u201d"
    )
