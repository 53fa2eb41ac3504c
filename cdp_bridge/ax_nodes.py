"""Reading AX nodes: the role tables the walk uses and small accessors. Pure.

Role names are Chromium's (`StaticText`, `LabelText`, `RootWebArea` next to ARIA roles).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "Node", "name_of", "role_of", "prop", "related", "hidden", "severity", "guess_mime"]

MASK = "••••••"

Node = Mapping[str, Any]

_FIELD_ROLES = frozenset(
    {
        "textbox",
        "searchbox",
        "combobox",
        "checkbox",
        "radio",
        "spinbutton",
        "slider",
        "switch",
        "listbox",
        "textfield",
        "menuitemcheckbox",
        "menuitemradio",
        "progressbar",
        "meter",
    }
)
_CHECKABLE = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
_NOTICE_ROLES = frozenset({"alert", "status", "log", "marquee", "timer"})
# Wrappers Chromium marks ignored without hiding them; any other reason means not shown.
# (activeModalDialog: the inert page behind a modal; the modal itself is among its children.)
_PASS_THROUGH = frozenset({"uninteresting", "presentationalRole", "labelFor", "labelContainer", "activeModalDialog"})
_SKIP_ROLES = frozenset(
    {
        "InlineTextBox",
        "ListMarker",
        "MenuListPopup",
        "button",
        "menu",
        "menubar",
        "toolbar",
        "tooltip",
        "scrollbar",
        "caption",
    }
)
_INLINE_ROLES = frozenset(
    {
        "StaticText",
        "link",
        "code",
        "strong",
        "emphasis",
        "mark",
        "subscript",
        "superscript",
        "time",
        "abbr",
        "deletion",
        "insertion",
        "none",
        "LineBreak",
    }
)
# Containers that own a run of fields; plain wrappers (a div per field) do not.
# Inside these, a generic is a span: its text runs on with its neighbours'.
_TEXT_CONTAINERS = frozenset({"paragraph", "listitem", "cell", "term", "definition", "blockquote", "caption"})
_GROUP_ROLES = frozenset(
    {
        "form",
        "group",
        "radiogroup",
        "search",
        "dialog",
        "alertdialog",
        "region",
        "main",
        "article",
        "complementary",
        "banner",
        "contentinfo",
        "RootWebArea",
        "section",
    }
)
_SUCCESS = re.compile(r"\b(saved|success|successful(ly)?|done|created|sent|signed in|added|closed|updated)\b", re.I)


def name_of(node: Node) -> str:
    """The node's accessible name, whitespace-collapsed."""
    return " ".join(str(node.get("name", {}).get("value", "") or "").split())


def role_of(node: Node) -> str:
    """The node's role string (`StaticText`, `heading`, …)."""
    return str(node.get("role", {}).get("value", ""))


def prop(node: Node, name: str) -> Any:
    """The value of the AX property `name`, or None."""
    for item in node.get("properties", ()):
        if item.get("name") == name:
            return item.get("value", {}).get("value")
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


def severity(role: str, text: str) -> str:
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
