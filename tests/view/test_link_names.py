"""A link's text in the view: its contents, or its author-given name when that says more."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webmcp.view.build import BlockIds, FrameNodes, build_view
from webmcp.view.nodes import named_by_author


def _name(value: str, used: str | None) -> dict[str, Any]:
    """A name as Chromium 156 reports it: the sources tried, the one used with a value (None: contents)."""
    sources: list[dict[str, Any]] = [{"type": "relatedElement", "attribute": "aria-labelledby"}]
    if used == "aria-label":
        sources.append(
            {"type": "attribute", "attribute": "aria-label", "value": {"type": "computedString", "value": value}}
        )
        sources.append({"type": "contents", "value": {"type": "computedString", "value": "x"}, "superseded": True})
    else:
        sources.append({"type": "attribute", "attribute": "aria-label"})
        sources.append({"type": "contents", "value": {"type": "computedString", "value": value}})
    return {"type": "computedString", "value": value, "sources": sources}


def _page(name: dict[str, Any], *texts: str) -> list[FrameNodes]:
    link_children = [str(10 + i) for i in range(len(texts))]
    nodes: list[dict[str, Any]] = [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Shop"}, "childIds": ["2"]},
        {"nodeId": "2", "parentId": "1", "role": {"value": "paragraph"}, "childIds": ["3"], "backendDOMNodeId": 2},
        {
            "nodeId": "3",
            "parentId": "2",
            "role": {"value": "link"},
            "name": name,
            "childIds": link_children,
            "backendDOMNodeId": 3,
        },
    ]
    for node_id, text in zip(link_children, texts, strict=True):
        nodes.append({"nodeId": node_id, "parentId": "3", "role": {"value": "StaticText"}, "name": {"value": text}})
    return [FrameNodes("1:main", nodes, None, frame_id="main")]


def _shown(frames: list[FrameNodes]) -> str:
    return json.dumps(build_view(frames, BlockIds()).full_blocks, ensure_ascii=False)


def test_a_badge_link_reads_as_its_author_given_name() -> None:
    shown = _shown(_page(_name("Cart, 0 items", "aria-label"), "0"))
    assert "Cart, 0 items" in shown


@pytest.mark.parametrize(
    ("name", "texts", "expected"),
    [
        # The contents say what the name does not (a price): the contents stay.
        (_name("Slate Trail shoe", "aria-label"), ("Slate Trail shoe $89",), "Slate Trail shoe $89"),
        # A name from the contents: the contents, as always.
        (_name("Read more", None), ("Read more",), "Read more"),
    ],
)
def test_a_link_keeps_its_text_when_the_name_does_not_hold_it(
    name: dict[str, Any], texts: tuple[str, ...], expected: str
) -> None:
    assert expected in _shown(_page(name, *texts))


def test_only_the_source_used_counts() -> None:
    assert named_by_author({"name": _name("Cart, 0 items", "aria-label")})
    assert not named_by_author({"name": _name("Read more", None)})
    assert not named_by_author({"name": {"value": "Cart"}}), "a recording without sources: contents, as before"
