"""End to end: an incremental read never names an element of a document a navigation replaced.

Chromium 156's renderer dies (SIGSEGV, `Target.targetCrashed` errorCode 11) when
`Accessibility.queryAXTree` names an element that is no longer in a live document. A command sent
while its frame navigates is held by the browser until the new document commits, and then runs
on it: so an incremental read whose take answered from the old document, and whose AX queries went
out after the navigation began, crashed the tab (seen with MiniWoB episodes: the bridge navigated
to the address the tab showed while the page's last changes were being read).

Both tests play that order for certain: the take answers, then the page navigates to its own
address and loads, then `frame_changes` goes on. The first shows that without `FrameMoves` the
renderer dies (when it stops failing, Chromium no longer crashes and the guard may go); the second
that with it the read falls back to a whole one, and the page lives.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import PageTarget
from tests.support.tabs import new_tab
from webmcp.desktop import live_view
from webmcp.desktop.observer_take import FrameMoves
from webmcp.view.build import BlockIds

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# Changed text and a changed attribute inside the body: the take names those elements.
_CHANGE = (
    "for (const el of [...document.querySelectorAll('body *')].filter((e) => !e.children.length).slice(0, 6))"
    " { el.textContent = 'changed'; el.setAttribute('data-x', '1'); }"
)


async def _load(session: CDPSession, url: str) -> None:
    loaded = anyio.Event()
    off = session.on("Page.loadEventFired", lambda _p: loaded.set())
    try:
        await session.send("Page.navigate", {"url": url})
        with anyio.fail_after(10):
            await loaded.wait()
    finally:
        off()


async def _page(connection: Connection, url: str) -> tuple[PageTarget, FrameMoves, anyio.Event]:
    """A tab showing `url` with the observer; what its frames do, and an event set if its renderer dies."""
    session = await new_tab(connection)
    moves = FrameMoves()
    session.on("Page.frameStartedNavigating", moves.started)
    session.on("Page.frameNavigated", moves.committed)
    session.on("Page.frameStoppedLoading", moves.stopped)
    crashed = anyio.Event()
    session.on("Inspector.targetCrashed", lambda _p: crashed.set())
    await live_view.install_observer(session)
    await _load(session, url)
    assert session.target_id is not None
    return PageTarget(session.target_id, session), moves, crashed


async def _read_across_a_navigation(page: PageTarget, url: str, moves: FrameMoves | None) -> Any:
    """An incremental read after a change, the page navigating to `url` (and loading) right after the take answered."""
    session = page.session
    ids = BlockIds()
    last = await live_view.read_page(page, 0, ids)
    settled = await live_view.read_changes(page, last, ids, moves)  # the load's changes taken
    last = settled if settled is not None else last
    await session.send("Runtime.evaluate", {"expression": _CHANGE})
    send = session.send
    navigated = False

    async def navigating_after_the_take(method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        nonlocal navigated
        reply = await send(method, params, **kw)
        if method == "Runtime.callFunctionOn" and params and "serializationOptions" in params and not navigated:
            navigated = True
            await _load(session, url)
        return reply

    session.send = navigating_after_the_take  # type: ignore[method-assign,assignment]
    try:
        with anyio.move_on_after(5):
            return await live_view.read_changes(page, last, ids, moves)
    finally:
        session.send = send  # type: ignore[method-assign]
        assert navigated, "the take ran: the read reached the point the navigation comes in"


async def test_chromium_dies_when_a_replaced_documents_element_is_queried(connection: Connection, site: str) -> None:
    url = f"{site}/kitchen/"
    page, _moves, crashed = await _page(connection, url)
    await _read_across_a_navigation(page, url, None)
    with anyio.fail_after(10):
        await crashed.wait()


async def test_a_read_across_a_navigation_falls_back_and_the_page_lives(connection: Connection, site: str) -> None:
    url = f"{site}/kitchen/"
    page, moves, crashed = await _page(connection, url)
    read = await _read_across_a_navigation(page, url, moves)
    assert read is None, "the frame navigated during the take: its elements are not read"
    reply = await page.session.send("Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True})
    assert reply["result"]["value"] == "complete"
    # A whole read of the new document works, and a crash would have been reported by now.
    assert (await live_view.read_page(page, 1, BlockIds())).view is not None
    await anyio.sleep(0.3)
    assert not crashed.is_set()
