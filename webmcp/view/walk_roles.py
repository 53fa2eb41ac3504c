"""What the walk makes of each AX role: a field, a notice, a run of text, a container. Pure data."""

from __future__ import annotations

__all__ = [
    "CHECKABLE",
    "CHECK_ROLES",
    "CHOICES",
    "CONTROL_ROLES",
    "IN_CONTROL",
    "TEXT_RUN_TARGETS",
    "COMPOSITE_FIELDS",
    "FIELD_ROLES",
    "FLATTENED",
    "GROUP_ROLES",
    "INLINE_ROLES",
    "MAIN_ROLES",
    "NOTICE_ROLES",
    "PICTURE_ROLES",
    "RADIO_ROLES",
    "NAV_WHOLE",
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
CONTROL_ROLES = frozenset({"tab", "treeitem", "menuitem", "option", "DisclosureTriangle"})
"""Roles a person clicks that are no button, link or field (`DisclosureTriangle`: a `<summary>`): each is a
`control` target, shown with its state."""
IN_CONTROL = frozenset({"group", "menu", "tree", "listbox", "tabpanel", "list", "table", "grid", "dialog"})
"""What a control may hold that is not its label: a tree item's group, a menu item's submenu."""
TEXT_RUN_TARGETS = 100
"""Of a table or list, the rows or items whose text `press` takes (the window shows the first 20)."""
COMPOSITE_FIELDS = frozenset({"Date", "DateTime", "InputTime"})
CHOICES = frozenset({"combobox", "listbox"})
CHECK_ROLES = frozenset({"checkbox", "switch", "menuitemcheckbox"})
"""A check box: on or off, a press toggles it."""
RADIO_ROLES = frozenset({"radio", "menuitemradio"})
"""A radio button: one of a group, shown as `kind: "radio"`, not cleared by a press."""
CHECKABLE = CHECK_ROLES | RADIO_ROLES
PICTURE_ROLES = frozenset({"image", "img"})
NOTICE_ROLES = frozenset({"alert", "status", "log", "marquee", "timer"})
NAV_WHOLE = FIELD_ROLES | CONTROL_ROLES | {"list", "table", "grid"}
"""What a navigation bar may hold that makes it more than a list of its links and buttons: it is then
walked as any container is (a search field, a menu bar, the list of links a menu button shows)."""
SKIP_ROLES = frozenset(
    {
        "InlineTextBox",
        "ListMarker",
        "MenuListPopup",
        "button",
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
