"""The extension relay end to end: the person's Chrome (here headless Chromium with the unpacked
extension), the bridge started with --extension, an MCP client, and the popup driven as a person.

Playwright reaches the browser over a debugging port only to play the person in the popup; the
bridge itself reaches the browser through the extension alone.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import websockets
from playwright.async_api import Browser, Page, async_playwright
from websockets.asyncio.client import connect

from cdp_bridge import Connection
from cdp_bridge.launcher import BrowserProcess, LaunchOptions, launch_browser
from cdp_bridge.relay import proof
from tests.support.mcp_harness import ANY_PORT, announced_url, open_http_client, wait_listening
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EXTENSION = Path(__file__).resolve().parents[2] / "extension"
WAIT = 20.0


async def _printed(log: Path, pattern: str) -> re.Match[str]:
    # The bridge's stderr goes to a file: poll it, bounded (a file gives no event to wait on).
    with anyio.fail_after(WAIT):
        while not (found := re.search(pattern, log.read_text(errors="replace"))):  # noqa: ASYNC110, ASYNC240
            await anyio.sleep(0.05)
    return found


async def _extension_id(browser: BrowserProcess) -> str:
    async with Connection.connect(browser.ws_url) as connection:
        with anyio.fail_after(WAIT):
            while True:
                targets = (await connection.browser.send("Target.getTargets"))["targetInfos"]
                for target in targets:
                    if target["type"] == "service_worker" and target["url"].startswith("chrome-extension://"):
                        return str(target["url"].split("/")[2])
                await anyio.sleep(0.1)


@asynccontextmanager
async def _bridge(tmp_path: Path, relay_port: int = 0) -> AsyncIterator[tuple[str, str, int, str]]:
    """`webmcp-bridge --extension --http`; yields (MCP URL, token, relay port, pairing code)."""
    token = secrets.token_urlsafe(16)
    log = tmp_path / f"bridge-{secrets.token_hex(4)}.log"  # a restarted bridge writes a log of its own
    command = [sys.executable, "-m", "webmcp", "--extension", "--extension-port", str(relay_port),
               "--http", ANY_PORT, f"--token={token}"]  # fmt: skip
    with log.open("wb") as err:
        process = await anyio.open_process(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
        )
    try:
        found = await _printed(log, r"ws://127\.0\.0\.1:(\d+)/\s+pairing code: (\S+)")
        url = await announced_url(log, process)
        # The pairing code is printed before the MCP endpoint listens: a client that connects at
        # once (the restarted bridge) met "connection refused" in CI.
        await wait_listening(url, process)
        yield url, token, int(found.group(1)), found.group(2)
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _pair(person: Browser, extension_id: str, relay_port: int, code: str) -> Page:
    """The person opens the popup, enters the port and the code; the popup page once connected."""
    popup = await person.contexts[0].new_page()
    await popup.goto(f"chrome-extension://{extension_id}/popup.html")
    await popup.fill("#port", str(relay_port))
    await popup.fill("#code", code.lower())  # typed as it comes: case and dashes do not matter
    await popup.click("#pair")
    await popup.wait_for_selector('#status[data-status="connected"]', timeout=WAIT * 1000)
    return popup


async def _badge(popup: Page, text: str) -> None:
    """Wait until the extension's badge reads `text` (the badge has no event a page can await)."""
    with anyio.fail_after(WAIT):
        while await popup.evaluate("chrome.action.getBadgeText({})") != text:  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def _share_only(popup: Page, url: str, shared: bool) -> None:
    """Tick or untick the tab at exactly `url` in the popup's list (the list refreshes itself)."""
    await popup.locator(f'#tabs li[data-url="{url}"] input[type=checkbox]').set_checked(shared)


