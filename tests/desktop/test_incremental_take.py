"""What an incremental read makes of the observer's take (`observer_take.parse_take`, `layout_touched`), on
answers of the shape Chromium gives (`Runtime.callFunctionOn` with deep serialization) and on the
recorded trees of `tests/cdp/data/ax_patch.json.gz`."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cdp_bridge.ax import FrameNodes, PageNodes
from cdp_bridge.ax_patch import Subtree, full_form
from cdp_bridge.layout import running_text
from webmcp.desktop import live_view, observer_take
from webmcp.desktop.observer_take import parse_take

CASES = json.loads(gzip.decompress((Path(__file__).parents[1] / "cdp" / "data" / "ax_patch.json.gz").read_bytes()))


def _meta(**counts: int) -> dict[str, Any]:
    full = dict.fromkeys(observer_take.TAKEN, 0) | counts
    return {"type": "string", "value": json.dumps({**full, "values": []})}


def _node(backend: int, reference: int) -> dict[str, Any]:
    return {"type": "node", "value": {"nodeType": 1, "backendNodeId": backend}, "weakLocalObjectReference": reference}


def _touched(old: list[dict[str, Any]], change: Any) -> set[int] | None:
    """`layout_touched`, which must say the same with the last read's index of `old` as without."""
    plain = observer_take.layout_touched(old, change)
    known = running_text([("F", old)]).frames
    assert known is not None
    assert observer_take.layout_touched(old, change, known["F"]) == plain
    return plain


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
    taken = parse_take(answer)
    assert taken is not None
    assert taken[1] == [41, 42, 41]


def test_a_take_that_does_not_add_up_or_is_not_elements_falls_back() -> None:
    assert parse_take({"type": "string", "value": "all"}) is None
    assert parse_take({"type": "array", "value": [_meta(roots=2), _node(41, 1)]}) is None
    assert parse_take({"type": "array", "value": [_meta(roots=1), {"type": "string", "value": "x"}]}) is None
    unknown = {"type": "node", "weakLocalObjectReference": 7}
    assert parse_take({"type": "array", "value": [_meta(roots=1), unknown]}) is None
    assert parse_take({"type": "array", "value": [{"type": "string", "value": "{}"}, _node(41, 1)]}) is None


def _subtrees(case: dict[str, Any]) -> list[Subtree]:
    return [Subtree(s["ancestors"], [full_form(n) for n in s["nodes"]]) for s in case["subtrees"]]


def _change(subtrees: list[Subtree], **groups: set[int]) -> observer_take.Changes:
    sets = {name: groups.get(name, set()) for name in ("beside", "deep", "relaid", "within")}
    return observer_take.Changes(subtrees, set(), set(), set(), set(), **sets)


def _backend(node: dict[str, Any]) -> int:
    return int(node["backendDOMNodeId"])


def _below(node: dict[str, Any], by_id: dict[str, Any]) -> set[int]:
    """The backend ids of what `node` holds (not itself)."""
    found: set[int] = set()
    stack = [by_id[c] for c in node.get("childIds", ()) if c in by_id]
    while stack:
        current = stack.pop()
        if "backendDOMNodeId" in current:
            found.add(_backend(current))
        stack.extend(by_id[c] for c in current.get("childIds", ()) if c in by_id)
    return found


def test_what_a_changed_element_holds_is_touched_and_itself_only_when_restyled() -> None:
    # The heading got a span appended: what it holds was laid out again; the heading's own box
    # moved only if it was restyled too.
    old = CASES["heading_from_contents"]["before"]
    subs = _subtrees(CASES["heading_from_contents"])
    heading = subs[0].nodes[0]
    by_id = {n["nodeId"]: n for n in old}
    fresh = {n["nodeId"]: n for n in subs[0].nodes}
    held = _below(by_id[heading["nodeId"]], by_id) | _below(heading, fresh)
    assert held - _below(by_id[heading["nodeId"]], by_id), "the appended span is new"
    within = _touched(old, _change(subs, within={_backend(heading)}))
    assert within == held
    relaid = _touched(old, _change(subs, relaid={_backend(heading)}))
    assert relaid == held | {_backend(heading)}


