"""What a part of a tab is: the lifecycle it reacts to and what it adds to the window.

A `Tab` is made of parts, each owning its state (the view, the navigator, the modal stack,
the tool mirror, file choosers, sign-in prompts, permission requests, data requests,
downloads, the bridge's own notices). The tab keeps them in one list and tells them, in
that list's order, in one loop each:

    watch(session)   a session (the page's own, or an OOPIF's) is followed: its set-up steps
    committed(doc)   a new main-frame document committed
    frame_left(id)   a child frame committed another document (what its last one held goes)
    crashed()        the renderer died (the tab stays, showing that it crashed)
    closing()        the tab is going away

and composes the window from what they add: `notices()` (blocks under the address) and
`modal_ids()` (the modal windows of theirs open over the tab, which the effects path
compares before and after a write). A part reacts only to what concerns it: `Part` gives
every hook a no-op, so a part overrides what it needs. A new kind of prompt is one file
with one part, and one line in `Tab.__init__` that registers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession

__all__ = ["Commit", "Part", "TabPart"]


@dataclass(frozen=True)
class Commit:
    """A new document committed in the tab's main frame."""

    seq: int
    """The tab's document count, this one included."""
    url: str
    frame_id: str
    session: CDPSession
    restored: bool
    """Brought back from the back/forward cache: already parsed and loaded."""


class TabPart(Protocol):
    """A part of a tab: told of the tab's lifecycle, adding its notices and modal windows."""

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        """Follow `session` (`main`: the page's own): subscribe, and return the set-up steps to send."""

    def committed(self, doc: Commit) -> None: ...
    def frame_left(self, frame_id: str) -> None: ...
    def crashed(self) -> None: ...
    def closing(self) -> None: ...
    def notices(self) -> list[dict[str, Any]]:
        """The blocks this part adds to the tab's window (after the address), in order."""

    def modal_ids(self) -> list[str]:
        """The window ids of this part's modal windows open over the tab now, oldest first."""


class Part:
    """A `TabPart` that reacts to nothing: a part derives from it and overrides what concerns it."""

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        return []

    def committed(self, doc: Commit) -> None:
        return None

    def frame_left(self, frame_id: str) -> None:
        return None

    def crashed(self) -> None:
        return None

    def closing(self) -> None:
        return None

    def notices(self) -> list[dict[str, Any]]:
        return []

    def modal_ids(self) -> list[str]:
        return []
