"""Reads are fresh (issue 39 item 6): a read of `app://windows` shows every change the page made
before the read arrived, and the first read after a load shows the new document.

The person's side (Playwright on the same Chromium) changes the page and returns once the
change is in the document; the agent's read is sent right after, over a real MCP transport.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from tests.support.stage import Stage, address_of, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROUNDS = 20


def _tab(doc: dict[str, Any], win: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == win)


def _text(window: dict[str, Any]) -> str:
    return json.dumps(window["blocks"], ensure_ascii=False)


async def _open(stage: Stage, path: str) -> str:
    opened = await stage.call("app__open_tab", {"url": stage.site + path})
    assert not opened.is_error, opened.structured_content
    (win,) = opened.structured_content["openedWindowIds"]
    return str(win)


async def test_a_read_right_after_the_page_swaps_its_content_shows_the_new_content(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    page = await stage.user_page("/slow/swap.html")
    stale: list[int] = []
    for _ in range(ROUNDS):
        story = await page.evaluate("swapStory()")  # returns once the story is in the document
        window = _tab(await stage.windows(), win)
        if f"Story {story}" not in _text(window):
            stale.append(story)
    print(f"stale reads after an in-place swap: {len(stale)} of {ROUNDS}")
    assert not stale, f"{len(stale)} of {ROUNDS} reads showed the story before"


async def test_a_read_right_after_a_press_whose_page_swaps_later_shows_the_swap(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html?ms=30")
    page = await stage.user_page("/slow/swap.html?ms=30")
    stale = 0
    for story in range(2, 2 + ROUNDS // 2):
        pressed = await stage.call(f"{win}__press", {"label": "Next story"})
        assert not pressed.is_error, pressed.structured_content
        await page.wait_for_function("n => document.getElementById('headline').textContent === `Story ${n}`", arg=story)
        if f"Story {story}" not in _text(_tab(await stage.windows(), win)):
            stale += 1
    print(f"stale reads after a press whose page swaps 30 ms later: {stale} of {ROUNDS // 2}")
    assert not stale


async def test_the_first_read_after_a_load_shows_the_new_document(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    page = await stage.user_page("/slow/swap.html")
    stale = 0
    for round_ in range(ROUNDS // 2):
        path = f"/slow/berth.html?ms=10&round={round_}" if round_ % 2 == 0 else f"/slow/swap.html?round={round_}"
        await user_navigates(page, stage.site + path)
        if "berth" in path:
            await page.wait_for_function("document.getElementById('holder').textContent.startsWith('Berth 14')")
        window = _tab(await stage.windows(), win)
        want = "Berth 14 is held by Maria Lopez." if "berth" in path else "Story 1"
        if address_of(window) != stage.site + path or want not in _text(window):
            stale += 1
    print(f"stale first reads after a load: {stale} of {ROUNDS // 2}")
    assert not stale


async def test_a_read_of_a_quiet_page_costs_nothing_more(stage: Stage) -> None:
    win = await _open(stage, "/slow/swap.html")
    await stage.windows()
    times = []
    for _ in range(ROUNDS):
        began = time.perf_counter()
        doc = await stage.windows()
        times.append(time.perf_counter() - began)
        assert "Story 1" in _text(_tab(doc, win))
    times.sort()
    print(f"a read of a quiet page: median {times[len(times) // 2] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


async def test_a_read_of_a_page_that_never_stops_changing_is_bounded_and_true(stage: Stage) -> None:
    win = await _open(stage, "/churn.html")
    with anyio.fail_after(10):
        for _ in range(5):
            window = _tab(await stage.windows(), win)
            assert "Live monitor" in _text(window)
