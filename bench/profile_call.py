#!/usr/bin/env python
"""File-level profile of the bridge's read-only page-tool call path (issue 12, item 3).

    .venv/bin/python bench/profile_call.py [-n 200] [--top 30] [--tool get_queue_summary] [--switch-interval 0.0005]
    .venv/bin/python bench/profile_call.py --url http://127.0.0.1:8000/shop/ --tool search_products --args '{}'

Runs the bridge the way a user does (`webmcp-bridge --headless <site>/`, MCP over stdio) but
inside a small wrapper (`--serve`) that can switch cProfile on and off in the bridge process
with SIGUSR1 / SIGUSR2. After start-up and 20 warm-up calls, the profiler is switched on, the
client makes N calls of `tab-N__list_tickets {"status": "all"}` (or `--tool`), and the profiler is switched
off and its stats dumped. Start-up, the first page load and the client are not in the profile.
Prints the top entries by cumulative and by own time, and the call latency seen meanwhile
(inflated by the profiler). Only the bridge's main thread (its event loop) is profiled.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import signal
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/profile_call.py` from a checkout
    sys.path.insert(0, str(ROOT))

CALL_TIMEOUT = 10.0
TOOL_INPUTS: dict[str, dict[str, Any]] = {"list_tickets": {"status": "all"}, "get_queue_summary": {}}


def serve(stats_path: str, pid_path: str, bridge_args: list[str]) -> int:
    """The bridge's own CLI, with the profiler switched by signals (SIGUSR1 on, SIGUSR2 off + dump)."""
    from webmcp.cli import main

    if interval := os.environ.get("PROFILE_SWITCH_INTERVAL"):
        sys.setswitchinterval(float(interval))  # an experiment: how much is GIL hand-over?

    profiler = cProfile.Profile()

    def switch_on(_signum: int, _frame: object) -> None:
        profiler.enable()

    def switch_off(_signum: int, _frame: object) -> None:
        profiler.disable()
        profiler.dump_stats(stats_path)

    signal.signal(signal.SIGUSR1, switch_on)
    signal.signal(signal.SIGUSR2, switch_off)
    Path(pid_path).write_text(str(os.getpid()))
    return main(bridge_args)


async def drive(
    calls: int, top: int, work: str, errlog: TextIO, switch_interval: float | None, tool: str, opts: argparse.Namespace
) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from sample_site import serve_in_thread as serve_site

    arguments = json.loads(opts.args) if opts.args is not None else TOOL_INPUTS.get(tool, {})
    with serve_site() as site:
        stats_path, pid_path = os.path.join(work, "bridge.prof"), os.path.join(work, "pid")
        url = site + opts.url if (opts.url or "").startswith("/") else opts.url or site + "/"
        command = [sys.executable, __file__, "--serve", stats_path, pid_path, "--", "--headless", url]
        env = {"PROFILE_SWITCH_INTERVAL": str(switch_interval)} if switch_interval else {}
        env["PYTHONPATH"] = str(ROOT)  # this checkout's code, not an installed one
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT), env=env)
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60) as client:
            name = ""
            with anyio.fail_after(60):
                while not name:
                    names = [t.name for t in (await client.list_tools()).tools]
                    name = next((n for n in names if n.endswith("__" + tool)), "")
                    await anyio.sleep(0 if name else 0.05)
            pid = int(await anyio.Path(pid_path).read_text())

            async def call() -> float:
                started = time.perf_counter()
                with anyio.fail_after(CALL_TIMEOUT):
                    result = await client.call_tool(name, arguments)
                if result.is_error:
                    raise RuntimeError(f"{name} failed: {result.structured_content}")
                return time.perf_counter() - started

            for _ in range(20):
                await call()
            os.kill(pid, signal.SIGUSR1)
            await client.send_ping()  # the handler has run once the bridge answers anything
            times = [await call() for _ in range(calls)]
            os.kill(pid, signal.SIGUSR2)
            with anyio.fail_after(30):
                while not await anyio.Path(stats_path).exists():  # noqa: ASYNC110 (a file, not an event)
                    await anyio.sleep(0.05)
                await client.send_ping()
        stats = pstats.Stats(stats_path)
        ms = sorted(t * 1000 for t in times)
        print(
            f"{calls} calls of {name} under cProfile: median {statistics.median(ms):.2f} ms, "
            f"p90 {ms[int(len(ms) * 0.9) - 1]:.2f} ms (profiler overhead included)\n"
        )
        stats.strip_dirs().sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        stats_path, pid_path, separator, *bridge_args = sys.argv[2:]
        if separator != "--":
            raise SystemExit("usage: profile_call.py --serve STATS PIDFILE -- BRIDGE-ARGS…")
        sys.exit(serve(stats_path, pid_path, bridge_args))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--calls", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument(
        "--switch-interval",
        type=float,
        metavar="S",
        help="sys.setswitchinterval in the bridge (default Python's 0.005): a lower one shows GIL hand-over cost",
    )
    parser.add_argument("--tool", default="list_tickets", help="the page tool (default list_tickets)")
    parser.add_argument("--args", help="its arguments as JSON (default: the sample site's, else {})")
    parser.add_argument("--url", help="the page to open, or a path of the sample site (default: its queue page)")
    args = parser.parse_args()
    import anyio

    warnings.filterwarnings("ignore", message="ping is removed")  # a handshake client may ping
    with tempfile.TemporaryDirectory(prefix="profile-call-") as work:
        with open(os.path.join(work, "stderr.log"), "w") as log:  # the bridge's stderr
            anyio.run(drive, args.calls, args.top, work, log, args.switch_interval, args.tool, args)


if __name__ == "__main__":
    main()
