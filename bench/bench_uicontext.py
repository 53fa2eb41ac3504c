"""Benchmark of the UI-context extension (issue 5): `ui://current` and `ui://locate/{id}` latency.

    python bench/bench_uicontext.py [--runs 40] [--nodes 20000]

Starts the sample site, a headless Chromium and the bridge over stdio (as the tests do),
then reads each resource `--runs` times through a real MCP client and prints the median
and 90th percentile, in milliseconds, on the sample site's home page and on
`/huge.html?nodes=N` (a generated page of about N accessibility nodes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import anyio

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # run from a checkout

from cdp_bridge.connection import Connection  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.support.stage import Stage, open_stage, run_site  # noqa: E402


async def _timed(stage: Stage, uri: str, runs: int) -> list[float]:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        await stage.client.read_resource(uri)
        times.append((time.perf_counter() - start) * 1000)
    return times


async def _current(stage: Stage) -> dict[str, Any]:
    return json.loads((await stage.client.read_resource("ui://current")).contents[0].text)


def _walk(element: dict[str, Any]) -> Any:
    yield element
    for child in element.get("children", ()):
        yield from _walk(child)


async def _settled(stage: Stage, title: str) -> dict[str, Any]:
    """`current` once the shown tab's document is in it (the bridge's own snapshot has finished)."""
    with anyio.fail_after(60):
        while True:
            answer = await _current(stage)
            if any(e["role"] == "Document" and e["title"] == title for e in _walk(answer["root"])):
                return answer
            await anyio.sleep(0.2)


async def _ax_count(ws_url: str, url: str) -> int:
    async with Connection.connect(ws_url) as conn:
        targets = (await conn.browser.send("Target.getTargets"))["targetInfos"]
        target = next(t for t in targets if t["type"] == "page" and t["url"] == url)
        attached = await conn.browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        session = conn.session(attached["sessionId"])
        nodes = (await session.send("Accessibility.getFullAXTree", timeout=120))["nodes"]
        await conn.browser.send("Target.detachFromTarget", {"sessionId": attached["sessionId"]})
        return len(nodes)


async def main(runs: int, nodes: int) -> list[tuple[str, float, float]]:
    rows: list[tuple[str, float, float]] = []
    with run_site() as site:
        browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
        try:
            async with open_stage(site, browser, "auto") as stage:
                page = await stage.user_page("/")
                for path, title in (
                    ("/", "Harbor Help Desk — Ticket queue"),
                    (f"/huge.html?nodes={nodes}", "Harbor Help Desk — Archive"),
                ):
                    await page.goto(site + path)
                    await page.hover("h1")
                    answer = await _settled(stage, title)
                    label = (
                        "sample site /"
                        if path == "/"
                        else f"huge.html ({await _ax_count(browser.ws_url, site + path)} AX nodes)"
                    )
                    times = await _timed(stage, "ui://current", runs)
                    rows.append((f"current, {label}", statistics.median(times), _p90(times)))
                    heading = next(e for e in _walk(answer["root"]) if "hovered" in e.get("states", ()))
                    times = await _timed(stage, f"ui://locate/{heading['id']}", runs)
                    rows.append((f"locate, {label}", statistics.median(times), _p90(times)))
        finally:
            await browser.close()
    return rows


def _p90(times: list[float]) -> float:
    return sorted(times)[max(0, int(len(times) * 0.9) - 1)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=20000)
    args = parser.parse_args()
    table = anyio.run(main, args.runs, args.nodes)
    print(f"| read (runs={args.runs}) | median ms | p90 ms |")
    print("|---|---:|---:|")
    for name, median, p90 in table:
        print(f"| {name} | {median:.1f} | {p90:.1f} |")
