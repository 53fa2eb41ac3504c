"""The walk of one tab's AX trees that yields keyed raw blocks, in reading order. Pure.

Each block is paired with the key of the element that *owns* it (heading, table, list,
the form or group holding a run of fields, the paragraph or container holding a run of
text), so re-rendering the text inside an element does not change its key. A key is
`(frame key, backendDOMNodeId, kind, ordinal)`; the ordinal tells apart several runs of
text in one container. `build.build_view` turns keys into block ids.

Frames are walked where their `<iframe>` sits (matched by the owner's backend node id);
a frame whose owner is unknown is appended after the main frame. A frame that failed to
load is never read: the first one shown gives one notice where it sits, naming the hosts
of all of them. An open modal dialog (`<dialog>` opened with `showModal()`: role dialog
with `modal: true`) is walked into its own block list, not the page's.

Text runs join as the page lays them out (`nodes.edge_of`): a span or a link inside a word
adds nothing, an inline-block a space, a block a line break. Where the layout was not read,
a link stays a word of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from cdp_bridge.ax import UNREAD, FrameNodes

from .masking import MASK
from .nodes import (
    LINE,
    READ_ON_BUTTON,
    Node,
    edge_of,
    guess_mime,
    hidden,
    join_text,
    name_of,
    named_by_author,
    prop,
    related,
    role_of,
    severity,
    shown_on_button,
)
from .targets import ActionTarget, TargetKind, target_of
from .walk_memo import Entry, FrameFacts, WalkMemo

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
        # date, time, datetime-local, month and week inputs: one field each, never their spin parts
        "Date",
        "DateTime",
        "InputTime",
    }
)
_COMPOSITE_FIELDS = frozenset({"Date", "DateTime", "InputTime"})
_CHOICES = frozenset({"combobox", "listbox"})
_CHECKABLE = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
_NOTICE_ROLES = frozenset({"alert", "status", "log", "marquee", "timer"})
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
_MAIN_ROLES = frozenset({"main", "article"})
_FLATTENED = frozenset({"generic", "rowgroup", "none"})
"""Wrappers that `children_flat` looks through (and ignored nodes)."""
_ERROR_PAGE = "chrome-error:"
_UNREACHABLE = "an address that could not be reached"
_FAILED_HOSTS_SHOWN = 3
Keyed = tuple[tuple[Any, ...], dict[str, Any]]

__all__ = ["Heading", "Keyed", "Node", "RawModal", "Walk", "walk_frames"]


def _between(fact: str) -> str:
    """A side of `cdp_bridge.layout` gaps as text: "" or " " as it is, a box edge by its display."""
    return fact if fact in ("", " ") else edge_of(fact) or ""


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading of the main document, outside any modal dialog."""

    text: str
    level: int
    in_main: bool
    """Inside a `main` or `article` landmark."""


@dataclass
class RawModal:
    """An open modal dialog found by the walk."""

    key: tuple[Any, ...]
    title: str
    blocks: list[Keyed]
    backend_ids: frozenset[int]


@dataclass
class Walk:
    """What one walk found: the page's keyed blocks, its open modals, its headings."""

    blocks: list[Keyed]
    modals: list[RawModal]
    headings: list[Heading]
    failed_frames_key: tuple[Any, ...] | None = None
    """The key of the one notice about frames that failed to load, if one is shown."""
    targets: list[ActionTarget] = field(default_factory=list)
    """The page's fields, buttons and links as its blocks show them (outside modals), in reading order."""
    over_page: set[tuple[Any, ...]] = field(default_factory=set)
    """Keys of the page's blocks inside a non-modal dialog (a cookie banner, a chat box): shown over the page."""


@dataclass
class _Frame:
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


