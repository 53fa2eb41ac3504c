"""End to end: what a person sees on the Harbor Cinema pages, as the agent reads it.

Real Chromium, the sample site on 127.0.0.1, the bridge on stdio, a real MCP client;
Playwright acts as the person at the browser. Each test reads `app://windows` only.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import WAIT, Stage, address_of, open_stage, shown_texts, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _fields(window: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        i["label"]: i
        for b in window["blocks"]
        if b["type"] == "fields" and b.get("id") != "address"
        for i in b["items"]
    }


def _texts(window: dict[str, Any]) -> list[str]:
    return shown_texts(window["blocks"])


def _lists(window: dict[str, Any]) -> list[list[str]]:
    return [b["items"] for b in window["blocks"] if b["type"] == "list"]


async def _open(stage: Stage, path: str) -> str:
    """Navigate the first tab to `path`; its window id."""
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not result.is_error, result.structured_content
    return win


async def test_date_and_time_inputs_are_one_field_with_the_value_the_page_holds(stage: Stage) -> None:
    win = await _open(stage, "/cinema/book.html")
    doc = await stage.wait_windows(lambda d: "Date" in _fields(_window(d, win)))
    fields = _fields(_window(doc, win))
    assert fields["Date"] == {"label": "Date", "value": "", "required": True}
    assert fields["Time"] == {"label": "Time", "value": "20:45", "required": True}
    assert fields["Week"]["value"] == "2026-W49" and fields["Membership month"]["value"] == ""
    assert not any(label.startswith(("Month", "Day", "Year")) for label in fields)
    page = await stage.user_page("/cinema/book.html")
    await page.fill("#date", "2026-12-03")
    doc = await stage.wait_windows(lambda d: _fields(_window(d, win))["Date"]["value"] == "2026-12-03")
    assert _fields(_window(doc, win))["Date"] == {"label": "Date", "value": "2026-12-03", "required": True}


async def test_required_fields_are_errors_only_once_the_person_tried_to_submit(stage: Stage) -> None:
    win = await _open(stage, "/cinema/book.html")
    doc = await stage.wait_windows(lambda d: "Email" in _fields(_window(d, win)))
    window = _window(doc, win)
    fields = _fields(window)
    assert fields["Format"]["required"] and fields["I accept the house rules"]["required"]
    assert not any(i.get("invalid") for i in fields.values()), "nobody touched the form yet"
    assert "needs attention" not in window["summary"]
    page = await stage.user_page("/cinema/book.html")
    await page.fill("#date", "2026-12-03")
    await page.select_option("#format", "2D")
    await page.check("#rules")
    await page.fill("#name", "Ada Lovelace")
    await page.press("#name", "Tab")  # the change re-renders the guests, with a note: the button moves
    await page.wait_for_function("document.querySelector('#guests p') !== null", timeout=WAIT * 1000)
    await page.click("#booking button[type=submit]")  # the browser stops it: the email is empty
    doc = await stage.wait_windows(lambda d: _fields(_window(d, win))["Email"].get("invalid"))
    window = _window(doc, win)
    assert [label for label, i in _fields(window).items() if i.get("invalid")] == ["Email"]
    assert "needs attention" in window["summary"]


async def test_text_a_person_reads_on_buttons_is_in_the_blocks_and_is_no_operation(stage: Stage) -> None:
    win = await _open(stage, "/cinema/index.html")
    doc = await stage.wait_windows(lambda d: ["17:15", "19:00"] in _lists(_window(d, win)))
    window = _window(doc, win)
    assert ["18:30", "20:45", "22:10 (unavailable)"] in _lists(window)
    assert ["1", "2", "3", "4"] in _lists(window), "the numbered doors"
    assert "Large popcorn Add to cart \u2014 $12" in _texts(window)
    assert "1 2 3 Next" in _texts(window), "the pagination row"
    names = await stage.tool_names()
    assert not [n for n in names if n.startswith(f"{win}__") and any(c.isdigit() for c in n.split("__", 1)[1])]


async def test_separate_elements_stay_separate_when_their_text_is_joined(stage: Stage) -> None:
    win = await _open(stage, "/cinema/index.html")
    doc = await stage.wait_windows(lambda d: "The art of the\nslow brew." in _texts(_window(d, win)))
    window = _window(doc, win)
    assert "Hello Ada,\nWe look forward to seeing you this week." in _texts(window)
    assert ["Harbor Lights\nDrama \u00b7 1h 52m", "The Art of the Slow Brew\nDocumentary \u00b7 1h 18m"] in _lists(
        window
    )
    text = json.dumps(window["blocks"], ensure_ascii=False)
    assert "theslow" not in text and "Ada,We" not in text


async def test_window_title_follows_the_document_and_a_page_without_one_is_titled_by_its_address(
    stage: Stage,
) -> None:
    win = await _open(stage, "/cinema/index.html")
    old = "Harbor Cinema \u2014 What's on"
    await stage.wait_windows(lambda d: _window(d, win)["title"] == old)
    receipt = stage.site + "/cinema/receipt.html"
    stale: list[str] = []

    def titled_by_address(d: dict[str, Any]) -> bool:
        window = _window(d, win)
        if address_of(window) == receipt and window["title"] == old:
            stale.append(window["title"])
        return window["title"] == receipt and "Gift card receipt" in window["summary"]

    page = await stage.user_page("/cinema/index.html")
    await user_navigates(page, receipt)  # the person follows "Gift cards"
    await stage.wait_windows(titled_by_address)
    assert not stale, "the old page's title outlived its page"
    await page.evaluate("document.title = 'Harbor Cinema \u2014 Receipt'")
    await stage.wait_windows(lambda d: _window(d, win)["title"] == "Harbor Cinema \u2014 Receipt")
    result = await stage.call(f"{win}__navigate", {"url": stage.site + "/cinema/book.html"})
    assert not result.is_error, result.structured_content
    await stage.wait_windows(lambda d: _window(d, win)["title"] == "Harbor Cinema \u2014 Book a screening")


async def test_block_ids_of_a_re_rendered_field_group_stay_with_their_fields(stage: Stage) -> None:
    win = await _open(stage, "/cinema/book.html")
    doc = await stage.wait_windows(lambda d: "Email" in _fields(_window(d, win)))
    before = {b["id"]: b["type"] for b in _window(doc, win)["blocks"] if "id" in b}
    guests = next(b["id"] for b in _window(doc, win)["blocks"] if b["type"] == "fields" and "Email" in str(b))
    page = await stage.user_page("/cinema/book.html")
    await page.fill("#name", "Ada Lovelace")
    await page.locator("#name").blur()  # the change re-renders the whole "Guests" fieldset, with a note
    doc = await stage.wait_windows(lambda d: "Tickets go to Ada Lovelace." in _texts(_window(d, win)))
    window = _window(doc, win)
    after = {b["id"]: b["type"] for b in window["blocks"] if "id" in b}
    assert before.items() <= after.items(), "every block that was there keeps its id"
    (moved,) = [b for b in window["blocks"] if b["type"] == "fields" and "Email" in str(b)]
    assert moved["id"] == guests and moved["items"][0] == {"label": "Name", "value": "Ada Lovelace", "required": True}


_LOADED_JS = "new Promise(r => document.readyState === 'complete' ? r() : addEventListener('load', r))"


async def _load_before_the_bridge(browser: BrowserProcess, url: str) -> None:
    """Open `url` in a new tab over a CDP connection of its own, and wait for its load event."""
    async with Connection.connect(browser.ws_url) as conn:
        created = await conn.browser.send("Target.createTarget", {"url": url})
        attached = await conn.browser.send("Target.attachToTarget", {"targetId": created["targetId"], "flatten": True})
        session = conn.session(attached["sessionId"], created["targetId"])
        await session.send(
            "Runtime.evaluate",
            {
                "expression": _LOADED_JS,
                "awaitPromise": True,
            },
            timeout=WAIT,
        )


async def test_a_page_loaded_before_the_bridge_attached_is_not_still_loading(
    site: str, browser: BrowserProcess
) -> None:
    await _load_before_the_bridge(browser, site + "/cinema/index.html")
    async with open_stage(site, browser, "auto", start_path="/cinema/receipt.html") as stage:
        doc = await stage.wait_windows(
            lambda d: any(w["summary"].startswith("Shows \u201cWhat's on\u201d") for w in d["windows"])
        )
        (window,) = [w for w in doc["windows"] if address_of(w) == site + "/cinema/index.html"]
        assert "still loading" not in window["summary"]
        assert window["title"] == "Harbor Cinema \u2014 What's on"
        with anyio.fail_after(WAIT):
            await stage.tab_for("/cinema/receipt.html")  # the page the bridge opened itself loads as usual
