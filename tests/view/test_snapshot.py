"""AX trees → blocks, without a browser: recorded trees of the sample site against golden files.

The trees in tests/data/ax are recorded by tests/record_ax.py; the goldens in tests/golden
are written by `pytest tests/test_snapshot.py --update-goldens` and never edited by hand.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from webmcp.models import Block
from webmcp.view.build import BlockIds, FrameNodes, Limits, View, build_view
from webmcp.view.masking import MASK, mask_secrets
from webmcp.view.summary import summarize_tab

DATA = Path(__file__).parent / "data" / "ax"
GOLDEN = Path(__file__).parent / "golden"
PAGES = sorted(p.name.removesuffix(".json.gz") for p in DATA.glob("*.json.gz"))
_RECORDED_SECRETS = ("not-the-real-pass", "4111111111111111", "123456")


def _frames(name: str) -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _view(name: str, ids: BlockIds | None = None) -> View:
    return build_view(_frames(name), ids if ids is not None else BlockIds())


def _golden_doc(view: View) -> dict[str, Any]:
    return {
        "title": view.title,
        "summary": summarize_tab(view.title, "http://127.0.0.1/", view, False),
        "blocks": view.blocks,
        "modals": [{"title": m.title, "blocks": m.blocks, "nodes": len(m.backend_ids)} for m in view.modals],
        "full_blocks": len(view.full_blocks),
    }


@pytest.mark.parametrize("name", PAGES)
def test_recorded_page_gives_its_golden_blocks(name: str, request: pytest.FixtureRequest) -> None:
    doc = _golden_doc(_view(name))
    path = GOLDEN / f"{name}.json"
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    if request.config.getoption("--update-goldens"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden for {name}; run pytest --update-goldens"
    assert json.loads(path.read_text()) == json.loads(text)


@pytest.mark.parametrize("name", PAGES)
def test_block_ids_are_unique_and_every_block_is_well_formed(name: str) -> None:
    view = _view(name)
    everything = view.blocks + [b for m in view.modals for b in m.blocks]
    ids = [b["id"] for b in everything]
    assert len(ids) == len(set(ids))
    for block in everything:
        assert block["type"] in {"text", "fields", "table", "list", "notice", "media"}
        if block["type"] == "list":
            assert block["items"], "empty lists are dropped"
        if block["type"] == "notice":
            assert block["severity"] in {"info", "warn", "error", "success"} and block["text"]


def test_secret_fields_are_masked_and_their_values_appear_nowhere() -> None:
    view = _view("login")
    fields = next(b for b in view.blocks if b["type"] == "fields")
    by_label = {i["label"]: i for i in fields["items"]}
    for label in ("Password", "Card number", "One-time code"):
        assert by_label[label] == {**by_label[label], "value": MASK, "sensitive": True}
    assert by_label["Username"]["value"] == "sam.okafor" and "sensitive" not in by_label["Username"]
    assert by_label["Remember this device"]["value"] is True
    text = json.dumps(view.full_blocks, ensure_ascii=False)
    assert not any(secret in text for secret in _RECORDED_SECRETS)


def test_echoed_secret_values_are_masked_anywhere_in_a_value() -> None:
    out = mask_secrets({"msg": "card 4111111111111111 ok", "list": ["hunter22", 3]}, {"4111111111111111", "hunter22"})
    assert out == {"msg": f"card {MASK} ok", "list": [MASK, 3]}
    assert mask_secrets("ab", {"a"}) == "ab", "one- and two-letter values would mask everything"


def test_big_table_and_list_are_cut_with_offset_total_and_a_notice() -> None:
    view = _view("big")
    table = next(b for b in view.blocks if b["type"] == "table")
    assert table["total"] == 3000 and table["offset"] == 0 and len(table["rows"]) == Limits().table_rows
    assert next(b for b in view.blocks if b["type"] == "list" and b.get("total") == 500)
    notice = view.blocks[-1]
    assert notice["type"] == "notice" and "read_content" in notice["text"] and table["id"] in notice["text"]
    assert len(json.dumps(view.blocks, ensure_ascii=False).encode()) < 12_000
    full_table = next(b for b in view.full_blocks if b["type"] == "table")
    assert len(full_table["rows"]) == 3000


def test_nav_bar_is_a_list_of_link_texts_and_buttons_are_shown_apart_from_prose() -> None:
    view = _view("home")
    assert {
        "type": "list",
        "id": view.blocks[2]["id"],
        "items": [
            "Queue",
            "Ticket detail",
            "Agent sign-in",
            "Queue settings",
            "Danger zone",
            "Reports",
            "Live monitor",
        ],
    } in view.blocks
    # A button is shown (window actions press what the blocks show), as a line of its own.
    texts = [b["text"] for b in view.blocks if b["type"] == "text"]
    assert "Create ticket" in texts and "Send" in texts
    assert not any("Send" in t.split() and t != "Send" for t in texts)


def test_iframe_blocks_sit_where_the_iframe_is() -> None:
    view = _view("home")
    texts = [b.get("text") for b in view.blocks]
    kb = texts.index("Knowledge base")
    search = next(
        i for i, b in enumerate(view.blocks) if b["type"] == "fields" and b["items"][0]["label"] == "Search articles"
    )
    assert search == kb + 1 and search < texts.index("Recent activity")


def test_invalid_field_with_a_message_gives_an_error_notice_naming_the_field() -> None:
    view = _view("invalid")
    notice = next(b for b in view.blocks if b["type"] == "notice" and b["severity"] == "error")
    assert notice["text"] == "Subject: Subject is required."
    assert view.invalid_fields == ["Subject"]
    prose = [b["text"] for b in view.blocks if b["type"] == "text"]
    assert "Subject is required." not in prose, "the message is the notice, not prose too"
    assert "needs attention" in summarize_tab(view.title, "", view, False)


def test_open_modal_dialog_is_its_own_record_and_not_in_the_page_blocks() -> None:
    view = _view("modal_open")
    assert len(view.modals) == 1
    modal = view.modals[0]
    assert modal.title == "Edit queue settings"
    fields = next(b for b in modal.blocks if b["type"] == "fields")
    assert [i["label"] for i in fields["items"]] == ["Queue name", "First response target (hours)"]
    assert isinstance(modal.backend_ids, frozenset) and len(modal.backend_ids) > 5
    page_text = json.dumps(view.blocks, ensure_ascii=False)
    assert "Queue name" not in page_text and "Edit queue settings" not in page_text
    assert "a dialog is open" in summarize_tab(view.title, "", view, False)


def test_ids_survive_a_re_render_of_text_and_are_never_reused() -> None:
    ids = BlockIds()
    frames = _frames("churn")
    first = build_view(frames, ids)
    changed = copy.deepcopy(frames)
    for node in changed[0].nodes:
        if node["role"]["value"] == "StaticText" and str(node["name"]["value"]).isdigit():
            node["name"]["value"] = "4711"  # the counter's text run, re-rendered
    second = build_view(changed, ids)
    assert [b["id"] for b in first.blocks] == [b["id"] for b in second.blocks]
    assert any(b.get("text") == "4711 updates" for b in second.blocks)
    navigated = [FrameNodes("next-document", f.nodes, f.owner_backend_id) for f in frames]
    third = build_view(navigated, ids)
    assert not {b["id"] for b in third.blocks} & {b["id"] for b in first.blocks}


def test_hidden_content_is_skipped() -> None:
    view = _view("churn")
    text = json.dumps(view.full_blocks)
    assert "Clock:" in text and ":00." not in text, "the aria-hidden clock is not content"


@pytest.mark.parametrize("name", PAGES)
def test_summary_is_one_plain_sentence(name: str) -> None:
    view = _view(name)
    summary = summarize_tab(view.title, "http://127.0.0.1/x", view, False)
    assert summary.endswith(".") and summary.startswith("Shows \u201c") and "\n" not in summary
    assert "b1" not in summary and "tab-" not in summary
    assert summarize_tab("", "", None, True) == "Loading an empty tab."


@pytest.mark.parametrize("name", PAGES)
def test_every_block_of_a_recorded_page_matches_the_wire_model(name: str) -> None:
    view = _view(name)
    blocks = TypeAdapter(list[Block])
    blocks.validate_python(view.blocks)
    blocks.validate_python(view.full_blocks)
    for modal in view.modals:
        blocks.validate_python(modal.blocks)
