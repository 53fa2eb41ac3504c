"""Pages on a slow network: navigations answer when the page is usable, and a window never mixes two documents.

The sample site's `/slow/` pages keep their load event waiting on a font, a script and an
image that never arrive, as real pages do when an ad or tracker host hangs (issues 18, 19).
"""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import anyio
import anyio.abc
import pytest

from cdp_bridge.launcher import BrowserProcess, LaunchOptions, launch_browser
from tests.support.stage import Stage, address_of, open_stage
from webmcp.desktop.navigation import AFTER_COMMIT_LIMIT, CONNECT_LIMIT, HELD_LIMIT, STILL_LOADING
from webmcp.serve import START_BUDGET
from webmcp.server.app import PROGRESS_EVERY

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _tab(doc: dict[str, Any], win: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == win)


def _text(window: dict[str, Any]) -> str:
    return json.dumps(window["blocks"], ensure_ascii=False)


async def _open(stage: Stage, path: str) -> str:
    opened = await stage.call("app__open_tab", {"url": stage.site + path})
    assert not opened.is_error, opened.structured_content
    (win,) = opened.structured_content["openedWindowIds"]
    return str(win)


async def test_navigate_answers_when_a_page_whose_load_never_comes_has_rendered(stage: Stage) -> None:
    win = await _open(stage, "/kitchen/order.html")
    answer = await stage.call(f"{win}__navigate", {"url": stage.site + "/slow/article.html"})
    assert not answer.is_error, answer.structured_content
    assert "still loading" in answer.structured_content["message"]
    window = _tab(await stage.windows(), win)  # read at once, as an agent does
    assert address_of(window) == stage.site + "/slow/article.html"
    assert window["title"] == "Harbor lights return to the old quay — Harbor Gazette"
    text = _text(window)
    assert "the three cast-iron lamps" in text and "restore the quay's clock" in text
    assert "Correction: the lamps were first lit in 1894" in text, "the render settled before the answer"
    assert "Order takeaway" not in text, "nothing of the page left"
    assert any(b["type"] == "notice" and b.get("id") == "loading" for b in window["blocks"])
    assert window["summary"]


async def test_navigate_waits_for_the_data_a_page_fetches_from_its_own_site_after_load(stage: Stage) -> None:
    win = await _open(stage, "/kitchen/order.html")
    # Its load event fires at once; its data (two requests, one after the other) comes later,
    # and a request to another site (a tracker) is never answered and not waited for.
    page = "/slow/berth.html?ms=400&chain=1&tracker=1"
    answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    assert "still loading" not in answer.structured_content["message"]
    text = _text(_tab(await stage.windows(), win))  # read at once, as an agent does
    assert "Berth 14 is held by Maria Lopez." in text, text
    assert "Held until Friday." in text, "the second request, started by the first one's answer"
    assert "Loading the berth" not in text


async def test_navigate_does_not_wait_past_its_bound_for_data_that_never_comes(stage: Stage) -> None:
    win = await _open(stage, "/kitchen/order.html")
    answer = await stage.call(f"{win}__navigate", {"url": stage.site + "/slow/berth.html?ms=600000"})
    assert not answer.is_error, answer.structured_content
    text = _text(_tab(await stage.windows(), win))
    assert "Loading the berth" in text, "the page as it is: its data has not come"


async def test_a_loading_window_follows_the_page_until_its_load_event(stage: Stage) -> None:
    win = await _open(stage, "/kitchen/order.html")
    # Two images: one arrives after 2.5 s; then the page loads and the notice goes.
    page = "/slow/results.html?q=east&alert_ms=-1"
    answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    window = _tab(await stage.windows(), win)
    assert "Berth 4, east pontoon" in _text(window)
    # The map never arrives here: the page stays loading, and says so, for as long as it does.
    assert any(b.get("id") == "loading" for b in window["blocks"])
    user = await stage.user_page(page)  # the person's tab on the same page, to add a row as a script would
    del user
    added = await stage.call(f"{win}__navigate", {"go": "reload"})
    assert "still loading" in added.structured_content["message"]


