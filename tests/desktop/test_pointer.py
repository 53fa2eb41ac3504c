"""Where a trusted click lands (desktop/pointer.py), with CDP answers as Chromium 156 gives them."""

from __future__ import annotations

from typing import Any

import pytest

from cdp_bridge.errors import ProtocolError
from webmcp.desktop.pointer import Aimed, Frame, Missed, aim

pytestmark = pytest.mark.anyio


class FakeSession:
    """Answers the commands `aim` sends; records them."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def send(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        self.sent.append((method, dict(params or {})))
        answer = self.answers.get(method)
        if isinstance(answer, Exception):
            raise answer
        return answer(params) if callable(answer) else (answer if answer is not None else {})


def _page(hit: int, *, quads: list[list[float]] | None = None, scroll: tuple[float, float] = (0, 0)) -> FakeSession:
    return FakeSession(
        {
            "DOM.getContentQuads": {"quads": quads if quads is not None else [[100, 50, 200, 50, 200, 70, 100, 70]]},
            "Page.getLayoutMetrics": {
                "cssLayoutViewport": {"clientWidth": 800, "clientHeight": 600, "pageX": scroll[0], "pageY": scroll[1]}
            },
            "DOM.getNodeForLocation": {"backendNodeId": hit},
        }
    )


async def _judge_target(hit: int) -> str | None:
    return None if hit == 7 else "div#cookie \u201cAccept all\u201d"


async def test_the_centre_of_the_visible_box_is_hit_tested_in_document_coordinates() -> None:
    page = _page(7, scroll=(0, 1200))
    aimed = await aim(Frame(page.send, "F", page.send, False), {"backendNodeId": 7}, _judge_target, 1.0)
    assert aimed == Aimed(150.0, 60.0)
    assert [m for m, _ in page.sent][0] == "DOM.scrollIntoViewIfNeeded"
    hit = next(p for m, p in page.sent if m == "DOM.getNodeForLocation")
    assert (hit["x"], hit["y"]) == (150, 1260), "the viewport point plus the scroll offset"


async def test_a_covered_element_is_missed_with_what_covers_it() -> None:
    page = _page(9)
    missed = await aim(Frame(page.send, "F", page.send, False), {"backendNodeId": 7}, _judge_target, 1.0)
    assert missed == Missed("covered", "div#cookie \u201cAccept all\u201d")
    assert not any(m == "Input.dispatchMouseEvent" for m, _ in page.sent), "nothing is clicked while aiming"


async def test_a_box_outside_the_viewport_or_none_at_all_is_no_box() -> None:
    outside = _page(7, quads=[[900, 50, 950, 50, 950, 70, 900, 70]])
    frame = Frame(outside.send, "F", outside.send, False)
    assert await aim(frame, {"backendNodeId": 7}, _judge_target, 1.0) == Missed("no-box")
    layoutless = _page(7)
    layoutless.answers["DOM.getContentQuads"] = ProtocolError("DOM.getContentQuads", -32000, "No quads")
    frame = Frame(layoutless.send, "F", layoutless.send, False)
    assert await aim(frame, {"backendNodeId": 7}, _judge_target, 1.0) == Missed("no-box")


async def test_the_part_of_a_wrapped_link_that_shows_most_is_aimed_at() -> None:
    # A link wrapped over two lines: a sliver at the end of one, most of it on the next.
    page = _page(7, quads=[[780, 10, 820, 10, 820, 30, 780, 30], [0, 30, 120, 30, 120, 50, 0, 50]])
    aimed = await aim(Frame(page.send, "F", page.send, False), {"backendNodeId": 7}, _judge_target, 1.0)
    assert aimed == Aimed(60.0, 40.0)


async def test_an_out_of_process_frame_is_also_hit_tested_where_the_page_shows_it() -> None:
    frame_session = _page(7)
    page = FakeSession(
        {
            "DOM.getFrameOwner": {"backendNodeId": 40},
            "DOM.getBoxModel": {"model": {"content": [300, 200, 900, 200, 900, 460, 300, 460]}},
            "Page.getLayoutMetrics": {"cssLayoutViewport": {"clientWidth": 1200, "clientHeight": 800}},
            "DOM.getNodeForLocation": {"backendNodeId": 41},
            "DOM.describeNode": {"node": {"localName": "div", "attributes": ["id", "shade"]}},
        }
    )
    frame = Frame(frame_session.send, "OOPIF", page.send, True)
    missed = await aim(frame, {"backendNodeId": 7}, _judge_target, 1.0)
    assert missed == Missed("covered", "div#shade")
    outer = next(p for m, p in page.sent if m == "DOM.getNodeForLocation")
    assert (outer["x"], outer["y"]) == (450, 260), "the frame's point plus its <iframe>'s content box"
    page.answers["DOM.getNodeForLocation"] = {"backendNodeId": 40}
    assert await aim(frame, {"backendNodeId": 7}, _judge_target, 1.0) == Aimed(150.0, 60.0)
