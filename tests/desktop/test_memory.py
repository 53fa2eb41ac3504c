"""What the tabs keep of their pages, and the memory closed tabs held handed back (webmcp/desktop/memory.py)."""

from __future__ import annotations

import threading
import weakref

import anyio
import pytest

import webmcp.desktop.memory as memory_module
from webmcp.desktop.memory import GiveBack, KeptReads, trim


@pytest.fixture(autouse=True)
def _short_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "QUIET", 0.01)


class Recorder:
    """Counts hand-backs (run in a worker thread, as the real one); `gate` holds each until set."""

    def __init__(self) -> None:
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def __call__(self) -> None:
        self.started.set()
        assert self.gate.wait(5)
        self.calls += 1


@pytest.mark.anyio
async def test_a_run_of_closes_is_handed_back_once() -> None:
    recorder = Recorder()
    async with anyio.create_task_group() as tg:
        give_back = GiveBack(tg, recorder)
        for _ in range(49):
            give_back.closed()
    assert recorder.calls == 1


@pytest.mark.anyio
async def test_a_close_while_the_memory_is_handed_back_is_handed_back_after() -> None:
    recorder = Recorder()
    recorder.gate.clear()
    async with anyio.create_task_group() as tg:
        give_back = GiveBack(tg, recorder)
        give_back.closed()
        await anyio.to_thread.run_sync(recorder.started.wait, 5)
        give_back.closed()  # the first hand-back is under way: this one waits its own turn
        recorder.gate.set()
    assert recorder.calls == 2


@pytest.mark.anyio
async def test_a_failed_hand_back_ends_nothing_and_the_next_close_is_handed_back() -> None:
    calls: list[str] = []

    def failing() -> None:
        calls.append("failed")
        raise OSError("no allocator here")

    async with anyio.create_task_group() as tg:
        give_back = GiveBack(tg, failing)
        give_back.closed()
    async with anyio.create_task_group() as tg:
        give_back._give_back = lambda: calls.append("handed back")
        give_back._tg = tg
        give_back.closed()
    assert calls == ["failed", "handed back"]


def test_the_hand_back_collects_cycles_then_trims_glibcs_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[int] = []
    monkeypatch.setattr(memory_module, "_malloc_trim", lambda: trims.append)

    class Cycle:
        me: object = None

    cycle = Cycle()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    del cycle
    trim()
    assert gone() is None and trims == [0]


def test_without_glibc_the_hand_back_only_collects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module.ctypes, "CDLL", _no_library)
    assert memory_module._malloc_trim() is None
    trim()


def _no_library(_name: str) -> None:
    raise OSError("no libc here")


class View:
    """A tab's live view as `KeptReads` sees it: counts its sheds."""

    def __init__(self) -> None:
        self.sheds = 0

    def shed(self) -> None:
        self.sheds += 1


def test_only_the_views_read_last_keep_their_nodes() -> None:
    kept = KeptReads(keep=2)
    first, second, third = View(), View(), View()
    kept.read(first)
    kept.read(second)
    kept.read(first)  # read again: now the latest
    kept.read(third)
    assert (first.sheds, second.sheds, third.sheds) == (0, 1, 0)
    kept.read(second)
    assert (first.sheds, second.sheds, third.sheds) == (1, 1, 0)


def test_a_closed_views_place_goes_to_the_others() -> None:
    kept = KeptReads(keep=2)
    first, second, third = View(), View(), View()
    kept.read(first)
    kept.read(second)
    kept.closed(second)
    kept.read(third)
    assert (first.sheds, second.sheds, third.sheds) == (0, 0, 0)
