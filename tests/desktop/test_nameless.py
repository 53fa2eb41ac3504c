"""The hook that names nameless icon controls (desktop/nameless.py): what it asks the page, and when."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from cdp_bridge.ax import FrameNodes, PageNodes
from cdp_bridge.ax_patch import Spliced
from cdp_bridge.errors import CDPError, ProtocolError
from webmcp.desktop.nameless import name_nameless
from webmcp.view.nodes import name_of, states_of

pytestmark = pytest.mark.anyio


class _Session:
    """Answers `DOM.describeNode` from `classes` (backend id → class attribute) and `DOM.getBoxModel`
    from `boxes` (backend id → (width, height); 16 × 16 when not given, None: no box, as Chromium
    refuses it); records what was asked."""

    def __init__(
        self, classes: dict[int, str], fail: bool = False, boxes: dict[int, tuple[int, int] | None] | None = None
    ) -> None:
        self.classes = classes
        self.fail = fail
        self.boxes = boxes or {}
        self.asked: list[int] = []

    async def send_all(self, commands: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any] | CDPError]:
        if self.fail:
            raise ProtocolError("DOM.describeNode", -32000, "No node with given id found")
        out: list[dict[str, Any] | CDPError] = []
        for method, params in commands:
            backend = params["backendNodeId"]
            if method == "DOM.getBoxModel":
                size = self.boxes.get(backend, (16, 16))
                if size is None:
                    out.append(ProtocolError(method, -32000, "Could not compute box model."))
                else:
                    out.append({"model": {"width": size[0], "height": size[1]}})
                continue
            assert method == "DOM.describeNode" and params["depth"] == 1
            self.asked.append(backend)
            out.append({"node": {"attributes": ["class", self.classes[backend]]}})
        return out


def _node(node_id: str, role: str, backend: int, parent: str = "1", **extra: Any) -> dict[str, Any]:
    return {"nodeId": node_id, "parentId": parent, "role": {"value": role}, "backendDOMNodeId": backend, **extra}


def _page() -> list[dict[str, Any]]:
    return [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "childIds": ["2", "3", "4", "5"], "backendDOMNodeId": 1},
        _node("2", "button", 20),
        _node("3", "button", 30, name={"value": "Send"}),
        _node("4", "generic", 40),
        _node("5", "button", 50, description={"value": "Archive this"}),
    ]


async def test_a_whole_read_asks_about_nameless_icons_alone_and_names_them_as_guesses() -> None:
    nodes = _page()
    session = _Session({20: "icon reply", 40: "fa fa-star"})
    await name_nameless(session, PageNodes(frames=[FrameNodes("main", nodes)]), whole=True)  # type: ignore[arg-type]
    assert sorted(session.asked) == [20, 40], "a named button is not asked about, nor one with a tooltip"
    assert [name_of(n) for n in nodes[1:]] == ["reply", "Send", "star", "Archive this"]
    assert states_of(nodes[1]) == ("guessed",) and states_of(nodes[2]) == ()


async def test_a_spliced_read_asks_about_the_changed_nodes_only() -> None:
    before = _page()
    added = _node("6", "button", 60)
    after = [*before, added]
    spliced = Spliced(before, after, True, {n["nodeId"]: n for n in after}, {"6"}, set())
    frame = FrameNodes("main", after, spliced=spliced)
    session = _Session({20: "icon reply", 40: "star", 60: "btn-trash"})
    await name_nameless(session, PageNodes(frames=[frame]), whole=False)  # type: ignore[arg-type]
    assert session.asked == [60] and name_of(added) == "trash"
    assert name_of(before[1]) == "", "a node kept from the last read is that read's to name"


async def test_a_page_that_cannot_answer_leaves_them_nameless() -> None:
    nodes = _page()
    await name_nameless(_Session({}, fail=True), PageNodes(frames=[FrameNodes("main", nodes)]), whole=True)  # type: ignore[arg-type]
    assert name_of(nodes[1]) == "" and name_of(nodes[4]) == "Archive this"


async def test_what_a_person_cannot_see_or_is_no_icon_stays_nameless() -> None:
    # Article pages hold dozens of empty clickable boxes: ad slots that stayed empty (0 px high),
    # focusable spans of no width, blank 728 x 90 banners, masks over the page.
    nodes = [
        {
            "nodeId": "1",
            "role": {"value": "RootWebArea"},
            "childIds": [str(i) for i in range(2, 8)],
            "backendDOMNodeId": 1,
        },
        _node("2", "generic", 20),
        _node("3", "generic", 30),
        _node("4", "generic", 40),
        _node("5", "generic", 50),
        _node("6", "link", 60),
        _node("7", "button", 70),
    ]
    classes = {20: "ad_deferrable", 30: "city", 40: "adslot", 50: "icon star", 60: "article-photo", 70: "icon trash"}
    boxes = {20: (728, 0), 30: None, 40: (728, 90), 50: (16, 16), 60: (640, 360), 70: (3, 20)}
    session = _Session(classes, boxes=boxes)
    await name_nameless(session, PageNodes(frames=[FrameNodes("main", nodes)]), whole=True)  # type: ignore[arg-type]
    assert [name_of(n) for n in nodes[1:]] == ["", "", "", "star", "article photo", ""]
