"""Side-by-side bench: the bridge against Playwright MCP and chrome-devtools-mcp, raw CDP as floor.

    bash bench/peers/run [--rounds 3] [--only bridge,playwright,devtools,raw] [--pages sample,shop,story,tasks]

(`bench/peers/run` installs what is needed, then runs `.venv/bin/python -m bench.peers`.)
Each round starts every server afresh, in an order rotated round by round, against one
sample site (reset before each session), then once more on the pages of `bench.site` (issue 22:
started on the first of them, reset before). `--pages` picks the sessions: `sample` (the sample
site's, with every measure of issue 12) and any of the bench pages. Prints a Markdown table (medians over rounds,
min–max in brackets) and writes it, the raw results (JSON) and a PNG chart to bench/results/.
Nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import anyio

from bench.site import serve_in_thread as serve_bench_site
from sample_site import serve_in_thread as serve_site

from . import measures
from .measures import BENCH_PAGES, SessionResult, run_bench_session, run_session
from .raw import RawCdp
from .report import markdown_notes, markdown_table, markdown_targets, write_chart
from .subjects import CHROMIUM, PEERS_DIR, Bridge, ChromeDevtoolsMcp, PlaywrightMcp

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
KINDS = {"bridge": Bridge, "playwright": PlaywrightMcp, "devtools": ChromeDevtoolsMcp, "raw": RawCdp}
PAGE_KEYS = ["sample"] + [p.key for p in BENCH_PAGES]


def _reset_site(site: str) -> None:
    request = urllib.request.Request(site + "/api/reset", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=5):  # noqa: S310 (loopback)
        pass


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout.strip()
    except OSError as exc:
        return f"unavailable ({exc})"


def versions() -> dict[str, str]:
    """What ran: browser, node, peers, bridge (with its commit)."""

    def peer(name: str) -> str:
        manifest = PEERS_DIR / name / "package.json"
        return json.loads(manifest.read_text())["version"] if manifest.exists() else "not installed"

    commit = _output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    return {
        "chromium": _output([CHROMIUM, "--version"]),
        "node": _output(["node", "--version"]),
        "@playwright/mcp": peer("@playwright/mcp"),
        "chrome-devtools-mcp": peer("chrome-devtools-mcp"),
        "webmcp-bridge": f"{importlib.metadata.version('webmcp-gui-bridge')} ({commit})",
        "mcp (client)": importlib.metadata.version("mcp"),
        "python": platform.python_version(),
    }


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def _subject(kind: str, workdir: Path, site: str, url: str = "") -> Any:
    if kind == "raw":
        return RawCdp()
    if kind == "bridge":
        return Bridge(workdir, site, url=url)
    return KINDS[kind](workdir, site)


async def _session(kind: str, site: str, bench_pages: list[Any] | None) -> SessionResult:
    """One fresh server of `kind`: the sample site's session, or (bench_pages) bench.site's."""
    await anyio.to_thread.run_sync(_reset_site, site)
    with tempfile.TemporaryDirectory(prefix=f"bench-peers-{kind}-") as workdir:
        if bench_pages is None:
            return await run_session(_subject(kind, Path(workdir), site), site)
        subject = _subject(kind, Path(workdir), site, site + bench_pages[0].path)
        return await run_bench_session(subject, site, bench_pages)


async def bench(rounds: int, kinds: list[str], pages: list[str]) -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    notes: dict[str, list[dict[str, str]]] = {k: [] for k in kinds}
    loads = [_load()]
    bench_pages = [p for p in BENCH_PAGES if p.key in pages]
    with serve_site() as site, serve_bench_site() as bench_site:
        for round_no in range(rounds):
            order = kinds[round_no % len(kinds) :] + kinds[: round_no % len(kinds)]
            for kind in order:
                values: dict[str, Any] = {}
                said: dict[str, str] = {}
                sessions = ([(site, None)] if "sample" in pages else []) + (
                    [(bench_site, bench_pages)] if bench_pages else []
                )
                for where, which in sessions:
                    what = "sample site" if which is None else "bench site"
                    print(f"round {round_no + 1}/{rounds}: {kind} on the {what} …", file=sys.stderr, flush=True)
                    session = await _session(kind, where, which)
                    values.update(session.values)
                    said.update(session.notes)
                    failed = {k: v for k, v in session.values.items() if isinstance(v, str)}
                    if failed:
                        print(f"  {kind} failed steps: {json.dumps(failed)[:600]}", file=sys.stderr, flush=True)
                results[kind].append(values)
                notes[kind].append(said)
            loads.append(_load())
    return {"results": results, "notes": notes, "loads": loads, "pages": pages}


def publish(raw: dict[str, Any]) -> str:
    """Write the Markdown table and the chart of one run's raw results (JSON) to bench/results/."""
    started = datetime.datetime.fromisoformat(raw["started"])
    stamp = started.strftime("%Y%m%d-%H%M")
    header = (
        f"Run {started:%Y-%m-%d %H:%M} UTC, {raw['rounds']} round(s), order rotated each round; "
        f"{raw.get('cpus', '?')} CPUs; load average (1/5/15 min) at each round boundary: "
        f"{' → '.join(raw['loads'])}."
        + (
            f" Each timed call after an untimed pause of 0–{raw['phase_jitter_ms']:g} ms (`--phase-jitter`)."
            if raw.get("phase_jitter_ms")
            else ""
        )
        + "\n\nVersions: "
        + "; ".join(f"{k} {v}" for k, v in raw["versions"].items())
        + "\n"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    chart = RESULTS / f"peers-{stamp}.png"
    write_chart(raw["results"], chart, f"bench/peers {started:%Y-%m-%d %H:%M} UTC, {raw['rounds']} rounds")
    table = markdown_table(raw["results"], raw["notes"])
    targets = markdown_targets(raw["results"])
    notes = markdown_notes(raw["notes"])
    document = (
        f"{header}\n{table}\n\nIssue 40 targets this bench measures (medians over rounds):\n\n"
        f"{targets}\n\nChart: `{chart.relative_to(ROOT)}`\n\nNotes:\n\n{notes}\n"
    )
    (RESULTS / f"peers-{stamp}.md").write_text(document)
    return document


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each starts every server once (default 3)")
    parser.add_argument("--only", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS))
    parser.add_argument(
        "--pages",
        default=",".join(PAGE_KEYS),
        help="comma-separated subset of " + ",".join(PAGE_KEYS) + " (sample = the sample site's session)",
    )
    parser.add_argument(
        "--phase-jitter",
        type=float,
        default=0.0,
        metavar="MS",
        help="idle up to MS ms (uniform, seeded, not timed) before each timed call, so calls meet the "
        "page's frame clock at any phase (0: back to back, as before)",
    )
    parser.add_argument("--report", metavar="JSON", help="only redraw the table and chart of an earlier run")
    args = parser.parse_args()
    if args.report:
        print(publish(json.loads(Path(args.report).read_text())))
        return
    kinds = [k for k in args.only.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    pages = [p for p in args.pages.split(",") if p]
    unknown = set(pages) - set(PAGE_KEYS)
    if unknown or not pages:
        parser.error(f"unknown page: {', '.join(sorted(unknown))}" if unknown else "--pages names no page")
    # Handshake clients subscribe with resources/subscribe; the SDK warns that 2026 clients do not.
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    # The SDK's client warns when a tool was not in its last list (a dialog's tools are new).
    logging.getLogger("client").setLevel(logging.ERROR)
    started = datetime.datetime.now(datetime.UTC)
    info = versions()
    measures.PHASE_JITTER = args.phase_jitter / 1000
    run = anyio.run(bench, args.rounds, kinds, pages)
    raw = {"started": started.isoformat(), "rounds": args.rounds, "cpus": os.cpu_count(), "versions": info, **run}
    if args.phase_jitter:
        raw["phase_jitter_ms"] = args.phase_jitter
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M")
    (RESULTS / f"peers-{stamp}.json").write_text(json.dumps(raw, indent=1, default=str))
    print(publish(raw))


if __name__ == "__main__":
    main()