async def test_a_window_never_shows_the_document_it_left(stage: Stage) -> None:
    win = await _open(stage, "/kitchen/order.html")
    seen: list[dict[str, Any]] = []
    done = anyio.Event()

    async def watch() -> None:
        while not done.is_set():
            seen.append(_tab(await stage.windows(), win))
            await anyio.sleep(0.02)

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + "/slow/article.html"})
        assert not answer.is_error
        await anyio.sleep(0.3)
        done.set()
    old, new = stage.site + "/kitchen/order.html", stage.site + "/slow/article.html"
    for window in seen:
        text = _text(window)
        if address_of(window) == new:
            assert "Order takeaway" not in text and "Harbor Kitchen — Order" not in window["title"], window
        else:
            assert address_of(window) == old
            assert "Harbor Gazette" not in window["title"] and "cast-iron lamps" not in text, window
    assert any(address_of(w) == new for w in seen)


@pytest.mark.parametrize("tool", ["search_moorings", "search_form"])
async def test_a_call_whose_next_page_alerts_as_it_renders_returns_with_the_dialog(stage: Stage, tool: str) -> None:
    win = await _open(stage, "/slow/search.html?alert_ms=0")
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)
    answer = await stage.call(f"{win}__{tool}", {"q": "east"})
    assert not answer.is_error, answer.structured_content
    body = answer.structured_content
    doc = await stage.windows()
    dialogs = [w for w in doc["windows"] if w.get("modal") and w.get("ownerId") == win]
    assert len(dialogs) == 1, doc["windows"]
    (dialog,) = dialogs
    assert dialog["id"] in body.get("openedWindowIds", []), body
    # While the alert is up the tab shows the new page (or says it is loading), never the search page.
    window = _tab(doc, win)
    assert address_of(window).startswith(stage.site + "/slow/results.html")
    assert "Find a mooring" not in _text(window) and window["title"] != "Harbor Moorings — Search"
    accepted = await stage.call(f"{dialog['id']}__accept", {})
    assert not accepted.is_error, accepted.structured_content
    original = accepted.structured_content["result"]["originalCall"]
    assert original["tool"] == tool and "error" not in original and not original.get("pending"), original
    after = await stage.wait_windows(lambda d: "Berth 4, east pontoon" in _text(_tab(d, win)))
    assert "Find a mooring" not in _text(_tab(after, win))


@pytest.mark.parametrize("tool", ["search_moorings", "search_form"])
async def test_a_call_answers_when_its_next_page_is_usable_and_a_later_alert_is_a_window(
    stage: Stage, tool: str
) -> None:
    win = await _open(stage, "/slow/search.html?alert_ms=1500")
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)
    answer = await stage.call(f"{win}__{tool}", {"q": "east"})
    assert not answer.is_error, answer.structured_content
    assert "action_timeout" not in json.dumps(answer.structured_content)
    message = answer.structured_content["message"]
    assert "/slow/results.html" in message and "still loading" in message, message
    window = _tab(await stage.windows(), win)
    assert address_of(window).startswith(stage.site + "/slow/results.html")
    assert "Berth 4, east pontoon" in _text(window), "the answer came when the page was usable"
    doc = await stage.wait_windows(lambda d: any(w.get("modal") and w.get("ownerId") == win for w in d["windows"]))
    (dialog,) = [w for w in doc["windows"] if w.get("modal") and w.get("ownerId") == win]
    accepted = await stage.call(f"{dialog['id']}__accept", {})
    assert not accepted.is_error, accepted.structured_content


