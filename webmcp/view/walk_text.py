"""One frame as the walk reads it, and the text of its nodes as the page lays it out. Pure.

Text runs join as the page lays them out (`nodes.edge_of`): a span or a link inside a word
adds nothing, an inline-block a space, a block a line break. Where the layout was not read,
a link stays a word of its own. The buttons and links met in a text are noted (`collected`)
for the block that text ends up in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from .nodes import (
    GUESSED,
    LINE,
    Node,
    edge_of,
    hidden,
    join_text,
    name_of,
    named_by_author,
    prop,
    raw_text,
    related,
    role_of,
    shown_on_button,
    states_of,
    with_states,
)
from .targets import TargetKind
from .walk_roles import CHECKABLE, FIELD_ROLES, FLATTENED, INLINE_ROLES

if TYPE_CHECKING:
    from cdp_bridge.ax_patch import Spliced

__all__ = ["FrameRead", "NodeFacts", "TextReader", "WalkFrame", "editors_as_textboxes", "frame_nodes"]

_ERROR_PAGE = "chrome-error:"
_UNREACHABLE = "an address that could not be reached"


def _between(fact: str) -> str:
    """A side of `cdp_bridge.layout` gaps as text: "" or " " as it is, a box edge by its display."""
    return fact if fact in ("", " ") else edge_of(fact) or ""


@dataclass
class WalkFrame:
    """One frame's nodes by id, its root, and the facts read beside them (by backend id)."""

    key: str
    by_id: dict[str, Node]
    root: Node | None
    secret_ids: set[int] = field(default_factory=set)
    required_ids: set[int] | None = None
    flagged_ids: set[int] | None = None
    display: dict[int, str] | None = None
    gaps: dict[int, tuple[str, str]] | None = None
    unreachable_url: str = ""

    def failed_host(self) -> str | None:
        """The host a frame failed to load (None when it loaded).

        Known from its frame's `unreachableUrl`, or from its document: a frame read while it
        committed Chromium's error page has that page's root (its url `chrome-error://…`,
        its name the host).
        """
        if self.unreachable_url:
            return urlsplit(self.unreachable_url).hostname or _UNREACHABLE
        if self.root is not None and str(prop(self.root, "url") or "").startswith(_ERROR_PAGE):
            return name_of(self.root) or _UNREACHABLE
        return None


NodeFacts = tuple[Node, bool, bool, list[int]]
"""A node, whether it is `editable`, whether it may root a rich-text editor (editable, focusable,
no field), and the backend ids its `errormessage` names: what `frame_nodes` reads of each node."""


def _facts(node: Node) -> NodeFacts:
    editable = bool(prop(node, "editable"))
    root = editable and role_of(node) not in FIELD_ROLES and bool(prop(node, "focusable"))
    return node, editable, root, related(node, "errormessage")


@dataclass
class FrameRead:
    """What `frame_nodes` read of one frame's nodes, kept for the next build of the frame."""

    nodes: Sequence[Node]
    listed: dict[str, Node]
    """The nodes by id, as listed (of an id listed twice, the last)."""
    facts: dict[str, NodeFacts]
    """What is read of each node, by id."""
    errors: dict[str, list[int]]
    """By id, of the nodes whose `errormessage` names any: the backend ids it names."""
    maybe: set[str]
    """The ids of the nodes that may root a rich-text editor."""
    by_id: dict[str, Node]
    """The nodes by id as the walk reads them (`editors_as_textboxes`)."""
    editors: frozenset[str]
    """The ids of the nodes `by_id` reads as a `textbox` (each build's own copy)."""
    came_from: tuple[dict[str, Node], frozenset[str], frozenset[str]] | None = None
    """The `by_id` of the read this one was made from, and the ids whose node `by_id` now holds
    another object than that one did (and those gone); None: not made from one."""

    @property
    def error_ids(self) -> list[int]:
        return [b for named in self.errors.values() for b in named]


