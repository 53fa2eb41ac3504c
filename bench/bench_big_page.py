#!/usr/bin/env python
"""The view of a big page (issue 12, item 2): the whole AX tree against the partial read.

    python bench/bench_big_page.py            # N=10 reads of each kind, interleaved

On `/big.html?rows=3000` (15.5k elements, 41k AX nodes) in one headless Chromium, over the
bridge's own DevTools pipe, it reads the page's view the two ways the bridge can:

- **whole**: `collect_page` without `keep` (one `Accessibility.getFullAXTree`), then `build_view`;
- **partial**: `collect_page(keep=20)` as `read_page` does now (level by level, long runs
  read only as far as the window shows them), then `build_view`.

Both must give the same window state (checked every round). While each read runs, a second
session attached to the same page sends `Runtime.evaluate("0")` back to back: the longest of
those round trips is how long the renderer's main thread was held, at most, by the read.
Then `read_run_range` of 100 rows from the middle of the table (what `read_content` does).

Prints a Markdown table (median / p90 / max). Nothing here is asserted by any test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/bench_big_page.py` from a checkout
    sys.path.insert(0, str(ROOT))

from cdp_bridge.ax import collect_page, read_run_range  # noqa: E402
from cdp_bridge.connection import CDPSession, Connection  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from sample_site import serve_in_thread  # noqa: E402
from webmcp.view.build import BlockIds, build_view  # noqa: E402
from webmcp.view.masking import SECRET_SELECTOR  # noqa: E402

ROWS = 3000


async def _attach(connection: Connection, target_id: str) -> CDPSession:
    reply = await connection._send("Target.attachToTarget", {"targetId": target_id, "flatten": True}, None, 10)
    return connection.session(reply["sessionId"], target_id)


async def _read(session: CDPSession, keep: int | None) -> tuple[float, list[dict[str, Any]]]:
    started = time.perf_counter()
    nodes = await collect_page(session.send, "doc", secret_selector=SECRET_SELECTOR, keep=keep)
    view = build_view(nodes.frames, BlockIds(), secret_values=nodes.secret_values)
    return time.perf_counter() - started, view.blocks


async def _held(probe: CDPSession, read: Any) -> tuple[float, float, Any]:
    """Run `read()` while pinging the renderer; (read seconds, longest ping seconds, read's result)."""
    longest = 0.0
    done = anyio.Event()
    out: dict[str, Any] = {}

    async def ping() -> None:
        nonlocal longest
        while not done.is_set():
            started = time.perf_counter()
            await probe.send("Runtime.evaluate", {"expression": "0"}, timeout=60)
            longest = max(longest, time.perf_counter() - started)

    async def run() -> None:
        out["result"] = await read()
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(ping)
        tg.start_soon(run)
    seconds, result = out["result"]
    return seconds, longest, result


def _row(name: str, values: list[float], unit: float = 1000.0) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
    median = statistics.median(values)
    return f"| {name} | {len(values)} | {median * unit:.0f} | {p90 * unit:.0f} | {values[-1] * unit:.0f} |"


async def main(runs: int) -> None:
    with serve_in_thread() as site:
        async with await launch_browser(LaunchOptions(headless=True)) as browser, browser.connect() as connection:
            created = await connection._send("Target.createTarget", {"url": f"{site}/big.html?rows={ROWS}"}, None, 10)
            session = await _attach(connection, created["targetId"])
            probe = await _attach(connection, created["targetId"])
            with anyio.fail_after(30):
                while True:
                    ready = f"document.querySelectorAll('tbody tr').length === {ROWS}"
                    reply = await session.send("Runtime.evaluate", {"expression": ready, "returnByValue": True})
                    if reply["result"].get("value") is True:
                        break
                    await anyio.sleep(0.1)
            times: dict[str, list[float]] = {"whole": [], "partial": []}
            holds: dict[str, list[float]] = {"whole": [], "partial": []}
            for round_ in range(runs):
                order = ["whole", "partial"] if round_ % 2 == 0 else ["partial", "whole"]
                states = {}
                for kind in order:
                    keep = None if kind == "whole" else 20
                    seconds, longest, blocks = await _held(probe, lambda keep=keep: _read(session, keep))
                    times[kind].append(seconds)
                    holds[kind].append(longest)
                    states[kind] = blocks
                if states["whole"] != states["partial"]:
                    raise SystemExit("the partial read gave another window state than the whole tree")
            doc = await session.send("DOM.getDocument", {"depth": 0})
            table = await session.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "#orders"})
            backend = (await session.send("DOM.describeNode", {"nodeId": table["nodeId"]}))["node"]["backendNodeId"]
            frame = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            later: list[float] = []
            later_holds: list[float] = []
            for _ in range(runs):

                async def rows() -> tuple[float, Any]:
                    started = time.perf_counter()
                    part = await read_run_range(session.send, frame, backend, 1500, 100, keep=20)
                    return time.perf_counter() - started, part

                seconds, longest, _part = await _held(probe, rows)
                later.append(seconds)
                later_holds.append(longest)
    print(f"/big.html?rows={ROWS}, {runs} runs each, interleaved; ms")
    print()
    print("| measure | N | median | p90 | max |")
    print("|---|---:|---:|---:|---:|")
    print(_row("view read, whole tree (`getFullAXTree`)", times["whole"]))
    print(_row("view read, partial (level by level, runs cut at 20)", times["partial"]))
    print(_row("renderer held, longest, during a whole-tree read", holds["whole"]))
    print(_row("renderer held, longest, during a partial read", holds["partial"]))
    print(_row("100 rows from the middle, read on demand (`read_run_range`)", later))
    print(_row("renderer held, longest, during that read", later_holds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", "--runs", type=int, default=10)
    anyio.run(main, parser.parse_args().runs)
