"""End to end: how a page-tool call ends when its page moves on (issue 38, found on public WebMCP demos).

On `/patterns/wizard.html`: `open_next` sends the tab to the next step and never answers
(Chromium then answers the call itself, with `[]`, once the next page has loaded: no answer
of the page's); `start_over` alerts, and once the alert is accepted the page reloads
(after `?reload_ms=N`), so that a call made right after the accept races the new document.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.stage import Stage, address_of

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGE = "/patterns/wizard.html"


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _crashed(doc: dict[str, Any], window_id: str) -> bool:
    return any(b.get("id") == "crashed" for b in _window(doc, window_id)["blocks"])


def _load(doc: dict[str, Any], window_id: str) -> int:
    """Which load of the wizard the tab's window shows (0: none yet)."""
    found = re.search(r"\(load (\d+)\)", str(_window(doc, window_id)["blocks"]))
    return int(found.group(1)) if found else 0


async def _open(stage: Stage, query: str = "") -> str:
    """Send the start tab to the wizard and wait for its tools; the tab's window id."""
    win = (await stage.tab_for("/"))["id"]
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PAGE + query})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__open_next" in names and f"{win}__wizard_status" in names)
    return win


async def test_a_tool_that_moves_its_tab_and_never_answers_is_interrupted_with_an_unknown_outcome(
    stage: Stage,
) -> None:
    win = await _open(stage)
    result = await stage.call(f"{win}__open_next")
    body = result.structured_content
    # The `[]` Chromium sends once the next page has loaded is no answer of the tool's.
    assert result.is_error, body
    assert body["code"] == "call_interrupted" and body["outcome"] == "unknown", body
    assert "step=2" in body["message"], "the answer says where the tab moved"
    assert "completed" not in body["message"]
    doc = await stage.wait_windows(lambda d: "step=2" in address_of(_window(d, win)))
    assert "Step 2 of 3" in str(_window(doc, win)["blocks"])
    # The tab is usable at once: the next page's tool answers.
    status = await stage.call(f"{win}__wizard_status")
    assert not status.is_error, status.structured_content
    assert status.structured_content["result"]["step"] == 2


@pytest.mark.parametrize("reload_ms", [0, 15, 30])
async def test_a_call_right_after_accepting_an_alert_that_reloads_the_page_answers_from_a_document(
    stage: Stage, reload_ms: int
) -> None:
    win = await _open(stage, f"?reload_ms={reload_ms}")
    load = _load(await stage.wait_windows(lambda d: _load(d, win) > 0), win)
    for _ in range(10):  # the call races the reload: the race goes either way, each round is another throw
        opened = await stage.call(f"{win}__start_over")
        assert not opened.is_error, opened.structured_content
        (dlg,) = opened.structured_content["openedWindowIds"]
        accepted = await stage.call(f"{dlg}__accept")
        assert not accepted.is_error, accepted.structured_content
        status = await stage.call(f"{win}__wizard_status")
        body = status.structured_content
        # The reload is over before the next round: the window shows the next load (or the crash below).
        doc = await stage.wait_windows(lambda d, last=load: _load(d, win) > last or _crashed(d, win))
        if _crashed(doc, win):
            # Chromium 156's renderer sometimes dies when a call reaches a document as it is replaced
            # (seen over raw CDP too, without the bridge): the answer says so, the tab is reloaded.
            assert not status.is_error or body["code"] in ("call_interrupted", "action_not_available"), body
            reloaded = await stage.call(f"{win}__navigate", {"go": "reload"})
            assert not reloaded.is_error, reloaded.structured_content
            doc = await stage.wait_windows(lambda d, last=load: _load(d, win) > last)
        else:
            # Answered by the old document (the call won the race) or the new one, or the tool is
            # gone: never a call that waits for a document that no longer exists. Or the old document
            # ran it (toolInvoked) and was replaced before its answer left: then the answer says the
            # tab moved and the outcome is unknown (a CI run saw it at 30 ms, 1 round of 30).
            interrupted = body.get("code") == "call_interrupted" and body.get("outcome") == "unknown"
            assert not status.is_error or body["code"] == "action_not_available" or interrupted, body
            if interrupted:
                assert "reload_ms" in body["message"], "the answer says where the tab moved"
            if not status.is_error:
                assert body["result"]["step"] == 1 and body["result"]["load"] in (load, load + 1), body
        load = _load(doc, win)
        await stage.wait_tools(lambda names: f"{win}__start_over" in names)
