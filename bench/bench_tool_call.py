#!/usr/bin/env python
"""Page-tool call latency through the bridge, next to a raw WebMCP round trip (issue 2).

    python bench/bench_tool_call.py                  # N=200 calls of list_tickets each way
    python bench/bench_tool_call.py -n 500 --tool get_queue_summary   # a read that leaves the page as it is
    # any page and tool, two checkouts interleaved (A/B), chrome-devtools-mcp beside them:
    python bench/bench_tool_call.py --site meridian --page /shop/ --tool search_products --args '{"query": ""}'
        --bridge /work/main --bridge . --devtools -n 300
    python bench/bench_tool_call.py --static DIR --page /index.html --tool NAME --args '{}'
    # a page-changing tool, each call changing something new as bench/peers calls it:
    python bench/bench_tool_call.py --site meridian --page /app/tasks.html --tool move_task --changing --vary
        --bridge /work/main --bridge . --devtools -n 20 --warmup 0

Each bridge gets a headless Chromium (WebMCP on) of its own, shared with its raw path, on the
same page and the same tool:

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
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
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


async def start_site_process(static: str | None, site: str = "sample") -> tuple[anyio.abc.Process, str]:
    """The sample site (`python -m sample_site --port 0`), the benchmark's Meridian (`bench.site`), or
    `static` served by `http.server`, in a child process; returns it and its base URL."""
    if static is None:
        module = {"sample": "sample_site", "meridian": "bench.site"}[site]
        command = [sys.executable, "-u", "-m", module, "--host", "127.0.0.1", "--port", "0"]
    else:
        # http.server announces its port on stdout: "Serving HTTP on 127.0.0.1 port N (http://…/) ..."
        command = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", static]
    process = await anyio.open_process(command, cwd=str(ROOT), stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    buffer = b""
    with anyio.fail_after(SETUP_TIMEOUT):
        while b"\n" not in buffer:
            chunk = await process.stdout.receive()
            buffer += chunk
    line = buffer.decode().splitlines()[0]  # "Harbor Help Desk listening on http://127.0.0.1:PORT/  (…)"
    url = next((w.strip("()") for w in line.split() if w.strip("(").startswith("http://")), "").rstrip("/")
    if not url:
        raise BenchError(f"the site did not announce its URL: {line!r}")
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


async def attach_raw(connection: Connection, page_url: str) -> tuple[RawWebMCP, str]:
    """Attach to the page target showing `page_url` and enable WebMCP there."""
    with anyio.fail_after(SETUP_TIMEOUT):
        while True:
            targets = (await connection.browser.send("Target.getTargets"))["targetInfos"]
            page = next((t for t in targets if t["type"] == "page" and t["url"].startswith(page_url)), None)
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


class BridgeUnderTest:
    """One checkout's bridge (`--cdp-url`, its code by PYTHONPATH) on a Chromium of its own, and the
    raw CDP floor attached to the same page."""

    def __init__(self, label: str, code: Path) -> None:
        self.label = label
        self.code = code
        self.name = ""
        self.client: Client | None = None
        self.raw: RawWebMCP | None = None
        self.connection: Connection | None = None

    async def open(self, stack: AsyncExitStack, page_url: str, tool: str) -> str:
        browser = await stack.enter_async_context(await launch_browser(LaunchOptions(headless=True, debugging="port")))
        self.connection = await stack.enter_async_context(Connection.connect(browser.ws_url))
        version = await self.connection.browser.send("Browser.getVersion")
        command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, page_url]
        env = {**os.environ, "PYTHONPATH": str(self.code)}
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(self.code))
        self.client = client = await stack.enter_async_context(
            Client(params, mode="legacy", cache=None, read_timeout_seconds=CALL_TIMEOUT)
        )
        with anyio.fail_after(SETUP_TIMEOUT):
            while not self.name:
                names = [t.name for t in (await client.list_tools()).tools]
                self.name = next((x for x in names if x.endswith("__" + tool)), "")
                if not self.name:
                    await anyio.sleep(0.05)
        self.raw, _target = await attach_raw(self.connection, page_url)
        return str(version["product"])

    async def call(self, args: dict[str, Any]) -> Any:
        assert self.client is not None
        result = await self.client.call_tool(self.name, args)
        if result.is_error:
            raise BenchError(f"{self.label}: bridge call failed: {result.structured_content}")
        return (result.structured_content or {}).get("result")

    async def read_windows(self) -> int:
        assert self.client is not None
        result = await self.client.read_resource("app://windows")
        text = result.contents[0].text  # type: ignore[union-attr]
        json.loads(text)
        return len(text)


async def open_devtools(stack: AsyncExitStack, page_url: str, tool: str) -> Any:
    """chrome-devtools-mcp (bench/peers) on `page_url`, once it lists `tool`."""
    from bench.peers.subjects import ChromeDevtoolsMcp

    workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-devtools-")))
    devtools = ChromeDevtoolsMcp(workdir, page_url)
    await devtools.open()
    stack.push_async_callback(devtools.close)
    await devtools.ready(SETUP_TIMEOUT)
    await devtools.navigate(page_url)
    await devtools._wait_page_tool(tool, SETUP_TIMEOUT)
    return devtools


def _varied(tool: str) -> Callable[[int], dict[str, Any]]:
    """The arguments of the i-th call of bench/peers' page-changing `tool` (each call changes something new)."""
    from bench.peers.measures import BENCH_PAGES

    found = [p.changing for p in BENCH_PAGES if p.changing is not None and p.changing.tool == tool]
    if not found:
        raise BenchError(f"--vary: bench/peers has no page-changing call {tool!r}")
    return found[0].args


