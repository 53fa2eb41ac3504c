#!/usr/bin/env python
"""Soak: agents over HTTP and a person typing share one page, with and without faults (issue 11).

    python bench/soak.py                         # 5 min steady, then 5 min with faults
    python bench/soak.py --duration 60 --phases steady
    python bench/soak.py --duration 120 --clients 8 --out bench/results/soak.json

Everything runs on 127.0.0.1: the sample site (in a thread), one headless Chromium, the
bridge as a subprocess serving Streamable HTTP, `--clients` MCP clients, and Playwright as
the person. The person types into the draft of /notepad.html in bursts; every client
loops: read `app://windows`, then either write the draft (`replace_draft` with the text it
saw plus "#", and the `expectedVersion` it read) or call a read-only tool of the queue tab.

Figures:
* calls, writes accepted and refused (`stale_state`), errors by code, p50/p99 latency;
* lost keystrokes, two ways: a write that replaced text it never saw (the tool answers the
  text it replaced), and at the end, the draft without its "#" marks against everything
  the person typed (each accepted write keeps what it saw, so nothing may be missing);
* lost writes: accepted writes whose "#" is not in the final draft;
* bridge RSS and Chromium process count every 5 s (flat is the goal).

The `faults` phase also crashes the queue tab's renderer a third of the way in (a client
then reloads it through the bridge) and closes the queue tab two thirds in (the person
closes it; a new one is opened through the bridge).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import string
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/soak.py` from a checkout
    sys.path.insert(0, str(ROOT))

from mcp.shared.exceptions import MCPError  # noqa: E402
from playwright.async_api import Page, async_playwright  # noqa: E402

from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.support.mcp_harness import open_http_client  # noqa: E402
from tests.support.stage import run_site  # noqa: E402

TOKEN = "soak-token"
SAMPLE_EVERY = 5.0


@dataclass
class Tally:
    """What one phase measured."""

    phase: str
    calls: int = 0
    reads: int = 0
    writes_accepted: int = 0
    writes_refused: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    overwrites: list[dict[str, str]] = field(default_factory=list)
    typed: list[str] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    final_draft: str = ""
    events: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        typed = "".join(self.typed)
        kept = self.final_draft.replace("#", "")
        lat = sorted(self.latencies_ms)
        return {
            "phase": self.phase,
            "calls": self.calls,
            "windows_reads": self.reads,
            "writes_accepted": self.writes_accepted,
            "writes_refused_stale": self.writes_refused,
            "lost_writes": max(0, self.writes_accepted - self.final_draft.count("#")),
            "keystrokes_typed": len(typed),
            "keystrokes_overwritten_by_stale_writes": sum(
                len(o["before"]) - len(_common_prefix(o["seen"], o["before"])) for o in self.overwrites
            ),
            "keystrokes_missing_at_end": _missing(typed, kept),
            "p50_ms": round(statistics.median(lat), 1) if lat else None,
            "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1) if lat else None,
            "errors_by_code": dict(self.errors),
            "rss_mb": [s["rss_mb"] for s in self.samples],
            "chromium_processes": [s["chromium"] for s in self.samples],
            "events": self.events,
        }


def _common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


def _missing(typed: str, kept: str) -> int:
    """How many of the person's keystrokes are not in `kept`, in order (a subsequence check)."""
    i = 0
    for char in kept:
        if i < len(typed) and char == typed[i]:
            i += 1
    return len(typed) - i


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _chromium_count(profile: str) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if profile.encode() in (entry / "cmdline").read_bytes():
                    count += 1
            except OSError:
                continue
    return count


def _draft_of(window: dict[str, Any]) -> str | None:
    for block in window["blocks"]:
        if block["type"] == "fields":
            for item in block["items"]:
                if item.get("label") == "Draft":
                    return str(item.get("value") or "")
    return None


