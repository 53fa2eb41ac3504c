"""An element whose child list alone changed, read as such (`cdp_bridge.ax_relist`), on recorded trees.

`tests/cdp/data/ax_relist.json.gz` (recorded by `tests/support/record_ax_relist.py` in Chromium)
holds, per case, `getFullAXTree` before and after a change of child lists and the raw answers
`read_relisted` reads for each element whose list changed: relisted and spliced, the frame's
nodes must be exactly those of the tree read after the change, the kept children's the very
objects of the last read; where a kept child's node may change with its siblings, or the tree
lists what was not read, `relist` must give None (the element is then read whole).
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import anyio.lowlevel
import pytest

from cdp_bridge.ax_patch import full_form, splice
from cdp_bridge.ax_relist import Relisted, read_relisted, relist

DATA = Path(__file__).parent / "data" / "ax_relist.json.gz"
CASES = json.loads(gzip.decompress(DATA.read_bytes()))
Node = dict[str, Any]


def _by_id(nodes: list[Node]) -> dict[str, Node]:
    return {n["nodeId"]: n for n in nodes}


def _read(case: dict[str, Any]) -> list[Relisted]:
    return [Relisted(r["ancestors"], [[full_form(n) for n in a] for a in r["added"]]) for r in case["relisted"]]


def _without_text_boxes(nodes: list[Node]) -> dict[str, Node]:
    """The nodes by id without Chromium's InlineTextBox fragments (renewed on each layout; never read)."""
    boxes = {n["nodeId"] for n in nodes if n.get("role", {}).get("value") == "InlineTextBox"}
    return {
        n["nodeId"]: {**n, "childIds": [c for c in n.get("childIds", ()) if c not in boxes]}
        for n in nodes
        if n["nodeId"] not in boxes
    }


@pytest.mark.parametrize("name", ["card_moved", "card_added_and_removed"])
def test_a_relisted_element_splices_to_the_nodes_of_a_whole_read_keeping_its_kept_children(name: str) -> None:
    case = CASES[name]
    before = copy.deepcopy(case["before"])
    by_id = _by_id(case["before"])
    subtrees = [relist(by_id, read) for read in _read(case)]
    assert all(sub is not None for sub in subtrees)
    spliced = splice(case["before"], [sub for sub in subtrees if sub is not None])
    assert spliced is not None
    assert _without_text_boxes(spliced) == _without_text_boxes(case["after"])
    assert _without_text_boxes(spliced) != _without_text_boxes(case["before"]), "the change is one a splice must see"
    assert case["before"] == before, "the old list is left as it was"
    kept = [n for n in spliced if by_id.get(n["nodeId"]) is n and n.get("role", {}).get("value") == "article"]
    assert kept, "the cards that stayed are the last read's very nodes"


def test_an_element_whose_tree_lists_a_child_that_was_not_read_gives_none() -> None:
    case = CASES["card_moved"]
    todo, done = _read(case)
    assert relist(_by_id(case["before"]), Relisted(done.ancestors, [])) is None  # the moved card, not read
    assert relist(_by_id(case["before"]), todo) is not None
    (added,) = _read(CASES["card_added_and_removed"])
    assert relist(_by_id(CASES["card_added_and_removed"]["before"]), Relisted(added.ancestors, [])) is None
    # A child another element held: its node, kept, would hang from the wrong parent.
    by_id = _by_id(case["before"])
    moved = done.added[0][0]["nodeId"]
    elsewhere = {**by_id, moved: {**by_id.get(moved, done.added[0][0]), "parentId": todo.ancestors[0]["nodeId"]}}
    assert relist(elsewhere, Relisted(done.ancestors, [])) is None


def test_a_child_read_that_its_parent_does_not_list_gives_none() -> None:
    case = CASES["card_moved"]
    todo, done = _read(case)
    assert relist(_by_id(case["before"]), Relisted(todo.ancestors, done.added)) is None  # another parent's
    card = done.added[0][0]["nodeId"]
    unlisted = {**done.ancestors[0], "childIds": [c for c in done.ancestors[0]["childIds"] if c != card]}
    assert relist(_by_id(case["before"]), Relisted([unlisted, *done.ancestors[1:]], done.added)) is None
    assert relist(_by_id(case["before"]), done) is not None


