"""The origin policy: local schemes refused by default, blocked origins shown without content or tools."""

from __future__ import annotations

import json

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import address_of, open_stage, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "chrome://settings/", "javascript:alert(1)", "data:text/html,<b>x</b>"]
)
async def test_navigate_and_open_tab_refuse_local_and_script_urls(site: str, browser: BrowserProcess, url: str) -> None:
    async with open_stage(site, browser, "auto") as stage:
        win = (await stage.tab_for("/"))["id"]
        before = await stage.windows()
        for name, args in ((f"{win}__navigate", {"url": url}), ("app__open_tab", {"url": url})):
            refused = await stage.call(name, args)
            assert refused.is_error and refused.structured_content["code"] == "validation_failed"
            assert refused.structured_content["fields"][0]["field"] == "url"
        after = await stage.windows()
        assert [w["id"] for w in after["windows"]] == [w["id"] for w in before["windows"]]
        assert "root:" not in json.dumps(after), "nothing of /etc/passwd reached the agent"


async def test_a_blocked_origin_is_a_window_with_its_title_and_a_notice_only(
    site: str, browser: BrowserProcess
) -> None:
    # The sample site itself is on 127.0.0.1: block "localhost" and let the user go there.
    port = site.rsplit(":", 1)[1]
    async with open_stage(site, browser, "auto", "--block-origin", f"http://localhost:{port}") as stage:
        win = (await stage.tab_for("/"))["id"]
        refused = await stage.call(f"{win}__navigate", {"url": f"http://localhost:{port}/ticket.html?id=101"})
        assert refused.is_error and "blocked" in refused.structured_content["message"]
        page = await stage.user_page("/")
        await user_navigates(page, f"http://localhost:{port}/ticket.html?id=101")
        doc = await stage.wait_windows(
            lambda d: any(
                address_of(w).startswith("http://localhost") and w["summary"].startswith("This page is not")
                for w in d["windows"]
            )  # fmt: skip
        )
        (tab,) = [w for w in doc["windows"] if address_of(w).startswith("http://localhost")]
        assert [b["type"] for b in tab["blocks"]] == ["fields", "notice"]
        assert "Cannot reset my password" not in json.dumps(doc)
        names = await stage.tool_names()
        assert not [n for n in names if n.startswith(f"{tab['id']}__") and "ticket" in n]
        read = await stage.call(f"{tab['id']}__read_content")
        assert "Cannot reset my password" not in json.dumps(read.structured_content)
