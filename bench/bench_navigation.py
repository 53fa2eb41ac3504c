#!/usr/bin/env python
"""Back/forward from the back-forward cache, and a form tool that posts to another page (issue 9).

    python bench/bench_navigation.py            # 10 rounds
    python bench/bench_navigation.py -n 20

One headless Chromium (WebMCP on) with two tabs on the Harbor Kitchen sample pages, which
send `Cache-Control: no-cache` as a real server does, so Back restores from the cache:

* bridge: MCP client -> `python -m webmcp --cdp-url <ws> <site>/kitchen/` over stdio; it
  times `{tab}__navigate {go: back}` and `{go: forward}` (menu <-> order page) and `{tab}__place_order`,
  whose form posts to a confirmation page that answers with JSON-LD;
* raw: this process's own CDP session on the other tab: `Page.navigateToHistoryEntry` until
  `Page.frameNavigated` (type BackForwardCacheRestore), and `WebMCP.invokeTool` until the
  matching `WebMCP.toolResponded`.

Rounds interleave the two paths. Prints a markdown table (median, p90, min, max in ms).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/bench_navigation.py` from a checkout
    sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from bench.bench_tool_call import BenchError, percentile, start_site_process  # noqa: E402
from cdp_bridge.connection import CDPSession, Connection  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402

STEP_TIMEOUT = 20.0
ORDER = {"dish": "chowder", "quantity": 1, "pickup": "18:30"}


def _row(label: str, samples: list[float]) -> str:
    return (
        f"| {label} | {statistics.median(samples):.1f} | {percentile(samples, 90):.1f} | "
        f"{min(samples):.1f} | {max(samples):.1f} |"
    )


async def _timed(work: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    with anyio.fail_after(STEP_TIMEOUT):
        await work()
    return (time.perf_counter() - started) * 1000


class RawTab:
    """One page target driven over raw CDP: history moves and tool calls, each to its event."""

    def __init__(self, session: CDPSession) -> None:
        self.session = session

    async def goto(self, url: str) -> None:
        async with self.session.expect("Page.loadEventFired") as loaded:
            await self.session.send("Page.navigate", {"url": url})
            await loaded.wait(STEP_TIMEOUT)

    async def history(self, step: int) -> None:
        history = await self.session.send("Page.getNavigationHistory")
        entry = history["entries"][history["currentIndex"] + step]["id"]
        async with self.session.expect(
            "Page.frameNavigated", lambda p: p.get("type") == "BackForwardCacheRestore"
        ) as shown:
            await self.session.send("Page.navigateToHistoryEntry", {"entryId": entry})
            await shown.wait(STEP_TIMEOUT)

    async def place_order(self) -> None:
        tree = await self.session.send("Page.getFrameTree")
        frame = tree["frameTree"]["frame"]["id"]
        answered: dict[str, Any] = {}
        done = anyio.Event()

        def responded(params: dict[str, Any]) -> None:
            if params.get("invocationId") == answered.get("id") and not done.is_set():
                answered["output"] = params.get("output")
                done.set()

        off = self.session.on("WebMCP.toolResponded", responded)
        try:
            reply = await self.session.send(
                "WebMCP.invokeTool", {"frameId": frame, "toolName": "place_order", "input": ORDER}
            )
            answered["id"] = reply["invocationId"]
            with anyio.fail_after(STEP_TIMEOUT):
                await done.wait()
        finally:
            off()
        if not answered.get("output"):
            raise BenchError("raw place_order answered without the confirmation page's JSON-LD")


async def bench(rounds: int) -> None:
    site_process, site = await start_site_process()
    browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    try:
        assert browser.ws_url is not None
        async with Connection.connect(browser.ws_url) as connection:
            created = await connection.browser.send("Target.createTarget", {"url": "about:blank"})
            attached = await connection.browser.send(
                "Target.attachToTarget", {"targetId": created["targetId"], "flatten": True}
            )
            raw = RawTab(connection.session(attached["sessionId"], created["targetId"]))
            await raw.session.send("Page.enable")
            await raw.session.send("WebMCP.enable")
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "webmcp", "--cdp-url", browser.ws_url, site + "/kitchen/"],
                env={**os.environ},
            )
            async with Client(params, mode="legacy") as client:
                tab = await _bridge_tab(client, site)
                samples: dict[str, list[float]] = {k: [] for k in ("bb", "bf", "rb", "rf", "bo", "ro")}
                for _ in range(rounds):
                    await _call(client, f"{tab}__navigate", {"url": site + "/kitchen/order.html"})
                    samples["bb"].append(await _timed(lambda: _call(client, f"{tab}__navigate", {"go": "back"})))
                    samples["bf"].append(await _timed(lambda: _call(client, f"{tab}__navigate", {"go": "forward"})))
                    await raw.goto(site + "/kitchen/")
                    await raw.goto(site + "/kitchen/order.html")
                    samples["rb"].append(await _timed(lambda: raw.history(-1)))
                    samples["rf"].append(await _timed(lambda: raw.history(+1)))
                    await _call(client, f"{tab}__navigate", {"url": site + "/kitchen/order.html"})
                    samples["bo"].append(await _timed(lambda: _call(client, f"{tab}__place_order", ORDER)))
                    await raw.goto(site + "/kitchen/order.html")
                    samples["ro"].append(await _timed(raw.place_order))
        _report(rounds, samples)
    finally:
        await browser.close()
        site_process.terminate()
        await site_process.wait()


async def _bridge_tab(client: Client, site: str) -> str:
    with anyio.fail_after(STEP_TIMEOUT):
        while True:
            names = [t.name for t in (await client.list_tools()).tools]
            found = [n.split("__")[0] for n in names if n.endswith("__show_menu")]
            if found:
                return found[0]
            await anyio.sleep(0.1)


async def _call(client: Client, name: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(STEP_TIMEOUT):
        result = await client.call_tool(name, args)
    if result.is_error:
        raise BenchError(f"{name} failed: {result.structured_content}")
    return result


def _report(rounds: int, samples: dict[str, list[float]]) -> None:
    print(f"## Navigation and cross-document form tool ({datetime.date.today()}, {rounds} rounds)")
    print(f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print()
    print("| what | median ms | p90 ms | min ms | max ms |")
    print("|---|---|---|---|---|")
    print(_row("`back` through the bridge (bfcache restore, page shown with its tools)", samples["bb"]))
    print(_row("raw `navigateToHistoryEntry` back, to `frameNavigated`", samples["rb"]))
    print(_row("`forward` through the bridge", samples["bf"]))
    print(_row("raw forward", samples["rf"]))
    print(_row("`place_order` (form posts to a confirmation page) through the bridge", samples["bo"]))
    print(_row("raw `invokeTool` place_order, to `toolResponded`", samples["ro"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--rounds", type=int, default=10)
    args = parser.parse_args()
    try:
        anyio.run(bench, args.rounds)
    except BenchError as exc:
        print(f"bench_navigation: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