def test_a_list_or_its_items_are_read_whole() -> None:
    case = CASES["list_item_added"]
    by_id = _by_id(case["before"])
    (read,) = _read(case)
    assert relist(by_id, read) is None
    # Its items would be kept even as a plain container's children: a list marker's number moves.
    generic = {**read.ancestors[0], "role": {"type": "role", "value": "generic"}}
    assert relist(by_id, Relisted([generic, *read.ancestors[1:]], read.added)) is None


def test_a_kept_list_marker_inside_a_kept_child_gives_none() -> None:
    case = CASES["card_moved"]
    by_id = _by_id(case["before"])
    todo, _done = _read(case)
    kept = by_id[todo.ancestors[0]["childIds"][0]]
    inner = by_id[kept["childIds"][0]]
    marked = {**by_id, inner["nodeId"]: {**inner, "role": {"type": "internalRole", "value": "ListMarker"}}}
    assert relist(by_id, todo) is not None
    assert relist(marked, todo) is None


def test_text_among_the_kept_children_gives_none() -> None:
    case = CASES["text_among_children"]
    (read,) = _read(case)
    by_id = _by_id(case["before"])
    kept_roles = {by_id[c]["role"]["value"] for c in read.ancestors[0]["childIds"] if c in by_id}
    assert "StaticText" in kept_roles, "the recording has text beside the children"
    assert relist(by_id, read) is None


def test_an_element_that_is_not_the_one_read_before_gives_none() -> None:
    case = CASES["card_moved"]
    todo, _done = _read(case)
    moved = {**todo.ancestors[0], "backendDOMNodeId": -1}
    assert relist(_by_id(case["before"]), Relisted([moved, *todo.ancestors[1:]], [])) is None
    assert relist(_by_id(case["before"]), Relisted([], [])) is None


@pytest.mark.anyio
async def test_read_relisted_asks_for_each_element_its_ancestors_and_for_each_child_gained_its_subtree() -> None:
    case = CASES["card_moved"]
    todo, done = case["relisted"]
    card = done["added"][0]
    calls: list[tuple[str, dict[str, Any]]] = []
    answers = {  # by backend id: what each command answers
        (9, "Accessibility.getAXNodeAndAncestors"): {"nodes": done["ancestors"][1:]},
        (9, "Accessibility.queryAXTree"): {"nodes": card},
        (1, "Accessibility.getAXNodeAndAncestors"): {"nodes": todo["ancestors"]},
        (2, "Accessibility.getAXNodeAndAncestors"): {"nodes": done["ancestors"]},
        (3, "Accessibility.queryAXTree"): {"nodes": card},
    }

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        calls.append((method, params))
        await anyio.lowlevel.checkpoint()
        return answers[params["backendNodeId"], method]

    relisted = [({"backendNodeId": 1}, []), ({"backendNodeId": 2}, [{"backendNodeId": 3}])]
    subtrees, found = await read_relisted(send, relisted, [{"backendNodeId": 9}])
    # Each queryAXTree before a getAXNodeAndAncestors, which has Chromium answer it at once.
    assert calls == [
        ("Accessibility.queryAXTree", {"backendNodeId": 9}),
        ("Accessibility.getAXNodeAndAncestors", {"backendNodeId": 9}),
        ("Accessibility.getAXNodeAndAncestors", {"backendNodeId": 1}),
        ("Accessibility.queryAXTree", {"backendNodeId": 3}),
        ("Accessibility.getAXNodeAndAncestors", {"backendNodeId": 2}),
    ]
    assert found == [
        Relisted(todo["ancestors"], []),
        Relisted(done["ancestors"], [[full_form(n) for n in card]]),
    ]
    assert [(s.ancestors, s.nodes) for s in subtrees] == [(done["ancestors"][1:], [full_form(n) for n in card])]
