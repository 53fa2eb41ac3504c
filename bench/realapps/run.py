"""Drive the real WebMCP demos through the bridge, one scripted agent task per demo (issue 18).

    .venv/bin/python -m bench.realapps.build --demos DEMOS --cache CACHE [--use-webmcp-tool DIR]
    .venv/bin/python -m bench.realapps.run --demos DEMOS --cache CACHE [--only a,b] [--code DIR]

`DEMOS` is the `demos/` folder of GoogleChromeLabs/webmcp-tools; `CACHE` is where build.py
put the builds (the demos themselves never enter this repository). Every demo is served on
127.0.0.1 under `/demos/<name>/`; for each task a fresh `webmcp-bridge --headless URL` (this
checkout's code, or `--code DIR`'s) is started over stdio and driven by an MCP client: read
`app://windows`, call the tab's page tools with the task's arguments, answer dialogs and
waiting forms, and check what the page then shows by reading the window again. Prints a
Markdown table (demo, tools mirrored, task done, what was wrong) and writes it with every
call's timing to `bench/results/realapps-<UTC date-time>.json` and `.md`. Nothing here is
asserted by the test suite; CI does not run it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.mcp_harness import McpTestClient, Notifications

from .serve import demo_roots, serve_demos
from .session import Session, TaskFailed
from .tasks import TASKS, Task

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
CHROMIUM = os.environ.get("WEBMCP_BRIDGE_BROWSER", "/usr/bin/chromium")
TASK_TIMEOUT_S = 180.0
START_TIMEOUT_S = 60.0
SLOW_START_S = 3.0
"""Start-up this much slower than about:blank's is time spent waiting for the page."""


@asynccontextmanager
async def bridge(url: str, code: Path, errlog: Path) -> AsyncIterator[McpTestClient]:
    """`webmcp-bridge --headless URL` of checkout `code`, connected and subscribed to app://windows."""
    command = [str(Path(sys.executable).parent / "webmcp-bridge"), "--headless", "--browser", CHROMIUM, url]
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={**os.environ, "PYTHONPATH": str(code)}, cwd=str(errlog.parent)
    )
    recorder = Notifications()
    async with AsyncExitStack() as stack:
        err = stack.enter_context(errlog.open("w"))
        client = Client(
            stdio_client(params, errlog=err),
            mode="legacy",
            cache=None,
            message_handler=recorder.on_message,
            read_timeout_seconds=START_TIMEOUT_S,
        )
        connected = await stack.enter_async_context(client)
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri="app://windows"))
        await connected.session.send_request(request, types.EmptyResult, request_read_timeout_seconds=10)
        yield McpTestClient(connected, recorder, ["app://windows"])


SETTLE_S = 40.0
"""How long a task waits for its page's tools, as an agent told the page still loads would (`wait_for`):
a page whose `<head>` script comes from a CDN this offline machine cannot reach registers its tools
only once the browser gives that host up (coffee-shop: 2 s in most runs, past 9 s in some)."""


async def _settle(s: Session) -> list[str]:
    """The first tab's page tools once the page has registered some (or after `SETTLE_S`)."""
    tab = (await s.tab(counted=False))["id"]
    listed: list[str] = []
    with anyio.move_on_after(SETTLE_S):
        while not listed:
            seen = s.handle.notifications.count("tools_list_changed")
            listed = await s.page_tools(tab)
            if not listed:
                with anyio.move_on_after(1):
                    await s.handle.notifications.wait_for("tools_list_changed", after=seen, timeout=5)
    return listed


async def baseline_start(code: Path, workdir: Path) -> float:
    """Seconds from spawn to `initialize` answered for `about:blank`: the bridge's own start-up now."""
    started = time.perf_counter()
    async with bridge("about:blank", code, workdir / "baseline.stderr.log"):
        return time.perf_counter() - started


