"""What a frame's change observer hands over at a take (webmcp/js/changes.js), read again.

`frame_changes` evaluates the take in the observer's isolated world, in one round trip whose
answer carries each element's backend id, then reads the AX subtrees and ancestors of the changed
elements; `layout_touched` says which nodes' text layout may have moved (cdp_bridge/layout.py).
`desktop.live_view.read_changes` splices what it gives into the last read.
"""

from __future__ import annotations

import json
import logging
from array import array
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, MutableSequence
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import anyio

from cdp_bridge.ax import FLAGGED_SELECTOR, REQUIRED_SELECTOR, SMALL_DOCUMENT, FrameNodes, Send
from cdp_bridge.ax_patch import Known, Subtree, read_subtrees, subtree_ids
from cdp_bridge.ax_relist import read_relisted, relist
from cdp_bridge.batch import commands_side_by_side
from cdp_bridge.errors import CDPError
from cdp_bridge.js import Expression
from cdp_bridge.layout import FrameRunning, LaidOut, laid_out
from webmcp.js import call, load
from webmcp.view.masking import SECRET_SELECTOR
from webmcp.view.secrets import FIND_SECRETS_JS

logger = logging.getLogger(__name__)

__all__ = [
    "FrameMoves",
    "CHANGES_JS",
    "TAKEN",
    "UNCHANGED",
    "WORLD",
    "Changes",
    "FrameFacts",
    "frame_changes",
    "layout_touched",
    "parse_take",
]

WORLD = "webmcp_bridge"
"""The isolated world the observer lives in, in every frame."""
_CHANGED_MAX = 40
"""Changed elements up to which a read takes only their subtrees (more: the whole page)."""
CHANGES_JS = {
    may_be_none: "function (known) { return "
    + call(
        load("changes.js"),
        _CHANGED_MAX,
        SMALL_DOCUMENT,
        Expression(f"() => {FIND_SECRETS_JS}"),
        SECRET_SELECTOR,
        REQUIRED_SELECTOR,
        FLAGGED_SELECTOR,
        may_be_none,
        Expression("known"),
    )
    + "; }"
    for may_be_none in (False, True)
}
"""The function (`Runtime.callFunctionOn`, given how many numbered nodes the bridge holds) that takes
a frame's changes; where what stands is known, it may answer "none"."""
_CHANGES_GROUP = "webmcp-bridge-changes"
_NUMBERED_WORLDS = 64
"""Worlds (a frame's document) whose numbered nodes the bridge keeps; one let go starts again."""
_NUMBERED_MAX = 5_000
"""Numbered nodes a world may have before its numbers start again (8 bytes each: 2.5 MB at most)."""
_numbered: OrderedDict[tuple[str, int], array[int]] = OrderedDict()
"""By (frame key, context id), the backend ids of the nodes its takes serialized, by number."""


def _numbers_of(frame_key: str, context: int) -> array[int]:
    """The backend ids numbered in the world `context` of `frame_key` (the least recently used
    world past `_NUMBERED_WORLDS` is let go)."""
    key = (frame_key, context)
    numbers = _numbered.pop(key, None)
    if numbers is None or len(numbers) > _NUMBERED_MAX:
        numbers = array("q")
    _numbered[key] = numbers
    while len(_numbered) > _NUMBERED_WORLDS:
        _numbered.popitem(last=False)
    return numbers


@dataclass(frozen=True)
class FrameFacts:
    """One frame's secret fields, their values and its form state, as its observer's take gave them."""

    secret_ids: frozenset[int]
    values: frozenset[str]
    required_ids: frozenset[int]
    flagged_ids: frozenset[int]


