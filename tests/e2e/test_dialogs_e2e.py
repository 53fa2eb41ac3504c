"""End to end: dialogs and modals as windows, exact operability, and how calls race them."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.support.stage import Stage, address_of

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _window(doc: dict, window_id: str) -> dict:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _dialogs(doc: dict) -> list[dict]:
    return [w for w in doc["windows"] if w["modal"]]


async def _open(stage: Stage, path: str, tool: str) -> str:
    """Navigate the start tab to `path` and wait for its tool `tool`; the tab's window id."""
    home = await stage.tab_for("/")
    win = home["id"]
    result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)
    return win


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_tool_that_opens_confirm_returns_the_dialog_window_and_its_answer_carries_the_result(
    stage: Stage,
) -> None:
    win = await _open(stage, "/danger.html", "purge_closed_tickets")
    seen_tools = stage.mcp.notifications.count("tools_list_changed")
    result = await stage.call(f"{win}__purge_closed_tickets")
    assert not result.is_error, result.structured_content
    (dlg,) = result.structured_content["openedWindowIds"]
    assert "confirm" in result.structured_content["message"]

    doc = await stage.wait_windows(lambda d: any(w["id"] == dlg for w in d["windows"]))
    dialog = _window(doc, dlg)
    assert dialog["modal"] is True and dialog["ownerId"] == win
    assert "Really purge" in dialog["summary"] and dialog["blocks"][0]["text"].startswith("Really purge")
    assert doc["operableWindowIds"] == [w for w in doc["operableWindowIds"] if w != win]
    assert dlg in doc["operableWindowIds"] and win not in doc["operableWindowIds"]

    await stage.mcp.notifications.wait_for("tools_list_changed", after=seen_tools)
    names = await stage.tool_names()
    assert f"{dlg}__accept" in names and f"{dlg}__dismiss" in names
    assert not any(n.startswith(f"{win}__") for n in names), "a blocked tab's tools are hidden"

    blocked = await stage.call(f"{win}__navigate", {"go": "reload"})
    assert blocked.is_error and blocked.structured_content["code"] == "blocked_by_modal"
    assert blocked.structured_content["blockingWindowId"] == dlg

    answer = await stage.call(f"{dlg}__accept")
    assert not answer.is_error, answer.structured_content
    original = answer.structured_content["result"]["originalCall"]
    assert original["tool"] == "purge_closed_tickets"
    assert original["result"] == {"purged": 2}

    doc = await stage.wait_windows(lambda d: not _dialogs(d) and win in d["operableWindowIds"])
    await stage.wait_tools(lambda n: f"{win}__purge_closed_tickets" in n and f"{dlg}__accept" not in n)
    again = await stage.call(f"{dlg}__accept")
    assert again.structured_content["code"] == "window_not_found"


async def test_prompt_is_answered_with_text_and_dismissed_prompt_gives_null(stage: Stage) -> None:
    win = await _open(stage, "/danger.html", "rename_queue")
    opened = await stage.call(f"{win}__rename_queue")
    (dlg,) = opened.structured_content["openedWindowIds"]
    doc = await stage.windows()
    fields = [b for b in _window(doc, dlg)["blocks"] if b["type"] == "fields"]
    assert fields[0]["items"][0]["value"] == "Tier 1", "the prompt's default text is shown"
    answer = await stage.call(f"{dlg}__accept", {"text": "Tier 2 — billing"})
    assert answer.structured_content["result"]["originalCall"]["result"] == {"name": "Tier 2 — billing"}
    await stage.wait_windows(lambda d: not _dialogs(d))

    opened = await stage.call(f"{win}__rename_queue")
    (dlg2,) = opened.structured_content["openedWindowIds"]
    assert dlg2 != dlg, "window ids are never reused"
    dismissed = await stage.call(f"{dlg2}__dismiss")
    assert dismissed.structured_content["result"]["originalCall"]["result"] == {"name": None}


async def test_alert_from_a_tool_is_dismissed_and_the_call_completes(stage: Stage) -> None:
    win = await _open(stage, "/danger.html", "notify_agent")
    opened = await stage.call(f"{win}__notify_agent", {"message": "Shift change in 5 minutes"})
    (dlg,) = opened.structured_content["openedWindowIds"]
    doc = await stage.windows()
    assert "Shift change in 5 minutes" in _window(doc, dlg)["summary"]
    answer = await stage.call(f"{dlg}__dismiss")
    assert answer.structured_content["result"]["originalCall"]["result"] == {"value": "acknowledged"}


async def test_dialog_opened_by_the_user_and_answered_by_hand_leaves_nothing_stale(stage: Stage) -> None:
    win = await _open(stage, "/danger.html", "purge_closed_tickets")
    page = await stage.user_page("/danger.html")
    dialogs: list[Any] = []
    opened = anyio.Event()

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog)
        opened.set()

    page.on("dialog", on_dialog)
    async with anyio.create_task_group() as tg:
        # The click returns only once the page's confirm() does: run it beside the test.
        tg.start_soon(page.click, "#purge-button")
        doc = await stage.wait_windows(lambda d: _dialogs(d))
        (dialog,) = _dialogs(doc)
        assert dialog["ownerId"] == win and "Really purge" in dialog["summary"]
        names = await stage.wait_tools(lambda n: f"{dialog['id']}__accept" in n)
        assert not any(n.startswith(f"{win}__") for n in names)
        with anyio.fail_after(10):
            await opened.wait()
        await dialogs[0].dismiss()
    doc = await stage.wait_windows(lambda d: not _dialogs(d) and win in d["operableWindowIds"])
    await stage.wait_tools(lambda n: f"{win}__purge_closed_tickets" in n)
    stale = await stage.call(f"{dialog['id']}__accept")
    assert stale.structured_content["code"] == "window_not_found"