async def test_start_is_not_held_by_a_start_page_whose_server_never_answers(site: str, browser: BrowserProcess) -> None:
    held: list[anyio.abc.SocketStream] = []

    async def accept_and_say_nothing(stream: anyio.abc.SocketStream) -> None:
        held.append(stream)
        await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    silent = f"http://127.0.0.1:{port}/never"
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, accept_and_say_nothing)
        with anyio.fail_after(START_BUDGET + 12):  # the navigation deadline (15 s) would not fit
            async with open_stage(site, browser, "auto", silent, start_path="/kitchen/") as stage:
                doc = await stage.windows()
                waiting = [w for w in doc["windows"] if "Loading" in w["summary"] and "127.0.0.1" in w["summary"]]
                assert waiting, [(w["id"], w["summary"]) for w in doc["windows"]]
                assert all(w["summary"] for w in doc["windows"]), "no window without a summary"
                kitchen = next(w for w in doc["windows"] if address_of(w) == site + "/kitchen/")
                assert kitchen["title"] == "Harbor Kitchen — Menu"
                assert any(n.endswith("__show_menu") for n in await stage.tool_names())
        assert held, "the bridge did ask the silent server"
        tg.cancel_scope.cancel()
    for stream in held:
        await stream.aclose()
    await listener.aclose()


async def test_a_call_that_moves_the_tab_to_a_page_whose_parser_never_finishes_answers_with_what_rendered(
    stage: Stage,
) -> None:
    win = await _open(stage, "/slow/search.html?to=blocked")
    await stage.wait_tools(lambda names: f"{win}__search_moorings" in names)
    with anyio.fail_after(AFTER_COMMIT_LIMIT + 8):  # not the 15 s navigation deadline
        answer = await stage.call(f"{win}__search_moorings", {"q": "east"})
    assert not answer.is_error, answer.structured_content
    message = answer.structured_content["message"]
    assert "/slow/blocked.html" in message and "parser still waits for a script" in message, message
    window = _tab(await stage.windows(), win)
    assert "High water today at 06:12" in _text(window) and "Low water" not in _text(window)
    assert window["title"] == "Tide tables — Harbor Gazette"