async def test_extension_relay_serves_shared_tabs_and_refuses_strangers(site: str, tmp_path: Path) -> None:
    options = LaunchOptions(headless=True, debugging="port", load_extension=str(EXTENSION), start_urls=[site + "/"])
    async with await launch_browser(options) as browser, _bridge(tmp_path) as (url, token, relay_port, code):
        extension_id = await _extension_id(browser)
        async with async_playwright() as pw, open_http_client(url, token, "auto") as mcp:
            person = await pw.chromium.connect_over_cdp(browser.ws_url)
            for context in person.contexts:
                context.on("dialog", lambda _d: None)  # dialogs are the agent's to answer here
            stage = Stage(site, browser, mcp, person)
            assert (await stage.windows())["windows"] == [], "nothing is shared before the pairing"

            # The person pairs the extension and shares the sample site's tab.
            popup = await _pair(person, extension_id, relay_port, code)
            await popup.check("#mode-picked")
            await _share_only(popup, site + "/", True)

            # The agent sees the tab as a window, with its page tools, its content and ui://current.
            home = await stage.tab_for("/")
            win = home["id"]
            await _badge(popup, "1")  # connected, one tab shared
            # The semantic view, read from the accessibility tree through chrome.debugger.
            doc = await stage.wait_windows(
                lambda d: any(b["type"] == "table" for w in d["windows"] if w["id"] == win for b in w["blocks"])
            )
            table = next(b for w in doc["windows"] if w["id"] == win for b in w["blocks"] if b["type"] == "table")
            assert table["columns"] == ["ID", "Subject", "Status", "Priority"]
            assert "Ticket queue" in home["title"]
            # This Chromium runs with WebMCP: the popup found document.modelContext and warns of nothing.
            await popup.wait_for_selector(f'#tabs li[data-url="{site}/"][data-webmcp="yes"]', timeout=WAIT * 1000)
            assert await popup.locator("#webmcp-missing").is_hidden()
            await stage.wait_tools(lambda names: f"{win}__list_tickets" in names)
            listed = await stage.call(f"{win}__list_tickets", {})
            assert not listed.is_error, listed.structured_content
            assert listed.structured_content["result"]["tickets"], "the page tool answered through the relay"
            current = json.loads((await stage.client.read_resource("ui://current")).contents[0].text)
            assert win in json.dumps(current), "ui://current names the shared tab"
            located = json.loads((await stage.client.read_resource(f"ui://locate/{win}")).contents[0].text)
            assert located["state"] in ("visible", "hidden") and "bounds" in located, located

            # Tools of iframes: same-origin here, out-of-process (an iframe session of the tab) next.
            await stage.wait_tools(lambda names: f"{win}__search_kb" in names)
            found = await stage.call(f"{win}__search_kb", {"query": "refund"})
            assert not found.is_error, found.structured_content
            moved = await stage.call(f"{win}__navigate", {"url": site + "/partner.html"})
            assert not moved.is_error, moved.structured_content
            await stage.wait_tools(lambda names: f"{win}__search_kb" in names and f"{win}__list_tickets" not in names)
            found = await stage.call(f"{win}__search_kb", {"query": "refund"})
            assert not found.is_error, found.structured_content
            assert "Refunding a duplicate card charge" in found.structured_content["result"]["titles"]

            # Acting as a person through chrome.debugger (issue 39): trusted keys, and the focus a
            # person's window gives (the popup is in front: the shared tab is in the background).
            await stage.call(f"{win}__navigate", {"url": site + "/patterns/keys.html"})
            await stage.wait_tools(lambda names: f"{win}__press" in names)
            filled = await stage.call(f"{win}__fill", {"fields": [{"label": "Subject", "value": "Printer"}]})
            assert not filled.is_error, filled.structured_content
            keyed = await stage.call(f"{win}__press", {"key": "Enter", "label": "Subject"})
            assert not keyed.is_error, keyed.structured_content
            await stage.wait_windows(lambda d: "Saved: Printer" in json.dumps(d) and "focused: true" in json.dumps(d))
            await stage.call(f"{win}__navigate", {"url": site + "/"})
            await stage.wait_tools(lambda names: f"{win}__open_ticket_in_new_tab" in names)

            # Tabs the agent opens, and tabs a shared page opens, are the agent's too; it can close them.
            opened_tab = await stage.call("app__open_tab", {"url": site + "/ticket.html?id=103"})
            assert not opened_tab.is_error, opened_tab.structured_content
            (agent_tab,) = opened_tab.structured_content["openedWindowIds"]
            popped = await stage.call(f"{win}__open_ticket_in_new_tab", {"id": 105})
            assert not popped.is_error, popped.structured_content
            (page_tab,) = popped.structured_content["openedWindowIds"]
            await stage.wait_windows(lambda d: any(w["id"] == page_tab and "105" in w["title"] for w in d["windows"]))
            for tab_id in (agent_tab, page_tab):
                closed = await stage.call(f"{tab_id}__close")
                assert not closed.is_error, closed.structured_content
            await stage.wait_windows(lambda d: {w["id"] for w in d["windows"]} == {win})

            # A page tool that opens confirm(): the dialog is a window, and its answer ends the call.
            moved = await stage.call(f"{win}__navigate", {"url": site + "/danger.html"})
            assert not moved.is_error, moved.structured_content
            await stage.wait_tools(lambda names: f"{win}__purge_closed_tickets" in names)
            opened = await stage.call(f"{win}__purge_closed_tickets")
            assert not opened.is_error, opened.structured_content
            (dialog,) = opened.structured_content["openedWindowIds"]
            answer = await stage.call(f"{dialog}__accept")
            assert not answer.is_error, answer.structured_content
            assert answer.structured_content["result"]["originalCall"]["result"] == {"purged": 2}

            # The person unshares the tab: its window is gone for the agent at once.
            await _share_only(popup, site + "/danger.html", False)
            await stage.wait_windows(lambda doc: all(w["id"] != win for w in doc["windows"]))
            assert not any(n.startswith(f"{win}__") for n in await stage.tool_names())
            await _badge(popup, "ON")  # still connected, nothing shared
            await person.close()

        # Nobody else may drive the browser through the relay.
        relay = f"ws://127.0.0.1:{relay_port}/"
        for origin in ("https://evil.example", None):
            with pytest.raises(websockets.InvalidStatus) as refused:
                async with connect(relay, additional_headers={"Origin": origin} if origin else None):
                    pass
            assert refused.value.response.status_code == 403
        async with connect(relay, additional_headers={"Origin": f"chrome-extension://{extension_id}"}) as ws:
            with anyio.fail_after(WAIT):
                challenge = json.loads(await ws.recv())
                guess = proof("AAAA-BBBB-CCCC", "extension", challenge["nonce"])
                await ws.send(json.dumps({"relay": "hello", "proof": guess, "nonce": secrets.token_hex(16)}))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4003


