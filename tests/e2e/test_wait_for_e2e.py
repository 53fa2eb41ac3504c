"""End to end: `{win}__wait_for`, a wait on what a window shows that changes nothing (issue 41).

Real Chromium, the sample site, the bridge over stdio. The page changes itself (a timer the
test sets in it through Playwright, as the user's browser would run it); the wait answers
when the window shows the text, no longer shows it, or when the time is up, and is refused
when its window closes or a dialog blocks it meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import open_http_client, open_stdio_client
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TEXT_LATER = """(ms) => { setTimeout(() => {
  const p = document.createElement('p'); p.id = 'later';
  p.textContent = 'Shipment   Confirmed: order 4471 leaves the warehouse today.';
  document.querySelector('main').append(p);
}, ms); }"""


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


async def _queue(stage: Stage) -> str:
    return str((await stage.tab_for("/"))["id"])


async def test_wait_for_is_listed_on_every_tab_as_read_only(stage: Stage) -> None:
    win = await _queue(stage)
    opened = await stage.call("app__open_tab", {"url": stage.site + "/plain/"})
    second = opened.structured_content["openedWindowIds"][0]
    tools = {t.name: t for t in (await stage.client.list_tools()).tools}
    for tab in (win, second):
        tool = tools[f"{tab}__wait_for"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        # A read lists no expectedVersion (it is still checked when given).
        assert set(tool.input_schema["properties"]) == {"text", "textGone", "timeout"}


async def test_text_that_comes_a_second_later_is_waited_for_while_other_calls_on_the_tab_go_on(
    stage: Stage,
) -> None:
    win = await _queue(stage)
    before = _window(await stage.windows(), win)["version"]
    page = await stage.user_page("/")
    answer: list[Any] = []

    async def wait() -> None:
        answer.append(await stage.call(f"{win}__wait_for", {"text": "shipment confirmed:  ORDER 4471", "timeout": 20}))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        # The wait holds no lock: a call that takes the tab's lock answers while it waits.
        focused = await stage.call(f"{win}__focus")
        assert not focused.is_error, focused.structured_content
        assert not answer, "the wait answered before the text was on the page"
        await page.evaluate(TEXT_LATER, 1000)
    result = answer[0]
    body = result.structured_content
    assert not result.is_error, body
    assert body["message"] == f"{win} shows \u201cshipment confirmed:  ORDER 4471\u201d."
    assert body["result"]["version"] > before
    assert body["result"]["changedBlocks"] >= 1
    assert any("order 4471 leaves the warehouse" in found for found in body["result"]["found"]), body
    # The version it gives is one the window has published, with the text in it.
    doc = await stage.windows()
    assert _window(doc, win)["version"] >= body["result"]["version"]
    assert "order 4471" in str(_window(doc, win)["blocks"])


async def test_text_that_goes_is_waited_for(stage: Stage) -> None:
    win = await _queue(stage)
    page = await stage.user_page("/")
    await page.evaluate(TEXT_LATER, 0)
    await stage.wait_windows(lambda d: "order 4471" in str(_window(d, win)["blocks"]))
    await page.evaluate("setTimeout(() => document.getElementById('later').remove(), 1000)")
    result = await stage.call(f"{win}__wait_for", {"textGone": "Order 4471", "timeout": 20})
    assert not result.is_error, result.structured_content
    assert result.structured_content["message"] == f"{win} no longer shows \u201cOrder 4471\u201d."
    assert "order 4471" not in str(_window(await stage.windows(), win)["blocks"])


async def test_text_that_never_comes_ends_the_wait_with_action_timeout_and_the_version(stage: Stage) -> None:
    win = await _queue(stage)
    version = _window(await stage.windows(), win)["version"]
    result = await stage.call(f"{win}__wait_for", {"text": "Refund approved", "timeout": 1})
    body = result.structured_content
    assert result.is_error, body
    assert body["code"] == "action_timeout"
    assert body["currentVersion"] >= version
    assert "\u201cRefund approved\u201d to show" in body["message"] and "did not happen" in body["message"]
    assert "outcome" not in body, "the wait knows what happened: the text did not come"


async def test_a_window_that_closes_during_the_wait_ends_it_with_window_not_found(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/plain/"})
    tab = opened.structured_content["openedWindowIds"][0]
    page = await stage.user_page("/plain/")
    # The page marks itself 1.5 s from now; the person closes the tab once it has.
    await page.evaluate("setTimeout(() => { document.title = 'closing'; }, 1500)")
    answer: list[Any] = []

    async def wait() -> None:
        answer.append(await stage.call(f"{tab}__wait_for", {"text": "never shown here", "timeout": 20}))

    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await page.wait_for_function("document.title === 'closing'", timeout=10_000)
            await page.close()
    body = answer[0].structured_content
    assert answer[0].is_error and body["code"] == "window_not_found", body
    assert "closed while the wait was on" in body["message"]


async def test_a_dialog_that_opens_during_the_wait_ends_it_with_blocked_by_modal(stage: Stage) -> None:
    win = await _queue(stage)
    page = await stage.user_page("/")
    await page.evaluate("setTimeout(() => alert('Queue reloaded'), 1500)")
    with anyio.fail_after(15):
        result = await stage.call(f"{win}__wait_for", {"text": "never shown here", "timeout": 20})
    body = result.structured_content
    assert result.is_error and body["code"] == "blocked_by_modal", body
    assert "opened while the wait was on" in body["message"]
    dialog = body["blockingWindowId"]
    assert _window(await stage.windows(), dialog)["modal"]
    dismissed = await stage.call(f"{dialog}__dismiss")
    assert not dismissed.is_error, dismissed.structured_content


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1}, "timeout"),
        ({"timeout": 31}, "timeout"),
        ({"timeout": "soon"}, "timeout"),
        ({"text": ""}, "text"),
        ({"text": "   "}, "text"),
        ({"textGone": 5}, "textGone"),
    ],
)
async def test_a_bad_wait_is_refused_with_validation_failed(stage: Stage, args: dict[str, Any], field: str) -> None:
    win = await _queue(stage)
    result = await stage.call(f"{win}__wait_for", args)
    body = result.structured_content
    assert result.is_error and body["code"] == "validation_failed", body
    assert [f["field"] for f in body["fields"]] == [field], body


async def test_a_wait_based_on_an_old_version_is_refused_with_stale_state(stage: Stage) -> None:
    win = await _queue(stage)
    version = _window(await stage.windows(), win)["version"]
    result = await stage.call(f"{win}__wait_for", {"text": "Harbor", "expectedVersion": version - 1})
    body = result.structured_content
    assert result.is_error and body["code"] == "stale_state" and body["currentVersion"] == version, body
    current = await stage.call(f"{win}__wait_for", {"text": "Harbor", "expectedVersion": version})
    assert not current.is_error, current.structured_content


async def test_a_page_that_never_loads_settles_once_its_window_is_still(stage: Stage) -> None:
    win = await _queue(stage)
    # Its font, script and advert never arrive (no load event, ever); a paragraph comes 150 ms after parsing.
    moved = await stage.call(f"{win}__navigate", {"url": stage.site + "/slow/article.html"})
    assert not moved.is_error, moved.structured_content
    result = await stage.call(f"{win}__wait_for", {"timeout": 10})
    body = result.structured_content
    assert not result.is_error, body
    assert body["message"] == f"{win} has settled: its window has not changed for 1 s."
    assert _window(await stage.windows(), win)["version"] == body["result"]["version"]


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_page_that_renders_its_data_after_navigate_answered_is_waited_for_over_either_transport(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    # The berth's holder comes from the site's API 4 s after the load event: navigate answers before it.
    page = site + "/slow/berth.html?ms=4000"
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url]
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            mcp = await stack.enter_async_context(open_stdio_client([*command, site + "/"], mode="auto"))
        else:
            url, token = await stack.enter_async_context(http_bridge(browser, site + "/"))
            mcp = await stack.enter_async_context(open_http_client(url, token, "auto"))
        doc = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        win = doc["windows"][0]["id"]
        moved = await mcp.client.call_tool(f"{win}__navigate", {"url": page})
        assert not moved.is_error, moved.structured_content
        doc = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        assert "Maria Lopez" not in json.dumps(_window(doc, win)), "the data came before navigate answered"
        result = await mcp.client.call_tool(
            f"{win}__wait_for", {"text": "held by Maria Lopez", "textGone": "Loading the berth", "timeout": 15}
        )
        body = result.structured_content
        assert not result.is_error, body
        assert body["result"]["found"] == ["Berth 14 is held by Maria Lopez."], body
