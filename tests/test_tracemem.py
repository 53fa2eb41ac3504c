"""The hidden memory hook: off unless named; once tracing, each dump says what is held and what grew."""

from __future__ import annotations

import os
import signal
import tracemalloc
from pathlib import Path

import anyio
import pytest

from webmcp import tracemem


def test_the_hook_is_off_unless_the_variable_names_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tracemem.ENV, raising=False)
    assert tracemem.requested() is None
    monkeypatch.setenv(tracemem.ENV, "")
    assert tracemem.requested() is None
    monkeypatch.setenv(tracemem.ENV, "/tmp/dump.txt")
    assert tracemem.requested() == "/tmp/dump.txt"


_held: list[bytes] = []


def _dumps(path: Path) -> int:
    return sum(line.startswith("=== ") for line in path.read_text().splitlines()) if path.exists() else 0


def _allocate_and_keep() -> None:
    _held.extend(bytes(1000) + bytes([i % 256]) for i in range(3000))  # ~3 MB kept


@pytest.mark.anyio
async def test_sigusr1_starts_tracing_then_each_dump_names_the_line_that_grew(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    was_tracing = tracemalloc.is_tracing()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(tracemem.dump_on_signal, str(dump))
            await anyio.sleep(0.05)  # the receiver is installed
            for step in range(3):
                os.kill(os.getpid(), signal.SIGUSR1)
                # The bridge's worker thread writes the file and tells no one: poll it, bounded.
                with anyio.fail_after(30):
                    while not (tracemalloc.is_tracing() if step == 0 else _dumps(dump) == step):  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                if step == 1:
                    _allocate_and_keep()
            tg.cancel_scope.cancel()
    finally:
        _held.clear()
        if not was_tracing:
            tracemalloc.stop()
    text = dump.read_text()
    assert _dumps(dump) == 2
    grown = text.split("grown since the previous dump:")[1]
    assert "test_tracemem.py" in grown.splitlines()[1], grown[:400]
