#!/usr/bin/env python
"""Start-up time: spawning `webmcp-bridge <site>/` to its first answers, its page's state and its page's tools.

    python bench/bench_start.py                 # 7 starts, headless, the sample site's queue page
    python bench/bench_start.py -n 15 --phases  # also the bridge's own phase times from its log
    python bench/bench_start.py --code /work/main --code . --peers playwright,devtools --path /shop/

Each round spawns the console script the way a user (and bench/peers) does, drives it with
`mcp.Client` over stdio in handshake mode (`--mode modern`: at 2026-07-28, with a
`subscriptions/listen` stream for the tool list opened before it lists, as a client that follows
the list does; "initialize" is then its `server/discover`), and records: start → `initialize` answered, start →
first `tools/list` answered, whether that list holds the page's tool (`list_tickets` on the
sample site's queue, `search_products` on bench.site's shop, …), start → the
page's state (`app://windows` read after that list), and start → a list that holds the page's
tool (a first list answered before the browser was up holds the app's tools alone, see
webmcp/server/early.py: the bench lists again after the state). The bridge runs the checkout's code given by
--code (PYTHONPATH is set to it: the MCP SDK passes only a few variables on). With --phases the
bridge logs at INFO and the times of its start-up lines are shown too. --peers adds, in the same
rounds, Playwright MCP and chrome-devtools-mcp started the way bench/peers starts them: spawn →
`initialize` → a first `tools/list` → navigate to the page → its tools seen → one snapshot (their
"page state").
--path picks the page (default `/`, the sample site's queue; any page works for the state times).
Prints medians, min and max, with the load average before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/bench_start.py` from a checkout
    sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from bench.peers.subjects import ChromeDevtoolsMcp, PlaywrightMcp  # noqa: E402
from bench.site import serve_in_thread as serve_bench_site  # noqa: E402
from sample_site import serve_in_thread  # noqa: E402

PEERS = {"playwright": PlaywrightMcp, "devtools": ChromeDevtoolsMcp}
PAGE_TOOLS = {"/shop/": "search_products", "/news/story.html": "get_article", "/app/tasks.html": "list_tasks"}
"""A read-only tool each bench.site page registers (the sample site's queue: list_tickets)."""

CHROMIUM = os.environ.get("WEBMCP_BRIDGE_BROWSER", "/usr/bin/chromium")
START_TIMEOUT = 60.0
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (.*)$")


async def one_start(
    site: str, phases: bool, code: Path, modern: bool = False
) -> tuple[float, float, float, bool, float, list[tuple[float, str]]]:
    """(start → initialize, → first tools/list, → page state, that list holds the page tools, → a list
    that holds them (NaN: none did), log lines)."""
    bridge = str(Path(sys.executable).parent / "webmcp-bridge")
    args = ["--headless", "--browser", CHROMIUM, site]
    if phases:
        args += ["--log-level", "INFO"]
    with tempfile.TemporaryDirectory(prefix="bench-start-") as workdir:
        log_path = Path(workdir) / "stderr.log"
        env = {"PYTHONPATH": str(code)}
        with log_path.open("w") as errlog:
            params = StdioServerParameters(command=bridge, args=args, env=env, cwd=workdir)
            wall_start = time.time()
            started = time.perf_counter()
            async with (
                Client(stdio_client(params, errlog=errlog), mode="auto" if modern else "legacy",
                       read_timeout_seconds=START_TIMEOUT) as client,
                contextlib.AsyncExitStack() as stack,
            ):  # fmt: skip
                initialized = time.perf_counter() - started
                if modern:
                    assert client.protocol_version == "2026-07-28", client.protocol_version
                    await stack.enter_async_context(client.listen(tools_list_changed=True))
                with anyio.fail_after(START_TIMEOUT):
                    listed = await client.list_tools()
                first = time.perf_counter() - started
                with anyio.fail_after(START_TIMEOUT):
                    await client.read_resource("app://windows")
                state = time.perf_counter() - started
                if not _holds(listed.tools, site):  # answered early (webmcp/server/early.py): list again
                    with anyio.fail_after(START_TIMEOUT):
                        relisted = await client.list_tools()
                    tools_at = time.perf_counter() - started
                    held_later = _holds(relisted.tools, site)
                else:
                    tools_at, held_later = first, True
        holds = _holds(listed.tools, site)
        lines: list[tuple[float, str]] = []
        for line in log_path.read_text(errors="replace").splitlines():
            if match := _LOG_LINE.match(line):
                stamp = datetime.datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                lines.append((stamp - wall_start, match[2][:90]))
    return initialized, first, state, holds, (tools_at if held_later else float("nan")), lines


def _holds(tools: list[Any], site: str) -> bool:
    """Whether a tool list holds the start page's read-only tool."""
    tool = next((name for path, name in PAGE_TOOLS.items() if site.endswith(path)), "list_tickets")
    return any(t.name.endswith("__" + tool) for t in tools)


async def one_peer(kind: str, root: str, path: str, queue: bool) -> tuple[float, float]:
    """A peer, started as bench/peers starts it: (spawn → its first `tools/list` answered, → its state
    of `root + path`, on the sample site's queue page, `queue`, once that page's tools are seen)."""
    with tempfile.TemporaryDirectory(prefix=f"bench-start-{kind}-") as workdir:
        subject = PEERS[kind](Path(workdir), root)
        started = time.perf_counter()
        await subject.open(timeout=START_TIMEOUT)
        try:
            with anyio.fail_after(START_TIMEOUT):
                if queue:
                    first, _holds, _ready = await subject.start(root, started)
                else:
                    await subject.tool_names()
                    first = time.perf_counter() - started
                    await subject.navigate(root + path)
                await subject.state()
            return first, time.perf_counter() - started
        finally:
            await subject.close()


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _summary(name: str, samples: list[float]) -> str:
    return (f"{name}: median {statistics.median(samples) * 1000:.0f} ms "
            f"(min {min(samples) * 1000:.0f}, max {max(samples) * 1000:.0f}), n={len(samples)}")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7, help="starts (default 7)")
    parser.add_argument("--phases", action="store_true", help="show the bridge's INFO log lines of each start")
    parser.add_argument("--code", action="append", type=Path, metavar="DIR",
                        help="run the bridge from this checkout (repeatable: starts alternate)")  # fmt: skip
    parser.add_argument("--peers", default="", help="also start these peers each round: playwright,devtools")
    parser.add_argument("--path", default="/", help="the page to start on (default /)")
    parser.add_argument("--mode", choices=("legacy", "modern"), default="legacy",
                        help="the bridge's client: handshake (default) or 2026-07-28 with a listen stream")  # fmt: skip
    parser.add_argument("--site", choices=("sample", "bench"), default="sample",
                        help="sample (default) or bench (bench.site, e.g. with --path /shop/)")  # fmt: skip
    opts = parser.parse_args()
    codes: list[Path] = opts.code or [ROOT]
    peers = [p for p in opts.peers.split(",") if p]
    times: dict[str, dict[str, list[float]]] = {
        str(c): {"initialize": [], "tools": [], "state": [], "page_tools": []} for c in codes
    }
    times.update({p: {"tools": [], "state": []} for p in peers})
    held = dict.fromkeys(codes, 0)
    print(f"load before: {_load()}")
    with serve_in_thread() if opts.site == "sample" else serve_bench_site() as root:
        for i in range(opts.n):
            for code in codes:
                initialized, first, state, holds, page_tools, lines = await one_start(
                    root + opts.path, opts.phases, code, opts.mode == "modern"
                )
                for key, value in (
                    ("initialize", initialized),
                    ("tools", first),
                    ("state", state),
                    ("page_tools", page_tools),
                ):
                    times[str(code)][key].append(value)
                held[code] += holds
                print(f"start {i + 1} ({code}): initialize {initialized * 1000:.0f} ms, "
                      f"first tools/list {first * 1000:.0f} ms, page state {state * 1000:.0f} ms, "
                      f"page tools listed {page_tools * 1000:.0f} ms "
                      f"(in the first list: {'yes' if holds else 'no'})")  # fmt: skip
                for at, text in lines:
                    print(f"    {at * 1000:6.0f} ms  {text}")
            for peer in peers:
                first, state = await one_peer(peer, root, opts.path, opts.site == "sample" and opts.path == "/")
                times[peer]["tools"].append(first)
                times[peer]["state"].append(state)
                print(
                    f"start {i + 1} ({peer}): first tools/list {first * 1000:.0f} ms, page state {state * 1000:.0f} ms"
                )
    print(f"load after: {_load()}")
    for code in codes:
        series = times[str(code)]
        print(_summary(f"{code}: start → initialize", series["initialize"]))
        print(_summary(f"{code}: start → first tools/list", series["tools"]))
        print(_summary(f"{code}: start → page state", series["state"]))
        print(_summary(f"{code}: start → a tools/list holding the page's tools", series["page_tools"]))
        print(f"{code}: first list held the page's tools: {held[code]}/{opts.n}")
    for peer in peers:
        print(_summary(f"{peer}: start → first tools/list", times[peer]["tools"]))
        print(_summary(f"{peer}: start → page state", times[peer]["state"]))


if __name__ == "__main__":
    anyio.run(main)
