"""The dialog guard: when a page's dialogs count as a trap, and what stopping them shows."""

from __future__ import annotations

from webmcp.desktop.dialog_guard import BURST_WINDOW, DialogGuard


def test_the_third_dialog_of_a_document_within_the_window_repeats() -> None:
    guard = DialogGuard()
    assert [guard.opened(1, t) for t in (0.0, 1.0, 2.0)] == [False, False, True]


def test_dialogs_spread_beyond_the_window_do_not_repeat() -> None:
    guard = DialogGuard()
    assert [guard.opened(1, t) for t in (0.0, BURST_WINDOW, 2 * BURST_WINDOW)] == [False, False, False]


def test_a_new_document_starts_the_count_again() -> None:
    guard = DialogGuard()
    guard.opened(1, 0.0)
    guard.opened(1, 1.0)
    assert guard.opened(2, 2.0) is False


def test_stopped_dialogs_hold_for_their_document_only_and_say_so_with_the_count() -> None:
    guard = DialogGuard()
    guard.stop(4)
    guard.suppressed = 7
    assert guard.stopped(4) and not guard.stopped(5)
    (notice,) = guard.notices(4)
    assert notice["severity"] == "warn" and "7 so far" in notice["text"]
    assert guard.notices(5) == []