@pytest.mark.parametrize(
    ("by", "waits_for", "mode"),
    [("script", "a script from 127.0.0.1:", "legacy"), ("style", "a stylesheet from 127.0.0.1:", "auto")],
)
async def test_navigate_to_a_page_that_shows_nothing_yet_says_so_and_what_it_waits_for(
    stage: Stage, by: str, waits_for: str
) -> None:
    # Its <script src> or stylesheet in <head> comes from a host that accepts and never answers:
    # a person sees a blank page (the parser, or the render, waits for it). The client asks for
    # progress, and is told every PROGRESS_EVERY seconds that the call goes on (both protocols).
    win = await _open(stage, "/slow/swap.html")
    page = f"/slow/held?by={by}"
    told: list[tuple[float, str | None]] = []

    async def progress(value: float, _total: float | None, message: str | None) -> None:
        told.append((value, message))

    began = anyio.current_time()
    with anyio.fail_after(HELD_LIMIT + 8):  # its bound, not the 15 s navigation deadline twice over
        answer = await stage.client.call_tool(
            f"{win}__navigate", {"url": stage.site + page}, progress_callback=progress
        )
    took = anyio.current_time() - began
    assert not answer.is_error, answer.structured_content
    assert int(HELD_LIMIT // PROGRESS_EVERY) <= len(told) <= took // PROGRESS_EVERY, (told, took)
    assert [value for value, _ in told] == list(range(1, len(told) + 1))
    assert all(f"{win}__navigate is still under way after" in str(message) for _, message in told), told
    message = answer.structured_content["message"]
    assert "Nothing of it has rendered yet" in message and waits_for in message, message
    assert "what has rendered is readable" not in message
    window = _tab(await stage.windows(), win)
    assert address_of(window) == stage.site + page
    assert window["title"] == "Keepers' logs — Harbor Gazette", "its <title> was parsed: never its address"
    assert "loading" in window["summary"]
    assert "Story 1" not in _text(window), "nothing of the page left"
    (loading,) = [b for b in window["blocks"] if b.get("id") == "loading"]
    assert "nothing of this page has rendered yet" in loading["text"] or "been read yet" in loading["text"]
    assert "what has rendered is shown" not in loading["text"]


async def test_navigate_to_a_page_whose_render_a_late_stylesheet_holds_answers_once_it_has_rendered(
    stage: Stage,
) -> None:
    win = await _open(stage, "/slow/swap.html")
    page = "/slow/held?by=style&where=after"  # the parser goes on: the document is all there
    with anyio.fail_after(AFTER_COMMIT_LIMIT):  # not the bound of a page that shows nothing
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    assert STILL_LOADING in answer.structured_content["message"]
    window = _tab(await stage.windows(), win)
    text = _text(window)
    assert "Two centuries of the lighthouse keepers' logs" in text and "41 volumes" in text
    assert window["title"] == "Keepers' logs — Harbor Gazette"


async def test_navigate_to_a_page_whose_parser_a_script_holds_answers_once_it_rendered_and_says_so(
    stage: Stage,
) -> None:
    # The article has rendered; then the parser waits on a script from a host that never answers.
    # What has rendered is answered at once, and the answer says the parser waits, and for what.
    win = await _open(stage, "/slow/swap.html")
    page = "/slow/held?by=script&where=after"
    with anyio.fail_after(AFTER_COMMIT_LIMIT):  # not the bound of a page that shows nothing
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    message = answer.structured_content["message"]
    assert "parser still waits for a script from 127.0.0.1:" in message and "more of it may come" in message, message
    assert STILL_LOADING not in message
    window = _tab(await stage.windows(), win)
    text = _text(window)
    assert "Two centuries of the lighthouse keepers' logs" in text and "41 volumes" in text
    assert window["title"] == "Keepers' logs — Harbor Gazette"


async def test_the_parser_is_said_to_wait_only_for_the_script_that_holds_it_not_for_an_async_one(stage: Stage) -> None:
    # The article renders, then the parser waits on a script from a host that drops connections;
    # an async analytics script in <head>, from a host that never answers, holds only the load
    # event: the answer names the first host, never the second.
    win = await _open(stage, "/slow/swap.html")
    page = "/slow/held?by=script&where=after&host=drop&async=1"
    source = await anyio.to_thread.run_sync(lambda: urllib.request.urlopen(stage.site + page, timeout=5).read())
    hosts = dict(re.findall(r'src="http://(127\.0\.0\.1:\d+)/(vendor|analytics)\.js"', source.decode()))
    holding, analytics = (
        next(h for h, f in hosts.items() if f == "vendor"),
        next(h for h, f in hosts.items() if f == "analytics"),
    )
    with anyio.fail_after(AFTER_COMMIT_LIMIT):
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    message = answer.structured_content["message"]
    assert f"parser still waits for a script from {holding}:" in message, message
    assert analytics not in message, message
    text = _text(_tab(await stage.windows(), win))
    assert "Two centuries of the lighthouse keepers' logs" in text and "41 volumes" in text


async def test_a_page_held_by_a_script_from_a_host_that_drops_connections_shows_its_article_in_the_first_read(
    stage: Stage,
) -> None:
    # A firewall that drops packets: the connect to the script's host is never answered, and
    # Linux retries it for 127 s. The launched browser gives a connect up after 8 s
    # (CONNECT_TIMEOUT_FEATURE), the script fails, and the parser goes on within the bound.
    win = await _open(stage, "/slow/swap.html")
    page = "/slow/held?by=script&host=drop"
    with anyio.fail_after(HELD_LIMIT + 8):
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    assert "Nothing of it has rendered yet" not in answer.structured_content["message"]
    window = _tab(await stage.windows(), win)
    text = _text(window)
    assert "Two centuries of the lighthouse keepers' logs" in text and "41 volumes" in text, text
    assert window["title"] == "Keepers' logs — Harbor Gazette"


async def test_a_page_that_waits_only_for_a_connection_the_browser_gives_up_past_the_held_bound_is_waited_for(
    site: str,
) -> None:
    # As an https host that accepts and never answers holds a page for Chromium's 30 s TLS limit:
    # here a browser that gives a TCP connect up after 14 s, past HELD_LIMIT. The page goes on then,
    # and navigate answers with its article; a request that went out (the hanging host over http)
    # is answered at HELD_LIMIT, saying what it waits for (the test above).
    slow_connect = (
        "--enable-features=TimeoutTcpConnectAttempt:TimeoutTcpConnectAttemptMin/14s/TimeoutTcpConnectAttemptMax/14s"
    )
    assert HELD_LIMIT < 14 < CONNECT_LIMIT
    browser = await launch_browser(LaunchOptions(headless=True, debugging="port", extra_args=[slow_connect]))
    try:
        async with open_stage(site, browser, "auto") as stage:
            win = await _open(stage, "/slow/swap.html")
            page = "/slow/held?by=script&host=drop"
            started = anyio.current_time()
            with anyio.fail_after(14 + 8):
                answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
            assert anyio.current_time() - started > HELD_LIMIT, "it showed nothing before the connect was given up"
            assert not answer.is_error, answer.structured_content
            assert "Nothing of it has rendered yet" not in answer.structured_content["message"]
            text = _text(_tab(await stage.windows(), win))
            assert "Two centuries of the lighthouse keepers' logs" in text and "41 volumes" in text, text
    finally:
        await browser.close()


async def test_a_page_whose_parser_a_slow_script_holds_after_its_top_is_followed_and_waited_for(
    stage: Stage,
) -> None:
    # The header renders at once; the article is parsed only once the script (3 s) arrived. The
    # answer says more may come, and wait_for waits for it.
    win = await _open(stage, "/slow/swap.html")
    page = "/slow/held?by=script&where=middle&ms=3000"
    with anyio.fail_after(AFTER_COMMIT_LIMIT):
        answer = await stage.call(f"{win}__navigate", {"url": stage.site + page})
    assert not answer.is_error, answer.structured_content
    assert "parser still waits for a script from 127.0.0.1:" in answer.structured_content["message"]
    assert "41 volumes" not in _text(_tab(await stage.windows(), win)), "the article is after the script"
    with anyio.fail_after(10):
        waited = await stage.call(f"{win}__wait_for", {"text": "41 volumes", "timeout": 8})
    assert not waited.is_error, waited.structured_content
    text = _text(_tab(await stage.windows(), win))
    assert "news from the county" in text and "41 volumes" in text, text


async def test_a_window_is_titled_by_its_address_only_until_its_title_is_parsed(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    page = stage.site + "/slow/held?by=script"
    seen: list[dict[str, Any]] = []
    answered = anyio.Event()

    async def navigate() -> None:
        answer = await stage.call(f"{win}__navigate", {"url": page})
        assert not answer.is_error, answer.structured_content
        answered.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(navigate)
        with anyio.fail_after(HELD_LIMIT + 8):
            while not answered.is_set():
                told = stage.mcp.notifications.count("resource_updated")
                seen.append(_tab(await stage.windows(), win))
                with anyio.move_on_after(0.5):  # each change, and now and then
                    await stage.mcp.notifications.wait_for("resource_updated", after=told, timeout=HELD_LIMIT + 8)
    on_page = [w for w in seen if address_of(w) == page]
    assert on_page, "the tab showed the page while it was held"
    for window in on_page:
        assert window["title"] == "Keepers' logs — Harbor Gazette" or "loading" in window["summary"].lower(), window
    assert on_page[-1]["title"] == "Keepers' logs — Harbor Gazette"


async def test_a_page_held_before_its_title_is_titled_by_its_address_and_said_to_be_loading(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    page = stage.site + "/slow/held?by=script&title=late"
    with anyio.fail_after(HELD_LIMIT + 8):
        answer = await stage.call(f"{win}__navigate", {"url": page})
    assert "Nothing of it has rendered yet" in answer.structured_content["message"]
    window = _tab(await stage.windows(), win)
    assert window["title"] != "Story of the day — Harbor Gazette", "never the title of the page it left"
    assert "Keepers' logs" not in window["title"], "no <title> was parsed"
    assert "loading" in window["summary"].lower(), window["summary"]


async def test_a_press_that_moves_the_tab_to_a_page_that_shows_nothing_yet_says_so(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    with anyio.fail_after(HELD_LIMIT + 8):
        pressed = await stage.call(f"{win}__press", {"label": "Keepers' logs"})
    assert not pressed.is_error, pressed.structured_content
    message = pressed.structured_content["message"]
    assert "/slow/held?by=script" in message, message
    assert "Nothing of it has rendered yet: it waits for a script from 127.0.0.1:" in message, message
    assert STILL_LOADING not in message
