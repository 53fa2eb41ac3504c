"""How the text of links and spans joins the text around them, as the page lays it out. CDP only.

The AX tree calls a `<div>` and a `<span id=…>` both `generic`, says nothing of a link laid
out as a block (a list of cards), leaves out spans that are blocks only by CSS, and drops a
lone space between a comment and a link (React's `our<!-- --> <a>User Agreement</a>`),
which the page shows. Where such a node sits in running text (beside a run of text, or a
few levels below a paragraph, list item, cell, link or heading), one
`DOMSnapshot.captureSnapshot` reads its CSS `display` (and every other link's), and what
lies between it and the text right before and after: white space, or the edge of a block
(`<span style="display: block">DH Newsletter</span><span style="display: block"><a>Privacy
Policy</a></span>`). The snapshot costs about 35 µs an element (half a second on a
15,000-element table): on a document of more than `_LAYOUT_READ_MAX` elements it is taken
only for spans inside paragraphs, list items and cells, as it always was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import CDPError

if TYPE_CHECKING:
    from .ax_patch import Spliced

__all__ = [
    "FrameRunning",
    "LaidOut",
    "RunningText",
    "laid_out",
    "patch_text_layout",
    "read_text_layout",
    "running_text",
    "wanted",
]

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
Frames = Sequence[tuple[str, list[dict[str, Any]]]]


_TEXT_ROLES = frozenset(
    {"paragraph", "listitem", "cell", "gridcell", "term", "definition", "blockquote", "caption", "link", "heading"}
)
# Nodes whose text joins the text around them as their layout says: a <span> or a <div> (both
# "generic", or "none" when Chromium leaves them out), and a link (inline in a sentence, or a card).
_LAYOUT_ROLES = frozenset({"generic", "none", "link"})
_LAYOUT_READ_MAX = 6_000
"""Elements up to which the layout of links and spans beside text is read."""
_LAYOUT_WORLD = "cdp_bridge_layout"
_INLINE = frozenset({"inline", "contents"})
_TEXT_NODE = 3
_CLIMB = 8


@dataclass(slots=True)
class FrameRunning:
    """What `running_text` found of one frame's nodes, kept for its next read of the frame."""

    nodes: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]]
    text_parents: dict[str, int]
    """By `str(parentId)`, how many `StaticText` nodes the node holds (none: not listed)."""
    flags: dict[str, tuple[int, bool, bool, bool]]
    """By node id, of each node that may be in running text: its backend id, and whether it goes
    into `below`, `beside` and `links` before the three are told apart (`_in_running_text`)."""
    by_backend: dict[int, dict[str, Any]] | None = None
    """The nodes by backend id, once asked for (`backends`)."""

    def backends(self) -> dict[int, dict[str, Any]]:
        """The nodes by backend id (of an id two nodes have, the last listed): made at the first
        ask, then kept from read to read where the splices say what changed (`_frame_running`)."""
        if self.by_backend is None:
            self.by_backend = {int(n["backendDOMNodeId"]): n for n in self.nodes if "backendDOMNodeId" in n}
        return self.by_backend


@dataclass(frozen=True, slots=True)
class RunningText:
    """The nodes of some frames whose layout `read_text_layout` reads (`running_text`)."""

    below: set[int]
    beside: set[int]
    links: set[int]
    frames: dict[str, FrameRunning] | None = field(default=None, compare=False, repr=False)
    """By frame id, what was found of each frame's nodes (for the next `running_text` of them)."""

    @property
    def wanted(self) -> set[int]:
        """All of them, if a snapshot is taken at all (nothing in running text: none)."""
        return self.below | self.beside | self.links if self.below or self.beside else set()


