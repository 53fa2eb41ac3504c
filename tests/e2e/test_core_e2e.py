"""End to end: the sample site in real Chromium, the bridge on stdio, a real MCP client."""

from __future__ import annotations

import base64
import json
import sys

import anyio
import pytest

from tests.support.stage import Stage, address_of, tool_started, user_navigates
from webmcp.tools.records import record_for

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

WINDOW_KEYS = {"id", "title", "modal", "ownerId", "version", "summary", "blocks"}


def _window(doc: dict, window_id: str) -> dict:
    return next(w for w in doc["windows"] if w["id"] == window_id)


async def _home(stage: Stage) -> dict:
    """The home tab's window, once its page tools are all there."""
    await stage.wait_tools(
        lambda names: any(n.endswith("__list_tickets") for n in names) and any(n.endswith("__search_kb") for n in names)
    )
    return await stage.tab_for("/")


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_tab_is_published_as_a_window_with_its_page_content(stage: Stage) -> None:
    home = await _home(stage)
    doc = await stage.wait_windows(lambda d: any(b["type"] == "notice" for b in _window(d, home["id"])["blocks"]))
    window = _window(doc, home["id"])
    assert set(window) == WINDOW_KEYS
    assert window["id"] in doc["operableWindowIds"]
    assert window["modal"] is False and window["ownerId"] is None
    assert window["title"].startswith("Harbor Help Desk")
    # The summary names the page; its tools are in tools/list, not repeated in it.
    summary = window["summary"]
    assert summary.startswith("Shows \u201cHarbor Help Desk\u201d") and "page tool" not in summary, summary
    types = [b["type"] for b in window["blocks"]]
    assert {"text", "fields", "table", "list", "notice", "media"} <= set(types)
    table = next(b for b in window["blocks"] if b["type"] == "table")
    assert table["columns"] == ["ID", "Subject", "Status", "Priority"]
    assert ["#101", "Cannot reset my password", "open", "high"] in table["rows"]
    ids = [b["id"] for b in window["blocks"] if "id" in b]
    assert len(ids) == len(set(ids))
    assert address_of(window) == stage.site + "/"


async def test_page_tools_are_listed_with_schemas_and_mapped_annotations(stage: Stage) -> None:
    window = await _home(stage)
    tools = {t.name: t for t in (await stage.client.list_tools()).tools}
    win = window["id"]
    read_only = tools[f"{win}__list_tickets"]
    assert read_only.annotations.read_only_hint is True
    assert read_only.annotations.destructive_hint is None, "said only where it means something (not read-only)"
    assert read_only.annotations.title is None, "the title is said once, beside the name"
    # Destructive is MCP's default: a consequential tool says nothing to the contrary.
    closing = tools[f"{win}__close_ticket"].annotations
    assert closing is None or closing.destructive_hint in (None, True)
    assert tools[f"{win}__add_note"].annotations.destructive_hint is False
    schema = tools[f"{win}__get_ticket"].input_schema
    assert schema["required"] == ["id"] and schema["properties"]["id"]["type"] == "integer"
    assert schema["properties"]["expectedVersion"]["type"] == "integer"
    assert tools[f"{win}__get_ticket"].output_schema["properties"]["result"]["type"] == "object"
    assert f"{win}__search_kb" in tools, "the same-origin iframe's tool belongs to its tab"
    assert f"{win}__create_ticket" in tools, "declarative form tools are mirrored"
    for action in ("focus", "navigate", "close", "read_content", "screenshot"):
        assert f"{win}__{action}" in tools
    assert "app__open_tab" in tools
    assert all(
        t.title
        for name, t in tools.items()
        if name.startswith("app__") or "__" in name and name.split("__")[1] in ("focus", "navigate", "read_content")
    )
    # Issue 40: the tab's browser and window actions together, as the wire carries them, in 4 KiB.
    actions = [t for n, t in tools.items() if n.startswith(f"{win}__") and record_for("tab", n.split("__", 1)[1])]
    assert {"fill", "press", "hover", "submit"} <= {t.name.split("__", 1)[1] for t in actions}
    wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in actions]
    assert sum(len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode()) for t in wire) <= 4096


