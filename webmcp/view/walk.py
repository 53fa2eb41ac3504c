"""The walk of one tab's AX trees that yields keyed raw blocks, in reading order. Pure.

What each node gives is decided here (`_Walker.walk`); the blocks' keys, the sink and the
memo are walk_state.py's, the text of a node walk_text.py's, a field's item, a table, a
description list or a button row walk_blocks.py's.

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

import re
from collections.abc import Sequence
from dataclasses import replace

from cdp_bridge.ax import UNREAD, FrameNodes
from webmcp.models import fields_block, list_block, notice_block, text_block

from .nodes import (
    GUESSED,
    LINE,
    Node,
    guess_mime,
    hidden,
    join_text,
    name_of,
    prop,
    raw_text,
    related,
    role_of,
    severity,
    shown_on_button,
    states_of,
    with_states,
)
from .targets import folded
from .walk_memo import Entry, WalkMemo
from .walk_roles import (
    CHECKABLE,
    CHOICES,
    CONTROL_ROLES,
    FIELD_ROLES,
    GROUP_ROLES,
    IN_CONTROL,
    INLINE_ROLES,
    MAIN_ROLES,
    NAV_WHOLE,
    NOTICE_ROLES,
    PICTURE_ROLES,
    SKIP_ROLES,
    TEXT_CONTAINERS,
    TEXT_RUN_TARGETS,
)
from .walk_state import Heading, Keyed, RawModal, Sink, Walk, WalkState, labelish

_BLOCK_LABEL_WORDS = 5
"""At most this many words in a block of its own before a nameless field name it ("Date of birth");
a longer line is a paragraph ("Eget elementum accumsan, augue at ipsum": MiniWoB's find-word)."""
_INNER_STOP = re.compile(r"[.!?;]\s")

_FAILED_HOSTS_SHOWN = 3

__all__ = ["Heading", "Keyed", "Node", "RawModal", "Walk", "walk_frames"]


FOLLOW_LOOK = 40
"""Nodes `field_follows` reads after a label, at most, to find what comes next."""


class _Walker(WalkState):
    """One walk: what each node gives, in reading order."""

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
            text = raw_text(node)
            if self.box_awaits is not None and text.strip() and self.label_after(node, text):
                return
            self.add_text(text)
            if text.strip() and (parent := self.frame.by_id.get(str(node.get("parentId", "")))) is not None:
                self.target("text", parent, " ".join(text.split()), self.sink.text_key)
        elif role == "LineBreak":
            self.add_text(LINE)
        elif role == "link":
            outer, self.collected = self.collected, []
            shown, own = self.link_text(node)
            self.add_text(shown)
            self.collected = outer
            # A link with no text of its own is pressed by the name it shows ("reply (guessed)").
            self.target("link", node, own or " ".join(shown.split()), self.sink.text_key)
        elif role == "button":
            if shown := shown_on_button(node):
                self.add_text(f" {shown} ")
                self.target("button", node, shown, self.sink.text_key)
        elif role in CONTROL_ROLES or (
            role == "generic"
            and node.get("name")
            and name_of(node)
            and (prop(node, "focusable") or prop(node, GUESSED))
        ):
            self.control(node)
        elif role in SKIP_ROLES:
            return
        elif role == "LabelText":
            # The label's text is its field's name already; a label tied to no field (no `for=`) may
            # name the field right after it.
            if self.walk_fields_only(node) or self.label_buttons(node):
                pass
            elif (words := labelish(self.quiet_text(node))) and self.field_follows(node):
                self.pending_label = words
            else:
                # A label whose control is not shown (a check box hidden for one CSS draws, a CSS
                # tab's radio button, a star of a rating): its words are what a person clicks, each
                # label apart from the next ("Overview Details").
                self.run_on(node, self.edge(node) or " ")
        elif role == "heading":
            text = self.text_of(node) or name_of(node)
            if text:
                level = int(prop(node, "level") or 1)
                self.emit(self.key(node), text_block(None, text, heading=level))
                self.target("text", node, " ".join(text.split()), self.key(node))
                if self.sink is self.page_sink and self.frame is self.frames[0]:
                    in_main = any(c[2] in MAIN_ROLES for c in self.containers)
                    self.headings.append(Heading(text, level, in_main))
        elif role in FIELD_ROLES:
            self.add_field(node)
        elif role in NOTICE_ROLES or (role == "alertdialog" and not prop(node, "modal")):
            text = self.text_of(node) or name_of(node)
            if text:
                self.emit(self.key(node), notice_block(None, severity(role, text), text))
        elif role in PICTURE_ROLES and prop(node, GUESSED) and not node.get("childIds"):
            self.control(node)  # an icon (a CSS `content:` picture, an <img> with no alt): pressed by its guess
        elif role in PICTURE_ROLES and name_of(node):
            url = str(prop(node, "url") or "")
            self.emit(
                self.key(node),
                {"type": "media", "mimeType": guess_mime(url), "url": url, "alt": name_of(node)},
            )
        elif role in ("table", "grid", "treegrid"):
            marks, self.met_field = len(self.collected), False
            table = self.table(node)
            if self.met_field and not table["columns"]:
                del self.collected[marks:]  # a form laid out in a table: its fields are fields
                self.container(node, role)
            else:
                self.emit(self.key(node), table)
        elif role in ("list", "directory", "feed"):
            items: list[str | None] = []
            room = TEXT_RUN_TARGETS
            for item in self.descend(node, {"listitem", "article"}):
                said, by_box = (None, False) if item.get(UNREAD) else self.item_text(item)
                if said != "":
                    items.append(said)
                    if said and not by_box and room > 0:
                        room -= self.item_targets(item, said, room)
            if items:
                self.emit(self.key(node), self.run_block({"type": "list"}, "items", items))
        elif role == "navigation" and (links := self.nav_items(node)):
            self.emit(self.key(node), list_block(None, links))
        elif role in ("dialog", "alertdialog") and prop(node, "modal"):
            self.modal(node)
        elif role == "Iframe":
            self.iframe(node)
        elif role == "DescriptionList" and (pairs := self.term_pairs(node)):
            self.emit(self.key(node), fields_block(None, pairs))
        elif role in INLINE_ROLES:
            for child in self.children(node):
                self.walk(child)
        elif role == "generic" and self.containers and self.containers[-1][2] in TEXT_CONTAINERS:
            # A span runs on with the text around it; a block (a div in a list item) gets its own line.
            self.run_on(node, self.edge(node) or "")
        elif (row := self.button_row(node)) is not None:
            self.emit(self.key(node, "buttons"), list_block(None, row))
        elif role == "generic" and (on_line := self.edge(node)) is not None and on_line != LINE:
            self.run_on(node, on_line)  # a span beside text, in a div: "Price: <span>$</span>12"
        else:
            self.container(node, role)

    def nav_items(self, node: Node) -> list[str]:
        """The words of a navigation bar's links and buttons (a "Menu" toggle, "Sign in"), for a `list`;
        none when it holds a field, another control (a search box, a menu bar), a list or a table (the
        links a menu button shows): it is then walked as any container is, so that everything a
        person uses in it is shown and named."""
        if self.descend(node, NAV_WHOLE):
            return []
        return [t for t in (self.text_of(a) or name_of(a) for a in self.descend(node, {"link", "button"})) if t]

    def run_on(self, node: Node, edge: str) -> None:
        before, after = self.spaces_around(node)
        self.add_text(before + edge)
        for child in self.children(node):
            self.walk(child)
        self.add_text(edge + after)

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
        if memo is None or role not in GROUP_ROLES:
            self.walk_inside(node, role)
            return
        # A section, card or form: what it gives depends on its nodes and on the walk's state on
        # entering it; a fields run from before (it would continue inside) keeps it from the memo.
        s = self.sink
        state = (
            s is self.page_sink,
            self.frame is self.frames[0],
            self.groups[-1] if self.groups else "",
            any(c[2] in MAIN_ROLES for c in self.containers),
        )
        clean = not s.fields and not s.after_fields and not self.collected and not self.pending_label
        key = (self.frame.key, str(node["nodeId"]))
        changed = self.changed_in_frame(memo)
        if clean and changed is not None and key[1] not in changed:
            entry = memo.entries.get(key)
            if entry is not None and entry.state == state:
                self.replay(memo, key, entry)
                return
        marks = (len(s.out), len(self.targets), len(self.headings), len(self.modals))
        more = (len(self.ordinals_set), len(self.over_page_added), len(self.used), self.impure)
        self.out_marks.append((s, marks[0], marks[1]))
        self.walk_inside(node, role)
        self.out_marks.pop()
        if (
            clean
            and self.impure == more[3]
            and not self.collected
            and not s.fields
            and not s.after_fields
            and not self.pending_label
        ):
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
        if role in GROUP_ROLES:
            self.flush_fields()
        self.containers.pop()

    def label_buttons(self, node: Node) -> bool:
        """The buttons inside a label, shown and pressable; whether there were any.

        Chromium makes `<label>Résumé <input type=file></label>` a button the label names (its
        "Choose File" is not in the tree): left out with the label, a page's upload was out of an
        agent's reach. The label's words are the button's name: said once, as the button, unless
        it says more than its buttons' names (then it is walked as any container).
        """
        buttons = [b for b in self.descend(node, {"button"}) if not hidden(b) and name_of(b)]
        if not buttons:
            return False
        said = set(folded(" ".join(name_of(b) for b in buttons)).split())
        if set(folded(self.quiet_text(node)).split()) <= said:
            for button in buttons:
                self.walk(button)
        else:
            for child in self.children(node):
                self.walk(child)
        return True

    def field_follows(self, label: Node) -> bool:
        """Whether the first thing shown after `label` (a `<label>` tied to no shown field) is a
        field: the label names it ("Username" before its box, in its row or the next cell)."""
        by_id = self.frame.by_id
        node, looked = label, 0
        while looked < FOLLOW_LOOK:
            parent = by_id.get(str(node.get("parentId", "")))
            if parent is None:
                return False
            if node is not label and role_of(node) in GROUP_ROLES:
                self.impure += 1  # beyond a section or form the memo may keep: not its own to read
            ids = [str(c) for c in parent.get("childIds", ())]
            at = ids.index(str(node["nodeId"])) if str(node["nodeId"]) in ids else len(ids)
            for sibling_id in ids[at + 1 :]:
                sibling = by_id.get(sibling_id)
                if sibling is None or hidden(sibling):
                    continue
                first, looked = self.first_shown(sibling, looked)
                if first is not None:
                    return role_of(first) in FIELD_ROLES
            node = parent
        return False

    def first_shown(self, node: Node, looked: int) -> tuple[Node | None, int]:
        """The first field, control or text with words in `node` (itself included), in the page's order."""
        by_id = self.frame.by_id
        stack = [node]
        while stack and looked < FOLLOW_LOOK:
            current = stack.pop()
            looked += 1
            role = role_of(current)
            if role in FIELD_ROLES or role in ("button", "link") or (role == "StaticText" and name_of(current)):
                return current, looked
            inside = (by_id.get(str(i)) for i in reversed(current.get("childIds", ())))
            stack.extend(c for c in inside if c is not None and not hidden(c))
        return None, looked

    def walk_fields_only(self, node: Node) -> bool:
        """Walk the fields inside a label; whether there were any."""
        found = False
        for child in self.children(node):
            if not hidden(child):
                if role_of(child) in FIELD_ROLES:
                    self.add_field(child)
                    found = True
                else:
                    found = self.walk_fields_only(child) or found
        return found

    def control(self, node: Node) -> None:
        """A tab, tree item, menu item, option or named focusable element: its own words and state,
        inline as a button is; what it holds besides (a tree item's group, a submenu) after it."""
        parts: list[str] = []
        inside: list[Node] = []
        outer, self.collected = self.collected, []
        for child in self.children(node):
            if hidden(child):
                continue
            if role_of(child) in IN_CONTROL:
                inside.append(child)
            else:
                self._collect_text(child, parts)
        self.collected = outer
        label = " ".join(join_text(parts).split()) or name_of(node)
        if label:
            states = states_of(node)
            shown = with_states(label, states)
            edge = self.edge(node)
            edge = " " if edge is None else edge or " "
            self.add_text(f"{edge}{shown}{edge}")
            self.target("control", node, shown, self.sink.text_key, states=states)
        for child in inside:
            self.walk(child)

    def label_before(self, node: Node) -> str:
        """For a field with no name of its own (or only its placeholder), the text a person reads
        right before it: a `<label>` without `for=`, or one short line of text in its row or group.
        That text is the field's label, and no text block of its own."""
        name, pending, self.pending_label = name_of(node), self.pending_label, ""
        checkable = role_of(node) in CHECKABLE
        if name and (checkable or name != str(prop(node, "placeholder") or "")):
            return ""
        if pending:
            return pending
        if not checkable and not name and self.caption_of(node, run=True):
            return ""  # its caption names it (`add_field`): the words before it are another box's
        s = self.sink
        if s.text:
            if self.shows_controls(s.text_key):
                return ""  # a button's words beside a field name the button, not the field
            found = labelish(join_text(s.text))
            if found and s.text_key is not None:
                self.drop_text_targets(s.text_key)
                s.text, s.text_key = [], None
            return found
        if (
            s.out
            and not checkable
            and not s.fields
            and s.out[-1] is self.last_text
            and "heading" not in s.out[-1][1]
            and not self.shows_controls(s.out[-1][0])
        ):
            found = labelish(str(s.out[-1][1]["text"]))
            if found and (len(found.split()) > _BLOCK_LABEL_WORDS or "," in found or _INNER_STOP.search(found)):
                found = ""  # a block of words reads as a label only when short: else a paragraph (find-word's)
            if found:
                if self.out_marks and not (self.out_marks[-1][0] is s and len(s.out) - 1 >= self.out_marks[-1][1]):
                    self.impure += 1  # the block came before the container being walked: not its to drop
                self.drop_text_targets(s.out.pop()[0])
            return found
        return ""

    def shows_controls(self, key: object) -> bool:
        """Whether the text keyed `key` holds a button, link or control (whose words are its own)."""
        return key is not None and any(
            t.block_key == key and t.kind in ("button", "link", "control") for t in reversed(self.targets[-50:])
        )

    def drop_text_targets(self, key: tuple[object, ...]) -> None:
        floor = self.out_marks[-1][2] if self.out_marks else 0
        while len(self.targets) > floor and self.targets[-1].kind == "text" and self.targets[-1].block_key == key:
            self.targets.pop()

    def caption_of(self, node: Node, run: bool = False) -> bool:
        """Whether field `node` has a caption: it is the first of the two things alone in its
        container, the other a short line of words after it that holds no control
        (`<div><input><div>Genre</div></div>`). With `run`, also whether a container beside its
        own holds a box and caption so (MiniWoB's multi-layouts: each box with its caption under
        it): the words before it are then another box's caption, not its label."""
        parent = self.frame.by_id.get(str(node.get("parentId", "")))
        if parent is None or self.captioned(parent) is not node:
            return False
        if not run:
            return True
        if role_of(parent) in GROUP_ROLES:
            self.impure += 1  # the containers beside it lie beyond a section or form the memo may keep
        outer = self.frame.by_id.get(str(parent.get("parentId", "")))
        return outer is not None and any(
            c is not parent and self.captioned(c) is not None for c in self.children(outer)
        )

    def captioned(self, container: Node) -> Node | None:
        """The field of `container` when it holds a field and its caption alone (`caption_of`), else None."""
        inside = [c for c in self.children_flat(container) if role_of(c) != "StaticText" or raw_text(c).strip()]
        if len(inside) != 2 or role_of(inside[0]) not in FIELD_ROLES or role_of(inside[0]) in CHECKABLE:
            return None
        caption = inside[1]
        if role_of(caption) in FIELD_ROLES | CONTROL_ROLES or self.edge(caption) in ("", " "):
            return None  # a control, or words on the box's own line (a unit: "kg")
        if role_of(caption) != "StaticText" and self.descend(caption, FIELD_ROLES | CONTROL_ROLES | {"button", "link"}):
            return None
        words = raw_text(caption) if role_of(caption) == "StaticText" else self.quiet_text(caption)
        return inside[0] if labelish(words) else None

    def label_after(self, node: Node, text: str) -> bool:
        """Whether `text` (of StaticText `node`) names the check box just added: one short line right
        after it in its row (`<input type=checkbox><span>Remember me</span>`), which then is no text."""
        assert self.box_awaits is not None
        (item, at, parent_id), self.box_awaits = self.box_awaits, None
        by_id = self.frame.by_id
        holder = by_id.get(str(node.get("parentId", "")))
        around = {str(node.get("parentId", "")), str((holder or {}).get("parentId", ""))}
        words = labelish(text)
        fields = self.sink.fields
        if not words or parent_id not in around or at >= len(self.targets) or not fields or fields[-1] is not item:
            return False
        item["label"] = words
        self.targets[at] = replace(self.targets[at], label=words)
        return True

    def add_field(self, node: Node) -> None:
        before = self.label_before(node)
        self.flush_text()
        s = self.sink
        item = self.field_item(node, before)
        if not s.fields:
            # Keyed by its first field's label too: a run keeps its id when runs before it come and go.
            s.fields_key = self.owner_key("fields", groups_only=True, tag=str(item["label"]))
        s.fields.append(item)
        role = role_of(node)
        found = self.descend(node, {"option"}) if role in CHOICES else []
        value = item["value"]
        targeted = len(self.targets)
        self.target(
            "field",
            node,
            str(item["label"]),
            s.fields_key,
            sensitive=bool(item.get("sensitive")),
            options=tuple(name_of(o) for o in found),
            disabled_options=tuple(name_of(o) for o in found if prop(o, "disabled")),
            multiselect=role == "listbox" and bool(prop(node, "multiselectable")),
            selected=tuple(value) if isinstance(value, list) else (value,) if found and value else (),
        )
        if (
            not before
            and len(self.targets) > targeted
            and ((role in CHECKABLE and item["label"] == role) or (not name_of(node) and self.caption_of(node)))
        ):
            # Nothing named it: the words right after it in its row may ("☐ Remember me"), or the
            # caption under a box alone with it in its container.
            self.box_awaits = (item, targeted, str(node.get("parentId", "")))
        if role == "listbox":
            # Its options are pressed as a person clicks them (an ARIA listbox's own handlers).
            for option in found:
                if name := name_of(option):
                    self.target("control", option, name, s.fields_key, states=states_of(option))
        if item.get("invalid"):
            messages = [self.text_by_backend(b) for b in related(node, "errormessage")]
            message = " ".join(m for m in messages if m) or str(node.get("description", {}).get("value", "") or "")
            text = f"{item['label']}: {message}" if message else f"{item['label']} is not valid."
            s.after_fields.append((self.key(node, "invalid"), notice_block(None, "error", text)))

    def modal(self, node: Node) -> None:
        self.flush()
        outer, self.sink = self.sink, Sink()
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
            # Its text is set below, as more frames fail.
            self.failed_notice = ((self.frames[0].key, 0, "failed-frames"), notice_block(None, "warn", ""))
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