@dataclass(frozen=True, slots=True)
class LaidOut:
    """The text layout of some nodes as `read_text_layout` gives it, told by the page (`laid_out`)."""

    display: dict[int, str]
    gaps: dict[int, tuple[str, str]]
    covered: set[int]
    """The backend ids of the elements it tells (those without a box have no display)."""
    kept: set[int] = field(default_factory=set)
    """Those of them that are children an element kept: what they hold is laid out as it was."""

    @staticmethod
    def merged(parts: Sequence[LaidOut]) -> LaidOut:
        out = LaidOut({}, {}, set())
        for part in parts:
            out.display.update(part.display)
            out.gaps.update(part.gaps)
            out.covered.update(part.covered)
            out.kept.update(part.kept)
        return out


def laid_out(tree: Any, backends: Sequence[int], added: Collection[int] = ()) -> LaidOut | None:
    """The display and gaps of the elements of `tree` but its first, as a snapshot gives them
    (None: `tree` is not such a tree).

    `tree` is a little layout tree an observer made in the page (observer.js `laidOut`): an
    element first, then its children and what the `added` ones hold, in document order, each
    `[parent's index, node type, CSS display or null (no box), a text node's text or null (no
    box)]`; `backends` are its elements' backend ids, in order (text nodes have none: their
    text would come with them). A text node's box has its parent's style, as in the snapshot.
    What lies beside each element is worked out by `_gaps`, which the snapshot's layout goes
    through too.
    """
    if not isinstance(tree, list) or not tree:
        return None
    parents: list[int] = []
    types: list[int] = []
    ids: list[int] = []
    displays: dict[int, str] = {}
    texts: dict[int, str] = {}
    elements = iter(backends)
    for index, entry in enumerate(tree):
        if not isinstance(entry, list) or len(entry) != 4:
            return None
        parent, kind, display, text = entry
        if type(parent) is not int or not -1 <= parent < index or (parent == -1) != (index == 0):
            return None
        if kind not in (1, _TEXT_NODE) or not isinstance(display, str | None) or not isinstance(text, str | None):
            return None
        if index > 0 and types[parent] != 1:
            return None
        parents.append(parent)
        types.append(kind)
        if kind == 1:
            backend = next(elements, None)
            if backend is None:
                return None
            ids.append(backend)
            if display is not None:
                displays[index] = display
        else:
            ids.append(-1)
            if text is not None:
                texts[index] = text
                if parent in displays:
                    displays[index] = displays[parent]
    if next(elements, None) is not None:
        return None
    covered = {b for b in ids[1:] if b != -1}
    kept = {ids[i] for i, parent in enumerate(parents) if parent == 0} - set(added)
    nodes = {"parentIndex": parents, "nodeType": types, "backendNodeId": ids}
    display = {ids[i]: d for i, d in displays.items() if i > 0 and types[i] == 1}
    return LaidOut(display, _gaps(nodes, displays, texts, covered), covered, kept)


def running_text(
    frames: Frames, kept: RunningText | None = None, spliced: Mapping[str, Spliced] | None = None
) -> RunningText:
    """What of `frames` is in running text (`_in_running_text`): one walk, for every use of one read.

    `kept` is what it gave for the same frames at the last read, when each frame's nodes are now
    one tree (every node listed by its parent, as `ax_patch.splice_index` makes them): what a node
    was found to be is then kept unless the node, its parent's text or a node up to `_CLIMB` levels
    above it changed (a node changed: another object than the one `kept` saw). `spliced` are, by
    frame id, the splices that made the frames' nodes, which say what changed without a look at
    every node. The answer is the one a walk of every node gives (tests/cdp/test_layout.py compares them).
    """
    before = kept.frames if kept is not None and kept.frames is not None else {}
    now: dict[str, FrameRunning] = {}
    below: set[int] = set()
    beside: set[int] = set()
    links: set[int] = set()
    for frame_id, nodes in frames:
        found = now[frame_id] = _frame_running(nodes, before.get(frame_id), (spliced or {}).get(frame_id))
        for backend, is_below, is_beside, is_link in found.flags.values():
            if is_below:
                below.add(backend)
            if is_beside:
                beside.add(backend)
            if is_link:
                links.add(backend)
    beside -= below
    return RunningText(below, beside, links - below - beside, now)


