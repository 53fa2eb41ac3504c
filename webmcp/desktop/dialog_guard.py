"""Keeping a page from trapping its tab with JavaScript dialogs.

A page that opens dialogs in a loop (`for (;;) alert()`) blocks its tab for good: each
answer brings the next dialog. Like Chrome, which offers "Prevent this page from creating
additional dialogs" from a page's second dialog on, the bridge counts each tab's dialogs
per document; once `BURST` of them came within `BURST_WINDOW` seconds, the dialog window
also offers `stop_dialogs`. After that, the document's further dialogs are answered at
once by the bridge (dismissed; a "Leave page?" is answered Leave, as Chrome does) and the
tab shows a notice saying so. A navigation or reload (a new document) lifts the stop.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from webmcp.models import notice_block

__all__ = ["BURST", "BURST_WINDOW", "DialogGuard"]

BURST = 3
"""The dialog of one document from which the dialog window offers to stop further ones."""
BURST_WINDOW = 30.0
"""Seconds within which `BURST` dialogs count as repeated."""


class DialogGuard:
    """One tab's dialog count per document, and whether its dialogs are stopped."""

    def __init__(self) -> None:
        self._times: deque[float] = deque(maxlen=BURST)
        self._doc = -1
        self._stopped_doc: int | None = None
        self.suppressed = 0
        """Dialogs the bridge answered by itself since the stop."""

    def opened(self, doc_seq: int, now: float) -> bool:
        """Count a dialog of document `doc_seq`; True when it repeats (offer `stop_dialogs`)."""
        if doc_seq != self._doc:
            self._times.clear()
            self._doc = doc_seq
        self._times.append(now)
        return len(self._times) == BURST and now - self._times[0] <= BURST_WINDOW

    def stop(self, doc_seq: int) -> None:
        """Answer the further dialogs of document `doc_seq` without asking anyone."""
        self._stopped_doc = doc_seq
        self.suppressed = 0

    def stopped(self, doc_seq: int) -> bool:
        """True while the dialogs of document `doc_seq` are stopped."""
        return self._stopped_doc == doc_seq

    def notices(self, doc_seq: int) -> list[dict[str, Any]]:
        """The tab's notice block while its dialogs are stopped (none otherwise)."""
        if not self.stopped(doc_seq):
            return []
        text = (
            "This page's further dialogs are dismissed automatically (a 'Leave page?' is answered Leave), "
            f"{self.suppressed} so far; reload or navigate the tab to allow dialogs again."
        )
        return [notice_block("dialogs-stopped", "warn", text)]
