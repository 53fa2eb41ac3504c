"""Raw reads of the browser's windows and documents, returned as CDP data."""

from __future__ import annotations

from typing import Any

from .connection import CDPSession
from .errors import CDPError
from .protocol import WindowBounds

__all__ = ["document_key", "window_bounds", "window_for_target"]


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
