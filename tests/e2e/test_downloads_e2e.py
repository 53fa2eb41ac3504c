"""End to end: downloads go to the bridge's folder, are listed on their tab, read, named safely and capped."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.processes import wait_until
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def download_dir(tmp_path: Path) -> Path:
    return tmp_path / "downloads"


@pytest.fixture
async def stage(site: str, browser: BrowserProcess, download_dir: Path) -> AsyncIterator[Stage]:
    args = ("--download-dir", str(download_dir), "--download-limit", "1.5", "--download-total-limit", "2")
    async with open_stage(site, browser, "auto", *args, start_path="/files/downloads.html") as s:
        yield s


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _rows(window: dict[str, Any]) -> dict[str, tuple[int, str]]:
    table = next((b for b in window["blocks"] if b["type"] == "table" and b.get("id") == "downloads"), None)
    return {} if table is None else {r[0]: (r[1], r[2]) for r in table["rows"]}


async def _tab(stage: Stage) -> str:
    tab = await stage.tab_for("/files/downloads.html")
    await stage.wait_tools(lambda names: f"{tab['id']}__export_tickets" in names)
    return str(tab["id"])


async def _until_row(stage: Stage, tab: str, name: str, state: str) -> dict[str, Any]:
    def done(doc: dict[str, Any]) -> bool:
        window = next((w for w in doc["windows"] if w["id"] == tab), None)
        return window is not None and _rows(window).get(name, (0, ""))[1] == state

    doc = await stage.wait_windows(done)
    return next(w for w in doc["windows"] if w["id"] == tab)


async def test_a_tool_that_downloads_answers_with_it_and_the_text_can_be_read(stage: Stage, download_dir: Path) -> None:
    tab = await _tab(stage)
    answer = await stage.call(f"{tab}__export_tickets")
    assert not answer.is_error, answer.structured_content
    assert "tickets-export.json" in answer.structured_content["message"], answer.structured_content
    window = await _until_row(stage, tab, "tickets-export.json", "completed")
    size, _state = _rows(window)["tickets-export.json"]
    saved = download_dir / "tickets-export.json"
    assert saved.is_file() and saved.stat().st_size == size

    await stage.wait_tools(lambda names: f"{tab}__read_download" in names)
    read = await stage.call(f"{tab}__read_download", {"name": "tickets-export.json"})
    assert not read.is_error, read.structured_content
    body = read.structured_content
    assert body["untrustedContent"] is True and body["result"]["type"] == "application/json"
    assert json.loads(body["result"]["text"]) == json.loads(saved.read_text())
    assert len(json.loads(body["result"]["text"])["tickets"]) == 4

    missing = await stage.call(f"{tab}__read_download", {"name": "nope.csv"})
    assert missing.is_error and missing.structured_content["code"] == "action_not_available"


async def test_a_persons_downloads_are_listed_with_safe_names_inside_the_folder(
    stage: Stage, download_dir: Path, tmp_path: Path
) -> None:
    tab = await _tab(stage)
    page = await stage.user_page("/files/downloads.html")
    await page.click("#notes")  # the server names it ../../etc/notes<1>.txt
    await page.click("#image")
    await page.click("#report")
    window = await _until_row(stage, tab, "report.csv", "completed")
    await _until_row(stage, tab, "pixel.png", "completed")
    window = await stage.wait_windows(lambda d: True)
    rows = _rows(next(w for w in window["windows"] if w["id"] == tab))
    notes = next(name for name in rows if "notes" in name)
    assert "/" not in notes and "\\" not in notes and ".." not in notes and not notes.startswith(".")
    assert (download_dir / notes).read_text().startswith("Shift notes")
    assert _names(download_dir) == sorted([notes, "pixel.png", "report.csv"])
    assert not (tmp_path / "etc").exists()

    png = await stage.call(f"{tab}__read_download", {"name": "pixel.png"})
    assert not png.is_error and png.structured_content["result"]["type"] == "image/png"
    size = (download_dir / "pixel.png").stat().st_size
    assert "text" not in png.structured_content["result"] and png.structured_content["result"]["size"] == size > 0
    csv = await stage.call(f"{tab}__read_download", {"name": "report.csv"})
    assert csv.structured_content["result"]["text"].startswith("id,subject,status\n101,")


async def test_downloads_past_the_caps_are_cancelled_with_a_notice(stage: Stage, download_dir: Path) -> None:
    tab = await _tab(stage)
    page = await stage.user_page("/files/downloads.html")
    await page.click("#huge")  # 8 MiB, its length unknown until the end
    window = await _until_row(stage, tab, "huge.txt", "cancelled")
    notices = [b["text"] for b in window["blocks"] if b["type"] == "notice" and b.get("id", "").startswith("download-")]
    assert any("--download-limit" in n and "huge.txt" in n for n in notices), notices
    await page.click("#huge-declared")  # 8 MiB, said up front
    window = await _until_row(stage, tab, "huge (2).txt", "cancelled")

    # Two of 1 MiB each: the first fits, the second takes all downloads past 2 MB.
    await page.evaluate("location.href = '/files/huge?mb=1'")
    await _until_row(stage, tab, "huge (3).txt", "completed")
    await page.evaluate("location.href = '/files/huge?mb=1'")
    window = await _until_row(stage, tab, "huge (4).txt", "cancelled")
    notices = [b["text"] for b in window["blocks"] if b["type"] == "notice"]
    assert any("--download-total-limit" in n for n in notices), notices
    read = await stage.call(f"{tab}__read_download", {"name": "huge (4).txt"})
    assert read.is_error and "--download-total-limit" in read.structured_content["message"]
    # What a cancelled download had written is removed after the cancel (its row says cancelled at once).
    try:
        await wait_until(lambda: _names(download_dir) == ["huge (3).txt"], timeout=5)
    except TimeoutError:
        raise AssertionError(f"left in the folder: {_names(download_dir)}") from None


async def test_without_download_dir_a_temporary_folder_holds_them_until_the_bridge_exits(
    site: str, browser: BrowserProcess
) -> None:
    async with open_stage(site, browser, "auto", start_path="/files/downloads.html") as stage:
        tab = await _tab(stage)
        await stage.call(f"{tab}__export_tickets")
        await _until_row(stage, tab, "tickets-export.json", "completed")
        read = await stage.call(f"{tab}__read_download", {"name": "tickets-export.json"})
        saved = Path(read.structured_content["result"]["path"])
        assert saved.name in _names(saved.parent) and saved.parent.name.startswith("webmcp-downloads-")
    await wait_until(lambda: not saved.parent.exists(), timeout=10)  # the bridge removes it as it exits


async def test_a_tool_that_clicks_a_download_link_answers_with_the_download(stage: Stage) -> None:
    tab = await _tab(stage)
    answer = await stage.call(f"{tab}__download_report")
    assert not answer.is_error, answer.structured_content
    message = answer.structured_content["message"]
    assert "report.csv" in message and "now shows" not in message and "moved to" not in message, message
    window = await _until_row(stage, tab, "report.csv", "completed")
    assert "Downloads" in window["title"]


async def test_navigating_to_a_download_says_so_and_the_tab_stays(stage: Stage) -> None:
    tab = await _tab(stage)
    answer = await stage.call(f"{tab}__navigate", {"url": stage.site + "/files/data.json"})
    assert not answer.is_error, answer.structured_content
    message = answer.structured_content["message"]
    assert "is a download, not a page" in message and "data.json" in message, message
    assert "/files/downloads.html" in message
    await _until_row(stage, tab, "data.json", "completed")
