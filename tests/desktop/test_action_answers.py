"""What window actions say after acting (desktop/action_words.py): never that a field holds what it does not."""

from __future__ import annotations

from webmcp.desktop.action_words import (
    Many,
    changed_states,
    filled_labels,
    many_options,
    only_values_changed,
    read_back,
)
from webmcp.view.targets import ActionTarget, Coerced, Refusal


def _target(label: str, role: str = "textbox", **fields: object) -> ActionTarget:
    return ActionTarget("field", label, role, "0:main", 7, **fields)  # type: ignore[arg-type]


def test_a_value_the_page_rewrote_is_said_as_the_page_holds_it() -> None:
    said = read_back(_target("Reference"), Coerced("text", text="ab 12 c"), "AB12C")
    assert said == "\u201cReference\u201d holds \u201cAB12C\u201d (the page changed the value given)."
    assert read_back(_target("Reference"), Coerced("text", text="AB12C"), "AB12C") == ""
    assert read_back(_target("Notes"), Coerced("text", text="a\r\nb"), "a\nb") == "", "a textarea's line breaks"


def test_a_secret_field_that_holds_another_value_is_never_quoted() -> None:
    said = read_back(_target("Password", sensitive=True), Coerced("text", text="hunter2"), "HUNTER2")
    assert "hunter2" not in said.casefold() and "another value" in said


def test_a_fill_names_its_fields_and_says_once_that_secret_values_are_not_shown() -> None:
    secret, again, email = (
        _target("Password", sensitive=True),
        _target("Verify password", sensitive=True),
        _target("Email"),
    )
    both = filled_labels([secret, again])
    assert both == "\u201cPassword\u201d, \u201cVerify password\u201d (sensitive: their values are not shown)"
    mixed = filled_labels([email, secret])
    assert mixed == "\u201cEmail\u201d, \u201cPassword\u201d (sensitive: its value is not shown)", "which one is said"
    assert filled_labels([secret]) == "\u201cPassword\u201d (sensitive: its value is not shown)"


def test_a_checkbox_the_page_unchecked_again_is_said() -> None:
    said = read_back(_target("Remember me", "checkbox"), Coerced("checkbox", checked=True), False)
    assert said == "\u201cRemember me\u201d stayed unchecked (the page undid it)."


def test_several_options_are_compared_as_a_set() -> None:
    queues = _target("Queues", "listbox", options=("Billing", "Network", "Printing"), multiselect=True)
    assert read_back(queues, Many(("Billing", "Network")), ["Network", "Billing"]) == ""
    said = read_back(queues, Many(("Billing", "Network")), ["Billing"])
    assert said == "\u201cQueues\u201d holds \u201cBilling\u201d, not what was given."


def test_a_list_is_refused_by_a_field_that_takes_one_value_and_checked_against_the_options() -> None:
    country = _target("Country", "combobox", options=("France", "Spain"))
    assert isinstance(many_options(country, ["France", "Spain"]), Refusal)
    queues = _target("Queues", "listbox", options=("Billing", "Network"), multiselect=True)
    assert many_options(queues, ["billing"]) == Many(("Billing",))
    missing = many_options(queues, ["Accounts"])
    assert isinstance(missing, Refusal) and "Billing" in missing.message


def test_a_press_says_only_the_states_itchanged_states() -> None:
    before = {"expanded": "false", "checked": None, "selected": "false"}
    after = {"expanded": "true", "checked": None, "selected": "true"}
    assert changed_states(before, after) == " It is now expanded and selected."
    assert changed_states(after, after) == ""
    assert changed_states({"checked": "true"}, {"checked": "false"}) == " It is now unchecked."


def _form(desk: str = "", shift: str = "", **extra: object) -> list[dict[str, object]]:
    items = [{"label": "Desk", "value": desk, **extra}, {"label": "Shift", "value": shift}]
    return [{"type": "text", "text": "Shift note"}, {"type": "fields", "id": "b2", "items": items}]


def test_only_the_values_of_the_fields_filled_may_differ_for_nothing_else_to_have_changed() -> None:
    filled = {"Desk"}
    assert only_values_changed(_form(), _form(), filled)
    assert only_values_changed(_form(), _form(desk="B-12"), filled)
    assert not only_values_changed(_form(), _form(shift="Night"), filled), "another field's value moved"
    assert not only_values_changed(_form(), _form(desk="B-12", invalid=True), filled), "the field's error came"
    opened = [*_form(desk="B-12"), {"type": "list", "id": "b3", "items": ["B-12 (north)"]}]
    assert not only_values_changed(_form(), opened, filled), "a suggestion list opened"
    retold = [{"type": "text", "text": "Shift note (unsaved)"}, _form(desk="B-12")[1]]
    assert not only_values_changed(_form(), retold, filled)