def test_an_element_whose_only_change_no_style_rule_reads_touches_no_layout() -> None:
    # Its subtree is read again (its name changed), but neither it nor what it holds is laid out anew.
    old = CASES["heading_from_contents"]["before"]
    assert _touched(old, _change(_subtrees(CASES["heading_from_contents"]))) == set()


def test_a_changed_element_in_neither_read_is_not_known() -> None:
    old = CASES["heading_from_contents"]["before"]
    subs = _subtrees(CASES["heading_from_contents"])
    assert _touched(old, _change(subs, within={987_654_321})) is None
    assert _touched(old, _change(subs, relaid={987_654_321})) is None


def test_a_changed_element_read_only_now_is_touched_with_what_it_holds() -> None:
    # The rows re-rendered: the new row is in the re-read subtree only.
    case = CASES["rows_rerendered"]
    old = case["before"]
    subs = _subtrees(case)
    known = {_backend(n) for n in old if "backendDOMNodeId" in n}
    new = next(n for n in subs[0].nodes if "backendDOMNodeId" in n and _backend(n) not in known and n.get("childIds"))
    fresh = {n["nodeId"]: n for n in subs[0].nodes}
    touched = _touched(old, _change(subs, relaid={_backend(new)}))
    assert touched == _below(new, fresh) | {_backend(new)}


def test_neighbours_are_touched_for_the_layout_and_inline_ones_with_all_they_hold() -> None:
    old = CASES["heading_from_contents"]["before"]
    subs = _subtrees(CASES["heading_from_contents"])
    heading = {_backend(subs[0].nodes[0])}
    plain = _touched(old, _change(subs, relaid=heading))
    assert plain
    by_id = {n["nodeId"]: n for n in old}
    holder = next(
        n
        for n in old
        if "backendDOMNodeId" in n
        and _backend(n) not in plain
        and any("backendDOMNodeId" in by_id[c] for c in n.get("childIds", ()) if c in by_id)
    )
    backend = _backend(holder)
    below = {_backend(by_id[c]) for c in holder["childIds"] if "backendDOMNodeId" in by_id.get(c, {})}
    beside = _touched(old, _change(subs, relaid=heading, beside={backend}))
    assert beside == plain | {backend}
    deep = _touched(old, _change(subs, relaid=heading, deep={backend}))
    assert deep is not None and deep >= plain | {backend} | below
    # An inline neighbour the last read does not have: what it holds is not known.
    assert _touched(old, _change(subs, relaid=heading, deep={987_654_321})) is None


