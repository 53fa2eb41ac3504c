"""End to end: an element whose child list alone changed is read again only where it changed (its
node and the children it gained: `observer.js` relisted, `cdp_bridge.ax_relist`), and only when
the children it kept are, for the accessibility tree, as they were; the read gives the nodes and
the view a whole read gives.

Real Chromium, the observer in its isolated world, pages given as `data:` URLs: a board of two
columns of cards, a card moved from one to the other. Without a style rule that looks at where
a card stands, the columns are relisted (two `getAXNodeAndAncestors`, one `queryAXTree`: the
moved card). Where one does (`:first-child`, `~`, a counter), where a kept card changed too, or
where a kept card is named by what changed, the columns are read whole, and a kept card's node
differs from the last read's: relisted, the read would be wrong. (A footer of links keeps the
columns a small part of the page, which is read whole otherwise.)
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from typing import Any

import pytest

from cdp_bridge.connection import Connection
from cdp_bridge.targets import PageTarget
from tests.e2e.test_incremental_layout_e2e import observer_count, reads_one_by_one
from webmcp.desktop import live_view, observer_take

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

_CARD = '<article id="{id}"><div>{id}: 3 pts</div><strong>Task {id}</strong><button>Edit</button></article>'
_BOARD = (
    '<main><section aria-label="To do"><div class="cards" id="todo">{todo}</div></section>'
    '<section aria-label="Done"><div class="cards" id="done">{done}</div></section>'
    '<p id="label">Fix it</p></main><footer>{more}</footer>'
).format(
    more="".join(f'<p><a href="#{i}">Link {i}</a></p>' for i in range(40)),
    todo="".join(_CARD.format(id=f"T-{i}") for i in range(1, 5)),
    done="".join(_CARD.format(id=f"D-{i}") for i in range(1, 3)),
)
_MOVE = "document.querySelector('#done').appendChild(document.querySelector('#T-1'));"
# The columns' shared ancestors are read once: one column reads its chain, the other its node
# and its section's alone (`ax_patch.read_changed`); the moved card its subtree, or, read whole,
# both columns theirs.
_RELISTED = {
    "Accessibility.getAXNodeAndAncestors": 1,
    "Accessibility.getPartialAXTree": 2,
    "Accessibility.queryAXTree": 1,
}
_WHOLE = {"Accessibility.getAXNodeAndAncestors": 1, "Accessibility.getPartialAXTree": 2, "Accessibility.queryAXTree": 2}


def _nodes(read: live_view.PageRead) -> dict[str, dict[str, Any]]:
    """The main frame's nodes by id, without Chromium's InlineTextBox fragments (renewed with each
    layout, never read)."""
    nodes = read.sessions[0][1].frames[0].nodes
    boxes = {n["nodeId"] for n in nodes if n.get("role", {}).get("value") == "InlineTextBox"}
    return {
        n["nodeId"]: {**n, "childIds": [c for c in n.get("childIds", ()) if c not in boxes]}
        for n in nodes
        if n["nodeId"] not in boxes
    }


async def _after(connection: Connection, html: str, change: str) -> tuple[str, Counter[str]]:
    """The text of the view after `change`, read incrementally; asserts it gives the nodes and the
    view a whole read gives, and answers what AX reads it sent."""
    read, whole, sent = await _laid_reads(connection, html, change)
    assert _nodes(read) == _nodes(whole)
    assert asdict(read.view) == asdict(whole.view)
    done = Counter(method for method in sent if method.startswith("Accessibility."))
    return "\n".join(b.get("text", "") for b in asdict(whole.view)["full_blocks"]), done


async def _laid_reads(
    connection: Connection, html: str, change: str
) -> tuple[live_view.PageRead, live_view.PageRead, list[str]]:
    """The page after `change` read incrementally and whole, and what the incremental read sent."""
    read, whole, sent, _probed = (await reads_one_by_one(connection, html, [change]))[0]
    return read, whole, sent


async def test_a_card_moved_between_columns_reads_only_the_columns_nodes_and_the_card(
    connection: Connection,
) -> None:
    text, sent = await _after(connection, _BOARD, _MOVE)
    assert sent == _RELISTED
    assert text.index("Task D-2") < text.index("Task T-1")


@pytest.mark.parametrize(
    ("style", "shown"),
    [
        (".cards > article:first-child::before { content: 'Top: ' }", "Top: T-2"),
        (".cards > article ~ article::before { content: 'Then: ' }", "Then: T-1"),
        (
            ".cards { counter-reset: n } .cards > article::before { counter-increment: n; content: counter(n) ' ' }",
            "1 T-2",
        ),
    ],
    ids=["first-child", "later-sibling", "counter"],
)
async def test_a_card_whose_style_says_where_it_stands_is_read_again(
    connection: Connection, style: str, shown: str
) -> None:
    text, sent = await _after(connection, f"<style>{style}</style>{_BOARD}", _MOVE)
    assert sent == _WHOLE
    assert shown in text.replace("\n", " ")


async def test_inline_cards_are_read_again_with_the_text_between_them(connection: Connection) -> None:
    inline = "<style>.cards > article { display: inline }</style>" + _BOARD.replace("<div>", "<span> ").replace(
        "</div>", "</span>"
    )
    _text, sent = await _after(connection, inline, _MOVE)
    assert sent == _WHOLE


async def test_a_kept_card_that_changed_too_is_read_again(connection: Connection) -> None:
    change = _MOVE + "document.querySelector('#T-3 strong').textContent = 'Task T-3, renamed';"
    text, sent = await _after(connection, _BOARD, change)
    assert sent["Accessibility.queryAXTree"] >= 2
    assert "Task T-3, renamed" in text


async def test_a_kept_card_named_by_what_changed_is_read_again(connection: Connection) -> None:
    named = _BOARD.replace('<article id="T-3">', '<article id="T-3" aria-labelledby="label">')
    change = _MOVE + "document.querySelector('#label').textContent = 'Fix it now';"
    _text, sent = await _after(connection, named, change)
    assert sent["Accessibility.queryAXTree"] >= 2


async def test_a_column_restyled_with_its_cards_is_read_again(connection: Connection) -> None:
    styled = "<style>.compact article div { display: none }</style>" + _BOARD
    change = _MOVE + "document.querySelector('#todo').classList.add('compact');"
    text, sent = await _after(connection, styled, change)
    assert sent["Accessibility.queryAXTree"] >= 2
    assert "T-2: 3 pts" not in text and "D-2: 3 pts" in text


# Cards (links, whose layout is read whenever the layout is) whose parts are blocks by CSS: running
# text, whose line breaks only the layout tells (`cdp_bridge.layout`). The columns are grids of
# flex cards: a card at a column's edge meets the column's box, one between others a card's, so the
# card that becomes a column's first has another side than before.
_LAID_CARD = (
    '<a class="card" id="{id}" href="#{id}"><p><span class="meta">{id} - 3 pts</span><strong>Task {id}</strong>'
    '<span class="who" id="who-{id}">Assigned to Rui</span></p></a>'
)
_LAID_STYLE = "<style>.cards { display: grid } .card { display: flex } .meta, .who { display: block }</style>"


def _cards(card: str, prefix: str, count: int) -> str:
    return "".join(card.format(id=f"{prefix}-{i}") for i in range(1, count + 1))


_LAID_BOARD = _LAID_STYLE + _BOARD.replace(_cards(_CARD, "T", 4), _cards(_LAID_CARD, "T", 4)).replace(
    _cards(_CARD, "D", 2), _cards(_LAID_CARD, "D", 2)
)


def _same_layout(read: live_view.PageRead, whole: live_view.PageRead) -> None:
    """The incremental read gives the nodes, the text layout and the view a whole read gives."""
    assert _nodes(read) == _nodes(whole)
    mine, theirs = read.sessions[0][1], whole.sessions[0][1]
    assert (mine.display, mine.gaps) == (theirs.display, theirs.gaps)
    assert asdict(read.view) == asdict(whole.view)


def _text(read: live_view.PageRead) -> str:
    return "\n".join(b.get("text", "") for b in asdict(read.view)["full_blocks"])


async def test_a_moved_card_in_running_text_is_laid_out_by_the_page_without_a_snapshot(
    connection: Connection,
) -> None:
    read, whole, sent = await _laid_reads(connection, _LAID_BOARD, _MOVE)
    _same_layout(read, whole)
    assert "DOMSnapshot.captureSnapshot" not in sent
    # The layout matters here: the card's parts are lines of their own, not one run of text; and
    # the card now first in "To do" meets the column's edge (grid), as the moved one now last in "Done".
    assert "T-1 - 3 pts\nTask T-1\nAssigned to Rui" in _text(whole)
    gaps = whole.sessions[0][1].gaps
    assert gaps is not None and ("grid", "flex") in gaps.values() and ("flex", "grid") in gaps.values()


async def test_a_rule_of_the_new_column_restyles_what_the_moved_card_holds(connection: Connection) -> None:
    # In "Done" a card's last line runs on after its title: the page tells its new display, not the old one.
    styled = _LAID_BOARD.replace("</style>", " #done .who { display: inline }</style>")
    read, whole, sent = await _laid_reads(connection, styled, _MOVE)
    _same_layout(read, whole)
    assert "DOMSnapshot.captureSnapshot" not in sent
    display = whole.sessions[0][1].display
    assert display is not None and "inline" in display.values() and "block" in display.values()


@pytest.mark.parametrize(
    ("html", "change"),
    [
        (_LAID_BOARD.replace("</style>", " .card p::before { content: '> ' }</style>"), _MOVE),
        (_LAID_BOARD.replace("</strong><span", "</strong> <span"), _MOVE),
        (_LAID_BOARD.replace('<div class="cards" id="done">', '<div class="cards" id="done">Drop here'), _MOVE),
        (_LAID_BOARD.replace("</style>", " .meta { display: contents }</style>"), _MOVE),
    ],
    ids=["pseudo-element", "white-space", "text-beside", "contents"],
)
async def test_a_moved_card_the_page_cannot_lay_out_is_read_by_a_snapshot(
    connection: Connection, html: str, change: str
) -> None:
    read, whole, sent = await _laid_reads(connection, html, change)
    _same_layout(read, whole)
    assert "DOMSnapshot.captureSnapshot" in sent


async def _numbered(page: PageTarget, read: live_view.PageRead) -> int:
    """How many nodes the observer of `page`'s main frame has numbered (serialized) since its numbers began."""
    return await observer_count(page, read, "globalThis.__webmcpBridgeIds?.next ?? -1")


