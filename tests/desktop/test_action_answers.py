"""What window actions say after acting (desktop/actions.py): never that a field holds what it does not."""

from __future__ import annotations

from webmcp.desktop.actions import _changed, _Many, _many, _read_back
from webmcp.view.targets import ActionTarget, Coerced, Refusal


def _target(label: str, role: str = "textbox", **fields: object) -> ActionTarget:
    return ActionTarget("field", label, role, "0:main", 7, **fields)  # type: ignore[arg-type]


def test_a_value_the_page_rewrote_is_said_as_the_page_holds_it() -> None:
    said = _read_back(_target("Reference"), Coerced("text", text="ab 12 c"), "AB12C")
    assert said == "\u201cReference\u201d holds \u201cAB12C\u201d (the page changed the value given)."
    assert _read_back(_target("Reference"), Coerced("text", text="AB12C"), "AB12C") == ""
    assert _read_back(_target("Notes"), Coerced("text", text="a\r\nb"), "a\nb") == "", "a textarea's line breaks"


def test_a_secret_field_that_holds_another_value_is_never_quoted() -> None:
    said = _read_back(_target("Password", sensitive=True), Coerced("text", text="hunter2"), "HUNTER2")
    assert "hunter2" not in said.casefold() and "another value" in said


def test_a_checkbox_the_page_unchecked_again_is_said() -> None:
    said = _read_back(_target("Remember me", "checkbox"), Coerced("checkbox", checked=True), False)
    assert said == "\u201cRemember me\u201d stayed unchecked (the page undid it)."


def test_several_options_are_compared_as_a_set() -> None:
    queues = _target("Queues", "listbox", options=("Billing", "Network", "Printing"), multiselect=True)
    assert _read_back(queues, _Many(("Billing", "Network")), ["Network", "Billing"]) == ""
    said = _read_back(queues, _Many(("Billing", "Network")), ["Billing"])
    assert said == "\u201cQueues\u201d holds \u201cBilling\u201d, not what was given."


def test_a_list_is_refused_by_a_field_that_takes_one_value_and_checked_against_the_options() -> None:
    country = _target("Country", "combobox", options=("France", "Spain"))
    assert isinstance(_many(country, ["France", "Spain"]), Refusal)
    queues = _target("Queues", "listbox", options=("Billing", "Network"), multiselect=True)
    assert _many(queues, ["billing"]) == _Many(("Billing",))
    missing = _many(queues, ["Accounts"])
    assert isinstance(missing, Refusal) and "Billing" in missing.message


def test_a_press_says_only_the_states_it_changed() -> None:
    before = {"expanded": "false", "checked": None, "selected": "false"}
    after = {"expanded": "true", "checked": None, "selected": "true"}
    assert _changed(before, after) == " It is now expanded and selected."
    assert _changed(after, after) == ""
    assert _changed({"checked": "true"}, {"checked": "false"}) == " It is now unchecked."