class _Numbers:
    """The call numbers of one page: its paths (the bridge and raw beside it) never repeat a call."""

    def __init__(self, args_of: Callable[[int], dict[str, Any]]) -> None:
        self.args_of, self.calls = args_of, 0

    def numbered(self, fn: Callable[[dict[str, Any]], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
        async def call() -> Any:
            self.calls += 1
            return await fn(self.args_of(self.calls))

        return call


async def bench(opts: argparse.Namespace) -> None:
    tool = opts.tool
    args = json.loads(opts.args) if opts.args is not None else TOOL_INPUTS.get(tool, {})
    args_of = _varied(tool) if opts.vary else (lambda _i: args)
    if opts.vary:
        args = args_of(0)
    codes = [Path(c).resolve() for c in opts.bridge] or [ROOT]  # noqa: ASYNC240 (before anything runs)
    site_process, site = await start_site_process(opts.static, opts.site)
    page_url = site + opts.page
    subjects = [BridgeUnderTest("AB"[i] if len(codes) > 1 else "bridge", c) for i, c in enumerate(codes)]
    try:
        async with AsyncExitStack() as stack:
            versions = [await s.open(stack, page_url, tool) for s in subjects]
            devtools = await open_devtools(stack, page_url, tool) if opts.devtools else None
            paths: list[tuple[str, Callable[[], Awaitable[Any]]]] = []
            for s in subjects:
                assert s.raw is not None
                raw = s.raw
                # Sanity: both paths give the same answer.
                bridge_answer = await s.call(args)
                raw_answer = (await raw.call(tool, args))["output"]
                differ = set(bridge_answer) != set(raw_answer) if opts.changing else bridge_answer != raw_answer
                if differ:
                    raise BenchError(f"the two paths disagree:\n bridge {bridge_answer}\n raw    {raw_answer}")
                page = _Numbers(args_of)
                paths.append((f"{s.label}", page.numbered(s.call)))
                paths.append((f"raw {s.label}", page.numbered(partial(raw.call, tool))))
            if devtools is not None:
                paths.append(("devtools", _Numbers(args_of).numbered(partial(devtools.page_tool, tool))))
            samples: dict[str, list[float]] = {label: [] for label, _ in paths}
            for _ in range(opts.warmup):
                for _label, fn in paths:
                    await fn()
            for i in range(opts.n):
                k = i % len(paths)  # rotate which path goes first
                for label, fn in paths[k:] + paths[:k]:
                    samples[label].append(await timed(fn))
            windows_s = {s.label: [await timed(s.read_windows) for _ in range(opts.n)] for s in subjects}
            windows_size = {s.label: await s.read_windows() for s in subjects}
    finally:
        site_process.terminate()
        with anyio.move_on_after(5):
            await site_process.wait()
        if site_process.returncode is None:
            site_process.kill()

    today = datetime.date.today().isoformat()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{today}, {versions[0]}, headless, {os.cpu_count()} CPUs, load average {load} at the end, "
        f"Python {platform.python_version()}; page {opts.page}, tool `{tool}` {json.dumps(args)}; "
        f"N={opts.n} after {opts.warmup} warm-up rounds, paths rotated each round\n"
    )
    for s in subjects:
        print(f"- {s.label}: {s.code}")
    print("\n| path | N | median ms | p90 ms | p99 ms | min ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in subjects:
        b, r = samples[s.label], samples[f"raw {s.label}"]
        print(row(f"{s.label}: MCP `tools/call` over stdio → `{tool}`", b))
        print(row(f"raw CDP beside {s.label}: `WebMCP.invokeTool` → `toolResponded`", r))
        print(row(f"{s.label} overhead (pairwise bridge − raw)", [x - y for x, y in zip(b, r, strict=True)]))
    if devtools is not None:
        print(row(f"chrome-devtools-mcp `execute_webmcp_tool` → `{tool}`", samples["devtools"]))
    for s in subjects:
        print(row(f"{s.label}: `resources/read app://windows` ({windows_size[s.label]} bytes)", windows_s[s.label]))
    for s in subjects:
        ratio = statistics.median(samples[s.label]) / statistics.median(samples[f"raw {s.label}"])
        print(f"\n{s.label}: median bridge/raw ratio {ratio:.2f}x", end="")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="timed calls per path (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed rounds first (default 20)")
    parser.add_argument("--tool", default="list_tickets", help="the page tool (default list_tickets)")
    parser.add_argument(
        "--changing",
        action="store_true",
        help="the tool changes the page: its two first answers need only have the same keys (a cart's count grows)",
    )
    parser.add_argument("--args", help="its arguments as JSON (default: the sample site's, else {})")
    parser.add_argument(
        "--vary",
        action="store_true",
        help="each call with the next arguments of bench/peers' page-changing call of --tool (with --changing)",
    )
    parser.add_argument(
        "--site", choices=("sample", "meridian"), default="sample", help="the sample site, or bench/site (Meridian)"
    )
    parser.add_argument("--static", metavar="DIR", help="serve DIR with http.server instead of the sample site")
    parser.add_argument("--page", default="/", help="the page's path on the site (default /)")
    parser.add_argument(
        "--bridge",
        action="append",
        default=[],
        metavar="CHECKOUT",
        help="the bridge code to run (PYTHONPATH); twice for an interleaved A/B (default: this checkout)",
    )
    parser.add_argument("--devtools", action="store_true", help="chrome-devtools-mcp beside it (bench/peers)")
    opts = parser.parse_args()
    try:
        anyio.run(bench, opts, backend="asyncio")
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
