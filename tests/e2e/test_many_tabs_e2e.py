"""End to end: with more tabs than keep their last read's nodes (`memory.KEEP_READS`), a tab read
longest ago lets its nodes go, and its window still follows its page: what a person types, and
what a page tool changes (read after write), shows as a whole read gives it.

The bridge runs with `WEBMCP_VERIFY_INCREMENTAL=1` (every incremental read checked against a
whole one): a tab that shed its nodes must read whole, never splice into nodes it no longer has.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import open_stage
from webmcp.desktop.memory import KEEP_READS

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_tab_that_shed_its_nodes_still_shows_what_the_person_and_the_tools_did(
    site: str, browser: BrowserProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = tmp_path / "counts.json"
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL", "1")
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL_COUNTS", str(counts))
    errors = tmp_path / "bridge.log"
    with errors.open("w", encoding="utf-8") as errlog:
        async with open_stage(site, browser, "auto", errlog=errlog) as stage:
            home = (await stage.tab_for("/"))["id"]
            await stage.wait_tools(lambda names: f"{home}__add_note" in names)
            page = await stage.user_page("/")
            opened = []
            for n in range(KEEP_READS + 1):  # each read after the home tab's last read
                answer = await stage.call("app__open_tab", {"url": f"{site}/ticket.html?id={101 + n % 3}&n={n}"})
                assert not answer.is_error, answer.structured_content
                opened += answer.structured_content["openedWindowIds"]
            for win in opened:
                await stage.wait_windows(
                    lambda d, w=win: any(x["id"] == w and "Ticket" in json.dumps(x) for x in d["windows"])
                )

            await page.locator("#subject").first.click(timeout=10_000)
            await page.keyboard.type("Printer on fire", delay=20)
            await page.keyboard.press("Tab")
            await stage.wait_windows(lambda d: "Printer on fire" in json.dumps(_window(d, home)))

            noted = await stage.call(f"{home}__add_note", {"id": 101, "text": "Called the customer back"})
            assert not noted.is_error, noted.structured_content
            # Read after write: the window read right after the answer already shows the call.
            with anyio.fail_after(30):
                home_window = _window(await stage.windows(), home)
            assert "add_note" in json.dumps(home_window), "the page's activity log shows the call"
            assert "Printer on fire" in json.dumps(home_window), "what the person typed is still shown"
    log = errors.read_text(encoding="utf-8")
    assert "an incremental read differs" not in log, log[log.find("an incremental read differs") :][:4000]
    seen = json.loads(counts.read_text(encoding="utf-8")) if counts.exists() else {}
    assert seen.get("mismatches", 0) == 0, seen


def _window(doc: dict, window_id: str) -> dict:
    return next(w for w in doc["windows"] if w["id"] == window_id)
