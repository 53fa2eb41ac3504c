"""What of the text layout an incremental read keeps, and when it takes a `DOMSnapshot` again
(`cdp_bridge.layout.patch_text_layout`), on recorded pages and a fake browser."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest

from cdp_bridge import layout
from cdp_bridge.ax_patch import Subtree, full_form, splice, splice_index
from cdp_bridge.layout import LaidOut, laid_out, patch_text_layout, running_text, wanted

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parents[1] / "view" / "data" / "ax"


def _frame(name: str) -> dict[str, Any]:
    return json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))["frames"][0]


class _Browser:
    """Answers `DOMSnapshot.captureSnapshot` with an empty document, and counts what it is sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(method)
        return {"documents": [], "strings": []}


def _kept(frame: dict[str, Any]) -> tuple[dict[int, str], dict[int, tuple[str, str]]]:
    return {int(k): v for k, v in frame["display"].items()}, {int(k): tuple(v) for k, v in frame["gaps"].items()}


def test_running_text_wants_what_wanted_says() -> None:
    frame = _frame("gazette_article")
    frames = [("F", frame["nodes"])]
    running = running_text(frames)
    assert running.wanted == wanted(frames)
    assert running.below or running.beside, "the article has links and spans in running text"
    assert {int(k) for k in frame["display"]} <= running.wanted


async def test_nothing_in_running_text_touched_keeps_the_layout_without_a_snapshot() -> None:
    frame = _frame("gazette_article")
    frames = [("F", frame["nodes"])]
    running = running_text(frames)
    display, gaps = _kept(frame)
    browser = _Browser()
    outside = {int(n["backendDOMNodeId"]) for n in frame["nodes"] if "backendDOMNodeId" in n} - running.wanted
    assert outside
    got = await patch_text_layout(browser.send, frames, (display, gaps), running.wanted, outside, running)
    assert browser.sent == []
    assert got == (display, gaps)


async def test_a_touched_node_in_running_text_or_a_new_one_takes_a_snapshot() -> None:
    frame = _frame("gazette_article")
    frames = [("F", frame["nodes"])]
    running = running_text(frames)
    display, gaps = _kept(frame)
    browser = _Browser()
    one = next(iter(sorted(running.wanted)))
    await patch_text_layout(browser.send, frames, (display, gaps), running.wanted, {one}, running)
    assert browser.sent == ["DOMSnapshot.captureSnapshot"]
    await patch_text_layout(browser.send, frames, (display, gaps), running.wanted - {one}, set(), running)
    assert browser.sent == ["DOMSnapshot.captureSnapshot"] * 2


async def test_told_nodes_take_the_told_layout_and_new_ones_need_no_snapshot() -> None:
    frame = _frame("gazette_article")
    frames = [("F", frame["nodes"])]
    running = running_text(frames)
    display, gaps = _kept(frame)
    browser = _Browser()
    one, two = sorted(running.wanted)[:2]
    told = LaidOut({one: "flex"}, {one: ("grid", "")}, {one, two})
    # `two` was not in running text before and is touched no more: told, it needs no snapshot.
    got = await patch_text_layout(browser.send, frames, (display, gaps), running.wanted - {two}, set(), running, told)
    assert browser.sent == []
    assert got[0] is not None and got[1] is not None
    assert got[0][one] == "flex" and got[1][one] == ("grid", "")
    assert two not in got[0] and two not in got[1], "told without a box: none, whatever was kept"
    assert {b: v for b, v in got[0].items() if b not in told.covered} == {
        b: v for b, v in display.items() if b not in told.covered
    }
    # A told node that something else touched too is read by a snapshot.
    await patch_text_layout(browser.send, frames, (display, gaps), running.wanted, {one}, running, told)
    assert browser.sent == ["DOMSnapshot.captureSnapshot"]


def test_a_tree_the_page_told_lays_out_as_a_snapshot_would() -> None:
    # <div grid>(10) <a flex>(11) <a flex added>(12) [<p block>(13) <span block>(14) "Title" </span>
    # " by " <b inline>(17)]: text nodes have no backend id (their text would come with them).
    tree = [
        [-1, 1, "grid", None],
        [0, 1, "flex", None],
        [0, 1, "flex", None],
        [2, 1, "block", None],
        [3, 1, "block", None],
        [4, 3, None, "Title"],
        [3, 3, None, " by "],
        [3, 1, "inline", None],
    ]
    told = laid_out(tree, [10, 11, 12, 13, 14, 17], added=[12])
    assert told is not None
    assert told.covered == {11, 12, 13, 14, 17}
    assert told.kept == {11}
    assert told.display == {11: "flex", 12: "flex", 13: "block", 14: "block", 17: "inline"}
    assert told.gaps[11] == ("grid", "flex") and told.gaps[12] == ("flex", "grid")
    assert told.gaps[14] == ("block", " "), "the text after it begins with white space"
    assert told.gaps[17] == (" ", "block")
    assert told.gaps[13] == ("flex", "flex"), "the edges of the flex card it is alone in"


