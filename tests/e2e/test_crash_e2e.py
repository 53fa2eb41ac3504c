"""A tab whose renderer crashed stays a window that says so, and reload and close still work."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def _says_crashed(doc: dict[str, Any], window_id: str) -> bool:
    window = _window(doc, window_id)
    return window is not None and any(
        b["type"] == "notice" and b["severity"] == "error" and "crashed" in b["text"] for b in window["blocks"]
    )


async def _crash(stage: Stage, path: str) -> str:
    win = (await stage.tab_for(path))["id"]
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
    page = await stage.user_page(path)
    session = await page.context.new_cdp_session(page)
    # The renderer dies before it can answer, so the command never returns: bound it.
    with anyio.move_on_after(3):
        await session.send("Page.crash")
    await stage.wait_windows(lambda d: _says_crashed(d, win))
    return win


async def test_a_crashed_tab_stays_a_window_with_a_crash_notice_and_reload_brings_it_back(stage: Stage) -> None:
    win = await _crash(stage, "/")
    doc = await stage.windows()
    assert win in doc["operableWindowIds"]
    assert "crashed" in _window(doc, win)["summary"]
    names = await stage.tool_names()
    assert f"{win}__navigate" in names and f"{win}__close" in names
    assert f"{win}__list_tickets" not in names, "a crashed page offers no page tools"

    reloaded = await stage.call(f"{win}__navigate", {"go": "reload"})
    assert not reloaded.is_error, reloaded.structured_content
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
    doc = await stage.wait_windows(lambda d: not _says_crashed(d, win))
    assert _window(doc, win) is not None
    listed = await stage.call(f"{win}__list_tickets")
    assert not listed.is_error and listed.structured_content["result"]["tickets"]


async def test_a_crashed_tab_can_be_closed(stage: Stage) -> None:
    win = await _crash(stage, "/")
    closed = await stage.call(f"{win}__close")
    assert not closed.is_error, closed.structured_content
    doc = await stage.wait_windows(lambda d: _window(d, win) is None)
    assert win not in doc["operableWindowIds"]


async def test_calls_queued_on_a_tab_when_it_crashes_end_at_once_and_reload_follows(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__slow_report" in n)
    page = await stage.user_page("/")
    session = await page.context.new_cdp_session(page)
    answers: dict[str, Any] = {}

    async def call(name: str, args: dict[str, Any]) -> None:
        answers[name] = await stage.call(f"{win}__{name}", args)

    # Well inside the tool deadline (30 s): the calls end on the crash, not on their deadlines.
    with anyio.fail_after(12):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "slow_report", {"seconds": 20})
            tg.start_soon(call, "list_tickets", {})  # queued behind the slow report
            await stage.wait_windows(lambda d: "Building report" in str(d))
            with anyio.move_on_after(3):
                await session.send("Page.crash")
        reloaded = await stage.call(f"{win}__navigate", {"go": "reload"})
    # The report was running at the crash: it ends at once, never claimed done or failed.
    assert answers["slow_report"].structured_content["code"] == "call_interrupted"
    # The list call reaches the bridge in either order: queued behind the report it ends with
    # the crash; first in line it simply completed before the report began.
    listed = answers["list_tickets"]
    assert not listed.is_error or listed.structured_content["code"] in ("call_interrupted", "action_not_available")
    assert not reloaded.is_error
