#!/usr/bin/env python
"""The semantic view's costs (issue 4), in one run on one headless Chromium.

    python bench/bench_view.py            # N=25 runs of each timed figure

1. Window state size of /big.html?rows=3000 as the agent reads it (budget: 16 KB).
2. Building a tab's view (`collect_page` + `build_view`, what the bridge does on every
   change) vs `Accessibility.getFullAXTree` alone, on the same page, interleaved.
3. Reading `app://windows` through a real MCP client with 20 tabs open and nothing changing.
4. A DOM change in the page → `resources/updated` at the MCP client.

Prints a markdown table (median / p90 in ms). No figure here is asserted by any test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/bench_view.py` from a checkout
    sys.path.insert(0, str(ROOT))

from playwright.async_api import Error as PlaywrightError  # noqa: E402

from cdp_bridge.ax import collect_page  # noqa: E402
from cdp_bridge.errors import ProtocolError  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.support.stage import Stage, _find_tab, open_stage, run_site  # noqa: E402
from webmcp.view.build import BlockIds, build_view  # noqa: E402
from webmcp.view.masking import SECRET_SELECTOR  # noqa: E402


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


async def _state_size(stage: Stage) -> int:
    doc = await stage.wait_windows(
        lambda d: (
            (w := _find_tab(d, stage.site + "/big.html")) is not None
            and any(b.get("total") == 3000 for b in w["blocks"])
        ),
        timeout=60,
    )
    window = _find_tab(doc, stage.site + "/big.html")
    return len(json.dumps(window, ensure_ascii=False, separators=(",", ":")).encode())


async def _build_vs_ax(stage: Stage, runs: int) -> tuple[list[float], list[float]]:
    page = await stage.user_page("/big.html")
    cdp = await page.context.new_cdp_session(page)

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(await cdp.send(method, params))
        except PlaywrightError as exc:
            raise ProtocolError(method, -1, str(exc)) from exc

    tree = await send("Page.getFrameTree", {})
    frame_id = tree["frameTree"]["frame"]["id"]
    ids = BlockIds()
    build: list[float] = []
    raw: list[float] = []
    for i in range(runs + 2):
        order = ("build", "raw") if i % 2 else ("raw", "build")
        for kind in order:
            start = time.perf_counter()
            if kind == "raw":
                await send("Accessibility.getFullAXTree", {"frameId": frame_id})
            else:
                nodes = await collect_page(send, "bench", secret_selector=SECRET_SELECTOR)
                build_view(nodes.frames, ids, secret_values=nodes.secret_values)
            elapsed = (time.perf_counter() - start) * 1000
            if i >= 2:  # warm-up
                (raw if kind == "raw" else build).append(elapsed)
    await cdp.detach()
    return build, raw


async def _change_to_notification(stage: Stage, runs: int) -> list[float]:
    page = await stage.user_page("/ticket.html")
    await stage.tab_for("/ticket.html")
    samples: list[float] = []
    for i in range(runs + 2):
        seen = stage.mcp.notifications.count("resource_updated")
        start = time.perf_counter()
        await page.evaluate(f"document.querySelector('h1').textContent = 'Ticket heading {i}'")
        await stage.mcp.notifications.wait_for("resource_updated", after=seen, timeout=10)
        if i >= 2:
            samples.append((time.perf_counter() - start) * 1000)
        # Let the bridge go quiet before the next change (bounded).
        with anyio.move_on_after(0.3):
            await stage.mcp.notifications.wait_for("resource_updated", after=seen + 1, timeout=5)
    return samples


async def _idle_reads(stage: Stage, runs: int) -> tuple[list[float], int]:
    context = stage.user.contexts[0]
    while len([w for w in (await stage.windows())["windows"] if not w["modal"]]) < 20:
        page = await context.new_page()
        await page.goto(stage.site + "/ticket.html?id=102", wait_until="load")
    await stage.wait_windows(lambda d: len(d["windows"]) >= 20 and all(w["blocks"] for w in d["windows"]), 60)
    with anyio.move_on_after(2):  # let the last refreshes land
        while True:
            await stage.mcp.notifications.wait_for("resource_updated", timeout=5)
    samples: list[float] = []
    size = 0
    for _ in range(runs + 3):
        start = time.perf_counter()
        result = await stage.client.read_resource("app://windows")
        samples.append((time.perf_counter() - start) * 1000)
        size = len(result.contents[0].text)
    return samples[3:], size


async def main(runs: int) -> None:
    """Run every figure and print the table."""
    process = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    try:
        with run_site() as site:
            async with open_stage(site, process, "auto", start_path="/big.html?rows=3000") as stage:
                size = await _state_size(stage)
                build, raw = await _build_vs_ax(stage, runs)
                nav = await stage.call(
                    f"{_find_tab(await stage.windows(), site + '/big.html')['id']}__navigate",
                    {"url": site + "/ticket.html?id=101"},
                )
                assert not nav.is_error
                change = await _change_to_notification(stage, runs)
                reads, doc_size = await _idle_reads(stage, runs)
    finally:
        await process.close()
    b_med, b_p90 = _stats(build)
    r_med, r_p90 = _stats(raw)
    rows = [
        ("window state of /big.html?rows=3000", f"{size / 1024:.1f} KB", "", "≤ 16 KB"),
        (
            f"build view, /big.html?rows=3000 (runs={runs})",
            f"{b_med:.0f}",
            f"{b_p90:.0f}",
            f"{b_med / r_med:.2f}× of getFullAXTree (≤ 1.3×)",
        ),
        (f"Accessibility.getFullAXTree alone (runs={runs})", f"{r_med:.0f}", f"{r_p90:.0f}", ""),
        (
            f"read app://windows, 20 idle tabs, {doc_size / 1024:.0f} KB (runs={runs})",
            f"{_stats(reads)[0]:.1f}",
            f"{_stats(reads)[1]:.1f}",
            "< 5 ms",
        ),
        (
            f"DOM change → resources/updated at the client (runs={runs})",
            f"{_stats(change)[0]:.0f}",
            f"{_stats(change)[1]:.0f}",
            "< 150 ms",
        ),
    ]
    print("| figure | median ms | p90 ms | note |\n|---|---:|---:|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--runs", type=int, default=25)
    anyio.run(main, parser.parse_args().runs)