async def test_shared_tabs_come_back_by_themselves_when_the_bridge_restarts(site: str, tmp_path: Path) -> None:
    options = LaunchOptions(headless=True, debugging="port", load_extension=str(EXTENSION), start_urls=[site + "/"])
    async with await launch_browser(options) as browser, async_playwright() as pw:
        extension_id = await _extension_id(browser)
        person = await pw.chromium.connect_over_cdp(browser.ws_url)
        # The first bridge takes a port the system gives; the next must listen on the same one.
        async with _bridge(tmp_path) as (url, token, relay_port, code), open_http_client(url, token) as mcp:
            popup = await _pair(person, extension_id, relay_port, code)
            await popup.check("#mode-all")
            await Stage(site, browser, mcp, person).tab_for("/")
        # The bridge is gone; the same pairing code comes back with the next one (it is kept).
        async with _bridge(tmp_path, relay_port) as (url, token, _port, again), open_http_client(url, token) as mcp:
            assert again == code
            stage = Stage(site, browser, mcp, person)
            await stage.tab_for("/")  # re-announced without anyone touching the popup
            # With "all tabs", a tab the person opens later is shared at once.
            page = await person.contexts[0].new_page()
            await page.goto(site + "/ticket.html?id=104")
            await stage.tab_for("/ticket.html?id=104")
            await popup.wait_for_selector('#status[data-status="connected"]', timeout=WAIT * 1000)
        await person.close()


async def test_popup_says_when_a_shared_tab_has_no_webmcp(site: str, tmp_path: Path) -> None:
    # A Chrome without the WebMCP feature, as every Chrome is since the origin trial ended.
    options = LaunchOptions(
        headless=True, debugging="port", load_extension=str(EXTENSION), start_urls=[site + "/"], enable_webmcp=False
    )
    async with await launch_browser(options) as browser, _bridge(tmp_path) as (url, token, relay_port, code):
        extension_id = await _extension_id(browser)
        async with async_playwright() as pw, open_http_client(url, token, "auto") as mcp:
            person = await pw.chromium.connect_over_cdp(browser.ws_url)
            popup = await _pair(person, extension_id, relay_port, code)
            assert await popup.locator("#webmcp-missing").is_hidden(), "nothing shared yet, nothing to warn of"
            await popup.check("#mode-picked")
            await _share_only(popup, site + "/", True)
            row = await popup.wait_for_selector(f'#tabs li[data-url="{site}/"][data-webmcp="no"]', timeout=WAIT * 1000)
            assert row is not None and "no WebMCP on this page" in await row.inner_text()
            warning = popup.locator("#webmcp-missing")
            await warning.wait_for(state="visible", timeout=WAIT * 1000)
            text = await warning.inner_text()
            assert "chrome://flags/#enable-webmcp-testing" in text and "--enable-features=WebMCP" in text
            # What the popup says is so: the agent gets the window, without the page's tools.
            stage = Stage(site, browser, mcp, person)
            home = await stage.tab_for("/")
            assert not any(name.startswith(f"{home['id']}__list_tickets") for name in await stage.tool_names())
            await person.close()