@dataclass
class Changes:
    """What one frame's observer handed over, with the secret fields and form state of its document."""

    subtrees: list[Subtree]
    """Each changed element's AX node, ancestors and subtree as they are now."""
    secret_ids: set[int]
    values: set[str]
    required_ids: set[int]
    flagged_ids: set[int]
    beside: set[int]
    """Backend ids of the neighbours of restyled elements, whose text layout may have moved."""
    deep: set[int]
    """Those of them laid out inline: the text inside them may run on into the restyled one too."""
    relaid: set[int] = field(default_factory=set)
    """Backend ids of the elements whose layout may have moved, with all they hold (restyled)."""
    within: set[int] = field(default_factory=set)
    """Those of the elements whose children or text changed: what they hold, not they themselves."""
    relayout: bool = False
    """Too many of those to say: the whole text layout is read again."""
    laid: dict[int, LaidOut] = field(default_factory=dict)
    """By backend id, the relisted elements whose children's text layout the page told (the
    children themselves and what the added ones hold: the kept ones' insides stand)."""

    def told(self) -> list[LaidOut]:
        """The text layout the page told, of the relisted elements not restyled too (`layout_touched`)."""
        return [laid for backend, laid in self.laid.items() if backend not in self.relaid]


UNCHANGED = Changes([], set(), set(), set(), set(), set(), set())
"""A frame where nothing changed (its secret fields and form state neither): its last read stands."""


def layout_touched(old: list[dict[str, Any]], change: Changes, known: FrameRunning | None = None) -> set[int] | None:
    """Backend ids of the nodes whose layout may have moved (None when that is not known).

    They are: each restyled element (`change.relaid`) with all it held and holds, all that an
    element whose children or text changed (`change.within`) held and holds but not itself, the
    neighbours `beside` restyled elements, and all that `deep` ones held. Such an element is
    found in `old` (the frame's last read) or in the subtrees read again; one in neither, or a
    `deep` one not in `old`, holds what is not known (None). An element whose only change is to
    an attribute no style rule reads (a link's `aria-label`) is in neither set: its layout, and
    its neighbours', did not move. Where the page told the layout of a relisted element's children
    (`change.laid`, unless it was restyled too), what it holds now is counted but for what the
    page told and what its kept children hold (laid out as it was): a text node or a node only
    the accessibility tree has, in an added child; a child it lost is gone or counted where it went.
    `known` is what the last read's running text kept of `old`: its nodes by id and by backend id.
    """
    if known is not None and known.nodes is old:
        by_id, by_backend = known.by_id, known.backends()
    else:
        by_id = {n["nodeId"]: n for n in old}
        by_backend = {int(n["backendDOMNodeId"]): n for n in old if "backendDOMNodeId" in n}
    fresh = {n["nodeId"]: n for sub in change.subtrees for n in (*sub.nodes, *sub.ancestors[:1])}
    fresh_by_backend = {int(n["backendDOMNodeId"]): n for n in fresh.values() if "backendDOMNodeId" in n}
    found: set[int] = set(change.beside) | set(change.deep)
    for backend in change.deep:
        if backend not in by_backend:
            return None
        found |= _backends(subtree_ids(by_backend[backend], by_id), by_id)
    for backend in change.relaid | change.within:
        before, now = by_backend.get(backend), fresh_by_backend.get(backend)
        laid = change.laid.get(backend)
        if laid is not None and backend not in change.relaid and now is not None:
            # What it holds now, but what the page told and what its kept children hold.
            held = _backends(subtree_ids(now, fresh), fresh) - {backend} - laid.covered
            for kept in laid.kept:
                if (kid := fresh_by_backend.get(kept)) is not None:
                    held -= _backends(subtree_ids(kid, fresh), fresh)
            found |= held
            continue
        if before is None and now is None:
            return None
        held = _backends(subtree_ids(before, by_id), by_id) if before is not None else set()
        if now is not None:
            held |= _backends(subtree_ids(now, fresh), fresh)
        if backend not in change.relaid:
            held.discard(backend)
        found |= held
    return found


def _backends(node_ids: set[str], by_id: dict[str, dict[str, Any]]) -> set[int]:
    return {int(by_id[i]["backendDOMNodeId"]) for i in node_ids if "backendDOMNodeId" in by_id[i]}


READS_BEFORE_NAVIGATING_S = 2.0
"""How long a navigation the tab sends waits for the AX reads of a frame's elements under way."""


