"""Everything a person can use on a page without tools is in the window, named as a person reads it
(issue 39): recorded AX trees of the `/patterns/` widget pages (tests/support/record_ax.py), no browser."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from webmcp.view.build import BlockIds, FrameNodes, View, build_view
from webmcp.view.nameless import give_name, guess_name, nameless_nodes
from webmcp.view.shown import page_blocks
from webmcp.view.targets import ActionTarget, Refusal, Resolved, resolve, resolve_press

DATA = Path(__file__).parent / "data" / "ax"
FIELD = frozenset({"field"})


def _frames(name: str) -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / f"pattern_{name}.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _view(name: str) -> View:
    return build_view(_frames(name), BlockIds())


def _texts(view: View) -> list[str]:
    return [b["text"] for b in view.blocks if b["type"] == "text"]


def _fields(view: View) -> dict[str, dict[str, Any]]:
    return {i["label"]: i for b in view.blocks if b["type"] == "fields" for i in b["items"]}


def _press(view: View, label: str, block_id: str | None = None) -> ActionTarget:
    found = resolve_press(view.targets, label, block_id)
    assert isinstance(found, Resolved), found
    return found.target


def test_accordion_headers_are_controls_shown_with_their_state_and_pressed_without_it() -> None:
    view = _view("accordion")
    assert "Section 1 (expanded)" in _texts(view)
    assert "Section 2 (collapsed) Section 3 (collapsed)" in _texts(view)
    header = _press(view, "Section 2")
    assert (header.kind, header.role, header.states) == ("control", "tab", ("collapsed",))
    assert _press(view, "section 2 (collapsed)") == header, "as shown, case aside"


def test_a_tree_shows_each_item_once_with_its_state_and_its_group_after_it() -> None:
    view = _view("tree")
    assert _texts(view)[1:4] == ["Billing (expanded)", "Refunds Invoices", "Accounts (collapsed)"]
    assert _press(view, "Refunds").role == "treeitem"
    assert _press(view, "Accounts").states == ("collapsed",)


def test_a_menu_is_shown_and_its_items_pressed_the_open_submenu_too() -> None:
    view = _view("menu")
    assert "File (expanded)" in _texts(view) and "New ticket Export" in _texts(view)
    assert "View (collapsed) Help" in _texts(view), "a closed submenu shows its parent only"
    assert _press(view, "Export").role == "menuitem"
    assert _press(view, "View").states == ("collapsed",)


def test_tabs_mark_the_selected_one() -> None:
    view = _view("tabs")
    assert "Profile (selected) Alerts Billing" in _texts(view)
    assert _press(view, "Billing").role == "tab"
    assert _press(view, "Profile (selected)").states == ("selected",)


def test_autocomplete_suggestions_stay_list_items_and_are_pressed_by_their_text() -> None:
    view = _view("autocomplete")
    (suggestions,) = [b for b in view.blocks if b["type"] == "list"]
    assert suggestions["items"] == ["Paris", "Parma"]
    paris = _press(view, "Paris")
    assert (paris.kind, paris.role, paris.block_id) == ("text", "listitem", suggestions["id"])


def test_fields_take_the_label_a_person_reads_before_them_and_that_text_is_said_once() -> None:
    view = _view("nearby_labels")
    assert list(_fields(view)) == [
        *("Username", "Password", "Desk", "Shift", "Team", "Note for the lead", "textbox", "text area"),
        "Stay signed in",  # a check box's words before it, in its row: a switch
        "Remember this desk",  # and after it, where none came before
        *("Floor", "Room"),  # each box's caption under it, not the caption of the box before
    ]
    assert not {"Username", "Desk", "Team"} & set(_texts(view)), "the label is not also a text block"
    assert not [b for b in view.blocks if b["type"] == "table"], "a form laid out in a table shows fields"
    assert "Stay signed in" not in _texts(view) and "Remember this desk" not in _texts(view)
    assert not {"Floor", "Room"} & set(_texts(view)), "a caption is said once, as the label"
    # A short paragraph before a nameless box is no label (MiniWoB's find-word: the paragraph left the window).
    assert "Reply within a day, then close it" in _texts(view)
    assert [i["label"] for i in view.blocks[-3]["items"]] == ["textbox"], view.blocks[-4:]
    for label in ("Username", "Desk", "Team", "Note for the lead", "Stay signed in", "Remember this desk"):
        assert isinstance(resolve(view.targets, label, None, FIELD, "field"), Resolved), label


def test_same_named_things_are_told_apart_by_case_and_by_an_ordinal() -> None:
    view = _view("duplicates")
    assert _press(view, "yes").label == "yes" and _press(view, "Yes").label == "Yes"
    refused = resolve(view.targets, "Phone", None, FIELD, "field")
    assert isinstance(refused, Refusal)
    assert [c["label"] for c in refused.candidates] == ["Phone #1", "Phone #2"]
    assert "give blockId" not in refused.message and "Phone #2" not in refused.message, "listed once, as candidates"
    picked = [resolve(view.targets, str(c["label"]), c["blockId"], FIELD, "field") for c in refused.candidates]
    assert all(isinstance(p, Resolved) for p in picked)
    assert len({p.target.backend_id for p in picked if isinstance(p, Resolved)}) == 2
    replies = resolve_press(view.targets, "Reply", None)
    assert isinstance(replies, Refusal) and [c["label"] for c in replies.candidates] == ["Reply #1", "Reply #2"]
    second = _press(view, "Reply #2")
    assert second.kind == "link" and second.backend_id != _press(view, "Reply #1").backend_id


def test_choices_are_in_the_window_chosen_ones_as_the_value_long_lists_cut() -> None:
    view = _view("multiselect")
    fields = _fields(view)
    assert fields["Queues"]["value"] == ["Hardware"]
    assert fields["Queues"]["options"] == ["Billing", "Hardware", "Network", "Accounts", "Printing"]
    assert fields["Tags"] == {"label": "Tags", "value": ["vip"], "options": ["urgent", "vip", "follow-up"]}
    assert len(fields["Country"]["options"]) == 10 and fields["Country"]["optionCount"] == 17
    full = {i["label"]: i for b in view.full_blocks if b["type"] == "fields" for i in b["items"]}
    assert len(full["Country"]["options"]) == 17 and "optionCount" not in full["Country"], "read_content: all"
    queues = next(t for t in view.targets if t.label == "Queues")
    assert queues.multiselect and queues.selected == ("Hardware",)
    assert _press(view, "urgent").role == "option", "a listbox's option is pressed as a person clicks it"


def test_a_read_only_picker_box_says_so_and_press_opens_it() -> None:
    frames = _frames("datepicker")
    assert nameless_nodes(frames[0].nodes) == [], "the inside of a read-only box is no icon"
    view = _view("datepicker")
    assert _fields(view)["Callback date"] == {"label": "Callback date", "value": "", "readonly": True}
    box = _press(view, "Callback date")
    assert box.kind == "field" and box.readonly
    day = _press(view, "14")
    assert day.kind == "link", "a day cell holding a link is pressed by its link, not twice"


def test_clickable_text_is_pressed_by_its_words_and_no_block_id_is_shown_for_it_alone() -> None:
    view = _view("clickable")
    card = _press(view, "Open the weekly report")
    assert (card.kind, card.role) == ("text", "generic")
    assert _press(view, "show the archive").role == "generic", "a span inside a sentence"
    assert _press(view, "Search").role == "generic", "a form whose only button is a div"
    lines = [line for b in page_blocks(view) if b["type"] == "text" and "id" not in b for line in b["text"].split("\n")]
    assert "Open the weekly report" in lines, "a line of its own, in a block without an id"


def test_nameless_icon_controls_are_named_from_their_class_or_title_as_a_guess() -> None:
    frames = _frames("clickable")
    # In the page's order; an icon font's button is named by a private-use glyph alone (U+F2ED).
    found = sorted(nameless_nodes(frames[0].nodes), key=lambda n: int(n["backendDOMNodeId"]))
    roles = [n["role"]["value"] for n in found]
    assert roles[:3] == ["button", "button", "generic"] and roles.count("button") == 4, roles
    drafts = [n for n in found if n["role"]["value"] == "button"][2:]
    answers = [
        {"node": {"attributes": ["type", "button", "class", "icon reply", "id", "reply"]}},
        {"node": {"attributes": ["class", "fa fa-trash-o"]}},
        {"node": {"attributes": ["class", "icon"], "children": [{"attributes": ["src", "/img/star_filled.svg"]}]}},
        {
            "node": {
                "attributes": ["class", "btn btn-outline-danger"],
                "children": [{"attributes": ["class", "fa fa-trash-can"]}],
            }
        },
        {"node": {"attributes": ["class", "fa fa-paper-plane", "role", "button", "title", "Send draft"]}},
    ]
    for node, answer in zip([*found[:3], *drafts], answers, strict=True):
        give_name(node, guess_name(answer))
    view = build_view(frames, BlockIds())
    shown = "From Ann: printer jams again reply (guessed) trash (guessed) star filled (guessed) Forward"
    assert shown in _texts(view)
    assert "Draft to Rui trash can (guessed) Send draft (guessed)" in _texts(view)
    assert _press(view, "reply").role == "button" and _press(view, "trash").states == ("guessed",)
    assert _press(view, "star filled").kind == "control"
    assert guess_name({"node": {"attributes": ["class", "btn icon", "title", "Archive  it"]}}) == "Archive it"
    assert guess_name({"node": {"attributes": ["class", "btn-sm icon"]}}) == ""


def test_a_picture_link_named_by_a_guess_says_it_is_one_in_the_text_around_it() -> None:
    # IGN's deals: <a href><img class="article-image image-container …"></a>The price of…, the
    # picture without alt (or not loaded): the text read "article container The price of…",
    # words the page never shows.
    nodes: list[dict[str, Any]] = [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "childIds": ["2"], "backendDOMNodeId": 1},
        {"nodeId": "2", "parentId": "1", "role": {"value": "paragraph"}, "childIds": ["3", "5"], "backendDOMNodeId": 2},
        {"nodeId": "3", "parentId": "2", "role": {"value": "link"}, "childIds": ["4"], "backendDOMNodeId": 3},
        {"nodeId": "4", "parentId": "3", "role": {"value": "image"}, "backendDOMNodeId": 4},
        {
            "nodeId": "5",
            "parentId": "2",
            "role": {"value": "StaticText"},
            "name": {"value": "The price fell."},
            "backendDOMNodeId": 5,
        },
    ]
    link = nameless_nodes(nodes)[0]
    assert link["nodeId"] == "3"
    give_name(link, guess_name({"node": {"attributes": ["class", "article-photo"]}}))
    view = build_view([FrameNodes("main", nodes)], BlockIds())
    assert _texts(view) == ["article photo (guessed) The price fell."]
    assert _press(view, "article photo").role == "link"
    assert _press(view, "article photo (guessed)").backend_id == 3


def _labelled(*inside: dict[str, Any]) -> list[dict[str, Any]]:
    """<p><label>…</label></p> then a text box, as Chromium 156 reads them."""
    kids = [str(n["nodeId"]) for n in inside]
    return [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "childIds": ["2", "9"], "backendDOMNodeId": 1},
        {"nodeId": "2", "parentId": "1", "role": {"value": "paragraph"}, "childIds": ["3"], "backendDOMNodeId": 2},
        {"nodeId": "3", "parentId": "2", "role": {"value": "LabelText"}, "childIds": kids, "backendDOMNodeId": 3},
        *({**n, "parentId": "3"} for n in inside),
        {"nodeId": "9", "parentId": "1", "role": {"value": "textbox"}, "backendDOMNodeId": 9},
    ]


def test_a_file_input_in_its_label_is_one_button_and_names_no_other_field() -> None:
    # <label>Cover letter <input type=file></label>: a button the label names, inside the label.
    text = {"nodeId": "4", "role": {"value": "StaticText"}, "name": {"value": "Cover letter "}, "backendDOMNodeId": 4}
    button = {"nodeId": "5", "role": {"value": "button"}, "name": {"value": "Cover letter"}, "backendDOMNodeId": 5}
    view = build_view([FrameNodes("main", _labelled(text, button))], BlockIds())
    assert _texts(view) == ["Cover letter"]
    assert [(t.kind, t.backend_id) for t in view.targets if t.label == "Cover letter"] == [("button", 5)]
    assert list(_fields(view)) == ["textbox"], "the label's words are the button's, not the next field's"
    # A label that says more than its button: its words are shown too.
    more = {**text, "name": {"value": "Colour of the badge "}}
    pick = {**button, "name": {"value": "Pick"}}
    view = build_view([FrameNodes("main", _labelled(more, pick))], BlockIds())
    assert _texts(view) == ["Colour of the badge Pick"] and _press(view, "Pick").backend_id == 5
    # A label tied to nothing still names the field after it.
    view = build_view([FrameNodes("main", _labelled({**text, "name": {"value": "Desk"}}))], BlockIds())
    assert list(_fields(view)) == ["Desk"]


def test_a_summary_is_a_disclosure_shown_with_its_state() -> None:
    # <details><summary>More options</summary>…</details> as Chromium 156 reads it.
    nodes = [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "childIds": ["2"], "backendDOMNodeId": 1},
        {"nodeId": "2", "parentId": "1", "role": {"value": "group"}, "childIds": ["3"], "backendDOMNodeId": 2},
        {
            "nodeId": "3",
            "parentId": "2",
            "role": {"value": "DisclosureTriangle"},
            "name": {"value": "More options"},
            "properties": [
                {"name": "focusable", "value": {"value": True}},
                {"name": "expanded", "value": {"value": False}},
            ],
            "childIds": ["4"],
            "backendDOMNodeId": 3,
        },
        {
            "nodeId": "4",
            "parentId": "3",
            "role": {"value": "StaticText"},
            "name": {"value": "More options"},
            "backendDOMNodeId": 4,
        },
    ]
    view = build_view([FrameNodes("main", nodes)], BlockIds())
    assert _texts(view) == ["More options (collapsed)"]
    assert _press(view, "More options").backend_id == 3


def test_pictures_drawn_on_empty_elements_are_icons_named_from_their_class_id_or_file() -> None:
    # MiniWoB's mail and social tasks draw their icons with CSS `content: url(…)` on empty spans:
    # unnamed images to the tree, told apart by a person by the picture, by the bridge by its words.
    nodes: list[dict[str, Any]] = [
        {"nodeId": "1", "role": {"value": "generic"}, "childIds": ["2", "3", "4"], "backendDOMNodeId": 1},
        {"nodeId": "2", "parentId": "1", "role": {"value": "image"}, "backendDOMNodeId": 2},
        {"nodeId": "3", "parentId": "1", "role": {"value": "image"}, "childIds": ["5"], "backendDOMNodeId": 3},
        {"nodeId": "4", "parentId": "1", "role": {"value": "image"}, "name": {"value": "Logo"}, "backendDOMNodeId": 4},
        {"nodeId": "5", "parentId": "3", "role": {"value": "generic"}, "backendDOMNodeId": 5},
    ]
    found = nameless_nodes(nodes)
    assert [n["nodeId"] for n in found if n["role"]["value"] == "image"] == ["2"], "named or with parts: not icons"
    assert guess_name({"node": {"attributes": ["id", "send-reply"]}}) == "send reply"
    assert guess_name({"node": {"attributes": ["class", "trash"]}}) == "trash"
    assert guess_name({"node": {"attributes": ["src", "/common/special/delete.png"]}}) == "delete"
    # A query says nothing of the picture; a class a CSS-in-JS tool made up names nothing.
    assert guess_name({"node": {"attributes": ["src", "/2019/11/crystalpad.jpg?width=640&fit=bounds"]}}) == "crystalpad"
    assert guess_name({"node": {"attributes": ["class", "css-oylsik jsx-29204 share-button"]}}) == "share"


def test_the_buttons_of_a_toolbar_are_shown_and_pressed() -> None:
    # An editor's `role=toolbar` (Quill, TinyMCE, CKEditor): its buttons were left out with it.
    view = _view("editor")
    assert "Underline" in _texts(view), view.blocks
    assert _press(view, "Underline").role == "button"
    assert _fields(view)["Note"]["value"] == "Ship the harbor order today"


def test_a_navigation_bar_shows_its_buttons_and_the_fields_beside_its_links() -> None:
    # A nav was a list of its links alone: its "Menu" button, and a search form beside a link,
    # were left out of the window.
    view = _view("navbar")
    lists = [b["items"] for b in view.blocks if b["type"] == "list"]
    assert ["Queue", "Reports", "Menu (collapsed)"] in lists, view.blocks
    assert _press(view, "Menu").role == "button"
    assert "Search the help desk" in _fields(view)
    assert _press(view, "Go").role == "button"
    assert _press(view, "FAQ").role == "link"
    assert _press(view, "Shipping details").states == ("collapsed",)


def test_a_list_items_nameless_check_box_takes_the_items_words_and_shows_its_state() -> None:
    # TodoMVC: each item's box has no name (its words are a <label> beside it, not for it), so
    # the window showed no box and no state, and nothing could tick an item.
    view = _view("todos")
    lists = [b["items"] for b in view.blocks if b["type"] == "list"]
    assert ["Buy milk", "Walk the dog (checked)", "Call the plumber"] in lists, view.blocks
    box = _press(view, "Walk the dog")
    assert (box.kind, box.role) == ("field", "checkbox")
    found = resolve(view.targets, "Buy milk", None, FIELD, "field")
    assert isinstance(found, Resolved) and found.target.role == "checkbox", "fill takes it by the item's words"
    assert not [t for t in view.targets if t.kind == "text" and t.label == "Buy milk"], "the box is the item's target"
    assert "What needs to be done?" in _fields(view)


def test_labels_of_hidden_inputs_are_shown_and_pressed_and_a_drawn_hint_is_no_value() -> None:
    # A label tied to an input the page hides (CSS draws the box, the tab, the star) was kept for
    # a field that never came: its words left the window, and nothing could be pressed.
    view = _view("drawn")
    texts = _texts(view)
    assert "\u2610 Follow this ticket" in texts, texts
    assert "Summary History" in texts and "★ ★ ★ ★ ★" in texts, texts
    assert _press(view, "Follow this ticket").kind == "text"
    assert _press(view, "History").kind == "text"
    assert _press(view, "★ #4").kind == "text"
    # Chromium gives the hint CSS draws in an empty editor as its text: it is its label, not its value.
    assert _fields(view)["Write a comment…"]["value"] == ""


def test_nameless_row_boxes_are_named_by_their_rows_first_words_as_a_guess() -> None:
    # A mail list's boxes have no name at all: the window showed empty cells, and nothing could tick a row.
    view = _view("rows")
    mail = [b for b in view.blocks if b["type"] == "table"][1]
    assert mail["columns"] == ["Select all (guessed)", "From", "Subject"], mail
    assert [r[0] for r in mail["rows"]] == ["Select Ann (guessed)", "Select Rui (checked, guessed)"]
    for label in ("Select Ann", "Select Rui", "Select all #2"):
        found = resolve(view.targets, label, None, FIELD, "field")
        assert isinstance(found, Resolved) and found.target.role == "checkbox", label
    named = [b for b in view.blocks if b["type"] == "table"][0]
    assert [r[0] for r in named["rows"]] == ["Select row", "Select row", "Select row (checked)"], "named: as named"


def test_the_items_of_a_list_inside_an_item_are_pressed_and_the_item_on_its_own_words() -> None:
    # A file tree of nested lists (jquery.treeview's, MiniWoB's navigate-tree): a file inside an
    # open folder was only words inside the folder's item, which no press took; the folder's own
    # press aimed at its item's centre, which lies on a file inside it.
    view = _view("files")
    items = next(b["items"] for b in view.blocks if b["type"] == "list")
    assert items[0] == "\U0001f4c1 Reports\n\U0001f4c4 March\n\U0001f4c1 Drafts\n\U0001f4c4 April draft", items
    april = _press(view, "April draft")
    assert (april.kind, april.label) == ("text", "\U0001f4c4 April draft")
    reports = _press(view, "Reports")
    assert reports.label == "\U0001f4c1 Reports", "the folder by its own words, its picture aside"
    assert reports.role == "StaticText", "aimed at its words, not at its item (whose centre is a file's)"
    assert _press(view, "Contracts").role == "listitem", "a closed folder: its item, as any item"
    assert _press(view, "\U0001f4c1 Drafts") == _press(view, "drafts"), "as shown, or its words alone"
    closed = resolve_press(view.targets, "Contracts Cleaning", None)
    assert isinstance(closed, Refusal), "a closed folder's files are not shown"


def test_a_nameless_box_is_called_what_a_person_sees_not_chromiums_role() -> None:
    # MiniWoB's enter-time: an unlabelled time box read "InputTime".
    def node(node_id: str, role: str, children: tuple[str, ...] = ()) -> dict[str, Any]:
        found: dict[str, Any] = {"nodeId": node_id, "role": {"type": "role", "value": role}, "childIds": list(children)}
        return {**found, "backendDOMNodeId": int(node_id), **({"parentId": "1"} if node_id != "1" else {})}

    root = node("1", "RootWebArea", ("2", "3", "4"))
    frames = [FrameNodes("F", [root, node("2", "InputTime"), node("3", "spinbutton"), node("4", "DateTime")])]
    labels = [i["label"] for b in build_view(frames, BlockIds()).blocks if b["type"] == "fields" for i in b["items"]]
    assert labels == ["time", "number", "date and time"], labels
