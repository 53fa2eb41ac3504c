"""What a walk holds while it goes: its frames, the block being made, keys, targets, the memo. Pure.

Each block is paired with the key of the element that *owns* it (heading, table, list,
the form or group holding a run of fields, the paragraph or container holding a run of
text), so re-rendering the text inside an element does not change its key. A key is
`(frame key, backendDOMNodeId, kind, ordinal)`; the ordinal tells apart several runs of
text in one container. `build.build_view` turns keys into block ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cdp_bridge.ax import FrameNodes
from webmcp.models import fields_block, text_block

from .nodes import LINE, Node, join_text, name_of, states_of
from .targets import ActionTarget, TargetKind, target_of
from .walk_blocks import BlockReader
from .walk_memo import Entry, FrameFacts, WalkMemo
from .walk_roles import GROUP_ROLES
from .walk_text import FrameRead, WalkFrame, frame_nodes

__all__ = ["Heading", "Keyed", "RawModal", "Walk", "WalkState", "labelish"]

Keyed = tuple[tuple[Any, ...], dict[str, Any]]

_LABEL_CHARS = 40


def labelish(text: str) -> str:
    """`text` as a field's label when it reads as one ("Username", "Phone:"): one short line that is
    no sentence (its colon dropped); else ""."""
    text = " ".join(text.split())
    if not text or LINE in text or len(text) > _LABEL_CHARS or text[-1] in ".!?" or not any(c.isalpha() for c in text):
        return ""
    return text.removesuffix(":").rstrip()


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
class Sink:
    """Where the blocks go (the page's, or a modal's), and the text and fields run being made."""

    out: list[Keyed] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    text_key: tuple[Any, ...] | None = None
    fields: list[dict[str, Any]] = field(default_factory=list)
    fields_key: tuple[Any, ...] | None = None
    after_fields: list[Keyed] = field(default_factory=list)


class WalkState(BlockReader):
    """The state of one walk and what it does with it: keys, the sink, targets, the memo's entries."""

    def __init__(
        self, frames: Sequence[FrameNodes], secret_ids: set[int], gaps: bool = False, memo: WalkMemo | None = None
    ) -> None:
        # What is read of each frame's nodes is kept in the memo: a frame an incremental read left
        # as it was is read again from there, one it spliced only where the splice changed it.
        before = memo.reads if memo is not None else {}
        now: dict[str, FrameRead] = {}
        self.frames = []
        error_targets: set[int] = set()
        for f in frames:
            read = now[f.key] = frame_nodes(f.nodes, before.get(f.key), f.spliced)
            by_id = read.by_id
            error_targets.update(read.error_ids)
            root = next((n for n in f.nodes if not n.get("parentId")), None)
            self.frames.append(
                WalkFrame(
                    f.key,
                    by_id,
                    root,
                    f.secret_ids,
                    f.required_ids,
                    f.flagged_ids,
                    f.display,
                    f.gaps,
                    f.unreachable_url,
                )
            )
        self.reads = now
        if memo is not None:
            memo.reads = now
        super().__init__(self.frames[0] if self.frames else WalkFrame("", {}, None), error_targets, secret_ids, gaps)
        self.by_owner = {f.owner_backend_id: i for i, f in enumerate(frames) if f.owner_backend_id is not None}
        self.placed: set[int] = set()
        self.sink = Sink()
        self.page_sink = self.sink
        self.modals: list[RawModal] = []
        self.headings: list[Heading] = []
        self.failed_hosts: list[str] = []
        self.failed_count = 0
        self.failed_notice: Keyed | None = None
        self.containers: list[tuple[str, int, str]] = []
        self.ordinals: dict[tuple[Any, ...], int] = {}
        self.targets: list[ActionTarget] = []
        self.groups: list[str] = []
        """Names of the radio groups and fieldsets the walk is in."""
        self.over_page: set[tuple[Any, ...]] = set()
        self.memo = memo
        self.frame_facts: dict[str, FrameFacts] = {}
        self.changed: dict[str, set[str] | None] = {}
        """Frame key → the ids of nodes whose containers the memo cannot give (None: all)."""
        self.used: list[tuple[str, str]] = []
        """The memo's entries made or used by this walk."""
        self.ordinals_set: list[tuple[Any, ...]] = []
        """Every owner an ordinal was taken for, in order (what a container's entry keeps)."""
        self.over_page_added: list[tuple[Any, ...]] = []
        self.pending_label = ""
        """The text of a `<label>` tied to no field, until the next field (with no name) takes it."""
        self.box_awaits: tuple[dict[str, Any], int, str] | None = None
        """A check box with nothing to name it, just added: its item, its target's index and its
        parent's id, until the words right after it in its row name it (`label_after`)."""
        self.out_marks: list[tuple[Sink, int, int]] = []
        """Of each container the memo may keep, being walked: its sink, and how many blocks and targets
        there were when the walk entered it."""
        self.last_text: Keyed | None = None
        """The last text block the walk gave (a field after it with no name may take it as its label)."""

    # --- keys ----------------------------------------------------------------------

    def key(self, node: Node, kind: str = "") -> tuple[Any, ...]:
        return (self.frame.key, node.get("backendDOMNodeId", node["nodeId"]), kind)

    def owner_key(self, kind: str, groups_only: bool, tag: str = "") -> tuple[Any, ...]:
        owner = next(
            (c for c in reversed(self.containers) if not groups_only or c[2] in GROUP_ROLES),
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
            s.out.append((s.text_key, text_block(None, text)))
            self.last_text = s.out[-1]
        s.text, s.text_key = [], None

    def flush_fields(self) -> None:
        self.box_awaits = None
        s = self.sink
        if s.fields and s.fields_key is not None:
            s.out.append((s.fields_key, fields_block(None, s.fields)))
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

    def target(self, kind: TargetKind, node: Node, label: str, block_key: Any, **facts: Any) -> None:
        """Note what a window action can act on (not inside a modal: that is its own window)."""
        if self.sink is self.page_sink and label and "backendDOMNodeId" in node:
            group = self.groups[-1] if self.groups else ""
            if kind in ("button", "link") and "states" not in facts:
                facts["states"] = states_of(node)
            self.targets.append(target_of(kind, node, label, self.frame.key, block_key, group, **facts))

    def add_text(self, text: str) -> None:
        s = self.sink
        if text.strip():
            self.pending_label = ""
            self.flush_fields()
            if s.text_key is None:
                s.text_key = self.owner_key("text", groups_only=False)
        if s.text_key is not None or text.strip():
            s.text.append(text)

    # --- the memo ------------------------------------------------------------------

    def changed_in_frame(self, memo: WalkMemo) -> set[str] | None:
        """The ids of the current frame's nodes `memo` cannot stand for (None: any)."""
        frame = self.frame
        if frame.key not in self.changed:
            self.changed[frame.key] = memo.changed(frame.key, self.facts(frame))
        return self.changed[frame.key]

    def facts(self, frame: WalkFrame) -> FrameFacts:
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
            came_from=read.came_from if (read := self.reads.get(frame.key)) is not None else None,
        )
        return made

    def replay(self, memo: WalkMemo, key: tuple[str, str], entry: Entry) -> None:
        """What walking the container of `entry` gives, as the last walk found it."""
        s = self.sink
        s.out.extend(entry.out)
        if entry.out and entry.out[-1][1]["type"] == "text":
            self.last_text = entry.out[-1]  # as walking it would leave it (a field after may take it)
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