class FrameMoves:
    """Which frames are being replaced by another document, and how many documents each has had.

    Chromium 156's renderer dies (SIGSEGV) when `Accessibility.queryAXTree` names an element that
    is no longer in a live document: one of a document a navigation replaced, or one the page
    removed. Commands sent on a session behind its `Page.navigate` (before the browser even
    reports `Page.frameStartedNavigating`) are held by the browser until the new document
    commits, and then run on it. So the elements a take named are read (`frame_changes`) only if
    their frame was not navigating when the take was sent, and has neither been sent a navigation
    (`sending`), started one, nor committed a document since; else the read falls back to a whole
    one (`getFullAXTree`, which names no element).
    """

    def __init__(self) -> None:
        self._moving: set[str] = set()
        self._sending: dict[str, int] = {}
        self._documents: dict[str, int] = {}
        self._reading: dict[str, int] = {}
        self._read_done = anyio.Event()

    @asynccontextmanager
    async def sending(self, frame_id: str, budget: float = READS_BEFORE_NAVIGATING_S) -> AsyncIterator[None]:
        """Around a command that navigates the frame (`Page.navigate`...): no read of its elements
        begins until the command is answered (by then `Page.frameStartedNavigating` has come, for a
        navigation to another document), and the command waits, at most `budget` seconds, for
        those under way to be answered: a `queryAXTree` still unanswered when its document goes
        crashes the renderer too."""
        self._sending[frame_id] = self._sending.get(frame_id, 0) + 1
        self._documents[frame_id] = self._documents.get(frame_id, 0) + 1
        try:
            with anyio.move_on_after(budget):
                while self._reading.get(frame_id, 0) > 0:
                    await self._read_done.wait()
            yield
        finally:
            self._sending[frame_id] -= 1

    @contextmanager
    def reading(self, frame_id: str) -> Iterator[None]:
        """Around the AX reads of elements a take named (`frame_changes`)."""
        self._reading[frame_id] = self._reading.get(frame_id, 0) + 1
        try:
            yield
        finally:
            self._reading[frame_id] -= 1
            done, self._read_done = self._read_done, anyio.Event()
            done.set()

    def started(self, params: dict[str, Any]) -> None:
        """`Page.frameStartedNavigating`: a cross-document navigation makes the frame's elements stale."""
        if str(params.get("navigationType", "")).startswith(("sameDocument", "historySameDocument")):
            return
        frame_id = str(params.get("frameId", ""))
        self._moving.add(frame_id)
        self._documents[frame_id] = self._documents.get(frame_id, 0) + 1

    def committed(self, params: dict[str, Any]) -> None:
        """`Page.frameNavigated`: the frame shows another document."""
        frame_id = str(params.get("frame", {}).get("id", ""))
        self._moving.discard(frame_id)
        self._documents[frame_id] = self._documents.get(frame_id, 0) + 1

    def stopped(self, params: dict[str, Any]) -> None:
        """`Page.frameStoppedLoading`: a navigation that did not commit left the document as it was."""
        self._moving.discard(str(params.get("frameId", "")))

    def stamp(self, frame_id: str) -> int | None:
        """The frame's document count, or None while it is being replaced."""
        if frame_id in self._moving or self._sending.get(frame_id, 0) > 0:
            return None
        return self._documents.get(frame_id, 0)

    def still(self, frame_id: str, stamp: int | None) -> bool:
        """Whether the frame shows, and is staying on, the document it showed at `stamp`."""
        return stamp is not None and stamp == self.stamp(frame_id)


