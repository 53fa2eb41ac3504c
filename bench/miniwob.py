#!/usr/bin/env python
"""MiniWoB++ through the bridge, Playwright MCP and chrome-devtools-mcp side by side (issue 39's benchmark).

    .venv/bin/python bench/miniwob.py MINIWOB_HTML [--set dev|holdout] [--tasks a,b] [--seeds 5]
        [--subjects bridge,playwright|bridge,devtools|bridge,playwright,devtools]
        [--max-time 120000] [--out FILE] [--trace]

MINIWOB_HTML is the `html/` directory of PyPI `miniwob` 1.1.0 (`pip download miniwob==1.1.0
--no-deps`, unzip; the pages stay out of this repository). It is served as the web root on
127.0.0.1. One headless Chromium (`--remote-debugging-port=0 --enable-features=WebMCP`) is
launched; each server attaches to it in turn: the bridge by `--cdp-url`, Playwright MCP 0.0.86
(bench/wob/install, pinned in bench/wob/peer/package.json) by `--cdp-endpoint`, chrome-devtools-mcp
1.11.0 (bench/peers/install, pinned in bench/peers/package.json) by `--browserUrl`.

An episode starts as MiniWoB's own environment starts one (`miniwob/selenium_instance.py`):
the server's own navigate tool opens the task page; then a SIDE CDP connection to that page,
which only starts episodes and reads the reward, runs `core.endEpisode(0)`, raises
`core.EPISODE_MAX_TIME`, `Math.seedrandom(seed)`, `core.setDataMode("train")`,
`core.startEpisodeReal()` and waits for `WOB_TASK_READY`. Then the task's scripted policy
(bench/wob/policies.py) runs, seeing the page only through MCP answers, and the side connection
reads `WOB_DONE_GLOBAL`, `WOB_RAW_REWARD_GLOBAL`. An episode is completed when its raw reward
is > 0 (MiniWoB's own success criterion).

Each answer that says an action happened is checked over the side connection: a `fill` whose
value no input, textarea or select of the page holds, a `press` after which the page saw no
click, a key no keydown, a hover no mouseover, is recorded as an untrue claim.

Counted per episode: every byte of what the server sends the client after the episode began
(tool answers, `app://windows` reads, snapshots, tool lists re-read after a
`tools/list_changed`), calls, seconds. The navigate answer that opens the page is counted apart.
The bridge's agent does not re-read a window whose version the last answer said was the one it
read (bench/wob/adapters.py): `reads_skipped` and `bytes_skipped` (what those reads would have
cost, not in `bytes`) say how often.
Writes bench/results/miniwob-<stamp>.json and prints the per-task table.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/miniwob.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.peers.mcp_subject import StepFailed  # noqa: E402
from bench.wob.adapters import (  # noqa: E402
    ActionFailed,
    Adapter,
    BridgeAdapter,
    Counted,
    DevtoolsAdapter,
    PlaywrightAdapter,
    PolicyFailed,
)
from bench.wob.harness import Chromium, Side, serve  # noqa: E402
from bench.wob.holdout import HOLDOUT  # noqa: E402
from bench.wob.policies import DEV_SET, POLICIES  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PEER = ROOT / "bench" / "wob" / "peer" / "node_modules" / "@playwright" / "mcp" / "cli.js"
DEVTOOLS = ROOT / "bench" / "peers" / "node_modules" / "chrome-devtools-mcp"
SUBJECTS = ("bridge", "playwright", "devtools")
LABELS = {"bridge": "bridge", "playwright": "Playwright MCP", "devtools": "chrome-devtools-mcp"}
EPISODE_TIMEOUT = 100.0
"""Seconds a policy may take (the page's own limit is --max-time, 120 s by default)."""

_WATCH = """(() => {
  if (window.__wobSeen) return;
  const seen = window.__wobSeen = {click: 0, keydown: 0, mouseover: 0, clicked: ''};
  for (const kind of ['click', 'keydown', 'mouseover', 'pointerdown']) document.addEventListener(kind, (e) => {
    if (kind !== 'pointerdown') seen[kind]++;
    // What a person would say was clicked (the element and a few around it), read as the pointer
    // goes down: before the page's own handlers change it (a slider moves its value on mousedown).
    if (kind === 'pointerdown' || (kind === 'click' && !e.isTrusted)) {
      let at = e.target, said = [];
      // An icon has no words of its own: what names it is its class, id, title or picture's file
      // (its own or, for a picture inside a button, the button's; an SVG's className is no string).
      for (let k = 0; at && k < 4; k++, at = at.parentElement) {
        const own = ['class', 'id', 'title', 'src'].map((a) => at.getAttribute && at.getAttribute(a))
          .map((w) => String(w || '').replace(/[-_./]+/g, ' ')).join(' ');
        said.push((at.innerText || at.value || '').slice(0, 400) + ' ' + own);
      }
      seen.clicked = said.join(' | ');
    }
  }, true);
})()"""

_HOLDS = """((value) => {
  const shown = [...document.querySelectorAll('input, textarea, select, [contenteditable=true]')];
  if (Array.isArray(value)) {
    const want = value.map(v => String(v).trim()).sort().join('\\n');
    return shown.some(e => e.tagName === 'SELECT' &&
      [...e.selectedOptions].map(o => o.textContent.trim()).sort().join('\\n') === want ||
      e.tagName === 'SELECT' && [...e.selectedOptions].map(o => o.value).sort().join('\\n') === want);
  }
  if (typeof value === 'boolean') return true;
  return shown.some(e => (e.isContentEditable ? e.textContent : e.value) === String(value) ||
    e.tagName === 'SELECT' && [...e.selectedOptions].some(o => o.textContent.trim() === String(value)));
})"""


def bridge_command(cdp: str) -> list[str]:
    return [str(Path(sys.executable).parent / "webmcp-bridge"), "--cdp-url", cdp]


def playwright_command(cdp: str) -> list[str]:
    return ["node", str(PEER), "--cdp-endpoint", cdp]


def devtools_command(cdp: str) -> list[str]:
    entry = DEVTOOLS / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
    return ["node", str(entry), "--browserUrl", cdp, "--no-usage-statistics", "--no-performance-crux"]


def devtools_version() -> str:
    try:
        return str(json.loads((DEVTOOLS / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return ""


async def run_subject(
    key: str, chromium: Chromium, origin: str, tasks: list[str], seeds: list[int], args: argparse.Namespace
) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"wob-{key}-"))
    adapter: Adapter
    if key == "bridge":
        subject = Counted(bridge_command(chromium.http), workdir, {"PYTHONPATH": str(args.bridge_code)})
        adapter = BridgeAdapter(subject)
    elif key == "playwright":
        subject = Counted(playwright_command(chromium.http), workdir, {"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
        adapter = PlaywrightAdapter(subject)
    else:
        env = {"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1", "PUPPETEER_SKIP_DOWNLOAD": "1"}
        subject = Counted(devtools_command(chromium.http), workdir, env)
        adapter = DevtoolsAdapter(subject)
    started = time.perf_counter()
    await subject.open()
    episodes: list[dict[str, Any]] = []
    try:
        await subject.tool_names()
        adapter.lists_seen = subject.count("tools")  # that list is the agent's: no episode re-reads it unasked
        await adapter.ready()  # the bridge: its tab window; chrome-devtools-mcp: the page's id (list_pages)
        session = {"bytes": subject.bytes, "calls": subject.calls, "seconds": time.perf_counter() - started}
        for task in tasks:
            for seed in seeds:
                episode = await run_episode(adapter, subject, chromium, origin, task, seed, args)
                episodes.append(episode)
                mark = "ok " if episode["completed"] else "FAIL"
                print(
                    f"{key:10} {task:28} seed {seed}: {mark} raw {episode['raw']!s:5} {episode['bytes']:7} B "
                    f"{episode['calls']:3} calls {episode['seconds']:5.1f} s {episode.get('error', '')[:200]}",
                    flush=True,
                )
    finally:
        await subject.close()
    return {"session": session, "episodes": episodes, "stderr": str(subject.stderr_path)}


async def run_episode(
    adapter: Adapter, subject: Counted, chromium: Chromium, origin: str, task: str, seed: int, args: argparse.Namespace
) -> dict[str, Any]:
    url = f"{origin}/miniwob/{task}.html"
    episode: dict[str, Any] = {"task": task, "seed": seed, "untrue": []}
    side = Side()
    subject.log, subject.record = [], args.trace
    try:
        b0 = subject.bytes
        await adapter.navigate(url)
        episode["bytes_navigate"] = subject.bytes - b0
        await side.attach(chromium, url)
        await side.start_episode(seed, args.max_time)
        await side.evaluate(_WATCH)
        episode["query"] = await side.query()
    except Exception as exc:  # noqa: BLE001 - the episode could not start: recorded, the run goes on
        episode.update(completed=False, raw=None, bytes=0, calls=0, seconds=0.0, error=f"start: {exc!r}")
        await side.close()
        return episode

    async def verify(action: str, value: Any, text: str) -> None:
        try:
            seen = await side.evaluate("window.__wobSeen && ({...window.__wobSeen})")
            if seen is None:  # the page moved on (a new document): nothing to check against
                return
            if action == "fill":
                if not await side.evaluate(f"{_HOLDS}({json.dumps(value)})"):
                    episode["untrue"].append({"action": action, "value": value, "answer": text[:300]})
                return
            kind = {"press": "click", "key": "keydown", "hover": "mouseover"}[action]
            last = verify.seen.get(kind, 0)  # type: ignore[attr-defined]
            done = (await side.reward())["done"]
            if seen[kind] <= last and not done:
                episode["untrue"].append(
                    {"action": action, "value": value, "answer": text[:300], "page saw": f"no {kind}"}
                )
            elif action == "press" and value and not done and seen[kind] > last:
                # A click landed: on what the answer named, or within a few elements of it?
                base = " ".join(re.sub(r" #\d+$", "", str(value)).split()).lower()
                if base and base not in " ".join(seen["clicked"].split()).lower():
                    episode["untrue"].append(
                        {
                            "action": action,
                            "value": value,
                            "answer": text[:300],
                            "page saw": f"a click on {seen['clicked'][:120]!r}",
                        }
                    )
            verify.seen = seen  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - the check is best effort (the page may be gone)
            return

    verify.seen = {}  # type: ignore[attr-defined]
    adapter.verify = verify
    b0, c0, l0, t0 = subject.bytes, subject.calls, subject.list_bytes, time.perf_counter()
    skips = (adapter.skipped, adapter.skipped_bytes) if isinstance(adapter, BridgeAdapter) else None
    seen_lists = subject.count("tools")
    error = ""
    try:
        if subject.count("tools") > adapter.lists_seen and isinstance(adapter, BridgeAdapter):
            # An agent re-reads the tool list after tools/list_changed (the bridge's actions come and go).
            await subject.tool_names()
        await asyncio.wait_for(POLICIES[task](adapter), EPISODE_TIMEOUT)
    except (PolicyFailed, ActionFailed, StepFailed) as exc:
        error = f"{type(exc).__name__}: {exc}"
    except TimeoutError:
        error = f"policy timed out after {EPISODE_TIMEOUT:g} s"
    except Exception as exc:  # noqa: BLE001 - a bug in a policy or adapter: recorded, the run goes on
        error = f"{type(exc).__name__}: {exc} {traceback.format_exc(limit=3)[-600:]}"
    adapter.verify = None
    adapter.lists_seen = max(seen_lists, subject.count("tools"))
    elapsed = time.perf_counter() - t0
    reward: dict[str, Any] = {}
    try:
        for _ in range(20):  # the page may end the episode a moment after the last action
            reward = await side.reward()
            if reward["done"]:
                break
            await asyncio.sleep(0.05)
        if not reward.get("done"):
            await side.evaluate("core.endEpisode(0, false, 'policy ended')")
    except Exception as exc:  # noqa: BLE001
        error = error or f"reward: {exc!r}"
    finally:
        await side.close()
    raw = reward.get("raw") if reward.get("done") else None
    episode.update(
        completed=bool(raw is not None and raw > 0),
        raw=raw,
        reward=reward.get("reward"),
        reason=reward.get("reason"),
        bytes=subject.bytes - b0,
        bytes_lists=subject.list_bytes - l0,
        calls=subject.calls - c0,
        seconds=round(elapsed, 3),
        error=error,
    )
    if skips is not None:  # the bridge's agent
        episode.update(reads_skipped=adapter.skipped - skips[0], bytes_skipped=adapter.skipped_bytes - skips[1])
    if args.trace:
        episode["trace"] = subject.log
    return episode


def _commit(checkout: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"], capture_output=True, text=True, timeout=10
        )
        return head.stdout.strip()[:120]
    except (OSError, subprocess.TimeoutExpired):
        return ""


def table(results: dict[str, Any], tasks: list[str], seeds: list[int]) -> str:
    keys = [k for k in SUBJECTS if k in results]
    head = "| task | " + " | ".join(f"{k} done | {k} B/solved | {k} calls" for k in keys) + " |"
    rows = [head, "|" + "---|" * (1 + 3 * len(keys))]
    # B/solved: every byte the server sent during the solved episodes (tool lists re-read after a
    # tools/list_changed included), averaged over them; calls: averaged over all episodes.
    totals = {k: {"done": 0, "bytes": 0, "calls": 0, "n": 0} for k in keys}
    peers = [k for k in keys if k != "bridge"] if "bridge" in keys else []
    both: dict[str, dict[str, dict[str, Any]]] = {
        peer: {k: {"bytes": 0, "lists": 0, "calls": 0, "n": 0, "each": []} for k in ("bridge", peer)} for peer in peers
    }
    for task in tasks:
        cells = [task]
        per = {k: [e for e in results[k]["episodes"] if e["task"] == task] for k in keys}
        for k in keys:
            won = [e for e in per[k] if e["completed"]]
            totals[k]["done"] += len(won)
            totals[k]["n"] += len(per[k])
            totals[k]["bytes"] += sum(e["bytes"] for e in won)
            totals[k]["calls"] += sum(e["calls"] for e in per[k])
            mean = round(sum(e["bytes"] for e in won) / len(won)) if won else "–"
            calls = round(sum(e["calls"] for e in per[k]) / len(per[k]), 1) if per[k] else "–"
            cells += [f"{len(won)}/{len(per[k])}", str(mean), str(calls)]
        # Episodes both solved (same task, same seed): bytes compared like for like, the bridge
        # against each peer apart.
        for peer in peers:
            for seed in seeds:
                pair = {k: e for k in ("bridge", peer) for e in per[k] if e["seed"] == seed}
                if len(pair) == 2 and all(p["completed"] for p in pair.values()):
                    for k, e in pair.items():
                        both[peer][k]["bytes"] += e["bytes"]
                        both[peer][k]["lists"] += e.get("bytes_lists", 0)
                        both[peer][k]["calls"] += e["calls"]
                        both[peer][k]["n"] += 1
                        both[peer][k]["each"].append(e["bytes"])
        rows.append("| " + " | ".join(cells) + " |")
    cells = ["**total**"]
    for k in keys:
        t = totals[k]
        mean = round(t["bytes"] / t["done"]) if t["done"] else "–"
        cells += [f"**{t['done']}/{t['n']}**", f"**{mean}**", f"**{round(t['calls'] / max(t['n'], 1), 1)}**"]
    rows.append("| " + " | ".join(cells) + " |")
    out = "\n".join(rows)
    out += "\n" if peers else ""
    for peer in peers:
        b, p = both[peer]["bridge"], both[peer][peer]
        if not b["n"]:
            out += f"\nNo episode was completed by both the bridge and {LABELS[peer]}."
            continue
        name = LABELS[peer]
        out += (
            f"\nOn the {b['n']} episodes both the bridge and {name} completed: bridge {b['bytes']} B in "
            f"{b['calls']} calls (median {_median(b['each']):.0f} B an episode), {name} {p['bytes']} B in "
            f"{p['calls']} calls (median {_median(p['each']):.0f} B); bytes ratio bridge/{name} "
            f"{b['bytes'] / max(p['bytes'], 1):.2f}, "
            f"of the medians {_median(b['each']) / max(_median(p['each']), 1):.2f} "
            f"(of which tool lists re-read after tools/list_changed: bridge {b['lists']} B, {name} {p['lists']} B; "
            f"without them {(b['bytes'] - b['lists']) / max(p['bytes'] - p['lists'], 1):.2f})."
        )
    if "bridge" in keys:
        eps = results["bridge"]["episodes"]
        out += (
            "\nReads the bridge's agent skipped (an answer said the window was at the version it had read, or a "
            "fill that nothing but its values changed since; or neither an action nor a resources/updated came): "
            f"{sum(e.get('reads_skipped', 0) for e in eps)}, which would have cost "
            f"{sum(e.get('bytes_skipped', 0) for e in eps)} B."
        )
    untrue = {k: sum(len(e["untrue"]) for e in results[k]["episodes"]) for k in keys}
    out += (
        "\nAnswers claiming an effect the page did not show: " + ", ".join(f"{k} {n}" for k, n in untrue.items()) + "."
    )
    return out


def _median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def failures(results: dict[str, Any]) -> str:
    """Each failed episode: server, task, seed, and why (the policy's or server's words, or the raw reward)."""
    lines = []
    for key, run in results.items():
        for e in run["episodes"]:
            if not e["completed"]:
                why = e.get("error") or f"raw reward {e.get('raw')} ({e.get('reason')})"
                lines.append(f"{key:10} {e['task']:26} {e['seed']}  {why[:400]}")
            lines.extend(
                f"{key:10} {e['task']:26} {e['seed']}  UNTRUE {json.dumps(claim, ensure_ascii=False)[:400]}"
                for claim in e.get("untrue", [])
            )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, nargs="?", help="miniwob 1.1.0's html/ directory")
    parser.add_argument("--report", type=Path, help="print the table of an earlier run's JSON and stop")
    parser.add_argument("--failures", action="store_true", help="with --report: each failed episode's reason")
    parser.add_argument("--tasks", help="a comma-separated choice of tasks (default: those of --set)")
    parser.add_argument(
        "--set",
        default="dev",
        choices=("dev", "holdout"),
        help="dev: the tasks earlier rounds tuned on; holdout: the rest",
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--subjects", default="bridge,playwright", help=f"a comma-separated choice of {', '.join(SUBJECTS)}"
    )
    parser.add_argument("--max-time", type=int, default=120000, help="core.EPISODE_MAX_TIME, ms")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--trace", action="store_true", help="keep every call and answer in the JSON")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--bridge-code",
        type=Path,
        default=ROOT,
        help="the checkout whose webmcp the bridge runs (default: this one), e.g. a worktree with branches merged in",
    )
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(saved["table"] if not args.failures else failures(saved["results"]))
        return
    if args.html is None:
        parser.error("the html/ directory is needed")
    if not (args.html / "miniwob").is_dir() or not (args.html / "core" / "core.js").is_file():
        parser.error(f"{args.html} is not miniwob's html/ directory (miniwob/*.html, core/core.js)")
    tasks = [t for t in args.tasks.split(",") if t] if args.tasks else (DEV_SET if args.set == "dev" else HOLDOUT)
    unknown = [t for t in tasks if t not in POLICIES]
    if unknown:
        parser.error(f"no policy for {', '.join(unknown)}")
    subjects = [k for k in args.subjects.split(",") if k]
    if not subjects or any(k not in SUBJECTS for k in subjects):
        parser.error(f"--subjects: a comma-separated choice of {', '.join(SUBJECTS)}")
    seeds = list(range(args.seeds))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M")
    results: dict[str, Any] = {}
    async with serve(args.html) as origin:
        chromium = Chromium(args.chromium)
        await chromium.start()
        try:
            for key in subjects:
                results[key] = await run_subject(key, chromium, origin, tasks, seeds, args)
        finally:
            chromium.stop()
    text = table(results, tasks, seeds)
    print(text)
    out = args.out or RESULTS / f"miniwob-{stamp}.json"
    meta = {
        "stamp": stamp,
        "tasks": tasks,
        "seeds": seeds,
        "max_time_ms": args.max_time,
        "completed_when": "raw reward > 0",
        "playwright_mcp": "0.0.86",
        "chrome_devtools_mcp": devtools_version(),
        "chromium": args.chromium,
        "bridge_code": str(args.bridge_code),
        "bridge_commit": _commit(args.bridge_code),
    }
    out.write_text(json.dumps({"meta": meta, "results": results, "table": text}, indent=1, ensure_ascii=False))
    print(failures(results))
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main())
