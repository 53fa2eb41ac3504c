#!/usr/bin/env python
"""Page-tool call latency through the bridge, next to a raw WebMCP round trip (issue 2).

    python bench/bench_tool_call.py                  # N=200 calls of list_tickets each way
    python bench/bench_tool_call.py -n 500 --tool get_queue_summary   # a read that leaves the page as it is

One headless Chromium (WebMCP on) is shared by both paths, on the same page and the same tool:

* bridge: MCP client -> `python -m webmcp --cdp-url <ws> <site>/` over stdio -> Chromium
  -> page -> back (`tools/call {tab}__list_tickets`);
* raw:    this process's own CDP connection attached to the same page target:
  `WebMCP.invokeTool` + waiting for the matching `WebMCP.toolResponded`.

After a warm-up the two kinds of calls are interleaved (alternating which goes first), so
both see the same browser, page and site state. A read of `app://windows` is timed too.
The sample site runs in a child process so that its HTTP work does not share this event loop.
Prints a markdown table (median, p90, p99, min in ms).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/bench_tool_call.py` from a checkout
    sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from cdp_bridge.connection import CDPSession, Connection  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402

CALL_TIMEOUT = 10.0
SETUP_TIMEOUT = 30.0
TOOL_INPUTS: dict[str, dict[str, Any]] = {
    "list_tickets": {"status": "all"},
    "get_ticket": {"id": 101},
    "get_queue_summary": {},
}


class BenchError(Exception):
    """The benchmark could not run as intended; the message says why."""


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of `samples`."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def row(label: str, samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return (
        f"| {label} | {len(ms)} | {statistics.median(ms):.2f} | {percentile(ms, 90):.2f} | "
        f"{percentile(ms, 99):.2f} | {min(ms):.2f} |"
    )


async def start_site_process() -> tuple[anyio.abc.Process, str]:
    """`python -m sample_site --port 0` in a child process; returns it and its base URL."""
    process = await anyio.open_process(
        [sys.executable, "-u", "-m", "sample_site", "--host", "127.0.0.1", "--port", "0"],
        cwd=str(ROOT),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    buffer = b""
    with anyio.fail_after(SETUP_TIMEOUT):
        while b"\n" not in buffer:
            chunk = await process.stdout.receive()
            buffer += chunk
    line = buffer.decode().splitlines()[0]  # "Harbor Help Desk listening on http://127.0.0.1:PORT/  (…)"
    url = next((w for w in line.split() if w.startswith("http://")), "").rstrip("/")
    if not url:
        raise BenchError(f"the sample site did not announce its URL: {line!r}")
    return process, url


class RawWebMCP:
    """invokeTool + matching toolResponded on one page session."""

    def __init__(self, session: CDPSession, frame_id: str) -> None:
        self.session = session
        self.frame_id = frame_id
        self._responded: dict[str, dict[str, Any]] = {}
        self._waiters: dict[str, anyio.Event] = {}
        session.on("WebMCP.toolResponded", self._on_responded)

    def _on_responded(self, params: dict[str, Any]) -> None:
        invocation = params.get("invocationId", "")
        self._responded[invocation] = params
        waiter = self._waiters.get(invocation)
        if waiter is not None:
            waiter.set()

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        reply = await self.session.send(
            "WebMCP.invokeTool",
            {"frameId": self.frame_id, "toolName": tool, "input": args},
            timeout=CALL_TIMEOUT,
        )
        invocation = reply["invocationId"]
        if invocation not in self._responded:
            waiter = self._waiters[invocation] = anyio.Event()
            with anyio.fail_after(CALL_TIMEOUT):
                await waiter.wait()
            del self._waiters[invocation]
        params = self._responded.pop(invocation)
        if params.get("status") != "Completed":
            raise BenchError(f"raw {tool} call ended {params.get('status')}: {params}")
        return params


async def attach_raw(connection: Connection, site: str) -> tuple[RawWebMCP, str]:
    """Attach to the page target at `site`/ and enable WebMCP there."""
    with anyio.fail_after(SETUP_TIMEOUT):
        while True:
            targets = (await connection.browser.send("Target.getTargets"))["targetInfos"]
            page = next((t for t in targets if t["type"] == "page" and t["url"].startswith(site + "/")), None)
            if page is not None:
                break
            await anyio.sleep(0.05)
    attached = await connection.browser.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})
    session = connection.session(attached["sessionId"], page["targetId"])
    tree = await session.send("Page.getFrameTree")
    raw = RawWebMCP(session, tree["frameTree"]["frame"]["id"])
    await session.send("WebMCP.enable")
    return raw, page["targetId"]


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    with anyio.fail_after(CALL_TIMEOUT):
        await fn()
    return time.perf_counter() - start


async def bench(n: int, warmup: int, tool: str) -> None:
    args = TOOL_INPUTS[tool]
    site_process, site = await start_site_process()
    try:
        async with (
            await launch_browser(LaunchOptions(headless=True, debugging="port")) as browser,
            Connection.connect(browser.ws_url) as connection,
        ):
            version = await connection.browser.send("Browser.getVersion")
            command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, site + "/"]
            params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ), cwd=str(ROOT))
            async with Client(params, mode="legacy", cache=None, read_timeout_seconds=CALL_TIMEOUT) as client:
                name = ""
                with anyio.fail_after(SETUP_TIMEOUT):
                    while not name:
                        names = [t.name for t in (await client.list_tools()).tools]
                        name = next((x for x in names if x.endswith("__" + tool)), "")
                        if not name:
                            await anyio.sleep(0.05)
                raw, _target = await attach_raw(connection, site)

                async def via_bridge() -> None:
                    result = await client.call_tool(name, args)
                    if result.is_error:
                        raise BenchError(f"bridge call failed: {result.structured_content}")

                async def via_raw() -> None:
                    await raw.call(tool, args)

                async def read_windows() -> None:
                    result = await client.read_resource("app://windows")
                    json.loads(result.contents[0].text)

                # Sanity: both paths give the same answer.
                bridge_answer = (await client.call_tool(name, args)).structured_content["result"]
                raw_answer = (await raw.call(tool, args))["output"]
                if bridge_answer != raw_answer:
                    raise BenchError(f"the two paths disagree:\n bridge {bridge_answer}\n raw    {raw_answer}")

                for _ in range(warmup):
                    await via_bridge()
                    await via_raw()
                    await read_windows()
                bridge_s: list[float] = []
                raw_s: list[float] = []
                for i in range(n):
                    pair = [(bridge_s, via_bridge), (raw_s, via_raw)]
                    for samples, fn in pair if i % 2 == 0 else reversed(pair):
                        samples.append(await timed(fn))
                windows_s = [await timed(read_windows) for _ in range(n)]
                windows_size = len((await client.read_resource("app://windows")).contents[0].text)

    finally:
        site_process.terminate()
        with anyio.move_on_after(5):
            await site_process.wait()
        if site_process.returncode is None:
            site_process.kill()

    overhead = [b - r for b, r in zip(bridge_s, raw_s, strict=True)]
    today = datetime.date.today().isoformat()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{today}, {version['product']}, headless, {os.cpu_count()} CPUs, load average {load} at the end, "
        f"Python {platform.python_version()}; "
        f"tool `{tool}` {json.dumps(args)}; N={n} after {warmup} warm-up rounds\n"
    )
    print("| path | N | median ms | p90 ms | p99 ms | min ms |")
    print("|---|---:|---:|---:|---:|---:|")
    print(row(f"bridge: MCP `tools/call` over stdio → `{tool}`", bridge_s))
    print(row("raw CDP: `WebMCP.invokeTool` → `toolResponded`", raw_s))
    print(row("bridge overhead (pairwise bridge − raw)", overhead))
    print(row(f"bridge: `resources/read app://windows` ({windows_size} bytes)", windows_s))
    print(f"\nmedian bridge/raw ratio: {statistics.median(bridge_s) / statistics.median(raw_s):.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="timed calls per path (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed rounds first (default 20)")
    parser.add_argument("--tool", choices=sorted(TOOL_INPUTS), default="list_tickets")
    opts = parser.parse_args()
    try:
        anyio.run(bench, opts.n, opts.warmup, opts.tool, backend="asyncio")
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # noqa: BLE001 - report plainly
        cause = exc
        while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
            cause = cause.exceptions[0]
        print(f"bench failed: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
