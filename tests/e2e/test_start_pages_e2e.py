"""The command line's pages: a launched browser's first state shows them as they came up.

Until MCP is served the start pages' tabs are read only once their pages are usable (the
blank tab the first one replaces is never read): whatever a start page does as it loads, the
first `app://windows` a client reads must still say it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.mcp_harness import McpTestClient, open_stdio_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BRIDGE = [sys.executable, "-m", "webmcp", "--headless"]
WAIT = 20.0


async def _windows(mcp: McpTestClient) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
    return doc


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _modals(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"]]


async def _until(mcp: McpTestClient, holds: Any) -> dict[str, Any]:
    """The windows once `holds(doc)`, waiting on the bridge's change notifications."""
    with anyio.fail_after(WAIT):
        while True:
            seen = mcp.notifications.count("resource_updated")
            doc = await _windows(mcp)
            if holds(doc):
                return doc
            await mcp.notifications.wait_for("resource_updated", seen, timeout=WAIT)


async def test_the_first_state_of_a_start_page_shows_what_it_rendered_from_its_data(site: str, tmp_path: Path) -> None:
    command = [*BRIDGE, "--user-data-dir", str(tmp_path / "profile"), site + "/"]
    async with open_stdio_client(command) as mcp:
        first = await _windows(mcp)
        assert [w["id"] for w in first["windows"]] == ["tab-1"], first
        shown = json.dumps(_window(first, "tab-1"))
        # The queue's rows come from /api/tickets, fetched by the page's script once it has parsed.
        assert "Cannot reset my password" in shown, shown
        assert "Loading" not in _window(first, "tab-1")["summary"]


def _not_asked_while_held(log: Path) -> None:
    """The page a dialog or sign-in held was not asked whether it has WebMCP: it would have answered
    only once someone answered them, and held start-up for the whole command timeout first."""
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "serving MCP" in text, "the log is the bridge's, at INFO at least"
    assert "could not be asked about WebMCP" not in text, text[-2000:]


async def test_a_start_page_that_alerts_as_it_loads_is_a_dialog_window_over_its_tab(site: str, tmp_path: Path) -> None:
    page = site + "/danger.html?onload=alert"
    command = [*BRIDGE, "--log-level", "DEBUG", "--user-data-dir", str(tmp_path / "profile"), page]
    log = tmp_path / "bridge.log"
    with log.open("w") as errlog, anyio.fail_after(WAIT):
        async with open_stdio_client(command, errlog=errlog) as mcp:
            first = await _windows(mcp)
            _not_asked_while_held(log)
            await _answer_the_alert_and_the_page_loads(mcp, first)


async def _answer_the_alert_and_the_page_loads(mcp: McpTestClient, first: dict[str, Any]) -> None:
    (dialog,) = _modals(first)
    assert dialog["ownerId"] == "tab-1" and "Scheduled maintenance" in json.dumps(dialog), first
    assert first["operableWindowIds"] == [dialog["id"]]
    answer = await mcp.client.call_tool(f"{dialog['id']}__accept", {})
    assert not answer.is_error, answer.structured_content
    # The page loads on once answered, and its tab follows it (the start page's tab is read again).
    doc = await _until(mcp, lambda d: not _modals(d) and "Danger zone" in _window(d, "tab-1")["title"])
    assert "tab-1" in doc["operableWindowIds"]
    with anyio.fail_after(WAIT):
        while "tab-1__purge_closed_tickets" not in {t.name for t in (await mcp.client.list_tools()).tools}:
            await mcp.notifications.wait_for("tools_list_changed", timeout=WAIT)


async def test_two_start_pages_are_both_usable_in_the_first_state(site: str, tmp_path: Path) -> None:
    command = [*BRIDGE, "--user-data-dir", str(tmp_path / "profile"), site + "/", site + "/danger.html"]
    async with open_stdio_client(command) as mcp:
        names = {t.name for t in (await mcp.client.list_tools()).tools}
        assert {"tab-1__list_tickets", "tab-2__purge_closed_tickets"} <= names, sorted(names)
        first = await _windows(mcp)
        assert [w["id"] for w in first["windows"]] == ["tab-1", "tab-2"], first
        assert "Cannot reset my password" in json.dumps(_window(first, "tab-1"))
        assert "Danger zone" in _window(first, "tab-2")["title"]


async def test_a_start_page_behind_a_sign_in_is_a_sign_in_window_over_its_tab(site: str, tmp_path: Path) -> None:
    command = [*BRIDGE, "--log-level", "DEBUG", "--user-data-dir", str(tmp_path / "profile"), site + "/private/"]
    log = tmp_path / "bridge.log"
    with log.open("w") as errlog, anyio.fail_after(WAIT):
        async with open_stdio_client(command, errlog=errlog) as mcp:
            first = await _windows(mcp)
            _not_asked_while_held(log)
            (prompt,) = _modals(first)
            assert prompt["ownerId"] == "tab-1" and "basic" in prompt["summary"], first
            names = {t.name for t in (await mcp.client.list_tools()).tools}
            assert f"{prompt['id']}__sign_in" in names, sorted(names)
