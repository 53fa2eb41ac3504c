"""Ancestors that changed elements share, read once (`cdp_bridge.ax_patch.read_changed` with `Known`).

A fake Chromium answers the AX commands from a recorded tree of the sample site
(`tests/cdp/data/ax_patch.json.gz`), as Chromium builds them: `queryAXTree` the element's subtree
in document order, `getAXNodeAndAncestors` the element and its parents up to the root,
`getPartialAXTree` without relatives the element alone. What `read_changed` gives knowing the
last read must be what it gives reading every element's chain itself, whatever the last read
said (the tree moved, an element hidden, an ancestor gone), with fewer nodes built when
elements share ancestors.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from pathlib import Path
from typing import Any

import anyio.lowlevel
import pytest

from cdp_bridge.ax_patch import RELEASED, Known, chain_plan, read_changed, read_subtrees, subtree_ids
from cdp_bridge.ax_relist import read_relisted
from cdp_bridge.errors import ProtocolError

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parent / "data" / "ax_patch.json.gz"
CASES = json.loads(gzip.decompress(DATA.read_bytes()))
Node = dict[str, Any]


class FakeAX:
    """The AX commands of one frame, answered from `nodes` (a whole tree as `getFullAXTree` gives it)."""

    def __init__(self, nodes: list[Node]) -> None:
        self.by_id = {n["nodeId"]: n for n in nodes}
        self.by_backend = {n["backendDOMNodeId"]: n for n in nodes if "backendDOMNodeId" in n}
        self.calls: list[str] = []
        self.built = 0
        """Nodes built for answers, as Chromium builds each one it sends."""

    def _node(self, params: dict[str, Any]) -> Node:
        node = self.by_backend.get(params.get("backendNodeId"))
        if node is None:
            raise ProtocolError("Accessibility", -32000, "No node with given id found")
        return node

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(method)
        await anyio.lowlevel.checkpoint()
        node = self._node(params)
        if method == "Accessibility.queryAXTree":
            found = [self.by_id[i] for i in _preorder(node, self.by_id)]
        elif method == RELEASED:
            found = [node]
            while node.get("parentId"):
                node = self.by_id[node["parentId"]]
                found.append(node)
        elif method == "Accessibility.getPartialAXTree":
            assert params.get("fetchRelatives") is False
            found = [node]
        else:
            raise AssertionError(method)
        self.built += len(found)
        return {"nodes": copy.deepcopy(found)}


def _preorder(node: Node, by_id: dict[str, Node]) -> list[str]:
    out = [node["nodeId"]]
    for child in node.get("childIds", ()):
        if child in by_id:
            out += _preorder(by_id[child], by_id)
    return out


def _known(nodes: list[Node]) -> Known:
    return Known({n["nodeId"]: n for n in nodes}, {n["backendDOMNodeId"]: n for n in nodes if "backendDOMNodeId" in n})


def _element_backends(nodes: list[Node]) -> list[int]:
    """Backend ids of nodes that are their backend id's only node (what a take names)."""
    seen: dict[int, int] = {}
    for n in nodes:
        if "backendDOMNodeId" in n:
            seen[n["backendDOMNodeId"]] = seen.get(n["backendDOMNodeId"], 0) + 1
    return sorted(b for b, count in seen.items() if count == 1)


async def _both(
    tree: list[Node],
    known: Known,
    elements: list[int],
    own: list[int],
    relisted: list[tuple[int, list[int]]],
) -> tuple[Any, Any, FakeAX, FakeAX]:
    args = (
        [{"backendNodeId": b} for b in elements],
        [{"backendNodeId": b} for b in own],
        [({"backendNodeId": b}, [{"backendNodeId": a} for a in added]) for b, added in relisted],
    )
    alone, shared = FakeAX(tree), FakeAX(tree)
    each = await read_changed(alone.send, *args)
    once = await read_changed(shared.send, *args, known)
    return each, once, alone, shared