def _window(doc: dict[str, Any], path: str) -> dict[str, Any] | None:
    for window in doc["windows"]:
        if window["modal"]:
            continue
        for block in window["blocks"]:
            if block.get("id") == "address" and str(block["items"][0]["value"]).split("?")[0].endswith(path):
                return window
    return None


async def _person(page: Page, tally: Tally, stop: anyio.Event) -> None:
    """Types words in bursts into the draft, like a person (the caret stays where they type)."""
    await page.click("#draft")
    await page.keyboard.press("End")
    rng = random.Random(7)
    while not stop.is_set():
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8))) + " "
        for char in word:
            await page.keyboard.type(char)
            tally.typed.append(char)
            await anyio.sleep(rng.uniform(0.03, 0.12))
        await anyio.sleep(rng.uniform(0.1, 0.6))


async def _client(url: str, index: int, tally: Tally, stop: anyio.Event) -> None:
    rng = random.Random(index)
    async with open_http_client(url, TOKEN, mode="auto" if index % 2 else "legacy", subscribe=()) as mcp:
        client = mcp.client
        while not stop.is_set():
            started = time.perf_counter()
            read = await client.read_resource("app://windows")
            tally.latencies_ms.append((time.perf_counter() - started) * 1000)
            tally.reads += 1
            doc = json.loads(read.contents[0].text)
            notepad = _window(doc, "/notepad.html")
            queue = _window(doc, "/")
            if rng.random() < 0.6 and notepad is not None and (seen := _draft_of(notepad)) is not None:
                name = f"{notepad['id']}__replace_draft"
                args: dict[str, Any] = {"text": seen + "#", "expectedVersion": notepad["version"]}
            elif queue is not None:
                name, args = f"{queue['id']}__list_tickets", {"status": "open"}
            else:
                await anyio.sleep(0.1)
                continue
            started = time.perf_counter()
            try:
                # Longer than the bridge's deadline plus its grace (31 s): its answer, not ours, ends a call.
                result = await client.call_tool(name, args, read_timeout_seconds=45)
            except MCPError as exc:  # the client gave up (30 s): a figure, not the end of the soak
                tally.calls += 1
                tally.errors[f"client:{exc.error.message[:40]}"] += 1
                tally.events.append(f"{name} {args.get('expectedVersion')} -> client error {exc.error.message}")
                continue
            elapsed = time.perf_counter() - started
            tally.latencies_ms.append(elapsed * 1000)
            tally.calls += 1
            body = result.structured_content or {}
            if elapsed > 10:
                tally.events.append(f"slow: {name} took {elapsed:.1f} s -> {body.get('code', 'ok')}")
            if result.is_error:
                code = str(body.get("code"))
                tally.errors[code] += 1
                if name.endswith("replace_draft") and code == "stale_state":
                    tally.writes_refused += 1
            elif name.endswith("replace_draft"):
                tally.writes_accepted += 1
                before = str(body.get("result", {}).get("before", ""))
                if before != args["text"][:-1]:
                    tally.overwrites.append({"seen": args["text"][:-1], "before": before})
            await anyio.sleep(rng.uniform(0.05, 0.25))


async def _sampler(pid: int, profile: str, tally: Tally, stop: anyio.Event) -> None:
    started = time.monotonic()
    while not stop.is_set():
        tally.samples.append(
            {"t": round(time.monotonic() - started), "rss_mb": _rss_mb(pid), "chromium": _chromium_count(profile)}
        )
        with anyio.move_on_after(SAMPLE_EVERY):
            await stop.wait()


