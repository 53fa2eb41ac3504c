"""What an incremental read makes of the observer's take (`live_view._taken`, `_touched`), on
answers of the shape Chromium gives (`Runtime.evaluate` with deep serialization) and on the
recorded trees of `tests/cdp/data/ax_patch.json.gz`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from cdp_bridge.ax_patch import Subtree, full_form
from webmcp.desktop import live_view

CASES = json.loads(gzip.decompress((Path(__file__).parents[1] / "cdp" / "data" / "ax_patch.json.gz").read_bytes()))


def _meta(**counts: int) -> dict[str, Any]:
    full = dict.fromkeys(live_view._TAKEN, 0) | counts
    return {"type": "string", "value": json.dumps({**full, "values": []})}


def _node(backend: int, reference: int) -> dict[str, Any]:
    return {"type": "node", "value": {"nodeType": 1, "backendNodeId": backend}, "weakLocalObjectReference": reference}


def test_an_element_given_twice_is_read_from_its_reference() -> None:
    # The same input is a changed element and a required control: Chromium serializes it once.
    answer = {
        "type": "array",
        "value": [
            _meta(roots=1, required=2),
            _node(41, 1),
            _node(42, 2),
            {"type": "node", "weakLocalObjectReference": 1},
        ],
    }
    taken = live_view._taken(answer)
    assert taken is not None
    assert taken[1] == [41, 42, 41]


def test_a_take_that_does_not_add_up_or_is_not_elements_falls_back() -> None:
    assert live_view._taken({"type": "string", "value": "all"}) is None
    assert live_view._taken({"type": "array", "value": [_meta(roots=2), _node(41, 1)]}) is None
    assert live_view._taken({"type": "array", "value": [_meta(roots=1), {"type": "string", "value": "x"}]}) is None
    unknown = {"type": "node", "weakLocalObjectReference": 7}
    assert live_view._taken({"type": "array", "value": [_meta(roots=1), unknown]}) is None
    assert live_view._taken({"type": "array", "value": [{"type": "string", "value": "{}"}, _node(41, 1)]}) is None


def _subtrees(case: dict[str, Any]) -> list[Subtree]:
    return [Subtree(s["ancestors"], [full_form(n) for n in s["nodes"]]) for s in case["subtrees"]]


def test_neighbours_are_touched_for_the_layout_and_inline_ones_with_all_they_hold() -> None:
    old = CASES["heading_from_contents"]["before"]
    subs = _subtrees(CASES["heading_from_contents"])
    plain = live_view._touched(old, subs, set(), set())
    assert plain
    by_id = {n["nodeId"]: n for n in old}
    holder = next(
        n
        for n in old
        if "backendDOMNodeId" in n
        and int(n["backendDOMNodeId"]) not in plain
        and any("backendDOMNodeId" in by_id[c] for c in n.get("childIds", ()) if c in by_id)
    )
    backend = int(holder["backendDOMNodeId"])
    below = {int(by_id[c]["backendDOMNodeId"]) for c in holder["childIds"] if "backendDOMNodeId" in by_id.get(c, {})}
    beside = live_view._touched(old, subs, {backend}, set())
    assert beside == plain | {backend}
    deep = live_view._touched(old, subs, set(), {backend})
    assert deep is not None and deep >= plain | {backend} | below
    # An inline neighbour the last read does not have: what it holds is not known.
    assert live_view._touched(old, subs, set(), {987_654_321}) is None
    # An element named by a change (its own node read again): its layout did not move.
    named = Subtree(subs[0].ancestors, [], whole=False)
    assert live_view._touched(old, [named], set(), set()) == set()
