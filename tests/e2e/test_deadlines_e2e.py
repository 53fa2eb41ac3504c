"""A call past its deadline is answered at the deadline, and says whether the page was told."""

from __future__ import annotations

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_slow_tool_past_its_deadline_is_cancelled_and_the_page_confirms(
    site: str, browser: BrowserProcess
) -> None:
    async with open_stage(site, browser, "auto", "--tool-timeout", "2") as stage:
        win = (await stage.tab_for("/"))["id"]
        await stage.wait_tools(lambda n: f"{win}__slow_report" in n)
        answer = await stage.call(f"{win}__slow_report", {"seconds": 30})
        body = answer.structured_content
        assert answer.is_error and body["code"] == "action_timeout", body
        assert body["pageTold"] is True
        assert "confirmed" in body["message"]
        await stage.wait_windows(lambda d: "Report cancelled" in str(d))


async def test_a_busy_page_past_the_deadline_is_answered_without_claiming_a_cancel(
    site: str, browser: BrowserProcess
) -> None:
    async with open_stage(site, browser, "auto", "--tool-timeout", "2", start_path="/danger.html") as stage:
        win = (await stage.tab_for("/danger.html"))["id"]
        await stage.wait_tools(lambda n: f"{win}__freeze_page" in n)
        answer = await stage.call(f"{win}__freeze_page", {"seconds": 8})
        body = answer.structured_content
        assert answer.is_error and body["code"] == "action_timeout", body
        assert body["pageTold"] is False, "a page whose main thread is busy cannot confirm a cancel"
        assert "cancelled" not in body["message"]
        # The page is still frozen: a write's version check cannot read it, and says so by the deadline.
        version = (await stage.windows())["windows"][0]["version"]
        with anyio.fail_after(30):
            queued = await stage.call(f"{win}__freeze_page", {"seconds": 1, "expectedVersion": version})
        body = queued.structured_content
        # The version could not be checked against the page by the deadline: never a pass.
        assert queued.is_error and body["code"] == "state_unverified", body
        assert body["pageTold"] is False and "could not be checked" in body["message"]
