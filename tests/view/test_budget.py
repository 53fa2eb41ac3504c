"""What a window shows when its page is past the block budget: what comes first, and what asks for attention."""

from __future__ import annotations

from typing import Any

from webmcp.view.build import BlockIds, FrameNodes, Limits, build_view

LIMITS = Limits(budget_chars=400, attention_chars=300)


class _Page:
    """AX nodes of one page, built top-down: a root and its children, in reading order."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = [
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Shop"}, "childIds": []}
        ]

    def add(self, role: str, parent: str = "1", name: str = "", **props: Any) -> str:
        node_id = str(len(self.nodes) + 1)
        node: dict[str, Any] = {
            "nodeId": node_id,
            "parentId": parent,
            "role": {"value": role},
            "childIds": [],
            "backendDOMNodeId": 100 + len(self.nodes),
        }
        if name:
            node["name"] = {"value": name}
        if props:
            node["properties"] = [{"name": k, "value": {"value": v}} for k, v in props.items()]
        self.nodes.append(node)
        next(n for n in self.nodes if n["nodeId"] == parent)["childIds"].append(node_id)
        return node_id

    def paragraph(self, text: str, parent: str = "1") -> None:
        self.add("StaticText", self.add("paragraph", parent), text)

    def blocks(self) -> list[dict[str, Any]]:
        return build_view([FrameNodes("1:main", self.nodes, None, frame_id="main")], BlockIds(), limits=LIMITS).blocks


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"] for b in blocks]


def _cards(page: _Page, n: int) -> None:
    for i in range(n):
        page.paragraph(f"Card {i}: a long description of the product that takes up room in the window.")


def test_after_a_block_that_does_not_fit_no_later_ordinary_block_is_shown() -> None:
    page = _Page()
    _cards(page, 4)
    page.paragraph("A very long paragraph. " * 20)  # past the budget by itself
    page.paragraph("Packs")  # small enough to fit, but it belongs after what was left out
    texts = _texts(page.blocks())
    assert "Packs" not in texts
    assert texts[-1].endswith("more blocks are not shown. The window's read_content tool returns everything.")
    card = "Card {}: a long description of the product that takes up room in the window."
    assert len(texts) > 1 and texts[:-1] == [card.format(i) for i in range(len(texts) - 1)]


def test_a_notice_after_the_budget_is_still_shown() -> None:
    page = _Page()
    _cards(page, 8)
    page.add("StaticText", page.add("alert"), "Your session expires in 2 minutes.")
    blocks = page.blocks()
    notices = [b for b in blocks if b["type"] == "notice"]
    assert notices[0]["text"] == "Your session expires in 2 minutes."
    assert "more blocks are not shown" in notices[-1]["text"]


def test_a_non_modal_dialog_after_the_budget_is_still_shown() -> None:
    page = _Page()
    _cards(page, 8)
    banner = page.add("dialog", name="Cookie preferences")
    page.paragraph("We use cookies to remember your cart.", banner)
    page.add("button", banner, "Accept all")
    texts = " ".join(_texts([b for b in page.blocks() if "text" in b]))
    assert "We use cookies to remember your cart." in texts
    assert "Accept all" in texts


def test_what_asks_for_attention_past_the_budget_is_bounded_too() -> None:
    page = _Page()
    _cards(page, 8)
    for i in range(40):
        page.add("StaticText", page.add("alert"), f"Alert number {i} from a page that floods the window.")
    blocks = page.blocks()
    shown_alerts = [b for b in blocks if b["type"] == "notice" and b["text"].startswith("Alert")]
    assert 0 < len(shown_alerts) < 40
    size = sum(len(str(b)) for b in blocks[:-1])
    assert size <= LIMITS.budget_chars + LIMITS.attention_chars + 200
