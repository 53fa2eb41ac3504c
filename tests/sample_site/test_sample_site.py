"""End-to-end checks of the Harbor Help Desk sample site against real Chromium.

The site runs in a background thread (its own asyncio loop) on a free port of
127.0.0.1; Chromium is driven through Playwright's sync API and a raw CDP
session that speaks the ``WebMCP`` domain.  Every wait is bounded: polling
uses ``page.wait_for_timeout`` (which also pumps Playwright's event loop so
CDP events get delivered) against a deadline.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from playwright.sync_api import BrowserContext, CDPSession, Page, sync_playwright

from sample_site import start_site  # noqa: E402

pytestmark = pytest.mark.timeout(30)

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-features=WebMCP",
]
MAIN_TOOLS = {
    "list_tickets",
    "get_queue_summary",
    "get_ticket",
    "close_ticket",
    "add_note",
    "explode",
    "slow_report",
    "claim_welcome_bonus",
    "open_ticket_in_new_tab",
    "create_ticket",
    "contact_customer",
}
EVENTS = (
    "WebMCP.toolsAdded",
    "WebMCP.toolsRemoved",
    "WebMCP.toolInvoked",
    "WebMCP.toolResponded",
    "Page.javascriptDialogOpening",
)


class SiteThread:
    """Runs :func:`start_site` on a private event loop in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="sample-site", daemon=True)
        self.runner: web.AppRunner | None = None
        self.base_url = ""

    def start(self) -> str:
        self.thread.start()
        self.runner, self.base_url = asyncio.run_coroutine_threadsafe(start_site(), self.loop).result(10)
        return self.base_url

    def stop(self) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def http_json(url: str, method: str = "GET") -> Any:
    """Tiny blocking JSON client for checking server state from the (sync) tests."""
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    site = SiteThread()
    try:
        yield site.start()
    finally:
        site.stop()


@pytest.fixture(scope="module")
def context() -> Iterator[BrowserContext]:
    profile = tempfile.mkdtemp(prefix="harbor-chromium-")
    try:
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=FLAGS, timeout=20_000
            )
            try:
                yield ctx
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def page(context: BrowserContext, base_url: str) -> Iterator[Page]:
    http_json(f"{base_url}/api/reset", "POST")
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    try:
        yield pg
    finally:
        for other in context.pages:
            other.close()


