"""A page cannot trap its tab with dialogs: stop them, or close the tab past them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _dialogs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"]]


async def _next_dialog(stage: Stage, seen: set[str]) -> str:
    doc = await stage.wait_windows(lambda d: any(w["id"] not in seen for w in _dialogs(d)))
    (fresh,) = [w["id"] for w in _dialogs(doc) if w["id"] not in seen]
    seen.add(fresh)
    return fresh


async def test_after_repeated_dialogs_the_dialog_offers_to_stop_them_and_the_tab_is_free_again(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
    page = await stage.user_page("/")
    await page.evaluate("setTimeout(() => { for (let i = 0; i < 40; i++) alert('trap ' + i); }, 0)")
    seen: set[str] = set()
    first = await _next_dialog(stage, seen)
    names = await stage.tool_names()
    assert f"{first}__close_tab" in names
    assert f"{first}__stop_dialogs" not in names, "a single dialog is not yet a trap"
    assert (await stage.call(f"{first}__dismiss")).is_error is False
    second = await _next_dialog(stage, seen)
    assert (await stage.call(f"{second}__dismiss")).is_error is False
    third = await _next_dialog(stage, seen)
    await stage.wait_tools(lambda n: f"{third}__stop_dialogs" in n)

    stopped = await stage.call(f"{third}__stop_dialogs")
    assert not stopped.is_error, stopped.structured_content
    assert "dismissed automatically" in stopped.structured_content["message"]
    doc = await stage.wait_windows(
        lambda d: (
            win in d["operableWindowIds"]
            and not _dialogs(d)
            and any("dismissed automatically" in str(b.get("text")) for w in d["windows"] for b in w["blocks"])
        )
    )
    assert not _dialogs(doc)
    listed = await stage.call(f"{win}__list_tickets")
    assert not listed.is_error, "the tab works again once its dialogs are stopped"


async def test_a_tab_trapped_by_dialogs_can_be_closed_from_its_dialog(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
    page = await stage.user_page("/")
    await page.evaluate(
        "window.onbeforeunload = (e) => { e.preventDefault(); e.returnValue = 'stay'; };"
        "setTimeout(() => { for (;;) alert('trapped'); }, 0)"
    )
    dialog = await _next_dialog(stage, set())
    assert f"{win}__close" not in await stage.tool_names(), "the tab itself is blocked by its dialog"
    closed = await stage.call(f"{dialog}__close_tab")
    assert not closed.is_error, closed.structured_content
    assert "beforeunload" in closed.structured_content["message"]
    doc = await stage.wait_windows(lambda d: all(w["id"] not in (win, dialog) for w in d["windows"]))
    assert win not in doc["operableWindowIds"]
