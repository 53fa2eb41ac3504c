"""The end-to-end stage: sample site, Chromium, bridge, MCP client, and Playwright as the user."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
from playwright.async_api import Browser, Page, Playwright, async_playwright

from cdp_bridge.launcher import BrowserProcess
from sample_site import serve_in_thread
from tests.support.mcp_harness import McpTestClient, open_stdio_client
from webmcp.models import WindowsDocument

WAIT = 15.0

REFUSED = "http://127.0.0.1:1023/"
"""A page whose server refuses the connection: a port below the ephemeral range (no server that
asks for a free port gets it) and not one Chromium refuses to try (9, the discard port, is
ERR_UNSAFE_PORT). An ephemeral port found free and closed could be taken by another test's server."""

NO_DNS_FOR_INVALID = "--host-resolver-rules=MAP *.invalid ~NOTFOUND"
"""A browser switch: names under `.invalid` (RFC 6761) fail in Chromium's own resolver, at once. A
machine's DNS may hang on them instead of failing (CI's did), and the tests are about the failure."""

_shared_driver: tuple[Playwright, asyncio.AbstractEventLoop] | None = None
"""Playwright's driver (a Node process) for the whole session, and the loop it runs on."""


@asynccontextmanager
async def shared_playwright() -> AsyncIterator[Playwright]:
    """Start Playwright's driver once, for every stage opened on this event loop while it runs
    (the session fixture `user_driver`): starting it costs ~0.6 s of CPU a test otherwise."""
    global _shared_driver
    async with async_playwright() as pw:
        _shared_driver = (pw, asyncio.get_running_loop())
        try:
            yield pw
        finally:
            _shared_driver = None


@asynccontextmanager
async def _playwright() -> AsyncIterator[Playwright]:
    """The session's driver when it runs on this loop, else one of this stage's own."""
    if _shared_driver is not None and _shared_driver[1] is asyncio.get_running_loop():
        yield _shared_driver[0]
        return
    async with async_playwright() as pw:
        yield pw


def run_site() -> AbstractContextManager[str]:
    """Serve a fresh sample site from a thread with its own event loop; yields its base URL."""
    return serve_in_thread()


@dataclass
class Stage:
    """Everything a test drives, with helpers that wait on notifications instead of sleeping."""

    site: str
    browser: BrowserProcess
    mcp: McpTestClient
    user: Browser

    @property
    def client(self) -> Any:
        return self.mcp.client

    async def windows(self) -> dict[str, Any]:
        """Read `app://windows` once; every document read in a test must match the wire model."""
        result = await self.client.read_resource("app://windows")
        doc: dict[str, Any] = json.loads(result.contents[0].text)
        WindowsDocument.model_validate(doc)
        return doc

    async def wait_windows(self, predicate: Callable[[dict[str, Any]], Any], timeout: float = WAIT) -> dict[str, Any]:
        """Re-read `app://windows` after each notification until `predicate(doc)` holds."""
        with anyio.fail_after(timeout):
            while True:
                seen = self.mcp.notifications.count("resource_updated")
                doc = await self.windows()
                if predicate(doc):
                    return doc
                with anyio.move_on_after(0.5):  # also re-read now and then: a test must not hinge on one event
                    await self.mcp.notifications.wait_for("resource_updated", after=seen, timeout=WAIT)

    async def tool_names(self) -> list[str]:
        return [t.name for t in (await self.client.list_tools()).tools]

    async def wait_tools(self, predicate: Callable[[list[str]], Any], timeout: float = WAIT) -> list[str]:
        """Re-list tools after each tools/list_changed until `predicate(names)` holds.

        Raises:
            TimeoutError: not within `timeout`, naming the tools last listed (what the test saw).
        """
        names: list[str] = []
        with anyio.move_on_after(timeout):
            while True:
                seen = self.mcp.notifications.count("tools_list_changed")
                names = await self.tool_names()
                if predicate(names):
                    return names
                with anyio.move_on_after(0.5):
                    await self.mcp.notifications.wait_for("tools_list_changed", after=seen, timeout=WAIT)
        raise TimeoutError(f"the tools listed last, after {timeout:g} s: {names}")

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Call a tool; the raw CallToolResult."""
        return await self.client.call_tool(name, args or {})

    async def tab_for(self, path: str) -> dict[str, Any]:
        """The window of the tab whose page is at `path` (waits for it)."""
        doc = await self.wait_windows(lambda d: _find_tab(d, self.site + path))
        return _find_tab(doc, self.site + path)

    async def user_page(self, path: str) -> Page:
        """Playwright's handle on the page at `path`, as the user sees it."""
        with anyio.fail_after(WAIT):
            while True:
                for context in self.user.contexts:
                    for page in context.pages:
                        if _same_page(page.url, self.site + path):
                            return page
                await anyio.sleep(0.05)