def _frame_running(
    nodes: list[dict[str, Any]], before: FrameRunning | None, spliced: Spliced | None = None
) -> FrameRunning:
    """`FrameRunning` of `nodes`, from `before` (the frame's at the last read) where that can stand;
    `spliced` is the splice that made `nodes`, if one did."""
    if before is not None and before.nodes is nodes:
        return before
    old = before.by_id if before is not None else {}
    changed: Collection[str]
    if before is not None and spliced is not None and spliced.nodes is nodes and spliced.base is before.nodes:
        by_id, changed, gone = spliced.by_id, spliced.changed, spliced.gone
    else:
        by_id = {node["nodeId"]: node for node in nodes}
        if before is None:
            return _walk_running(nodes, by_id)
        changed = [node_id for node_id, node in by_id.items() if old.get(node_id) is not node]
        gone = old.keys() - by_id.keys()
    if 4 * (len(changed) + len(gone)) > len(by_id):
        return _walk_running(nodes, by_id)
    text_parents = dict(before.text_parents)
    crossed: set[str] = set()

    def count_text(node: dict[str, Any], step: int) -> None:
        if _role(node) != "StaticText":
            return
        parent = str(node.get("parentId"))
        count = text_parents.get(parent, 0) + step
        if count:
            text_parents[parent] = count
        else:
            text_parents.pop(parent, None)
        if (count > 0) != (count - step > 0):
            crossed.add(parent)

    affected: set[str] = set(changed)
    moved: list[str] = []  # nodes whose role or parent changed: what is below them climbs through them
    for node_id in gone:
        count_text(old[node_id], -1)
    for node_id in changed:
        node, was = by_id[node_id], old.get(node_id)
        if was is not None:
            count_text(was, -1)
        count_text(node, 1)
        if was is None or was.get("parentId") != node.get("parentId") or _role(was) != _role(node):
            moved.append(node_id)
    for parent in crossed:  # what it holds is beside text now, or no longer
        holder = by_id.get(parent)
        if holder is None:
            return _walk_running(nodes, by_id)  # text under no node of the frame: walk it all
        affected.update(holder.get("childIds", ()))
    for node_id in moved:
        level = [node_id]
        for _ in range(_CLIMB):
            level = [c for n in level for c in by_id[n].get("childIds", ()) if c in by_id]
            affected.update(level)
    if 4 * len(affected) > len(by_id):
        return _walk_running(nodes, by_id)
    by_backend = _backends_after(before.by_backend, old, by_id, changed, gone)
    flags = dict(before.flags)
    for node_id in gone:
        flags.pop(node_id, None)
    with_text = text_parents.keys()
    levels: dict[str, int] = {}
    for node_id in affected:
        current = by_id.get(node_id)
        found = None if current is None else _flags(current, by_id, with_text, levels)
        if found is None:
            flags.pop(node_id, None)
        else:
            flags[node_id] = found
    return FrameRunning(nodes, by_id, text_parents, flags, by_backend)


def _backends_after(
    before: dict[int, dict[str, Any]] | None,
    old: dict[str, dict[str, Any]],
    by_id: dict[str, dict[str, Any]],
    changed: Collection[str],
    gone: Collection[str],
) -> dict[int, dict[str, Any]] | None:
    """`before` (the last read's nodes by backend id, `FrameRunning.backends`) with the nodes of
    `changed` and `gone` as they are now; None where it was not made, or where two nodes now have
    one backend id (which one a list has last is for `backends` to say)."""
    if before is None:
        return None
    out = dict(before)
    for node_id in (*changed, *gone):
        was = old.get(node_id)
        if was is not None and "backendDOMNodeId" in was and out.get(int(was["backendDOMNodeId"])) is was:
            del out[int(was["backendDOMNodeId"])]
    for node_id in changed:
        node = by_id[node_id]
        if "backendDOMNodeId" in node:
            backend = int(node["backendDOMNodeId"])
            if backend in out:
                return None
            out[backend] = node
    return out


