"""What one walk of a tab's AX trees gave, kept for the next walk of the same document. Pure.

An incremental read (desktop/live_view.py) changes a few subtrees and keeps the rest of the
last read's nodes as they were, the very same objects. A section, card or form whose nodes are
all as they were, whose layout, secret, required and invalid facts are as they were, and that
the walk enters in the same state (walk.py `_Walker.walk_container`) gives the very same blocks,
targets and headings: the walk takes them from here instead of walking it again. A node counts
as changed when it is not the object it was (or is gone), or a fact read by its backend id
differs; a container holding a changed node, through any node that lists another as its child,
is walked again. Nothing here reads a page: the memo is an input of `build_view` like its
frames, and the view is the one a walk without it gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .targets import ActionTarget
    from .walk_state import Heading, Keyed, RawModal

__all__ = ["Numbered", "WalkMemo"]

Node = Mapping[str, Any]


@dataclass
class Entry:
    """What walking one container gave, and the state the walk entered it in."""

    state: tuple[Any, ...]
    out: list[Keyed]
    targets: list[ActionTarget]
    headings: list[Heading]
    modals: list[RawModal]
    over_page: list[tuple[Any, ...]]
    ordinals: list[tuple[tuple[Any, ...], int]]
    """The ordinals of the owners inside it, as it left them (no owner outside it counts there)."""
    inner: list[tuple[str, str]]
    """The entries of the containers inside it, kept as long as it is."""


@dataclass
class FrameFacts:
    """What the walk read of one frame besides its nodes (by backend id), and the nodes themselves."""

    by_id: Mapping[str, Node]
    secret: frozenset[int]
    required: frozenset[int] | None
    flagged: frozenset[int] | None
    display: Mapping[int, str] | None
    gaps: Mapping[int, tuple[str, str]] | None
    errors: frozenset[int]
    listers: dict[str, list[str]] | None = None
    """Node id → the ids of the nodes that list it as a child (None: not made yet)."""
    came_from: tuple[Mapping[str, Node], frozenset[str], frozenset[str]] | None = None
    """The `by_id` these nodes were made from, and the ids whose node is another object now (and
    those gone), when that is known (walk_text.py `FrameRead.came_from`)."""


@dataclass
class Numbered:
    """What `build_view` made of the last walk's blocks and targets, by the object each came from.

    A block or target the memo replays is the very object the last walk gave (neither is changed
    once made): given the same block id, its numbered JSON has the same length and its target the
    same copy. Each entry keeps its object alive, so an `id()` is never another object's.
    """

    sizes: dict[int, tuple[Any, str, int]] = field(default_factory=dict)
    """id of a block → (the block, its block id, the length of its numbered JSON)."""
    targets: dict[int, tuple[Any, str | None, Any]] = field(default_factory=dict)
    """id of a target → (the target, its block id, the target with that block id)."""
    blocks: dict[int, tuple[Any, str, dict[str, Any]]] = field(default_factory=dict)
    """id of a block → (the block, its block id, the block numbered with it): the view's block."""


@dataclass
class WalkMemo:
    """The containers of the last walk, by (frame key, node id), and each frame as it was then."""

    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    frames: dict[str, FrameFacts] = field(default_factory=dict)
    replayed: int = 0
    """How many containers walks took from here (for tests and benchmarks)."""
    reads: dict[str, Any] = field(default_factory=dict)
    """By frame key, what the last walk read of the frame's nodes (walk_text.py `FrameRead`)."""
    numbered: Numbered = field(default_factory=Numbered)
    """The last build's sizes and targets (`build_view`), for the blocks and targets replayed."""

    def changed(self, key: str, now: FrameFacts) -> set[str] | None:
        """The ids of the nodes of frame `key` whose containers must be walked again (None: all of them)."""
        before = self.frames.get(key)
        if before is None or any(
            (old is None) != (new is None)
            for old, new in (
                (before.required, now.required),
                (before.flagged, now.flagged),
                (before.display, now.display),
                (before.gaps, now.gaps),
            )
        ):
            return None
        by_id, old_by_id = now.by_id, before.by_id
        if by_id is old_by_id:  # the very nodes of the last walk (the frame did not change)
            replaced, gone = set(), set()
        elif now.came_from is not None and now.came_from[0] is old_by_id:
            replaced, gone = set(now.came_from[1]), set(now.came_from[2])
        else:
            replaced = {node_id for node_id, node in by_id.items() if old_by_id.get(node_id) is not node}
            gone = old_by_id.keys() - by_id.keys()
        now.listers = _relisted(before.listers, old_by_id, by_id, replaced | gone)
        changed = set(replaced)
        changed.update(str(old_by_id[node_id].get("parentId", "")) for node_id in gone)
        backends = _differ(before.secret, now.secret) | _differ(before.errors, now.errors)
        backends |= _differ(before.required or frozenset(), now.required or frozenset())
        backends |= _differ(before.flagged or frozenset(), now.flagged or frozenset())
        backends |= _moved(before.display or {}, now.display or {}) | _moved(before.gaps or {}, now.gaps or {})
        if backends:
            changed.update(i for i, n in by_id.items() if n.get("backendDOMNodeId") in backends)
        return _with_listers(changed, now.listers)

    def keep(self, frames: dict[str, FrameFacts], live: Iterable[tuple[str, str]]) -> None:
        """After a walk: its frames, and only the entries it made or used."""
        for facts in frames.values():
            if facts.listers is None:
                facts.listers = _listers(facts.by_id)
        self.frames = frames
        alive = set(live)
        self.entries = {k: v for k, v in self.entries.items() if k in alive}


def _differ(before: frozenset[int], now: frozenset[int]) -> set[int]:
    return set() if before is now else set(before ^ now)


def _moved(before: Mapping[int, Any], now: Mapping[int, Any]) -> set[int]:
    if before is now:
        return set()
    return {b for b in before.keys() | now.keys() if before.get(b) != now.get(b)}


def _listers(by_id: Mapping[str, Node]) -> dict[str, list[str]]:
    listers: dict[str, list[str]] = {}
    for node_id, node in by_id.items():
        for child in node.get("childIds", ()):
            listers.setdefault(child, []).append(node_id)
    return listers


def _relisted(
    listers: dict[str, list[str]] | None,
    before: Mapping[str, Node],
    now: Mapping[str, Node],
    changed: set[str],
) -> dict[str, list[str]]:
    """`listers` of `before`, made those of `now` where the nodes `changed` (or went); the rest list
    what they listed (the same objects). A new map when there was none."""
    if listers is None:
        return _listers(now)
    listers = dict(listers)  # the last walk's map stays as it was (its lists are not changed either)
    for node_id in changed:
        if (old := before.get(node_id)) is not None:
            for child in old.get("childIds", ()):
                listers[child] = [i for i in listers.get(child, ()) if i != node_id]
        if (new := now.get(node_id)) is not None:
            for child in new.get("childIds", ()):
                listers[child] = [*listers.get(child, ()), node_id]
    return listers


def _with_listers(changed: set[str], listers: Mapping[str, list[str]]) -> set[str]:
    """`changed` and every node that lists one of them as its child, and so on up."""
    dirty: set[str] = set()
    stack = list(changed)
    while stack:
        node_id = stack.pop()
        if node_id in dirty:
            continue
        dirty.add(node_id)
        stack.extend(listers.get(node_id, ()))
    return dirty
