"""End to end: a page's permission requests are denied (or granted by --grant) and never silently."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _notices(window: dict[str, Any]) -> dict[str, str]:
    return {b["id"]: b["text"] for b in window["blocks"] if b["type"] == "notice" and "id" in b}


async def _open(stage: Stage, tool: str) -> str:
    win = str((await stage.tab_for("/"))["id"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + "/permissions.html"})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)
    return win


async def test_an_agents_call_that_asks_for_geolocation_is_denied_and_the_window_says_so(stage: Stage) -> None:
    win = await _open(stage, "find_nearest_office")
    found = await stage.call(f"{win}__find_nearest_office")
    assert not found.is_error, found.structured_content
    assert found.structured_content["result"] == {"error": "permission denied"}, "the browser's own answer"
    doc = await stage.wait_windows(
        lambda d: "permission-geolocation" in _notices(next(w for w in d["windows"] if w["id"] == win))
    )
    text = _notices(next(w for w in doc["windows"] if w["id"] == win))["permission-geolocation"]
    assert "asked for geolocation" in text and "denied" in text and "--grant geolocation" in text


async def test_a_persons_click_that_asks_for_notifications_is_denied_and_named(stage: Stage) -> None:
    win = await _open(stage, "enable_alerts")
    page = await stage.user_page("/permissions.html")
    await page.click("#alerts")
    await page.wait_for_function("document.getElementById('alert-state').textContent === 'denied'")
    doc = await stage.wait_windows(
        lambda d: "permission-notifications" in _notices(next(w for w in d["windows"] if w["id"] == win))
    )
    notices = _notices(next(w for w in doc["windows"] if w["id"] == win))
    assert "denied" in notices["permission-notifications"]
    assert "permission-geolocation" not in notices, "only what the page asked for"


async def test_a_page_cannot_call_the_probe_to_fake_a_request(stage: Stage) -> None:
    win = await _open(stage, "enable_alerts")
    page = await stage.user_page("/permissions.html")
    seen = await page.evaluate("Object.keys(window).filter(k => k.toLowerCase().includes('webmcp'))")
    assert seen == [], "the probe's binding is not on the page's global object"
    doc = await stage.windows()
    assert not [k for k in _notices(next(w for w in doc["windows"] if w["id"] == win)) if k.startswith("permission")]


async def test_grant_allows_one_permission_for_every_site(site: str, browser: BrowserProcess) -> None:
    async with open_stage(site, browser, "auto", "--grant", "notifications") as stage:
        win = await _open(stage, "enable_alerts")
        answer = await stage.call(f"{win}__enable_alerts")
        assert answer.structured_content["result"] == {"permission": "granted"}
        found = await stage.call(f"{win}__find_nearest_office")
        assert found.structured_content["result"] == {"error": "permission denied"}, "only what --grant names"
        doc = await stage.wait_windows(
            lambda d: (
                {"permission-notifications", "permission-geolocation"}
                <= set(_notices(next(w for w in d["windows"] if w["id"] == win)))
            )
        )
        notices = _notices(next(w for w in doc["windows"] if w["id"] == win))
        assert "granted" in notices["permission-notifications"] and "denied" in notices["permission-geolocation"]
        assert "granted" not in json.dumps(notices["permission-geolocation"])