def _editors_as_textboxes(by_id: dict[str, Node]) -> dict[str, Node]:
    """`by_id` with the root of each rich-text editor that has no role read as a `textbox`.

    Chromium gives a plain `<div contenteditable>` the role `generic`; only its `editable`
    property (set on the root and everything inside it) and `focusable` (the root alone) tell
    what it is. A person sees a box to type in, so the window shows it as a field, as it does
    one with `role=textbox`. The root is the focusable editable node whose parent is not
    editable; a textarea's inner editable nodes are not focusable and stay as they are.
    """
    changed: dict[str, Node] = {}
    for node_id, node in by_id.items():
        if not prop(node, "editable") or role_of(node) in _FIELD_ROLES or not prop(node, "focusable"):
            continue
        parent = by_id.get(str(node.get("parentId", "")))
        if parent is not None and prop(parent, "editable"):
            continue
        changed[node_id] = {**node, "role": {**node.get("role", {}), "value": "textbox"}}
    return {**by_id, **changed} if changed else by_id


@dataclass
class _Sink:
    out: list[Keyed] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    text_key: tuple[Any, ...] | None = None
    fields: list[dict[str, Any]] = field(default_factory=list)
    fields_key: tuple[Any, ...] | None = None
    after_fields: list[Keyed] = field(default_factory=list)


