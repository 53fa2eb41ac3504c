"""End to end on the patterns public WebMCP sites use (issue 9), on the Harbor Kitchen pages.

Each test names the item of issue 9 it checks. Those the bridge does not pass yet are
strict xfails with the reason seen today, so each flips to a failure (and must be made
plain) when its fix lands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from playwright.async_api import async_playwright

from cdp_bridge.launcher import BrowserProcess
from tests.support.mcp_harness import open_stdio_client
from tests.support.stage import Stage, address_of, open_stage, text_spans, tool_started, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# Tools on these pages answer in well under a second: a short tool timeout keeps the
# failures of today (calls that never answer) from holding a test for the default 30 s.
TOOL_TIMEOUT = "5"


@pytest.fixture
async def kitchen(site: str, browser: BrowserProcess) -> AsyncIterator[Stage]:
    """The stage, its start tab on the Harbor Kitchen menu."""
    async with open_stage(site, browser, "auto", "--tool-timeout", TOOL_TIMEOUT, start_path="/kitchen/") as s:
        yield s


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _modals(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"]]


def _fields(window: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The window's field items by label (the address bar left out)."""
    return {
        item["label"]: item
        for block in window["blocks"]
        if block["type"] == "fields" and block.get("id") != "address"
        for item in block["items"]
    }


def _texts(window: dict[str, Any]) -> list[str]:
    """Every string a person could read in the window's blocks, except the address."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.extend(text_spans(value))
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in ("id", "type"):
                    walk(item)

    walk([b for b in window["blocks"] if b.get("id") != "address"])
    return found


async def _kitchen_tab(stage: Stage) -> str:
    """The start tab's window id, once the menu's tools are there."""
    await stage.wait_tools(lambda names: any(n.endswith("__show_menu") for n in names))
    return str((await stage.tab_for("/kitchen/"))["id"])


async def _go(stage: Stage, win: str, path: str, tool: str) -> None:
    """Send the tab to `path` as the agent and wait for the page's tool `tool`."""
    result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)


async def _api(stage: Stage, path: str) -> Any:
    async with httpx2.AsyncClient(timeout=10) as http:
        reply = await http.get(stage.site + path)
    reply.raise_for_status()
    return reply.json()


# --- 1. Workers run --------------------------------------------------------------------------


@asynccontextmanager
async def _bridge_alone(site: str, browser: BrowserProcess, path: str) -> AsyncIterator[Any]:
    """The bridge attached to `browser` with its tab at `path`, and no Playwright.

    Playwright, once connected, resumes every worker it is offered: with the user attached
    a worker left paused by the bridge would run anyway and hide the fault.
    """
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--tool-timeout", TOOL_TIMEOUT]
    async with open_stdio_client([*command, site + path], mode="auto") as mcp:
        yield mcp


async def _tool_of(mcp: Any, action: str) -> str:
    """The full name of the page tool `action` once it is listed."""
    with anyio.fail_after(15):
        while True:
            seen = mcp.notifications.count("tools_list_changed")
            names = [t.name for t in (await mcp.client.list_tools()).tools]
            found = [n for n in names if n.endswith(f"__{action}")]
            if found:
                return found[0]
            await mcp.notifications.wait_for("tools_list_changed", after=seen, timeout=15)


async def test_page_tool_answers_from_a_dedicated_worker(site: str, browser: BrowserProcess) -> None:
    async with _bridge_alone(site, browser, "/kitchen/display.html") as mcp:
        tool = await _tool_of(mcp, "estimate_wait")
        result = await mcp.client.call_tool(tool, {"dishes": ["chowder", "mussels"]})
        assert not result.is_error, result.structured_content
        assert result.structured_content["result"] == {"minutes": 23, "computedBy": "dedicated worker"}


async def test_page_tool_answers_from_a_shared_worker(site: str, browser: BrowserProcess) -> None:
    async with _bridge_alone(site, browser, "/kitchen/display.html") as mcp:
        tool = await _tool_of(mcp, "rail_ticket")
        result = await mcp.client.call_tool(tool, {"ticket": "Table 4: 2 chowder"})
        assert not result.is_error, result.structured_content
        assert result.structured_content["result"] == {
            "tickets": ["Table 4: 2 chowder"],
            "computedBy": "shared worker",
        }