async def _faults(url: str, user: Any, site: str, tally: Tally, duration: float, stop: anyio.Event) -> None:
    async with open_http_client(url, TOKEN, mode="auto", subscribe=()) as mcp:
        await anyio.sleep(duration / 3)
        queue_page = next(p for c in user.contexts for p in c.pages if p.url.rstrip("/") == site)
        session = await queue_page.context.new_cdp_session(queue_page)
        with anyio.move_on_after(3):
            await session.send("Page.crash")
        tally.events.append(f"{duration / 3:.0f}s: crashed the queue tab's renderer")
        doc = json.loads((await mcp.client.read_resource("app://windows")).contents[0].text)
        queue = _window(doc, "/")
        if queue is not None:
            reloaded = await mcp.client.call_tool(f"{queue['id']}__navigate", {"go": "reload"})
            tally.events.append(f"reload after crash: {'error' if reloaded.is_error else 'ok'}")
        await anyio.sleep(duration / 3)
        queue_page = next((p for c in user.contexts for p in c.pages if p.url.rstrip("/") == site), None)
        if queue_page is not None:
            await queue_page.close()
            tally.events.append(f"{2 * duration / 3:.0f}s: the person closed the queue tab")
        opened = await mcp.client.call_tool("app__open_tab", {"url": site + "/"})
        tally.events.append(f"reopened the queue tab: {'error' if opened.is_error else 'ok'}")
        await stop.wait()


async def run_phase(phase: str, duration: float, clients: int) -> dict[str, Any]:
    tally = Tally(phase)
    log = open(f"/tmp/soak-bridge-{phase}.log", "wb")  # noqa: SIM115, ASYNC230 - the bridge's stderr, for a post-mortem
    with log, run_site() as site:
        # The bridge (--cdp-url) and Playwright, the person, both attach over the port.
        browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
        port = _free_port()
        bridge = await anyio.open_process(
            [
                sys.executable,
                "-m",
                "webmcp",
                "--cdp-url",
                browser.ws_url,
                "--http",
                f"127.0.0.1:{port}",
                "--token",
                TOKEN,
                site + "/notepad.html",
                site + "/",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "WEBMCP_BRIDGE_LOG": os.environ.get("WEBMCP_BRIDGE_LOG", "INFO")},
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            await _wait_http(url)
            async with async_playwright() as pw:
                user = await pw.chromium.connect_over_cdp(browser.ws_url)
                for context in user.contexts:
                    context.on("dialog", lambda _d: None)
                page = await _wait_page(user, site + "/notepad.html")
                stop = anyio.Event()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_sampler, bridge.pid, browser.user_data_dir, tally, stop)
                    tg.start_soon(_person, page, tally, stop)
                    for index in range(clients):
                        tg.start_soon(_client, url, index, tally, stop)
                    if phase == "faults":
                        tg.start_soon(_faults, url, user, site, tally, duration, stop)
                    await anyio.sleep(duration)
                    stop.set()
                tally.final_draft = await page.input_value("#draft")
                await user.close()
        finally:
            bridge.terminate()
            with anyio.move_on_after(10):
                await bridge.wait()
            await browser.close()
    return tally.report()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_http(url: str) -> None:
    with anyio.fail_after(30):
        while True:
            try:
                async with httpx2.AsyncClient() as http:
                    await http.post(url, json={})
                return
            except httpx2.TransportError:
                await anyio.sleep(0.1)


async def _wait_page(user: Any, url: str) -> Page:
    with anyio.fail_after(30):
        while True:
            for context in user.contexts:
                for page in context.pages:
                    if page.url == url:
                        await page.wait_for_selector("#draft")
                        return page
            await anyio.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds per phase (default 300)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--phases", default="steady,faults", help="steady, faults, or both (comma-separated)")
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    args = parser.parse_args()
    reports = []
    for phase in args.phases.split(","):
        report = anyio.run(run_phase, phase.strip(), args.duration, args.clients)
        reports.append(report)
        print(json.dumps({k: v for k, v in report.items() if k not in ("rss_mb", "chromium_processes")}, indent=1))
        print(f"  rss_mb {report['rss_mb']}\n  chromium_processes {report['chromium_processes']}", flush=True)
    if args.out:
        stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        args.out.write_text(json.dumps({"run": stamp, "duration_s": args.duration, "phases": reports}, indent=1))


if __name__ == "__main__":
    main()