@pytest.mark.parametrize("name", sorted(CASES))
async def test_elements_knowing_the_last_read_get_the_ancestors_each_would_read(name: str) -> None:
    rng = random.Random(name)
    after = CASES[name]["after"]
    backends = _element_backends(after)
    fewer = 0
    for known_from in ("before", "after"):
        known = _known(CASES[name][known_from])
        for _ in range(60):
            picked = rng.sample(backends, rng.randint(2, 6))
            cut = rng.randint(0, len(picked))
            each, once, alone, shared = await _both(after, known, picked[:cut], picked[cut:], [])
            assert once == each
            assert shared.built <= alone.built + 2 * len(picked)  # at worst a second round
            fewer += shared.built < alone.built
    assert fewer > 60, "shared ancestors are read once"


async def test_a_relisted_element_and_its_gained_children_read_as_each_would() -> None:
    after = CASES["rows_rerendered"]["after"]
    by_id = {n["nodeId"]: n for n in after}
    parent = next(n for n in after if len(n.get("childIds", ())) >= 3 and "backendDOMNodeId" in n)
    children = [by_id[c] for c in parent["childIds"] if "backendDOMNodeId" in by_id.get(c, {})]
    other = next(b for b in _element_backends(after) if b != parent["backendDOMNodeId"])
    each, once, alone, shared = await _both(
        after,
        _known(after),
        [other],
        [],
        [(parent["backendDOMNodeId"], [c["backendDOMNodeId"] for c in children[:2]])],
    )
    assert once == each and once[2][0][1] and shared.built <= alone.built
    via_relisted = await read_relisted(
        FakeAX(after).send,
        [({"backendNodeId": parent["backendDOMNodeId"]}, [{"backendNodeId": children[0]["backendDOMNodeId"]}])],
        [{"backendNodeId": other}],
        None,
        _known(after),
    )
    assert via_relisted[1][0].ancestors[0]["nodeId"] == parent["nodeId"]


def _moved(nodes: list[Node], node_id: str, to: str) -> list[Node]:
    """`nodes` with `node_id` hung under `to` (last), as a tree read after the page moved it."""
    out = copy.deepcopy(nodes)
    by_id = {n["nodeId"]: n for n in out}
    node = by_id[node_id]
    by_id[node["parentId"]]["childIds"].remove(node_id)
    by_id[to]["childIds"].append(node_id)
    node["parentId"] = to
    return out


async def test_an_element_that_moved_since_the_last_read_reads_its_own_chain_after() -> None:
    before = CASES["heading_from_contents"]["after"]
    by_id = {n["nodeId"]: n for n in before}
    backends = _element_backends(before)
    deep = max(backends, key=lambda b: len(_chain_of(before, b)))
    mover = next(
        n for n in before if n.get("backendDOMNodeId") in backends and n["nodeId"] not in _ids_of(before, deep)
    )
    root = next(n for n in before if not n.get("parentId"))
    now = _moved(before, mover["nodeId"], root["nodeId"])  # no longer where the last read had it
    assert _chain_of(now, mover["backendDOMNodeId"]) != _chain_of(before, mover["backendDOMNodeId"])
    each, once, _alone, shared = await _both(now, _known(before), [deep], [mover["backendDOMNodeId"]], [])
    assert once == each
    assert by_id[mover["nodeId"]]["parentId"] != root["nodeId"]
    assert shared.calls.count(RELEASED) >= 1


async def test_an_element_its_parent_no_longer_lists_reads_its_own_chain() -> None:
    tree = copy.deepcopy(CASES["text_and_hidden"]["after"])
    backends = _element_backends(tree)
    deep = max(backends, key=lambda b: len(_chain_of(tree, b)))
    hidden = next(
        n
        for n in tree
        if n.get("backendDOMNodeId") in backends
        and n.get("parentId")
        and n["nodeId"] not in _ids_of(tree, deep)
        and n["backendDOMNodeId"] != deep
    )
    {n["nodeId"]: n for n in tree}[hidden["parentId"]]["childIds"].remove(hidden["nodeId"])  # Chromium's hidden form
    each, once, _alone, shared = await _both(tree, _known(tree), [deep], [hidden["backendDOMNodeId"]], [])
    assert once == each
    assert shared.calls[-1] == RELEASED  # the second round: its own chain, as a whole read gives it


