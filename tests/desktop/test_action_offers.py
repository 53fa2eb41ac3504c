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


def test_a_page_of_text_offers_press_hover_and_keys_and_nothing_to_fill() -> None:
    actions = _actions([_TEXT], [])
    assert [a for a in ("press", "hover", "press_key", "fill", "submit") if actions.offers(a)] == [
        "press",
        "hover",
        "press_key",
    ]


def test_submit_is_offered_only_where_a_form_holds_the_fields() -> None:
    assert not _actions([_FIELD, _TEXT], []).offers("submit")
    assert _actions([_FIELD], [_FORM]).offers("submit")
    assert not _actions([_FIELD], [{**_FORM, "ignored": True}]).offers("submit")
    assert not _actions([_FIELD], [_FORM], may_submit=False).offers("submit")


def test_why_an_action_is_not_offered_is_said_truly() -> None:
    assert "shows no form" in _actions([_FIELD], []).why_not("submit")
    assert "--human-submit" in _actions([_FIELD], [_FORM], may_submit=False).why_not("submit")
    assert "removed it or navigated" not in _actions([], []).why_not("press")


def test_every_page_session_asks_for_focus_as_a_persons_window_has_it() -> None:
    (step,) = PersonFocus().watch(None, True)  # type: ignore[arg-type]
    assert (step.method, dict(step.params)) == ("Emulation.setFocusEmulationEnabled", {"enabled": True})
    assert step.optional, "a browser that refuses it (the extension) still serves the tab"
    assert PersonFocus().watch(None, False) == []  # type: ignore[arg-type]
