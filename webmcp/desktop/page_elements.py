"""The page's elements as window actions reach them: resolved in the bridge's isolated world of
their frame (`window_actions.js` runs there), with the frame's session for trusted input.

A target is found by the backend node id the view read (no selector is ever guessed), in the
session of the frame that read it: the page's own for it and its same-process iframes, an
out-of-process iframe's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdp_bridge import reads
from cdp_bridge.targets import PageTarget
from webmcp.desktop import pointer
from webmcp.desktop.live_view import WORLD, PageRead
from webmcp.js import load
from webmcp.view.targets import ActionTarget

__all__ = ["ACTIONS_JS", "Element", "call", "element_of", "focused_element", "world_of"]

ACTIONS_JS = load("window_actions.js")
ACTIVE_JS = load("active_element.js")


@dataclass(frozen=True)
class Element:
    """One element of the page resolved in the bridge's world of its frame."""

    frame: pointer.Frame
    context: int
    object_id: str
    backend_id: int | None


async def world_of(send: Any, frame_id: str, limit: float) -> int:
    """The execution context of the bridge's isolated world in frame `frame_id`."""
    world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, timeout=limit)
    return int(world["executionContextId"])


async def element_of(read: PageRead | None, page: PageTarget, target: ActionTarget, limit: float) -> Element | None:
    """`target`'s element in the bridge's world of its frame; None when it is gone."""
    reader = read.readers.get(target.frame_key) if read is not None else None
    if reader is None:
        return None
    # Each reader is its session's own `send` (read_page), which takes a timeout.
    send: Any = reader[0]
    frame_id = reader[1]
    frame = pointer.Frame(send, frame_id, page.session.send, send != page.session.send)
    context = await world_of(send, frame_id, limit)
    object_id = await reads.node_object(send, target.backend_id, limit, context)
    return Element(frame, context, object_id, target.backend_id) if object_id else None


async def focused_element(page: PageTarget, limit: float) -> Element | None:
    """The element that has the focus in the main document (its body when none has)."""
    send = page.session.send
    frame = pointer.Frame(send, page.target_id, send, False)
    context = await world_of(send, page.target_id, limit)
    active = await send("Runtime.evaluate", {"expression": ACTIVE_JS, "contextId": context}, timeout=limit)
    object_id = (active.get("result") or {}).get("objectId")
    return Element(frame, context, object_id, None) if object_id else None


async def call(
    send: Any, object_id: str, op: str, args: list[Any], timeout: float, extra: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    reply = await send(
        "Runtime.callFunctionOn",
        {
            "objectId": object_id,
            "functionDeclaration": ACTIONS_JS,
            "arguments": [{"value": op}, *({"value": a} for a in args), *(extra or [])],
            "returnByValue": True,
            "awaitPromise": True,
            "userGesture": True,
            "silent": True,
        },
        timeout=timeout,
    )
    if "exceptionDetails" in reply:
        return {"error": "the page's handler threw"}
    value = reply.get("result", {}).get("value")
    return value if isinstance(value, dict) else {"error": "no answer"}
