"""End to end: an incremental read reads the text layout again exactly where a change may have
moved it (`observer.js` relaid/within, `observer_take.layout_touched`), and gives the view a whole
read gives.

Real Chromium, the observer in its isolated world, pages given as `data:` URLs. Each case changes
a page by script, then reads it only where it changed (`read_changes`) and whole (`read_page`),
with the same block ids, and counts the `DOMSnapshot.captureSnapshot` the incremental read took.
An attribute no style rule reads (a link's `aria-label`) moves no layout: no snapshot. The same
change where a rule reads it, or a change of contents where a rule looks at contents (`:empty`),
restyles (so does a value that reads the attribute, `attr()`): the snapshot is taken, and without it
the view would lack the space its box on the line makes. A text put back as it was (a count set
to the count it showed) is not read again at all, nor is an attribute (`hidden` set on a hidden
element, a class added and removed).
"""

from __future__ import annotations

import copy
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

import anyio
import pytest

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import PageTarget
from tests.support.tabs import new_tab
from webmcp.desktop import live_view
from webmcp.view.build import BlockIds

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

_CART = (
    '<p>Total<span id="sum" data-state="old">: 3 items</span>, in your bag '
    '<a id="cart" href="#cart" aria-label="Cart, 0 items"><span id="count">0</span></a>.</p>'
)
_ADD = (
    "document.querySelector('#sum').dataset.state = 'new';"
    "document.querySelector('#cart').setAttribute('aria-label', 'Cart, 1 item');"
    "document.querySelector('#count').textContent = '1';"
)
_NOTE = '<p>Call us<span id="note"></span>today</p>'
_FILL = "document.querySelector('#note').textContent = 'now';"


async def _page(connection: Connection, html: str) -> PageTarget:
    """A new tab with the observer, showing `html` once it has loaded."""
    session = await new_tab(connection)
    await live_view.install_observer(session)
    loaded = anyio.Event()
    session.on("Page.loadEventFired", lambda _params: loaded.set())
    await session.send("Page.navigate", {"url": "data:text/html," + urllib.parse.quote(html)})
    with anyio.fail_after(10):
        await loaded.wait()
    assert session.target_id is not None
    return PageTarget(session.target_id, session)


