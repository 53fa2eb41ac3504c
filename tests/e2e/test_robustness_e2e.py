"""What a page does must not hang or kill the bridge, nor stall the other windows."""

from __future__ import annotations

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage, tool_started

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _second_tab(stage: Stage) -> str:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/ticket.html?id=101"})
    (other,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{other}__ticket_details" in n)
    return other


async def test_a_hung_page_times_out_while_other_windows_keep_working(site: str, browser: BrowserProcess) -> None:
    async with open_stage(site, browser, "auto", "--tool-timeout", "3", start_path="/danger.html") as stage:
        win = (await stage.tab_for("/danger.html"))["id"]
        await stage.wait_tools(lambda n: f"{win}__freeze_page" in n)
        other = await _second_tab(stage)
        results: dict[str, object] = {}
        finished: list[str] = []

        async def freeze() -> None:
            results["frozen"] = await stage.call(f"{win}__freeze_page", {"seconds": 8})
            finished.append("frozen")

        async with anyio.create_task_group() as tg:
            tg.start_soon(freeze)
            await anyio.sleep(0.3)  # let the freeze begin; the point is what happens meanwhile
            results["other"] = await stage.call(f"{other}__ticket_details")
            results["windows"] = await stage.windows()
            finished.append("other")
        frozen = results["frozen"]
        assert frozen.is_error and frozen.structured_content["code"] == "action_timeout"
        assert not results["other"].is_error, "another tab's tool answered while this one hung"
        assert results["other"].structured_content["result"]["id"] == 101
        assert any(w["id"] == win for w in results["windows"]["windows"])
        assert finished == ["other", "frozen"], "the other window was served while this one hung"


async def test_a_crashed_tab_ends_its_call_and_leaves_the_bridge_serving(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__slow_report" in n)
    other = await _second_tab(stage)
    page = await stage.user_page("/")
    session = await page.context.new_cdp_session(page)
    results: list = []

    async def slow() -> None:
        results.append(await stage.call(f"{win}__slow_report", {"seconds": 20}))

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow)
        await tool_started(page, "slow_report")
        # The renderer dies before it can answer, so the command never returns: bound it.
        with anyio.move_on_after(5):
            await session.send("Page.crash")
    (crashed,) = results
    assert crashed.is_error and crashed.structured_content["code"] == "call_interrupted"
    assert "crashed" in crashed.structured_content["message"]
    doc = await stage.wait_windows(lambda d: any(w["id"] == win and "crashed" in w["summary"] for w in d["windows"]))
    assert other in doc["operableWindowIds"]
    still = await stage.call(f"{other}__ticket_details")
    assert not still.is_error


async def test_a_write_whose_version_cannot_be_checked_is_refused_not_let_through(
    site: str, browser: BrowserProcess
) -> None:
    async with open_stage(site, browser, "auto", "--snapshot-timeout", "1", start_path="/") as stage:
        win = (await stage.tab_for("/"))["id"]
        await stage.wait_tools(lambda n: f"{win}__close_ticket" in n)
        version = (await stage.tab_for("/"))["version"]
        page = await stage.user_page("/")
        # The page's main thread is busy for 4 s: its accessibility tree cannot be read meanwhile.
        await page.evaluate("setTimeout(() => { const t = Date.now(); while (Date.now() - t < 4000) {} }, 0)")
        refused = await stage.call(
            f"{win}__close_ticket", {"id": 101, "resolution": "Fixed", "expectedVersion": version}
        )
        assert refused.is_error, refused.structured_content
        assert refused.structured_content["code"] == "state_unverified"
        assert refused.structured_content["currentVersion"] >= version
        state = await page.evaluate("fetch('/api/tickets/101').then((r) => r.json())")
        assert state["status"] == "open", "the write went through although its version was never checked"