async def frame_changes(
    send: Send,
    frame: FrameNodes,
    contexts: dict[str, int],
    may_be_none: bool,
    known: Known | None = None,
    moves: FrameMoves | None = None,
) -> Changes | None:
    """What the observer in `frame` saw change since last asked, read again; None: "everything".

    When nothing changed there and `may_be_none` (its secret fields and form state as the last
    take gave them are known), `UNCHANGED`.

    Two steps, each one batch of commands: the observer's changes with the secret fields and
    form state (one script whose answer carries each element's backend id, by deep
    serialization; the last such batch's object released beside it), then the AX subtree and
    ancestors of each changed element side by side (with `known`, the frame's last read by id and
    backend id, the ancestors they share read once: `ax_patch.read_changed`).

    With `moves`, None too when the frame navigates (see `FrameMoves`): its elements are not read.

    Raises:
        CDPError: the frame, its world or a changed element is gone.
    """
    stamp = moves.stamp(frame.frame_id) if moves is not None else 0
    if stamp is None:
        logger.debug("an incremental read fell back: the frame is navigating")
        return None
    context = contexts.get(frame.key)
    if context is None:
        world = await send("Page.createIsolatedWorld", {"frameId": frame.frame_id, "worldName": WORLD})
        context = contexts[frame.key] = int(world["executionContextId"])
    # Each take's answer is kept in a group of its own until the next take releases it, side by
    # side with that take's script: no round trip of its own.
    taken = contexts.get(f"{frame.key} takes", 0)
    contexts[f"{frame.key} takes"] = taken + 1
    group = f"{_CHANGES_GROUP}-{taken + 1}"
    numbers = _numbers_of(frame.key, context)
    params = {
        "functionDeclaration": CHANGES_JS[may_be_none],
        "executionContextId": context,
        "arguments": [{"value": len(numbers)}],
        "objectGroup": group,
        "silent": True,
        "serializationOptions": {"serialization": "deep", "maxDepth": 1},
    }
    _released, reply = await commands_side_by_side(
        send,
        [
            ("Runtime.releaseObjectGroup", {"objectGroup": f"{_CHANGES_GROUP}-{taken}"}),
            ("Runtime.callFunctionOn", params),
        ],
    )
    if isinstance(reply, CDPError):
        contexts.pop(frame.key, None)
        raise reply
    found = reply.get("result", {}).get("deepSerializedValue", {})
    if reply.get("exceptionDetails"):
        logger.debug("an incremental read fell back: the observer's take failed")
        return None
    if found.get("type") == "string" and found.get("value") == "none":
        return UNCHANGED
    parsed = parse_take(found, numbers)
    if parsed is None:
        logger.debug("an incremental read fell back: the observer said everything changed (or did not add up)")
        return None
    meta, backends = parsed
    groups: dict[str, list[int]] = {}
    for name in TAKEN:
        groups[name], backends = backends[: int(meta[name])], backends[int(meta[name]) :]
    roots = [{"backendNodeId": b} for b in groups["roots"]]
    named = [{"backendNodeId": b} for b in groups["named"]]
    relisted = _relisted(groups["relisted"], groups["added"], meta.get("adds", []))
    if relisted is None:
        logger.debug("an incremental read fell back: the observer's relisted elements did not add up")
        return None
    if moves is not None and not moves.still(frame.frame_id, stamp):
        # Its elements may be in a document the navigation replaces by the time a query reaches it.
        logger.debug("an incremental read fell back: the frame navigated during the take")
        return None
    with moves.reading(frame.frame_id) if moves is not None else nullcontext():
        if not relisted:
            subtrees = await read_subtrees(send, roots, named, known)
        else:
            subtrees = await _read_with_relisted(send, frame, roots, named, relisted, known)
    values = {v for v in meta.get("values", ()) if isinstance(v, str) and v}
    laid = _laid(groups["relisted"], groups["laid"], meta.get("layouts"), groups["added"], meta.get("adds"))
    return Changes(
        subtrees,
        set(groups["secret"]),
        values,
        set(groups["required"]),
        set(groups["flagged"]),
        set(groups["beside"]),
        set(groups["deep"]),
        set(groups["relaid"]),
        set(groups["within"]),
        meta.get("relayout") is not False,
        laid,
    )


TAKEN = (
    "roots",
    "named",
    "beside",
    "deep",
    "relaid",
    "within",
    "secret",
    "required",
    "flagged",
    "relisted",
    "added",
    "laid",
)
"""The groups of elements in changes.js's answer, in order; its counts say how many of each."""


def _relisted(
    elements: list[int], added: list[int], counts: Any
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]] | None:
    """The relisted elements of a take, each with the children it gained (`counts`: how many each)."""
    if not isinstance(counts, list) or len(counts) != len(elements) or sum(int(c) for c in counts) != len(added):
        return None
    out, at = [], 0
    for element, count in zip(elements, counts, strict=True):
        out.append(({"backendNodeId": element}, [{"backendNodeId": b} for b in added[at : at + int(count)]]))
        at += int(count)
    return out


