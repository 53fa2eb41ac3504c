"""What the walk makes of each AX role: a field, a notice, a run of text, a container. Pure data."""

from __future__ import annotations

__all__ = [
    "CHECKABLE",
    "CHOICES",
    "COMPOSITE_FIELDS",
    "FIELD_ROLES",
    "FLATTENED",
    "GROUP_ROLES",
    "INLINE_ROLES",
    "MAIN_ROLES",
    "NOTICE_ROLES",
    "SKIP_ROLES",
    "TEXT_CONTAINERS",
]

FIELD_ROLES = frozenset(
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
        # date, time, datetime-local, month and week inputs: one field each, never their spin parts
        "Date",
        "DateTime",
        "InputTime",
    }
)
COMPOSITE_FIELDS = frozenset({"Date", "DateTime", "InputTime"})
CHOICES = frozenset({"combobox", "listbox"})
CHECKABLE = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
NOTICE_ROLES = frozenset({"alert", "status", "log", "marquee", "timer"})
SKIP_ROLES = frozenset(
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
INLINE_ROLES = frozenset(
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
TEXT_CONTAINERS = frozenset({"paragraph", "listitem", "cell", "term", "definition", "blockquote", "caption"})
GROUP_ROLES = frozenset(
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
MAIN_ROLES = frozenset({"main", "article"})
FLATTENED = frozenset({"generic", "rowgroup", "none"})
"""Wrappers that `children_flat` looks through (and ignored nodes)."""
