#!/usr/bin/env python
"""What the last round's guarantees cost, measured (issue 22: the costs of the last round).

    python bench/last_round_costs.py CORPUS [--rounds 3] [--pages 10] [--calls 40] [--only LIST]

* `ax`, `fetch` (raw CDP, `cdp_bridge.connection`): a fresh tab per sample on the first
  `--pages` corpus pages (served as `bench/real_pages.py` serves them, other hosts failing at
  once), in three variants interleaved in a rotating order: `base` (Page and Runtime on);
  `ax`: also `Accessibility.enable` before the navigation, as the bridge does at attach for
  every tab it follows (cdp_bridge/ax.py `enable_accessibility`); `fetch`: also
  `Fetch.enable` pausing every document request, each continued from Python, as
  webmcp/desktop/sign_in.py does for sign-in challenges. Measured: `Page.navigate` →
  `Page.loadEventFired` (wall, in this process), and on the loaded page a scripted DOM churn
  (20 frames of `--churn-items` paragraphs added, default 200; every other frame removed; a
  layout read and an animation frame each) timed inside the page.
* `worlds` (raw CDP): `Page.createIsolatedWorld` under one name 500 times on one loaded
  corpus page, each followed by an evaluate in it, as each read of the bridge does
  (cdp_bridge/ax.py, layout.py, webmcp/desktop/secret_values.py): how many distinct
  execution contexts that makes, and Chromium's PSS before and after.
* `gesture` (raw CDP, the sample site's read-only `list_tickets`): `WebMCP.invokeTool` →
  `WebMCP.toolResponded`, alone or with `Runtime.evaluate {userGesture: true}` written just
  before it on the same session (pipelined, as webmcp/desktop/calls.py sends it), interleaved.
* `churn` (a real bridge over stdio, `mcp.Client`): `tools/list_changed` notifications per
  navigation and per `fill` on pages without WebMCP tools (the sample site's `/plain/`
  pages and 5 corpus pages), the size of the tool list, and whether a notification came
  when the list (names, titles, descriptions, schemas) was the same as at the one before.

Writes bench/results/last-round-costs-<stamp>.json and prints Markdown. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/last_round_costs.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.peers.mcp_subject import StepFailed  # noqa: E402
from bench.peers.subjects import Bridge  # noqa: E402
from bench.real_pages import Page, browser_wrapper, load_corpus, serve_corpus  # noqa: E402
from cdp_bridge.connection import CDPSession, Connection  # noqa: E402
from cdp_bridge.errors import CDPError  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from sample_site import serve_in_thread  # noqa: E402

RESULTS = ROOT / "bench" / "results"
STEP = 30.0
_DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document"}]  # webmcp/desktop/sign_in.py's pattern
CHURN_JS = """(async () => {
  const box = document.createElement('div');
  (document.body || document.documentElement).appendChild(box);
  const started = performance.now();
  for (let frame = 0; frame < 20; frame++) {
    for (let i = 0; i < ITEMS; i++) {
      const p = document.createElement('p');
      p.textContent = 'item ' + frame + ' ' + i;
      box.appendChild(p);
    }
    if (frame % 2) box.replaceChildren();
    void box.offsetHeight;
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  }
  box.remove();
  return performance.now() - started;
})()"""


def _load() -> str:
    return "{:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": statistics.median(values), "min": min(values), "max": max(values)}


class Browser:
    """One Chromium over raw CDP (the project's launcher and connection), tabs made fresh per sample."""

    def __init__(self, wrapper: str) -> None:
        self.wrapper = wrapper
        self.stack = AsyncExitStack()
        self.connection: Connection | None = None
        self.pid = 0

    async def open(self) -> None:
        options = LaunchOptions(browser=self.wrapper, headless=True, debugging="port")
        browser = await self.stack.enter_async_context(await launch_browser(options))
        self.pid = browser.pid
        self.connection = await self.stack.enter_async_context(Connection.connect(browser.ws_url))

    async def close(self) -> None:
        await self.stack.aclose()

    async def tab(self) -> tuple[CDPSession, str]:
        assert self.connection is not None
        browser = self.connection.browser
        target = (await browser.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        attached = await browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        return self.connection.session(attached["sessionId"], target), target

    async def close_tab(self, target: str) -> None:
        assert self.connection is not None
        await self.connection.browser.send("Target.closeTarget", {"targetId": target})


async def _pause_documents(session: CDPSession, tg: anyio.abc.TaskGroup) -> None:
    """sign_in.py's pattern: every document request pauses and is continued from here."""

    async def go_on(method: str, params: dict[str, Any]) -> None:
        try:
            await session.send(method, params)
        except CDPError:
            pass  # the request went away (the tab closed)

    session.on(
        "Fetch.requestPaused",
        lambda p: tg.start_soon(go_on, "Fetch.continueRequest", {"requestId": p["requestId"]}),
    )
    session.on(
        "Fetch.authRequired",
        lambda p: tg.start_soon(
            go_on,
            "Fetch.continueWithAuth",
            {"requestId": p["requestId"], "authChallengeResponse": {"response": "Default"}},
        ),
    )
    await session.send("Fetch.enable", {"handleAuthRequests": True, "patterns": _DOCUMENTS})


async def one_load(browser: Browser, url: str, variant: str, items: int) -> tuple[float, float | None]:
    """(navigate → load event, churn ms) in a fresh tab with `variant`'s domains on."""
    session, target = await browser.tab()
    try:
        async with anyio.create_task_group() as tg:
            await session.send("Page.enable")
            await session.send("Runtime.enable")
            if variant == "ax":
                await session.send("Accessibility.enable")
            elif variant == "fetch":
                await _pause_documents(session, tg)
            started = time.perf_counter()
            async with session.expect("Page.loadEventFired") as loaded:
                await session.send("Page.navigate", {"url": url})
                await loaded.wait(STEP)
            load = time.perf_counter() - started
            reply = await session.send(
                "Runtime.evaluate",
                {"expression": CHURN_JS.replace("ITEMS", str(items)), "awaitPromise": True, "returnByValue": True},
                timeout=STEP,
            )
            churn = reply.get("result", {}).get("value")
            tg.cancel_scope.cancel()
    finally:
        await browser.close_tab(target)
    return load, float(churn) if isinstance(churn, (int, float)) else None


async def loads(
    browser: Browser, pages: list[Page], site: str, rounds: int, variants: list[str], items: int
) -> dict[str, Any]:
    samples: dict[str, dict[str, list[float]]] = {v: {"load_s": [], "churn_ms": []} for v in variants}
    failures: list[str] = []
    turn = 0
    for number in range(rounds):
        for page in pages:
            order = variants[turn % len(variants) :] + variants[: turn % len(variants)]
            turn += 1
            for variant in order:
                try:
                    load, churn = await one_load(browser, f"{site}/p/{page.key}", variant, items)
                except (CDPError, TimeoutError) as exc:
                    failures.append(f"{variant} {page.key[:8]}: {type(exc).__name__}: {exc}")
                    continue
                samples[variant]["load_s"].append(load)
                if churn is not None:
                    samples[variant]["churn_ms"].append(churn)
            print(f"loads round {number + 1} {page.key[:8]} done, load {_load()}", file=sys.stderr, flush=True)
    return {
        "variants": {v: {k: stats(x) for k, x in s.items()} for v, s in samples.items()},
        "raw": samples,
        "failures": failures,
    }


async def gesture(browser: Browser, site: str, calls: int) -> dict[str, Any]:
    session, target = await browser.tab()
    responded: dict[str, anyio.Event] = {}
    tools: set[str] = set()
    seen = anyio.Event()

    def added(params: dict[str, Any]) -> None:
        tools.update(t["name"] for t in params["tools"])
        seen.set()

    def done(params: dict[str, Any]) -> None:
        responded.setdefault(params["invocationId"], anyio.Event()).set()

    session.on("WebMCP.toolsAdded", added)
    session.on("WebMCP.toolResponded", done)
    await session.send("Page.enable")
    await session.send("Runtime.enable")
    await session.send("WebMCP.enable")
    frame = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    async with session.expect("Page.loadEventFired") as loaded:
        await session.send("Page.navigate", {"url": site + "/"})
        await loaded.wait(STEP)
    with anyio.fail_after(STEP):
        while "list_tickets" not in tools:
            await seen.wait()
            seen = anyio.Event()
    times: dict[str, list[float]] = {"invokeTool alone": [], "with userGesture evaluate": []}

    async def call(with_gesture: bool) -> float:
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            if with_gesture:
                tg.start_soon(
                    lambda: session.send("Runtime.evaluate", {"expression": "0", "userGesture": True}, timeout=STEP)
                )
                await anyio.lowlevel.checkpoint()
            reply = await session.send(
                "WebMCP.invokeTool", {"frameId": frame, "toolName": "list_tickets", "input": {}}, timeout=STEP
            )
        event = responded.setdefault(reply["invocationId"], anyio.Event())
        with anyio.fail_after(STEP):
            await event.wait()
        return time.perf_counter() - started

    for _ in range(3):  # warm-up
        await call(False)
        await call(True)
    for number in range(calls):
        for with_gesture in (False, True) if number % 2 else (True, False):
            key = "with userGesture evaluate" if with_gesture else "invokeTool alone"
            times[key].append(await call(with_gesture))
    await browser.close_tab(target)
    return {k: stats(v) for k, v in times.items()}


def _chromium_pss_kb(pid: int) -> int:
    from bench.memory import _descendants, _kb

    return sum(_kb(p, "smaps_rollup", "Pss") for p in [pid, *_descendants(pid)])


async def worlds(browser: Browser, url: str, reads: int) -> dict[str, Any]:
    """`Page.createIsolatedWorld` with one name, `reads` times on one document, as each read does:
    distinct execution contexts made, and Chromium's PSS before and after."""
    session, target = await browser.tab()
    await session.send("Page.enable")
    async with session.expect("Page.loadEventFired") as loaded:
        await session.send("Page.navigate", {"url": url})
        await loaded.wait(STEP)
    frame = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    before = _chromium_pss_kb(browser.pid)
    contexts = set()
    for _ in range(reads):
        world = await session.send("Page.createIsolatedWorld", {"frameId": frame, "worldName": "bench_world"})
        contexts.add(world["executionContextId"])
        expression = {"expression": "document.getElementsByTagName('*').length", "returnByValue": True}
        await session.send("Runtime.evaluate", {**expression, "contextId": world["executionContextId"]})
    after = _chromium_pss_kb(browser.pid)
    await browser.close_tab(target)
    return {"reads": reads, "contexts": len(contexts), "pss_before_kb": before, "pss_after_kb": after}


async def _raw(args: argparse.Namespace, pages: list[Page], corpus_site: str, sample: str, tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    browser = Browser(browser_wrapper(tmp, "fail", None, []))
    await browser.open()
    try:
        variants = [v for v in ("base", "ax", "fetch") if v == "base" or v in args.only]
        if len(variants) > 1:
            chosen = pages[: args.pages]
            out["loads"] = await loads(browser, chosen, corpus_site, args.rounds, variants, args.churn_items)
        if "worlds" in args.only:
            out["worlds"] = await worlds(browser, f"{corpus_site}/p/{pages[0].key}", 500)
        if "gesture" in args.only:
            out["gesture"] = await gesture(browser, sample, args.calls)
    finally:
        await browser.close()
    return out


def _fields(state: str, win: str) -> list[str]:
    window = next((w for w in json.loads(state)["windows"] if w["id"] == win), {})
    return [
        str(i["label"])
        for b in window.get("blocks", [])
        if b.get("type") == "fields" and b.get("id") != "address"  # the window's own address bar
        for i in b.get("items", [])
        if i.get("label") and not i.get("sensitive") and isinstance(i.get("value", ""), str) and "options" not in i
    ]


class Listener:
    """The tool lists heard after each tools/list_changed, to tell a real change from a repeat."""

    def __init__(self, subject: Bridge) -> None:
        self.subject = subject
        self.last = ""
        self.same = 0
        self.size = 0
        self.names: list[str] = []

    async def listing(self) -> str:
        assert self.subject.client is not None
        with anyio.fail_after(10):
            listed = await self.subject.client.list_tools()
        self.size = len(listed.tools)
        self.names = sorted(t.name for t in listed.tools)
        return json.dumps([t.model_dump(mode="json") for t in listed.tools], sort_keys=True)

    async def measure(self, act: Callable[[], Awaitable[Any]], quiet: float = 1.5) -> int:
        """Notifications from `act` until `quiet` s pass without one. The list is read after those
        that came while `act` ran, then after each later one; `same` counts the reads that found the
        list as the read before it did (several notifications between two reads can net to none)."""
        before = self.subject.count("tools")
        await act()
        seen = before
        while True:
            if self.subject.count("tools") == seen and not await self.subject.next_notification("tools", seen, quiet):
                break
            seen = self.subject.count("tools")
            now = await self.listing()
            if now == self.last:
                self.same += 1
            self.last = now
        return self.subject.count("tools") - before


async def churn(pages: list[Page], corpus_site: str, sample: str, tmp: Path) -> dict[str, Any]:
    subject = Bridge(tmp, sample, browser=browser_wrapper(tmp, "fail", None, []))
    await subject.open(60)
    rows: list[dict[str, Any]] = []
    try:
        await subject.ready(60)
        listener = Listener(subject)
        listener.last = await listener.listing()
        urls = [f"{sample}/plain/{p}" for p in ("", "search.html", "signin.html", "cart.html")]
        urls += [f"{corpus_site}/p/{p.key}" for p in pages[:5]]
        for _ in range(2):
            for url in urls:
                row: dict[str, Any] = {"url": url.split("/", 3)[-1]}
                win = subject.win
                try:
                    row["navigate"] = await listener.measure(lambda u=url: subject.navigate(u, STEP))
                    row["tools"] = listener.size
                    row["names"] = listener.names
                    labels = _fields(await subject.state(), win)
                    if labels:
                        fill = {"fields": [{"label": labels[0], "value": "tide"}]}
                        row["fill"] = await listener.measure(lambda f=fill, w=win: subject.call(f"{w}__fill", f, 15))
                except StepFailed as exc:
                    row["error"] = str(exc)[:200]
                rows.append(row)
                print(f"churn {row}", file=sys.stderr, flush=True)
        return {"rows": rows, "same_as_before": listener.same}
    finally:
        await subject.close()


async def bench(args: argparse.Namespace, pages: list[Page]) -> dict[str, Any]:
    out: dict[str, Any] = {"loads_before": _load()}
    with (
        serve_corpus(pages) as corpus_site,
        serve_in_thread() as sample,
        tempfile.TemporaryDirectory(prefix="costs-") as tmp,
    ):
        if {"ax", "fetch", "gesture", "worlds"} & set(args.only):
            out.update(await _raw(args, pages, corpus_site, sample, Path(tmp)))
        if "churn" in args.only:
            out["churn"] = await churn(pages, corpus_site, sample, Path(tmp))
    out["loads_after"] = _load()
    return out


def _ms(s: dict[str, Any], scale: float = 1.0) -> str:
    if not s.get("n"):
        return "—"
    return f"{s['median'] * scale:.1f} ({s['min'] * scale:.1f}–{s['max'] * scale:.1f}, n={s['n']})"


def markdown(raw: dict[str, Any]) -> str:
    lines = [f"load average {raw['loads_before']} before, {raw['loads_after']} after"]
    if "loads" in raw:
        lines += ["", "| variant | navigate → load event, ms | DOM churn, ms |", "|---|---|---|"]
        for variant, s in raw["loads"]["variants"].items():
            lines.append(f"| {variant} | {_ms(s['load_s'], 1000)} | {_ms(s['churn_ms'])} |")
        if raw["loads"]["failures"]:
            lines.append(f"\nfailed: {'; '.join(raw['loads']['failures'][:5])}")
    if "worlds" in raw:
        w = raw["worlds"]
        lines.append(
            f"\n{w['reads']} createIsolatedWorld + evaluate on one document: {w['contexts']} distinct contexts; "
            f"Chromium PSS {w['pss_before_kb'] / 1024:.0f} MB before, {w['pss_after_kb'] / 1024:.0f} MB after"
        )
    if "gesture" in raw:
        lines += ["", "| page tool call (raw CDP) | ms |", "|---|---|"]
        lines += [f"| {k} | {_ms(s, 1000)} |" for k, s in raw["gesture"].items()]
    if "churn" in raw:
        lines += [
            "",
            "| page | list_changed per navigate | tools listed | list_changed per fill |",
            "|---|---|---|---|",
        ]
        for row in raw["churn"]["rows"]:
            lines.append(
                f"| {row['url']} | {row.get('navigate', '—')} | {row.get('tools', '—')} | {row.get('fill', '—')} |"
            )
        same = raw["churn"]["same_as_before"]
        lines.append(f"\nlist reads after a notification that found the list as the read before: {same}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python bench/last_round_costs.py", description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="article-extraction-benchmark checkout: html/, ground-truth.json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--churn-items", type=int, default=200, help="paragraphs added per frame of the churn")
    parser.add_argument("--calls", type=int, default=40, help="page-tool calls per variant")
    parser.add_argument("--only", default="ax,fetch,worlds,gesture,churn")
    args = parser.parse_args()
    args.only = [x for x in args.only.split(",") if x]
    pages = load_corpus(args.corpus, [], max(args.pages, 5))
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    logging.getLogger("client").setLevel(logging.ERROR)
    started = datetime.datetime.now(datetime.UTC)
    raw = anyio.run(bench, args, pages)
    raw.update(started=started.isoformat(), command=" ".join(["python bench/last_round_costs.py", *sys.argv[1:]]))
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"last-round-costs-{started:%Y%m%d-%H%M}.json"
    out.write_text(json.dumps(raw, indent=1))
    print(markdown(raw))
    print(f"\nwritten: {out.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
