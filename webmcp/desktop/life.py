"""A tab's life: which document it shows, and whether it can still answer (open, crashed, closed).

One source of truth for a crash: the page target's `crashed` flag, which the target list
sets on `Inspector.targetCrashed` and a new document's commit clears. `TabLife` adds what
waiters need (an event each wait can be woken by) and the document count and address that
every part and answer reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from cdp_bridge.targets import PageTarget

__all__ = ["TabLife"]


class TabLife:
    """Whether a tab can answer, and the main frame's document as of its last commit."""

    def __init__(self, page: PageTarget) -> None:
        self._page = page
        self._closed = False
        self._gone = anyio.Event()
        self._crash = anyio.Event()
        """Set when the renderer crashed; replaced by a fresh one when a new document commits."""
        self._wakers: set[anyio.Event] = set()
        self._doc_seq = 0
        self._doc_url = ""
        """The address of the document shown, from its commit (the target's info may lag behind it)."""

    @property
    def doc_seq(self) -> int:
        """Counts the main frame's documents: it moves on every cross-document navigation."""
        return self._doc_seq

    @property
    def address(self) -> str:
        """The address of the document the tab shows now."""
        return self._doc_url or self._page.url

    def ended(self) -> str | None:
        """ "crashed" or "closed" once the tab can no longer answer, else None."""
        if self._page.crashed:
            return "crashed"
        return "closed" if self._closed else None

    def committed(self, url: str) -> int:
        """A new main-frame document committed at `url` (a reload after a crash brings a new renderer)."""
        self._doc_seq += 1
        self._doc_url = url
        self._page.crashed = False
        if self._crash.is_set():
            self._crash = anyio.Event()
        return self._doc_seq

    def moved_within(self, url: str) -> None:
        """The document moved to `url` without a new one (history.pushState, a fragment)."""
        self._doc_url = url or self._doc_url

    def crashed(self) -> None:
        """The renderer died (the target list has marked the page crashed)."""
        self._crash.set()
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._gone.set()
        self._wake()

    @property
    def closed(self) -> bool:
        """The tab closed (its target went away)."""
        return self._closed

    async def until_gone(self) -> None:
        await self._gone.wait()

    async def until_crashed(self) -> None:
        await self._crash.wait()

    async def until_ended(self) -> None:
        """Returns once the tab closed or its renderer crashed."""
        ended = anyio.Event()
        with self.woken_by_its_end(ended):
            await ended.wait()

    @contextmanager
    def woken_by_its_end(self, event: anyio.Event) -> Iterator[None]:
        """Within the block, `event` is set too when the tab closes or its renderer crashes."""
        if self.ended() is not None:
            event.set()
        self._wakers.add(event)
        try:
            yield
        finally:
            self._wakers.discard(event)

    def _wake(self) -> None:
        for event in list(self._wakers):
            event.set()