async def user_navigates(page: Page, url: str) -> None:
    """The user sends `page` to `url` (a link or the address bar, as far as the page can tell).

    Not Playwright's `goto`: with the bridge attached to the same tab, Chromium 156's renderer
    crashed on about one Playwright-driven navigation in four in our runs (see the notes on
    issue 5); a navigation the page starts itself never did.
    """
    await page.evaluate("url => { location.href = url; }", url)
    await page.wait_for_url(url, wait_until="load")


async def tool_started(page: Page, tool: str) -> None:
    """Wait until the sample site's activity log shows that the page began running `tool`."""
    await page.wait_for_function(
        "name => [...document.querySelectorAll('#activity li')].some(li => li.textContent.includes(name))",
        arg=tool,
        timeout=10_000,
    )


def _same_page(url: str, wanted: str) -> bool:
    """`url` shows the page `wanted` names: same path, and the query if `wanted` has one."""
    if "?" in wanted:
        return url.startswith(wanted)
    return url.split("?", 1)[0].split("#", 1)[0] == wanted


def address_of(window: dict[str, Any]) -> str:
    """The URL in a tab window's address block."""
    for block in window["blocks"]:
        if block["type"] == "fields" and block.get("id") == "address":
            return str(block["items"][0]["value"])
    return ""


def _find_tab(doc: dict[str, Any], url_prefix: str) -> Any:
    for window in doc["windows"]:
        if not window["modal"] and _same_page(address_of(window), url_prefix):
            return window
    return None


@asynccontextmanager
async def open_stage(
    site: str, browser: BrowserProcess, mode: str, *extra_args: str, start_path: str = "/", errlog: TextIO | None = None
) -> AsyncIterator[Stage]:
    """Attach the bridge (as a stdio subprocess) and Playwright to `browser`; `errlog` collects the bridge's stderr."""
    command = [
        sys.executable,
        "-m",
        "webmcp",
        "--cdp-url",
        browser.ws_url,
        *extra_args,
        site + start_path,
    ]
    async with _playwright() as pw:
        user = await pw.chromium.connect_over_cdp(browser.ws_url)
        # Playwright dismisses dialogs nobody listens to; the user here leaves them to the test.
        for context in user.contexts:
            context.on("dialog", lambda _d: None)
        try:
            async with open_stdio_client(command, mode=mode, errlog=errlog) as mcp:
                yield Stage(site, browser, mcp, user)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await user.close()


SPAN_LINES = 8
"""The longest run of lines `text_spans` gives: a text the tests look for spans a few lines at most."""


def text_spans(text: str) -> list[str]:
    """`text` and each run of its lines, up to SPAN_LINES of them.

    A window shows a run of text blocks with nothing but their text as one block of their lines
    (view/shown.py): a paragraph the page shows on its own is a line, or lines, of such a block.
    """
    lines = text.split("\n")
    spans = [text]
    for i in range(len(lines)):
        spans.extend("\n".join(lines[i:j]) for j in range(i + 1, min(len(lines), i + SPAN_LINES) + 1))
    return spans


def shown_texts(blocks: list[dict[str, Any]]) -> list[str]:
    """The texts of the text blocks of `blocks`, as `text_spans` gives each."""
    return [span for b in blocks if b["type"] == "text" for span in text_spans(b["text"])]