def _role(node: dict[str, Any]) -> Any:
    return node.get("role", {}).get("value")


def _walk_running(nodes: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]) -> FrameRunning:
    """`FrameRunning` of `nodes` (by id, `by_id`), every node looked at."""
    text_parents: dict[str, int] = {}
    for node in by_id.values():
        if _role(node) == "StaticText":
            parent = str(node.get("parentId"))
            text_parents[parent] = text_parents.get(parent, 0) + 1
    with_text = text_parents.keys()
    levels: dict[str, int] = {}
    flags: dict[str, tuple[int, bool, bool, bool]] = {}
    for node_id, node in by_id.items():
        found = _flags(node, by_id, with_text, levels)
        if found is not None:
            flags[node_id] = found
    return FrameRunning(nodes, by_id, text_parents, flags)


def _flags(
    node: dict[str, Any], by_id: dict[str, dict[str, Any]], with_text: Collection[str], levels: dict[str, int]
) -> tuple[int, bool, bool, bool] | None:
    """Of a node that may be in running text (a generic, none or link node of an element): its
    backend id, and whether it goes into `below`, `beside` and `links` (`_in_running_text`)."""
    role = _role(node)
    if role not in _LAYOUT_ROLES or "backendDOMNodeId" not in node:
        return None
    parent = node.get("parentId")
    near = parent is not None and _levels_up(str(parent), by_id, levels) < _CLIMB
    return (
        int(node["backendDOMNodeId"]),
        near and role != "link",
        (near and role == "link") or str(parent) in with_text,
        role == "link" or bool(node.get("ignored")),
    )


def _in_running_text(frames: Frames) -> tuple[set[int], set[int], set[int]]:
    """Backend ids of generic, none and link nodes in running text, and of every other link or
    node Chromium left out of the tree (a wrapper that may be a block).

    Running text is a few levels below a paragraph, list item, cell, link or heading (the
    first set: of generic and none nodes; the second: of links), or beside a run of text
    (their parent holds text of its own; also the second). Each node's distance up to the nearest
    of those is worked out once and remembered for the nodes below it: one climb per node, not
    one per node in running text (a read of a big page has thousands of wrappers).
    """
    below: set[int] = set()
    beside: set[int] = set()
    links: set[int] = set()
    for _frame_id, nodes in frames:
        by_id: dict[str, dict[str, Any]] = {}
        with_text: set[str] = set()
        wanted: list[tuple[dict[str, Any], str]] = []
        for node in nodes:
            by_id[node["nodeId"]] = node
            role = node.get("role", {}).get("value")
            if role == "StaticText":
                with_text.add(str(node.get("parentId")))
            elif role in _LAYOUT_ROLES and "backendDOMNodeId" in node:
                wanted.append((node, role))
        levels: dict[str, int] = {}
        for node, role in wanted:
            backend = int(node["backendDOMNodeId"])
            if role == "link" or node.get("ignored"):
                links.add(backend)  # asked about whenever the snapshot is taken: a card, a block wrapper
            parent = node.get("parentId")
            # A card's text sits a few wrappers below its list item, not more.
            if parent is not None and _levels_up(str(parent), by_id, levels) < _CLIMB:
                (beside if role == "link" else below).add(backend)
            if str(parent) in with_text:
                beside.add(backend)
    beside -= below
    return below, beside, links - below - beside


