"""The `current` answer as plain data: Application → Window → Tab → Document → elements.

Pure functions, no I/O: `assemble` takes what was read from the browser (`TabFacts`, with
the `Pointing` of each shown tab) and returns the UI-context element tree (docs/protocols.md#uic-5).

Choices this module makes (docs/protocols.md#uic leaves them to the provider):

* A tab is *shown* when its document is visible (`document.visibilityState`), which is
  the active tab of each browser window, headless included (headless Chromium keeps one
  window and reports every tab but the front one hidden). Shown tabs are `selected` and
  get their `Document`; background tabs are listed without one.
* The focus path runs through the shown tab whose document has system focus
  (`document.hasFocus()`); when none has it (the user has switched to the agent's app),
  it runs through the first shown tab, which is where keys go once the user comes back.
* AX roles become PascalCase (`textbox` → `TextField`). The ARIA roles `tab`, `document`,
  `application` and `window`-like roles would collide with the protocol's own
  `Tab`/`Document`/`Application`/`Window`, so they read `TabItem`, `DocumentRegion`,
  `ApplicationRegion`.
* Ancestors that the accessibility tree calls `generic` (or ignores) are left out; their
  children hang from the nearest ancestor that is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from webmcp.uicontext.locate import FOCUS, HOVER, SECRET, SELECTED, Pointed, Pointing, WindowInfo
from webmcp.view.masking import MASK

__all__ = ["TabFacts", "assemble", "pascal_role", "document_children"]

_ROLE_NAMES = {
    "textbox": "TextField",
    "searchbox": "SearchField",
    "combobox": "ComboBox",
    "checkbox": "CheckBox",
    "listbox": "ListBox",
    "listitem": "ListItem",
    "menuitem": "MenuItem",
    "menubar": "MenuBar",
    "menuitemcheckbox": "MenuItemCheckBox",
    "menuitemradio": "MenuItemRadio",
    "radiogroup": "RadioGroup",
    "spinbutton": "SpinButton",
    "treeitem": "TreeItem",
    "treegrid": "TreeGrid",
    "gridcell": "GridCell",
    "columnheader": "ColumnHeader",
    "rowheader": "RowHeader",
    "rowgroup": "RowGroup",
    "contentinfo": "ContentInfo",
    "tabpanel": "TabPanel",
    "tablist": "TabList",
    "progressbar": "ProgressBar",
    "scrollbar": "ScrollBar",
    "alertdialog": "AlertDialog",
    "img": "Image",
    "image": "Image",
    "StaticText": "Text",
    "LabelText": "Label",
    "MenuListPopup": "MenuList",
    "MenuListOption": "Option",
    "tab": "TabItem",
    "document": "DocumentRegion",
    "application": "ApplicationRegion",
    "RootWebArea": "DocumentRegion",
    "Iframe": "Frame",
    "IframePresentational": "Frame",
    "DescriptionList": "DescriptionList",
    "none": "Generic",
    "presentation": "Generic",
    "generic": "Generic",
    "sectionheader": "SectionHeader",
    "sectionfooter": "SectionFooter",
}
_DROPPED_ROLES = {"generic", "none", "presentation", "", "InlineTextBox", "LineBreak", "ListMarker"}
_VALUE_ROLES = {
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "slider",
    "progressbar",
    "scrollbar",
    "meter",
}


def pascal_role(ax_role: str) -> str:
    """The element role for an AX role: `textbox` → `TextField`, `button` → `Button`."""
    known = _ROLE_NAMES.get(ax_role)
    if known is not None:
        return known
    return ax_role[:1].upper() + ax_role[1:] if ax_role else "Generic"


def _ax(node: dict[str, Any] | None, key: str) -> Any:
    return (node or {}).get(key, {}).get("value")


def _prop(node: dict[str, Any] | None, name: str) -> Any:
    for prop in (node or {}).get("properties", ()):
        if prop.get("name") == name:
            return prop.get("value", {}).get("value")
    return None


def _kept(element: Pointed) -> bool:
    if element.backend_node_id is None:
        return False  # nothing to name it by, nor to locate it with
    if element.flags & (FOCUS | HOVER | SELECTED):
        return True
    node = element.ax or {}
    return not node.get("ignored") and str(_ax(node, "role") or "") not in _DROPPED_ROLES


def _element(element: Pointed, element_id: str) -> dict[str, Any]:
    node = element.ax
    role = str(_ax(node, "role") or "generic")
    name = " ".join(str(_ax(node, "name") or "").split())
    # The text as shown where the name is only that text with other spaces: Chromium names
    # "https:<wbr>//www" "https: //www"; the blocks of app://windows read it as shown too.
    shown = element.text and "".join(name.split()) == "".join(element.text.split())
    title = element.text if shown else name or element.text
    out: dict[str, Any] = {"id": element_id, "role": pascal_role(role), "title": title}
    value = _ax(node, "value")
    if role in _VALUE_ROLES and value is not None:
        out["value"] = MASK if element.flags & SECRET and str(value) else str(value)
    states: list[str] = []
    if element.flags & SELECTED or _prop(node, "selected") is True:
        states.append("selected")
    if _prop(node, "checked") in ("true", True):
        states.append("checked")
    if _prop(node, "expanded") is True:
        states.append("expanded")
    if states:
        out["states"] = states
    return out


def document_children(
    pointing: Pointing, element_id: Callable[[int], str], *, on_focus_path: bool
) -> list[dict[str, Any]]:
    """The kept elements of one document as a forest, in document order, with their states.

    `element_id(backend_node_id)` mints the id of a node.
    """
    elements = pointing.elements
    built: dict[int, dict[str, Any]] = {}
    for i, element in enumerate(elements):
        if _kept(element):
            assert element.backend_node_id is not None
            built[i] = _element(element, element_id(element.backend_node_id))

    def kept_ancestor(i: int) -> int:
        seen = 0
        parent = elements[i].parent
        while parent >= 0 and parent not in built and seen < len(elements):
            parent, seen = elements[parent].parent, seen + 1
        return parent if parent in built else -1

    if on_focus_path:
        end = next((i for i, e in enumerate(elements) if e.flags & FOCUS and i in built), None)
        cursor, steps = end, 0
        while cursor is not None and cursor >= 0 and steps <= len(elements):
            _add_state(built[cursor], "focused")
            cursor, steps = kept_ancestor(cursor), steps + 1
            if cursor < 0:
                break
    hovered = [i for i, e in enumerate(elements) if e.flags & HOVER and i in built]
    if hovered:
        _add_state(built[hovered[-1]], "hovered")

    roots: list[dict[str, Any]] = []
    for i in sorted(built):
        parent = kept_ancestor(i)
        (built[parent].setdefault("children", []) if parent >= 0 else roots).append(built[i])
    return roots


def _add_state(element: dict[str, Any], state: str) -> None:
    states = element.setdefault("states", [])
    if state not in states:
        states.append(state)


@dataclass
class TabFacts:
    """One tab as read for `current`."""

    tab_id: str
    title: str
    window: WindowInfo | None
    pointing: Pointing | None
    """Only for a shown tab whose page answered."""
    doc_id: str | None
    element_id: Callable[[int], str]
    secrets: frozenset[str] = frozenset()
    """The values its secret fields held as it was read (memory only: to mask the answer)."""

    @property
    def shown(self) -> bool:
        """Its document is visible (the active tab of its window)."""
        return self.pointing is not None and self.pointing.visible


def _focus_tab(tabs: list[TabFacts]) -> TabFacts | None:
    shown = [t for t in tabs if t.shown]
    with_focus = [t for t in shown if t.pointing is not None and t.pointing.has_focus]
    candidates = with_focus or shown
    pointing_at = [
        t for t in candidates if t.pointing is not None and any(e.flags & FOCUS for e in t.pointing.elements)
    ]
    found = pointing_at or candidates
    return found[0] if found else None


def assemble(
    app_name: str,
    tabs: list[TabFacts],
    *,
    window_id: Callable[[int], str] = lambda n: f"win-{n}",
    unknown_window: str = "win-0",
) -> dict[str, Any]:
    """The root `Application` element over every window and tab."""
    focus = _focus_tab(tabs)
    windows: dict[str, dict[str, Any]] = {}
    for tab in tabs:
        win_id = window_id(tab.window.window_id) if tab.window is not None else unknown_window
        window = windows.setdefault(win_id, {"id": win_id, "role": "Window", "title": "", "children": []})
        element: dict[str, Any] = {"id": tab.tab_id, "role": "Tab", "title": tab.title}
        states: list[str] = []
        if tab is focus:
            states.append("focused")
            _add_state(window, "focused")
        if tab.shown:
            states.append("selected")
            # Like the browser's own title bar: the focused tab's title, else a shown one's.
            window["title"] = tab.title if tab is focus else window["title"] or tab.title
            if tab.pointing is not None and tab.doc_id is not None:
                document: dict[str, Any] = {
                    "id": tab.doc_id,
                    "role": "Document",
                    "title": tab.pointing.title or tab.title,
                }
                if tab is focus:
                    document["states"] = ["focused"]
                children = document_children(tab.pointing, tab.element_id, on_focus_path=tab is focus)
                if children:
                    document["children"] = children
                element["children"] = [document]
        if states:
            element["states"] = states
        window["children"].append(element)
    for window in windows.values():
        window["title"] = window["title"] or (window["children"][0]["title"] if window["children"] else "")
    root: dict[str, Any] = {"id": "app", "role": "Application", "title": app_name}
    if windows:
        root["children"] = list(windows.values())
    return root