class WebMCP:
    """A CDP session on one page that records WebMCP (and dialog) events."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.cdp: CDPSession = page.context.new_cdp_session(page)
        self.events: list[tuple[str, dict[str, Any]]] = []
        for name in EVENTS:
            self.cdp.on(name, lambda params, name=name: self.events.append((name, params)))
        self.cdp.send("Page.enable")
        self.cdp.send("WebMCP.enable")

    def wait_for(self, predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
        """Poll ``predicate`` until truthy or fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; events={self.events!r}"[:4000])
            self.page.wait_for_timeout(50)

    def tools(self) -> dict[str, dict[str, Any]]:
        """Current tool set, folding toolsAdded/toolsRemoved in order (keyed by name)."""
        current: dict[str, dict[str, Any]] = {}
        for name, params in self.events:
            if name == "WebMCP.toolsAdded":
                current.update({t["name"]: t for t in params["tools"]})
            elif name == "WebMCP.toolsRemoved":
                for t in params["tools"]:
                    current.pop(t["name"], None)
        return current

    def wait_tools(self, names: set[str], timeout: float = 10.0) -> dict[str, dict[str, Any]]:
        return self.wait_for(lambda: names <= self.tools().keys() and self.tools(), f"tools {names}", timeout)

    def invoke(self, name: str, tool_input: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Invoke a tool and return its ``WebMCP.toolResponded`` params."""
        invocation = self.start(name, tool_input)
        return self.response(invocation, timeout)

    def start(self, name: str, tool_input: dict[str, Any]) -> str:
        tool = self.tools()[name]
        answer = self.cdp.send("WebMCP.invokeTool", {"frameId": tool["frameId"], "toolName": name, "input": tool_input})
        return answer["invocationId"]

    def response(self, invocation: str, timeout: float = 10.0) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next(
                (p for n, p in self.events if n == "WebMCP.toolResponded" and p["invocationId"] == invocation),
                None,
            )

        return self.wait_for(found, f"toolResponded for {invocation}", timeout)


def open_page(page: Page, url: str) -> WebMCP:
    """Enable WebMCP on a blank page first, then navigate (so iframe tools are reported too)."""
    page.goto("about:blank")
    mcp = WebMCP(page)
    page.goto(url)
    return mcp


def test_index_tools_are_announced(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=300")
    tools = mcp.wait_tools(MAIN_TOOLS | {"search_kb"})
    main_frame = tools["get_ticket"]["frameId"]
    assert {t["frameId"] for n, t in tools.items() if n in MAIN_TOOLS} == {main_frame}
    assert tools["search_kb"]["frameId"] != main_frame
    assert tools["search_kb"]["annotations"]["readOnly"] is True

    create = tools["create_ticket"]
    assert create["annotations"] == {"autosubmit": True}
    assert isinstance(create["backendNodeId"], int)
    assert create["inputSchema"]["required"] == ["subject"]
    assert create["inputSchema"]["properties"]["priority"]["enum"] == ["low", "normal", "high"]
    assert "autosubmit" not in tools["contact_customer"].get("annotations", {})

    assert tools["get_ticket"]["annotations"]["readOnly"] is True
    assert tools["close_ticket"]["annotations"]["consequential"] is True
    assert "annotations" not in tools["add_note"]
    assert "title" not in tools["get_ticket"]

    assert "escalate_ticket" not in tools
    late = mcp.wait_tools({"escalate_ticket"}, timeout=5)["escalate_ticket"]
    assert late["frameId"] == main_frame

    kb = mcp.invoke("search_kb", {"query": "refund"})
    assert kb["status"] == "Completed"
    assert kb["output"] == {"query": "refund", "titles": ["Refunding a duplicate card charge"]}


def test_replay_on_enable_after_load(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/?late=never")
    page.wait_for_function("document.modelContext && document.querySelector('#tickets tbody tr[data-id]')")
    mcp = WebMCP(page)
    tools = mcp.wait_tools(MAIN_TOOLS)
    assert "escalate_ticket" not in tools
    replay = [p for n, p in mcp.events if n == "WebMCP.toolsAdded"][0]
    assert MAIN_TOOLS <= {t["name"] for t in replay["tools"]}


def test_invoke_results_and_errors(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)

    ok = mcp.invoke("get_ticket", {"id": 101})
    assert ok["status"] == "Completed"
    assert ok["output"]["subject"] == "Cannot reset my password"

    missing = mcp.invoke("get_ticket", {"id": 999})
    assert missing["status"] == "Error"
    assert "No ticket #999" in missing["exception"]["description"]

    boom = mcp.invoke("explode", {})
    assert boom["status"] == "Error"
    assert boom["exception"]["description"].startswith("Error: Ticket database is on fire")

    listed = mcp.invoke("list_tickets", {"status": "closed"})
    assert [t["id"] for t in listed["output"]["tickets"]] == [104, 106]

    note = mcp.invoke("add_note", {"id": 102, "text": "Asked finance to re-issue"})
    assert note["output"] == "Note added to ticket #102"

    closed = mcp.invoke("close_ticket", {"id": 101, "resolution": "Reset link re-sent"})
    assert closed["output"] == {"id": 101, "status": "closed"}
    page.wait_for_selector("#tickets tr[data-id='101'] .badge.closed")

    created = mcp.invoke("create_ticket", {"subject": "Printer on fire", "priority": "high"})
    assert created["status"] == "Completed"
    assert created["output"] == {"id": 107, "subject": "Printer on fire"}
    page.wait_for_selector("#tickets tr[data-id='107']")

    state = http_json(f"{base_url}/api/state")
    by_id = {t["id"]: t for t in state["tickets"]}
    assert by_id[101]["status"] == "closed"
    assert by_id[102]["notes"] == ["Asked finance to re-issue"]
    assert by_id[107]["priority"] == "high"


def test_queue_summary_counts_the_shown_tickets_and_leaves_the_page_as_it_is(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)
    page.wait_for_selector("#tickets tr[data-id='106']")
    activity = page.inner_html("#activity")

    summary = mcp.invoke("get_queue_summary", {})

    assert summary["status"] == "Completed"
    assert summary["output"] == {
        "total": 6,
        "byStatus": {"open": 4, "closed": 2},
        "byPriority": {"high": 3, "normal": 2, "low": 1},
    }
    assert mcp.tools()["get_queue_summary"]["annotations"]["readOnly"] is True
    assert page.inner_html("#activity") == activity, "a quiet read-only tool writes nothing into the page"


def test_one_shot_tool_unregisters_itself(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)
    first = mcp.invoke("claim_welcome_bonus", {})
    assert first["output"] == {"claimed": True}
    # Chromium may also re-announce declarative form tools meanwhile: look for this one.
    removed = mcp.wait_for(
        lambda: [
            t
            for n, p in mcp.events
            if n == "WebMCP.toolsRemoved"
            for t in p["tools"]
            if t["name"] == "claim_welcome_bonus"
        ],
        "toolsRemoved",
    )
    assert removed[0]["name"] == "claim_welcome_bonus"
    assert "claim_welcome_bonus" not in mcp.tools()


def test_late_tool_can_be_disabled(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)
    page.wait_for_timeout(2000)  # bounded: longer than the default 1500 ms delay
    assert "escalate_ticket" not in mcp.tools()


def test_slow_report_completes_and_cancels(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)
    quick = mcp.invoke("slow_report", {"seconds": 0.2})
    assert quick["output"] == {"report": "done", "seconds": 0.2}

    invocation = mcp.start("slow_report", {"seconds": 20})
    mcp.wait_for(
        lambda: any(n == "WebMCP.toolInvoked" and p["invocationId"] == invocation for n, p in mcp.events),
        "toolInvoked",
    )
    mcp.cdp.send("WebMCP.cancelInvocation", {"invocationId": invocation})
    assert mcp.response(invocation, timeout=5)["status"] == "Canceled"


def test_open_ticket_in_new_tab(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/?late=never")
    mcp.wait_tools(MAIN_TOOLS)
    with page.context.expect_page(timeout=10_000) as new_page:
        assert mcp.invoke("open_ticket_in_new_tab", {"id": 103})["output"] == {"opened": True}
    tab = new_page.value
    tab.wait_for_selector("text=Ticket #103 — Mobile app crashes on launch")


def test_danger_zone_dialogs(page: Page, base_url: str) -> None:
    answers = {"confirm": True, "prompt": "Billing"}
    page.on(
        "dialog",
        lambda d: (
            d.accept(answers["prompt"])
            if d.type == "prompt"
            else (d.accept() if answers.get(d.type, True) else d.dismiss())
        ),
    )
    mcp = open_page(page, f"{base_url}/danger.html")
    mcp.wait_tools({"purge_closed_tickets", "rename_queue", "notify_agent"})
    assert mcp.tools()["purge_closed_tickets"]["annotations"]["consequential"] is True

    assert mcp.invoke("purge_closed_tickets", {})["output"] == {"purged": 2}
    dialogs = [p for n, p in mcp.events if n == "Page.javascriptDialogOpening"]
    assert dialogs[0]["type"] == "confirm" and dialogs[0]["message"] == "Really purge 2 closed tickets?"
    answers["confirm"] = False
    assert mcp.invoke("purge_closed_tickets", {})["output"] == {"purged": 0, "cancelled": True}
    assert mcp.invoke("rename_queue", {})["output"] == {"name": "Billing"}
    assert mcp.invoke("notify_agent", {"message": "Shift handover"})["output"] == "acknowledged"
    assert [p["type"] for n, p in mcp.events if n == "Page.javascriptDialogOpening"] == [
        "confirm",
        "confirm",
        "prompt",
        "alert",
    ]
    assert http_json(f"{base_url}/api/tickets?status=closed")["tickets"] == []


def test_modal_page(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/modal.html")
    tools = mcp.wait_tools({"open_editor", "page_info", "save_edit"})
    assert tools["save_edit"]["annotations"] == {"autosubmit": True}
    assert mcp.invoke("open_editor", {})["output"] == {"open": True}
    assert page.evaluate("document.getElementById('edit-dialog').open") is True
    saved = mcp.invoke("save_edit", {"name": "Billing", "sla": 2})
    assert saved["output"] == {"saved": True, "name": "Billing", "sla": 2}
    info = mcp.invoke("page_info", {})["output"]
    assert info == {"page": "queue-settings", "name": "Billing", "slaHours": 2, "editorOpen": False}


def test_other_pages(page: Page, base_url: str) -> None:
    mcp = open_page(page, f"{base_url}/big.html?rows=250")
    mcp.wait_tools({"count_rows"})
    out = mcp.invoke("count_rows", {})["output"]
    assert out["rows"] == 250 and out["total"] == 250 and out["listItems"] == 500

    mcp = open_page(page, f"{base_url}/ticket.html?id=102")
    mcp.wait_tools({"ticket_details"})
    page.wait_for_selector("h1:has-text('Ticket #102 — Invoice shows the wrong VAT rate')")
    assert mcp.invoke("ticket_details", {})["output"]["customer"] == "Fjord Logistics AS"

    mcp = open_page(page, f"{base_url}/login.html")
    sign_in = mcp.wait_tools({"sign_in"})["sign_in"]
    assert {"username", "password", "card", "otp"} <= sign_in["inputSchema"]["properties"].keys()
    result = mcp.invoke("sign_in", {"username": "sam.okafor", "password": "harbor"})
    assert result["output"] == {"signedIn": True, "username": "sam.okafor"}

    page.goto(f"{base_url}/churn.html")
    first = int(page.text_content("#counter") or "0")
    page.wait_for_function(f"Number(document.getElementById('counter').textContent) > {first + 10}")


def test_http_api(base_url: str) -> None:
    http_json(f"{base_url}/api/reset", "POST")
    assert len(http_json(f"{base_url}/api/tickets?status=open")["tickets"]) == 4
    assert http_json(f"{base_url}/api/kb?q=gdpr")["articles"][0]["id"] == "kb-5"
    with pytest.raises(urllib.error.HTTPError) as err:
        http_json(f"{base_url}/api/tickets/999")
    assert err.value.code == 404
    assert json.loads(err.value.read()) == {"error": "No ticket #999"}
    err.value.close()