class _TwoFrames:
    """A session of two frames whose observers answer takes from a script: the first frame's with
    what it gives (its secret field 41 and nothing changed), the second's "none" when allowed."""

    def __init__(self) -> None:
        self.takes: list[tuple[int, bool]] = []

    async def send(self, method: str, params: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
        params = params or {}
        if method == "Page.createIsolatedWorld":
            return {"executionContextId": {"F1": 1, "F2": 2}[params["frameId"]]}
        if method != "Runtime.callFunctionOn":
            return {}
        context = params["executionContextId"]
        may_be_none = params["functionDeclaration"] == observer_take.CHANGES_JS[True]
        self.takes.append((context, may_be_none))
        if may_be_none:
            return {"result": {"deepSerializedValue": {"type": "string", "value": "none"}}}
        secret = 41 if context == 1 else 42
        meta = json.loads(_meta(secret=1)["value"]) | {"values": [f"value {secret}"]}
        answer = [{"type": "string", "value": json.dumps(meta)}, _node(secret, 1)]
        return {"result": {"deepSerializedValue": {"type": "array", "value": answer}}}


def _frames() -> list[FrameNodes]:
    nodes = [{"nodeId": "1", "role": {"type": "role", "value": "RootWebArea"}, "childIds": []}]
    return [
        FrameNodes("k1", list(nodes), frame_id="F1"),
        FrameNodes("k2", list(nodes), frame_id="F2", owner_backend_id=7),
    ]


@pytest.mark.anyio
async def test_a_frame_where_nothing_changed_keeps_its_secret_fields_from_its_last_take() -> None:
    session = _TwoFrames()
    old = PageNodes(_frames(), {41, 42}, {"value 41", "value 42"}, display={}, gaps={})
    contexts: dict[str, int] = {}
    facts: dict[str, observer_take.FrameFacts] = {}
    first = await live_view._patch_session(session, old, contexts, facts)  # type: ignore[arg-type]
    assert first is not None and first.secret_ids == {41, 42}
    assert session.takes == [(1, False), (2, False)], "nothing is known of either frame: both take it all"
    assert set(facts) == {"k1", "k2"}
    session.takes.clear()
    # Both frames known now: the second answers "none", and its secret field stands.
    second = await live_view._patch_session(session, first, contexts, facts)  # type: ignore[arg-type]
    assert session.takes == [(1, True), (2, True)]
    assert second is first, "nothing changed anywhere: the last read stands"
    facts.pop("k1")
    session.takes.clear()
    third = await live_view._patch_session(session, first, contexts, facts)  # type: ignore[arg-type]
    assert session.takes == [(1, False), (2, True)]
    assert third is not None and third.secret_ids == {41, 42} and third.secret_values == {"value 41", "value 42"}


def _numbered_answer(meta: dict[str, Any], *sent: int) -> dict[str, Any]:
    counts = dict.fromkeys(observer_take.TAKEN, 0) | meta.pop("counts")
    head = {"type": "string", "value": json.dumps({**counts, "values": [], **meta})}
    return {"type": "array", "value": [head, *(_node(b, 100 + b) for b in sent)]}


def test_a_node_serialized_once_is_given_by_its_number_after() -> None:
    numbers: list[int] = []
    # First take: two roots and a secret field, all new (numbered 0, 1, 2); the secret field is root 0 too.
    meta = {"counts": {"roots": 2, "secret": 1}, "refs": [-1, -1, 0], "first": 0, "fresh": False}
    first = _numbered_answer(meta, 41, 42)
    taken = parse_take(first, numbers)
    assert taken is not None and taken[1] == [41, 42, 41]
    assert numbers == [41, 42]
    # Second take: root 42 by its number, a new one (numbered 2), and that one again.
    meta = {"counts": {"roots": 2, "within": 1}, "refs": [1, -1, 2], "first": 2, "fresh": False}
    second = _numbered_answer(meta, 43)
    taken = parse_take(second, numbers)
    assert taken is not None and taken[1] == [42, 43, 43]
    assert numbers == [41, 42, 43]


def test_numbers_that_do_not_add_up_start_again() -> None:
    numbers = [41, 42]
    # The page numbered from 3: an answer the bridge never read came between. Nothing is guessed.
    skipped = _numbered_answer({"counts": {"roots": 1}, "refs": [-1], "first": 3, "fresh": False}, 44)
    assert parse_take(skipped, numbers) is None and numbers == []
    # A number the bridge does not hold.
    numbers[:] = [41]
    unknown = _numbered_answer({"counts": {"roots": 1}, "refs": [5], "first": 1, "fresh": False})
    assert parse_take(unknown, numbers) is None and numbers == []
    # More serialized nodes than refs say.
    numbers[:] = [41]
    extra = _numbered_answer({"counts": {"roots": 1}, "refs": [0], "first": 1, "fresh": False}, 44)
    assert parse_take(extra, numbers) is None and numbers == []
    # The page started again (it held another count than the bridge said): the bridge does too.
    numbers[:] = [41, 42, 43]
    fresh = _numbered_answer({"counts": {"roots": 1}, "refs": [-1], "first": 0, "fresh": True}, 50)
    taken = parse_take(fresh, numbers)
    assert taken is not None and taken[1] == [50] and numbers == [50]


@pytest.mark.parametrize("name", ["SECRET_SELECTOR", "REQUIRED_SELECTOR"])
def test_the_selectors_the_take_matches_controls_against_name_form_controls_only(name: str) -> None:
    # changes.js matches `input, textarea, select` against them instead of querying the document
    # with them: a selector naming any other element would lose it there.
    selector = getattr(observer_take, name)
    parts = [part.strip() for part in selector.split(",")]
    assert parts and all(re.match(r"(input|textarea|select)\[[^,()]*\]$", part) for part in parts), parts