async def run_task(task: Task, base: str, code: Path, workdir: Path, baseline_s: float) -> dict[str, Any]:
    """One fresh bridge, one task; the row and everything measured for it."""
    row: dict[str, Any] = {"demo": task.label or task.demo, "goal": task.goal, "url": task.path}
    errlog = workdir / f"{(task.label or task.demo).replace(' ', '_').replace('?', '')}.stderr.log"
    started = time.perf_counter()
    session: Session | None = None
    try:
        async with bridge(base + task.path, code, errlog) as handle:
            row["start_s"] = round(time.perf_counter() - started, 3)
            session = Session(handle, base)
            async with anyio.create_task_group() as lists:
                lists.start_soon(session.follow_lists)
                row["tools_at_start"] = await _settle(session)
                try:
                    with anyio.fail_after(TASK_TIMEOUT_S):
                        row["done"] = await task.run(session)
                except TaskFailed as exc:
                    row["done"] = False
                    session.note(f"task stopped: {exc}")
                except TimeoutError:
                    row["done"] = False
                    session.note(f"task stopped: not over within {TASK_TIMEOUT_S:g} s")
                await anyio.sleep(0.5)  # a tools/list_changed the last step caused is read, as a host would
                lists.cancel_scope.cancel()
            row["read"] = dict(session.spent, list_changed=handle.notifications.count("tools_list_changed"))
            await session.tool_names()
            row["final_window"] = (await session.windows())["windows"]
            if row["start_s"] > baseline_s + SLOW_START_S:
                session.problem(
                    "slow_start",
                    f"initialize answered {row['start_s']:.1f} s after the bridge was started "
                    f"({baseline_s:.1f} s for about:blank in this run)",
                )
    except Exception as exc:  # the row records any failure of the bridge or the harness
        row.setdefault("done", False)
        row["crash"] = f"{type(exc).__name__}: {exc}"[:500]
    row["seconds"] = round(time.perf_counter() - started, 2)
    if session is not None:
        row["tools_seen"] = sorted(session.seen_page_tools)
        row["problems"] = [vars(p) for p in session.problems]
        row["notes"] = session.notes
        row["calls"] = [c.short() for c in session.calls]
        reads = sorted(session.window_reads)
        row["window_reads"] = {"n": len(reads), "median_ms": round(1000 * reads[len(reads) // 2], 1) if reads else None}
    if task.needs_internet:
        row.setdefault("notes", []).append(f"needs the internet at run time: {task.needs_internet}")
    row["stderr"] = str(errlog)
    return row


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"Run {meta['when']}, code {meta['code']} ({meta['commit']}{', with local changes' if meta['dirty'] else ''}), "
        f"{meta['chromium']}, load average {meta['load']}; the bridge starts on about:blank in "
        f"{meta['baseline_start_s']} s.",
        "",
        "| demo | tools mirrored | task done | calls (slowest) | bytes read: answers + windows + lists (lists read) "
        "| what was wrong |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        tools = row.get("tools_seen") or row.get("tools_at_start") or []
        calls = row.get("calls") or []
        slowest = max(calls, key=lambda c: c["seconds"], default=None)
        calls_cell = f"{len(calls)} ({slowest['tool'].split('__')[-1]} {slowest['seconds']:.2f} s)" if slowest else "0"
        wrong = [f"**{p['kind']}**: {p['detail']}" for p in row.get("problems") or []]
        if row.get("crash"):
            wrong.append(f"**crash**: {row['crash']}")
        done = "yes" if row.get("done") else "**no**"
        read = row.get("read") or {}
        read_cell = (
            f"{read['answers'] + read['windows'] + read['lists']:,} B: {read['answers']:,} + {read['windows']:,} + "
            f"{read['lists']:,} ({read['lists_read']})"
            if read
            else "n/a"
        )
        lines.append(
            f"| {row['demo']} | {len(tools)}: {', '.join(tools)} | {done} | {calls_cell} | {read_cell} | "
            f"{_cell('; '.join(wrong)) or 'nothing seen'} |"
        )
    done_rows = [r for r in rows if r.get("done") and r.get("read")]
    if done_rows:
        total = {k: sum(r["read"][k] for r in done_rows) for k in ("answers", "windows", "lists", "lists_read")}
        changed = sum(r["read"]["list_changed"] for r in done_rows)
        every = total["answers"] + total["windows"] + total["lists"]
        lines += [
            "",
            f"Bytes an agent read over the {len(done_rows)} tasks done: {every:,} B (answers {total['answers']:,}, "
            f"windows {total['windows']:,}, tool lists {total['lists']:,} in {total['lists_read']} lists after "
            f"{changed} tools/list_changed); per task {every / len(done_rows):,.0f} B.",
        ]
    lines += ["", "Notes (what a task worked around, why it stopped, what it could not check):", ""]
    for row in rows:
        for note in row.get("notes") or []:
            lines.append(f"- {row['demo']}: {_cell(note)}")
    lines += ["", "Calls (seconds from the request to the answer):", ""]
    for row in rows:
        timings = ", ".join(f"{c['tool'].split('__')[-1]} {c['seconds']:.2f}" for c in row.get("calls") or [])
        lines.append(f"- {row['demo']}: start {row.get('start_s', '?')} s; {timings}")
    return "\n".join(lines) + "\n"


def _meta(code: Path) -> dict[str, Any]:
    def out(command: list[str]) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout.strip()
        except OSError as exc:
            return f"unavailable ({exc})"

    return {
        "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "code": str(code),
        "commit": out(["git", "-C", str(code), "log", "-1", "--format=%h %s"])[:100],
        "dirty": bool(out(["git", "-C", str(code), "status", "--porcelain", "--", "webmcp", "cdp_bridge"])),
        "chromium": out([CHROMIUM, "--version"]),
        "python": platform.python_version(),
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


async def main_async(args: argparse.Namespace) -> int:
    roots, built, unbuilt = demo_roots(args.demos.resolve(), args.cache.resolve() if args.cache else None)
    only = {n for n in args.only.split(",") if n}
    tasks = [t for t in TASKS if not only or t.demo in only or t.label in only]
    code = args.code.resolve()
    meta = _meta(code)
    rows: list[dict[str, Any]] = []
    workdir = Path(args.workdir or (args.cache or Path("/tmp")) / "realapps-runs" / time.strftime("%Y%m%d-%H%M%S"))
    await anyio.Path(workdir).mkdir(parents=True, exist_ok=True)
    meta["baseline_start_s"] = round(await baseline_start(code, workdir), 3)
    with serve_demos(roots, built) as base:
        for task in tasks:
            if task.demo not in roots:
                why = unbuilt.get(task.demo, "not in the demos folder")
                rows.append(
                    {"demo": task.label or task.demo, "goal": task.goal, "done": False, "crash": f"not served: {why}"}
                )
                continue
            print(f"… {task.label or task.demo}: {task.goal}", file=sys.stderr, flush=True)
            rows.append(await run_task(task, base, code, workdir, meta["baseline_start_s"]))
    text = markdown(rows, meta)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M")
    out = Path(args.out) if args.out else RESULTS / f"realapps-{stamp}"
    out.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1, ensure_ascii=False, default=str)
    )
    out.with_suffix(".md").write_text(text)
    print(f"wrote {out.with_suffix('.json')} and .md", file=sys.stderr)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demos", type=Path, required=True, help="the demos/ folder of webmcp-tools")
    parser.add_argument("--cache", type=Path, help="build.py's cache (builds.json); without it only static demos run")
    parser.add_argument("--only", default="", help="comma-separated demo names (or row labels)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose bridge runs (default: this one)")
    parser.add_argument("--out", help="results path without suffix (default bench/results/realapps-<stamp>)")
    parser.add_argument("--workdir", help="where the bridges' stderr logs go")
    sys.exit(anyio.run(main_async, parser.parse_args()))


if __name__ == "__main__":
    main()
