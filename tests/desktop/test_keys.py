"""Key names and chords turned into the key events Chromium needs (desktop/keys.py)."""

from __future__ import annotations

import pytest

from webmcp.desktop.keys import KeyRefused, key_events, parse_key


def _steps(name: str) -> list[tuple[str, str, str | None, int]]:
    return [(e["type"], e["key"], e.get("text"), e["modifiers"]) for e in key_events(parse_key(name))]


def test_enter_types_a_carriage_return_so_a_form_is_submitted() -> None:
    assert _steps("Enter") == [("keyDown", "Enter", "\r", 0), ("keyUp", "Enter", None, 0)]
    assert key_events(parse_key("enter"))[0]["windowsVirtualKeyCode"] == 13


def test_a_chord_holds_its_modifiers_around_the_key() -> None:
    assert _steps("Shift+Tab") == [
        ("rawKeyDown", "Shift", None, 8),
        ("rawKeyDown", "Tab", None, 8),
        ("keyUp", "Tab", None, 8),
        ("keyUp", "Shift", None, 0),
    ]


def test_a_shortcut_types_nothing_and_names_the_lower_case_letter() -> None:
    chord = parse_key("Control+A")
    assert chord.name == "Control+a" and chord.mask == 2
    down = key_events(chord)[1]
    assert down["type"] == "rawKeyDown" and "text" not in down and down["code"] == "KeyA"


@pytest.mark.parametrize(
    ("name", "key", "code", "text"),
    [("a", "a", "KeyA", "a"), ("ArrowDown", "ArrowDown", "ArrowDown", None), ("F2", "F2", "F2", None),
     ("Escape", "Escape", "Escape", None), ("Space", " ", "Space", " "), ("Shift+1", "!", "Digit1", "!")],
)  # fmt: skip
def test_named_keys_and_characters(name: str, key: str, code: str, text: str | None) -> None:
    events = key_events(parse_key(name))
    down = next(e for e in events if e["key"] == key)
    assert (down["code"], down.get("text")) == (code, text)


@pytest.mark.parametrize("name", ["Hyperspace", "Shift+Foo", "Hyper+a", "", "Control+"])
def test_a_name_that_is_no_key_is_refused(name: str) -> None:
    with pytest.raises(KeyRefused):
        parse_key(name)