async def test_an_ancestor_gone_since_the_last_read_is_no_error_and_the_chain_is_read_after() -> None:
    before = CASES["heading_from_contents"]["after"]
    backends = _element_backends(before)
    known = _known(before)
    pairs = [(a, b) for a in backends for b in backends if a != b]
    for a, b in pairs:
        _readers, extras = chain_plan([{"backendNodeId": a}, {"backendNodeId": b}], known)
        if extras:
            break
    else:
        pytest.fail("no two elements of the recording share ancestors some levels up")
    gone = next(n for n in before if n.get("backendDOMNodeId") == extras[0])
    tree = _unwrapped(before, gone["nodeId"])  # the page took that element out, keeping what it held
    shared, alone = FakeAX(tree), FakeAX(tree)
    elements = [{"backendNodeId": a}, {"backendNodeId": b}]
    expected = await read_changed(alone.send, elements, [], [])
    assert await read_changed(shared.send, elements, [], [], known) == expected
    assert gone["nodeId"] not in {n["nodeId"] for s in expected[0] for n in s.ancestors}


def _unwrapped(nodes: list[Node], node_id: str) -> list[Node]:
    """`nodes` without `node_id`, its children hung in its place."""
    out = [copy.deepcopy(n) for n in nodes if n["nodeId"] != node_id]
    by_id = {n["nodeId"]: n for n in out}
    gone = next(n for n in nodes if n["nodeId"] == node_id)
    parent = by_id[gone["parentId"]]
    at = parent["childIds"].index(node_id)
    parent["childIds"][at : at + 1] = list(gone.get("childIds", ()))
    for child in gone.get("childIds", ()):
        by_id[child]["parentId"] = parent["nodeId"]
    return out


async def test_an_element_gone_is_still_an_error() -> None:
    tree = CASES["heading_from_contents"]["after"]
    backends = _element_backends(tree)
    with pytest.raises(ProtocolError):
        elements = [{"backendNodeId": backends[0]}, {"backendNodeId": -5}]
        await read_subtrees(FakeAX(tree).send, elements, None, _known(tree))


def test_the_plan_reads_one_chain_for_siblings_and_each_chain_without_the_last_read() -> None:
    tree = CASES["rows_rerendered"]["after"]
    by_id = {n["nodeId"]: n for n in tree}
    parent = next(
        n
        for n in tree
        if sum(1 for c in n.get("childIds", ()) if "backendDOMNodeId" in by_id.get(c, {})) >= 3
        and "backendDOMNodeId" in n
    )
    kids = [{"backendNodeId": by_id[c]["backendDOMNodeId"]} for c in parent["childIds"] if c in by_id][:3]
    readers, extras = chain_plan(kids, _known(tree))
    assert readers.count(True) == 1 and extras == []  # siblings: their parent is on the one chain read
    assert chain_plan(kids, None) == ([True] * 3, [])
    assert chain_plan(kids[:1], _known(tree)) == ([True], [])


def _chain_of(nodes: list[Node], backend: int) -> list[str]:
    by_id = {n["nodeId"]: n for n in nodes}
    node = next(n for n in nodes if n.get("backendDOMNodeId") == backend)
    out = []
    while node.get("parentId"):
        out.append(node["parentId"])
        node = by_id[node["parentId"]]
    return out


def _ids_of(nodes: list[Node], backend: int) -> set[str]:
    """The ids on the chain of `backend`'s node and below it."""
    by_id = {n["nodeId"]: n for n in nodes}
    node = next(n for n in nodes if n.get("backendDOMNodeId") == backend)
    return set(_chain_of(nodes, backend)) | subtree_ids(node, by_id)