@pytest.mark.parametrize(
    "tree",
    [
        [],
        [[0, 1, "block", None]],
        [[-1, 1, "block", None], [-1, 1, "block", None]],
        [[-1, 1, "block", None], [1, 1, "block", None]],
        [[-1, 1, "block", None], [0, 8, None, None]],
        [[-1, 1, "block", None], [0, 1, 7, None]],
        [[-1, 1, "block", None], [0, 1, "block"]],
        [[-1, 1, "block", None], [True, 1, "block", None]],
        [[-1, 1, "block", None], [0, 3, None, "x"], [1, 1, "block", None]],
        "tree",
    ],
    ids=[
        "empty", "no-root", "two-roots", "parent-later", "node-type", "display", "short", "bool-parent",
        "inside-text", "string",
    ],
)  # fmt: skip
def test_a_tree_that_is_not_one_tells_nothing(tree: Any) -> None:
    elements = (
        [i for i, e in enumerate(tree) if isinstance(e, list) and e[1:2] == [1]] if isinstance(tree, list) else []
    )
    assert laid_out(tree, elements) is None


def test_a_tree_with_more_or_fewer_ids_than_elements_tells_nothing() -> None:
    tree = [[-1, 1, "block", None], [0, 1, "block", None], [1, 3, None, "x"]]
    assert laid_out(tree, [1, 2]) is not None
    assert laid_out(tree, [1]) is None and laid_out(tree, [1, 2, 3]) is None


def _chain(depths: int, top_role: str = "paragraph") -> list[dict[str, Any]]:
    """A `top_role` node with a chain of `depths` generic wrappers below it, each a span (backend id = its depth)."""
    nodes = [{"nodeId": "0", "role": {"value": top_role}, "childIds": ["1"], "backendDOMNodeId": 1000}]
    for depth in range(1, depths + 1):
        node = {
            "nodeId": str(depth),
            "parentId": str(depth - 1),
            "role": {"value": "generic"},
            "backendDOMNodeId": depth,
        }
        if depth < depths:
            node["childIds"] = [str(depth + 1)]
        nodes.append(node)
    return nodes


def test_a_wrapper_up_to_eight_levels_below_a_paragraph_is_in_running_text() -> None:
    nodes = _chain(12)
    running = running_text([("F", nodes)])
    # The paragraph is its parent's parent... for wrappers 1 to 8 (eight levels up at most), not 9 to 12.
    assert running.below == set(range(1, 9))
    # The same whichever node of the chain is met first (the distances climbed are remembered).
    assert running_text([("F", list(reversed(nodes)))]).below == set(range(1, 9))
    assert running_text([("F", [nodes[0], *nodes[12:6:-1], *nodes[1:7]])]).below == set(range(1, 9))


def test_a_wrapper_below_no_paragraph_or_under_a_missing_parent_is_not() -> None:
    assert running_text([("F", _chain(5, top_role="main"))]).below == set()
    orphaned = _chain(5)[2:]  # the paragraph and the first wrapper were not read
    assert running_text([("F", orphaned)]).below == set()


# --- running text kept from the last read (`running_text(frames, kept)`) ---------------------------

_ROLES = ["generic", "none", "link", "paragraph", "StaticText", "listitem", "main", "heading"]


def _whole(nodes: list[dict[str, Any]]) -> tuple[set[int], set[int], set[int]]:
    return layout._in_running_text([("F", nodes)])


