"""What a tab's view is read from: the change observer in every frame, a whole read, and a
read of only what changed.

Content changes are noticed by a MutationObserver that runs in an isolated world (the
page can neither see nor call it) and reports through a CDP binding; `read_page` gathers
the accessibility trees of every frame of a page (out-of-process iframes through their
own sessions) and builds the view from them. The observer also records what changed, and
`read_changes` reads again only that (with the secret fields and form state), splicing it
into the last read's nodes (`cdp_bridge.ax_patch`), so `build_view` gives the view a whole
read would give.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import anyio

from cdp_bridge.ax import (
    FORM_STATE_MAX,
    FrameNodes,
    PageNodes,
    Send,
    collect_page,
    has_form_controls,
    read_run_range,
)
from cdp_bridge.ax_patch import Known, Spliced, splice_index
from cdp_bridge.batch import SetUp, set_up, side_by_side
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.layout import LaidOut, patch_text_layout, running_text, wanted
from cdp_bridge.targets import PageTarget
from webmcp.desktop.nameless import name_nameless
from webmcp.desktop.observer_take import (
    UNCHANGED,
    WORLD,
    Changes,
    FrameFacts,
    FrameMoves,
    frame_changes,
    layout_touched,
)
from webmcp.desktop.secret_values import read_secret_fields
from webmcp.js import call, load
from webmcp.view.build import BlockIds, Limits, View, WalkMemo, build_view, run_part
from webmcp.view.masking import SECRET_SELECTOR

logger = logging.getLogger(__name__)

__all__ = [
    "BINDING",
    "OBSERVER_SET_UP",
    "WORLD",
    "FrameFacts",
    "PageRead",
    "changed_since",
    "frame_origins",
    "install_observer",
    "read_changes",
    "read_page",
    "read_run",
]

_SECRET_READ_S = 2.0
_LIMITS = Limits()
_KEEP = max(_LIMITS.table_rows, _LIMITS.list_items)
"""Rows or list items of a long run read below themselves; the rest when asked for (read_run)."""
BINDING = "__webmcpBridgeDirty"
# Runs in an isolated world in every frame: the page cannot see it, call the binding, or fake a change.
_OBSERVER_JS = call(load("observer.js"), BINDING)


OBSERVER_SET_UP = (
    SetUp("Page.enable"),
    # Runtime.bindingCalled is only reported while the Runtime domain is enabled.
    SetUp("Runtime.enable"),
    SetUp("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD}),
    SetUp(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": _OBSERVER_JS, "worldName": WORLD, "runImmediately": True},
    ),
    SetUp("WebMCP.enable"),
    # On now, before anything reads the page, and for good (cdp_bridge.ax.enable_accessibility).
    SetUp("Accessibility.enable"),
)
"""The domains a tab needs and the change observer, on a page or OOPIF session, in order."""


async def install_observer(session: CDPSession) -> None:
    """Enable the domains a tab needs and the change observer, on a page or OOPIF session."""
    await set_up(session, OBSERVER_SET_UP)


async def _read_session(
    session: CDPSession, prefix: str, *, oopif: bool = False, tree: dict[str, Any] | None = None
) -> PageNodes:
    """The frames of one session, with the fields the element-level rule calls secret (labels,
    names, case) added to what the selector found; the two reads run side by side.

    Raises:
        CDPError: the session's root document could not be read.
    """
    reads: list[Callable[[], Awaitable[Any]]] = [
        partial(
            collect_page, session.send, prefix, secret_selector=SECRET_SELECTOR, oopif=oopif, keep=_KEEP, tree=tree
        ),
        partial(read_secret_fields, session.send, timeout=_SECRET_READ_S),
    ]
    nodes, fields = await side_by_side(reads)
    if isinstance(nodes, CDPError):
        raise nodes
    if isinstance(fields, CDPError):  # read_secret_fields answers what it found instead of raising
        raise fields
    nodes.secret_ids |= fields.backend_ids
    nodes.secret_values |= fields.values
    for frame in nodes.frames:
        frame.secret_ids = nodes.secret_ids
    await name_nameless(session, nodes, whole=True)
    return nodes


def frame_origins(tree: dict[str, Any]) -> dict[str, str]:
    """Frame id → origin for every frame in a `Page.getFrameTree` answer (for pages loaded before the bridge)."""
    origins: dict[str, str] = {}
    pending = [tree.get("frameTree", {})]
    while pending:
        node = pending.pop()
        pending.extend(node.get("childFrames", ()))
        frame = node.get("frame", {})
        if frame.get("id"):
            origins[str(frame["id"])] = str(frame.get("securityOrigin", ""))
    return origins


@dataclass
class PageRead:
    """One read of a page: its view, its secret values, and where to read more of it."""

    view: View
    secret_values: frozenset[str]
    """Values of its secret inputs: memory only, to mask echoes; never logged, never published."""
    readers: dict[str, tuple[Send, str]] = field(default_factory=dict)
    """Frame key → (the session's send, the frame id): where a long run's other rows are read."""
    doc_seq: int = -1
    """The document generation read (`ViewHost.doc_seq`)."""
    sessions: list[tuple[CDPSession, PageNodes]] = field(default_factory=list)
    """What each session read gave (the page's own first; then its out-of-process iframes')."""
    oopifs: tuple[str, ...] = ()
    """The out-of-process iframes (target ids) the page had when read."""
    contexts: dict[str, int] = field(default_factory=dict)
    """Frame key → the observer's isolated world in that frame's document (to take its changes);
    frame key + " takes" → how many takes there were (each take's objects are its own group)."""
    taken: dict[str, FrameFacts] = field(default_factory=dict)
    """Frame key → its secret fields and form state at its observer's last take (a frame where
    nothing changed since may answer "none": they stand)."""
    memo: WalkMemo = field(default_factory=WalkMemo)
    """What building its view walked, for the next build of the same document (`build_view`)."""
    took: bool = False
    """Every frame's observer handed its changes over for this read (`read_changes`), which ended its fold."""
    flushed: dict[tuple[int, int | None], float] = field(default_factory=dict)
    """The observers (session, world) whose fold a whole read flushed before it read anything, and
    when their answer had come: a report of theirs that came before then was of a change it saw."""

    def observers(self) -> list[tuple[int, int]]:
        """The observers (session, world) that handed their changes over for this read; none for a whole read."""
        if not self.took:
            return []
        return [
            (id(session), self.contexts[frame.key])
            for session, nodes in self.sessions
            for frame in nodes.frames
            if frame.key in self.contexts
        ]


async def read_page(page: PageTarget, doc_seq: int, ids: BlockIds) -> PageRead:
    """The view of every frame of `page`, and the current values of its secret inputs.

    A long table or list is read only as far as a window shows it (`Limits`); the rest is
    read when asked for (`read_run`).

    Raises:
        CDPError: the main document could not be read (it is navigating or gone).
    """
    session = page.session
    prefix = str(doc_seq)
    tree = await session.send("Page.getFrameTree", {})
    flushed = await _flush_folds(session, tree)

    async def out_of_process(target_id: str, frame_session: CDPSession) -> PageNodes:
        sub = await _read_session(frame_session, prefix, oopif=True)
        owner = await session.send("DOM.getFrameOwner", {"frameId": target_id})
        if sub.frames and sub.frames[0].owner_backend_id is None:
            sub.frames[0].owner_backend_id = owner.get("backendNodeId")
        return sub

    # The page's own session and each out-of-process iframe's are read side by side.
    sessions = dict(page.frame_sessions)
    main, *subs = await side_by_side(
        [
            partial(_read_session, session, prefix, tree=tree),
            *(partial(out_of_process, t, s) for t, s in sessions.items()),
        ]
    )
    if isinstance(main, CDPError):
        raise main
    read = [(session, main)]
    for sub, frame_session in zip(subs, sessions.values(), strict=True):
        if isinstance(sub, CDPError):
            continue  # Mid-navigation or gone; its next change retries.
        read.append((frame_session, sub))
    return replace(_page_read(read, ids, doc_seq, tuple(sessions), {}), flushed=flushed)


_FLUSH_S = 2.0
"""How long a whole read waits for the observers to flush their folds (a busy page's first
layout holds them as long as it holds the read)."""
_FLUSH_FRAMES = 16
"""At most this many frames' observers are flushed (the first in the frame tree); the others'
reports during the read are taken for changes it may have missed, as before."""


async def _flush_folds(session: CDPSession, tree: dict[str, Any]) -> dict[tuple[int, int | None], float]:
    """Have the observer of each frame of `session` (its frame tree: `tree`) report what its fold
    holds, now (`__webmcpBridgeFlush`).

    A change that an observer folds into a report 15 ms on comes after a read begun meanwhile,
    which saw it: the refresher took such a report for a change the read missed and read the
    page whole again (a big page's first layout holds that timer 100 ms and more, past the
    read's start). After the flush, every report that comes before its answer is of a change
    made before it, and every later change is reported at once: `{observer: when}` for each
    frame whose observer answered (none where it is not there yet, or the frame is another
    session's)."""
    send = partial(session.send, timeout=_FLUSH_S)
    frames = list(frame_origins(tree))[:_FLUSH_FRAMES]
    worlds = await side_by_side(
        [partial(send, "Page.createIsolatedWorld", {"frameId": f, "worldName": WORLD}) for f in frames]
    )
    contexts = [w["executionContextId"] for w in worlds if isinstance(w, dict) and "executionContextId" in w]
    expression = "globalThis.__webmcpBridgeFlush?.() === true"
    replies = await side_by_side(
        [
            partial(send, "Runtime.evaluate", {"expression": expression, "contextId": c, "returnByValue": True})
            for c in contexts
        ]
    )
    now = anyio.current_time()
    return {
        (id(session), int(c)): now
        for c, reply in zip(contexts, replies, strict=True)
        if isinstance(reply, dict) and reply.get("result", {}).get("value") is True
    }


def _page_read(
    read: list[tuple[CDPSession, PageNodes]],
    ids: BlockIds,
    doc_seq: int,
    oopifs: tuple[str, ...],
    contexts: dict[str, int],
    taken: dict[str, FrameFacts] | None = None,
    memo: WalkMemo | None = None,
) -> PageRead:
    """The view built from what each session read."""
    frames: list[FrameNodes] = []
    values: set[str] = set()
    readers: dict[str, tuple[Send, str]] = {}
    for frame_session, nodes in read:
        frames.extend(nodes.frames)
        values |= nodes.secret_values
        readers.update((f.key, (frame_session.send, f.frame_id)) for f in nodes.frames)
    memo = memo if memo is not None else WalkMemo()
    view = build_view(frames, ids, limits=_LIMITS, secret_values=values, memo=memo)
    return PageRead(view, frozenset(values), readers, doc_seq, read, oopifs, contexts, taken or {}, memo)


async def read_changes(
    page: PageTarget, last: PageRead, ids: BlockIds, moves: FrameMoves | None = None
) -> PageRead | None:
    """The view of `page` read again only where it changed since `last`; None when unsure.

    The observer of each frame hands over the elements that changed since it was last
    asked (`__webmcpBridgeTakeChanged` in observer.js); their subtrees and ancestors are read
    again and spliced into the last read's nodes (`cdp_bridge.ax_patch`), the secret fields
    and form state are read again whole (one script per frame, with the changes), and the
    layout of running text only if a node in it was touched (`layout.patch_text_layout`).
    What it gives is what `read_page` would give, so `build_view` gives the same view.
    None (the caller then reads the page whole) when the page's frames or sessions are not
    those of `last`, a frame cannot say what changed (too much, or its observer is new), or
    the new nodes do not splice into one tree; with `moves`, when a frame navigates during the
    read (its changed elements are then not read: `FrameMoves`).

    Raises:
        CDPError: a session could not be read (it is navigating or gone).
    """
    now = [page.session, *(page.frame_sessions[t] for t in last.oopifs if t in page.frame_sessions)]
    if tuple(page.frame_sessions) != last.oopifs or [s for s, _ in last.sessions] != now:
        logger.debug("an incremental read fell back: the out-of-process iframes changed")
        return None  # An out-of-process iframe came or went, or was left out of the last read.
    contexts, taken = dict(last.contexts), dict(last.taken)
    patched = await side_by_side(
        [partial(_patch_session, s, nodes, contexts, taken, moves) for s, nodes in last.sessions]
    )
    read: list[tuple[CDPSession, PageNodes]] = []
    for (frame_session, _before), nodes in zip(last.sessions, patched, strict=True):
        if nodes is None or isinstance(nodes, CDPError):
            logger.debug("an incremental read fell back: %s", nodes or "everything changed in a frame")
            return None  # A frame navigated, or a changed element went, as it was read: read whole.
        read.append((frame_session, nodes))
    if all(nodes is before for (_s, before), (_t, nodes) in zip(last.sessions, read, strict=True)):
        return replace(last, contexts=contexts, taken=taken, took=True, flushed={})  # Nothing changed: the same view.
    return replace(_page_read(read, ids, last.doc_seq, last.oopifs, contexts, taken, last.memo), took=True)


async def changed_since(read: PageRead) -> bool:
    """Whether an observer of the frames `read` took changes from has seen more since (or cannot say)."""
    asks = []
    for frame_session, nodes in read.sessions:
        for frame in nodes.frames:
            context = read.contexts.get(frame.key)
            if context is None:
                continue
            params = {"expression": "globalThis.__webmcpBridgeChangePending()", "contextId": context}
            asks.append(partial(frame_session.send, "Runtime.evaluate", {**params, "returnByValue": True}))
    for reply in await side_by_side(asks):
        if isinstance(reply, CDPError) or reply.get("result", {}).get("value") is not False:
            return True
    return False


def _known(old: PageNodes, frame: FrameNodes) -> Known | None:
    """`frame`'s last read by id and by backend id, where the kept running text has them for it."""
    kept = old.running.frames.get(frame.frame_id) if old.running and old.running.frames else None
    return Known(kept.by_id, kept.backends()) if kept is not None and kept.nodes is frame.nodes else None


async def _patch_session(
    session: CDPSession,
    old: PageNodes,
    contexts: dict[str, int],
    facts: dict[str, FrameFacts],
    moves: FrameMoves | None = None,
) -> PageNodes | None:
    """`old`, one session's last read, with what changed since read again; None when unsure.

    `facts` holds each frame's secret fields and form state at its last take, and gets those of
    this one: a frame whose observer saw nothing since answers "none", and they stand.

    Raises:
        CDPError: a frame's world or a changed element is gone.
    """
    send = session.send
    frames = [f for f in old.frames if not f.unreachable_url]
    if not frames or any(not f.frame_id for f in frames):
        logger.debug("an incremental read fell back: a frame without an id")
        return None
    # The session's only frame: the last read's secret fields and form state are its own.
    alone = len(frames) == 1
    taken = await side_by_side(
        [partial(frame_changes, send, f, contexts, alone or f.key in facts, _known(old, f), moves) for f in frames]
    )
    if all(found is UNCHANGED for found in taken):
        return old
    changes: dict[str, Changes] = {}
    for frame, found in zip(frames, taken, strict=True):
        if isinstance(found, CDPError):
            raise found
        if found is None:
            facts.pop(frame.key, None)
            return None
        if found is UNCHANGED:
            if not alone:
                last = facts[frame.key]
                found = Changes(
                    [],
                    set(last.secret_ids),
                    set(last.values),
                    set(last.required_ids),
                    set(last.flagged_ids),
                    set(),
                    set(),
                )
        else:
            facts[frame.key] = FrameFacts(
                frozenset(found.secret_ids),
                frozenset(found.values),
                frozenset(found.required_ids),
                frozenset(found.flagged_ids),
            )
        changes[frame.key] = found
    result = PageNodes()
    touched: set[int] = set()
    spliced: dict[str, Spliced] = {}
    told: list[LaidOut] = []
    relayout = False
    for frame in old.frames:
        change = changes.get(frame.key)
        if change is None or not change.subtrees:
            result.frames.append(replace(frame, spliced=None))
            if frame.key in old.trees:
                result.trees.add(frame.key)
        else:
            kept_running = old.running.frames.get(frame.frame_id) if old.running and old.running.frames else None
            index = kept_running.by_id if kept_running is not None and kept_running.nodes is frame.nodes else None
            patched = splice_index(frame.nodes, change.subtrees, frame.key in old.trees, index)
            if patched is None:
                logger.debug("an incremental read fell back: the re-read subtrees do not splice into one tree")
                return None
            nodes = patched.nodes
            spliced[frame.frame_id] = patched
            if patched.proven:
                result.trees.add(frame.key)
            near = None if change.relayout else layout_touched(frame.nodes, change, kept_running)
            if near is None:
                relayout = True
            else:
                touched |= near
                told += change.told()
            result.frames.append(replace(frame, nodes=nodes, spliced=patched))
        if change is not None:
            result.secret_ids |= change.secret_ids
            result.secret_values |= change.values
    if has_form_controls(result):
        required = {b for c in changes.values() for b in c.required_ids}
        flagged = {b for c in changes.values() for b in c.flagged_ids}
        if len(required) >= FORM_STATE_MAX or len(flagged) >= FORM_STATE_MAX:
            logger.debug("an incremental read fell back: too many required or invalid controls")
            return None  # A full read keeps the first of them only.
        result.required_ids, result.flagged_ids = required, flagged
    layout_frames = [(f.frame_id, f.nodes) for f in result.frames]
    kept = (None, None) if relayout else (old.display, old.gaps)
    before = old.layout_wanted
    if before is None:
        before = wanted([(f.frame_id, f.nodes) for f in old.frames])
    running = running_text(layout_frames, old.running, spliced)  # each frame now one tree (`splice_index`)
    known = LaidOut.merged(told) if told else None
    result.display, result.gaps = await patch_text_layout(send, layout_frames, kept, before, touched, running, known)
    result.layout_wanted, result.running = running.wanted, running
    result.share_with_frames()
    await name_nameless(session, result, whole=False)
    return result


async def read_run(read: PageRead, block: dict[str, Any], offset: int, limit: int) -> list[Any] | None:
    """Rows or items `offset`… of `block`, a table or list that `read` holds only in part; None if whole.

    Raises:
        CDPError: the table or list is gone from the page (or its frame is).
    """
    key = read.view.sources.get(block["id"])
    if key is None or key[0] not in read.readers:
        return None
    send, frame_id = read.readers[key[0]]
    frame = await read_run_range(send, frame_id, int(key[1]), offset, limit, keep=_KEEP)
    frame.key = str(key[0])
    return run_part(frame, frame.nodes[0]["nodeId"], block["type"], offset, limit, read.secret_values)
