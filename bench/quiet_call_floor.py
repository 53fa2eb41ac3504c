#!/usr/bin/env python
"""An MCP `ping` and a quiet page tool, through bridges A/B and chrome-devtools-mcp, interleaved (issue 22).

    .venv/bin/python bench/quiet_call_floor.py /work/main .        # the sample site's get_queue_summary
    .venv/bin/python bench/quiet_call_floor.py /work/main . --site meridian --page /shop/ \\
        --tool search_products --args '{"query": "", "maxResults": 40}'

Each bridge is started as the peers bench starts it (`webmcp-bridge --headless URL` over
stdio, its code by PYTHONPATH, the browser on its debugging pipe) and driven by the same
`mcp.Client` (`mode="legacy"`) as chrome-devtools-mcp beside them. Each round, each subject
answers one `ping` (the floor of one MCP round trip) and one call of the tool; the order of
the subjects rotates every round. `--raw` adds the floor of `bench/peers` (raw.py: the tool by
`WebMCP.invokeTool` on a Chromium of its own, no MCP), which has no ping; `--bare` the least MCP
server in front of that same floor (peers/bare_server.py: hand-written JSON-RPC over stdio, no
SDK, no state read), so that `bare − raw` is what one MCP round trip of this client costs. Prints
medians with p10–p90 in ms, the medians of each server's per-round differences from
chrome-devtools-mcp, raw and the first bridge, and the load average.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/quiet_call_floor.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.bench_tool_call import start_site_process  # noqa: E402
from bench.peers.mcp_subject import McpSubject  # noqa: E402
from bench.peers.raw import RawCdp  # noqa: E402
from bench.peers.subjects import ChromeDevtoolsMcp  # noqa: E402

SETUP_TIMEOUT = 60.0
BRIDGE = str(Path(sys.executable).parent / "webmcp-bridge")


async def run(opts: argparse.Namespace) -> None:
    args: dict[str, Any] = json.loads(opts.args)
    process, site = await start_site_process(None, opts.site)
    url = site + opts.page
    closing: list[Callable[[], Awaitable[None]]] = []
    subjects: list[tuple[str, McpSubject | None, Callable[[], Awaitable[Any]]]] = []
    try:
        for code in (str(Path(c).resolve()) for c in opts.bridge):  # noqa: ASYNC240 (before anything runs)
            subject = McpSubject([BRIDGE, "--headless", url], Path(tempfile.mkdtemp()), {"PYTHONPATH": code})
            await subject.open()
            closing.append(subject.close)
            names = await subject.wait_tools(lambda n: any(x.endswith("__" + opts.tool) for x in n), SETUP_TIMEOUT)
            name = next(x for x in names if x.endswith("__" + opts.tool))
            subjects.append((code, subject, lambda s=subject, n=name: s.call(n, args)))
        devtools = ChromeDevtoolsMcp(Path(tempfile.mkdtemp()), url)
        await devtools.open()
        closing.append(devtools.close)
        await devtools.ready(SETUP_TIMEOUT)
        await devtools.navigate(url)
        await devtools._wait_page_tool(opts.tool, SETUP_TIMEOUT)
        subjects.append(("chrome-devtools-mcp", devtools, lambda: devtools.page_tool(opts.tool, args)))
        if opts.bare:
            command = [sys.executable, "-m", "bench.peers.bare_server", url]
            bare = McpSubject(command, Path(tempfile.mkdtemp()), {"PYTHONPATH": str(ROOT)})
            await bare.open()
            closing.append(bare.close)
            bare_tool = f"tab__{opts.tool}"
            await bare.wait_tools(lambda n: bare_tool in n, SETUP_TIMEOUT)
            subjects.append(("bare", bare, lambda: bare.call(bare_tool, args)))
        if opts.raw:
            raw = RawCdp()
            await raw.open()
            closing.append(raw.close)
            await raw.navigate(url)
            subjects.append(("raw", None, lambda: raw.page_tool(opts.tool, args)))
        samples: dict[tuple[str, str], list[float]] = {
            (c, k): [] for c, s, _ in subjects for k in ("ping", "tool") if s is not None or k == "tool"
        }
        for i in range(opts.warmup + opts.n):
            k = i % len(subjects)
            for label, subject, call in subjects[k:] + subjects[:k]:
                started = time.perf_counter()
                if subject is not None:
                    await subject._live().send_ping()
                pinged = time.perf_counter()
                await call()
                if i >= opts.warmup:
                    if subject is not None:
                        samples[(label, "ping")].append((pinged - started) * 1000)
                    samples[(label, "tool")].append((time.perf_counter() - pinged) * 1000)
        load = Path("/proc/loadavg").read_text().split()[:3]  # noqa: ASYNC240 (a tiny proc file)
        print(f"page {opts.page}, tool {opts.tool}, N={opts.n}, load average {' / '.join(load)}")
        for (label, kind), values in samples.items():
            ordered = sorted(values)
            p10, p90 = ordered[len(values) // 10], ordered[len(values) * 9 // 10]
            print(f"{label} {kind}: median {statistics.median(values):.2f} ms ({p10:.2f}–{p90:.2f})")
        # Paired within each round (the subjects ran one after another, under the same load): the
        # median of the differences varies less than the difference of the medians.
        devtools = samples[("chrome-devtools-mcp", "tool")]
        bridges = [label for label, subject, _ in subjects if subject is not None and label != "chrome-devtools-mcp"]
        for label in bridges:
            tool = samples[(label, "tool")]
            line = f"{label}: tool − devtools {_paired(tool, devtools):+.2f} ms"
            if opts.raw:
                line += f", tool − raw {_paired(tool, samples[('raw', 'tool')]):+.2f} ms"
            if label != bridges[0]:
                line += f", tool − {Path(bridges[0]).name}'s {_paired(tool, samples[(bridges[0], 'tool')]):+.2f} ms"
            print(line + " (medians of the per-round differences)")
    finally:
        for close in reversed(closing):  # each client's task group is left in the scope it entered
            await close()
        process.terminate()


def _paired(a: list[float], b: list[float]) -> float:
    return statistics.median(x - y for x, y in zip(a, b, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bridge", nargs="+", help="checkouts of the bridge to run (their PYTHONPATH)")
    parser.add_argument("--site", choices=("sample", "meridian"), default="sample")
    parser.add_argument("--page", default="/")
    parser.add_argument("--tool", default="get_queue_summary")
    parser.add_argument("--args", default="{}", help="the tool's arguments as JSON")
    parser.add_argument("-n", type=int, default=100, help="timed rounds (default 100)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--raw", action="store_true", help="add raw invokeTool (bench/peers/raw.py) as a subject")
    parser.add_argument(
        "--bare", action="store_true", help="add the least MCP server in front of raw CDP (bench/peers/bare_server.py)"
    )
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
