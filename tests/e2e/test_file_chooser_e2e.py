"""End to end: a page's file chooser is a modal window; files come only from --upload-dir."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import open_http_client
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

RESUME = "Ada Lovelace\nAnalytical engines, 1843.\n"


@pytest.fixture
def upload_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "uploads"
    (folder / "letters").mkdir(parents=True)
    (folder / "resume.txt").write_text(RESUME)
    (folder / "letters" / "cover.txt").write_text("Dear Harbor,\n")
    secret = tmp_path / "outside.txt"
    secret.write_text("not for the page")
    (folder / "escape.txt").symlink_to(secret)
    (folder / "alias.txt").symlink_to(folder / "resume.txt")
    return folder


@pytest.fixture
async def stage(site: str, browser: BrowserProcess, upload_dir: Path) -> AsyncIterator[Stage]:
    async with open_stage(site, browser, "auto", "--upload-dir", str(upload_dir), start_path="/files/upload.html") as s:
        yield s


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def _fields(window: dict[str, Any]) -> dict[str, Any]:
    block = next(b for b in window["blocks"] if b["type"] == "fields")
    return {i["label"]: i["value"] for i in block["items"]}


async def _tab(stage: Stage) -> str:
    tab = await stage.tab_for("/files/upload.html")
    await stage.wait_tools(lambda names: f"{tab['id']}__attach_resume" in names)
    return str(tab["id"])


async def _chooser_of(stage: Stage, tab: str) -> dict[str, Any]:
    doc = await stage.wait_windows(
        lambda d: any(w["modal"] and w["ownerId"] == tab and w["title"].startswith("Choose") for w in d["windows"])
    )
    return next(w for w in doc["windows"] if w["modal"] and w["ownerId"] == tab)


async def test_a_file_input_in_its_label_is_shown_once_and_pressed_open(stage: Stage) -> None:
    # `<label>Cover letter <input type=file></label>`: Chromium's tree holds a button the label
    # names inside the label, and the walk, looking there for fields only, left both out.
    tab = await _tab(stage)
    window = await stage.tab_for("/files/upload.html")
    texts = [b.get("text") for b in window["blocks"] if b["type"] == "text"]
    assert texts.count("Cover letter") == 1, texts
    pressed = await stage.call(f"{tab}__press", {"label": "Cover letter"})
    assert not pressed.is_error, pressed.structured_content
    (chooser_id,) = pressed.structured_content["openedWindowIds"]
    doc = await stage.wait_windows(lambda d: (_window(d, chooser_id) or {}).get("title", "").endswith("letter\u2019"))
    assert _window(doc, chooser_id)["title"] == "Choose a file for \u2018Cover letter\u2019"  # type: ignore[index]
    chosen = await stage.call(f"{chooser_id}__choose", {"paths": ["letters/cover.txt"]})
    assert not chosen.is_error, chosen.structured_content
    doc = await stage.wait_windows(lambda d: "Cover letter: cover.txt" in json.dumps(_window(d, tab)))


async def test_a_page_tool_that_opens_the_chooser_answers_with_its_window_and_choose_uploads(
    stage: Stage, upload_dir: Path
) -> None:
    tab = await _tab(stage)
    opened = await stage.call(f"{tab}__attach_resume")
    assert not opened.is_error, opened.structured_content
    (chooser_id,) = opened.structured_content["openedWindowIds"]
    doc = await stage.wait_windows(lambda d: (_window(d, chooser_id) or {}).get("title", "").endswith("Résumé\u2019"))
    chooser = _window(doc, chooser_id)
    assert chooser is not None and chooser["modal"] and chooser["ownerId"] == tab
    assert chooser["title"] == "Choose files for \u2018Résumé\u2019"
    fields = _fields(chooser)
    assert fields["Accepts"] == ".txt,.pdf,text/plain" and fields["Several files"] == "yes"
    listed = next(b for b in chooser["blocks"] if b["type"] == "list")["items"]
    assert "resume.txt" in listed and "letters/cover.txt" in listed and "escape.txt" not in listed
    assert tab not in doc["operableWindowIds"] and chooser_id in doc["operableWindowIds"]

    blocked = await stage.call(f"{tab}__navigate", {"go": "reload"})
    assert blocked.is_error and blocked.structured_content["code"] == "blocked_by_modal"
    assert blocked.structured_content["blockingWindowId"] == chooser_id

    chosen = await stage.call(f"{chooser_id}__choose", {"paths": ["resume.txt", "letters/cover.txt"]})
    assert not chosen.is_error, chosen.structured_content
    assert chosen.structured_content["result"]["files"] == [
        {"name": "resume.txt", "size": len(RESUME)},
        {"name": "cover.txt", "size": len("Dear Harbor,\n")},
    ]
    doc = await stage.wait_windows(lambda d: _window(d, chooser_id) is None and tab in d["operableWindowIds"])
    assert f"Chosen: resume.txt ({len(RESUME)} bytes), cover.txt" in json.dumps(_window(doc, tab))

    sent = await stage.call(f"{tab}__send_application")
    assert not sent.is_error, sent.structured_content
    page = await stage.wait_windows(lambda d: "Upload received" in json.dumps(d))
    text = json.dumps(page)
    assert f"resume.txt ({len(RESUME)} bytes)" in text and "cover.txt (13 bytes)" in text


async def test_bad_paths_are_refused_by_name_and_change_nothing_then_cancel_closes(stage: Stage) -> None:
    tab = await _tab(stage)
    opened = await stage.call(f"{tab}__attach_resume")
    (chooser_id,) = opened.structured_content["openedWindowIds"]
    await stage.wait_windows(lambda d: _window(d, chooser_id) is not None)
    for path, says in [
        ("/etc/hostname", "outside the upload folder"),
        ("../outside.txt", "outside the upload folder"),
        ("missing.txt", "no such file"),
        ("letters", "is a directory"),
        ("escape.txt", "leaves the upload folder through a symlink"),
    ]:
        refused = await stage.call(f"{chooser_id}__choose", {"paths": ["resume.txt", path]})
        assert refused.is_error, path
        body = refused.structured_content
        assert body["code"] == "validation_failed" and path in body["message"] and says in body["message"], body
        assert body["fields"] == [{"field": "paths[1]", "error": body["fields"][0]["error"]}]
    doc = await stage.windows()
    assert _window(doc, chooser_id) is not None, "a refused choice leaves the chooser open"
    assert "No file chosen yet." in json.dumps(_window(doc, tab)) or tab not in doc["operableWindowIds"]

    alias = await stage.call(f"{chooser_id}__choose", {"paths": ["alias.txt"]})
    assert not alias.is_error, "a symlink that stays inside the folder is fine"
    assert alias.structured_content["result"]["files"] == [{"name": "resume.txt", "size": len(RESUME)}]

    opened = await stage.call(f"{tab}__attach_resume")
    (again,) = opened.structured_content["openedWindowIds"]
    cancelled = await stage.call(f"{again}__cancel")
    assert not cancelled.is_error and "nothing was chosen" in cancelled.structured_content["message"]
    doc = await stage.wait_windows(lambda d: _window(d, again) is None and tab in d["operableWindowIds"])
    assert "Chosen: resume.txt" in json.dumps(_window(doc, tab)), "cancel leaves the field as it was"


async def test_a_persons_click_opens_a_chooser_window_for_one_file(stage: Stage) -> None:
    tab = await _tab(stage)
    page = await stage.user_page("/files/upload.html")
    await page.click("#photo")
    chooser = await _chooser_of(stage, tab)
    await stage.wait_windows(
        lambda d: (_window(d, chooser["id"]) or {}).get("title") == "Choose a file for \u2018Photo\u2019"
    )
    two = await stage.call(f"{chooser['id']}__choose", {"paths": ["resume.txt", "alias.txt"]})
    assert two.is_error and two.structured_content["code"] == "validation_failed"
    one = await stage.call(f"{chooser['id']}__choose", {"paths": ["resume.txt"]})
    assert not one.is_error, one.structured_content
    count = await page.evaluate("document.getElementById('photo').files.length")
    assert count == 1


async def test_the_chooser_closes_by_itself_when_the_page_goes_away(stage: Stage) -> None:
    tab = await _tab(stage)
    opened = await stage.call(f"{tab}__attach_resume")
    (chooser_id,) = opened.structured_content["openedWindowIds"]
    page = await stage.user_page("/files/upload.html")
    await page.evaluate("location.href = '/files/downloads.html'")
    doc = await stage.wait_windows(lambda d: _window(d, chooser_id) is None)
    assert tab in doc["operableWindowIds"]
    late = await stage.call(f"{chooser_id}__choose", {"paths": ["resume.txt"]})
    assert late.is_error and late.structured_content["code"] == "window_not_found"


async def test_without_upload_dir_the_chooser_says_so_and_choose_explains(site: str, browser: BrowserProcess) -> None:
    async with open_stage(site, browser, "auto", start_path="/files/upload.html") as stage:
        tab = await _tab(stage)
        opened = await stage.call(f"{tab}__attach_resume")
        (chooser_id,) = opened.structured_content["openedWindowIds"]
        doc = await stage.wait_windows(lambda d: _window(d, chooser_id) is not None)
        notice = next(b for b in _window(doc, chooser_id)["blocks"] if b["type"] == "notice")
        assert "--upload-dir" in notice["text"]
        refused = await stage.call(f"{chooser_id}__choose", {"paths": ["resume.txt"]})
        assert refused.is_error and refused.structured_content["code"] == "action_not_available"
        assert "--upload-dir" in refused.structured_content["message"]
        assert not (await stage.call(f"{chooser_id}__cancel")).is_error


async def test_two_clients_racing_to_answer_one_chooser_exactly_one_wins(
    site: str, browser: BrowserProcess, upload_dir: Path
) -> None:
    async with (
        http_bridge(browser, "--upload-dir", str(upload_dir), site + "/files/upload.html") as (url, token),
        open_http_client(url, token, "auto") as first,
        open_http_client(url, token, "legacy") as second,
    ):
        with anyio.fail_after(20):
            while True:
                names = [t.name for t in (await first.client.list_tools()).tools]
                if any(n.endswith("__attach_resume") for n in names):
                    break
                await first.notifications.wait_for("tools_list_changed", timeout=20)
        tab = next(n for n in names if n.endswith("__attach_resume")).split("__")[0]
        opened = await first.client.call_tool(f"{tab}__attach_resume", {})
        (chooser_id,) = opened.structured_content["openedWindowIds"]
        results: list[Any] = [None, None]

        async def answer(index: int, client: Any, tool: str, args: dict[str, Any]) -> None:
            results[index] = await client.call_tool(f"{chooser_id}__{tool}", args)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer, 0, first.client, "choose", {"paths": ["resume.txt"]})
            tg.start_soon(answer, 1, second.client, "cancel", {})
        winners = [r for r in results if not r.is_error]
        losers = [r for r in results if r.is_error]
        assert len(winners) == 1 and len(losers) == 1, [r.structured_content for r in results]
        assert losers[0].structured_content["code"] in ("window_not_found", "stale_state")
        doc = json.loads((await second.client.read_resource("app://windows")).contents[0].text)
        assert all(w["id"] != chooser_id for w in doc["windows"]) and tab in doc["operableWindowIds"]
