"""The window model of the GUI bridge protocol (docs/protocols.md#gui-2): windows, owners, operable set.

A tab is a non-modal top-level window; a JavaScript dialog or an in-page modal `<dialog>`
is a modal window owned by its tab; a modal with no owner blocks the whole application.
`operable_ids` is the one authority on what may be operated, and everything else (which
tools are listed, which calls are refused with `blocked_by_modal`) derives from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IdMint", "VersionCheck", "WindowState", "blocker_of", "operable_ids", "top_of_chain"]


@dataclass
class WindowState:
    """One window as `app://windows` shows it."""

    id: str
    title: str
    modal: bool = False
    owner_id: str | None = None
    version: int = 1
    summary: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def owner_closed(self, closed: WindowState) -> None:
        """The window this one lay over (`closed`) went: it lies over that one's owner now."""
        if self.owner_id == closed.id:
            self.owner_id = closed.owner_id
            self.version += 1

    def to_json(self) -> dict[str, Any]:
        """The GUI bridge §4.2 (docs/protocols.md#gui-4.2) Window object."""
        return {
            "id": self.id,
            "title": self.title,
            "modal": self.modal,
            "ownerId": self.owner_id,
            "version": self.version,
            "summary": self.summary,
            "blocks": self.blocks,
        }


@dataclass(frozen=True)
class VersionCheck:
    """A window's version, checked against the page as it is now, for the one call that asked.

    Returned by the window's `check_version` and handed to its `call`: nothing is kept on
    the window between the two, so a check can only ever guard the call it was made for.
    """

    version: int
    inputs: int | None = None
    """The person's input count in the page when the check began (the write guard compares it
    when the tool starts); None when it could not be read or the window has no page."""


class IdMint:
    """Name-safe ids (`[A-Za-z0-9_-]`) that are never reused within a run."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def mint(self, prefix: str) -> str:
        """The next id with `prefix`, e.g. `tab-3`."""
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        return f"{prefix}-{n}"


def _modal_children(windows: Sequence[WindowState], owner: str) -> list[WindowState]:
    return [w for w in windows if w.modal and w.owner_id == owner]


def top_of_chain(windows: Sequence[WindowState], window_id: str) -> str:
    """The id of the newest window in the modal chain that starts at `window_id` (itself if none)."""
    current = window_id
    seen = {current}
    while True:
        children = _modal_children(windows, current)
        # Windows are kept in opening order: the newest modal is the one on top.
        if not children or children[-1].id in seen:
            return current
        current = children[-1].id
        seen.add(current)


def operable_ids(windows: Sequence[WindowState]) -> list[str]:
    """The operable set (GUI bridge §2 (docs/protocols.md#gui-2), §10.2), in the order the windows are kept.

    With an app-level modal (modal, no owner) open, only the top of the newest such
    modal's chain is operable; otherwise the top of every chain and every unblocked window.
    """
    app_modals = [w for w in windows if w.modal and w.owner_id is None]
    if app_modals:
        return [top_of_chain(windows, app_modals[-1].id)]
    return [w.id for w in windows if not _modal_children(windows, w.id)]


def blocker_of(windows: Sequence[WindowState], window_id: str) -> str | None:
    """The id of the window that must be answered before `window_id` can be operated."""
    target = next((w for w in windows if w.id == window_id), None)
    if target is None:
        return None
    operable = operable_ids(windows)
    if window_id in operable:
        return None
    app_modals = [w for w in windows if w.modal and w.owner_id is None]
    if app_modals:
        return operable[0] if operable else app_modals[-1].id
    return top_of_chain(windows, target.id)
