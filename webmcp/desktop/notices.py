"""Notices a tab's window shows about the bridge's own dealings with its page.

A fault while following the page, popups the bridge closed, page tools left out for the
per-window caps, and page tools that cannot be offered, each with why (docs/security.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webmcp.untrusted.page_limits import quote_page_text

if TYPE_CHECKING:
    from webmcp.desktop.tab import Tab

__all__ = ["tool_notices"]

_UNUSABLE_NOTICES = 5
"""At most this many notices name unusable page tools one by one; one more counts the rest."""


def tool_notices(tab: Tab) -> list[dict[str, Any]]:
    """Notices about the page's tools that are not listed, and why, and about the bridge's faults."""
    notices: list[dict[str, Any]] = []
    if tab.faults:
        notices.append(
            {
                "type": "notice",
                "id": "bridge-fault",
                "severity": "warn",
                "text": f"The bridge hit an error ({tab.fault_name}) while following this page; what this window "
                "shows may be out of date. Reload the tab to start afresh.",
            }
        )
    if tab.popups_closed:
        notices.append(
            {
                "type": "notice",
                "id": "popups-closed",
                "severity": "warn",
                "text": f"The page tried to open {tab.popups_closed} tab(s) on its own, without a click and "
                "outside an agent's call; the bridge closed them, as a popup blocker would.",
            }
        )
    _kept, capped = tab.capped_tools()
    if capped:
        reach = (
            f"{tab.id}__list_page_tools lists them all with their schemas, and {tab.id}__call_page_tool calls "
            "any of them by name."
        )
        notices.append({"type": "notice", "id": "tools-capped", "severity": "warn", "text": f"{capped} {reach}"})
    unusable = sorted(tab.mirror.unusable.items(), key=lambda kv: kv[1].handle)
    for n, (key, tool) in enumerate(unusable):
        if n == _UNUSABLE_NOTICES:
            notices.append(
                {
                    "type": "notice",
                    "id": "tools-unusable-more",
                    "severity": "warn",
                    "text": f"{len(unusable) - n} more page tools cannot be offered.",
                }
            )
            break
        text = quote_page_text(tool.display_name, tab.mirror.origin_of(key[1]), what="tool name")
        notices.append(
            {
                "type": "notice",
                "id": f"tool-unusable-{tool.handle}",
                "severity": "warn",
                "text": f"{text} cannot be offered as a tool: {tool.reason}",
            }
        )
    return notices