async def test_alert_during_page_load_is_a_dialog_window_and_the_load_finishes_after_it(stage: Stage) -> None:
    home = await stage.tab_for("/")
    win = home["id"]
    result = await stage.call(f"{win}__navigate", {"url": stage.site + "/danger.html?onload=alert"})
    assert not result.is_error, result.structured_content
    (dlg,) = result.structured_content["openedWindowIds"]
    doc = await stage.windows()
    assert _window(doc, dlg)["modal"] and _window(doc, dlg)["ownerId"] == win
    await stage.call(f"{dlg}__accept")
    await stage.wait_windows(lambda d: not _dialogs(d) and "Danger zone" in _window(d, win)["title"])
    await stage.wait_tools(lambda n: f"{win}__purge_closed_tickets" in n)


async def test_beforeunload_on_navigate_and_close_is_a_dialog_the_agent_answers(stage: Stage) -> None:
    win = await _open(stage, "/danger.html", "purge_closed_tickets")
    page = await stage.user_page("/danger.html")
    await page.click("#unsaved")  # the user's click also gives the page the activation beforeunload needs

    leave = await stage.call(f"{win}__navigate", {"url": stage.site + "/ticket.html?id=101"})
    assert not leave.is_error, leave.structured_content
    (dlg,) = leave.structured_content["openedWindowIds"]
    doc = await stage.windows()
    assert "changes may be lost" in _window(doc, dlg)["summary"]
    await stage.call(f"{dlg}__dismiss")
    doc = await stage.wait_windows(lambda d: not _dialogs(d))
    assert address_of(_window(doc, win)).endswith("/danger.html"), "dismiss means stay"

    closing = await stage.call(f"{win}__close")
    assert not closing.is_error, closing.structured_content
    (dlg2,) = closing.structured_content["openedWindowIds"]
    await stage.call(f"{dlg2}__accept")
    await stage.wait_windows(lambda d: all(w["id"] != win for w in d["windows"]))


async def test_other_windows_stay_operable_while_a_dialog_waits(stage: Stage) -> None:
    win = await _open(stage, "/danger.html", "purge_closed_tickets")
    other = await stage.call("app__open_tab", {"url": stage.site + "/ticket.html?id=101"})
    (other_id,) = other.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{other_id}__ticket_details" in n)
    opened = await stage.call(f"{win}__purge_closed_tickets")
    (dlg,) = opened.structured_content["openedWindowIds"]
    doc = await stage.windows()
    assert other_id in doc["operableWindowIds"] and dlg in doc["operableWindowIds"]
    details = await stage.call(f"{other_id}__ticket_details")
    assert not details.is_error and details.structured_content["result"]["id"] == 101
    await stage.call(f"{dlg}__dismiss")


async def test_in_page_modal_dialog_is_a_window_with_its_form_tool(stage: Stage) -> None:
    win = await _open(stage, "/modal.html", "open_editor")
    opened = await stage.call(f"{win}__open_editor")
    assert not opened.is_error
    doc = await stage.wait_windows(lambda d: _dialogs(d))
    (modal,) = _dialogs(doc)
    assert modal["ownerId"] == win and "Edit queue settings" in modal["title"]
    assert any(b["type"] == "fields" for b in modal["blocks"])
    assert win not in doc["operableWindowIds"] and modal["id"] in doc["operableWindowIds"]
    names = await stage.wait_tools(lambda n: f"{modal['id']}__save_edit" in n)
    assert f"{modal['id']}__close" in names
    assert not any(n.startswith(f"{win}__") for n in names), "the tab's tools hide behind its modal"

    saved = await stage.call(f"{modal['id']}__save_edit", {"name": "Tier 3", "sla": 8})
    assert not saved.is_error, saved.structured_content
    assert saved.structured_content["result"]["saved"] is True
    await stage.wait_windows(lambda d: not _dialogs(d) and win in d["operableWindowIds"])
    names = await stage.wait_tools(lambda n: f"{win}__open_editor" in n)
    assert not any(n.startswith(f"{modal['id']}__") for n in names)

    await stage.call(f"{win}__open_editor")
    doc = await stage.wait_windows(lambda d: _dialogs(d))
    (modal2,) = _dialogs(doc)
    assert modal2["id"] != modal["id"]
    closed = await stage.call(f"{modal2['id']}__close")
    assert not closed.is_error, closed.structured_content
    await stage.wait_windows(lambda d: not _dialogs(d))


async def test_tool_removed_between_list_and_call_is_action_not_available(stage: Stage) -> None:
    home = await stage.tab_for("/")
    await stage.wait_tools(lambda n: f"{home['id']}__claim_welcome_bonus" in n)
    first = await stage.call(f"{home['id']}__claim_welcome_bonus")
    assert not first.is_error
    raced = await stage.call(f"{home['id']}__claim_welcome_bonus")
    if not raced.is_error:  # the page unregisters a moment after answering: the next call must fail
        raced = await stage.call(f"{home['id']}__claim_welcome_bonus")
    assert raced.is_error and raced.structured_content["code"] == "action_not_available"