async def test_page_tool_answers_from_a_service_worker(site: str, browser: BrowserProcess) -> None:
    async with _bridge_alone(site, browser, "/kitchen/display.html") as mcp:
        tool = await _tool_of(mcp, "stock_level")
        result = await mcp.client.call_tool(tool, {"dish": "mussels"})
        assert not result.is_error, result.structured_content
        assert result.structured_content["result"] == {"dish": "mussels", "portions": 7, "computedBy": "service worker"}


# --- 2. Tools whose effect is a navigation deliver their result -------------------------------


async def test_form_tool_that_posts_to_a_confirmation_page_returns_the_order(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/order.html", "place_order")
    result = await kitchen.call(f"{win}__place_order", {"dish": "mussels", "quantity": 2, "pickup": "19:00"})
    orders = (await _api(kitchen, "/api/kitchen/orders"))["orders"]
    assert [o["number"] for o in orders] == ["HK-1001"], "the order is placed exactly once"
    assert not result.is_error, result.structured_content
    assert "HK-1001" in json.dumps(result.structured_content["result"]), "the output comes from the new page"
    assert "/kitchen/order" in result.structured_content["message"], "the message names the new address"
    doc = await kitchen.windows()
    assert "Order HK-1001 confirmed" in _window(doc, win)["title"]


async def test_tool_that_sets_location_then_answers_returns_its_answer(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/order.html", "reorder_usual")
    result = await kitchen.call(f"{win}__reorder_usual")
    orders = (await _api(kitchen, "/api/kitchen/orders"))["orders"]
    assert [o["number"] for o in orders] == ["HK-1001"], "the order is placed exactly once"
    assert not result.is_error, result.structured_content
    assert result.structured_content["result"] == {"orderNumber": "HK-1001", "total": 24}
    assert "/kitchen/orders/HK-1001" in result.structured_content["message"]


async def test_tool_that_navigates_and_is_answered_by_the_next_page_returns_that_answer(kitchen: Stage) -> None:
    async with httpx2.AsyncClient(timeout=10) as http:
        placed = await http.post(kitchen.site + "/api/kitchen/orders", json={"dish": "tart", "quantity": 3})
    assert placed.json()["number"] == "HK-1001"
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/order.html", "track_order")
    # The tool awaits navigation.navigate(): across documents its own answer never comes, and
    # Chromium answers the call with the JSON-LD of the page it landed on.
    result = await kitchen.call(f"{win}__track_order", {"number": "HK-1001"})
    assert not result.is_error, result.structured_content
    assert "HK-1001" in json.dumps(result.structured_content["result"])
    assert "/kitchen/orders/HK-1001" in result.structured_content["message"]


# --- 3. Back, forward and same-document navigations ------------------------------------------


async def _restored_from_bfcache(stage: Stage, path: str) -> None:
    """The page at `path` says it came back from the back-forward cache (the test's premise)."""
    page = await stage.user_page(path)
    await page.wait_for_function(
        "[...document.querySelectorAll('#activity li')].some(li => li.textContent.includes('back-forward cache'))",
        timeout=10_000,
    )


async def test_agent_back_and_forward_from_the_back_forward_cache_show_the_page_and_its_tools(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/order.html", "place_order")

    back = await kitchen.call(f"{win}__navigate", {"go": "back"})
    assert not back.is_error, back.structured_content
    await _restored_from_bfcache(kitchen, "/kitchen/")
    assert "loading" not in back.structured_content["message"]
    names = await kitchen.tool_names()
    assert f"{win}__show_menu" in names and f"{win}__place_order" not in names, "the restored page's tools"
    window = _window(await kitchen.windows(), win)
    assert address_of(window) == kitchen.site + "/kitchen/"
    assert window["title"] == "Harbor Kitchen — Menu" and "loading" not in window["summary"].lower()
    menu = await kitchen.call(f"{win}__todays_menu")
    assert not menu.is_error and menu.structured_content["result"]["menu"] == "lunch"

    forward = await kitchen.call(f"{win}__navigate", {"go": "forward"})
    assert not forward.is_error and "loading" not in forward.structured_content["message"]
    names = await kitchen.tool_names()
    assert f"{win}__place_order" in names and f"{win}__show_menu" not in names


async def test_fragment_and_push_state_navigations_return_at_once_and_back_undoes_them(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    jumped = await kitchen.call(f"{win}__jump_to", {"section": "hours"})
    assert not jumped.is_error, jumped.structured_content
    to_anchor = await kitchen.call(f"{win}__navigate", {"url": kitchen.site + "/kitchen/#visit"})
    assert not to_anchor.is_error and "loading" not in to_anchor.structured_content["message"]
    dinner = await kitchen.call(f"{win}__show_menu", {"menu": "dinner"})
    assert not dinner.is_error
    window = _window(await kitchen.windows(), win)
    assert address_of(window).endswith("/kitchen/?menu=dinner") and "Dinner menu" in _texts(window)

    back = await kitchen.call(f"{win}__navigate", {"go": "back"})
    assert not back.is_error and "loading" not in back.structured_content["message"]
    window = _window(await kitchen.windows(), win)
    assert address_of(window).endswith("/kitchen/#visit")
    assert "Lunch menu" in _texts(window), "popstate re-rendered the page, and the view follows"
    assert "loading" not in window["summary"].lower()
    menu = await kitchen.call(f"{win}__todays_menu")
    assert not menu.is_error and menu.structured_content["result"]["menu"] == "lunch"


async def test_user_back_from_the_back_forward_cache_brings_back_the_pages_tools(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    page = await kitchen.user_page("/kitchen/")
    await user_navigates(page, kitchen.site + "/kitchen/order.html")
    await kitchen.wait_tools(lambda names: f"{win}__place_order" in names)
    await page.go_back(wait_until="commit")
    await _restored_from_bfcache(kitchen, "/kitchen/")
    names = await kitchen.wait_tools(lambda names: f"{win}__show_menu" in names, timeout=5)
    assert f"{win}__place_order" not in names
    menu = await kitchen.call(f"{win}__todays_menu")
    assert not menu.is_error, menu.structured_content
    window = _window(await kitchen.windows(), win)
    assert window["title"] == "Harbor Kitchen — Menu" and "loading" not in window["summary"].lower()


# --- 4. Declarative forms without toolautosubmit ----------------------------------------------

BOOKING = {"name": "Ada Lovelace", "party": 4, "date": "2026-12-03", "time": "19:00", "card": "4111111111111111"}


async def test_form_waiting_for_the_person_is_a_modal_window_the_agent_can_submit(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/book.html", "book_table")
    result = await kitchen.call(f"{win}__book_table", BOOKING)
    assert not result.is_error, result.structured_content
    (form_id,) = result.structured_content["openedWindowIds"]
    doc = await kitchen.windows()
    form = _window(doc, form_id)
    assert form["modal"] is True and form["ownerId"] == win
    assert form["title"] == "Submit \u2018book_table\u2019?", "titled by the tool, as documented"
    assert "4111111111111111" not in json.dumps(doc), "the card number never leaves the bridge"
    fields = _fields(form)
    assert any(f.get("sensitive") for label, f in fields.items() if "Card" in label)
    assert any(f["value"] == "Ada Lovelace" for f in fields.values())
    names = await kitchen.tool_names()
    assert f"{form_id}__submit" in names and f"{form_id}__cancel" in names

    submitted = await kitchen.call(f"{form_id}__submit")
    assert not submitted.is_error, submitted.structured_content
    original = submitted.structured_content["result"]["originalCall"]
    assert original["tool"] == "book_table" and original["result"]["reference"] == "T-001"
    bookings = (await _api(kitchen, "/api/kitchen/bookings"))["bookings"]
    assert [(b["reference"], b["cardLast4"]) for b in bookings] == [("T-001", "1111")]
    await kitchen.wait_windows(lambda d: not _modals(d) and win in d["operableWindowIds"])


async def test_person_submits_the_waiting_form_in_the_page_and_the_bridge_follows(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/book.html", "book_table")
    result = await kitchen.call(f"{win}__book_table", BOOKING)
    assert not result.is_error, result.structured_content
    (form_id,) = result.structured_content["openedWindowIds"]
    page = await kitchen.user_page("/kitchen/book.html")
    await page.fill("#guest-name", "Ada King")
    await page.click("button[type=submit]")
    await kitchen.wait_windows(lambda d: all(w["id"] != form_id for w in d["windows"]))
    bookings = (await _api(kitchen, "/api/kitchen/bookings"))["bookings"]
    assert [b["name"] for b in bookings] == ["Ada King"], "the person's edit is what was booked"
    gone = await kitchen.call(f"{form_id}__submit")
    assert gone.structured_content["code"] == "window_not_found"


# --- 5. Every window opened by a call is in its openedWindowIds ------------------------------


async def test_tool_that_opens_an_in_page_dialog_returns_its_window(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/shop.html", "view_cart")
    opened = await kitchen.call(f"{win}__view_cart")
    assert not opened.is_error, opened.structured_content
    assert opened.structured_content.get("openedWindowIds"), opened.structured_content
    (modal_id,) = opened.structured_content["openedWindowIds"]
    doc = await kitchen.windows()
    assert _window(doc, modal_id)["ownerId"] == win and "Your cart" in _window(doc, modal_id)["title"]
    assert win not in doc["operableWindowIds"], "the next call meets the modal, not a surprise"


async def test_open_tab_returns_once_the_page_is_shown_with_its_tools(kitchen: Stage) -> None:
    await _kitchen_tab(kitchen)
    opened = await kitchen.call("app__open_tab", {"url": kitchen.site + "/kitchen/shop.html"})
    assert not opened.is_error, opened.structured_content
    (new_id,) = opened.structured_content["openedWindowIds"]
    names = await kitchen.tool_names()
    assert f"{new_id}__add_to_cart" in names and f"{new_id}__view_cart" in names
    window = _window(await kitchen.windows(), new_id)
    assert window["title"] == "Harbor Kitchen — Pantry"
    assert address_of(window) == kitchen.site + "/kitchen/shop.html"


# --- 6. Read after write ----------------------------------------------------------------------


async def test_windows_read_right_after_a_page_tool_shows_its_change(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/shop.html", "add_to_cart")
    await kitchen.wait_windows(lambda d: "Cart: 0 items" in _texts(_window(d, win)))
    for count in (1, 3):
        before = _window(await kitchen.windows(), win)["version"]
        added = await kitchen.call(f"{win}__add_to_cart", {"sku": "chowder-base", "quantity": 2 if count == 3 else 1})
        assert not added.is_error, added.structured_content
        window = _window(await kitchen.windows(), win)
        assert f"Cart: {count} item" in " ".join(_texts(window)), "the change the call made is readable"
        assert window["version"] > before


# --- 7. What a person sees, in blocks ---------------------------------------------------------


async def test_date_and_time_inputs_are_one_field_with_the_pages_label_value_and_required(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/events.html", "add_guest")
    doc = await kitchen.wait_windows(lambda d: "Guest 1 name" in _fields(_window(d, win)))
    fields = _fields(_window(doc, win))
    expected = {
        "Date": ("2026-12-03", True),
        "Time": ("", True),
        "Arrival": ("2026-12-03T18:45", False),
        "Month": ("2026-12", False),
        "Week": ("", False),
    }
    for label, (value, required) in expected.items():
        assert label in fields, f"no field labelled {label!r} in {sorted(fields)}"
        assert fields[label]["value"] == value, (label, fields[label])
        assert bool(fields[label].get("required")) is required, (label, fields[label])
    assert not any(label.split()[0] in ("Month", "Day", "Year") and label not in expected for label in fields)


async def test_pristine_required_field_is_not_an_error(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/events.html", "add_guest")
    doc = await kitchen.wait_windows(lambda d: "Your name" in _fields(_window(d, win)))
    window = _window(doc, win)
    name = _fields(window)["Your name"]
    assert name["value"] == "" and name.get("required") is True
    assert not name.get("invalid"), "nobody has touched the field yet"
    assert not [b for b in window["blocks"] if b["type"] == "notice" and b.get("severity") == "error"]
    assert "attention" not in window["summary"]


async def test_text_a_person_reads_on_buttons_and_links_is_in_the_blocks(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/shop.html", "add_to_cart")
    doc = await kitchen.wait_windows(lambda d: "Harbor Pantry" in _texts(_window(d, win)))
    text = " ".join(_texts(_window(doc, win)))
    for shown in ("Add to cart — $12", "Add to cart — $9", "Gift card — $25", "10:00", "12:30", "15:00", "18:30"):
        assert shown in text, f"{shown!r} is on the page but not in the blocks"
    # The numbered lockers, a row of buttons: shown as content (a list or text), never as an operation.
    lockers = [
        b
        for b in _window(doc, win)["blocks"]
        if b["type"] in ("text", "list")
        and all(n in json.dumps(b) for n in ('"1"', '"4"', '"6"'))
        or b.get("text", "").replace(" ", "") == "123456"
    ]
    assert lockers, _window(doc, win)["blocks"]


async def test_separate_elements_stay_separate_when_text_is_joined(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    doc = await kitchen.wait_windows(lambda d: "Opening hours" in _texts(_window(d, win)))
    text = " ".join(_texts(_window(doc, win)))
    assert "The art of the" in text and "slow brew." in text
    assert "theslow" not in text and "Ada,We" not in text


async def test_page_without_a_title_is_titled_by_its_address(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await kitchen.wait_windows(lambda d: _window(d, win)["title"] == "Harbor Kitchen — Menu")
    result = await kitchen.call(f"{win}__navigate", {"url": kitchen.site + "/kitchen/receipt.html"})
    assert not result.is_error, result.structured_content
    window = _window(await kitchen.windows(), win)
    assert "Receipt" in _texts(window), "the navigation returned with the new page shown"
    assert window["title"] != "Harbor Kitchen — Menu"
    assert "/kitchen/receipt.html" in window["title"]


async def test_block_ids_of_grouped_fields_stay_with_their_field_across_a_re_render(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/events.html", "add_guest")

    def block_of(window: dict[str, Any], label: str) -> str | None:
        for block in window["blocks"]:
            if block["type"] == "fields" and any(i["label"] == label for i in block["items"]):
                return str(block["id"])
        return None

    doc = await kitchen.wait_windows(lambda d: block_of(_window(d, win), "Guest 1 name"))
    first = block_of(_window(doc, win), "Guest 1 name")
    date_block = block_of(_window(doc, win), "Your name")
    added = await kitchen.call(f"{win}__add_guest", {"name": "Charles Babbage"})
    assert not added.is_error, added.structured_content
    doc = await kitchen.wait_windows(lambda d: block_of(_window(d, win), "Guest 2 name"))
    assert block_of(_window(doc, win), "Guest 1 name") == first
    assert block_of(_window(doc, win), "Your name") == date_block


# --- 8. Attached to an already loaded page ----------------------------------------------------


async def test_attaching_to_a_loaded_page_summarizes_what_it_shows(site: str, browser: BrowserProcess) -> None:
    async with async_playwright() as pw:
        user = await pw.chromium.connect_over_cdp(browser.ws_url)
        page = await user.contexts[0].new_page()
        await user_navigates(page, site + "/kitchen/")
        command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url]
        async with open_stdio_client(command, mode="auto") as mcp:
            with anyio.fail_after(15):
                while True:
                    seen = mcp.notifications.count("resource_updated")
                    doc = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
                    tabs = [w for w in doc["windows"] if address_of(w) == site + "/kitchen/"]
                    if tabs and tabs[0]["blocks"]:
                        break
                    await mcp.notifications.wait_for("resource_updated", after=seen, timeout=15)
            (tab,) = tabs
            assert "loading" not in tab["summary"].lower(), tab["summary"]
            assert "slow brew" in tab["summary"] or "Harbor Kitchen" in tab["summary"]
        await user.close()


# --- 9. Tools from another origin -------------------------------------------------------------


async def test_tool_of_a_cross_origin_frame_names_its_origin_and_its_output_is_untrusted(kitchen: Stage) -> None:
    partner = (await _api(kitchen, "/api/kitchen/partner"))["origin"]
    assert partner and partner != kitchen.site
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/reviews.html", "read_reviews")
    tool = next(t for t in (await kitchen.client.list_tools()).tools if t.name == f"{win}__read_reviews")
    assert partner in (tool.description or "")
    result = await kitchen.call(f"{win}__read_reviews")
    assert not result.is_error, result.structured_content
    assert len(result.structured_content["result"]["reviews"]) == 2
    assert result.structured_content.get("untrustedContent") is True


# --- 10. The client cancels a call ------------------------------------------------------------


async def _cancelled_in_page(stage: Stage) -> None:
    page = await stage.user_page("/kitchen/display.html")
    await page.wait_for_function(
        "[...document.querySelectorAll('#activity li')].some(li => /aborted by its signal|toolcancel/"
        ".test(li.textContent))",
        timeout=10_000,
    )


async def test_client_cancelling_a_call_cancels_it_in_the_page(kitchen: Stage) -> None:
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, "/kitchen/display.html", "print_prep_list")
    page = await kitchen.user_page("/kitchen/display.html")
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await kitchen.call(f"{win}__print_prep_list", {"stations": 4})

        tg.start_soon(call)
        await tool_started(page, "print_prep_list")
        tg.cancel_scope.cancel()  # the client abandons the request: notifications/cancelled
    await _cancelled_in_page(kitchen)


async def test_client_going_away_cancels_its_call_in_the_page(site: str, browser: BrowserProcess) -> None:
    async with open_stage(site, browser, "auto", start_path="/kitchen/display.html") as watcher:
        await watcher.wait_tools(lambda names: any(n.endswith("__print_prep_list") for n in names))
        page = await watcher.user_page("/kitchen/display.html")
        command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url]
        async with open_stdio_client(command, mode="auto") as caller, anyio.create_task_group() as tg:
            tool = await _tool_of(caller, "print_prep_list")  # the caller's bridge names its own windows

            async def call() -> None:
                await caller.client.call_tool(tool, {"stations": 4})

            tg.start_soon(call)
            await tool_started(page, "print_prep_list")
            tg.cancel_scope.cancel()
        # The second bridge's client closed its stdio: that bridge must cancel what it started.
        await _cancelled_in_page(watcher)


# --- 11. Hosts that read only `content` -------------------------------------------------------


def _structured_in_text(text: str) -> Any:
    """The first JSON object in a content text."""
    start = text.index("{")
    value, _ = json.JSONDecoder().raw_decode(text[start:])
    return value


def _beside_message(structured: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in structured.items() if k != "message"}


async def test_content_text_carries_the_message_and_the_structured_content(stage: Stage) -> None:
    await stage.wait_tools(lambda names: any(n.endswith("__get_ticket") for n in names))
    win = str((await stage.tab_for("/"))["id"])
    ticket = await stage.call(f"{win}__get_ticket", {"id": 101})
    (text,) = [c.text for c in ticket.content if c.type == "text"]
    assert text.count(ticket.structured_content["message"]) == 1, "the message is said once"
    assert _structured_in_text(text) == _beside_message(ticket.structured_content)
    assert "Cannot reset my password" in text

    rejected = await stage.call(f"{win}__close_ticket", {"id": 101})
    (text,) = [c.text for c in rejected.content if c.type == "text"]
    assert rejected.is_error and "resolution" in text, "the host's model sees which field was wrong"
    assert _structured_in_text(text) == _beside_message(rejected.structured_content)
    assert "None" not in text and "'" not in text.split("{", 1)[1], "errors read as JSON, not Python"
