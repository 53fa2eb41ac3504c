"""What the bridge keeps of its tabs' pages, and the memory it hands back.

A tab's last read keeps every AX node of its frames (~2.3 kB of Python objects a node: 1-4 MB
on an article page) so that a change is read again only where it happened. Kept for every tab,
that was 2.9 MB of the bridge's RSS per open tab on the corpus pages (`bench/memory.py`: 50
tabs, 215 MB; before incremental reads, 105 MB). So only the `KEEP_READS` tabs read last keep
their nodes (`KeptReads`); another tab's next read is a whole one, as every read was before.

When tabs close, Python frees what they held, but the allocators keep the memory: pymalloc's
arenas that still hold one live object, and glibc's heap above them. So once tabs have closed
and none has closed for a moment, the bridge collects the cycles the tabs were in (their
watchers and views refer to each other) and asks glibc to return its free pages
(`GiveBack`, `malloc_trim`; nothing elsewhere).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

__all__ = ["KEEP_READS", "QUIET", "GiveBack", "KeptReads", "Sheds", "trim"]

logger = logging.getLogger(__name__)

KEEP_READS = 8
"""Tabs whose last read keeps its nodes: those an agent works in are read after each call."""

QUIET = 2.0
"""Seconds without another close before the memory is handed back (closing 49 tabs is one hand-back)."""


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def trim() -> None:
    """Collect garbage and hand glibc's free memory back to the system (a no-op elsewhere)."""
    gc.collect()
    malloc_trim = _malloc_trim()
    if malloc_trim is not None:
        malloc_trim(0)


class GiveBack:
    """Hands memory back `QUIET` seconds after the last of a run of closes (`closed`)."""

    def __init__(self, task_group: TaskGroup, give_back: Callable[[], None] = trim) -> None:
        self._tg = task_group
        self._give_back = give_back
        self._another: anyio.Event | None = None
        """Set by a close while the last one's quiet period runs (None: none runs)."""

    def closed(self) -> None:
        """A tab closed: its memory goes back once no other has closed for `QUIET` seconds."""
        if self._another is not None:
            self._another.set()
            return
        self._another = anyio.Event()
        self._tg.start_soon(self._after_the_closes)

    async def _after_the_closes(self) -> None:
        try:
            while True:
                with anyio.move_on_after(QUIET) as quiet:
                    assert self._another is not None
                    await self._another.wait()
                if quiet.cancelled_caught:
                    break
                self._another = anyio.Event()
        finally:
            self._another = None  # a close from now on is handed back after this one
        try:
            # In a worker thread: malloc_trim walks the whole heap (the collection holds the GIL
            # anyway, a few ms for the bridge's heap).
            await anyio.to_thread.run_sync(self._give_back)
        except Exception:  # noqa: BLE001 - memory not handed back is no fault of any window
            logger.debug("handing memory back failed", exc_info=True)


class Sheds(Protocol):
    """A tab's live view, as `KeptReads` sees it."""

    def shed(self) -> None:
        """Let the last read's nodes go: the next read is a whole one."""


class KeptReads:
    """The `keep` tab views read last keep their last read's nodes; the one read longest ago sheds."""

    def __init__(self, keep: int | None = None) -> None:
        self._keep = KEEP_READS if keep is None else keep
        self._order: OrderedDict[int, Sheds] = OrderedDict()

    def read(self, view: Sheds) -> None:
        """`view` has just been read (it keeps its nodes now)."""
        self._order[id(view)] = view
        self._order.move_to_end(id(view))
        while len(self._order) > self._keep:
            _key, oldest = self._order.popitem(last=False)
            oldest.shed()

    def closed(self, view: Sheds) -> None:
        """`view`'s tab closed: it keeps nothing any more."""
        self._order.pop(id(view), None)