def frame_nodes(nodes: Sequence[Node], before: FrameRead | None = None, spliced: Spliced | None = None) -> FrameRead:
    """A frame's nodes by id as the walk reads them (`editors_as_textboxes`), and the backend ids
    their `errormessage` names.

    `before` is what the last build of the frame read: the very same nodes are taken from it, and
    nodes a splice (`spliced`, which made `nodes` from the nodes of `before`) kept are read only where
    it changed them; otherwise every node is read.
    """
    if before is not None and before.nodes is nodes:
        return before
    if before is not None and spliced is not None and spliced.nodes is nodes and spliced.base is before.nodes:
        listed = cast(dict[str, Node], spliced.by_id)
        facts, errors, maybe = dict(before.facts), dict(before.errors), set(before.maybe)
        for node_id in spliced.gone:
            facts.pop(node_id, None)
            errors.pop(node_id, None)
            maybe.discard(node_id)
        for node_id in spliced.changed:
            _note(node_id, listed[node_id], facts, errors, maybe)
        by_id, editors = editors_as_textboxes(listed, facts, maybe)
        replaced = frozenset(spliced.changed | editors | (before.editors & listed.keys()))
        came_from = (before.by_id, replaced, frozenset(spliced.gone))
        return FrameRead(nodes, listed, facts, errors, maybe, by_id, editors, came_from)
    listed = {}
    for node in nodes:
        listed[node["nodeId"]] = node
    facts, errors, maybe = {}, {}, set()
    for node_id, node in listed.items():
        _note(node_id, node, facts, errors, maybe)
    by_id, editors = editors_as_textboxes(listed, facts, maybe)
    return FrameRead(nodes, listed, facts, errors, maybe, by_id, editors)


def _note(node_id: str, node: Node, facts: dict[str, NodeFacts], errors: dict[str, list[int]], maybe: set[str]) -> None:
    found = facts[node_id] = _facts(node)
    if found[3]:
        errors[node_id] = found[3]
    else:
        errors.pop(node_id, None)
    if found[2]:
        maybe.add(node_id)
    else:
        maybe.discard(node_id)


def editors_as_textboxes(
    listed: dict[str, Node], facts: dict[str, NodeFacts], maybe: set[str]
) -> tuple[dict[str, Node], frozenset[str]]:
    """`listed` (the nodes by id) with the root of each rich-text editor that has no role read as a
    `textbox`, and the ids of those.

    Chromium gives a plain `<div contenteditable>` the role `generic`; only its `editable`
    property (set on the root and everything inside it) and `focusable` (the root alone) tell
    what it is. A person sees a box to type in, so the window shows it as a field, as it does
    one with `role=textbox`. The root is the focusable editable node whose parent is not
    editable; a textarea's inner editable nodes are not focusable and stay as they are.
    `facts` is what is read of each node, by id, and `maybe` the ids of the nodes that may be one
    (`frame_nodes`).
    """
    changed: dict[str, Node] = {}
    for node_id in maybe:
        node = listed[node_id]
        parent = facts.get(str(node.get("parentId", "")))
        if parent is not None and parent[1]:
            continue
        made = {**node, "role": {**node.get("role", {}), "value": "textbox"}}
        if not (node.get("value") or {}).get("value") and (drawn := _drawn_text(listed, node)):
            # Empty, with only a placeholder CSS draws (`.editor:empty::before {content: attr(…)}`,
            # Quill's `.ql-blank::before`): Chromium gives that text as the box's; it is its hint.
            made["value"] = {"type": "string", "value": ""}
            hint = {"name": "placeholder", "value": {"type": "string", "value": drawn}}
            made["properties"] = [*node.get("properties", ()), hint]
        changed[node_id] = made
    return ({**listed, **changed} if changed else listed), frozenset(changed)


def _drawn_text(listed: Mapping[str, Node], root: Node) -> str:
    """The text inside `root` when CSS draws all of it (`::before`, `::after`: no DOM node), else ""."""
    drawn: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if role_of(node) == "StaticText":
            if "backendDOMNodeId" in node:
                return ""  # text the page holds: the box is not empty
            drawn.append(name_of(node))
            continue
        stack.extend(listed[c] for c in reversed(node.get("childIds", ())) if c in listed)
    return " ".join(" ".join(drawn).split())