def _levels_up(node_id: str, by_id: dict[str, dict[str, Any]], levels: dict[str, int]) -> int:
    """How many levels above node `node_id` the nearest paragraph, list item, cell, link or heading
    is (0: the node itself), or `_CLIMB` when none is nearer (or none at all); remembered in `levels`
    for every node climbed through. At most `_CLIMB` nodes are climbed."""
    climbed: list[str] = []
    current = node_id
    while True:
        known = levels.get(current)
        if known is not None:
            above = known
            break
        node = by_id.get(current)
        if node is None:
            above = _CLIMB  # the root passed: nothing above
            break
        if node.get("role", {}).get("value") in _TEXT_ROLES:
            levels[current] = above = 0
            break
        if len(climbed) == _CLIMB:
            levels[climbed[0]] = _CLIMB  # as far as counts: the ones above it may still be near one
            return _CLIMB
        climbed.append(current)
        parent = node.get("parentId")
        if parent is None:
            above = _CLIMB
            break
        current = str(parent)
    for step, climbed_id in enumerate(reversed(climbed), start=1):
        levels[climbed_id] = min(above + step, _CLIMB)
    return min(above + len(climbed), _CLIMB)


async def read_text_layout(
    send: Send, frames: Frames, running: RunningText | None = None
) -> tuple[dict[int, str] | None, dict[int, tuple[str, str]] | None]:
    """Backend id → CSS `display` of the nodes in running text and of links, and → what lies
    right before and right after them (`_gaps`) for those that have something there.

    `frames` are (frame id, AX nodes) of one session, its root document first; `running` what of
    them is in running text, when the caller has it. Both are empty when nothing is in running
    text, and None when the snapshot failed or was not worth it.
    """
    if running is None:
        running = running_text(frames)
    below, beside, other_links = running.below, running.beside, running.links
    if not below and not beside:
        return {}, {}
    # The snapshot costs about 35 µs an element (half a second on a 15,000-element table): for
    # links and spans beside text only in a document of modest size; spans in paragraphs always.
    if not below and await _element_count(send, frames[0][0] if frames else "") > _LAYOUT_READ_MAX:
        return None, None
    wanted = below | beside | other_links  # Once taken, it also tells which links are blocks (a list of cards).
    try:
        snap = await send("DOMSnapshot.captureSnapshot", {"computedStyles": ["display"]})
    except CDPError:
        return None, None  # The document changed under us; the walker then joins such text as it did before.
    strings: list[str] = snap.get("strings", [])
    display: dict[int, str] = {}
    gaps: dict[int, tuple[str, str]] = {}
    for doc in snap.get("documents", ()):
        nodes = doc.get("nodes", {})
        backend_ids: list[int] = nodes.get("backendNodeId", [])
        layout = doc.get("layout", {})
        texts: dict[int, str] = {}
        displays: dict[int, str] = {}  # node index → display, of every node with a layout box
        for index, styles, text in zip(
            layout.get("nodeIndex", ()), layout.get("styles", ()), layout.get("text", ()), strict=False
        ):
            if styles and 0 <= styles[0] < len(strings):
                displays.setdefault(index, strings[styles[0]])
                backend = backend_ids[index] if index < len(backend_ids) else None
                if backend in wanted:
                    display.setdefault(backend, displays[index])
            if 0 <= text < len(strings):
                texts[index] = strings[text]
        gaps.update(_gaps(nodes, displays, texts, wanted))
    return display, gaps


