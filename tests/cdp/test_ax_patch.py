"""The splice of re-read subtrees into a frame's AX nodes (`cdp_bridge.ax_patch`), on recorded trees.

`tests/cdp/data/ax_patch.json.gz` (recorded by `tests/support/record_ax_patch.py` from the sample
site in Chromium) holds, per case, `getFullAXTree` before and after a change and the raw
`getAXNodeAndAncestors` / `queryAXTree` answers for the changed elements: the spliced list
must hold exactly the nodes of the tree read after the change.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from cdp_bridge.ax import UNREAD
from cdp_bridge.ax_patch import (
    Subtree,
    _one_tree,
    _root_id,
    full_form,
    proven_tree,
    read_subtrees,
    splice,
    splice_index,
    splice_tree,
    subtree_ids,
)
from cdp_bridge.errors import ProtocolError
from cdp_bridge.layout import patch_text_layout, wanted

DATA = Path(__file__).parent / "data" / "ax_patch.json.gz"
CASES = json.loads(gzip.decompress(DATA.read_bytes()))


def _subtrees(case: dict[str, Any]) -> list[Subtree]:
    return [Subtree(s["ancestors"], [full_form(n) for n in s["nodes"]]) for s in case["subtrees"]]


def _by_id(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {n["nodeId"]: n for n in nodes}


def _without_text_boxes(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The nodes by id, without Chromium's InlineTextBox fragments of laid-out text: their ids
    are renewed whenever the text is laid out again (a table's header, when its rows change),
    and the view never reads them (`walk._SKIP_ROLES`)."""
    boxes = {n["nodeId"] for n in nodes if n.get("role", {}).get("value") == "InlineTextBox"}
    return {
        n["nodeId"]: {**n, "childIds": [c for c in n.get("childIds", ()) if c not in boxes]}
        for n in nodes
        if n["nodeId"] not in boxes
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_spliced_nodes_are_the_nodes_of_a_whole_read_after_the_change(name: str) -> None:
    case = CASES[name]
    before = copy.deepcopy(case["before"])
    spliced = splice(case["before"], _subtrees(case))
    assert spliced is not None
    assert _without_text_boxes(spliced) == _without_text_boxes(case["after"])
    assert len(_by_id(spliced)) == len(spliced)
    assert case["before"] == before, "the old list is left as it was"
    assert _without_text_boxes(spliced) != _without_text_boxes(case["before"]), "the change is one a splice must see"


def test_old_nodes_keep_their_places_and_new_ones_follow() -> None:
    case = CASES["rows_rerendered"]
    spliced = splice(case["before"], _subtrees(case))
    assert spliced is not None
    old_ids = [n["nodeId"] for n in case["before"]]
    kept = [n["nodeId"] for n in spliced if n["nodeId"] in set(old_ids)]
    assert kept == [i for i in old_ids if i in set(kept)]
    assert spliced[0]["nodeId"] == case["before"][0]["nodeId"]


def test_query_ax_tree_names_ignored_nodes_that_the_full_tree_leaves_as_none() -> None:
    renamed = 0
    for case in CASES.values():
        full = _by_id(case["after"])
        for sub in case["subtrees"]:
            for node in sub["nodes"]:
                if node.get("ignored"):
                    renamed += node["role"]["value"] != "none"
                    assert {k: v for k, v in full_form(node).items() if k != "childIds"} == {
                        k: v for k, v in full[node["nodeId"]].items() if k != "childIds"
                    }
    assert renamed, "the recording has such a node"
    unignored = next(n for case in CASES.values() for s in case["subtrees"] for n in s["nodes"] if not n.get("ignored"))
    assert full_form(unignored) is unignored


def test_a_subtree_that_does_not_hang_where_its_ancestors_say_gives_none() -> None:
    case = CASES["rows_rerendered"]
    subtrees = _subtrees(case)
    # The element's own node missing from its subtree (Chromium left it out of the tree).
    assert splice(case["before"], [Subtree(subtrees[0].ancestors, subtrees[0].nodes[1:])]) is None
    # A child dropped from the subtree, its parent still listing it: not one tree.
    nodes = subtrees[0].nodes
    assert splice(case["before"], [Subtree(subtrees[0].ancestors, [nodes[0], *nodes[2:]])]) is None
    # An element without a node of its own.
    assert splice(case["before"], [Subtree([], nodes)]) is None


def test_a_tree_read_level_by_level_with_runs_left_unread_gives_none() -> None:
    case = CASES["rows_rerendered"]
    before = [dict(n) for n in case["before"]]
    before[-1][UNREAD] = True
    assert splice(before, _subtrees(case)) is None


def test_nothing_changed_splices_to_the_same_nodes() -> None:
    case = CASES["heading_from_contents"]
    assert splice(case["after"], []) == case["after"]


async def _replying(answers: dict[str, Any]) -> Any:
    calls: list[tuple[str, dict[str, Any]]] = []

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        calls.append((method, params))
        await anyio.lowlevel.checkpoint()
        if method not in answers:
            raise ProtocolError(method, -32000, "no such node")
        return answers[method]

    return send, calls


@pytest.mark.anyio
async def test_read_subtrees_asks_for_each_element_its_subtree_then_its_ancestors_at_once() -> None:
    # Each queryAXTree before a getAXNodeAndAncestors: Chromium answers the query once a command
    # after it brings the AX tree up to date, else at the page's next lifecycle update.
    case = CASES["heading_from_contents"]
    sub = case["subtrees"][0]
    send, calls = await _replying(
        {
            "Accessibility.getAXNodeAndAncestors": {"nodes": sub["ancestors"]},
            "Accessibility.queryAXTree": {"nodes": sub["nodes"]},
        }
    )
    found = await read_subtrees(send, [{"objectId": "1"}, {"backendNodeId": 7}])
    assert [c[0] for c in calls] == ["Accessibility.queryAXTree", "Accessibility.getAXNodeAndAncestors"] * 2
    assert [c[1] for c in calls] == [{"objectId": "1"}, {"objectId": "1"}, {"backendNodeId": 7}, {"backendNodeId": 7}]
    assert found[0].ancestors == sub["ancestors"] and found[0].nodes == [full_form(n) for n in sub["nodes"]]
    failing, _ = await _replying({"Accessibility.queryAXTree": {"nodes": []}})
    with pytest.raises(ProtocolError):
        await read_subtrees(failing, [{"objectId": "1"}])


@pytest.mark.anyio
async def test_layout_is_kept_without_a_snapshot_unless_a_node_in_running_text_was_touched() -> None:
    case = CASES["rows_rerendered"]
    frames = [("F", case["after"])]
    running = wanted(frames)
    assert running, "the queue page has links and spans in running text"
    display = dict.fromkeys(running, "inline") | {999_999: "block"}
    gaps = {next(iter(running)): (" ", "")}
    snapshot = {"documents": [], "strings": []}
    send, calls = await _replying({"DOMSnapshot.captureSnapshot": snapshot})
    kept = await patch_text_layout(send, frames, (display, gaps), running, touched=set())
    assert calls == []
    assert kept == (dict.fromkeys(running, "inline"), gaps)
    await patch_text_layout(send, frames, (display, gaps), running, touched={next(iter(running))})
    assert "DOMSnapshot.captureSnapshot" in [c[0] for c in calls]
    calls.clear()
    # A node in running text now that was not before: its layout was never read.
    await patch_text_layout(send, frames, (display, gaps), running - {next(iter(running))}, touched=set())
    assert "DOMSnapshot.captureSnapshot" in [c[0] for c in calls]


def test_a_node_listed_twice_alike_is_listed_once_and_twice_unlike_gives_none() -> None:
    case = CASES["rows_rerendered"]
    box = next(n for n in case["before"] if n.get("role", {}).get("value") == "InlineTextBox")
    twice = [*case["before"], dict(box)]
    spliced = splice(twice, _subtrees(case))
    assert spliced is not None
    assert _without_text_boxes(spliced) == _without_text_boxes(case["after"])
    assert len({n["nodeId"] for n in spliced}) == len(spliced)
    assert (
        splice([*case["before"], {**box, "name": {"type": "computedString", "value": "other"}}], _subtrees(case))
        is None
    )


def _own_only(nodes: list[dict[str, Any]], node: dict[str, Any], **changes: Any) -> Subtree:
    """`node` (changed by `changes`) and its ancestors as `getAXNodeAndAncestors` gives them."""
    by_id = _by_id(nodes)
    chain = [{**node, **changes}]
    while chain[-1].get("parentId"):
        chain.append(by_id[chain[-1]["parentId"]])
    return Subtree(chain, [], whole=False)


def test_a_node_read_alone_takes_its_new_name_and_keeps_what_is_below_it() -> None:
    before = CASES["heading_from_contents"]["after"]
    node = next(n for n in before if n.get("childIds") and "backendDOMNodeId" in n and n.get("parentId"))
    renamed = {"type": "computedString", "value": "named by a changed label"}
    spliced = splice(before, [_own_only(before, node, name=renamed)])
    assert spliced is not None
    assert _by_id(spliced)[node["nodeId"]]["name"] == renamed
    assert [n["nodeId"] for n in spliced] == [n["nodeId"] for n in before], "its children stay, in their places"
    assert [n for n in spliced if n["nodeId"] != node["nodeId"]] == [n for n in before if n["nodeId"] != node["nodeId"]]


def test_a_node_read_alone_whose_children_changed_or_that_is_new_gives_none() -> None:
    before = CASES["heading_from_contents"]["after"]
    node = next(n for n in before if len(n.get("childIds", ())) > 1 and "backendDOMNodeId" in n and n.get("parentId"))
    # Its children are not those the old list holds below it: they were never read.
    dropped = _own_only(before, node, childIds=node["childIds"][1:])
    assert splice(before, [dropped]) is None
    added = _own_only(before, node, childIds=[*node["childIds"], "999999"])
    assert splice(before, [added]) is None
    # A node the old list does not have: nothing below it was read.
    fresh = _own_only(before, node, nodeId="999998", backendDOMNodeId=999_998)
    assert splice(before, [fresh]) is None
    # Another element under the same node id (the node was replaced).
    other = _own_only(before, node, backendDOMNodeId=int(node["backendDOMNodeId"]) + 100_000)
    assert splice(before, [other]) is None


@pytest.mark.anyio
async def test_read_subtrees_reads_only_the_node_and_ancestors_of_an_element_named_by_a_change() -> None:
    case = CASES["heading_from_contents"]
    sub = case["subtrees"][0]
    send, calls = await _replying(
        {
            "Accessibility.getAXNodeAndAncestors": {"nodes": sub["ancestors"]},
            "Accessibility.queryAXTree": {"nodes": sub["nodes"]},
        }
    )
    found = await read_subtrees(send, [{"backendNodeId": 1}], [{"backendNodeId": 2}])
    assert calls == [
        ("Accessibility.queryAXTree", {"backendNodeId": 1}),
        ("Accessibility.getAXNodeAndAncestors", {"backendNodeId": 1}),
        ("Accessibility.getAXNodeAndAncestors", {"backendNodeId": 2}),
    ]
    assert [s.whole for s in found] == [True, False]
    assert found[1].ancestors == sub["ancestors"] and found[1].nodes == []


def test_an_element_its_parent_no_longer_lists_leaves_the_tree_with_what_it_held() -> None:
    before = CASES["heading_from_contents"]["after"]
    by_id = _by_id(before)
    node = next(
        n
        for n in before
        if n.get("childIds") and "backendDOMNodeId" in n and n.get("parentId") and by_id[n["parentId"]].get("parentId")
    )
    parent = by_id[node["parentId"]]
    chain = [node, {**parent, "childIds": [c for c in parent["childIds"] if c != node["nodeId"]]}]
    while chain[-1].get("parentId"):
        chain.append(by_id[chain[-1]["parentId"]])
    hidden = Subtree(chain, [node])  # hidden: Chromium still answers for the element itself
    spliced = splice(before, [hidden])
    assert spliced is not None
    gone = {node["nodeId"], *node["childIds"]}
    assert gone <= {n["nodeId"] for n in before}
    assert not gone & {n["nodeId"] for n in spliced}
    assert _by_id(spliced)[parent["nodeId"]] == chain[1]
    # Hidden before and still: `queryAXTree` gives nothing below it.
    assert splice(before, [Subtree(chain, [])]) == spliced
    # An answer whose second node is not the element's parent: no telling what happened.
    assert len(chain) >= 3
    assert splice(before, [Subtree([node, *chain[2:]], [node])]) is None


# --- a proven tree checked only where it changed (`splice_tree`) -------------------------------


def _reread(old: list[dict[str, Any]], node_id: str, change: str, other: str) -> Subtree:
    """The subtree of `node_id` read again as `change` leaves it (copies: new objects, as a read gives)."""
    by_id = _by_id(old)
    top = copy.deepcopy(by_id[node_id])
    below = [copy.deepcopy(by_id[i]) for i in _ordered(by_id, node_id)[1:]]
    ancestors, parent = [top], by_id.get(top.get("parentId", ""))
    while parent is not None:
        ancestors.append(copy.deepcopy(parent))
        parent = by_id.get(parent.get("parentId", ""))
    if change == "child gone" and top.get("childIds"):
        gone = top["childIds"].pop()
        dropped = set(_ordered(by_id, gone))
        below = [n for n in below if n["nodeId"] not in dropped]
    elif change == "child added":
        top.setdefault("childIds", []).append("new-1")
        below.append({"nodeId": "new-1", "parentId": node_id, "role": {"value": "StaticText"}, "childIds": []})
    elif change == "listed twice" and len(ancestors) > 1:
        ancestors[1]["childIds"] = [*ancestors[1].get("childIds", ()), node_id]
    elif change == "listed by another" and other not in (node_id, top.get("parentId")):
        ancestors.append(copy.deepcopy(by_id[other]))  # read again beside it, now listing it too
        ancestors[-1]["childIds"] = [*ancestors[-1].get("childIds", ()), node_id]
    elif change == "root gains a parent":
        ancestors[-1]["parentId"] = node_id
    elif change == "parents go round" and below and len(ancestors) > 2:
        # Each lists its child, but up from the parent is the parent again: it hangs below a node of its own.
        parent, lowest = ancestors[1], below[-1]
        parent["parentId"] = lowest["nodeId"]
        lowest["childIds"] = [*lowest.get("childIds", ()), parent["nodeId"]]
        ancestors[2]["childIds"] = [c for c in ancestors[2].get("childIds", ()) if c != parent["nodeId"]]
    elif change in ("moved", "hidden elsewhere") and other not in (node_id, top.get("parentId")):
        if other in _ordered(by_id, node_id):
            return Subtree(ancestors, [top, *below])
        # Now below `other` (listing it, or not: hidden), read with it; its old parent, kept, lists it still.
        top["parentId"] = other
        moved_to = copy.deepcopy(by_id[other])
        if change == "moved":
            moved_to["childIds"] = [*moved_to.get("childIds", ()), node_id]
        ancestors[1:] = [moved_to]
        parent = by_id.get(moved_to.get("parentId", ""))
        while parent is not None:
            ancestors.append(copy.deepcopy(parent))
            parent = by_id.get(parent.get("parentId", ""))
    elif change == "sibling dropped" and len(ancestors) > 1 and len(ancestors[1].get("childIds", ())) > 1:
        # Its parent, read again, no longer lists a sibling that was not read again.
        ancestors[1]["childIds"] = [c for c in ancestors[1]["childIds"] if c == node_id][:1] or [node_id]
    elif change == "listed elsewhere below" and len(below) > 2:
        # A node below it now listed by another one than the parent it names.
        moved = below[-1]
        for node in (top, *below):
            node["childIds"] = [c for c in node.get("childIds", ()) if c != moved["nodeId"]]
        holder = next((n for n in (top, *below) if n["nodeId"] not in (moved["nodeId"], moved.get("parentId"))), None)
        if holder is not None:
            holder["childIds"] = [*holder.get("childIds", ()), moved["nodeId"]]
    elif change == "renamed":
        top["name"] = {"type": "computedString", "value": "renamed"}
    return Subtree(ancestors, [top, *below])


def _ordered(by_id: dict[str, dict[str, Any]], node_id: str) -> list[str]:
    out, stack = [], [node_id]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed([c for c in by_id[current].get("childIds", ()) if c in by_id]))
    return out


