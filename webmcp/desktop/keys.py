"""Key names and chords as a person presses them, turned into `Input.dispatchKeyEvent` steps. Pure.

`parse_key("Shift+Tab")` gives a `Chord`: the modifier keys held (each pressed and released
around the key, as a keyboard does) and the key itself with the `key`, `code` and
`windowsVirtualKeyCode` Chromium needs to run its default action (Enter submits a form,
Tab moves the focus, Control+A selects all), and the `text` it types, if any ("\\r" for
Enter). An unknown name is refused before anything is sent (`KeyRefused`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Chord", "Key", "KeyRefused", "key_events", "parse_key"]


@dataclass(frozen=True, slots=True)
class Key:
    key: str
    code: str
    key_code: int
    text: str = ""
    location: int = 0


@dataclass(frozen=True, slots=True)
class Chord:
    modifiers: tuple[Key, ...]
    key: Key

    @property
    def name(self) -> str:
        return "+".join([*(m.key for m in self.modifiers), self.key.key if self.key.key != " " else "Space"])

    @property
    def mask(self) -> int:
        """The CDP `modifiers` bit field: Alt 1, Control 2, Meta 4, Shift 8."""
        return sum(_MASK[m.key] for m in self.modifiers)


class KeyRefused(ValueError):
    """A key name or chord that names no key."""


_MASK = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}
_MODIFIERS = {
    "alt": Key("Alt", "AltLeft", 18, location=1),
    "option": Key("Alt", "AltLeft", 18, location=1),
    "control": Key("Control", "ControlLeft", 17, location=1),
    "ctrl": Key("Control", "ControlLeft", 17, location=1),
    "meta": Key("Meta", "MetaLeft", 91, location=1),
    "cmd": Key("Meta", "MetaLeft", 91, location=1),
    "command": Key("Meta", "MetaLeft", 91, location=1),
    "shift": Key("Shift", "ShiftLeft", 16, location=1),
}
_NAMED = {
    "enter": Key("Enter", "Enter", 13, "\r"),
    "return": Key("Enter", "Enter", 13, "\r"),
    "escape": Key("Escape", "Escape", 27),
    "esc": Key("Escape", "Escape", 27),
    "tab": Key("Tab", "Tab", 9),
    "backspace": Key("Backspace", "Backspace", 8),
    "delete": Key("Delete", "Delete", 46),
    "del": Key("Delete", "Delete", 46),
    "insert": Key("Insert", "Insert", 45),
    "space": Key(" ", "Space", 32, " "),
    "arrowup": Key("ArrowUp", "ArrowUp", 38),
    "arrowdown": Key("ArrowDown", "ArrowDown", 40),
    "arrowleft": Key("ArrowLeft", "ArrowLeft", 37),
    "arrowright": Key("ArrowRight", "ArrowRight", 39),
    "up": Key("ArrowUp", "ArrowUp", 38),
    "down": Key("ArrowDown", "ArrowDown", 40),
    "left": Key("ArrowLeft", "ArrowLeft", 37),
    "right": Key("ArrowRight", "ArrowRight", 39),
    "home": Key("Home", "Home", 36),
    "end": Key("End", "End", 35),
    "pageup": Key("PageUp", "PageUp", 33),
    "pagedown": Key("PageDown", "PageDown", 34),
    **{f"f{n}": Key(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}
_PUNCTUATION = {
    # key: (code, key code, the key typed with Shift on a US keyboard)
    "-": ("Minus", 189, "_"),
    "=": ("Equal", 187, "+"),
    "[": ("BracketLeft", 219, "{"),
    "]": ("BracketRight", 221, "}"),
    "\\": ("Backslash", 220, "|"),
    ";": ("Semicolon", 186, ":"),
    "'": ("Quote", 222, '"'),
    ",": ("Comma", 188, "<"),
    ".": ("Period", 190, ">"),
    "/": ("Slash", 191, "?"),
    "`": ("Backquote", 192, "~"),
}
_SHIFTED = {shifted: (base, code, key_code) for base, (code, key_code, shifted) in _PUNCTUATION.items()}
_DIGIT_SHIFTED = dict(zip(")!@#$%^&*(", "0123456789", strict=True))
_DIGIT_WITH_SHIFT = {digit: shifted for shifted, digit in _DIGIT_SHIFTED.items()}
EXAMPLES = '"Enter", "Escape", "Tab", "Shift+Tab", "ArrowDown", "Control+A", "a", "F2"'


def parse_key(name: str) -> Chord:
    """The chord `name` names: modifiers joined to one key by "+" ("Control+A", "Shift+Tab", "+").

    Raises:
        KeyRefused: a part names no key, or the chord has no key besides its modifiers.
    """
    text = name.strip() if name.strip() else name
    if not text:
        raise KeyRefused("no key given")
    parts = [text] if len(text) == 1 else _split(text)
    *held, last = parts
    modifiers: list[Key] = []
    for part in held:
        modifier = _MODIFIERS.get(part.casefold())
        if modifier is None:
            raise KeyRefused(f"\u201c{part}\u201d is not a modifier (Shift, Control, Alt, Meta)")
        if modifier not in modifiers:
            modifiers.append(modifier)
    shift = any(m.key == "Shift" for m in modifiers)
    shortcut = any(m.key in ("Control", "Alt", "Meta") for m in modifiers)
    # In a shortcut a letter is the key, not what it types: Control+A is Control and "a".
    key = _key(last.lower() if shortcut and not shift and len(last) == 1 else last, shift=shift)
    if key is None:
        raise KeyRefused(f"\u201c{last}\u201d names no key")
    if shortcut and key.text:
        # A shortcut types nothing: Control+A selects all, it does not type "a".
        key = Key(key.key, key.code, key.key_code, "", key.location)
    return Chord(tuple(modifiers), key)


def _split(text: str) -> list[str]:
    """The parts of a chord: "Control++" is Control and "+", "Shift+Tab" is Shift and Tab."""
    if text.endswith("++"):
        return [*text[:-2].split("+"), "+"]
    return text.split("+")


def _key(part: str, *, shift: bool) -> Key | None:
    if not part:
        return None
    if len(part) > 1:
        named = _NAMED.get(part.casefold())
        if named is not None:
            return named
        modifier = _MODIFIERS.get(part.casefold())
        return modifier  # a modifier pressed alone ("Shift")
    char = part
    if char.isascii() and char.isalpha():
        upper = shift or char.isupper()
        typed = char.upper() if upper else char.lower()
        return Key(typed, f"Key{char.upper()}", ord(char.upper()), typed)
    if char.isdigit() and char.isascii():
        typed = _DIGIT_WITH_SHIFT[char] if shift else char
        return Key(typed, f"Digit{char}", ord(char), typed)
    if char in _DIGIT_SHIFTED:
        digit = _DIGIT_SHIFTED[char]
        return Key(char, f"Digit{digit}", ord(digit), char)
    if char in _PUNCTUATION:
        code, key_code, shifted = _PUNCTUATION[char]
        typed = shifted if shift else char
        return Key(typed, code, key_code, typed)
    if char in _SHIFTED:
        _base, code, key_code = _SHIFTED[char]
        return Key(char, code, key_code, char)
    if char == " ":
        return _NAMED["space"]
    if char == "+":
        return Key("+", "Equal", 187, "+")
    if char.isprintable():
        return Key(char, "", 0, char)  # typed as the person's keyboard layout would give it
    return None


def key_events(chord: Chord) -> list[dict[str, Any]]:
    """The `Input.dispatchKeyEvent` parameters for pressing `chord`, in order.

    The modifiers go down one by one (each with the mask of those already down), then the key
    (`keyDown` with its text where it types, which Chromium turns into keypress and input;
    `rawKeyDown` where it does not), then everything comes up in reverse.
    """
    events: list[dict[str, Any]] = []
    mask = 0
    for modifier in chord.modifiers:
        mask |= _MASK[modifier.key]
        events.append(_event("rawKeyDown", modifier, mask))
    key = chord.key
    down = _event("keyDown" if key.text else "rawKeyDown", key, mask)
    if key.text:
        down["text"] = key.text
        down["unmodifiedText"] = key.text
    events.append(down)
    events.append(_event("keyUp", key, mask))
    for modifier in reversed(chord.modifiers):
        mask &= ~_MASK[modifier.key]
        events.append(_event("keyUp", modifier, mask))
    return events


def _event(kind: str, key: Key, mask: int) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": kind,
        "modifiers": mask,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
    }
    if key.location:
        event["location"] = key.location
    return event
