"""A hidden debugging hook for memory: `WEBMCP_TRACEMALLOC=PATH` (off by default).

With it set, the first SIGUSR1 starts tracing the bridge's Python allocations (`tracemalloc`,
8 frames; from the start it would slow start-up past a client's patience). On each later
SIGUSR1 it collects garbage, asks glibc to hand free memory back (`malloc_trim`: RSS before
and after tells what the allocator keeps from what is held), then appends to PATH the 30
lines holding the most of what was allocated since tracing began and is still held, and the
30 that grew most since the previous SIGUSR1. `bench/memory.py --trace` uses it to find
what a long run keeps. Tracing costs time and memory: never on in a measure.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    import tracemalloc

__all__ = ["ENV", "dump_on_signal", "requested"]

ENV = "WEBMCP_TRACEMALLOC"
_TOP = 30


def requested() -> str | None:
    """The dump file `WEBMCP_TRACEMALLOC` names, or None when the hook is off."""
    return os.environ.get(ENV) or None


async def dump_on_signal(path: str) -> None:
    """On the first SIGUSR1 start tracing; on each later one append the top lines and the growth
    to `path`. Runs until cancelled."""
    previous: tracemalloc.Snapshot | None = None
    with anyio.open_signal_receiver(signal.SIGUSR1) as signals:
        async for _ in signals:
            import tracemalloc  # here: its imports (pickle, linecache) would cost every start

            if not tracemalloc.is_tracing():
                tracemalloc.start(8)
                continue
            previous = await anyio.to_thread.run_sync(_dump, path, previous)


def _rss_kb() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def _trim() -> None:
    """Hand the allocator's free memory back to the system (glibc only), to tell it from held memory."""
    import ctypes.util  # here, as tracemalloc: not on every start

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _dump(path: str, previous: tracemalloc.Snapshot | None) -> tracemalloc.Snapshot:
    import linecache
    import tracemalloc

    gc.collect()
    before = _rss_kb()
    _trim()
    # The dump's own allocations (the snapshot, the source lines it quotes) are not the bridge's.
    own = [tracemalloc.Filter(False, module.__file__ or "") for module in (tracemalloc, linecache)]
    snapshot = tracemalloc.take_snapshot().filter_traces(own)
    held = sum(stat.size for stat in snapshot.statistics("filename"))
    lines = [
        f"=== {time.strftime('%H:%M:%S')} held {held / 1e6:.2f} MB of what was allocated since tracing began; "
        f"RSS {before / 1024:.1f} MB, {_rss_kb() / 1024:.1f} MB after malloc_trim",
        "top:",
    ]
    lines += [f"  {stat}" for stat in snapshot.statistics("lineno")[:_TOP]]
    if previous is not None:
        lines.append("grown since the previous dump:")
        lines += [f"  {stat}" for stat in snapshot.compare_to(previous, "lineno")[:_TOP]]
        lines.append("grown, by traceback (top 5):")
        for stat in snapshot.compare_to(previous, "traceback")[:5]:
            lines.append(f"  {stat.size_diff / 1e3:+.1f} kB, {stat.count_diff:+d} blocks")
            lines += [f"    {frame}" for frame in stat.traceback.format()]
    linecache.clearcache()
    with open(path, "a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return snapshot
