"""Does a catastrophic `pattern` stall the event loop? Python's re in a worker thread vs RE2.

Runs `^(a+)+$` against "a" * N + "!" three ways while an asyncio ticker measures the longest
gap between its wake-ups (the event loop's stall): on the loop, in a worker thread with
Python's `re`, and through `webmcp.untrusted.schema_validate.validate_async` (RE2). Prints the
match time and the loop's longest stall for each.

    .venv/bin/python bench/bench_schema_guard.py [-n 23]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time

from webmcp.untrusted.schema_validate import validate_async

PATTERN = "^(a+)+$"


async def _stall_during(work) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await work()
    elapsed = time.perf_counter() - start
    done.set()
    await task
    return elapsed, max(gaps)


async def main(n: int) -> None:
    text = "a" * n + "!"
    compiled = re.compile(PATTERN)

    async def on_loop() -> None:
        compiled.search(text)

    async def in_thread() -> None:
        await asyncio.to_thread(compiled.search, text)

    async def re2_off_loop() -> None:
        await validate_async({"properties": {"s": {"pattern": PATTERN}}}, {"s": text}, deadline=60)

    await re2_off_loop()  # warm-up: the first validation loads jsonschema's metaschemas
    for label, work in (
        ("re on the loop", on_loop),
        ("re in a thread", in_thread),
        ("RE2 validate_async", re2_off_loop),
    ):
        elapsed, stall = await _stall_during(work)
        print(f"{label:20s} n={n}: match {elapsed * 1000:8.1f} ms, longest loop stall {stall * 1000:8.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=23)
    asyncio.run(main(parser.parse_args().n))
