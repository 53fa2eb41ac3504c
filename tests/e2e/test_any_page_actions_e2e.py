"""Acting on widget pages as a person does (issue 39): press anything shown, hover, keys, multi-select, focus.

The pages are `/patterns/*.html` (sample_site/README.md, "Widgets without tools"): real widget
markup without WebMCP tools, each with an `<output id="result">` line saying what the page's
own handlers did. Every check reads that line (or the page's state) as the window shows it
after the action answered, never the bridge's word. The bridge is attached with `--cdp-url`
and driven over stdio and over Streamable HTTP.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import open_http_client, open_stdio_client
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@asynccontextmanager
async def _bridge(site: str, browser: BrowserProcess, transport: str, path: str, *extra: str) -> AsyncIterator[Stage]:
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, *extra]
    if transport == "stdio":
        async with open_stdio_client([*command, site + path], mode="auto") as mcp:
            yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]  # no Playwright user here
        return
    async with http_bridge(browser, *extra, site + path) as (url, token), open_http_client(url, token, "auto") as mcp:
        yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _ok(stage: Stage, name: str, args: dict[str, Any]) -> str:
    result = await stage.call(name, args)
    assert not result.is_error, result.structured_content
    return str(result.structured_content["message"])


async def _error(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


def _text(window: dict[str, Any]) -> str:
    return json.dumps(window["blocks"], ensure_ascii=False)


async def _result_line(stage: Stage, path: str) -> str:
    """The page's own `<output id=result>` line, as the window shows it now (read after write)."""
    window = await stage.tab_for(path)
    return _text(window)


async def test_press_opens_an_accordion_section_and_a_tree_item(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/patterns/accordion.html") as stage:
        win = (await stage.tab_for("/patterns/accordion.html"))["id"]
        said = await _ok(stage, f"{win}__press", {"label": "Section 2"})
        assert "Section 2" in said and "expanded" in said, said
        shown = await _result_line(stage, "/patterns/accordion.html")
        assert "Opened: Section 2" in shown and "Refunds go back to the card" in shown
        await _ok(stage, f"{win}__press", {"key": "Enter", "label": "Section 3"})
        assert "Opened: Section 3" in await _result_line(stage, "/patterns/accordion.html")
        # A panel that shows in the page's next frames (an animated accordion): the press's answer
        # comes after them, and so does the window read right after it.
        for _ in range(3):
            await _ok(stage, f"{win}__press", {"label": "Section 4"})
            assert "Invoices are kept for ten years" in await _result_line(stage, "/patterns/accordion.html")
            await _ok(stage, f"{win}__press", {"label": "Section 1"})
            assert "Invoices are kept" not in await _result_line(stage, "/patterns/accordion.html")
        await _ok(stage, f"{win}__navigate", {"url": site + "/patterns/tree.html"})
        await _ok(stage, f"{win}__press", {"label": "Billing"})
        assert "Opened: Billing" in await _result_line(stage, "/patterns/tree.html")
        await _ok(stage, f"{win}__press", {"label": "Refunds"})
        assert "Chose: Refunds" in await _result_line(stage, "/patterns/tree.html")


async def test_press_waits_for_what_it_presses_to_stop_moving(site: str, browser: BrowserProcess) -> None:
    # The notice slides in over about 25 frames; "Renew" is pressed at once, as an agent does.
    async with _bridge(site, browser, "stdio", "/patterns/sliding.html") as stage:
        win = (await stage.tab_for("/patterns/sliding.html"))["id"]
        for _ in range(3):
            await _ok(stage, f"{win}__navigate", {"go": "reload"})
            await _ok(stage, f"{win}__press", {"label": "Show the renewal notice"})
            await _ok(stage, f"{win}__press", {"label": "Renew"})
            shown = await _result_line(stage, "/patterns/sliding.html")
            assert "Renewed" in shown and "still moved" not in shown, shown


async def test_hover_opens_a_menu_whose_item_is_then_pressed(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/patterns/menu.html") as stage:
        win = (await stage.tab_for("/patterns/menu.html"))["id"]
        assert "Export" not in await _result_line(stage, "/patterns/menu.html"), "the submenu is closed at first"
        await _ok(stage, f"{win}__hover", {"label": "File"})
        # Answered once the menu is readable: the window shows its items at once.
        assert "Export" in await _result_line(stage, "/patterns/menu.html")
        await _ok(stage, f"{win}__press", {"label": "Export"})
        assert "Chose: Export" in await _result_line(stage, "/patterns/menu.html")
        await _ok(stage, f"{win}__hover", {"label": "View"})
        said = await _ok(stage, f"{win}__press", {"label": "Show closed"})
        assert "checked" in said, said
        assert "Show closed: on" in await _result_line(stage, "/patterns/menu.html")


async def test_press_takes_a_suggestion_and_a_clickable_div(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/patterns/autocomplete.html") as stage:
        win = (await stage.tab_for("/patterns/autocomplete.html"))["id"]
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "City", "value": "Pa"}]})
        assert "Paris" in await _result_line(stage, "/patterns/autocomplete.html")
        await _ok(stage, f"{win}__press", {"label": "Paris"})
        assert "Chose: Paris" in await _result_line(stage, "/patterns/autocomplete.html")
        await _ok(stage, f"{win}__navigate", {"url": site + "/patterns/clickable.html"})
        names = await stage.tool_names()
        assert f"{win}__press" in names
        await _ok(stage, f"{win}__press", {"label": "Open the weekly report"})
        assert "Opened: weekly report" in await _result_line(stage, "/patterns/clickable.html")
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Search mail", "value": "invoices"}]})
        await _ok(stage, f"{win}__press", {"label": "Search"})
        assert "Searched: invoices" in await _result_line(stage, "/patterns/clickable.html")
        # Pictures drawn by CSS on empty elements: named from their class or id, pressed by it.
        await _ok(stage, f"{win}__press", {"label": "pin"})
        assert "Pinned" in await _result_line(stage, "/patterns/clickable.html")
        await _ok(stage, f"{win}__press", {"label": "send note"})
        assert "Note sent" in await _result_line(stage, "/patterns/clickable.html")
        # Its picture swapped on hover for one not loaded yet: the press waits for it to be drawn.
        await _ok(stage, f"{win}__press", {"label": "more"})
        assert "More opened" in await _result_line(stage, "/patterns/clickable.html")
        # Icon-font buttons: named only by a private-use glyph, hit-tested on their `::before`.
        await _ok(stage, f"{win}__press", {"label": "trash can"})
        assert "Draft discarded" in await _result_line(stage, "/patterns/clickable.html")
        await _ok(stage, f"{win}__press", {"label": "Send draft"})
        assert "Draft sent" in await _result_line(stage, "/patterns/clickable.html")