async def test_a_take_serializes_a_node_once_and_starts_again_when_the_bridge_lost_count(
    connection: Connection,
) -> None:
    moves = [
        ("T-1", "done"),  # the columns, their cards and the moved card's insides: all new
        ("T-1", "todo"),  # all of them given by their numbers
        ("D-1", "todo"),  # and D-1's insides are new
        ("T-2", "done"),  # after the bridge lost its count: all new again
    ]

    def lose_count(number: int) -> None:
        if number == 3:
            observer_take._numbered.clear()

    changes = [f"document.querySelector('#{c}').appendChild(document.querySelector('#{card}'));" for card, c in moves]
    reads = await reads_one_by_one(connection, _LAID_BOARD, changes, _numbered, lose_count)
    for read, whole, _sent, _probed in reads:
        _same_layout(read, whole)
    numbered = [probed for _read, _whole, _sent, probed in reads]
    assert numbered[0] > 0
    assert numbered[1] == numbered[0], f"the cards moved back are given by their numbers: {numbered}"
    assert numbered[0] < numbered[2] < 2 * numbered[0], f"only D-1's nodes are new: {numbered}"
    assert 0 < numbered[3] < numbered[2], f"numbered again from 0 after the count was lost: {numbered}"


async def test_a_moved_card_with_a_long_text_gives_only_its_edges(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A card holding 300 kB of text, white space at its edges: the take says how its text begins
    # and ends, not the text; the layout is the whole read's all the same.
    html = _LAID_BOARD.replace("Task T-1</strong>", "Task T-1</strong>" + " word" * 60_000 + " ")
    answers: list[int] = []
    parse = observer_take.parse_take

    def measured(found: dict[str, Any], *args: Any) -> Any:
        answers.append(len(json.dumps(found)))
        return parse(found, *args)

    monkeypatch.setattr(observer_take, "parse_take", measured)
    read, whole, sent = await _laid_reads(connection, html, _MOVE)
    _same_layout(read, whole)
    assert "DOMSnapshot.captureSnapshot" not in sent
    assert answers and max(answers) < 20_000, answers
