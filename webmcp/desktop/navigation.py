"""A tab's navigator: navigate, back, forward and reload, each until the page has loaded.

It follows the main frame's navigations (started, committed, stopped, loaded) for the
tab, so it knows whether the page is still loading and when a navigation under way has
shown its page. A navigation may make the page ask first (beforeunload), and a page may
alert while it loads: then the navigation returns the dialog in `openedWindowIds` instead
of waiting on it, because the page now waits for the agent. Every wait is bounded by
`navigation`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.refresher import LiveView
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text

__all__ = ["Navigator", "check_url"]


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


class Navigator:
    """The navigations of one tab's main frame, and the operations that start them."""

    def __init__(
        self,
        tab_id: str,
        page: PageTarget,
        timeouts: Timeouts,
        policy: OriginPolicy,
        modals: ModalStack,
        view: LiveView,
        version: Callable[[], int],
    ) -> None:
        self._tab_id = tab_id
        self._page = page
        self._timeouts = timeouts
        self._policy = policy
        self._modals = modals
        self._view = view
        self._version = version
        self._main_frame = ""
        self._done: anyio.Event | None = None
        """Set when the main frame's cross-document navigation under way has shown its page."""
        self._loading = True

    @property
    def loading(self) -> bool:
        """True while the page shown has not fired its load event."""
        return self._loading

    @property
    def main_frame_id(self) -> str:
        # A page target's id is its main frame's id; the commits tell if that ever differs.
        return self._main_frame or self._page.target_id

    # --- following the main frame ------------------------------------------------------

    def started(self) -> None:
        """The main frame began a cross-document navigation."""
        if self._done is None:
            self._done = anyio.Event()

    def committed(self, frame_id: str, restored: bool) -> None:
        """The main frame committed a new document (`restored` from the back-forward cache)."""
        self._main_frame = frame_id
        # A restored page fires no load event: it is shown as it was.
        self._loading = not restored
        if restored:
            self._shown()

    def stopped(self, frame_id: str) -> None:
        """A frame stopped loading: for the main frame, also the end of an aborted navigation
        (a 204, a download, a blocked URL)."""
        if frame_id == self.main_frame_id:
            self._shown()

    def loaded(self) -> None:
        """The page fired its load event."""
        self._loading = False
        self._shown()

    def attached(self, loaded: bool) -> None:
        """The bridge attached to a page that was already there: its load event may be past."""
        self._loading = not loaded

    def crashed(self) -> None:
        """The renderer died: nothing is loading any more."""
        self._loading = False
        self._shown()

    def _shown(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done.set()

    async def settled(self, budget: float) -> None:
        """Wait, at most `budget` seconds, for a cross-document navigation under way to show its page."""
        done = self._done
        if done is not None:
            with anyio.move_on_after(budget):
                await done.wait()

    # --- operations (the caller holds the tab's lock) ----------------------------------

    async def navigate(self, url: str) -> ToolResult:
        """Load `url` and return once it has loaded (or a dialog stops it)."""
        check_url(self._policy, url)

        async def start() -> str | ToolResult | None:
            reply = await self._page.session.send("Page.navigate", {"url": url}, timeout=self._timeouts.navigation)
            if reply.get("errorText"):
                raise ToolError(
                    "browser_error", f"Could not load {url}: {reply['errorText']}", detail=reply["errorText"]
                )
            if not reply.get("loaderId"):
                return ToolResult(message=f"{self._tab_id} moved to {url} within the page.")
            return str(reply["loaderId"])

        return await self._run("navigate", start)

    async def history(self, step: int) -> ToolResult:
        """Go `step` entries through the tab's history (-1 back, +1 forward)."""
        action = "back" if step < 0 else "forward"

        async def start() -> None:
            session = self._page.session
            entries_reply = await session.send("Page.getNavigationHistory")
            index = entries_reply["currentIndex"] + step
            entries = entries_reply["entries"]
            if not 0 <= index < len(entries):
                raise ToolError(
                    "action_not_available",
                    f"{self._tab_id} has no {'previous' if step < 0 else 'next'} page in its history.",
                )
            await session.send(
                "Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]}, timeout=self._timeouts.navigation
            )

        return await self._run(action, start)

    async def reload(self) -> ToolResult:
        """Reload the page and return once it has loaded."""

        async def start() -> None:
            await self._page.session.send("Page.reload", {}, timeout=self._timeouts.navigation)

        return await self._run("reload", start)

    async def _run(self, action: str, start: Start) -> ToolResult:
        session = self._page.session
        limit = self._timeouts.navigation
        watch = _LoadWatch(self._page.target_id)
        unsubscribe = [
            session.on("Page.frameNavigated", watch.committed),
            session.on("Page.navigatedWithinDocument", watch.moved_within),
            session.on("Page.loadEventFired", watch.loaded),
        ]
        still_loading = ToolResult(message=f"{self._tab_id} is still loading after {limit:g} s.")
        try:
            with self._view.held():  # the page is read once, when it has loaded (below), not while it loads
                finished, started = await self._modals.unless_dialog(start, limit)
                if not finished:
                    return self._modals.dialog_answer(f"{action} waits") or still_loading
                if isinstance(started, ToolResult):
                    return started
                finished, _ = await self._modals.unless_dialog(lambda: watch.wait(started), limit)
                if not finished:
                    return self._modals.dialog_answer(f"{action} is under way") or still_loading
        finally:
            for off in unsubscribe:
                off()
        self._view.mark_dirty()
        await self._view.refresh()
        shown = watch.url or self._page.url or "the page"
        return ToolResult(message=f"{self._tab_id} now shows {shown} (version {self._version()}).")


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
