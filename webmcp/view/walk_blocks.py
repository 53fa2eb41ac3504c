"""The blocks read from one node's subtree: a field's item, a table, a description list, a button row. Pure."""

from __future__ import annotations

from typing import Any

from cdp_bridge.ax import UNREAD

from .masking import MASK
from .nodes import (
    READ_ON_BUTTON,
    Node,
    hidden,
    join_text,
    name_of,
    prop,
    role_of,
    shown_on_button,
    states_of,
    with_states,
)
from .targets import TargetKind
from .walk_roles import CHECKABLE, CHOICES, COMPOSITE_FIELDS, FLATTENED, RADIO_ROLES, SKIP_ROLES, TEXT_RUN_TARGETS
from .walk_text import TextReader, WalkFrame

__all__ = ["BlockReader"]


_ROLE_WORDS = {"InputTime": "time", "DateTime": "date and time", "spinbutton": "number"}
"""What a person calls a nameless box whose role is Chromium's own word ("InputTime")."""


class BlockReader(TextReader):
    """Fields, tables, description lists and button rows, as the walk shows them."""

    def __init__(self, frame: WalkFrame, error_targets: set[int], secret_ids: set[int], gaps: bool) -> None:
        super().__init__(frame, error_targets)
        self.secret_ids = secret_ids
        self.gaps = gaps

    def field_item(self, node: Node, before: str = "") -> dict[str, Any]:
        """A field as its fields block shows it; `before`: the label a person reads before it when
        it has no name of its own (walk.py `label_before`)."""
        role = role_of(node)
        options: list[str] | None = None
        value: Any
        if role in CHECKABLE:
            checked = str(prop(node, "checked"))
            value = "mixed" if checked == "mixed" else checked == "true"
        elif role == "listbox":
            found = self.descend(node, {"option"})
            options = [name_of(o) for o in found]
            value = [name_of(o) for o in found if prop(o, "selected")]
        elif role in COMPOSITE_FIELDS:
            # As the page holds it ("2026-12-03", "20:45"); its spin buttons (0 when empty) are parts.
            value = node.get("value", {}).get("value") or ""
        else:
            value = node.get("value", {}).get("value")
            if value is None:
                value = prop(node, "valuetext")
            if value is None:
                parts: list[str] = []
                outer, self.collected = self.collected, []
                for child in self.children(node):
                    self._collect_text(child, parts)
                self.collected = outer
                value = join_text(parts)
        if role == "combobox" and options is None:
            options = [name_of(o) for o in self.descend(node, {"option"})] or None
        item: dict[str, Any] = {
            # With nothing to name it, what a person sees: a text area is not a one-line box.
            "label": before
            or name_of(node)
            or str(prop(node, "placeholder") or "")
            or ("text area" if role == "textbox" and prop(node, "multiline") else _ROLE_WORDS.get(role, role)),
            "value": value,
        }
        if options:
            item["options"] = options  # the window shows the first ones (build.py `_cut`)
        if role in RADIO_ROLES:
            item["kind"] = "radio"  # a person sees a round box
        backend = node.get("backendDOMNodeId")
        if (
            backend in self.secret_ids
            or backend in self.frame.secret_ids
            or (isinstance(value, str) and value and set(value) <= {"•", "●", "*"})
        ):
            item["value"] = MASK if value not in ("", None) else ""
            item["sensitive"] = True
        # Chromium marks an untouched required select, checkbox or date input invalid, and an
        # empty required text box never: a page shows an error once the person touched the
        # field or tried to submit (:user-invalid), or when it says so itself (aria-invalid).
        flagged = self.frame.flagged_ids
        ax_invalid = str(prop(node, "invalid") or "false") not in ("false", "None")
        if backend in flagged if flagged is not None else ax_invalid:
            item["invalid"] = True
        required = self.frame.required_ids
        if prop(node, "required") or (required is not None and backend in required):
            item["required"] = True
        if prop(node, "readonly") and role not in CHECKABLE and role not in CHOICES:
            item["readonly"] = True  # a date picker's box: typed into by its picker only
        if prop(node, "disabled"):
            item["disabled"] = True  # greyed out: the page takes no value there now (fill says so)
        return item

    def table(self, node: Node) -> dict[str, Any]:
        columns: list[str] = []
        heads: list[str] = []
        rows: list[list[str] | None] = []
        for row in self.descend(node, {"row"}):
            if row.get(UNREAD):
                rows.append(None)
                continue
            cells = [
                c for c in self.children_flat(row) if role_of(c) in ("cell", "gridcell", "columnheader", "rowheader")
            ]
            header = all(role_of(c) == "columnheader" for c in cells)
            # The text as shown: Chromium's name of "https:<wbr>//www" is "https: //www".
            if len(rows) >= TEXT_RUN_TARGETS:
                texts = [self.text_of(c) or name_of(c) for c in cells]
            else:
                texts = []
                boxes: list[tuple[int, Node]] = []
                for at, cell in enumerate(cells):
                    mark = len(self.collected)
                    found: list[Node] = []
                    self.nameless = found
                    try:
                        text = self.text_of(cell) or name_of(cell)
                    finally:
                        self.nameless = None
                    if len(found) == 1 and not text.strip():
                        boxes.append((at, found[0]))
                    texts.append(text)
                    if text and len(self.collected) == mark:
                        # A cell `press` takes by its text (one holding a link or button is pressed by that).
                        kind: TargetKind = "control" if role_of(cell) == "gridcell" else "text"
                        self.collected.append((kind, cell, " ".join(text.split())))
                if not header:
                    self.name_row_boxes(boxes, texts, heads)
                elif not columns and not rows:
                    heads = list(texts)  # the headings as the page writes them, before a box is named
                    for at, box in boxes:
                        # The header's own box ticks every row: what every such box is named.
                        texts[at] = self.guessed_box(box, "Select all")
            if cells and not columns and not rows and header:
                columns = texts
            elif cells:
                rows.append(texts)
        return self.run_block({"type": "table", "columns": columns}, "rows", rows)

    def name_row_boxes(self, boxes: list[tuple[int, Node]], texts: list[str], heads: list[str]) -> None:
        """Name each nameless check box alone in a cell of a row (an admin table's, a mail list's) by
        its column's heading, else "Select", and the row's first words: "Select Ann (guessed)".

        A person picks the row by what it says; the box's cell then shows that name and its state
        ("Select Ann (checked, guessed)"), and fill or press takes the box by the name.
        """
        for at, box in boxes:
            key = next((" ".join(t.split()) for i, t in enumerate(texts) if i != at and t.strip()), "")
            if not key:
                continue
            head = " ".join(heads[at].split()) if at < len(heads) else ""
            texts[at] = self.guessed_box(box, f"{head or 'Select'} {key}")

    def guessed_box(self, box: Node, name: str) -> str:
        """Note nameless check box `box` as the field `name` (a guess); what its cell shows."""
        self.collected.append(("field", box, name))
        return with_states(name, [*states_of(box), "guessed"])

    def run_block(self, block: dict[str, Any], unit: str, run: list[Any]) -> dict[str, Any]:
        """`block` with its rows or items; where some were not read, the read ones and a `total`.

        With `gaps`, the unread ones stay in place as None (a read of some rows in the middle).
        """
        if self.gaps or None not in run:
            return {**block, unit: run}
        return {**block, unit: run[: run.index(None)], "offset": 0, "total": len(run)}

    def term_pairs(self, node: Node) -> list[dict[str, Any]]:
        """A description list (`<dl>`) as label/value items: each term with its definitions."""
        items: list[dict[str, Any]] = []
        for child in self.children_flat(node):
            role = role_of(child)
            if role == "term":
                items.append({"label": self.text_of(child) or name_of(child), "value": ""})
            elif role == "definition" and items:
                text = self.text_of(child)
                items[-1]["value"] = f"{items[-1]['value']} {text}".strip()
        return items

    def button_row(self, node: Node) -> list[str] | None:
        """The labels of a row of buttons that a person reads (showtimes, doors, pages), if `node` is one."""
        if role_of(node) in SKIP_ROLES:
            return None
        for child in self.children(node):
            # A child of its own that is neither a button nor nameless text: no row (without
            # flattening all that the node holds, as children_flat does, for every container).
            if hidden(child) or child.get("ignored"):
                continue
            role = role_of(child)
            if role not in FLATTENED and role != "button" and (role != "StaticText" or name_of(child)):
                return None
        items = [c for c in self.children_flat(node) if not (role_of(c) == "StaticText" and not name_of(c))]
        if len(items) < 2 or any(role_of(c) != "button" for c in items):
            return None
        if not any(READ_ON_BUTTON.search(name_of(c)) for c in items):
            return None
        labels = [shown_on_button(c) for c in items if name_of(c)]
        self.collected.extend(("button", c, shown_on_button(c)) for c in items if name_of(c))
        return labels
