"""A build with the last build's memo gives the view a build without it gives (`walk_memo.py`).

Each recorded page is built once with a memo, then changed one way at a time as an incremental
read changes it (a node is a new object where it changed; every other node is the object it
was), and built again with that memo and without one, from the same block ids. The two views and
the ids must be the same, and the memo must have stood for some containers (or the test proves
nothing). The changes: a text, a node gone, a node added, a heading's level, a landmark and a
group's name above what is as it was, and each fact the walk reads by backend id (display, gaps,
secret, required, invalid, error message).
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from cdp_bridge.ax_patch import Spliced
from webmcp.view.build import BlockIds, FrameNodes, Limits, View, WalkMemo, build_view

DATA = Path(__file__).parent / "data" / "ax"
PAGES = sorted(p.name.removesuffix(".json.gz") for p in DATA.glob("*.json.gz"))
Node = dict[str, Any]


def _frames(name: str) -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _json(view: View, ids: BlockIds) -> str:
    return json.dumps({"view": asdict(view), "ids": repr(ids)}, sort_keys=True, default=repr)


def _swap(frame: FrameNodes, node_id: str, new: Node | None) -> FrameNodes:
    """`frame` with the node `node_id` replaced by `new` (or gone, and out of its parent's list)."""
    nodes: list[Node] = []
    for node in frame.nodes:
        if node["nodeId"] == node_id:
            if new is not None:
                nodes.append(new)
        elif new is None and node_id in node.get("childIds", ()):
            nodes.append({**node, "childIds": [c for c in node["childIds"] if c != node_id]})
        else:
            nodes.append(node)
    return replace(frame, nodes=nodes)


def _texts(frame: FrameNodes) -> list[Node]:
    return [n for n in frame.nodes if n.get("role", {}).get("value") == "StaticText" and n.get("name")]


def _backends(frame: FrameNodes) -> list[int]:
    return [int(n["backendDOMNodeId"]) for n in frame.nodes if "backendDOMNodeId" in n]


Change = Callable[[FrameNodes, int], FrameNodes]


def _text(frame: FrameNodes, i: int) -> FrameNodes:
    texts = _texts(frame)
    node = texts[i % len(texts)]
    return _swap(frame, node["nodeId"], {**node, "name": {"type": "computedString", "value": "Changed words"}})


def _gone(frame: FrameNodes, i: int) -> FrameNodes:
    texts = _texts(frame)
    return _swap(frame, texts[i % len(texts)]["nodeId"], None)


def _added(frame: FrameNodes, i: int) -> FrameNodes:
    texts = _texts(frame)
    node = texts[i % len(texts)]
    parent = next(n for n in frame.nodes if node["nodeId"] in n.get("childIds", ()))
    new = {**node, "nodeId": f"new-{i}", "name": {"type": "computedString", "value": "Added words"}}
    nodes = [{**n, "childIds": [*n["childIds"], new["nodeId"]]} if n is parent else n for n in frame.nodes]
    return replace(frame, nodes=[*nodes, new])


def _level(frame: FrameNodes, i: int) -> FrameNodes:
    headings = [n for n in frame.nodes if n.get("role", {}).get("value") == "heading"]
    if not headings:
        return _text(frame, i)
    node = headings[i % len(headings)]
    props = [p for p in node.get("properties", ()) if p.get("name") != "level"]
    props.append({"name": "level", "value": {"type": "integer", "value": 6}})
    return _swap(frame, node["nodeId"], {**node, "properties": props})


def _landmark(frame: FrameNodes, i: int) -> FrameNodes:
    """A `main` is a region now, or a region is `main`: the headings below it are in main or not."""
    marks = [n for n in frame.nodes if n.get("role", {}).get("value") in ("main", "region", "article")]
    if not marks:
        return _text(frame, i)
    node = marks[i % len(marks)]
    role = "region" if node["role"]["value"] in ("main", "article") else "main"
    return _swap(frame, node["nodeId"], {**node, "role": {"type": "role", "value": role}})


def _group_name(frame: FrameNodes, i: int) -> FrameNodes:
    """A fieldset or radio group named otherwise: the fields below it are in another group."""
    groups = [n for n in frame.nodes if n.get("role", {}).get("value") in ("group", "radiogroup")]
    if not groups:
        return _text(frame, i)
    node = groups[i % len(groups)]
    return _swap(frame, node["nodeId"], {**node, "name": {"type": "computedString", "value": f"Renamed {i}"}})


_FIELDS = frozenset({"textbox", "searchbox", "combobox", "checkbox", "radio", "spinbutton", "listbox"})


def _fact(name: str) -> Change:
    def change(frame: FrameNodes, i: int) -> FrameNodes:
        if name in ("display", "gaps"):
            # A span, link or wrapper whose layout the walk reads: one in running text.
            laid = sorted((frame.gaps if name == "gaps" else frame.display) or ()) or _backends(frame)
            spot = laid[i % len(laid)]
            if name == "display":
                display = frame.display or {}
                return replace(frame, display={**display, spot: "inline" if display.get(spot) != "inline" else "block"})
            gaps = frame.gaps or {}
            return replace(frame, gaps={**gaps, spot: ("block", "block")})
        fields = [int(n["backendDOMNodeId"]) for n in frame.nodes if n.get("role", {}).get("value") in _FIELDS]
        backends = fields or _backends(frame)
        backend = backends[i % len(backends)]
        if name == "secret":
            return replace(frame, secret_ids={*frame.secret_ids, backend})
        if name == "required":
            return replace(frame, required_ids={*(frame.required_ids or ()), backend})
        if name == "flagged":
            return replace(frame, flagged_ids={*(frame.flagged_ids or ()), backend})
        # An error message: some node now names another as its error (that one is left out).
        others = _backends(frame)
        target = others[(i * 7) % len(others)]
        field = next((n for n in frame.nodes if n.get("role", {}).get("value") in _FIELDS), frame.nodes[0])
        related = {"type": "idrefList", "relatedNodes": [{"backendDOMNodeId": target}]}
        props = [*field.get("properties", ()), {"name": "errormessage", "value": related}]
        return _swap(frame, field["nodeId"], {**field, "properties": props})

    return change


CHANGES: dict[str, Change] = {
    "text": _text,
    "gone": _gone,
    "added": _added,
    "level": _level,
    "landmark": _landmark,
    "group name": _group_name,
    **{name: _fact(name) for name in ("display", "gaps", "secret", "required", "flagged", "error")},
}


def _told(before: FrameNodes, after: FrameNodes) -> FrameNodes:
    """`after` with the splice that made it from `before` (what an incremental read hands the view)."""
    old = {n["nodeId"]: n for n in before.nodes}
    now = {n["nodeId"]: n for n in after.nodes}
    changed = {i for i, n in now.items() if old.get(i) is not n}
    told = Spliced(before.nodes, after.nodes, True, now, changed, old.keys() - now.keys())
    return replace(after, spliced=told)


@pytest.mark.parametrize("told", [False, True], ids=["by its nodes", "told by the splice"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_build_with_the_memo_gives_the_view_a_build_without_it_gives(change: str, told: bool) -> None:
    altered = replayed = 0
    for name in PAGES:
        if name == "big":
            continue  # 3,000 rows: its builds take seconds, and a table is on the other pages too
        base = _frames(name)
        if change in ("required", "flagged"):  # read (a set, empty) before and after: only a member changes
            base = [replace(f, required_ids=f.required_ids or set(), flagged_ids=f.flagged_ids or set()) for f in base]
        for i in range(8):  # a different node each time, across the page
            memo, ids = WalkMemo(), BlockIds()
            before = build_view(base, ids, memo=memo)
            changed = [CHANGES[change](base[0], i * 5 + 1), *base[1:]]
            if told:
                changed[0] = _told(base[0], changed[0])
            plain_ids = copy.deepcopy(ids)
            with_memo = build_view(changed, ids, memo=memo)
            without = build_view(changed, plain_ids)
            if told and changed[0].nodes is not base[0].nodes:  # read only where the splice changed it
                assert memo.reads[changed[0].key].came_from is not None
            assert _json(with_memo, ids) == _json(without, plain_ids), (name, change, i)
            altered += asdict(before) != asdict(without)
            replayed += memo.replayed
    # Or the test proves nothing: the changes must show, and the memo must stand for containers.
    assert altered >= 3 and replayed > 0, (altered, replayed)


@pytest.mark.parametrize("name", PAGES)
def test_the_same_nodes_again_are_taken_from_the_memo_whole(name: str) -> None:
    frames = _frames(name)
    memo, ids = WalkMemo(), BlockIds()
    first = build_view(frames, ids, memo=memo)
    again = build_view(frames, ids, memo=memo)
    assert memo.replayed >= 1
    assert _json(again, ids) == _json(first, ids)


def _node(node_id: str, role: str, name: str = "", children: tuple[str, ...] = (), **more: Any) -> Node:
    found: Node = {"nodeId": node_id, "role": {"type": "role", "value": role}, "childIds": list(children)}
    if name:
        found["name"] = {"type": "computedString", "value": name}
    if node_id != "1":
        found["parentId"] = more.pop("parent")
    return {**found, "backendDOMNodeId": int(node_id), **more}


def _tree(*nodes: Node) -> list[FrameNodes]:
    return [FrameNodes("F", list(nodes))]


def _same_as_without(first: list[FrameNodes], then: list[FrameNodes]) -> None:
    """The build of `then` after `first` with the memo, as its nodes say and as the splice tells it,
    is the build without the memo."""
    for told in (False, True):
        memo, ids = WalkMemo(), BlockIds()
        build_view(first, ids, memo=memo)
        plain_ids = copy.deepcopy(ids)
        now = [_told(first[0], then[0]), *then[1:]] if told else then
        assert _json(build_view(now, ids, memo=memo), ids) == _json(build_view(then, plain_ids), plain_ids), told


def test_a_fields_run_that_goes_on_into_a_section_keeps_the_section_from_the_memo() -> None:
    # The run begun before the region takes the region's field: what the region gives depends on it.
    value = {"value": {"type": "string", "value": "x"}}
    root = _node("1", "RootWebArea", "Page", ("2", "3", "5"))
    field = _node("2", "textbox", "A", parent="1", **value)
    region = _node("3", "region", "Box", ("4",), parent="1")
    inner = _node("4", "textbox", "B", parent="3", **value)
    text = _node("5", "StaticText", "Tail", parent="1")
    _same_as_without(_tree(root, field, region, inner, text), _tree(root, field, region, inner, {**text}))
    alone = _node("2", "StaticText", "Head", parent="1")
    _same_as_without(_tree(root, alone, region, inner, text), _tree(root, field, region, inner, text))


def test_a_field_after_a_replayed_section_takes_its_last_line_as_its_label_as_a_walk_does() -> None:
    # <section><span>Team</span></section><input> (no name): the field's label is the section's last
    # line, which is then no text block; the section replayed from the memo must give the same.
    root = _node("1", "RootWebArea", "Page", ("2", "4", "5"))
    region = _node("2", "region", "Box", ("3",), parent="1")
    team = _node("3", "StaticText", "Team", parent="2")
    box = _node("4", "textbox", "", parent="1")
    tail = _node("5", "StaticText", "Tail", parent="1")
    changed = {**tail, "name": {"type": "computedString", "value": "Tail, changed"}}
    _same_as_without(_tree(root, region, team, box, tail), _tree(root, region, team, box, changed))
    view = build_view(_tree(root, region, team, box, tail), BlockIds())
    assert [i["label"] for b in view.blocks if b["type"] == "fields" for i in b["items"]] == ["Team"]
    assert [b["text"] for b in view.blocks if b["type"] == "text"] == ["Tail"]


def test_a_section_in_a_renamed_group_gives_its_fields_the_new_group() -> None:
    root = _node("1", "RootWebArea", "Page", ("2",))
    group = _node("2", "radiogroup", "Size", ("3",), parent="1")
    form = _node("3", "form", "Pick", ("4", "5"), parent="2")
    small = _node("4", "radio", "S", parent="3")
    medium = _node("5", "radio", "M", parent="3")
    renamed = {**group, "name": {"type": "computedString", "value": "Fit"}}
    _same_as_without(_tree(root, group, form, small, medium), _tree(root, renamed, form, small, medium))


@pytest.mark.parametrize("name", ["home", "cinema_home", "gazette_article"])
def test_a_replayed_block_given_another_id_is_measured_and_targeted_with_it(name: str) -> None:
    # The same nodes again (every container replayed, the very block and target objects), with
    # block ids 9 characters longer: the budget must count the new ids, and the targets carry them.
    frames = _frames(name)
    memo = WalkMemo()
    build_view(frames, BlockIds(), memo=memo)
    plain = build_view(frames, BlockIds(prefix="b" * 10))
    sizes = [len(json.dumps(b, ensure_ascii=False)) for b in plain.full_blocks]
    assert len(sizes) > 10 and plain.targets
    limits = Limits(budget_chars=sum(sizes[:10]) - 1, attention_chars=0)
    without = build_view(frames, BlockIds(prefix="b" * 10), limits=limits)
    replayed = memo.replayed
    with_memo = build_view(frames, BlockIds(prefix="b" * 10), limits=limits, memo=memo)
    assert memo.replayed > replayed
    assert len(without.blocks) < 11  # ten blocks fit only with the ids as long as they are now
    assert asdict(with_memo) == asdict(without)


def test_an_editor_whose_parent_turns_editable_is_no_field_of_its_own_any_more() -> None:
    # What the walk read of the editor's node is kept (the same object); its parent's is read anew.
    editable = {"name": "editable", "value": {"type": "token", "value": "richtext"}}
    focusable = {"name": "focusable", "value": {"type": "booleanOrUndefined", "value": True}}
    root = _node("1", "RootWebArea", "Page", ("2",))
    region = _node("2", "region", "Notes", ("3",), parent="1")
    editor = _node("3", "generic", "Draft", ("4",), parent="2", properties=[editable, focusable])
    text = _node("4", "StaticText", "Hello", parent="3")
    inside = {**region, "properties": [editable]}
    before = build_view(_tree(root, region, editor, text), BlockIds())
    after = build_view(_tree(root, inside, editor, text), BlockIds())
    assert before.field_count == 1 and after.field_count == 0
    _same_as_without(_tree(root, region, editor, text), _tree(root, inside, editor, text))
    _same_as_without(_tree(root, inside, editor, text), _tree(root, region, editor, text))


@pytest.mark.parametrize("name", ["gazette_article", "cinema_book", "home"])
def test_a_block_built_again_the_same_is_the_object_built_then(name: str) -> None:
    frames = _frames(name)
    memo, ids = WalkMemo(), BlockIds()
    first = build_view(frames, ids, memo=memo)
    changed = [_told(frames[0], _text(frames[0], 3)), *frames[1:]]
    again = build_view(changed, ids, memo=memo)
    same = [a for a, b in zip(again.full_blocks, first.full_blocks, strict=True) if a is b]
    # The blocks of the containers taken from the memo are the objects built then (a block walked
    # again is a new one); each equals its build without the memo.
    assert 0 < len(same) < len(first.full_blocks)
    assert again.full_blocks == build_view(changed, copy.deepcopy(ids)).full_blocks