class TextReader:
    """The text of a frame's nodes, as a person reads it on the page."""

    def __init__(self, frame: WalkFrame, error_targets: set[int]) -> None:
        self.frame = frame
        self.error_targets = error_targets
        """The messages of invalid fields (each becomes its field's notice, never text)."""
        self.collected: list[tuple[TargetKind, Node, str]] = []
        """Buttons and links met while collecting a block's text, until that block is emitted."""
        self.impure = 0
        """How often the walk read beyond the container it was in (a frame, an error message)."""
        self.met_field = False
        """Whether a text collected since this was last cleared held a field."""
        self.nameless: list[Node] | None = None
        """While an item's text is collected (`item_text`): the check boxes in it with no name."""
        self.naming = False
        """While `item_text` reads an item's text for its check box's name: without its buttons."""

    def children(self, node: Node) -> list[Node]:
        by_id = self.frame.by_id
        return [by_id[c] for c in node.get("childIds", ()) if c in by_id]

    def quiet_text(self, node: Node) -> str:
        """`text_of(node)` without noting the buttons and links in it (they belong to another block)."""
        outer, self.collected = self.collected, []
        try:
            return self.text_of(node)
        finally:
            self.collected = outer

    def link_text(self, node: Node) -> tuple[str, str]:
        """A link's text as it sits in a sentence: "Netscape<a>.</a>" gives "." and nothing around it;
        and its own text (`text_of` it: what lies around it only adds white space there).

        The link is one unit (a card's heading and text are its lines); the space its own text
        begins or ends with stays, and so does one around a link laid out as a box or a block.
        An icon link with no text gives its name, as a word of its own (marked "(guessed)" where
        the bridge made it up: the page shows no such words), and so does a link whose
        author-given name (`aria-label`) holds all its text and more.
        """
        parts: list[str] = []
        for child in self.children(node):
            if not hidden(child):
                self._collect_text(child, parts)
        text = join_text(parts)
        name = name_of(node)
        if not text:
            return f" {with_states(name, ('guessed',)) if name and prop(node, GUESSED) else name} ", text
        if named_by_author(node) and " ".join(text.split()).casefold() in name.casefold():
            # The author's name says more than the text it holds: a cart link's badge "0" is "Cart, 0 items".
            return f" {name} ", text
        raw = "".join(parts)
        edge = self.edge(node)
        edge = " " if edge is None else edge  # the layout not read: a word of its own, as before
        before, after = self.spaces_around(node)
        lead = " " if raw[:1].isspace() else ""
        trail = " " if raw[-1:].isspace() else ""
        return f"{before}{edge}{lead}{text}{trail}{edge}{after}", text

    def spaces_around(self, node: Node) -> tuple[str, str]:
        """What the page shows right before and after the node that the AX tree may have dropped:
        a space, or the edge of a block it left out (a `display: block` span)."""
        gaps = self.frame.gaps
        if not gaps:
            return "", ""
        lead, trail = gaps.get(node.get("backendDOMNodeId", -1), ("", ""))
        return _between(lead), _between(trail)

    def edge(self, node: Node) -> str | None:
        """What separates the node's text from the text around it; None where the layout was not read."""
        display = self.frame.display
        if display is None:
            return None
        return edge_of(display.get(node.get("backendDOMNodeId", -1)))

    def children_flat(self, node: Node) -> list[Node]:
        """Children, looking through ignored wrappers and row groups."""
        out: list[Node] = []
        for child in self.children(node):
            if hidden(child):
                continue
            if child.get("ignored") or role_of(child) in FLATTENED:
                out.extend(self.children_flat(child))
            else:
                out.append(child)
        return out

    def descend(self, node: Node, roles: AbstractSet[str]) -> list[Node]:
        """Descendants with one of `roles`, not looking inside a match or a nested table."""
        found: list[Node] = []
        for child in self.children_flat(node):
            role = role_of(child)
            if role in roles:
                found.append(child)
            elif role not in ("table", "grid", "list"):
                found.extend(self.descend(child, roles))
        return found

    def text_of(self, node: Node) -> str:
        parts: list[str] = []
        self._collect_text(node, parts)
        return join_text(parts)

    def _collect_text(self, node: Node, parts: list[str]) -> None:
        role = role_of(node)
        if role == "StaticText":
            parts.append(raw_text(node))
            return
        if role == "LineBreak":
            parts.append(LINE)
            return
        if role == "button":
            if self.naming:
                return
            parts.append(f" {shown_on_button(node)} ")
            self.collected.append(("button", node, shown_on_button(node)))
            return
        if role in ("InlineTextBox", "ListMarker") or node.get("backendDOMNodeId") in self.error_targets:
            return
        if role in FIELD_ROLES:
            name = name_of(node)
            if role in CHECKABLE and name:
                # A check box in a table's row or a list's item: ticked or not is what a person sees
                # of it ("Select row (checked)"), and fill or press takes it by its name.
                parts.append(f" {with_states(name, states_of(node))} ")
                self.collected.append(("field", node, name))
            else:
                parts.append(f" {name} ")  # Never a field's value: it may be a secret.
                if role in CHECKABLE and self.nameless is not None:
                    self.nameless.append(node)
            self.met_field = True
            return
        # Separate elements stay separate: a heading and the paragraph after it are two lines.
        before = after = ""
        if role == "link":
            self.collected.append(("link", node, ""))
        if role in ("generic", "none", "link"):
            edge = self.edge(node) or ""  # a span, a div or a link as the layout has it (<h1><span>…</span><span>…)
            before, after = self.spaces_around(node)
        else:
            edge = "" if node.get("ignored") or role in INLINE_ROLES else LINE
        parts.append(before + edge)
        for child in self.children(node):
            if not hidden(child):
                self._collect_text(child, parts)
        parts.append(edge + after)

    def item_text(self, item: Node) -> tuple[str, bool]:
        """A list item's text, and whether a check box in it was named by it.

        A check box with no name of its own that is an item's only one (TodoMVC's, a mail
        list's: its text is a `<label>` beside it, not for it) is what a person ticks to mark
        that item: it takes the item's text as its name, so that fill or press takes it by
        that, and the item shows its state ("Walk the dog (checked)").
        """
        boxes: list[Node] = []
        self.nameless = boxes
        try:
            said = self.text_of(item)
        finally:
            self.nameless = None
        if len(boxes) != 1 or not said.strip():
            return said, False
        # Its name without the item's buttons (TodoMVC's delete "×" shows only under the pointer).
        self.naming = True
        try:
            name = self.quiet_text(item)
        finally:
            self.naming = False
        if not name.strip():
            return said, False
        self.collected.append(("field", boxes[0], " ".join(name.split())))
        shown = with_states(name, states_of(boxes[0]))
        return (shown + said[len(name) :] if said.startswith(name) else with_states(said, states_of(boxes[0]))), True

    def item_targets(self, item: Node, said: str, room: int) -> int:
        """Note list item `item`, shown as `said`, as text `press` takes; how many were noted (at most `room`).

        An item holding lists of its own (a folder's files in a file tree, a comment's replies) is
        pressed on its own first words, not at its centre, which lies on an item inside it; and
        each of the items inside is a text of its own ("Dolores" under "Cierra": MiniWoB's
        navigate-tree, jquery.treeview's markup), as a person clicks it.
        """
        # A list inside it starts a line of its own: an item on one line holds none (most items; no second walk).
        inner = (
            [(sub, text) for sub in self.inner_items(item) if (text := self.quiet_text(sub)).strip()]
            if LINE in said
            else []
        )
        label, node = " ".join(said.split()), item
        if inner:
            node = self.own_text(item) or item
            # Its name is its own words, the lines before its inner items' ("📁 Reports").
            cut = said.find(inner[0][1].strip())
            label = " ".join(said[:cut].split()) if cut > 0 and said[:cut].strip() else label
        self.collected.append(("text", node, label))
        noted = 1
        for sub, text in inner:
            if noted >= room:
                break
            noted += self.item_targets(sub, text, room - noted)
        return noted

    def inner_items(self, item: Node) -> list[Node]:
        """The items of the lists inside list item `item`, not those of lists inside them."""
        found: list[Node] = []
        for child in self.children_flat(item):
            role = role_of(child)
            if role in ("list", "directory"):
                found.extend(self.descend(child, {"listitem"}))
            elif role not in ("listitem", "table", "grid", "treegrid"):
                found.extend(self.inner_items(child))
        return found

    def own_text(self, item: Node) -> Node | None:
        """The first text of `item` outside the lists inside it (a folder's name), if the page holds it."""
        for child in self.children_flat(item):
            role = role_of(child)
            if role == "StaticText":
                if raw_text(child).strip() and "backendDOMNodeId" in child:
                    return child
            elif role not in ("list", "directory", "listitem", "table", "grid", "treegrid"):
                if (found := self.own_text(child)) is not None:
                    return found
        return None

    def text_by_backend(self, backend: int) -> str:
        self.impure += 1  # a node anywhere in the frame
        node = next((n for n in self.frame.by_id.values() if n.get("backendDOMNodeId") == backend), None)
        if node is None:
            return ""
        parts: list[str] = []
        outer, self.collected = self.collected, []
        for child in self.children(node):  # The node itself is an error target, skipped by _collect_text.
            self._collect_text(child, parts)
        self.collected = outer
        return join_text(parts)

    def backend_ids(self, node: Node) -> set[int]:
        found: set[int] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if "backendDOMNodeId" in current:
                found.add(int(current["backendDOMNodeId"]))
            stack.extend(self.children(current))
        return found
