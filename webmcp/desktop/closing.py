"""Closing a tab, and bringing it to the front: the tab's operations on its target as a whole."""

from __future__ import annotations

import logging

import anyio

from cdp_bridge.targets import PageTarget
from webmcp.desktop.life import TabLife
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.ports import DesktopLink
from webmcp.errors import ToolError, best_effort, cdp_errors
from webmcp.models import ToolResult

__all__ = ["TabCloser"]

logger = logging.getLogger(__name__)


class TabCloser:
    """Close a tab (with or without its page's beforeunload), or bring it to the front."""

    def __init__(self, tab_id: str, page: PageTarget, life: TabLife, modals: ModalStack, desktop: DesktopLink) -> None:
        self._id = tab_id
        self._page = page
        self._life = life
        self._modals = modals
        self._desktop = desktop
        self._timeouts = desktop.timeouts

    async def focus(self) -> ToolResult:
        """Bring the tab to the front."""
        await self._desktop.browser_send("Target.activateTarget", {"targetId": self._page.target_id})
        with best_effort(logger, "Page.bringToFront failed"):
            await self._page.session.send("Page.bringToFront", {}, timeout=self._timeouts.command)
        return ToolResult(message=f"{self._id} is in front.")

    async def close_tab(self) -> ToolResult:
        """Close the tab as a user would (beforeunload runs; its dialog is returned)."""
        # Page.close runs the page's beforeunload handler, as a user's close would. Chromium may
        # also answer a close with success yet keep a tab that is mid-navigation: only the
        # target's destruction counts, with Target.closeTarget as the second try.
        with best_effort(logger, "Page.close failed"):
            await self._page.session.send("Page.close", {}, timeout=self._timeouts.command)
        finished, _ = await self._modals.unless_dialog(self._life.until_gone, 2)
        if not finished and (answer := self._modals.dialog_answer(f"{self._id} did not close yet")) is not None:
            return answer
        if not self._life.closed:
            await self._desktop.browser_send("Target.closeTarget", {"targetId": self._page.target_id})
            with anyio.move_on_after(self._timeouts.navigation):
                await self._life.until_gone()
        if not self._life.closed:
            raise ToolError("browser_error", f"{self._id} did not close; the page may be blocking it.")
        return ToolResult(message=f"Closed {self._id}.")

    async def close_unasked(self, what: str) -> ToolResult:
        """Close the tab without running the page's beforeunload handler (`what`: how it was left)."""
        with cdp_errors(f"closing {self._id}", self._timeouts.command):
            await self._desktop.browser_send("Target.closeTarget", {"targetId": self._page.target_id})
        with anyio.move_on_after(self._timeouts.navigation):
            await self._life.until_gone()
        if not self._life.closed:
            raise ToolError("browser_error", f"{self._id} did not close.")
        return ToolResult(message=f"Closed {self._id} {what}; the page's beforeunload handler was skipped.")