async def patch_text_layout(
    send: Send,
    frames: Frames,
    before: tuple[dict[int, str] | None, dict[int, tuple[str, str]] | None],
    wanted_before: set[int],
    touched: set[int],
    running: RunningText | None = None,
    known: LaidOut | None = None,
) -> tuple[dict[int, str] | None, dict[int, tuple[str, str]] | None]:
    """What `read_text_layout` gives for `frames` now, after only the DOM around `touched` changed.

    `before` is what it gave for the frames as they were, whose nodes in running text were
    `wanted_before` (`wanted`); `touched` are the backend ids of the nodes that were read
    again (a changed element and everything below it, old and new), but for those whose layout
    the page told (`known`: a relisted element's children and what the added ones hold). A node
    elsewhere keeps its `display` and what lies beside it (its siblings and its parent are as
    they were), so no snapshot is taken unless a node in running text is among the touched, or
    one is in running text now that was neither before nor told, or there was no layout to keep.
    `running` is what of `frames` is in running text, when the caller has it.
    """
    if running is None:
        running = running_text(frames)
    if not running.below and not running.beside:
        return {}, {}
    display, gaps = before
    wanted = running.wanted
    told = known.covered if known is not None else set()
    if display is None or gaps is None or wanted & touched or not wanted <= wanted_before | told:
        return await read_text_layout(send, frames, running)
    display = {b: v for b, v in display.items() if b in wanted and b not in told}
    gaps = {b: v for b, v in gaps.items() if b in wanted and b not in told}
    if known is not None:
        display.update((b, v) for b, v in known.display.items() if b in wanted)
        gaps.update((b, v) for b, v in known.gaps.items() if b in wanted)
    return display, gaps


def wanted(frames: Frames) -> set[int]:
    """Backend ids of the nodes whose layout `read_text_layout` reads, if it takes a snapshot."""
    return running_text(frames).wanted


async def _element_count(send: Send, frame_id: str) -> int:
    """How many elements the session's root document has, counted where the page cannot interfere."""
    if not frame_id:
        return 0
    try:
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _LAYOUT_WORLD})
        reply = await send(
            "Runtime.evaluate",
            {
                "expression": "document.getElementsByTagName('*').length",
                "contextId": world["executionContextId"],
                "returnByValue": True,
            },
        )
    except CDPError:
        return 0
    value = reply.get("result", {}).get("value")
    return int(value) if isinstance(value, int | float) else 0


def _gaps(
    nodes: dict[str, Any], displays: dict[int, str], texts: dict[int, str], wanted: set[int]
) -> dict[int, tuple[str, str]]:
    """For wanted nodes: what lies between them and the text right before and right after.

    Each side is "" (the text runs straight on), " " (the shown text there ends or begins with
    white space), or the CSS `display` of the box whose edge lies between: a block sibling, or
    the block that the node starts or ends (climbing out of inline ancestors). Nodes without a
    layout box (comments, white space that collapsed away) are passed over. Only nodes with
    something on a side are listed.
    """
    parents: list[int] = nodes.get("parentIndex", [])
    types: list[int] = nodes.get("nodeType", [])
    backend_ids: list[int] = nodes.get("backendNodeId", [])
    last: dict[int, int] = {}
    before: dict[int, int] = {}
    after: dict[int, int] = {}
    for index, parent in enumerate(parents):
        if index not in displays and index not in texts:
            continue
        if parent in last:
            before[index], after[last[parent]] = last[parent], index
        last[parent] = index

    def side(index: int, siblings: dict[int, int], first: bool) -> str:
        node, space = index, ""
        for _ in range(_CLIMB):
            sibling = siblings.get(node)
            while sibling is not None and types[sibling] == _TEXT_NODE and not texts.get(sibling, "").strip():
                space, sibling = " ", siblings.get(sibling)  # white space alone: a block edge may lie past it
            if sibling is not None:
                if types[sibling] == _TEXT_NODE:
                    text = texts.get(sibling, "")
                    return " " if space or (text[-1:] if first else text[:1]).isspace() else ""
                kind = displays.get(sibling, "inline")
                return space if kind in _INLINE else kind
            parent = parents[node] if 0 <= node < len(parents) else -1
            box = displays.get(parent)
            if box is None or box not in _INLINE:
                return box or space  # the edge of the block it starts or ends (none: the document's)
            node = parent
        return space

    found: dict[int, tuple[str, str]] = {}
    for index, backend in enumerate(backend_ids):
        if backend in wanted and index in displays:
            lead, trail = side(index, before, True), side(index, after, False)
            if lead or trail:
                found[backend] = (lead, trail)
    return found
