"""What of the text layout an incremental read keeps, and when it takes a `DOMSnapshot` again
(`cdp_bridge.layout.patch_text_layout`), on recorded pages and a fake browser."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cdp_bridge.layout import patch_text_layout, running_text, wanted

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
