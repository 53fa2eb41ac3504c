"""The pointer as a person moves it: where an element is on the screen, what a click there hits, and
trusted mouse input (`Input.dispatchMouseEvent`).

`aim` scrolls the element into view (`DOM.scrollIntoViewIfNeeded`), takes its visible box
(`DOM.getContentQuads`, clipped to the frame's viewport) and hit-tests the centre
(`DOM.getNodeForLocation`): the point must land on the element or inside it (or on a
`<label>` of it); where something covers the centre, points near its edges are tried (a
button half under another is clicked where it shows), and where all are covered `aim` says what
covers its centre. Coordinates are the
frame's session's own: a same-process iframe is read and clicked through the page's
session, in the page's viewport (the quads come so); an out-of-process iframe through its
own session, in its own viewport, and its `<iframe>` element is hit-tested in the page too,
so an overlay over the whole frame is found as it covers a person's click.
Nothing here decides what to press; actions.py does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio

from cdp_bridge.errors import ProtocolError
from webmcp.desktop.races import first_of

__all__ = ["Aimed", "Frame", "Missed", "aim", "click", "hover", "wheel"]

Send = Callable[..., Awaitable[dict[str, Any]]]
"""A session's `send(method, params, timeout=…)`."""
Judge = Callable[[int], Awaitable[str | None]]
"""Given the backend id of the element a point hits: None when that is the target (or inside it,
or its label), else how a person would name what covers it."""


_POINTS = (
    (0.5, 0.5),
    (0.5, 0.85),
    (0.5, 0.15),
    (0.15, 0.5),
    (0.85, 0.5),
    (0.15, 0.15),
    (0.85, 0.15),
    (0.15, 0.85),
    (0.85, 0.85),
)
"""Where in its box an element is clicked, in this order (fractions of its width and height): its
centre, and where that is covered, the first point of the rest that is not."""


@dataclass(frozen=True, slots=True)
class Frame:
    """Where an element lives: its frame's session and id, and the page's own session."""

    send: Send
    frame_id: str
    page_send: Send
    oopif: bool


@dataclass(frozen=True, slots=True)
class Aimed:
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Missed:
    """Why no trusted click can reach the element: `covered` (by `cover`), or `no-box` (nothing shown)."""

    why: str
    cover: str = ""


async def aim(frame: Frame, node: dict[str, Any], judge: Judge, timeout: float) -> Aimed | Missed:
    """The point a person would click on `node` ({backendNodeId} or {objectId}), hit-tested.

    Raises:
        CDPError: the session went away (a ProtocolError about the node is a `Missed`).
    """
    send = frame.send
    owner: tuple[int, float, float] | None = None
    if frame.oopif:
        owner = await _owner_box(frame, timeout)
    try:
        await send("DOM.scrollIntoViewIfNeeded", node, timeout=timeout)
        quads = (await send("DOM.getContentQuads", node, timeout=timeout)).get("quads") or []
    except ProtocolError:
        return Missed("no-box")
    width, height, scroll_x, scroll_y = await _viewport(send, timeout)
    box = _best_box(quads, width, height)
    if box is None:
        return Missed("no-box")
    left, top, right, bottom = box
    first_cover = ""
    for fx, fy in _POINTS:
        x, y = int(left + (right - left) * fx), int(top + (bottom - top) * fy)
        try:
            # The quads are in the viewport; the hit test takes the document's coordinates.
            at = {"x": int(x + scroll_x), "y": int(y + scroll_y), "ignorePointerEventsNone": False}
            hit = await send("DOM.getNodeForLocation", at, timeout=timeout)
        except ProtocolError:
            return Missed("no-box")
        cover = await judge(int(hit.get("backendNodeId", 0)))
        if cover is None:
            break
        # Covered there: a person clicks the part of it that shows (a button half under another).
        first_cover = first_cover or cover
    else:
        return Missed("covered", first_cover)
    if owner is not None:
        # The frame's own hit test cannot see what the page lays over the whole frame.
        owner_id, dx, dy = owner
        _w, _h, page_x, page_y = await _viewport(frame.page_send, timeout)
        try:
            outer = await frame.page_send(
                "DOM.getNodeForLocation",
                {"x": int(x + dx + page_x), "y": int(y + dy + page_y), "ignorePointerEventsNone": False},
                timeout=timeout,
            )
        except ProtocolError:
            return Missed("covered", "the page around its frame")
        if int(outer.get("backendNodeId", 0)) != owner_id:
            return Missed("covered", await _name_of(frame.page_send, int(outer.get("backendNodeId", 0)), timeout))
    return Aimed(float(x), float(y))


