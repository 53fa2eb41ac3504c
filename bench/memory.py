#!/usr/bin/env python
"""The bridge's memory with many tabs and after many navigations (issue 22 item 5).

    python bench/memory.py CORPUS [--tabs 1,10,50] [--navigations 1000] [--every 100] [--idle 20] [--trace FILE]

A real bridge (`webmcp-bridge --headless --browser …`, MCP over stdio with the official
`mcp.Client`, as `bench/peers` drives it) on pages of the article-extraction corpus (CORPUS:
`html/<id>.html.gz`), served from 127.0.0.1 by `bench/real_pages.py`'s server, every other
host failing at once (`--host-resolver-rules`, its `fail` network).

1. Tabs: the start tab goes to a corpus page, then `app__open_tab` opens tabs on other corpus
   pages until 1, 10 and 50 are open (`app://windows` read after each). At each count, after
   a short idle: the bridge process's RSS (the Python process alone) and Chromium's, all its
   processes (PSS, and RSS summed). Then every tab but the first is closed (`{tab}__close`),
   and RSS is sampled again, at once and after an idle period.
2. Navigations: `--navigations` in the first tab, cycling through the corpus, `app://windows`
   read every 10th; RSS sampled every 100 (`--every`), then after an idle period (`--idle` seconds: the
   bridge collects garbage on its own while idle; there is no hook to force it, except with
   `--trace`). The slope is the least-squares fit of the bridge's RSS over the samples after
   the first 100 navigations (the first pages fill caches and the allocator's arenas).

`--trace FILE` starts the bridge with `WEBMCP_TRACEMALLOC=FILE` (webmcp/tracemem.py) and
sends it SIGUSR1 after each sample, so FILE holds what the Python heap holds and what grew
in between. Tracing slows the bridge and costs memory itself: its RSS figures are not the
bridge's own. Writes `bench/results/memory-<stamp>.json`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import signal
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/memory.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.peers.mcp_subject import StepFailed  # noqa: E402
from bench.peers.subjects import Bridge  # noqa: E402
from bench.real_pages import Page, browser_wrapper, load_corpus, serve_corpus  # noqa: E402

RESULTS = ROOT / "bench" / "results"
NAVIGATE_TIMEOUT = 60.0
SETTLE = 3.0
"""Seconds of idle before a sample of the tabs phase (late scripts, the view's refresh)."""


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        kids = tree.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _kb(pid: int, path: str, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def bridge_pid() -> int:
    """The bridge: the child of this process that runs webmcp-bridge."""
    for pid in _descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(part.endswith(b"webmcp-bridge") for part in command):
            return pid
    raise RuntimeError("no webmcp-bridge process under this one")


def sample(pid: int) -> dict[str, Any]:
    """The bridge's RSS (kB), and Chromium's (every descendant of the bridge): PSS and RSS summed."""
    browser = _descendants(pid)
    return {
        "bridge_rss_kb": _kb(pid, "status", "VmRSS"),
        "bridge_hwm_kb": _kb(pid, "status", "VmHWM"),
        "chromium_pss_kb": sum(_kb(p, "smaps_rollup", "Pss") for p in browser),
        "chromium_rss_kb": sum(_kb(p, "status", "VmRSS") for p in browser),
        "chromium_processes": len(browser),
        "load": "{:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg()),
        "at": time.time(),
    }


class Run:
    """One bridge, its samples, and (with `--trace`) a SIGUSR1 after each sample."""

    def __init__(self, subject: Bridge, trace: bool) -> None:
        self.subject = subject
        self.pid = bridge_pid()
        self.trace = trace
        self.samples: list[dict[str, Any]] = []
        self.failures: list[str] = []

    async def take(self, label: str, **extra: Any) -> dict[str, Any]:
        row = {"label": label, **extra, **sample(self.pid)}
        self.samples.append(row)
        print(
            f"{label:>22}: bridge {row['bridge_rss_kb'] / 1024:6.1f} MB, chromium PSS "
            f"{row['chromium_pss_kb'] / 1024:7.1f} MB ({row['chromium_processes']} processes), load {row['load']}",
            file=sys.stderr,
            flush=True,
        )
        if self.trace:
            os.kill(self.pid, signal.SIGUSR1)
            await anyio.sleep(2)  # the dump runs in the bridge; let it finish before the next step
        return row

    async def windows(self) -> list[dict[str, Any]]:
        return list(json.loads(await self.subject.state())["windows"])

    async def navigate(self, tab: str, url: str) -> None:
        try:
            await self.subject.call(f"{tab}__navigate", {"url": url}, timeout=NAVIGATE_TIMEOUT)
        except (StepFailed, TimeoutError) as exc:
            self.failures.append(f"navigate {url}: {exc}")

    async def open_tab(self, url: str) -> str | None:
        try:
            text = await self.subject.call("app__open_tab", {"url": url}, timeout=NAVIGATE_TIMEOUT)
        except StepFailed as exc:
            self.failures.append(f"open_tab {url}: {exc}")
            return None
        opened = json.loads(text.splitlines()[-1]).get("openedWindowIds") or []
        return str(opened[0]) if opened else None


async def tabs_phase(run: Run, pages: list[Page], site: str, counts: list[int], idle: float) -> None:
    first = run.subject.win
    await run.navigate(first, f"{site}/p/{pages[0].key}")
    await run.windows()
    opened = [first]
    for count in counts:
        while len(opened) < count:
            tab = await run.open_tab(f"{site}/p/{pages[len(opened) % len(pages)].key}")
            await run.windows()
            if tab is None:
                break
            opened.append(tab)
        await anyio.sleep(SETTLE)
        tabs = sum(1 for w in await run.windows() if w["id"].startswith("tab-"))
        await run.take(f"{count} tabs", tabs=tabs)
    for tab in opened[1:]:
        try:
            await run.subject.call(f"{tab}__close", {}, timeout=30)
        except StepFailed as exc:
            run.failures.append(f"close {tab}: {exc}")
    tabs = sum(1 for w in await run.windows() if w["id"].startswith("tab-"))
    await run.take("closed, at once", tabs=tabs)
    await anyio.sleep(idle)
    await run.take(f"closed, {idle:g} s idle", tabs=tabs)


async def navigations_phase(run: Run, pages: list[Page], site: str, total: int, every: int, idle: float) -> None:
    tab = run.subject.win
    await run.take("navigations: 0", navigations=0)
    times: list[float] = []
    for number in range(1, total + 1):
        started = time.perf_counter()
        await run.navigate(tab, f"{site}/p/{pages[number % len(pages)].key}")
        times.append(time.perf_counter() - started)
        if number % 10 == 0:
            await run.windows()
        if number % every == 0:
            await run.take(f"navigations: {number}", navigations=number, navigate_median_s=statistics.median(times))
            times = []
    await anyio.sleep(idle)
    await run.take(f"navigations: {total}, {idle:g} s idle", navigations=total, idle=idle)


def slope(samples: list[dict[str, Any]], key: str) -> float | None:
    """kB per navigation: least squares over the samples after the first 100 navigations (idle one out)."""
    points = [(s["navigations"], s[key]) for s in samples if s.get("navigations", 0) >= 100 and "idle" not in s]
    if len(points) < 2:
        return None
    return float(statistics.linear_regression([p[0] for p in points], [p[1] for p in points]).slope)


def markdown(raw: dict[str, Any]) -> str:
    lines = [
        "| moment | bridge RSS | Chromium PSS (all processes) | Chromium RSS summed | processes | load |",
        "|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {s['label']} | {s['bridge_rss_kb'] / 1024:.1f} MB | {s['chromium_pss_kb'] / 1024:.0f} MB | "
        f"{s['chromium_rss_kb'] / 1024:.0f} MB | {s['chromium_processes']} | {s['load']} |"
        for s in raw["samples"]
    )
    for key, name in (("bridge_rss_kb", "bridge RSS"), ("chromium_pss_kb", "Chromium PSS")):
        value = raw["slopes"].get(key)
        if value is not None:
            lines.append(f"\n{name} slope after 100 navigations: {value:+.2f} kB per navigation")
    if raw["failures"]:
        lines.append(f"\n{len(raw['failures'])} steps failed: " + "; ".join(raw["failures"][:5]))
    return "\n".join(lines)


async def bench(args: argparse.Namespace, pages: list[Page]) -> dict[str, Any]:
    raw: dict[str, Any] = {"samples": [], "failures": []}
    with serve_corpus(pages) as site, tempfile.TemporaryDirectory(prefix="memory-") as tmp:
        browser = browser_wrapper(Path(tmp), "fail", None, [])
        subject = Bridge(Path(tmp), site, browser=browser)
        if args.trace:
            subject.env["WEBMCP_TRACEMALLOC"] = str(args.trace.resolve())
        await subject.open(60)
        try:
            await subject.ready(60)
            run = Run(subject, trace=args.trace is not None)
            await run.take("started", tabs=1)
            if args.tabs:
                await tabs_phase(run, pages, site, args.tabs, args.idle)
            if args.navigations:
                await navigations_phase(run, pages, site, args.navigations, args.every, args.idle)
            raw["samples"], raw["failures"] = run.samples, run.failures
        finally:
            await subject.close()
    raw["slopes"] = {key: slope(raw["samples"], key) for key in ("bridge_rss_kb", "chromium_pss_kb")}
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(prog="python bench/memory.py", description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="article-extraction-benchmark checkout: html/, ground-truth.json")
    parser.add_argument("--tabs", default="1,10,50", help="tab counts to sample, ascending ('' to skip)")
    parser.add_argument("--navigations", type=int, default=1000, help="in one tab (0 to skip)")
    parser.add_argument("--every", type=int, default=100, help="navigations between samples")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle before the 'idle' samples")
    parser.add_argument("--limit", type=int, default=None, help="the first N corpus pages only")
    parser.add_argument("--trace", type=Path, metavar="FILE", help="tracemalloc dumps of the bridge into FILE")
    args = parser.parse_args()
    args.tabs = [int(n) for n in args.tabs.split(",") if n]
    pages = load_corpus(args.corpus, [], args.limit)
    if not pages:
        parser.error(f"no page in {args.corpus}/html")
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    logging.getLogger("client").setLevel(logging.ERROR)
    started = datetime.datetime.now(datetime.UTC)
    raw = anyio.run(bench, args, pages)
    raw.update(
        started=started.isoformat(),
        command=" ".join(["python bench/memory.py", *sys.argv[1:]]),
        pages=len(pages),
        traced=args.trace is not None,
    )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"memory-{started:%Y%m%d-%H%M}{'-traced' if args.trace else ''}.json"
    out.write_text(json.dumps(raw, indent=1))
    print(markdown(raw))
    print(f"\nwritten: {out.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
