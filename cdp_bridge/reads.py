"""Raw reads of the browser's windows and documents, returned as CDP data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .connection import CDPSession
from .errors import CDPError, ProtocolError
from .protocol import WindowBounds

__all__ = ["document_key", "document_loaded", "node_object", "window_bounds", "window_for_target"]


def _bounds(window_id: int, raw: dict[str, Any]) -> WindowBounds:
    return {
        "windowId": window_id,
        "left": float(raw.get("left", 0)),
        "top": float(raw.get("top", 0)),
        "width": float(raw.get("width", 0)),
        "height": float(raw.get("height", 0)),
        "windowState": str(raw.get("windowState", "normal")),
    }


async def window_for_target(browser: CDPSession, target_id: str, limit: float) -> WindowBounds | None:
    """The browser window that shows `target_id`, or None when the browser cannot say (it closed)."""
    try:
        reply = await browser.send("Browser.getWindowForTarget", {"targetId": target_id}, timeout=limit)
    except CDPError:
        return None
    return _bounds(int(reply["windowId"]), reply.get("bounds", {}))


async def window_bounds(browser: CDPSession, window_id: int, limit: float) -> WindowBounds | None:
    """The bounds of browser window `window_id`, or None when it is gone."""
    try:
        reply = await browser.send("Browser.getWindowBounds", {"windowId": window_id}, timeout=limit)
    except CDPError:
        return None
    return _bounds(window_id, reply.get("bounds", {}))


async def document_key(session: CDPSession, limit: float) -> str:
    """The main frame's loader id: it changes with every document the tab loads.

    Raises:
        CDPError: the page is gone.
    """
    tree = await session.send("Page.getFrameTree", timeout=limit)
    frame = tree["frameTree"]["frame"]
    return str(frame.get("loaderId") or frame["id"])


async def document_loaded(session: CDPSession, limit: float) -> bool:
    """True when the main document has finished loading (`document.readyState` is "complete").

    For a page that was already loaded when the bridge attached: its load event is past.
    False when the page cannot say (it is paused, navigating or gone); its load event follows.
    """
    try:
        reply = await session.send(
            "Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True}, timeout=limit
        )
    except CDPError:
        return False
    return reply.get("result", {}).get("value") == "complete"


async def node_object(
    send: Callable[..., Awaitable[dict[str, Any]]],
    backend_node_id: int,
    limit: float,
    context: int | None = None,
    group: str | None = None,
) -> str | None:
    """The remote object id of node `backend_node_id` in execution context `context` (else its
    document's main world), or None when the node is not there: gone, or of a document the
    frame has left (Chromium then answers an object without an id).

    `send` is a session's `send`.
    """
    params: dict[str, Any] = {"backendNodeId": backend_node_id}
    if context is not None:
        params["executionContextId"] = context
    if group is not None:
        params["objectGroup"] = group
    try:
        reply = await send("DOM.resolveNode", params, timeout=limit)
    except ProtocolError:
        return None
    object_id = (reply.get("object") or {}).get("objectId")
    return str(object_id) if object_id else None