async def click(
    frame: Frame,
    point: Aimed,
    timeout: float,
    *,
    modifiers: int = 0,
    or_left: Callable[[], Awaitable[Any]],
    drawing: bool = True,
    pressing: Callable[[], None] = lambda: None,
) -> None:
    """Move onto `point` and click there with the left button, as a person's mouse does.

    `or_left` ends when the page asked to leave its document: the browser may answer the button's
    release only once that navigation is answered (a page behind a sign-in prompt: never, until
    the person or the agent signs in), and the click has happened by then. Unless `drawing` (the
    page draws frames: its last move was answered, `hover`), the move is written with the button's
    press and not waited for: the press delivers it first. `pressing` is called as the button goes down.
    """
    base = {"x": point.x, "y": point.y, "modifiers": modifiers}
    move = {**base, "type": "mouseMoved", "button": "none"}
    if drawing:
        await _move(frame, move, timeout)
    pressing()
    await frame.send(
        "Input.dispatchMouseEvent",
        {**base, "type": "mousePressed", "button": "left", "buttons": 1, "clickCount": 1},
        timeout=timeout,
        preceded_by=() if drawing else (("Input.dispatchMouseEvent", move),),
    )
    release = {**base, "type": "mouseReleased", "button": "left", "buttons": 0, "clickCount": 1}
    await first_of(partial(frame.send, "Input.dispatchMouseEvent", release, timeout=timeout), or_left)


async def hover(frame: Frame, point: Aimed, timeout: float) -> bool:
    """Move the pointer onto `point` (mouseover, mouseenter, :hover follow); whether the page took the
    move within `MOVE_WAIT` (False: it draws no frames now, and the move waits for what comes next)."""
    return await _move(
        frame, {"type": "mouseMoved", "x": point.x, "y": point.y, "button": "none", "modifiers": 0}, timeout
    )


MOVE_WAIT = 0.1
"""How long a pointer move's answer is waited for (seconds). Chromium hands a move to a page
with pointer listeners at its next animation frame, and a tab behind another in its window
gets none: the browser answered the move only after about a second, and a press there took
2 s against 0.1 s in front. Past this wait the move stays queued, in order: the button press
that follows (not held for a frame) delivers it first."""


async def _move(frame: Frame, params: dict[str, Any], timeout: float) -> bool:
    """`Input.dispatchMouseEvent` for a move, its answer waited for at most `MOVE_WAIT`; whether it came."""
    with anyio.move_on_after(min(MOVE_WAIT, timeout)):
        await frame.send("Input.dispatchMouseEvent", params, timeout=timeout)
        return True
    return False


async def wheel(frame: Frame, point: Aimed, delta_y: int, timeout: float) -> None:
    """Turn the mouse wheel at `point` by `delta_y` pixels (down when positive), as a person's does:
    the page's `wheel` listeners run, then what is under the pointer scrolls (chaining outwards)."""
    await frame.send(
        "Input.dispatchMouseEvent",
        {"type": "mouseWheel", "x": point.x, "y": point.y, "deltaX": 0, "deltaY": delta_y, "modifiers": 0},
        timeout=timeout,
    )


async def _owner_box(frame: Frame, timeout: float) -> tuple[int, float, float] | None:
    """The `<iframe>` of an out-of-process frame, scrolled into the page's view: (its backend id,
    the offset of its content box). None when the page's session cannot see it (a frame nested
    in another out-of-process frame): its own hit test then stands alone."""
    try:
        owner = await frame.page_send("DOM.getFrameOwner", {"frameId": frame.frame_id}, timeout=timeout)
        node = {"backendNodeId": owner["backendNodeId"]}
        await frame.page_send("DOM.scrollIntoViewIfNeeded", node, timeout=timeout)
        model = (await frame.page_send("DOM.getBoxModel", node, timeout=timeout))["model"]
    except (ProtocolError, KeyError):
        return None
    content = model["content"]
    return int(owner["backendNodeId"]), float(content[0]), float(content[1])


async def _viewport(send: Send, timeout: float) -> tuple[float, float, float, float]:
    """The frame's viewport: its width and height, and how far its document is scrolled (x, y)."""
    try:
        metrics = await send("Page.getLayoutMetrics", {}, timeout=timeout)
    except ProtocolError:
        return float("inf"), float("inf"), 0.0, 0.0
    view = metrics.get("cssLayoutViewport") or {}
    return (
        float(view.get("clientWidth") or float("inf")),
        float(view.get("clientHeight") or float("inf")),
        float(view.get("pageX") or 0.0),
        float(view.get("pageY") or 0.0),
    )


def _best_box(quads: list[list[float]], width: float, height: float) -> tuple[float, float, float, float] | None:
    """The largest part of the quads inside the viewport, as (left, top, right, bottom); None if none shows."""
    best: tuple[float, float, float, float] | None = None
    best_area = 0.0
    for quad in quads:
        xs, ys = quad[0::2], quad[1::2]
        left, right = max(min(xs), 0.0), min(max(xs), width)
        top, bottom = max(min(ys), 0.0), min(max(ys), height)
        area = (right - left) * (bottom - top)
        if right - left >= 1 and bottom - top >= 1 and area > best_area:
            best, best_area = (left, top, right, bottom), area
    return best


async def _name_of(send: Send, backend_id: int, timeout: float) -> str:
    """A short name for an element of the page (its tag, id and class), for a refusal."""
    try:
        node = (await send("DOM.describeNode", {"backendNodeId": backend_id}, timeout=timeout))["node"]
    except (ProtocolError, KeyError):
        return "another element"
    attributes = node.get("attributes") or []
    named = dict(zip(attributes[::2], attributes[1::2], strict=False))
    name = str(node.get("localName") or node.get("nodeName", "element")).lower()
    if named.get("id"):
        name += f"#{named['id']}"
    elif named.get("class"):
        name += "." + ".".join(str(named["class"]).split()[:2])
    return name
