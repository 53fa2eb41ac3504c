"""The bridge's own dealings with a tab's page, as notices in its window (a part of the tab: parts.py).

A fault while following the page, popups the bridge closed, page tools left out for the
per-window caps, and page tools that cannot be offered, each with why (docs/security.md).
The part owns the counts it shows: nothing else writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from webmcp.desktop.mirror import ToolMirror
from webmcp.desktop.parts import Part
from webmcp.models import notice_block
from webmcp.untrusted.page_limits import quote_page_text

__all__ = ["BridgeNotices"]

_UNUSABLE_NOTICES = 5
"""At most this many notices name unusable page tools one by one; one more counts the rest."""


class BridgeNotices(Part):
    """Faults, closed popups and page tools not offered, for one tab."""

    def __init__(
        self,
        tab_id: str,
        mirror: ToolMirror,
        changed: Callable[[], None],
        opened: Callable[[], None] = lambda: None,
    ) -> None:
        """`changed` is called when a count the window shows moved; `opened` when the page opened a tab."""
        self._tab_id = tab_id
        self._mirror = mirror
        self._changed = changed
        self._opened = opened
        self._faults = 0
        self._fault_name = ""
        self._window_opens = 0
        self._unsolicited_opens = 0
        self._popups_closed = 0

    @property
    def window_opens(self) -> int:
        """How many times the page called window.open (or the like); tabs it opens arrive later."""
        return self._window_opens

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        session.on("Page.windowOpen", self._window_opened)
        return []

    def _window_opened(self, params: dict[str, Any]) -> None:
        self._window_opens += 1
        # As a popup blocker would: no click and no agent call asked for it (docs/security.md).
        if not params.get("userGesture") and not self._mirror.in_flight:
            self._unsolicited_opens += 1
        self._opened()

    def take_unsolicited_popup(self) -> bool:
        """A tab this page opened has come: True (and counted as closed) when nobody asked for it."""
        if self._unsolicited_opens <= 0:
            return False
        self._unsolicited_opens -= 1
        self._popups_closed += 1
        self._changed()
        return True

    def fault(self, exc: BaseException) -> None:
        """The bridge failed while following this page: say so in the window (the details are logged)."""
        self._faults += 1
        self._fault_name = type(exc).__name__
        self._changed()

    def notices(self) -> list[dict[str, Any]]:
        """Notices about the page's tools that are not listed, and why, and about the bridge's faults."""
        notices: list[dict[str, Any]] = []
        if self._faults:
            notices.append(
                notice_block(
                    "bridge-fault",
                    "warn",
                    f"The bridge hit an error ({self._fault_name}) while following this page; what this window "
                    "shows may be out of date. Reload the tab to start afresh.",
                )
            )
        if self._popups_closed:
            notices.append(
                notice_block(
                    "popups-closed",
                    "warn",
                    f"The page tried to open {self._popups_closed} tab(s) on its own, without a click and "
                    "outside an agent's call; the bridge closed them, as a popup blocker would.",
                )
            )
        capped = self._mirror.listed()[2]
        if capped:
            reach = (
                f"{self._tab_id}__list_page_tools lists them all with their schemas, and "
                f"{self._tab_id}__call_page_tool calls any of them by name."
            )
            notices.append(notice_block("tools-capped", "warn", f"{capped} {reach}"))
        unusable = sorted(self._mirror.unusable.items(), key=lambda kv: kv[1].handle)
        for n, (key, tool) in enumerate(unusable):
            if n == _UNUSABLE_NOTICES:
                notices.append(
                    notice_block(
                        "tools-unusable-more", "warn", f"{len(unusable) - n} more page tools cannot be offered."
                    )
                )
                break
            text = quote_page_text(tool.display_name, self._mirror.origin_of(key[1]), what="tool name")
            notices.append(
                notice_block(
                    f"tool-unusable-{tool.handle}", "warn", f"{text} cannot be offered as a tool: {tool.reason}"
                )
            )
        return notices