class _Walker:
    def __init__(
        self, frames: Sequence[FrameNodes], secret_ids: set[int], gaps: bool = False, memo: WalkMemo | None = None
    ) -> None:
        self.gaps = gaps
        self.frames = [
            _Frame(
                f.key,
                _editors_as_textboxes({n["nodeId"]: n for n in f.nodes}),
                next((n for n in f.nodes if not n.get("parentId")), None),
                f.secret_ids,
                f.required_ids,
                f.flagged_ids,
                f.display,
                f.gaps,
                f.unreachable_url,
            )
            for f in frames
        ]
        self.by_owner = {f.owner_backend_id: i for i, f in enumerate(frames) if f.owner_backend_id is not None}
        self.placed: set[int] = set()
        self.secret_ids = secret_ids
        self.sink = _Sink()
        self.page_sink = self.sink
        self.modals: list[RawModal] = []
        self.headings: list[Heading] = []
        self.failed_hosts: list[str] = []
        self.failed_count = 0
        self.failed_notice: Keyed | None = None
        self.frame = self.frames[0] if self.frames else _Frame("", {}, None)
        self.containers: list[tuple[str, int, str]] = []
        self.ordinals: dict[tuple[Any, ...], int] = {}
        self.error_targets: set[int] = set()
        self.targets: list[ActionTarget] = []
        self.collected: list[tuple[TargetKind, Node, str]] = []
        """Buttons and links met while collecting a block's text, until that block is emitted."""
        self.groups: list[str] = []
        """Names of the radio groups and fieldsets the walk is in."""
        self.over_page: set[tuple[Any, ...]] = set()
        for f in frames:
            for n in f.nodes:
                self.error_targets.update(related(n, "errormessage"))
        self.memo = memo
        self.frame_facts: dict[str, FrameFacts] = {}
        self.changed: dict[str, set[str] | None] = {}
        """Frame key → the ids of nodes whose containers the memo cannot give (None: all)."""
        self.used: list[tuple[str, str]] = []
        """The memo's entries made or used by this walk."""
        self.ordinals_set: list[tuple[Any, ...]] = []
        """Every owner an ordinal was taken for, in order (what a container's entry keeps)."""
        self.over_page_added: list[tuple[Any, ...]] = []
        self.impure = 0
        """How often the walk read beyond the container it was in (a frame, an error message)."""

    # --- keys ----------------------------------------------------------------------

    def key(self, node: Node, kind: str = "") -> tuple[Any, ...]:
        return (self.frame.key, node.get("backendDOMNodeId", node["nodeId"]), kind)

    def owner_key(self, kind: str, groups_only: bool, tag: str = "") -> tuple[Any, ...]:
        owner = next(
            (c for c in reversed(self.containers) if not groups_only or c[2] in _GROUP_ROLES),
            self.containers[0] if self.containers else (self.frame.key, 0, ""),
        )
        base: tuple[Any, ...] = (owner[0], owner[1], kind, tag) if tag else (owner[0], owner[1], kind)
        n = self.ordinals.get(base, 0)
        self.ordinals[base] = n + 1
        self.ordinals_set.append(base)
        return (*base, n) if n else base

    # --- the sink ------------------------------------------------------------------

    def flush_text(self) -> None:
        s = self.sink
        text = join_text(s.text)
        if text and s.text_key is not None:
            s.out.append((s.text_key, {"type": "text", "text": text}))
        s.text, s.text_key = [], None

    def flush_fields(self) -> None:
        s = self.sink
        if s.fields and s.fields_key is not None:
            s.out.append((s.fields_key, {"type": "fields", "items": s.fields}))
        s.out.extend(s.after_fields)
        s.fields, s.fields_key, s.after_fields = [], None, []

    def flush(self) -> None:
        self.flush_text()
        self.flush_fields()

    def emit(self, key: tuple[Any, ...], block: dict[str, Any]) -> None:
        self.flush()
        self.sink.out.append((key, block))
        collected, self.collected = self.collected, []
        for kind, node, label in collected:
            self.target(kind, node, label or self.quiet_text(node) or name_of(node), key)

    def quiet_text(self, node: Node) -> str:
        """`text_of(node)` without noting the buttons and links in it (they belong to another block)."""
        outer, self.collected = self.collected, []
        try:
            return self.text_of(node)
        finally:
            self.collected = outer

    def target(self, kind: TargetKind, node: Node, label: str, block_key: Any, **facts: Any) -> None:
        """Note what a window action can act on (not inside a modal: that is its own window)."""
        if self.sink is self.page_sink and label and "backendDOMNodeId" in node:
            group = self.groups[-1] if self.groups else ""
            self.targets.append(target_of(kind, node, label, self.frame.key, block_key, group, **facts))

    def add_text(self, text: str) -> None:
        s = self.sink
        if text.strip():
            self.flush_fields()
            if s.text_key is None:
                s.text_key = self.owner_key("text", groups_only=False)
        if s.text_key is not None or text.strip():
            s.text.append(text)

    # --- the walk ------------------------------------------------------------------

    def children(self, node: Node) -> list[Node]:
        by_id = self.frame.by_id
        return [by_id[c] for c in node.get("childIds", ()) if c in by_id]

    def walk(self, node: Node) -> None:
        if hidden(node):
            return
        role = role_of(node)
        backend = node.get("backendDOMNodeId")
        if backend in self.error_targets:
            return  # The message of an invalid field; it becomes that field's notice.
        if node.get("ignored"):
            edge = LINE if self.edge(node) == LINE else ""  # a wrapper left out of the tree may still be a block
            self.add_text(edge)
            for child in self.children(node):
                self.walk(child)
            self.add_text(edge)
            return
        if role == "StaticText":
            self.add_text(str(node.get("name", {}).get("value", "") or ""))
        elif role == "LineBreak":
            self.add_text(LINE)
        elif role == "link":
            outer, self.collected = self.collected, []
            shown, own = self.link_text(node)
            self.add_text(shown)
            self.collected = outer
            self.target("link", node, own or name_of(node), self.sink.text_key)
        elif role == "button":
            if shown := shown_on_button(node):
                self.add_text(f" {shown} ")
                self.target("button", node, shown, self.sink.text_key)
        elif role in _SKIP_ROLES:
            return
        elif role == "LabelText":
            self.walk_fields_only(node)  # The label's text is its field's name already.
        elif role == "heading":
            text = self.text_of(node) or name_of(node)
            if text:
                level = int(prop(node, "level") or 1)
                self.emit(self.key(node), {"type": "text", "text": text, "heading": level})
                if self.sink is self.page_sink and self.frame is self.frames[0]:
                    in_main = any(c[2] in _MAIN_ROLES for c in self.containers)
                    self.headings.append(Heading(text, level, in_main))
        elif role in _FIELD_ROLES:
            self.add_field(node)
        elif role in _NOTICE_ROLES or (role == "alertdialog" and not prop(node, "modal")):
            text = self.text_of(node) or name_of(node)
            if text:
                self.emit(self.key(node), {"type": "notice", "severity": severity(role, text), "text": text})
        elif role in ("image", "img") and name_of(node):
            url = str(prop(node, "url") or "")
            self.emit(
                self.key(node),
                {"type": "media", "mimeType": guess_mime(url), "url": url, "alt": name_of(node)},
            )
        elif role in ("table", "grid", "treegrid"):
            self.emit(self.key(node), self.table(node))
        elif role in ("list", "directory", "feed"):
            found = self.descend(node, {"listitem", "article"})
            items = [t for t in (None if i.get(UNREAD) else self.text_of(i) for i in found) if t != ""]
            if items:
                self.emit(self.key(node), self.run_block({"type": "list"}, "items", items))
        elif role == "navigation" and (
            links := [t for t in (self.text_of(a) or name_of(a) for a in self.descend(node, {"link"})) if t]
        ):
            self.emit(self.key(node), {"type": "list", "items": links})
        elif role in ("dialog", "alertdialog") and prop(node, "modal"):
            self.modal(node)
        elif role == "Iframe":
            self.iframe(node)
        elif role == "DescriptionList" and (pairs := self.term_pairs(node)):
            self.emit(self.key(node), {"type": "fields", "items": pairs})
        elif role in _INLINE_ROLES:
            for child in self.children(node):
                self.walk(child)
        elif role == "generic" and self.containers and self.containers[-1][2] in _TEXT_CONTAINERS:
            # A span runs on with the text around it; a block (a div in a list item) gets its own line.
            self.run_on(node, self.edge(node) or "")
        elif (row := self.button_row(node)) is not None:
            self.emit(self.key(node, "buttons"), {"type": "list", "items": row})
        elif role == "generic" and (on_line := self.edge(node)) is not None and on_line != LINE:
            self.run_on(node, on_line)  # a span beside text, in a div: "Price: <span>$</span>12"
        else:
            self.container(node, role)

    def link_text(self, node: Node) -> tuple[str, str]:
        """A link's text as it sits in a sentence: "Netscape<a>.</a>" gives "." and nothing around it;
        and its own text (`text_of` it: what lies around it only adds white space there).

        The link is one unit (a card's heading and text are its lines); the space its own text
        begins or ends with stays, and so does one around a link laid out as a box or a block.
        An icon link with no text gives its name, as a word of its own, and so does a link whose
        author-given name (`aria-label`) holds all its text and more.
        """
        parts: list[str] = []
        for child in self.children(node):
            if not hidden(child):
                self._collect_text(child, parts)
        text = join_text(parts)
        if not text:
            return f" {name_of(node)} ", text
        name = name_of(node)
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

    def run_on(self, node: Node, edge: str) -> None:
        before, after = self.spaces_around(node)
        self.add_text(before + edge)
        for child in self.children(node):
            self.walk(child)
        self.add_text(edge + after)

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

    def button_row(self, node: Node) -> list[str] | None:
        """The labels of a row of buttons that a person reads (showtimes, doors, pages), if `node` is one."""
        if role_of(node) in _SKIP_ROLES:
            return None
        for child in self.children(node):
            # A child of its own that is neither a button nor nameless text: no row (without
            # flattening all that the node holds, as children_flat does, for every container).
            if hidden(child) or child.get("ignored"):
                continue
            role = role_of(child)
            if role not in _FLATTENED and role != "button" and (role != "StaticText" or name_of(child)):
                return None
        items = [c for c in self.children_flat(node) if not (role_of(c) == "StaticText" and not name_of(c))]
        if len(items) < 2 or any(role_of(c) != "button" for c in items):
            return None
        if not any(READ_ON_BUTTON.search(name_of(c)) for c in items):
            return None
        labels = [shown_on_button(c) for c in items if name_of(c)]
        self.collected.extend(("button", c, shown_on_button(c)) for c in items if name_of(c))
        return labels

    def container(self, node: Node, role: str) -> None:
        if role in ("dialog", "alertdialog") and self.sink is self.page_sink:
            # A non-modal dialog (a modal one is its own window): what it says is over the page.
            self.flush()
            start = len(self.sink.out)
            self.walk_container(node, role)
            self.flush()
            over = [key for key, _ in self.sink.out[start:]]
            self.over_page.update(over)
            self.over_page_added.extend(over)
            return
        self.walk_container(node, role)

    def walk_container(self, node: Node, role: str) -> None:
        self.flush_text()
        memo = self.memo
        if memo is None or role not in _GROUP_ROLES:
            self.walk_inside(node, role)
            return
        # A section, card or form: what it gives depends on its nodes and on the walk's state on
        # entering it; a fields run from before (it would continue inside) keeps it from the memo.
        s = self.sink
        state = (
            s is self.page_sink,
            self.frame is self.frames[0],
            self.groups[-1] if self.groups else "",
            any(c[2] in _MAIN_ROLES for c in self.containers),
        )
        clean = not s.fields and not s.after_fields and not self.collected
        key = (self.frame.key, str(node["nodeId"]))
        changed = self.changed_in_frame(memo)
        if clean and changed is not None and key[1] not in changed:
            entry = memo.entries.get(key)
            if entry is not None and entry.state == state:
                self.replay(memo, key, entry)
                return
        marks = (len(s.out), len(self.targets), len(self.headings), len(self.modals))
        more = (len(self.ordinals_set), len(self.over_page_added), len(self.used), self.impure)
        self.walk_inside(node, role)
        if clean and self.impure == more[3] and not self.collected and not s.fields and not s.after_fields:
            ordinals = {base: self.ordinals[base] for base in self.ordinals_set[more[0] :]}
            memo.entries[key] = Entry(
                state,
                s.out[marks[0] :],
                self.targets[marks[1] :],
                self.headings[marks[2] :],
                [RawModal(m.key, m.title, list(m.blocks), m.backend_ids) for m in self.modals[marks[3] :]],
                self.over_page_added[more[1] :],
                list(ordinals.items()),
                self.used[more[2] :],
            )
            self.used.append(key)

    def changed_in_frame(self, memo: WalkMemo) -> set[str] | None:
        """The ids of the current frame's nodes `memo` cannot stand for (None: any)."""
        frame = self.frame
        if frame.key not in self.changed:
            self.changed[frame.key] = memo.changed(frame.key, self.facts(frame))
        return self.changed[frame.key]

    def facts(self, frame: _Frame) -> FrameFacts:
        """What the walk reads of `frame` besides its nodes' own fields (made once a walk)."""
        if (made := self.frame_facts.get(frame.key)) is not None:
            return made
        required, flagged = frame.required_ids, frame.flagged_ids
        made = self.frame_facts[frame.key] = FrameFacts(
            frame.by_id,
            frozenset(self.secret_ids | frame.secret_ids),
            frozenset(required) if required is not None else None,
            frozenset(flagged) if flagged is not None else None,
            frame.display,
            frame.gaps,
            frozenset(self.error_targets),
        )
        return made

    def replay(self, memo: WalkMemo, key: tuple[str, str], entry: Entry) -> None:
        """What walking the container of `entry` gives, as the last walk found it."""
        s = self.sink
        s.out.extend(entry.out)
        self.targets.extend(entry.targets)
        self.headings.extend(entry.headings)
        self.modals.extend(RawModal(m.key, m.title, list(m.blocks), m.backend_ids) for m in entry.modals)
        self.over_page.update(entry.over_page)
        self.over_page_added.extend(entry.over_page)
        for base, count in entry.ordinals:
            self.ordinals[base] = count
            self.ordinals_set.append(base)
        self.used.extend(entry.inner)
        self.used.append(key)
        memo.replayed += 1

    def walk_inside(self, node: Node, role: str) -> None:
        self.containers.append((self.frame.key, node.get("backendDOMNodeId", 0), role))
        grouping = role in ("radiogroup", "group")
        if grouping:
            self.groups.append(name_of(node))
        for child in self.children(node):
            self.walk(child)
        if grouping:
            self.groups.pop()
        self.flush_text()
        if role in _GROUP_ROLES:
            self.flush_fields()
        self.containers.pop()

    def walk_fields_only(self, node: Node) -> None:
        for child in self.children(node):
            if not hidden(child):
                if role_of(child) in _FIELD_ROLES:
                    self.add_field(child)
                else:
                    self.walk_fields_only(child)

    def add_field(self, node: Node) -> None:
        self.flush_text()
        s = self.sink
        item = self.field_item(node)
        if not s.fields:
            # Keyed by its first field's label too: a run keeps its id when runs before it come and go.
            s.fields_key = self.owner_key("fields", groups_only=True, tag=str(item["label"]))
        s.fields.append(item)
        found = self.descend(node, {"option"}) if role_of(node) in _CHOICES else []
        self.target(
            "field",
            node,
            str(item["label"]),
            s.fields_key,
            sensitive=bool(item.get("sensitive")),
            options=tuple(name_of(o) for o in found),
            disabled_options=tuple(name_of(o) for o in found if prop(o, "disabled")),
        )
        if item.get("invalid"):
            messages = [self.text_by_backend(b) for b in related(node, "errormessage")]
            message = " ".join(m for m in messages if m) or str(node.get("description", {}).get("value", "") or "")
            text = f"{item['label']}: {message}" if message else f"{item['label']} is not valid."
            s.after_fields.append((self.key(node, "invalid"), {"type": "notice", "severity": "error", "text": text}))

    def field_item(self, node: Node) -> dict[str, Any]:
        role = role_of(node)
        value: Any
        if role in _CHECKABLE:
            checked = str(prop(node, "checked"))
            value = "mixed" if checked == "mixed" else checked == "true"
        elif role == "listbox":
            value = [name_of(o) for o in self.descend(node, {"option"}) if prop(o, "selected")]
        elif role in _COMPOSITE_FIELDS:
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
        item: dict[str, Any] = {
            "label": name_of(node) or str(prop(node, "placeholder") or "") or role,
            "value": value,
        }
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
        return item

    def table(self, node: Node) -> dict[str, Any]:
        columns: list[str] = []
        rows: list[list[str] | None] = []
        for row in self.descend(node, {"row"}):
            if row.get(UNREAD):
                rows.append(None)
                continue
            cells = [
                c for c in self.children_flat(row) if role_of(c) in ("cell", "gridcell", "columnheader", "rowheader")
            ]
            # The text as shown: Chromium's name of "https:<wbr>//www" is "https: //www".
            texts = [self.text_of(c) or name_of(c) for c in cells]
            if cells and not columns and not rows and all(role_of(c) == "columnheader" for c in cells):
                columns = texts
            elif cells:
                rows.append(texts)
        return self.run_block({"type": "table", "columns": columns}, "rows", rows)

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

    def modal(self, node: Node) -> None:
        self.flush()
        outer, self.sink = self.sink, _Sink()
        self.container(node, "dialog")
        self.flush()
        blocks, self.sink = self.sink.out, outer
        title = name_of(node) or next((b["text"] for _, b in blocks if "heading" in b), "")
        self.modals.append(RawModal(self.key(node), title, blocks, frozenset(self.backend_ids(node))))

    def iframe(self, node: Node) -> None:
        self.impure += 1  # what it shows is another frame's
        index = self.by_owner.get(node.get("backendDOMNodeId", -1))
        if index is None or index in self.placed:
            return
        self.placed.add(index)
        if (host := self.frames[index].failed_host()) is not None:
            self.frame_failed(host)
        else:
            self.walk_frame(index)

    def frame_failed(self, host: str) -> None:
        """A shown frame that failed to load: one notice for all of them, where the first sits."""
        self.impure += 1
        if host not in self.failed_hosts:
            self.failed_hosts.append(host)
        self.failed_count += 1
        if self.failed_notice is None:
            self.failed_notice = ((self.frames[0].key, 0, "failed-frames"), {"type": "notice", "severity": "warn"})
            self.emit(*self.failed_notice)
        named = ", ".join(self.failed_hosts[:_FAILED_HOSTS_SHOWN])
        if len(self.failed_hosts) > _FAILED_HOSTS_SHOWN:
            named += f" and {len(self.failed_hosts) - _FAILED_HOSTS_SHOWN} more"
        what = "A frame of this page" if self.failed_count == 1 else f"{self.failed_count} frames of this page"
        self.failed_notice[1]["text"] = f"{what} did not load ({named}); the browser shows an error page there."

    def walk_frame(self, index: int) -> None:
        outer, self.frame = self.frame, self.frames[index]
        if self.frame.root is not None:
            self.container(self.frame.root, "RootWebArea")
        self.frame = outer

    # --- helpers -------------------------------------------------------------------

    def children_flat(self, node: Node) -> list[Node]:
        """Children, looking through ignored wrappers and row groups."""
        out: list[Node] = []
        for child in self.children(node):
            if hidden(child):
                continue
            if child.get("ignored") or role_of(child) in _FLATTENED:
                out.extend(self.children_flat(child))
            else:
                out.append(child)
        return out

    def descend(self, node: Node, roles: set[str]) -> list[Node]:
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
            parts.append(str(node.get("name", {}).get("value", "") or ""))
            return
        if role == "LineBreak":
            parts.append(LINE)
            return
        if role == "button":
            parts.append(f" {shown_on_button(node)} ")
            self.collected.append(("button", node, shown_on_button(node)))
            return
        if role in ("InlineTextBox", "ListMarker") or node.get("backendDOMNodeId") in self.error_targets:
            return
        if role in _FIELD_ROLES:
            parts.append(f" {name_of(node)} ")  # Never a field's value: it may be a secret.
            return
        # Separate elements stay separate: a heading and the paragraph after it are two lines.
        before = after = ""
        if role == "link":
            self.collected.append(("link", node, ""))
        if role in ("generic", "none", "link"):
            edge = self.edge(node) or ""  # a span, a div or a link as the layout has it (<h1><span>…</span><span>…)
            before, after = self.spaces_around(node)
        else:
            edge = "" if node.get("ignored") or role in _INLINE_ROLES else LINE
        parts.append(before + edge)
        for child in self.children(node):
            if not hidden(child):
                self._collect_text(child, parts)
        parts.append(edge + after)

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


