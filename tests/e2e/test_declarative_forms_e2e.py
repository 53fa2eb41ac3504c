"""Declarative forms called by an agent: what it is told is what the page did (issue 18, items 1, 5 and 6).

Chromium fills a `<form toolname>` itself, with trusted `input` events and no keystroke:
that is not the person typing. Submitting the waiting form answers only once its effect
(a "received" `<dialog>`, the next page) is readable, with the windows it opened; and a
form only the person may submit has its answer delivered where the first message says.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BOOKING = {"name": "Ada Lovelace", "party": 4, "date": "2026-12-03", "time": "19:00", "card": "4111111111111111"}


@pytest.fixture
async def human(site: str, browser: BrowserProcess) -> AsyncIterator[Stage]:
    """A bridge run with --human-submit: only the person submits a waiting form."""
    async with open_stage(site, browser, "auto", "--human-submit", start_path="/kitchen/") as s:
        yield s


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _values(window: dict[str, Any]) -> dict[str, str]:
    return {
        item["label"]: item.get("value", "")
        for block in window["blocks"]
        if block["type"] == "fields" and block.get("id") != "address"
        for item in block["items"]
    }


async def _tab_on(stage: Stage, path: str, tool: str) -> tuple[str, dict[str, Any]]:
    opened = await stage.call("app__open_tab", {"url": stage.site + path})
    assert not opened.is_error, opened.structured_content
    (win,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)
    return str(win), _window(await stage.windows(), win)


async def test_a_waiting_form_called_with_expected_version_is_not_taken_for_the_persons_typing(stage: Stage) -> None:
    win, window = await _tab_on(stage, "/kitchen/book.html", "book_table")
    answer = await stage.call(f"{win}__book_table", {**BOOKING, "expectedVersion": window["version"]})
    assert not answer.is_error, answer.structured_content
    body = answer.structured_content
    assert "typed" not in body["message"], body
    (form_id,) = body["openedWindowIds"]
    assert _values(_window(await stage.windows(), form_id)).get("Name") == "Ada Lovelace"


async def test_an_autosubmit_form_called_with_expected_version_completes_without_a_typing_warning(
    stage: Stage,
) -> None:
    win, window = await _tab_on(stage, "/kitchen/order.html", "place_order")
    answer = await stage.call(
        f"{win}__place_order",
        {"dish": "mussels", "quantity": 2, "pickup": "19:15", "expectedVersion": window["version"]},
    )
    assert not answer.is_error, answer.structured_content
    assert "typed" not in answer.structured_content["message"], answer.structured_content
    assert "Mussels in cider" in json.dumps(answer.structured_content["result"])


async def test_a_person_who_types_in_the_form_after_the_check_is_still_detected(stage: Stage) -> None:
    win, window = await _tab_on(stage, "/kitchen/book.html", "book_table")
    page = await stage.user_page("/kitchen/book.html")
    await page.click("#guest-name")
    await page.keyboard.type("Grace")  # after the agent read the window
    await stage.wait_windows(lambda d: _window(d, win)["version"] != window["version"])
    answer = await stage.call(f"{win}__book_table", {**BOOKING, "expectedVersion": window["version"]})
    assert answer.is_error and answer.structured_content["code"] == "stale_state", answer.structured_content
    assert await page.input_value("#guest-name") == "Grace"


async def test_submitting_a_waiting_form_answers_with_what_it_opened_and_shows_it(stage: Stage) -> None:
    win, _ = await _tab_on(stage, "/kitchen/book.html?confirm=dialog", "book_table")
    answer = await stage.call(f"{win}__book_table", BOOKING)
    (form_id,) = answer.structured_content["openedWindowIds"]
    submitted = await stage.call(f"{form_id}__submit")
    assert not submitted.is_error, submitted.structured_content
    body = submitted.structured_content
    assert body["result"]["originalCall"]["result"]["reference"].startswith("T-"), body
    doc = await stage.windows()  # read right after the answer: the effect is there already
    assert all(w["id"] != form_id for w in doc["windows"])
    received = [w for w in doc["windows"] if w.get("modal") and w.get("ownerId") == win]
    assert [w["title"] for w in received] == ["Reservation received"], received
    assert body.get("openedWindowIds") == [received[0]["id"]], body
    assert win not in doc["operableWindowIds"], "the dialog lies over the tab once the form's window is gone"
    assert "Reservation received: T-001" in json.dumps(received[0]["blocks"])


async def test_with_human_submit_the_pages_answer_reaches_the_agent_where_it_was_promised(human: Stage) -> None:
    win, _ = await _tab_on(human, "/kitchen/book.html", "book_table")
    answer = await human.call(f"{win}__book_table", BOOKING)
    assert not answer.is_error, answer.structured_content
    body = answer.structured_content
    (form_id,) = body["openedWindowIds"]
    assert "form-answer" in body["message"] and f"{form_id}__submit" not in await human.tool_names()
    page = await human.user_page("/kitchen/book.html")
    await page.click("button[type=submit]")
    doc = await human.wait_windows(
        lambda d: (
            any(b.get("id") == "form-answer" for b in _window(d, win)["blocks"])
            and all(w["id"] != form_id for w in d["windows"])
        )
    )
    (notice,) = [b for b in _window(doc, win)["blocks"] if b.get("id") == "form-answer"]
    assert notice["severity"] == "success" and "T-001" in notice["text"], notice
    assert "4111111111111111" not in json.dumps(doc), "the card number never leaves the bridge"


def _button_text(window: dict[str, Any]) -> str:
    return json.dumps([b for b in window["blocks"] if "Book" in json.dumps(b)])


async def test_the_look_chromium_gives_a_form_under_a_call_is_shown_and_goes_when_it_ends(stage: Stage) -> None:
    # The kitchen's booking page styles `:tool-submit-active` (a badge in the button's name, as the
    # french-bistro demo does): no mutation tells it came or went, yet the tab's window follows.
    win, before = await _tab_on(stage, "/kitchen/book.html", "book_table")
    assert "review and confirm" not in json.dumps(before)
    answer = await stage.call(f"{win}__book_table", BOOKING)
    (form_id,) = answer.structured_content["openedWindowIds"]
    filled = await stage.wait_windows(lambda d: "review and confirm" in json.dumps(_window(d, win)), timeout=10)
    assert "review and confirm" in _button_text(_window(filled, win))
    cancelled = await stage.call(f"{form_id}__cancel")
    assert not cancelled.is_error, cancelled.structured_content
    doc = await stage.windows()  # read right after the answer: the badge is gone already
    assert "review and confirm" not in json.dumps(_window(doc, win))