_CHANGES = [
    "sibling dropped",
    "listed elsewhere below",
    "moved",
    "hidden elsewhere",
    "renamed",
    "child gone",
    "child added",
    "listed twice",
    "listed by another",
    "root gains a parent",
    "parents go round",
]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_proven_tree_checked_only_where_it_changed_splices_as_one_checked_whole(name: str) -> None:
    old, proven = splice_tree(CASES[name]["before"], [])
    assert old is not None
    if not proven:
        pytest.skip("the recorded tree lists a node twice: every splice of it is checked whole")
    told = {"proven": 0, "unproven": 0, "refused": 0}
    elements = [n["nodeId"] for n in old if "backendDOMNodeId" in n]
    for index, node_id in enumerate(elements[:: max(1, len(elements) // 12)]):
        for change in _CHANGES:
            subtrees = [_reread(old, node_id, change, elements[(index * 7) % len(elements)])]
            whole = splice(old, subtrees)
            spliced, still = splice_tree(old, subtrees, proven=True)
            assert spliced == whole, (name, node_id, change)
            if still:  # proven: one tree, each node listed once, by its parent
                assert spliced is not None
                assert _one_tree(spliced, _root_id(spliced))
                assert sum(len(n.get("childIds", ())) for n in spliced) == len(spliced) - 1
            told["refused" if whole is None else "proven" if still else "unproven"] += 1
    # Or the test proves nothing: each way out must have been taken.
    assert all(told.values()), told


def test_a_tree_is_proven_a_node_given_twice_alike_counted_once_and_one_listing_a_node_twice_is_not() -> None:
    tree = CASES["heading_from_contents"]["before"]
    assert proven_tree(tree)
    parent = next(n for n in tree if n.get("childIds"))
    twice = [{**n, "childIds": [*n["childIds"], n["childIds"][0]]} if n is parent else n for n in tree]
    assert not proven_tree(twice)
    assert proven_tree([*tree, tree[-1]])  # the same node twice in the list, as Chromium gives some text boxes
    assert not proven_tree([*tree, {**tree[-1], "name": {"type": "computedString", "value": "other"}}])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_splice_given_the_proven_nodes_by_id_is_the_splice_that_looks_at_every_node(name: str) -> None:
    case = CASES[name]
    before = case["before"]
    assert proven_tree(before)
    index = _by_id(before)
    subtrees = _subtrees(case)
    looked = splice_index(before, subtrees, True)
    given = splice_index(before, subtrees, True, dict(index))
    assert looked is not None and given is not None
    assert given.nodes == looked.nodes and all(a is b for a, b in zip(given.nodes, looked.nodes, strict=True))
    assert (given.proven, given.changed, given.gone) == (looked.proven, looked.changed, looked.gone)
    assert given.by_id == looked.by_id == _by_id(given.nodes)
    fresh = {n["nodeId"] for s in case["subtrees"] for n in [*s["ancestors"], *s["nodes"]]}
    assert given.changed == fresh and given.gone == set(index) - set(given.by_id)
    assert given.base is before


def test_nodes_given_again_as_the_very_objects_the_frame_has_stay_and_are_not_changed() -> None:
    # A relisted element's kept children come back as the objects the last read had (ax_relist).
    before = CASES["rows_rerendered"]["before"]
    index = _by_id(before)
    element = next(
        n for n in before if n.get("parentId") and "backendDOMNodeId" in n and 3 < len(subtree_ids(n, index)) < 20
    )
    below = [index[i] for i in subtree_ids(element, index) if i != element["nodeId"]]
    again = [{**element}, *below]  # its own node read again, what it holds kept
    ancestors = [again[0], *({**index[i]} for i in _ancestor_ids(element, index))]
    for proven, given in ((True, dict(index)), (False, None)):
        found = splice_index(before, [Subtree(ancestors, again)], proven, given)
        assert found is not None
        assert found.changed == {n["nodeId"] for n in ancestors} and not found.gone
        assert all(found.by_id[n["nodeId"]] is n for n in below)
        assert [n["nodeId"] for n in found.nodes] == [n["nodeId"] for n in before]


def _ancestor_ids(node: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[str]:
    out = []
    while node.get("parentId"):
        out.append(node["parentId"])
        node = by_id[node["parentId"]]
    return out
