"""Navigations of a tab: navigate, back, forward and reload, each until the page has loaded.

A navigation may make the page ask first (beforeunload), and a page may alert while it
loads: then the navigation returns the dialog in `openedWindowIds` instead of waiting on
it, because the page now waits for the agent. Every wait is bounded by `navigation`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = ["check_url", "history", "navigate", "reload"]


Start = Callable[[], Awaitable["str | ToolResult | None"]]
"""Starts a navigation: its loaderId, None when the loader is not known, or a finished answer."""


def check_url(policy: OriginPolicy, url: str) -> None:
    """Refuse a URL the origin policy does not allow (local schemes, blocked origins) with validation_failed."""
    decision = policy.check(url)
    if not decision.allowed:
        raise ToolError(
            "validation_failed",
            f"The bridge does not open {cap_text(url, 200)!r}: {decision.reason}",
            fields=[{"field": "url", "error": decision.reason}],
        )


async def navigate(tab: Tab, url: str) -> ToolResult:
    """Load `url` in `tab`."""
    check_url(tab.desktop.policy, url)

    async def start() -> str | ToolResult | None:
        reply = await tab.page.session.send("Page.navigate", {"url": url}, timeout=tab.timeouts.navigation)
        if reply.get("errorText"):
            raise ToolError("browser_error", f"Could not load {url}: {reply['errorText']}", detail=reply["errorText"])
        if not reply.get("loaderId"):
            return ToolResult(message=f"{tab.id} moved to {url} within the page.")
        return str(reply["loaderId"])

    return await _run(tab, "navigate", start)


async def history(tab: Tab, step: int) -> ToolResult:
    """Go `step` entries through `tab`'s history (-1 back, +1 forward)."""
    action = "back" if step < 0 else "forward"

    async def start() -> None:
        session = tab.page.session
        entries_reply = await session.send("Page.getNavigationHistory")
        index = entries_reply["currentIndex"] + step
        entries = entries_reply["entries"]
        if not 0 <= index < len(entries):
            raise ToolError(
                "action_not_available",
                f"{tab.id} has no {'previous' if step < 0 else 'next'} page in its history.",
            )
        await session.send(
            "Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]}, timeout=tab.timeouts.navigation
        )

    return await _run(tab, action, start)


async def reload(tab: Tab) -> ToolResult:
    """Reload `tab`'s page."""

    async def start() -> None:
        await tab.page.session.send("Page.reload", {}, timeout=tab.timeouts.navigation)

    return await _run(tab, "reload", start)


async def _run(tab: Tab, action: str, start: Start) -> ToolResult:
    session = tab.page.session
    limit = tab.timeouts.navigation
    watch = _LoadWatch(tab.page.target_id)
    unsubscribe = [
        session.on("Page.frameNavigated", watch.committed),
        session.on("Page.navigatedWithinDocument", watch.moved_within),
        session.on("Page.loadEventFired", watch.loaded),
    ]
    try:
        with tab.refresher_held():  # the page is read once, when it has loaded (below), not while it loads
            finished, started = await tab.desktop.unless_dialog(tab, start, limit)
            if not finished:
                return tab.dialog_answer(f"{action} waits") or ToolResult(
                    message=f"{tab.id} is still loading after {limit:g} s."
                )
            if isinstance(started, ToolResult):
                return started
            finished, _ = await tab.desktop.unless_dialog(tab, lambda: watch.wait(started), limit)
            if not finished:
                return tab.dialog_answer(f"{action} is under way") or ToolResult(
                    message=f"{tab.id} is still loading after {limit:g} s."
                )
    finally:
        for off in unsubscribe:
            off()
    tab.mark_dirty()
    await tab.refresh()
    shown = watch.url or tab.page.url or "the page"
    return ToolResult(message=f"{tab.id} now shows {shown} (version {tab.window.version}).")


class _LoadWatch:
    """Main-frame commits and load events of one tab, in the order the browser sent them.

    A navigation's own load is the first load after *its* commit: a load event still due
    from the page being left (say, a slow iframe) must not count as the new page's. A page
    restored from the back-forward cache fires no load (its commit says so), and a
    same-document move (`#fragment`, `history.pushState`) commits nothing: each ends the
    wait at once.
    """

    def __init__(self, main_frame: str) -> None:
        self.main_frame = main_frame
        self.events: list[tuple[str, str]] = []
        self.url = ""
        self.changed = anyio.Event()

    def _add(self, kind: str, loader_id: str = "") -> None:
        self.events.append((kind, loader_id))
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def committed(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self.url = str(frame.get("url", ""))
            restored = params.get("type") == "BackForwardCacheRestore"
            self._add("restored" if restored else "commit", str(frame.get("loaderId", "")))

    def moved_within(self, params: dict[str, Any]) -> None:
        if params.get("frameId") in (self.main_frame, None):
            self.url = str(params.get("url", ""))
            self._add("within")

    def loaded(self, _params: dict[str, Any]) -> None:
        self._add("load")

    def _done(self, loader_id: str | None) -> bool:
        seen_commit = False
        for kind, loader in self.events:
            if kind in ("restored", "within") and loader_id is None:
                return True
            if kind == "commit" and (loader_id is None or loader == loader_id):
                seen_commit = True
            elif kind == "load" and seen_commit:
                return True
        return False

    async def wait(self, loader_id: str | None) -> None:
        """Until the load that follows the commit of `loader_id` (any commit when None)."""
        while not self._done(loader_id):
            await self.changed.wait()
