"""Where the user points and where an element is on screen, asked of one page, cheaply.

Two reads, both bounded whatever the page's size:

* `collect_pointing` runs one script in an isolated world (the page can neither see nor
  fake it) that picks the few elements worth reporting — the focus path, the hovered
  element, the selection, some headings and landmarks — then asks the accessibility
  domain about those elements only, one pipelined `Accessibility.getPartialAXTree` each.
  It never fetches the full AX tree: on a page of 20,000 nodes that alone takes longer
  than a host may wait.
* `locate_node` / `locate_viewport` turn a node's box model into screen coordinates:
  the browser window's bounds (`Browser.getWindowForTarget`) plus the viewport's offset
  inside the window (the window's size minus the page's inner size: the toolbar on top,
  borders split evenly on the sides), in CSS pixels of a 1:1 zoom.

Nothing here knows about MCP or element ids; the agent side mints those.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from cdp_bridge import reads
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import ProtocolError
from cdp_bridge.protocol import WindowBounds
from webmcp.errors import best_effort
from webmcp.js import call, load
from webmcp.models import Bounds, Location
from webmcp.view.secrets import IS_SECRET_JS

__all__ = [
    "Bounds",
    "Location",
    "Pointed",
    "Pointing",
    "WindowInfo",
    "browser_brands",
    "collect_pointing",
    "locate_node",
    "locate_viewport",
    "window_for_target",
]

logger = logging.getLogger(__name__)

UI_WORLD = "webmcp_bridge_ui"
_GROUP = "webmcp-bridge-ui"

FOCUS, HOVER, SELECTED, SECRET, LANDMARK = 1, 2, 4, 8, 16
"""Flag bits the collector sets on an element (see `Pointed.flags`)."""

_COLLECT_JS = load("collect_pointing.js")


@dataclass(frozen=True, slots=True)
class WindowInfo:
    """The browser window holding a target."""

    window_id: int
    bounds: Bounds
    state: str

    @classmethod
    def of(cls, raw: WindowBounds) -> WindowInfo:
        """From the raw CDP read (`cdp_bridge.reads`)."""
        return cls(raw["windowId"], Bounds(raw["left"], raw["top"], raw["width"], raw["height"]), raw["windowState"])


@dataclass(slots=True)
class Pointed:
    """One element the collector picked, with its AX node (None if it has none)."""

    parent: int
    """Index of the nearest picked ancestor in `Pointing.elements`, or -1."""
    flags: int
    backend_node_id: int | None
    ax: dict[str, Any] | None
    text: str = ""
    """The visible text of a pointed-at element or a heading (never of a secret input), up to 80 characters."""


@dataclass(slots=True)
class Pointing:
    """What one page shows the user and what they point at."""

    visible: bool
    has_focus: bool
    inner_width: float
    inner_height: float
    title: str
    url: str
    brands: list[str]
    elements: list[Pointed]


async def window_for_target(browser: CDPSession, target_id: str, limit: float) -> WindowInfo | None:
    """The window of `target_id`, or None when the browser cannot say (the target closed)."""
    raw = await reads.window_for_target(browser, target_id, limit)
    return WindowInfo.of(raw) if raw is not None else None


def viewport_origin(window: WindowInfo, inner_width: float, inner_height: float) -> tuple[float, float]:
    """Screen position of the viewport's top-left corner (the browser's toolbar is on top)."""
    border = max(0.0, (window.bounds.width - inner_width) / 2)
    top = max(0.0, window.bounds.height - inner_height - border)
    return window.bounds.x + border, window.bounds.y + top


async def _world(session: CDPSession, frame_id: str, limit: float) -> int:
    # The world is created once per document and reused for the same name afterwards.
    reply = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": UI_WORLD}, timeout=limit)
    return int(reply["executionContextId"])


async def _release(session: CDPSession, limit: float) -> None:
    # Not shielded: when the caller gave up on a busy renderer it must not wait here either.
    # A group left behind is freed by the next release of the same group, or by navigation.
    # A failure means the document is gone, and its objects with it.
    with best_effort(logger, "the UI context's objects were not released"):
        await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP}, timeout=limit)


async def _value(session: CDPSession, context: int, expression: str, limit: float) -> Any:
    """The JSON value of `expression` evaluated in our isolated world `context`."""
    reply = await session.send(
        "Runtime.evaluate", {"expression": expression, "contextId": context, "returnByValue": True}, timeout=limit
    )
    return reply.get("result", {}).get("value")


async def browser_brands(session: CDPSession, frame_id: str, limit: float) -> list[str]:
    """`navigator.userAgentData.brands` as the page sees them (Chromium lists only "Chromium").

    Raises:
        CDPError: the page went away.
    """
    context = await _world(session, frame_id, limit)
    brands = await _value(
        session, context, "(navigator.userAgentData ? navigator.userAgentData.brands : []).map((b) => b.brand)", limit
    )
    return [str(b) for b in brands or []]


async def collect_pointing(
    session: CDPSession,
    frame_id: str,
    secret_selector: str,
    limit: float,
    *,
    max_headings: int = 8,
    max_landmarks: int = 10,
    max_selected: int = 10,
) -> Pointing:
    """Read what the page at `session` shows and points at (see the module docstring).

    Raises:
        CDPError: the page went away or refused the script.
    """
    context = await _world(session, frame_id, limit)
    # The element-level rule too (names, labels): a CSS selector cannot see a label.
    collect = call(_COLLECT_JS, IS_SECRET_JS, secret_selector, max_headings, max_landmarks, max_selected)
    try:
        reply = await session.send(
            "Runtime.evaluate",
            {"expression": collect, "contextId": context, "objectGroup": _GROUP, "silent": True},
            timeout=limit,
        )
        if "exceptionDetails" in reply:
            raise ProtocolError("Runtime.evaluate", 0, str(reply["exceptionDetails"].get("text", "script failed")))
        props = await session.send(
            "Runtime.getProperties",
            {"objectId": reply["result"]["objectId"], "ownProperties": True},
            timeout=limit,
        )
        by_name = {p["name"]: p.get("value", {}) for p in props.get("result", ())}
        info = json.loads(by_name["info"]["value"])
        object_ids = [by_name[str(i)].get("objectId") for i in range(len(info["meta"]))]
        ax_nodes: list[dict[str, Any] | None] = [None] * len(object_ids)

        async def describe(i: int, object_id: str | None) -> None:
            if object_id is None:
                return
            try:
                found = await session.send(
                    "Accessibility.getPartialAXTree",
                    {"objectId": object_id, "fetchRelatives": False},
                    timeout=limit,
                )
            except ProtocolError:
                return  # a node without an AX object (e.g. inside a display:none subtree)
            nodes = found.get("nodes") or [None]
            ax_nodes[i] = nodes[0]

        # Pipelined on the one websocket: the cost is the renderer's, not round trips.
        async with anyio.create_task_group() as tg:
            for i, object_id in enumerate(object_ids):
                tg.start_soon(describe, i, object_id)
    finally:
        await _release(session, limit)
    elements = [
        Pointed(
            parent=int(m[0]),
            flags=int(m[1]),
            backend_node_id=(ax or {}).get("backendDOMNodeId"),
            ax=ax,
            text=str(m[2]) if len(m) > 2 else "",
        )
        for m, ax in zip(info["meta"], ax_nodes, strict=True)
    ]
    return Pointing(
        bool(info["visible"]),
        bool(info["hasFocus"]),
        float(info["innerWidth"]),
        float(info["innerHeight"]),
        str(info["title"]),
        str(info["url"]),
        list(info["brands"]),
        elements,
    )


_VISIBILITY_JS = load("visibility.js")


async def locate_node(
    session: CDPSession, frame_id: str, backend_node_id: int, window: WindowInfo, limit: float
) -> Location:
    """Where the node `backend_node_id` of the page at `session` is on screen.

    Raises:
        CDPError: the page itself went away (a node that left the page is `gone`, not an error).
    """
    context = await _world(session, frame_id, limit)
    object_id = await reads.node_object(session.send, backend_node_id, limit, context, _GROUP)
    if object_id is None:
        return Location("gone")
    try:
        seen = await session.send(
            "Runtime.callFunctionOn",
            {
                "objectId": object_id,
                "functionDeclaration": _VISIBILITY_JS,
                "returnByValue": True,
                "silent": True,
            },
            timeout=limit,
        )
        facts = seen.get("result", {}).get("value") or {}
        if not facts.get("connected"):
            return Location("gone")
        if not facts.get("shown"):
            return Location("hidden")
        try:
            model = (await session.send("DOM.getBoxModel", {"backendNodeId": backend_node_id}, timeout=limit))["model"]
        except ProtocolError:
            return Location("hidden")  # connected but without a box (display: contents, or no layout)
        inner_w, inner_h = await _inner_size(session, context, facts, limit)
    finally:
        await _release(session, limit)
    quad = model["border"]
    xs, ys = quad[0::2], quad[1::2]
    left, top = min(xs), min(ys)
    width, height = max(xs) - left, max(ys) - top
    if width <= 0 or height <= 0:
        return Location("hidden")
    ox, oy = viewport_origin(window, inner_w, inner_h)
    bounds = Bounds(ox + left, oy + top, width, height)
    in_main_view = left + width > 0 and top + height > 0 and left < inner_w and top < inner_h
    return Location("visible" if facts.get("inView") and in_main_view else "offscreen", bounds)


async def _inner_size(session: CDPSession, context: int, facts: dict[str, Any], limit: float) -> tuple[float, float]:
    if facts.get("top"):
        return float(facts["innerWidth"]), float(facts["innerHeight"])
    width, height = await _value(session, context, "[innerWidth, innerHeight]", limit)
    return float(width), float(height)


async def locate_viewport(session: CDPSession, frame_id: str, window: WindowInfo, limit: float) -> Location:
    """Where the page's viewport is on screen: `visible` when its tab is the shown one, else `hidden`.

    Raises:
        CDPError: the page went away.
    """
    context = await _world(session, frame_id, limit)
    width, height, shown = await _value(
        session, context, "[innerWidth, innerHeight, document.visibilityState === 'visible']", limit
    )
    ox, oy = viewport_origin(window, float(width), float(height))
    state: Literal["visible", "hidden"] = "visible" if shown and window.state != "minimized" else "hidden"
    return Location(state, Bounds(ox, oy, float(width), float(height)))