def _counting(session: CDPSession) -> list[str]:
    """The methods `session` sends from now on (the instance's `send` is wrapped)."""
    sent: list[str] = []
    send = session.send

    async def counted(method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        sent.append(method)
        return await send(method, *args, **kwargs)

    session.send = counted  # type: ignore[method-assign]
    return sent


async def observer_count(page: PageTarget, read: live_view.PageRead, expression: str) -> int:
    """A count `expression` gives in the observer's world of `page`'s main frame."""
    context = next(c for k, c in read.contexts.items() if isinstance(c, int) and not k.endswith(" takes"))
    reply = await page.session.send(
        "Runtime.evaluate", {"expression": expression, "contextId": context, "returnByValue": True}
    )
    return int(reply["result"]["value"])


async def _analyses(page: PageTarget, read: live_view.PageRead) -> int:
    """How many analyses of the style sheets the observer of `page`'s main frame has made so far."""
    return await observer_count(page, read, "globalThis.__webmcpBridgeSheetAnalyses || 0")


async def reads_one_by_one(
    connection: Connection,
    html: str,
    changes: list[str],
    probe: Callable[[PageTarget, live_view.PageRead], Awaitable[int]] | None = None,
    before: Callable[[int], None] | None = None,
) -> list[tuple[live_view.PageRead, live_view.PageRead, list[str], int]]:
    """After each of `changes` (`before` told its number first): the page read incrementally (from
    the last such read) and read whole with the ids as they were, what the incremental read sent,
    and what `probe` said of the page then."""
    page = await _page(connection, html)
    ids = BlockIds()
    last = await live_view.read_page(page, 0, ids)
    # The first take makes the observer's world known; its changes are those of the load.
    settled = await live_view.read_changes(page, last, ids)
    last = settled if settled is not None else last
    out = []
    for number, change in enumerate(changes):
        if before is not None:
            before(number)
        await page.session.send("Runtime.evaluate", {"expression": change})
        whole_ids = copy.deepcopy(ids)
        sent = _counting(page.session)
        read = await live_view.read_changes(page, last, ids)
        assert read is not None, "the change is small: it is read incrementally"
        done = list(sent)
        whole = await live_view.read_page(page, 0, whole_ids)
        out.append((read, whole, done, await probe(page, read) if probe is not None else 0))
        last = read
    return out


async def _one_by_one(
    connection: Connection, html: str, changes: list[str]
) -> list[tuple[dict[str, Any], dict[str, Any], list[str], int]]:
    """After each of `changes`: the view read incrementally (from the last such read) and read
    whole, what the incremental read sent, and how many sheet analyses the observer had made."""
    reads = await reads_one_by_one(connection, html, changes, _analyses)
    return [(asdict(read.view), asdict(whole.view), sent, analysed) for read, whole, sent, analysed in reads]


async def _after(connection: Connection, html: str, change: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The view after `change` read incrementally and read whole, and what the incremental read sent."""
    incremental, whole, sent, _analysed = (await _one_by_one(connection, html, [change]))[0]
    return incremental, whole, sent


def _text(view: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in view["full_blocks"])


async def test_an_attribute_no_style_rule_reads_moves_no_layout(connection: Connection) -> None:
    incremental, whole, sent = await _after(connection, _CART, _ADD)
    assert incremental == whole
    assert "Total: 3 items" in _text(whole) and "Cart, 1 item" in _text(whole)
    assert "DOMSnapshot.captureSnapshot" not in sent


async def test_an_attribute_a_style_rule_reads_is_laid_out_again(connection: Connection) -> None:
    styled = '<style>span[data-state="new"] { display: inline-block }</style>' + _CART
    incremental, whole, sent = await _after(connection, styled, _ADD)
    assert incremental == whole
    assert "DOMSnapshot.captureSnapshot" in sent
    # The rule made the span a box on the line: a space before it, which the kept layout would not give.
    assert "Total : 3 items" in _text(whole)


async def test_an_attribute_a_style_value_reads_is_laid_out_again(connection: Connection) -> None:
    # No selector names `data-state`; the value of `display` reads it (`attr()`, typed).
    styled = "<style>#sum { display: attr(data-state type(<custom-ident>), inline) }</style>" + _CART.replace(
        'data-state="old"', 'data-state="inline"'
    )
    change = _ADD.replace("'new'", "'inline-block'")
    incremental, whole, sent = await _after(connection, styled, change)
    assert incremental == whole
    assert "DOMSnapshot.captureSnapshot" in sent
    assert "Total : 3 items" in _text(whole)


async def test_contents_where_a_rule_looks_at_contents_restyle_the_element(connection: Connection) -> None:
    styled = "<style>#note { display: inline-block } #note:empty { display: inline }</style>" + _NOTE
    incremental, whole, sent = await _after(connection, styled, _FILL)
    assert incremental == whole
    assert "DOMSnapshot.captureSnapshot" in sent
    assert "Call us now today" in _text(whole)


@pytest.mark.parametrize(
    ("rule", "snapshot"),
    [
        (".badge:empty { display: none }", False),
        ("p .badge:empty + i, [role=status]:empty { visibility: hidden }", False),
        ("span:empty { display: inline-block }", True),
        ("span:not(:empty) { display: inline-block }", True),
        ("p:has(span:empty) { color: red }", True),
    ],
    ids=["other-class", "other-compounds", "its-element", "inside-not", "has"],
)
async def test_an_empty_rule_restyles_only_what_its_compound_matches(
    connection: Connection, rule: str, snapshot: bool
) -> None:
    # `:empty` looks at one element's contents: filling #note restyles it only where the compound
    # that `:empty` is on matches it (or cannot be told apart, or `:has()` looks from above).
    styled = f"<style>{rule}</style>" + _NOTE
    incremental, whole, sent = await _after(connection, styled, _FILL)
    assert incremental == whole
    assert ("DOMSnapshot.captureSnapshot" in sent) is snapshot
    assert "now" in _text(whole)


async def test_a_text_put_back_as_it_was_is_not_read_again(connection: Connection) -> None:
    page = '<p>Done: <span id="n">3</span> of 9</p><p id="other">Other</p>'
    same = "document.querySelector('#n').textContent = '3';"
    incremental, whole, sent = await _after(connection, page, same)
    assert incremental == whole
    assert not any(m.startswith("Accessibility.") for m in sent), sent
    # The same with another count: that one is read again.
    incremental, whole, sent = await _after(connection, page, same.replace("'3'", "'4'"))
    assert incremental == whole and "Done: 4 of 9" in _text(whole)
    assert "Accessibility.queryAXTree" in sent


async def test_an_attribute_put_back_as_it_was_is_not_read_again(connection: Connection) -> None:
    page = '<p id="hint" hidden>Nothing saved yet</p><p id="other" class="a">Other</p>'
    same = (
        "document.querySelector('#hint').hidden = true;"
        "document.querySelector('#other').classList.add('b'); document.querySelector('#other').classList.remove('b');"
    )
    incremental, whole, sent = await _after(connection, page, same)
    assert incremental == whole
    assert not any(m.startswith("Accessibility.") for m in sent), sent
    # The same attribute set to another value: that one is read again.
    incremental, whole, sent = await _after(connection, page, same.replace("hidden = true", "hidden = false"))
    assert incremental == whole and "Nothing saved yet" in _text(whole)
    assert "Accessibility.queryAXTree" in sent


_BACK = (
    "document.querySelector('#sum').dataset.state = 'old';"
    "document.querySelector('#cart').setAttribute('aria-label', 'Cart, 0 items');"
    "document.querySelector('#count').textContent = '0';"
)


async def test_the_sheets_are_analysed_once_while_they_hold_the_same_rules(connection: Connection) -> None:
    styled = "<style>p { margin: 0 } .unused + .x { color: red }</style>" + _CART
    steps = await _one_by_one(connection, styled, [_ADD, _BACK, _ADD])
    for incremental, whole, _sent, _count in steps:
        assert incremental == whole
    # The first take after the load analysed the sheets (what selectors read, attr() in values);
    # the next two, with the same rules, asked the same and made no analysis again.
    counts = [count for *_rest, count in steps]
    assert counts[0] >= 1 and counts[1] == counts[0] and counts[2] == counts[0], counts


_RULE = "'span[data-state=\"new\"] { display: inline-block }'"


@pytest.mark.parametrize(
    ("sheet", "edit"),
    [
        pytest.param("p { margin: 0 }", f"document.styleSheets[0].insertRule({_RULE}, 1);", id="inserted"),
        pytest.param(
            "@media screen { p { margin: 0 } }",
            f"document.styleSheets[0].cssRules[0].insertRule({_RULE}, 1);",
            id="inserted-into-media",
        ),
        pytest.param(
            "p { margin: 0 } b { color: red }",
            f"document.styleSheets[0].deleteRule(1); document.styleSheets[0].insertRule({_RULE}, 1);",
            id="replaced-as-many-rules",
        ),
    ],
)
async def test_a_rule_added_by_script_after_the_sheets_were_analysed_is_seen(
    connection: Connection, sheet: str, edit: str
) -> None:
    # The first change is read with the sheets analysed (no rule reads `data-state`: no snapshot);
    # after the script's edit, a rule reads it: the same change restyles the span.
    steps = await _one_by_one(connection, f"<style>{sheet}</style>" + _CART, [_ADD, _BACK, edit + _ADD])
    for incremental, whole, _sent, _count in steps:
        assert incremental == whole
    assert "DOMSnapshot.captureSnapshot" not in steps[0][2]
    assert "DOMSnapshot.captureSnapshot" in steps[2][2]
    assert "Total : 3 items" in _text(steps[2][1])