def _laid(elements: list[int], nodes: list[int], layouts: Any, added: list[int], adds: Any) -> dict[int, LaidOut]:
    """By relisted element, the layout of its children that the page told (`layouts`: a tree or
    null each, `nodes` their elements one after another; `added`: the children each gained, `adds`
    how many each); none where it does not add up."""
    if not isinstance(layouts, list) or len(layouts) != len(elements) or not isinstance(adds, list):
        return {}
    if len(adds) != len(elements) or not all(type(a) is int and a >= 0 for a in adds):
        return {}
    out, at, gained = {}, 0, 0
    for element, tree, count in zip(elements, layouts, adds, strict=True):
        fresh, gained = added[gained : gained + count], gained + count
        if tree is None:
            continue
        size = (
            sum(1 for entry in tree if isinstance(entry, list) and entry[1:2] == [1]) if isinstance(tree, list) else 0
        )
        mine, at = nodes[at : at + size], at + size
        told = laid_out(tree, mine, fresh) if mine[:1] == [element] else None
        if told is not None:
            out[element] = told
    return out if at == len(nodes) else {}


async def _read_with_relisted(
    send: Send,
    frame: FrameNodes,
    roots: list[dict[str, Any]],
    named: list[dict[str, Any]],
    relisted: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    known: Known | None = None,
) -> list[Subtree]:
    """The subtrees of `roots` and `named` (as read_subtrees reads them), and of each relisted
    element as a whole read would give it (`ax_relist.relist`), read together; one whose tree says
    otherwise is read whole after.

    Raises:
        CDPError: an element is gone.
    """
    subtrees, relists = await read_relisted(send, relisted, roots, named, known)
    by_id = known.by_id if known is not None else {n["nodeId"]: n for n in frame.nodes}
    whole: list[dict[str, Any]] = []
    for (element, _added), read in zip(relisted, relists, strict=True):
        sub = relist(by_id, read)
        if sub is None:
            whole.append(element)
        else:
            subtrees.append(sub)
    if whole:
        logger.debug("%d relisted elements are read whole: their trees say otherwise", len(whole))
        subtrees += await read_subtrees(send, whole, None, known)
    return subtrees


def parse_take(
    found: dict[str, Any], numbers: MutableSequence[int] | None = None
) -> tuple[dict[str, Any], list[int]] | None:
    """The counts and the elements' backend ids in changes.js's deep-serialized answer; None if
    it is "all" or not what the script gives (a JSON string of counts, then that many elements).

    Where the answer numbers its nodes (`refs`: a node serialized before by its number, -1 for
    the next one serialized now, numbered from `first`), `numbers` holds the backend ids by
    number so far and gets the new ones; it is emptied when the page started its numbers again
    (`fresh`) and when the answer does not add up (the next take then starts them again).
    """
    items = found.get("value") if found.get("type") == "array" else None
    if not isinstance(items, list) or not items or items[0].get("type") != "string":
        return None
    try:
        meta = json.loads(items[0]["value"])
        cut = [int(meta[name]) for name in TAKEN]
    except (ValueError, KeyError, TypeError):
        return None
    backends: list[int] = []
    seen: dict[Any, int] = {}  # An element given twice is serialized once, then referred to.
    for item in items[1:]:
        if item.get("type") != "node":
            return None
        reference = item.get("weakLocalObjectReference")
        backend = item["value"].get("backendNodeId") if "value" in item else seen.get(reference)
        if not isinstance(backend, int):
            return None
        if reference is not None:
            seen[reference] = backend
        backends.append(backend)
    refs = meta.get("refs")
    if refs is not None:
        resolved = _resolved(meta, refs, backends, numbers if numbers is not None else [])
        if resolved is None:
            return None
        backends = resolved
    return (meta, backends) if sum(cut) == len(backends) else None


def _resolved(meta: dict[str, Any], refs: Any, sent: list[int], numbers: MutableSequence[int]) -> list[int] | None:
    """The backend ids of `refs` (see `parse_take`), `sent` numbered after `numbers`."""
    if meta.get("fresh") is True:
        del numbers[:]
    if not isinstance(refs, list) or meta.get("first") != len(numbers) or refs.count(-1) != len(sent):
        del numbers[:]
        return None
    numbers.extend(sent)
    out, at = [], 0
    for ref in refs:
        if ref == -1:
            out.append(sent[at])
            at += 1
        elif type(ref) is int and 0 <= ref < len(numbers):
            out.append(numbers[ref])
        else:
            del numbers[:]
            return None
    return out