def _edit(rng: random.Random, nodes: list[dict[str, Any]], serial: int) -> list[dict[str, Any]]:
    """`nodes` after one edit that keeps them one tree, each changed node a new object (as a splice gives)."""
    by_id = {n["nodeId"]: n for n in nodes}
    node = rng.choice(nodes)
    kind = rng.randrange(5)
    if kind == 0:  # a node's role changes (a wrapper becomes a paragraph, a link, text...)
        by_id[node["nodeId"]] = {**node, "role": {"type": "role", "value": rng.choice(_ROLES)}}
    elif kind == 1:  # a text appears inside it
        text_id = f"t{serial}"
        by_id[node["nodeId"]] = {**node, "childIds": [*node.get("childIds", ()), text_id]}
        by_id[text_id] = {
            "nodeId": text_id,
            "parentId": node["nodeId"],
            "role": {"type": "role", "value": "StaticText"},
        }
    elif kind == 2 and not node.get("childIds") and node.get("parentId") in by_id:  # a leaf goes
        parent = by_id[node["parentId"]]
        by_id[parent["nodeId"]] = {**parent, "childIds": [c for c in parent["childIds"] if c != node["nodeId"]]}
        del by_id[node["nodeId"]]
    elif kind == 3:  # it is ignored now, or no longer
        by_id[node["nodeId"]] = {**node, "ignored": not node.get("ignored")}
    else:  # another element stands for it (a node of the same id, another backend id)
        by_id[node["nodeId"]] = {**node, "backendDOMNodeId": 900_000 + serial}
    return list(by_id.values())


@pytest.mark.parametrize("name", ["gazette_article", "cinema_book", "home", "login"])
def test_running_text_kept_from_the_last_read_is_what_a_walk_of_every_node_finds(name: str) -> None:
    rng = random.Random(name)
    nodes = [dict(n) for n in _frame(name)["nodes"]]
    kept = running_text([("F", nodes)])
    assert (kept.below, kept.beside, kept.links) == _whole(nodes)
    for serial in range(60):
        for _ in range(rng.randrange(1, 4)):
            nodes = _edit(rng, nodes, serial * 10 + _)
        if serial % 2:  # asked for (as an incremental read's layout asks), then kept from read to read
            assert kept.frames is not None
            kept.frames["F"].backends()
        now = running_text([("F", nodes)], kept)
        assert (now.below, now.beside, now.links) == _whole(nodes), serial
        assert now.frames is not None
        by_backend = {int(n["backendDOMNodeId"]): n for n in nodes if "backendDOMNodeId" in n}
        assert now.frames["F"].backends() == by_backend, serial
        kept = now


def test_running_text_kept_walks_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The chain of twelve wrappers below a paragraph, and forty spans beside the first.
    whole = _chain(12)
    whole[0] = {**whole[0], "childIds": ["1", *(f"s{i}" for i in range(40))]}
    whole += [
        {"nodeId": f"s{i}", "parentId": "0", "role": {"value": "generic"}, "backendDOMNodeId": 500 + i}
        for i in range(40)
    ]
    kept = running_text([("F", whole)])
    looked: list[str] = []
    flags = layout._flags
    monkeypatch.setattr(layout, "_flags", lambda node, *a: looked.append(node["nodeId"]) or flags(node, *a))
    monkeypatch.setattr(layout, "_walk_running", None)  # a walk of every node would fail
    # The wrapper four levels below the paragraph becomes a paragraph itself: it and the eight levels below it.
    changed = [{**n, "role": {"value": "paragraph"}} if n["nodeId"] == "4" else n for n in whole]
    now = running_text([("F", changed)], kept)
    assert sorted(looked, key=int) == [str(i) for i in range(4, 13)]
    assert (now.below, now.beside, now.links) == _whole(changed)
    assert now.below == set(range(1, 9)) - {4} | {9, 10, 11, 12} | set(range(500, 540))
    # The same list again: nothing is looked at.
    looked.clear()
    assert running_text([("F", changed)], now).below == now.below and not looked


_PATCHES = json.loads(gzip.decompress((Path(__file__).parent / "data" / "ax_patch.json.gz").read_bytes()))


@pytest.mark.parametrize("name", sorted(_PATCHES))
def test_running_text_kept_across_a_recorded_splice_is_what_a_walk_finds(name: str) -> None:
    case = _PATCHES[name]
    kept = running_text([("F", case["before"])])
    subtrees = [Subtree(s["ancestors"], [full_form(n) for n in s["nodes"]]) for s in case["subtrees"]]
    spliced = splice(case["before"], subtrees)
    assert spliced is not None
    now = running_text([("F", spliced)], kept)
    assert (now.below, now.beside, now.links) == _whole(spliced)
    assert now.frames is not None and now.frames["F"].nodes is spliced
    # Told by the splice what changed (no look at every node), the same.
    assert kept.frames is not None
    told = splice_index(case["before"], subtrees, True, kept.frames["F"].by_id)
    assert told is not None
    by_splice = running_text([("F", told.nodes)], kept, {"F": told})
    assert (by_splice.below, by_splice.beside, by_splice.links) == _whole(told.nodes)
    assert by_splice.frames is not None and by_splice.frames["F"].by_id is told.by_id
