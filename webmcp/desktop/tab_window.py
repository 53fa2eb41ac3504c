"""A tab's published window: its title, summary and blocks, composed from the view and the parts.

`TabWindow` owns the tab's `WindowState`: nothing else writes it (tests/desktop/test_ownership.py).
It composes the window from the document's latest view and what the tab's parts add (their
notices), like a browser's frame around a page: the title, the address bar, a loading line,
and a notice instead of the page when the origin policy keeps it from agents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdp_bridge.targets import PageTarget
from webmcp.desktop.life import TabLife
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.windows import WindowState
from webmcp.models import address_block, notice_block
from webmcp.untrusted.page_limits import MAX_TITLE_BYTES
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.build import View
from webmcp.view.shown import Shown
from webmcp.view.shown import page_blocks as page_blocks_of
from webmcp.view.summary import summarize_tab

__all__ = ["CRASH_NOTICE", "TabWindow"]

CRASH_NOTICE = "This page crashed (its renderer process died). Use reload to load it again, or close."


class TabWindow:
    """The window of one tab, composed on demand (`compose`) and when the tab's title changes."""

    def __init__(
        self,
        window_id: str,
        page: PageTarget,
        life: TabLife,
        policy: OriginPolicy,
        *,
        loading: Callable[[], bool],
        notices: Callable[[], list[dict[str, Any]]],
        changed: Callable[[], None],
        shown: Callable[[], bool] = lambda: True,
    ) -> None:
        """`loading`: the document has not fired its load event; `notices`: the parts' blocks;
        `changed`: the published state changed (tell the listeners); `shown`: the document has
        painted something of its own (a person sees more than a blank page)."""
        self._state = WindowState(id=window_id, title=page.title or page.url or "New tab")
        self._page = page
        self._life = life
        self._policy = policy
        self._loading = loading
        self._notices = notices
        self._changed = changed
        self._painted = shown
        self._expected_url = ""
        """Before its first commit, the address the tab was sent to (start pages)."""
        self._page_blocks: list[dict[str, Any]] = []
        self._shown = Shown()  # what the window showed of the last view (`page_blocks_of`)
        self._blocked_for: tuple[str | None, str | None] = (None, None)
        """The address `blocked` last decided, and its answer."""

    @property
    def state(self) -> WindowState:
        """The window as `app://windows` shows it (read it; only this class writes it)."""
        return self._state

    def page_blocks(self) -> list[dict[str, Any]]:
        """The blocks of the page's own content the window shows now, without the bridge's address bar and
        notices (none while the page is not shown to agents)."""
        return [] if self.blocked() is not None else self._page_blocks

    def blocked(self) -> str | None:
        """Why the page the tab shows may not be shown to agents (the origin policy), or None."""
        url = self._life.address
        # Asked on every call and every read: decided once per address (the policy is fixed).
        if url != self._blocked_for[0]:
            # Chromium's own error page (a start page or navigation that failed) says what failed: shown.
            shown = url and url != "about:blank" and not url.startswith("chrome-error:")
            decision = self._policy.check(url) if shown else None
            self._blocked_for = (url, None if decision is None or decision.allowed else decision.reason)
        return self._blocked_for[1]

    def document_title(self, view: View | None) -> str:
        """The title of the document shown now; a page without `<title>` is titled by its address."""
        title, url = self._page.title, self._page.url
        address = self._life.address
        # Only a view of this very document (the view goes at each commit).
        if view is not None and view.title and view.url == address:
            return view.title
        if _bare(url) != _bare(address):
            return address  # the target's title is still the document's that the tab left
        # Chromium gives the address (without "http://" or a bare trailing "/") as the title of a
        # page without <title>, and of one whose <title> it has not reported (yet).
        if title and _bare(title) != _bare(url):
            return title
        return address or "New tab"

    def retitle(self, view: View | None) -> None:
        # A page's title is its own text: capped (a 200,000-character title stays a title).
        title = cap_text(self.document_title(view), MAX_TITLE_BYTES)
        if title != self._state.title:
            self._state.title = title
            self._changed()

    def expect(self, url: str, view: View | None) -> None:
        """The tab is about to load `url`: until a document commits, the window says it is loading it."""
        self._expected_url = url
        self.compose(view)

    def compose(self, view: View | None) -> None:
        """The window from `view`, the document's latest read (None: nothing of it read yet)."""
        self.retitle(view)
        address, loading = self._life.address, self._loading()
        # A start page on its way: the blank document shown meanwhile is not what the tab is for.
        expected = self._expected_url if address in ("", "about:blank") else ""
        summary = summarize_tab(
            self._state.title, expected or address, None if expected else view, loading or bool(expected)
        )
        # Chromium leaves everything behind a showModal() dialog out of the AX tree; the page
        # is still there (inert, under the backdrop), so the tab keeps showing what it showed.
        if view is None:
            self._page_blocks = []
        elif not view.modals:
            self._page_blocks = page_blocks_of(view, self._shown)
        page_blocks = self._page_blocks
        state: list[dict[str, Any]] = []
        blocked = self.blocked()
        if blocked is not None:
            # Title and address only: the page's content and tools stay with the person at the browser.
            summary = f"This page is not shown to agents: {blocked}"
            page_blocks = [notice_block("blocked", "warn", summary)]
        elif expected:
            text = f"Loading {cap_text(expected, 300)}: its server has not answered yet."
            state.append(notice_block("loading", "info", text))
        elif loading and address not in ("", "about:blank"):
            if view is None:
                text = "Loading: nothing of this page has been read yet."
            elif not self._painted():
                text = (
                    "Loading: nothing of this page has rendered yet (it waits for a script or a style sheet); "
                    "what its document holds so far is shown, and this window follows the page."
                )
            else:
                text = "Still loading: what has rendered is shown, and this window follows the page as it goes on."
            state.append(notice_block("loading", "info", text))
        # Like a browser's address bar: the agent always knows where the tab is.
        self._publish(summary, [address_block(address), *state, *self._notices(), *page_blocks])

    def crashed(self) -> None:
        """The renderer died: the window says so, with the address, until a new document is read."""
        summary = "This page crashed; reload the tab to load it again, or close it."
        self._publish(
            summary, [address_block(self._life.address), notice_block("crashed", "error", CRASH_NOTICE)], force=True
        )

    def _publish(self, summary: str, blocks: list[dict[str, Any]], *, force: bool = False) -> None:
        if force or summary != self._state.summary or blocks != self._state.blocks:
            self._state.summary = summary
            self._state.blocks = blocks
            self._state.version += 1
            self._changed()


def _bare(address: str) -> str:
    """An address without its scheme and trailing slash, as Chromium shows it in place of a title."""
    return address.split("://", 1)[-1].rstrip("/")