async def test_page_tool_call_returns_the_pages_answer_in_result(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    result = await stage.call(f"{win}__get_ticket", {"id": 101})
    assert not result.is_error
    assert result.structured_content["result"]["subject"] == "Cannot reset my password"
    # A host that shows the model only `content` still gives it the page's answer, as JSON,
    # and the message once.
    message, _, data = result.content[0].text.partition("\n")
    assert message == result.structured_content["message"]
    assert json.loads(data) == {k: v for k, v in result.structured_content.items() if k != "message"}
    assert result.content[0].text.count(message) == 1
    text = await stage.call(f"{win}__add_note", {"id": 101, "text": "Called the customer"})
    assert text.structured_content["result"] == {"value": "Note added to ticket #101"}
    frame = await stage.call(f"{win}__search_kb", {"query": "refund"})
    assert "Refunding a duplicate card charge" in frame.structured_content["result"]["titles"]


async def test_page_tool_that_throws_is_an_error_with_the_pages_message(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    result = await stage.call(f"{win}__explode")
    assert result.is_error
    assert result.structured_content["code"] == "page_error"
    assert "Ticket database is on fire" in result.structured_content["message"]


async def test_bad_input_is_refused_per_field_before_the_page_sees_it(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    page = await stage.user_page("/")
    before = await page.locator("#activity li").count()
    wrong_type = await stage.call(f"{win}__get_ticket", {"id": "one hundred"})
    assert wrong_type.is_error and wrong_type.structured_content["code"] == "validation_failed"
    assert wrong_type.structured_content["fields"][0]["field"] == "id"
    missing = await stage.call(f"{win}__close_ticket", {"id": 101})
    assert missing.structured_content["fields"] == [{"field": "resolution", "error": "Required"}]
    # ... and which fields were wrong, in JSON (null, not None).
    assert json.loads(missing.content[0].text.partition("\n")[2])["fields"] == missing.structured_content["fields"]
    bad_version = await stage.call(f"{win}__list_tickets", {"expectedVersion": "7"})
    assert bad_version.structured_content["code"] == "validation_failed"
    assert await page.locator("#activity li").count() == before, "the page logged a call it should not have got"


async def test_unknown_tools_and_windows_get_structured_errors(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    no_tool = await stage.call(f"{win}__fly_to_the_moon")
    assert no_tool.structured_content["code"] == "action_not_available"
    no_window = await stage.call("tab-999__navigate")
    assert no_window.structured_content["code"] == "window_not_found"
    malformed = await stage.call("reload")
    assert malformed.structured_content["code"] == "action_not_available"


async def test_write_with_a_stale_version_is_refused_and_has_no_effect(stage: Stage) -> None:
    window = await _home(stage)
    page = await stage.user_page("/")
    await page.fill("#subject", "Printer on fire")
    doc = await stage.wait_windows(lambda d: _window(d, window["id"])["version"] > window["version"])
    current = _window(doc, window["id"])["version"]
    refused = await stage.call(
        f"{window['id']}__close_ticket",
        {"id": 101, "resolution": "done", "expectedVersion": window["version"]},
    )
    assert refused.is_error and refused.structured_content["code"] == "stale_state"
    assert refused.structured_content["currentVersion"] >= current
    ticket = await stage.call(f"{window['id']}__get_ticket", {"id": 101})
    assert ticket.structured_content["result"]["status"] == "open"


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_user_edit_raises_version_and_notifies(stage: Stage) -> None:
    window = await _home(stage)
    seen = stage.mcp.notifications.count("resource_updated")
    page = await stage.user_page("/")
    await page.fill("#subject", "Refund for order 5512")
    await stage.mcp.notifications.wait_for("resource_updated", after=seen)
    doc = await stage.wait_windows(
        lambda d: any(
            item["value"] == "Refund for order 5512"
            for b in _window(d, window["id"])["blocks"]
            if b["type"] == "fields"
            for item in b["items"]
        )
    )
    assert _window(doc, window["id"])["version"] > window["version"]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_late_tool_and_self_removing_tool_send_tools_list_changed(site: str, browser, mode: str) -> None:
    from tests.support.stage import open_stage

    async with open_stage(site, browser, mode, start_path="/kitchen/") as stage:
        # The late tool comes 8 s after the page's script runs: well after open_tab has answered
        # (at most 5 s after the commit), so its arrival can only be told by tools/list_changed.
        # (Started from the command line, a busy machine could list it before the first tools/list.)
        opened = await stage.call("app__open_tab", {"url": site + "/?late=8000"})
        (win,) = opened.structured_content["openedWindowIds"]
        seen = stage.mcp.notifications.count("tools_list_changed")
        names = await stage.tool_names()
        assert f"{win}__list_tickets" in names and f"{win}__escalate_ticket" not in names
        names = await stage.wait_tools(lambda names: f"{win}__escalate_ticket" in names, timeout=30)
        # wait_tools also re-lists every 0.5 s: it may see the tool a moment before the notification
        # (sent once the tool set kept still, at most TOOLS_HOLD after) reaches the client. That it comes is
        # what is asserted.
        await stage.mcp.notifications.wait_for("tools_list_changed", after=seen)
        seen = stage.mcp.notifications.count("tools_list_changed")
        claimed = await stage.call(f"{win}__claim_welcome_bonus")
        assert claimed.structured_content["result"] == {"claimed": True}
        await stage.mcp.notifications.wait_for("tools_list_changed", after=seen)
        names = await stage.wait_tools(lambda names: f"{win}__claim_welcome_bonus" not in names)
        gone = await stage.call(f"{win}__claim_welcome_bonus")
        assert gone.structured_content["code"] == "action_not_available"


async def test_slow_tool_times_out_and_is_cancelled_in_the_page(site: str, browser) -> None:
    from tests.support.stage import open_stage

    async with open_stage(site, browser, "auto", "--tool-timeout", "1") as stage:
        win = (await _home(stage))["id"]
        result = await stage.call(f"{win}__slow_report", {"seconds": 20})
        assert result.is_error and result.structured_content["code"] == "action_timeout"
        page = await stage.user_page("/")
        # The page logs the abort of its tool's signal: the bridge told the browser to cancel.
        await page.wait_for_function(
            "[...document.querySelectorAll('#activity li')].some(li => /slow_report.*(abort|cancel)/i"
            ".test(li.textContent))",
            timeout=10_000,
        )
        quick = await stage.call(f"{win}__list_tickets", {})
        assert not quick.is_error, "the window works again after a timeout"


async def test_browser_actions_navigate_back_reload_focus(stage: Stage) -> None:
    window = await _home(stage)
    win = window["id"]
    nav = await stage.call(f"{win}__navigate", {"url": stage.site + "/ticket.html?id=102"})
    assert not nav.is_error, nav.structured_content
    doc = await stage.wait_windows(lambda d: "Ticket #102" in _window(d, win)["title"] + _window(d, win)["summary"])
    assert address_of(_window(doc, win)).endswith("/ticket.html?id=102")
    names = await stage.wait_tools(lambda n: f"{win}__ticket_details" in n and f"{win}__list_tickets" not in n)
    assert f"{win}__get_ticket" not in names
    back = await stage.call(f"{win}__navigate", {"go": "back"})
    assert not back.is_error
    await stage.wait_windows(lambda d: address_of(_window(d, win)) == stage.site + "/")
    assert not (await stage.call(f"{win}__navigate", {"go": "reload"})).is_error
    assert not (await stage.call(f"{win}__focus")).is_error
    forward = await stage.call(f"{win}__navigate", {"go": "forward"})
    assert not forward.is_error
    await stage.wait_windows(lambda d: address_of(_window(d, win)).endswith("?id=102"))
    bad = await stage.call(f"{win}__navigate", {"url": "javascript:alert(1)"})
    assert bad.structured_content["code"] == "validation_failed"


async def test_open_tab_and_close_tab(stage: Stage) -> None:
    await _home(stage)
    opened = await stage.call("app__open_tab", {"url": stage.site + "/ticket.html?id=103"})
    assert not opened.is_error, opened.structured_content
    (new_id,) = opened.structured_content["openedWindowIds"]
    doc = await stage.wait_windows(lambda d: any(w["id"] == new_id for w in d["windows"]))
    assert new_id in doc["operableWindowIds"]
    closed = await stage.call(f"{new_id}__close")
    assert not closed.is_error
    doc = await stage.wait_windows(lambda d: all(w["id"] != new_id for w in d["windows"]))
    again = await stage.call(f"{new_id}__navigate", {"go": "reload"})
    assert again.structured_content["code"] == "window_not_found"


async def test_tab_opened_by_the_page_and_by_the_user_appear_as_windows(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    result = await stage.call(f"{win}__open_ticket_in_new_tab", {"id": 105})
    assert not result.is_error
    (new_id,) = result.structured_content["openedWindowIds"]
    doc = await stage.wait_windows(lambda d: any(w["id"] == new_id and "105" in w["title"] for w in d["windows"]))
    assert new_id != win
    context = stage.user.contexts[0]
    user_page = await context.new_page()
    await user_navigates(user_page, stage.site + "/login.html")
    doc = await stage.wait_windows(lambda d: any("Agent sign-in" in w["title"] for w in d["windows"]))
    await user_page.close()
    await stage.wait_windows(lambda d: not any("Agent sign-in" in w["title"] for w in d["windows"]))
    assert len({w["id"] for w in doc["windows"]}) == len(doc["windows"])


async def test_secret_fields_are_masked(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    await stage.call(f"{win}__navigate", {"url": stage.site + "/login.html"})
    page = await stage.user_page("/login.html")
    await page.fill("#password", "hunter2-secret")
    await page.fill("#card", "4111111111111111")
    doc = await stage.wait_windows(
        lambda d: any(
            item.get("sensitive") and item["value"]
            for b in _window(d, win)["blocks"]
            if b["type"] == "fields"
            for item in b["items"]
        )
    )
    text = str(_window(doc, win))
    assert "hunter2-secret" not in text and "4111111111111111" not in text
    items = [i for b in _window(doc, win)["blocks"] if b["type"] == "fields" for i in b["items"]]
    masked = {i["label"] for i in items if i.get("sensitive")}
    assert any("Password" in label for label in masked) and any("Card" in label for label in masked)


async def test_a_call_whose_tab_is_navigated_away_or_closed_ends_with_an_unknown_outcome(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    page = await stage.user_page("/")
    async with anyio.create_task_group() as tg:
        results: list = []

        async def call() -> None:
            results.append(await stage.call(f"{win}__slow_report", {"seconds": 20}))

        tg.start_soon(call)
        await tool_started(page, "slow_report")
        await user_navigates(page, stage.site + "/ticket.html?id=101")
    (navigated,) = results
    # The bridge cannot know what the page did before it was left: it says so, and never "failed".
    assert navigated.is_error and navigated.structured_content["code"] == "call_interrupted"
    assert navigated.structured_content["outcome"] == "unknown"
    assert "/ticket.html?id=101" in navigated.structured_content["message"]

    opened = await stage.call("app__open_tab", {"url": stage.site + "/"})
    (other,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{other}__slow_report" in n)
    other_page = await stage.user_page("/")
    async with anyio.create_task_group() as tg:
        results.clear()

        async def call_other() -> None:
            results.append(await stage.call(f"{other}__slow_report", {"seconds": 20}))

        tg.start_soon(call_other)
        await tool_started(other_page, "slow_report")
        await other_page.close()
    (closed,) = results
    assert closed.is_error and closed.structured_content["code"] == "call_interrupted"
    assert closed.structured_content["outcome"] == "unknown"
    assert "closed" in closed.structured_content["message"]


async def test_a_ten_megabyte_answer_is_cut_with_a_notice_and_the_bridge_stays_responsive(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    await stage.call(f"{win}__navigate", {"url": stage.site + "/big.html?rows=50"})
    await stage.wait_tools(lambda n: f"{win}__export_report" in n)
    big = await stage.call(f"{win}__export_report", {"megabytes": 10})
    assert not big.is_error, big.structured_content
    # Over 512 KB a page's answer is cut (HTTP clients refuse events over 1 MB): the start of
    # its JSON, its size, and a sentence saying so (docs/security.md).
    result = big.structured_content["result"]
    assert result["cut"] is True and result["bytes"] >= 10 * 1024 * 1024
    assert result["preview"].startswith('{"csv":')
    assert "was cut" in big.structured_content["message"]
    assert len(json.dumps(big.structured_content)) < 1024 * 1024
    count = await stage.call(f"{win}__count_rows", {})
    assert count.structured_content["result"]["rows"] == 50


async def test_out_of_process_iframe_tools_and_content_belong_to_their_tab(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    await stage.call(f"{win}__navigate", {"url": stage.site + "/partner.html"})
    names = await stage.wait_tools(lambda n: f"{win}__search_kb" in n)
    assert f"{win}__list_tickets" not in names
    found = await stage.call(f"{win}__search_kb", {"query": "refund"})
    assert not found.is_error, found.structured_content
    assert "Refunding a duplicate card charge" in found.structured_content["result"]["titles"]
    doc = await stage.wait_windows(lambda d: "Search articles" in str(_window(d, win)["blocks"]))
    assert "Partner portal" in _window(doc, win)["title"]


async def test_attaching_to_a_page_already_loaded_finds_its_iframe_tools_too(site: str, browser) -> None:
    # The user's browser shows the page before the bridge attaches: WebMCP.enable replays
    # only main-frame tools, so the iframe's search_kb must be recovered another way.
    from playwright.async_api import async_playwright

    from tests.support.mcp_harness import open_stdio_client

    async with async_playwright() as pw:
        user = await pw.chromium.connect_over_cdp(browser.ws_url)
        page = await user.contexts[0].new_page()
        await page.evaluate("url => { location.href = url; }", site + "/?late=never")
        await page.wait_for_url(site + "/?late=never", wait_until="load")
        await page.frame_locator("iframe").locator("#kb-query").wait_for()
        command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url]
        async with open_stdio_client(command, mode="auto") as mcp:
            with anyio.fail_after(15):
                while True:
                    names = [t.name for t in (await mcp.client.list_tools()).tools]
                    if any(n.endswith("__search_kb") for n in names) and any(
                        n.endswith("__list_tickets") for n in names
                    ):
                        break
                    await mcp.notifications.wait_for("tools_list_changed", timeout=15)
            tool = next(n for n in names if n.endswith("__search_kb"))
            found = await mcp.client.call_tool(tool, {"query": "refund"})
            assert not found.is_error, found.structured_content
            assert "Refunding a duplicate card charge" in found.structured_content["result"]["titles"]
        await user.close()


async def test_screenshot_returns_a_png_image_content(stage: Stage) -> None:
    win = (await _home(stage))["id"]
    shot = await stage.call(f"{win}__screenshot")
    assert not shot.is_error, shot.structured_content
    images = [c for c in shot.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.structured_content["result"] == {"mimeType": "image/png"}, "the bytes travel once, as image content"
