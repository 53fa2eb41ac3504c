"""Secret values as the page holds them right now, for masking an answer just before it leaves.

A snapshot reads secret values when it is built; a script may set a password after that,
and a page tool may echo it, in its result or in the error it throws. `current_secrets`
re-reads the values of every frame of a tab (with `webmcp.view.secrets.READ_SECRETS_JS`, in
an isolated world the page cannot see or patch); the server masks every answer with them
as it leaves (`webmcp.server.app`), so nothing typed or set into a secret field leaves the
bridge unmasked.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import anyio

from cdp_bridge.batch import side_by_side
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.errors import best_effort
from webmcp.view.secrets import FIND_SECRETS_JS, READ_SECRETS_JS

__all__ = [
    "SecretFields",
    "SecretHolder",
    "Send",
    "current_secrets",
    "read_secret_fields",
    "read_secret_values",
]

logger = logging.getLogger(__name__)

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

_WORLD = "webmcp_bridge_secrets"


async def read_secret_values(
    send: Send, *, timeout: float = 2.0, worlds: dict[str, int] | None = None
) -> frozenset[str]:
    """Current values of the secret fields in every frame of the session behind `send`.

    Runs `READ_SECRETS_JS` in an isolated world per frame (page script cannot see or
    patch it), the frames side by side. Frames that are gone or navigating are skipped; the
    whole read is bounded by `timeout` and answers what it found so far.

    `worlds` (frame id → the world's execution context id, kept by the caller between reads)
    saves two of the three round trips: the frame tree is asked for beside the reads in the
    worlds already known, and only a frame with no known world, or whose world is gone (it
    navigated), has its world made first. Every frame of the tree is read either way.
    """
    values: set[str] = set()
    known = dict(worlds or {})
    with anyio.move_on_after(timeout):
        asks: list[Callable[[], Awaitable[Any]]] = [partial(send, "Page.getFrameTree", {})]
        asks += [partial(_evaluate, send, c) for c in known.values()]
        tree_and_reads = await side_by_side(asks)
        tree, reads = tree_and_reads[0], dict(zip(known, tree_and_reads[1:], strict=True))
        if isinstance(tree, CDPError):
            return frozenset()
        frames = _frame_ids(tree)
        if worlds is not None:
            for gone in set(worlds) - set(frames):
                del worlds[gone]
        unread: list[str] = []
        for frame_id in frames:
            found = reads.get(frame_id)
            if isinstance(found, list):
                values.update(found)
            else:  # a frame new since the last read, or its world went with the document it showed
                unread.append(frame_id)
        await side_by_side([partial(_read_frame_values, send, f, values, worlds) for f in unread])
    return frozenset(values)


def _frame_ids(tree: dict[str, Any]) -> list[str]:
    found: list[str] = []
    pending = [tree.get("frameTree", {})]
    while pending:
        node = pending.pop()
        pending.extend(node.get("childFrames", ()))
        frame_id = node.get("frame", {}).get("id")
        if frame_id:
            found.append(frame_id)
    return found


async def _evaluate(send: Send, context: int) -> list[str]:
    """The secret values `READ_SECRETS_JS` finds in the world `context`.

    Raises:
        CDPError: the world is gone (its document was replaced), or the frame could not answer.
    """
    reply = await send(
        "Runtime.evaluate",
        {"expression": READ_SECRETS_JS, "contextId": context, "returnByValue": True, "silent": True},
    )
    found = reply.get("result", {}).get("value")
    return [v for v in found if isinstance(v, str) and v] if isinstance(found, list) else []


async def _read_frame_values(send: Send, frame_id: str, values: set[str], worlds: dict[str, int] | None) -> None:
    try:
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _WORLD})
        context = world["executionContextId"]
        values.update(await _evaluate(send, context))
    except KeyError:
        return
    if worlds is not None:
        worlds[frame_id] = context


class SecretHolder(Protocol):
    """What masking needs of a tab (`webmcp.desktop.tab.Tab`)."""

    @property
    def dialog(self) -> object | None:
        """The JavaScript dialog open on the page now: its page runs no script until it is answered."""

    def has_secret_fields(self) -> bool: ...
    def secret_values(self) -> frozenset[str]: ...
    def sessions(self) -> list[CDPSession]: ...


_WORLDS: weakref.WeakKeyDictionary[CDPSession, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per session, frame id → the execution context of `_WORLD` there, as last made (see read_secret_values)."""


async def current_secrets(holder: SecretHolder, *, timeout: float) -> frozenset[str]:
    """The values of `holder`'s secret fields as of its last read, and as its frames hold them now.

    The page is asked only when its last view showed a secret field (most pages have none,
    and then nothing is read) and it can answer: under a JavaScript dialog it runs no
    script, so the values of the last read are all there is. Each session's read is
    bounded by `timeout`; the sessions are read side by side, each in one round trip once
    its frames' worlds are known.
    """
    known = holder.secret_values()
    if not holder.has_secret_fields() or holder.dialog is not None:
        return known
    reads = [
        partial(read_secret_values, s.send, timeout=timeout, worlds=_WORLDS.setdefault(s, {}))
        for s in holder.sessions()
    ]
    values = set(known)
    for found in await side_by_side(reads):
        if isinstance(found, frozenset):
            values |= found
    return frozenset(values)


@dataclass(frozen=True)
class SecretFields:
    """The secret fields of a session's frames: backend node ids (to mask in the view) and values."""

    backend_ids: frozenset[int] = field(default_factory=frozenset)
    values: frozenset[str] = field(default_factory=frozenset)


_GROUP = "webmcp-bridge-secret-fields"


async def read_secret_fields(send: Send, *, timeout: float = 2.0) -> SecretFields:
    """Backend ids and values of every secret field in the session's frames, decided by the element.

    The replacement for a CSS selector query when the snapshot is built: `is_secret_field`'s
    rule runs in an isolated world per frame, and each element found is described for its
    backend node id. Bounded by `timeout`; frames that fail are skipped.
    """
    ids: set[int] = set()
    values: set[str] = set()
    with anyio.move_on_after(timeout):
        try:
            tree = await send("Page.getFrameTree", {})
        except CDPError:
            return SecretFields()  # no frame tree (the page navigated or went): nothing read
        # Frames are read side by side; one that fails (it navigated, or answered oddly) is skipped.
        await side_by_side([partial(_read_frame, send, f, ids, values) for f in _frame_ids(tree)])
        with best_effort(logger, "the secret fields' objects were not released (their document went)"):
            await send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
    return SecretFields(frozenset(ids), frozenset(values))


async def _read_frame(send: Send, frame_id: str, ids: set[int], values: set[str]) -> None:
    try:
        await _read_frame_fields(send, frame_id, ids, values)
    except (KeyError, TypeError):
        return


async def _read_frame_fields(send: Send, frame_id: str, ids: set[int], values: set[str]) -> None:
    world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _WORLD})
    context = world["executionContextId"]
    reply = await send(
        "Runtime.evaluate",
        {"expression": FIND_SECRETS_JS, "contextId": context, "objectGroup": _GROUP, "silent": True},
    )
    found = reply.get("result", {}).get("objectId")
    if not found:
        return
    props = await send("Runtime.getProperties", {"objectId": found, "ownProperties": True})
    by_name = {p["name"]: p.get("value", {}) for p in props.get("result", ())}
    if "values" in by_name and by_name["values"].get("objectId"):
        read = await send(
            "Runtime.callFunctionOn",
            {"objectId": by_name["values"]["objectId"], "functionDeclaration": "function() { return this; }",
             "returnByValue": True},
        )  # fmt: skip
        values.update(v for v in read.get("result", {}).get("value") or () if isinstance(v, str) and v)
    elements = by_name.get("elements", {}).get("objectId")
    if not elements:
        return
    items = await send("Runtime.getProperties", {"objectId": elements, "ownProperties": True})
    found_ids = [
        item["value"]["objectId"]
        for item in items.get("result", ())
        if item.get("name", "").isdigit() and item.get("value", {}).get("objectId")
    ]
    for described in await side_by_side([partial(send, "DOM.describeNode", {"objectId": o}) for o in found_ids]):
        if isinstance(described, CDPError):
            raise described
        ids.add(int(described["node"]["backendNodeId"]))