def walk_frames(
    frames: Sequence[FrameNodes], secret_ids: set[int], *, gaps: bool = False, memo: WalkMemo | None = None
) -> Walk:
    """Keyed blocks of the page (main frame, its frames in place), of each open modal, and its headings.

    A table or list whose rows or items were not all read (`cdp_bridge.ax.UNREAD`) holds the
    read ones up to the first unread, and a `total`; with `gaps`, all of them, None where unread.
    A frame that failed to load and whose `<iframe>` is not known to be shown gives nothing.
    With `memo` (the last walk's, of the same document), a container that is as it was is not
    walked again: the walk gives the same (walk_memo.py), and `memo` is then this walk's.
    """
    walker = _Walker(frames, secret_ids, gaps, memo if not gaps else None)
    if walker.frames:
        walker.walk_frame(0)
        for index in range(1, len(walker.frames)):
            if index not in walker.placed and walker.frames[index].failed_host() is None:
                walker.placed.add(index)
                walker.walk_frame(index)
    walker.flush()
    if walker.memo is not None:
        walker.memo.keep({f.key: walker.facts(f) for f in walker.frames}, walker.used)
    failed = walker.failed_notice[0] if walker.failed_notice is not None else None
    return Walk(walker.sink.out, walker.modals, walker.headings, failed, walker.targets, walker.over_page)
