"""Reading one AX node as the view needs it: name, role, properties, visibility, text. Pure.

Chromium's AX nodes (as `Accessibility.getFullAXTree` and `getChildAXNodes` give them) carry
their role and name as `{"value": …}` objects and everything else as a list of properties;
these helpers read them without caring which command produced the node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from webmcp.models import Severity

__all__ = [
    "LINE",
    "edge_of",
    "READ_ON_BUTTON",
    "Node",
    "guess_mime",
    "hidden",
    "join_text",
    "name_of",
    "prop",
    "raw_text",
    "readable",
    "related",
    "role_of",
    "severity",
    "shown_on_button",
    "states_of",
    "with_states",
    "GUESSED",
]

Node = Mapping[str, Any]

# Wrappers Chromium marks ignored without hiding them; any other reason means not shown.
# (activeModalDialog: the inert page behind a modal; the modal itself is among its children.)
_PASS_THROUGH = frozenset({"uninteresting", "presentationalRole", "labelFor", "labelContainer", "activeModalDialog"})
# A button's label is something a person reads (a showtime, a door, a price, a page number)
# when it holds a digit; "Send" or "Book" is only an operation, which blocks never describe.
READ_ON_BUTTON = re.compile(r"\d")
LINE = "\n"
# `display` values that keep a box on the line of the text around it, as inline-block does.
_ON_THE_LINE = frozenset({"table-cell", "ruby", "ruby-base", "ruby-text"})
_SUCCESS = re.compile(r"\b(saved|success|successful(ly)?|done|created|sent|signed in|added|closed|updated)\b", re.I)


_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
"""Unicode's private-use code points: an icon font's glyphs (Font Awesome's trash is U+F1F8), which
say nothing to a reader of text: a button named only by one is nameless."""


def readable(text: str) -> str:
    """`text` without the icon-font glyphs (private-use code points) in it."""
    return text if text.isascii() else _PRIVATE_USE.sub("", text)


def raw_text(node: Node) -> str:
    """The node's name as Chromium gives it (a text node's text), icon-font glyphs left out."""
    return readable(str(node.get("name", {}).get("value", "") or ""))


def name_of(node: Node) -> str:
    """The node's accessible name, whitespace-collapsed, icon-font glyphs left out."""
    return " ".join(raw_text(node).split())


def named_by_author(node: Node) -> bool:
    """Whether the node's accessible name is the page author's (`aria-label`, `aria-labelledby`), not its contents.

    Chromium lists the sources it tried (live reads carry them); the one used has a value and is
    not superseded.
    """
    for source in node.get("name", {}).get("sources", ()) or ():
        if isinstance(source, dict) and "value" in source and not source.get("superseded"):
            return source.get("attribute") in ("aria-label", "aria-labelledby")
    return False


def role_of(node: Node) -> str:
    """The node's role string (`StaticText`, `heading`, …)."""
    # Asked thousands of times a view: no empty dict made per call, no str() of a str.
    role = node.get("role")
    if not role:
        return ""
    value = role.get("value", "")
    return value if value.__class__ is str else str(value)


def prop(node: Node, name: str) -> Any:
    """The value of the AX property `name`, or None."""
    for item in node.get("properties", ()):
        if item.get("name") == name:
            value = item.get("value")
            return value.get("value") if value else None
    return None


def related(node: Node, name: str) -> list[int]:
    for item in node.get("properties", ()):
        if item.get("name") == name:
            return [
                int(r["backendDOMNodeId"])
                for r in item.get("value", {}).get("relatedNodes", ())
                if "backendDOMNodeId" in r
            ]
    return []


def hidden(node: Node) -> bool:
    """Ignored for a reason that means the user does not see it (aria-hidden, display:none…)."""
    if not node.get("ignored"):
        return False
    return any(r.get("name") not in _PASS_THROUGH for r in node.get("ignoredReasons", ()))


def join_text(parts: Sequence[str]) -> str:
    """Text runs joined as shown: spaces collapsed, line breaks (`<br>`, block edges) kept once."""
    lines = (" ".join(line.split()) for line in "".join(parts).split(LINE))
    return LINE.join(line for line in lines if line)


def edge_of(display: str | None) -> str | None:
    """What separates an element's text from the text around it, by its CSS `display`.

    Nothing for an inline element ("mozilla<a>.org</a>/" reads "mozilla.org/"), a space for a
    box on the line (inline-block, a table cell), a line break for a block (block, flex,
    list-item…); None when the layout is not known.
    """
    if display is None:
        return None
    if display in ("inline", "contents"):
        return ""
    if display.startswith("inline") or display in _ON_THE_LINE:
        return " "
    return LINE


def states_of(node: Node) -> tuple[str, ...]:
    """What a person sees of a control's state: expanded or collapsed (else selected), checked or
    mixed, pressed, unavailable (disabled), guessed (a name the bridge made up from the page's hints)."""
    states: list[str] = []
    expanded = prop(node, "expanded")
    if expanded is not None:
        states.append("expanded" if _yes(expanded) else "collapsed")
    elif _yes(prop(node, "selected")):
        states.append("selected")
    checked = prop(node, "checked")
    if checked == "mixed":
        states.append("mixed")
    elif _yes(checked):
        states.append("checked")
    if _yes(prop(node, "pressed")):
        states.append("pressed")
    if prop(node, "disabled"):
        states.append("unavailable")
    if prop(node, GUESSED):
        states.append("guessed")
    return tuple(states)


GUESSED = "bridgeGuessedName"
"""The property `view.nameless` sets on a control it named from its class, title or image."""


def _yes(value: Any) -> bool:
    return value is True or value == "true"


def with_states(label: str, states: Sequence[str]) -> str:
    """`label` as the window shows it: its states in one parenthesis, "Section 2 (collapsed)"."""
    return f"{label} ({', '.join(states)})" if states else label


def shown_on_button(node: Node) -> str:
    """The label a button shows (its text, or the accessible name of an icon), with its state:
    "(unavailable)" when disabled, "(expanded)"/"(collapsed)" for a disclosure, "(pressed)" for a toggle.

    Every button is shown, a plain action like "Send" too: what a window action can press is
    what the blocks say (docs/protocols.md#window-actions).
    """
    label = name_of(node)
    if not label:
        return ""
    return with_states(label, states_of(node))


def severity(role: str, text: str) -> Severity:
    if role in ("alert", "alertdialog"):
        return "error"
    return "success" if _SUCCESS.search(text) else "info"


def guess_mime(url: str) -> str:
    lowered = url.lower().split("?", 1)[0]
    for ext, mime in (
        (".svg", "image/svg+xml"),
        (".png", "image/png"),
        (".gif", "image/gif"),
        (".webp", "image/webp"),
        (".jpg", "image/jpeg"),
        (".jpeg", "image/jpeg"),
    ):
        if lowered.endswith(ext):
            return mime
    return "image/*"
