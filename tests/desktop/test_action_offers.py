"""Which window actions a tab lists, and why one is not (desktop/actions.py): visible means callable."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from webmcp.desktop.actions import PersonFocus, WindowActions
from webmcp.view.targets import ActionTarget


def _actions(targets: list[ActionTarget], nodes: list[dict[str, Any]], *, may_submit: bool = True) -> WindowActions:
    frame = SimpleNamespace(nodes=nodes)
    read = SimpleNamespace(view=SimpleNamespace(targets=targets), sessions=[(None, SimpleNamespace(frames=[frame]))])
    host = SimpleNamespace(id="tab-1", agent_may_submit=may_submit)
    return WindowActions(host, None, None, lambda: read, None)  # type: ignore[arg-type,return-value]


_FIELD = ActionTarget("field", "City", "textbox", "0:main", 3)
_TEXT = ActionTarget("text", "Paris", "listitem", "0:main", 4)
_FORM = {"role": {"value": "form"}, "ignored": False}


WINDOW_ACTIONS = ("press", "hover", "fill", "submit")


def test_every_window_action_is_listed_whatever_the_page_shows() -> None:
    # What a page shows comes and goes; the list does not (each change costs a tools/list).
    for targets, nodes in (([_TEXT], []), ([], []), ([_FIELD], [_FORM])):
        assert [a for a in WINDOW_ACTIONS if _actions(targets, nodes).offers(a)] == list(WINDOW_ACTIONS)


def test_submit_is_the_persons_under_human_submit() -> None:
    assert not _actions([_FIELD], [_FORM], may_submit=False).offers("submit")
    assert _actions([_FIELD], [_FORM], may_submit=False).offers("fill")


def test_why_an_action_is_not_offered_is_said_truly() -> None:
    assert "shows no form" in _actions([_FIELD], []).why_not("submit")
    assert "--human-submit" in _actions([_FIELD], [_FORM], may_submit=False).why_not("submit")
    assert "removed it or navigated" not in _actions([], []).why_not("press")


def test_every_page_session_asks_for_focus_as_a_persons_window_has_it() -> None:
    (step,) = PersonFocus().watch(None, True)  # type: ignore[arg-type]
    assert (step.method, dict(step.params)) == ("Emulation.setFocusEmulationEnabled", {"enabled": True})
    assert step.optional, "a browser that refuses it (the extension) still serves the tab"
    assert PersonFocus().watch(None, False) == []  # type: ignore[arg-type]