async def test_keys_submit_close_and_move(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/patterns/keys.html") as stage:
        win = (await stage.tab_for("/patterns/keys.html"))["id"]
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Subject", "value": "Printer"}]})
        said = await _ok(stage, f"{win}__press", {"key": "Enter", "label": "Subject"})
        assert said.startswith("Pressed Enter in"), said
        assert "Saved: Printer" in await _result_line(stage, "/patterns/keys.html")
        await _ok(stage, f"{win}__press", {"key": "Escape"})
        shown = await _result_line(stage, "/patterns/keys.html")
        assert "Tip closed" in shown and "press Escape to close" not in shown
        await _ok(stage, f"{win}__press", {"key": "ArrowDown", "label": "Queue"})
        assert "Queue: Network" in await _result_line(stage, "/patterns/keys.html")
        # A menu that opens 300 ms after the pointer came is read before the hover answers.
        await _ok(stage, f"{win}__hover", {"label": "More"})
        assert "Print the note" in await _result_line(stage, "/patterns/keys.html")


async def test_fill_sets_several_options_and_says_what_the_page_holds(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/patterns/multiselect.html") as stage:
        win = (await stage.tab_for("/patterns/multiselect.html"))["id"]
        said = await _ok(
            stage,
            f"{win}__fill",
            {
                "fields": [
                    {"label": "Queues", "value": ["Billing", "Network"]},
                    {"label": "Tags", "value": ["urgent"]},
                    {"label": "Country", "value": "France"},
                ]
            },
        )
        assert (
            said.startswith("Filled \u201cQueues\u201d, \u201cTags\u201d, \u201cCountry\u201d.")
            and "not what was given" not in said
        ), said
        assert "Billing, Network; urgent; France" in await _result_line(stage, "/patterns/multiselect.html")
        refused = await _error(stage, f"{win}__fill", {"fields": [{"label": "Country", "value": ["France", "Spain"]}]})
        assert refused["code"] == "validation_failed" and "one value" in refused["message"], refused


async def test_refusals_say_why_and_send_nothing(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/patterns/autocomplete.html") as stage:
        tab = await stage.tab_for("/patterns/autocomplete.html")
        win = tab["id"]
        unknown = await _error(stage, f"{win}__press", {"key": "Hyperspace"})
        assert unknown["code"] == "validation_failed" and "Hyperspace" in unknown["message"], unknown
        # press with neither what to press nor a key: said, nothing pressed.
        neither = await _error(stage, f"{win}__press", {"blockId": "b1"})
        assert neither["code"] == "validation_failed" and neither["fields"][0]["field"] == "label", neither
        assert (await stage.tab_for("/patterns/autocomplete.html"))["version"] == tab["version"]
    async with _bridge(site, browser, "stdio", "/patterns/keys.html") as stage:
        win = (await stage.tab_for("/patterns/keys.html"))["id"]
        covered = await _error(stage, f"{win}__press", {"label": "Archive"})
        assert covered["code"] == "action_not_available" and "covered by" in covered["message"], covered
        assert "Saving" in covered["message"], "it says what covers the button"
        assert "Archived" not in await _result_line(stage, "/patterns/keys.html")
        # A veil on its way out (gone 700 ms after it came) is waited for, as a person waits.
        await _ok(stage, f"{win}__press", {"label": "Check again"})
        await _ok(stage, f"{win}__press", {"label": "Send report"})
        assert "Report sent" in await _result_line(stage, "/patterns/keys.html")
    async with _bridge(site, browser, "stdio", "/patterns/keys.html", "--human-submit") as stage:
        win = (await stage.tab_for("/patterns/keys.html"))["id"]
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Subject", "value": "Printer"}]})
        kept = await _error(stage, f"{win}__press", {"key": "Enter", "label": "Subject"})
        assert kept["code"] == "action_not_available" and "--human-submit" in kept["message"], kept
        kept = await _error(stage, f"{win}__press", {"label": "Save note"})
        assert kept["code"] == "action_not_available" and "--human-submit" in kept["message"], kept
        assert "Saved" not in await _result_line(stage, "/patterns/keys.html")
        tab = await stage.tab_for("/patterns/keys.html")
        for action, args in (("hover", {"label": "More"}), ("press", {"key": "Escape"})):
            stale = await _error(stage, f"{win}__{action}", {**args, "expectedVersion": tab["version"] - 1})
            assert stale["code"] == "stale_state", stale
        assert "Tip closed" not in await _result_line(stage, "/patterns/keys.html"), "a refused key is not sent"


async def test_focus_and_blur_handlers_run_in_a_background_tab_when_attached(
    site: str, browser: BrowserProcess
) -> None:
    async with _bridge(site, browser, "stdio", "/patterns/keys.html") as stage:
        win = (await stage.tab_for("/patterns/keys.html"))["id"]
        # Another tab comes to the front: the bridge's tab is in the background, as a person's often is.
        other = (await stage.call("app__open_tab", {})).structured_content["openedWindowIds"][0]
        await _ok(stage, f"{other}__focus", {})
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Subject", "value": "Printer"}]})
        await _ok(stage, f"{win}__press", {"key": "Tab"})
        shown = await _result_line(stage, "/patterns/keys.html")
        assert "focus (page focused: true), blur" in shown, shown
        # A text box is pressed as a person clicks into it: it takes the focus.
        await _ok(stage, f"{win}__press", {"label": "Subject"})
        shown = await _result_line(stage, "/patterns/keys.html")
        assert "blur, focus (page focused: true)" in shown, shown
        # A button of a page that follows the pointer: a background tab draws no frames, so its
        # moves wait (pointer.MOVE_WAIT); the press still comes after the pointer arrived.
        for _ in range(2):  # the pointer leaves it in between (pointerleave forgets it came)
            said = await _ok(stage, f"{win}__press", {"label": "Sign off"})
            assert "by script" not in said, said
            shown = await _result_line(stage, "/patterns/keys.html")
            assert "Signed off (the pointer came first)" in shown, shown
            await _ok(stage, f"{win}__press", {"label": "Send report"})
            assert "Report sent" in await _result_line(stage, "/patterns/keys.html")


@pytest.mark.parametrize("path", ["/partner.html", "/"])
async def test_press_and_keys_reach_into_frames(site: str, browser: BrowserProcess, path: str) -> None:
    """`/partner.html` embeds the knowledge base from another site (an out-of-process iframe, its own
    session); `/` embeds it from its own origin (the page's session, the page's viewport)."""
    async with _bridge(site, browser, "stdio", path) as stage:
        win = (await stage.tab_for(path))["id"]
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Search articles", "value": "refund"}]})
        said = await _ok(stage, f"{win}__press", {"label": "Search"})
        assert "by script" not in said, "a trusted click reached the frame"
        await stage.wait_windows(lambda d: "Refunding a duplicate card charge" in json.dumps(d))
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Search articles", "value": "password"}]})
        await _ok(stage, f"{win}__press", {"key": "Enter", "label": "Search articles"})
        await stage.wait_windows(lambda d: "How to reset a customer password" in json.dumps(d))


async def test_fill_says_what_a_field_holds_when_the_page_changed_it(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/patterns/keys.html") as stage:
        win = (await stage.tab_for("/patterns/keys.html"))["id"]
        said = await _ok(stage, f"{win}__fill", {"fields": [{"label": "Reference", "value": "ab 12 c"}]})
        assert "\u201cReference\u201d holds \u201cAB12C\u201d" in said, said
        assert "ab 12 c" not in said.split("holds")[1], "it never says the field holds what it does not"


async def test_submit_where_no_form_is_shown_says_what_sends_it(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/patterns/autocomplete.html") as stage:
        win = (await stage.tab_for("/patterns/autocomplete.html"))["id"]
        names = await stage.tool_names()
        assert {f"{win}__fill", f"{win}__press", f"{win}__submit"} <= set(names), names
        refused = await _error(stage, f"{win}__submit", {})
        assert refused["code"] == "validation_failed" and "shows no form" in refused["message"], refused
        assert "press the control that sends it" in refused["message"]
        assert "removed it or navigated" not in refused["message"]


async def test_press_toggles_a_checkbox_and_says_its_state(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/signin.html") as stage:
        win = (await stage.tab_for("/plain/signin.html"))["id"]
        said = await _ok(stage, f"{win}__press", {"label": "Remember me"})
        assert "It is now checked." in said, said
        said = await _ok(stage, f"{win}__press", {"label": "Remember me"})
        assert "It is now unchecked." in said, said


async def test_a_key_typed_into_a_secret_field_is_not_said_back(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/signin.html") as stage:
        win = (await stage.tab_for("/plain/signin.html"))["id"]
        said = await _ok(stage, f"{win}__press", {"key": "Q", "label": "Password"})
        assert "Pressed Q" not in said and "sensitive" in said, said
        said = await _ok(stage, f"{win}__press", {"key": "z"})
        assert "Pressed z" not in said and "sensitive" in said, said
        fields = {
            i["label"]: i for b in (await stage.tab_for("/plain/signin.html"))["blocks"] if b["type"] == "fields"
            for i in b["items"]
        }  # fmt: skip
        assert fields["Password"]["sensitive"] and fields["Password"]["value"] not in ("", "Qz"), fields["Password"]


async def test_the_wheel_scrolls_what_the_pointer_is_on_and_says_how_far(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/patterns/agreement.html") as stage:
        window = await stage.tab_for("/patterns/agreement.html")
        win = window["id"]
        shown = {i["label"]: i for b in window["blocks"] if b["type"] == "fields" for i in b["items"]}
        assert shown["Terms"].get("disabled") is True and shown["I agree"].get("disabled") is True, shown
        refused = await _error(stage, f"{win}__press", {"label": "I agree"})
        assert refused["code"] == "validation_failed", refused  # disabled until the terms are read
        said = await _ok(stage, f"{win}__hover", {"label": "Terms", "wheel": 100_000})
        moved = int(said.split("scrolled what is there ")[1].split(" px down")[0])
        assert moved > 500, said  # 60 lines in a box of 6 em: the whole way, as the page saw
        assert "Terms read to the end" in await _result_line(stage, "/patterns/agreement.html")
        again = await _ok(stage, f"{win}__hover", {"label": "Terms", "wheel": 400})
        assert "The wheel scrolled nothing" in again, again  # at its end: nothing moved, and it says so
        window = await stage.tab_for("/patterns/agreement.html")
        shown = {i["label"]: i for b in window["blocks"] if b["type"] == "fields" for i in b["items"]}
        assert "disabled" not in shown["I agree"], shown  # the page enabled it
        await _ok(stage, f"{win}__press", {"label": "I agree"})
        assert "Agreed" in await _result_line(stage, "/patterns/agreement.html")
        up = await _ok(stage, f"{win}__hover", {"label": "Terms", "wheel": -300})
        assert " px up" in up, up
        bad = await _error(stage, f"{win}__hover", {"label": "Terms", "wheel": 10**9})
        assert bad["code"] == "validation_failed", bad


async def test_a_key_answers_after_what_it_queued_has_run(site: str, browser: BrowserProcess, transport: str) -> None:
    # The editor learns its selection in a timer after selectionchange: "Bold" right after the
    # key's answer styles the selection the key made, as after a person's key. (This page does
    # not lose the race MiniWoB's text-editor, Quill, lost in 3 of 13 episodes before a key's
    # answer waited two frames: that bench is where the wait is measured.)
    async with _bridge(site, browser, transport, "/patterns/agreement.html") as stage:
        win = (await stage.tab_for("/patterns/agreement.html"))["id"]
        for _ in range(3):
            await _ok(stage, f"{win}__press", {"key": "Control+a", "label": "Message"})
            await _ok(stage, f"{win}__press", {"label": "Bold"})
            assert "Bold: Harbor keeps your data safe" in await _result_line(stage, "/patterns/agreement.html")
            await _ok(stage, f"{win}__press", {"key": "Control+Home"})
            await _ok(stage, f"{win}__press", {"key": "Control+Shift+ArrowRight"})
            await _ok(stage, f"{win}__press", {"label": "Bold"})
            assert 'Bold: Harbor"' in await _result_line(stage, "/patterns/agreement.html")


async def test_a_dialog_the_page_opens_before_the_click_is_not_said_to_be_its_doing(
    site: str, browser: BrowserProcess
) -> None:
    # "Send feedback" is below the fold: the press scrolls it into view, and the page answers the
    # scroll with an alert before the button goes down. Nothing was pressed, and the answer says so.
    async with _bridge(site, browser, "stdio", "/patterns/survey.html") as stage:
        win = (await stage.tab_for("/patterns/survey.html"))["id"]
        refused = await _error(stage, f"{win}__press", {"label": "Send feedback"})
        assert refused["code"] == "blocked_by_modal", refused
        dialog = refused["blockingWindowId"]
        assert refused["message"].startswith("The button \u201cSend feedback\u201d was not pressed: "), refused
        assert f"an alert dialog ({dialog})" in refused["message"], refused
        await _ok(stage, f"{dialog}__accept", {})
        assert "Sent: 0" in await _result_line(stage, "/patterns/survey.html"), "the click never went out"
        said = await _ok(stage, f"{win}__press", {"label": "Send feedback"})
        assert said.startswith("Pressed the button \u201cSend feedback\u201d"), said
        assert "Sent: 1" in await _result_line(stage, "/patterns/survey.html")


async def test_actions_called_back_to_back_meet_the_page_at_a_persons_pace(site: str, browser: BrowserProcess) -> None:
    # The editor learns its selection 150 ms after a key (Quill 1.1: 100 ms), and its "Underline"
    # button puts back what it learnt. A press sent right after the key's answer (a client that
    # calls tools back to back, or a model's two calls of one turn) came before that and underlined
    # nothing; actions on a tab are a person's pace apart (`actions.PERSON_GAP`).
    async with _bridge(site, browser, "stdio", "/patterns/editor.html") as stage:
        win = (await stage.tab_for("/patterns/editor.html"))["id"]
        for _ in range(3):
            await _ok(stage, f"{win}__press", {"key": "Control+a", "label": "Note"})
            await _ok(stage, f"{win}__press", {"label": "Underline"})
            shown = await _result_line(stage, "/patterns/editor.html")
            assert "Underlined: \u201cShip the harbor order today\u201d" in shown, shown
            await _ok(stage, f"{win}__press", {"key": "Control+Home", "label": "Note"})
            await _ok(stage, f"{win}__press", {"label": "Underline"})
            shown = await _result_line(stage, "/patterns/editor.html")
            assert "Underlined: nothing (no text was selected)" in shown, shown


async def test_a_site_header_menu_search_and_disclosure_are_used_as_a_person_would(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/patterns/navbar.html") as stage:
        win = (await stage.tab_for("/patterns/navbar.html"))["id"]
        said = await _ok(stage, f"{win}__press", {"label": "Menu"})
        assert "It is now expanded." in said, said
        assert "Menu: open" in await _result_line(stage, "/patterns/navbar.html")
        await _ok(stage, f"{win}__press", {"label": "Account"})
        assert "Opened: Account" in await _result_line(stage, "/patterns/navbar.html")
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Search the help desk", "value": "boots"}]})
        await _ok(stage, f"{win}__press", {"label": "Go"})
        assert "Searched: boots" in await _result_line(stage, "/patterns/navbar.html")
        # A <summary> opens its <details>: the answer says so, as for an ARIA disclosure.
        said = await _ok(stage, f"{win}__press", {"label": "Shipping details"})
        assert "It is now expanded." in said, said
        shown = await _result_line(stage, "/patterns/navbar.html")
        assert "Shipping details: shown" in shown and "every weekday at noon" in shown, shown
        said = await _ok(stage, f"{win}__press", {"label": "Shipping details"})
        assert "It is now collapsed." in said, said


async def test_a_cookie_banner_covers_only_what_it_covers_in_a_laptops_viewport(
    site: str, browser: BrowserProcess
) -> None:
    # In headless Chromium's own 780 x 437 the banner's 160 px covered the plan cards too.
    async with _bridge(site, browser, "stdio", "/patterns/consent.html") as stage:
        win = (await stage.tab_for("/patterns/consent.html"))["id"]
        said = await _ok(stage, f"{win}__press", {"label": "Pro"})
        assert "It is now checked." in said, said
        assert "Plan: pro" in await _result_line(stage, "/patterns/consent.html")
        refused = await _error(stage, f"{win}__press", {"label": "Checkout"})
        assert refused["code"] == "action_not_available", refused
        assert "covered by" in refused["message"] and "Accept cookies" in refused["message"], refused
        assert "Plan: pro" in await _result_line(stage, "/patterns/consent.html"), "nothing was clicked"
        await _ok(stage, f"{win}__press", {"label": "Accept cookies"})
        await _ok(stage, f"{win}__press", {"label": "Checkout"})
        assert "Checked out" in await _result_line(stage, "/patterns/consent.html")


async def test_check_boxes_in_table_rows_show_their_state_and_are_filled_or_pressed(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # An admin table's "Select row" boxes: the cells read "Select row" whether ticked or not, and
    # fill found no field of that name.
    path = "/patterns/rows.html"
    async with _bridge(site, browser, transport, path) as stage:
        window = await stage.tab_for(path)
        win = window["id"]
        table = next(b for b in window["blocks"] if b["type"] == "table")
        assert [r[0] for r in table["rows"]] == ["Select row", "Select row", "Select row (checked)"]
        said = await _ok(stage, f"{win}__press", {"label": "Select row #2"})
        assert "It is now checked." in said, said
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Select row #3", "value": False}]})
        window = await stage.tab_for(path)
        table = next(b for b in window["blocks"] if b["type"] == "table")
        assert [r[0] for r in table["rows"]] == ["Select row", "Select row (checked)", "Select row"]
        assert "Notify the requester (checked)" in _text(window), "a list item's check box too"
        await _ok(stage, f"{win}__press", {"label": "Close selected"})
        assert "Closed: VPN down" in await _result_line(stage, path)
        # "Select all #1": the mail table's header box below is named so too (a guess).
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Select all #1", "value": True}]})
        await _ok(stage, f"{win}__press", {"label": "Close selected"})
        assert "Closed: Printer jam, VPN down, New laptop" in await _result_line(stage, path)
        # Boxes with no name at all: named by the row's first words (a guess), the header's "Select all".
        window = await stage.tab_for(path)
        mail = [b for b in window["blocks"] if b["type"] == "table"][1]
        assert mail["columns"][0] == "Select all (guessed)", mail
        assert [r[0] for r in mail["rows"]] == ["Select Ann (guessed)", "Select Rui (checked, guessed)"], mail
        await _ok(stage, f"{win}__press", {"label": "Select Ann"})
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Select Rui", "value": False}]})
        await _ok(stage, f"{win}__press", {"label": "Archive selected"})
        assert "Archived: Ann" in await _result_line(stage, path)
        await _ok(stage, f"{win}__press", {"label": "Select all #2"})
        await _ok(stage, f"{win}__press", {"label": "Archive selected"})
        assert "Archived: Ann, Rui" in await _result_line(stage, path)


async def test_todomvc_items_are_ticked_by_their_words_and_deleted_by_the_glyph_their_hover_shows(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # TodoMVC's markup: an item's box has no name (its words are a <label> beside it), and its
    # delete button shows only under the pointer, drawn by `::after`. The window showed no box,
    # and a press on "×" was refused as covered: the hit test lands on the pseudo-element.
    path = "/patterns/todos.html"
    async with _bridge(site, browser, transport, path) as stage:
        window = await stage.tab_for(path)
        win = window["id"]
        items = next(b["items"] for b in window["blocks"] if b["type"] == "list")
        assert items == ["Buy milk", "Walk the dog (checked)", "Call the plumber"], window["blocks"]
        said = await _ok(stage, f"{win}__press", {"label": "Buy milk"})
        assert "checkbox" in said, said
        assert "Done: Buy milk" in await _result_line(stage, path)
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Walk the dog", "value": False}]})
        assert "Not done: Walk the dog" in await _result_line(stage, path)
        window = await stage.tab_for(path)
        items = next(b["items"] for b in window["blocks"] if b["type"] == "list")
        assert [i.split("\n")[0] for i in items] == ["Buy milk (checked)", "Walk the dog", "Call the plumber"], items
        await _ok(stage, f"{win}__hover", {"label": "Call the plumber"})
        window = await stage.tab_for(path)
        items = next(b["items"] for b in window["blocks"] if b["type"] == "list")
        assert items[-1] == "Call the plumber\n×", items
        await _ok(stage, f"{win}__press", {"label": "×"})
        assert "Deleted: Call the plumber" in await _result_line(stage, path)


async def test_a_file_inside_an_open_folder_of_nested_lists_is_pressed_and_the_folder_closes(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # jquery.treeview's markup (MiniWoB's navigate-tree): every <li> listens to clicks. A file
    # inside an open folder was only words of the folder's item: no press took it; and a press on
    # the open folder aimed at its item's centre, where a file inside it is.
    path = "/patterns/files.html"
    async with _bridge(site, browser, transport, path) as stage:
        win = (await stage.tab_for(path))["id"]
        await _ok(stage, f"{win}__press", {"label": "Reports"})
        assert "Opened Reports" in await _result_line(stage, path)
        await _ok(stage, f"{win}__press", {"label": "Drafts"})
        said = await _ok(stage, f"{win}__press", {"label": "April draft"})
        assert "\u201c\U0001f4c4 April draft\u201d" in said, said
        assert "Opened file April draft" in await _result_line(stage, path)
        await _ok(stage, f"{win}__press", {"label": "Reports"})
        window = await stage.tab_for(path)
        assert "Closed Reports" in _text(window) and "April draft" not in _text(window), window["blocks"]


async def test_every_posts_icon_buttons_are_shown_and_pressed_past_the_tenth_post(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # 56 nameless icon buttons: those past the 40th were never named, so the last posts showed none.
    path = "/patterns/feed.html"
    async with _bridge(site, browser, transport, path) as stage:
        window = await stage.tab_for(path)
        assert _text(window).count("like (guessed)") == 14, window["blocks"]
        await _ok(stage, f"{window['id']}__press", {"label": "like #14"})
        assert "like Uma" in await _result_line(stage, path)


async def test_a_button_half_under_another_is_pressed_where_it_shows_one_all_under_a_banner_is_not(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # MiniWoB's click-button-sequence places its buttons at random: one may lie over most of the
    # other. The press aimed at the centre alone and was refused as covered.
    path = "/patterns/overlap.html"
    async with _bridge(site, browser, transport, path) as stage:
        win = (await stage.tab_for(path))["id"]
        await _ok(stage, f"{win}__press", {"label": "Back"})
        assert "Pressed Back" in await _result_line(stage, path)
        refused = await _error(stage, f"{win}__press", {"label": "Hidden"})
        assert refused["code"] == "action_not_available" and "div#banner" in refused["message"], refused
        assert "Pressed Back" in await _result_line(stage, path), "nothing was done"


async def test_a_press_the_window_cannot_show_says_the_window_is_still_at_the_version_read(
    site: str, browser: BrowserProcess
) -> None:
    # MiniWoB's odd-or-even: the choice turns blue by a class, and nothing the window shows changes.
    # The answer says so ("still"), and the next read is the very window read before: an agent that
    # read that version need not read it again.
    path = "/patterns/marked.html"
    async with _bridge(site, browser, "stdio", path) as stage:
        window = await stage.tab_for(path)
        win, version = window["id"], window["version"]
        said = await _ok(stage, f"{win}__press", {"label": "Odd #1", "expectedVersion": version})
        assert said == f"Pressed the button \u201cOdd\u201d. {win} is still at version {version}.", said
        said = await _ok(stage, f"{win}__press", {"label": "Even #2", "expectedVersion": version})
        assert said.endswith(f"{win} is still at version {version}."), said
        again = await stage.tab_for(path)
        assert again["version"] == version and again["blocks"] == window["blocks"]
        # The presses did land (the page's own check counts them), and a change is not "still".
        said = await _ok(stage, f"{win}__press", {"label": "Check"})
        checked = await stage.tab_for(path)
        assert "Marked right: 2 of 2" in _text(checked)
        assert checked["version"] > version and said.endswith(f"{win} is at version {checked['version']}."), said


def _but_values(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**b, "items": [{k: v for k, v in i.items() if k != "value"} for i in b["items"]]}
        if b["type"] == "fields"
        else b
        for b in blocks
    ]


async def test_a_fill_that_changed_nothing_else_says_so_since_the_version_it_found(
    site: str, browser: BrowserProcess
) -> None:
    # MiniWoB's forms: a field takes its value and nothing else on the page moves. The answer says
    # so, from the version the fill found: an agent that read it knows the window without a read.
    path = "/patterns/nearby-labels.html"
    async with _bridge(site, browser, "stdio", path) as stage:
        window = await stage.tab_for(path)
        win, version = window["id"], window["version"]
        said = await _ok(
            stage, f"{win}__fill", {"fields": [{"label": "Desk", "value": "B-12"}], "expectedVersion": version}
        )
        after = await stage.tab_for(path)
        assert said == (
            f"Filled \u201cDesk\u201d; nothing else changed since version {version}. "
            f"{win} is at version {after['version']}."
        ), said
        assert after["version"] > version and _but_values(after["blocks"]) == _but_values(window["blocks"])
        assert [
            i["value"] for b in after["blocks"] if b["type"] == "fields" for i in b["items"] if i["label"] == "Desk"
        ] == ["B-12"]
    # A page whose own listeners answer the typing ("Seen by the page: …"): not said.
    path = "/patterns/fields.html"
    async with _bridge(site, browser, "stdio", path) as stage:
        win = (await stage.tab_for(path))["id"]
        said = await _ok(stage, f"{win}__fill", {"fields": [{"label": "Summary", "value": "Quiet night"}]})
        assert "nothing else" not in said and said.startswith("Filled \u201cSummary\u201d."), said
        assert "summary=Quiet night" in _text(await stage.tab_for(path))


async def test_controls_drawn_around_hidden_inputs_are_pressed_by_their_labels(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # The inputs are `display: none`: the tree holds their labels only, and the window held
    # nothing of them; an empty editor's hint, drawn by CSS, read as its value.
    path = "/patterns/drawn.html"
    async with _bridge(site, browser, transport, path) as stage:
        window = await stage.tab_for(path)
        win = window["id"]
        assert "\u2610 Follow this ticket" in _text(window) and "Summary History" in _text(window)
        comment = [
            i for b in window["blocks"] if b["type"] == "fields" for i in b["items"] if i["label"] == "Write a comment…"
        ]
        assert [i["value"] for i in comment] == [""], window["blocks"]
        await _ok(stage, f"{win}__press", {"label": "Follow this ticket"})
        assert "Following" in await _result_line(stage, path)
        assert "\u2611 Follow this ticket" in _text(await stage.tab_for(path))
        await _ok(stage, f"{win}__press", {"label": "History"})
        window = await stage.tab_for(path)
        assert "Opened by Ann on Monday." in _text(window) and "floor 2" not in _text(window)
        await _ok(stage, f"{win}__press", {"label": "★ #4"})
        assert "Rated 4" in await _result_line(stage, path)
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Write a comment…", "value": "Fixed, thanks"}]})
        await _ok(stage, f"{win}__press", {"label": "Post"})
        assert "Posted: Fixed, thanks" in await _result_line(stage, path)


async def test_a_combobox_whose_list_opens_on_a_click_is_pressed_open_and_its_option_picked(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # Select2's way: a <span role=combobox> holding no options; press refused it as no button.
    path = "/patterns/combobox.html"
    async with _bridge(site, browser, transport, path) as stage:
        win = (await stage.tab_for(path))["id"]
        said = await _ok(stage, f"{win}__press", {"label": "Team"})
        assert "It is now expanded." in said, said
        await _ok(stage, f"{win}__press", {"label": "Hardware"})
        assert "Team: Hardware" in await _result_line(stage, path)
