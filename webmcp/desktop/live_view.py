"""What a tab's view is read from: the change observer in every frame, and one full read.

Content changes are noticed by a MutationObserver that runs in an isolated world (the
page can neither see nor call it) and reports through a CDP binding; `read_page` gathers
the accessibility trees of every frame of a page (out-of-process iframes through their
own sessions) and builds the view from them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cdp_bridge.ax import FrameNodes, PageNodes, Send, collect_page, enable_accessibility, read_run_range
from cdp_bridge.batch import side_by_side
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import PageTarget
from webmcp.desktop.secret_values import read_secret_fields
from webmcp.js import call, load
from webmcp.view.build import BlockIds, Limits, View, build_view, run_part
from webmcp.view.masking import SECRET_SELECTOR

__all__ = ["BINDING", "WORLD", "PageRead", "frame_origins", "install_observer", "read_page", "read_run"]

WORLD = "webmcp_bridge"
_SECRET_READ_S = 2.0
_LIMITS = Limits()
_KEEP = max(_LIMITS.table_rows, _LIMITS.list_items)
"""Rows or list items of a long run read below themselves; the rest when asked for (read_run)."""
BINDING = "__webmcpBridgeDirty"
# Runs in an isolated world in every frame: the page cannot see it, call the binding, or fake a change.
_OBSERVER_JS = call(load("observer.js"), BINDING)


async def install_observer(session: CDPSession) -> None:
    """Enable the domains a tab needs and the change observer, on a page or OOPIF session."""
    await session.send("Page.enable")
    # Runtime.bindingCalled is only reported while the Runtime domain is enabled.
    await session.send("Runtime.enable")
    await session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": _OBSERVER_JS, "worldName": WORLD, "runImmediately": True},
    )
    await session.send("WebMCP.enable")
    # On now, before anything reads the page, and for good (cdp_bridge.ax.enable_accessibility).
    await enable_accessibility(session.send)


async def _read_session(session: CDPSession, prefix: str, *, oopif: bool = False) -> PageNodes:
    """The frames of one session, with the fields the element-level rule calls secret (labels,
    names, case) added to what the selector found; the two reads run side by side.

    Raises:
        CDPError: the session's root document could not be read.
    """
    reads: list[Callable[[], Awaitable[Any]]] = [
        partial(collect_page, session.send, prefix, secret_selector=SECRET_SELECTOR, oopif=oopif, keep=_KEEP),
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
    return nodes


async def frame_origins(session: CDPSession) -> dict[str, str]:
    """Frame id → origin for every frame the session shows now (for pages loaded before the bridge)."""
    tree = await session.send("Page.getFrameTree")
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


async def read_page(page: PageTarget, doc_seq: int, ids: BlockIds) -> PageRead:
    """The view of every frame of `page`, and the current values of its secret inputs.

    A long table or list is read only as far as a window shows it (`Limits`); the rest is
    read when asked for (`read_run`).

    Raises:
        CDPError: the main document could not be read (it is navigating or gone).
    """
    session = page.session
    prefix = str(doc_seq)

    async def out_of_process(target_id: str, frame_session: CDPSession) -> PageNodes:
        sub = await _read_session(frame_session, prefix, oopif=True)
        owner = await session.send("DOM.getFrameOwner", {"frameId": target_id})
        if sub.frames and sub.frames[0].owner_backend_id is None:
            sub.frames[0].owner_backend_id = owner.get("backendNodeId")
        return sub

    # The page's own session and each out-of-process iframe's are read side by side.
    sessions = dict(page.frame_sessions)
    main, *subs = await side_by_side(
        [partial(_read_session, session, prefix), *(partial(out_of_process, t, s) for t, s in sessions.items())]
    )
    if isinstance(main, CDPError):
        raise main
    frames: list[FrameNodes] = list(main.frames)
    values = set(main.secret_values)
    readers: dict[str, tuple[Send, str]] = {f.key: (session.send, f.frame_id) for f in main.frames}
    for sub, frame_session in zip(subs, sessions.values(), strict=True):
        if isinstance(sub, CDPError):
            continue  # Mid-navigation or gone; its next change retries.
        frames.extend(sub.frames)
        values |= sub.secret_values
        readers.update((f.key, (frame_session.send, f.frame_id)) for f in sub.frames)
    view = build_view(frames, ids, limits=_LIMITS, secret_values=values)
    return PageRead(view, frozenset(values), readers)


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
