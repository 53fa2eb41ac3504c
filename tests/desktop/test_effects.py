"""What a settled write says (`effects.Act`): each effect once, the windows it opened, where the tab is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.downloads import Download
from webmcp.desktop.effects import Act, Marks
from webmcp.desktop.navigation import STILL_LOADING
from webmcp.models import ToolResult


@dataclass
class _Facts:
    id: str = "tab-1"
    version: int = 7
    address: str = "http://127.0.0.1/next"
    loading: bool = False
    doc_seq: int = 1
    window_opens: int = 0
    timeouts: Timeouts = Timeouts()


@dataclass
class _Window:
    id: str


@dataclass
class _Dialog:
    kind: str
    window: _Window


def _act(facts: _Facts, doc_before: int = 1) -> Act:
    return Act(Marks(began=0.0, doc=doc_before, opened=0, opens=0, modals=(), downloads=0, version=0), facts)


def test_a_write_that_changed_the_page_in_place_gives_the_tabs_version() -> None:
    answer = _act(_Facts()).answer(ToolResult(message="Pressed the button \u201cGo\u201d."))
    assert answer.message == "Pressed the button \u201cGo\u201d. tab-1 is at version 7."
    assert answer.opened_window_ids is None


def test_a_write_that_left_the_window_as_it_was_says_its_version_is_still_the_same() -> None:
    before = Marks(began=0.0, doc=1, opened=0, opens=0, modals=(), downloads=0, version=7)
    same = Act(before, _Facts(version=7)).answer(ToolResult(message="Pressed the button \u201cOdd\u201d."))
    assert same.message == "Pressed the button \u201cOdd\u201d. tab-1 is still at version 7."
    changed = Act(before, _Facts(version=8)).answer(ToolResult(message="Pressed it."))
    assert changed.message == "Pressed it. tab-1 is at version 8."


def test_a_write_that_moved_the_tab_says_where_it_is_and_how_far_its_page_has_loaded() -> None:
    act = _act(_Facts(doc_seq=2, loading=True), doc_before=1)
    act.loading_note = STILL_LOADING  # what the settling found (`Navigator.loading_note`)
    message = act.answer(ToolResult(message="Submitted the form.")).message or ""
    assert "The tab now shows http://127.0.0.1/next (version 7)." in message
    assert message.endswith(STILL_LOADING)


def test_each_window_the_write_opened_is_named_once_and_a_dialog_named_already_gets_no_second_sentence() -> None:
    act = _act(_Facts())
    act.dialog = cast(Any, _Dialog("alert", _Window("dlg-3")))
    act.opened = ["dlg-3", "tab-4"]
    named = act.answer(ToolResult(message="x opened a dialog (dlg-3).", opened_window_ids=["dlg-3"]))
    assert named.opened_window_ids == ["dlg-3", "tab-4"]
    assert named.message == "x opened a dialog (dlg-3)."
    unnamed = _act(_Facts())
    unnamed.dialog, unnamed.opened = act.dialog, ["dlg-3"]
    told = unnamed.answer(ToolResult(message="Pressed it."))
    assert told.opened_window_ids == ["dlg-3"]
    assert "The page opened an alert dialog (dlg-3) and waits for it" in (told.message or "")
    assert "version" not in (told.message or ""), "a page under a dialog is not read: no version is claimed"


def test_a_download_the_write_began_is_named_and_an_answer_that_says_where_it_is_is_not_told_again() -> None:
    act = _act(_Facts())
    act.downloads = [Download(guid="g", tab_id="tab-1", name="report.csv", seq=1, url="http://x/report.csv")]
    answer = act.answer(ToolResult(message="tab-1 now shows http://x/ (version 7)."), where=False)
    assert answer.message is not None
    assert answer.message.startswith("tab-1 now shows http://x/ (version 7). It started 1 download(s): ")
    assert "report.csv" in answer.message and answer.message.count("version") == 1
