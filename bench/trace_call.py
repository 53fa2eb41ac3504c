#!/usr/bin/env python
"""Where one page-changing call's time goes, bridge-side, span by span (issue 22 item 3).

    .venv/bin/python bench/trace_call.py --page shop -n 20       # bench.site /shop/ add_to_cart
    .venv/bin/python bench/trace_call.py --page sample --code /work/main
    .venv/bin/python bench/trace_call.py --page tasks --layout-log /tmp/layout.jsonl --frames /tmp/frames

Runs the bridge as a user does (`webmcp-bridge --headless URL`, MCP over stdio) inside a wrapper
(`--serve`) that times, with `perf_counter_ns`, the steps of a page-tool call and of the view
read that follows it: each CDP command by method, the call's phases (`calls.call_page_tool`,
`LiveView.catch_up`, `refresh`), the incremental read's parts (`read_changes`, the observer's
take, the AX subtrees, the text layout) and `build_view` (with its CPU time). The calls are
bench/peers' own (`measures.py`: each call changes something new), made one after another as the
peers bench makes them. Prints, per span, the median start (from the call's start) and duration
over the calls, and how many calls had it. Tracing adds a few µs a span. `--layout-log` says,
per incremental read, which nodes in running text a change touched (each one makes the read take a
`DOMSnapshot`); `--frames` records what each `build_view` was given, to profile it offline. It
also prints the CPU time a call cost the bridge and its browser (all of the bridge's descendant
processes, from /proc, after the `--skip` first calls): a figure the other work on a loaded
machine moves less than the wall clock. `--page-clock` times the observer's take on the page's own
clock (how long the command waited for the page, the script itself, and the page's last animation
frame before it); `--profile FILE` keeps cProfile stats of the bridge during its calls. Each
collection of Python's garbage collector is a span (`gc gen N`). `--subscribe` subscribes the client
to `app://windows` first, as bench/peers' client is (the notifier then writes `resources/updated`
after each change); `--pause S` leaves the page idle S seconds before each call, as an agent's
model turn would (the calls then meet the page's frame clock at any phase, not locked to it).
`--quiet` makes the page's read-only tool's calls instead (issue 22 item 2); `--profile-all` keeps
the profile on from the first call to the end (what runs between the calls, the MCP SDK's part).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CALL_TIMEOUT = 10.0
_EVENTS = frozenset({"WebMCP.toolResponded", "Runtime.bindingCalled", "WebMCP.toolInvoked"})
_SPANS: list[tuple[str, int, int, int]] = []  # name, start ns, end ns, thread CPU ns


def _install(owner: Any, attr: str, inner: Any, wrapper: Any) -> None:
    """Put `wrapper` wherever the code finds `inner`: its owner and every module that imported it by name."""
    setattr(owner, attr, wrapper)
    for module in list(sys.modules.values()):
        if (
            getattr(module, "__name__", "").startswith(("webmcp", "cdp_bridge"))
            and getattr(module, attr, None) is inner
        ):
            setattr(module, attr, wrapper)


def _timed(owner: Any, attr: str, name: str | None = None, cpu: bool = False) -> None:
    """Replace the coroutine function `owner.attr` with one that records a span per call."""
    inner = getattr(owner, attr, None)
    label = name or attr
    if inner is None:
        print(f"trace_call: no {attr} on {getattr(owner, '__name__', owner)}: not traced", file=sys.stderr)
        return

    @functools.wraps(inner)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, cpu0 = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return await inner(*args, **kwargs)
        finally:
            _SPANS.append((label, start, time.perf_counter_ns(), time.thread_time_ns() - cpu0 if cpu else 0))

    _install(owner, attr, inner, wrapper)


def _timed_sync(owner: Any, attr: str, name: str | None = None) -> None:
    inner = getattr(owner, attr, None)
    label = name or attr
    if inner is None:
        print(f"trace_call: no {attr} on {getattr(owner, '__name__', owner)}: not traced", file=sys.stderr)
        return

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, cpu0 = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return inner(*args, **kwargs)
        finally:
            _SPANS.append((label, start, time.perf_counter_ns(), time.thread_time_ns() - cpu0))

    _install(owner, attr, inner, wrapper)


def _trace_cdp(connection: Any) -> None:
    """Each CDP command a span (by method), and the arrival of the events of `_EVENTS`."""
    send, dispatch = connection.CDPSession.send, connection.CDPSession._dispatch

    async def traced_send(self: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter_ns()
        try:
            return await send(self, method, *args, **kwargs)
        finally:
            _SPANS.append((f"cdp {method}", start, time.perf_counter_ns(), 0))

    def traced_dispatch(self: Any, method: str, params: dict[str, Any]) -> None:
        now = time.perf_counter_ns()
        dispatch(self, method, params)
        if method in _EVENTS:
            _SPANS.append((f"event {method}", now, time.perf_counter_ns(), 0))

    connection.CDPSession.send = traced_send
    if send_all := getattr(connection.CDPSession, "send_all", None):

        async def traced_send_all(self: Any, commands: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return await send_all(self, commands, *args, **kwargs)
            finally:  # each command of the batch a span of the batch's time (written together)
                end = time.perf_counter_ns()
                _SPANS.extend((f"cdp {method}", start, end, 0) for method, _params in commands)

        connection.CDPSession.send_all = traced_send_all
    connection.CDPSession._dispatch = traced_dispatch


def _log_layout(live_view: Any, layout: Any, path: str) -> None:
    """Append, for each incremental read's text layout, the nodes in running text it found touched."""
    patch = live_view.patch_text_layout

    async def logging_patch(send: Any, frames: Any, before: Any, wanted_before: Any, touched: Any, *more: Any) -> Any:
        below, beside, links = layout._in_running_text(frames)
        wanted = below | beside | links
        by_backend = {n.get("backendDOMNodeId"): n for _f, nodes in frames for n in nodes}
        hit = [f"{b}:{_described(by_backend[b])}" for b in sorted(wanted & touched)]
        line = {"touched": len(touched), "hit": hit, "new": len(wanted - wanted_before)}
        with open(path, "a", encoding="utf-8") as f:  # noqa: ASYNC230 (a line, in the traced bridge only)
            f.write(json.dumps(line) + "\n")
        return await patch(send, frames, before, wanted_before, touched, *more)

    live_view.patch_text_layout = logging_patch


def _described(node: dict[str, Any]) -> str:
    return f"{node.get('role', {}).get('value')}:{str(node.get('name', {}).get('value', ''))[:30]!r}"


def _record_frames(live_view: Any, folder: str) -> None:
    """Write what each `build_view` is given (the frames, in their recorded form) into `folder`."""
    build = live_view.build_view
    count = iter(range(1_000_000))
    Path(folder).mkdir(parents=True, exist_ok=True)

    def recording_build(frames: Any, *args: Any, **kwargs: Any) -> Any:
        values = sorted(kwargs.get("secret_values", ()))
        doc = {"frames": [f.to_json() for f in frames], "secret_values": values}
        (Path(folder) / f"build-{next(count):04d}.json").write_text(json.dumps(doc))
        return build(frames, *args, **kwargs)

    live_view.build_view = recording_build


def _page_clock(take: Any) -> None:
    """Spans, on the page's clock, of the take's script: from the command's write to the script's start
    (queued behind the page's own work), the script itself, and the page's last animation frame before it."""
    offset = time.time_ns() - time.perf_counter_ns()
    stamp = "performance.timeOrigin + performance.now()"
    for key, source in list(take.CHANGES_JS.items()):
        # An expression (Runtime.evaluate) before the take became a function of the bridge's count.
        declared = source.startswith("function")
        take.CHANGES_JS[key] = (
            ("function (known) { " if declared else "(() => { ")
            + f"const s = {stamp}; const f = performance.timeOrigin + (document.timeline.currentTime ?? 0);"
            + (f" const r = ({source})(known);" if declared else f" const r = {source};")
            + f" const e = {stamp};"
            + " if (Array.isArray(r)) { const m = JSON.parse(r[0]); m.clock = [s, e, f]; r[0] = JSON.stringify(m); }"
            + (" return r; }" if declared else " return r; })()")
        )
    written: list[int] = []
    batch, parse = take.commands_side_by_side, take.parse_take

    async def timed_batch(send: Any, commands: Any, *args: Any, **kwargs: Any) -> Any:
        written.append(time.perf_counter_ns())
        return await batch(send, commands, *args, **kwargs)

    def clocked_parse(found: Any, *args: Any) -> Any:
        parsed = parse(found, *args)
        if parsed is not None and "clock" in parsed[0] and written:
            s, e, f = (int(ms * 1e6) - offset for ms in parsed[0].pop("clock"))
            _SPANS.append(("page: take queued", written[-1], s, 0))
            _SPANS.append(("page: take script", s, e, 0))
            _SPANS.append(("page: last frame before take", f, f, 0))
        return parsed

    take.commands_side_by_side, take.parse_take = timed_batch, clocked_parse


def _trace_gc() -> None:
    """Each collection of Python's cyclic garbage collector a span (`gc gen N`)."""
    import gc

    started: list[int] = [0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter_ns()
        else:
            _SPANS.append((f"gc gen {info['generation']}", started[0], time.perf_counter_ns(), 0))

    gc.callbacks.append(on_gc)


def _cpu_of_tree(root: int) -> tuple[float, float]:
    """CPU seconds (user + system) of process `root`, and of all its descendants (the browser's)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    below = 0.0
    for pid in cpu:
        ancestor = parents.get(pid, 0)
        while ancestor > 1 and ancestor != root:
            ancestor = parents.get(ancestor, 0)
        if ancestor == root and pid != root:
            below += cpu[pid]
    return cpu.get(root, 0.0), below


def serve(out: str, bridge_args: list[str]) -> int:
    """The bridge's own CLI with the spans recorded; each call's written to `out` as one JSON line."""
    Path(out + ".pid").write_text(str(os.getpid()))
    import importlib

    from cdp_bridge import ax_patch, connection, layout
    from webmcp.cli import main
    from webmcp.desktop import calls, effects, live_view, refresher, tab
    from webmcp.server import app
    from webmcp.view import build as view_build

    try:  # where a take is read (its own module since the split; live_view's before)
        take: Any = importlib.import_module("webmcp.desktop.observer_take")
    except ImportError:
        take = live_view
    _trace_cdp(connection)
    # Each function under the name the code calls it by (both checkouts of an A/B are traced alike).
    for owner, attr, name in [
        (refresher.LiveView, "catch_up", "LiveView.catch_up"),
        (refresher.LiveView, "refresh", "LiveView.refresh"),
        (refresher.LiveView, "_while_calling", "LiveView._while_calling"),
        (live_view, "read_changes", None),
        (live_view, "read_page", None),
        (live_view, "_patch_session", None),
        (live_view, "frame_changes" if hasattr(live_view, "frame_changes") else "_frame_changes", "_frame_changes"),
        (ax_patch, "read_subtrees", None),
        *([(take, "read_relisted", None)] if hasattr(take, "read_relisted") else []),
        (layout, "patch_text_layout", None),
        (layout, "read_text_layout", None),
        (calls.PageCalls, "_page_result", "PageCalls._page_result"),
        (calls.PageCalls, "call", "PageCalls.call"),
        (effects.Effects, "catch_up", "Effects.catch_up"),
        (effects.Effects, "_settle", "Effects._settle"),
        (refresher.LiveView, "fresh", "LiveView.fresh"),
        (tab.Tab, "secrets_now", "Tab.secrets_now"),
        (tab.Tab, "navigation_settled", "Tab.navigation_settled"),
    ]:
        _timed(owner, attr, name)
    if path := os.environ.get("TRACE_LAYOUT"):
        _log_layout(live_view, layout, path)
    if folder := os.environ.get("TRACE_FRAMES"):
        _record_frames(live_view, folder)
    if os.environ.get("TRACE_PAGE_CLOCK"):
        _page_clock(take)
    _trace_gc()
    for owner, attr, name in [
        (view_build, "build_view", None),
        (ax_patch, "splice_index", "splice"),
        (take, "layout_touched", "_touched"),
        (layout, "running_text", None),  # from the last read's where it can (a walk of every node before)
        (layout, "_in_running_text", None),
        (layout, "_gaps", None),
        (tab.Tab, "show", "Tab.show"),
        # On every change, in a task of its own: what tells the notifier whether the tools moved.
        (app, "tool_set_key" if hasattr(app, "tool_set_key") else "_tools_fingerprint", "notifier: tools key"),
    ]:
        _timed_sync(owner, attr, name)
    call = tab.Tab.call

    timeline = os.environ.get("TRACE_TIMELINE")

    async def traced_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter_ns()
        if timeline:  # what ran between the calls too: every span since the last call, on one clock
            with open(timeline, "a", encoding="utf-8") as f:  # noqa: ASYNC230 (a line, in the traced bridge only)
                f.write(json.dumps({"between": [(n, s, e) for n, s, e, _c in _SPANS], "call": start}) + "\n")
        _SPANS.clear()
        try:
            return await call(self, *args, **kwargs)
        finally:
            end = time.perf_counter_ns()
            spans = [(n, (s - start) / 1e6, (e - s) / 1e6, c / 1e6) for n, s, e, c in _SPANS if e >= start]
            with open(out, "a", encoding="utf-8") as f:  # noqa: ASYNC230 (a line, in the traced bridge only)
                f.write(json.dumps({"total": (end - start) / 1e6, "spans": spans}) + "\n")

    tab.Tab.call = traced_call
    if profile_to := os.environ.get("TRACE_PROFILE"):
        return _profiled(tab, profile_to, main, bridge_args)
    return main(bridge_args)


def _profiled(tab: Any, path: str, main: Any, bridge_args: list[str]) -> int:
    """Run the bridge with cProfile on during its page-tool calls only; the stats go to `path`."""
    import cProfile

    profile = cProfile.Profile()
    call = tab.Tab.call

    whole = bool(os.environ.get("TRACE_PROFILE_ALL"))

    async def profiled_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        profile.enable()  # with TRACE_PROFILE_ALL, on from the first call to the end (the MCP SDK's part too)
        try:
            return await call(self, *args, **kwargs)
        finally:
            if not whole:
                profile.disable()
            profile.dump_stats(path)

    tab.Tab.call = profiled_call
    return int(main(bridge_args) or 0)


_PAGES = {
    "sample": ("sample", "/", None),
    "shop": ("meridian", "/shop/", "shop"),
    "story": ("meridian", "/news/story.html", "story"),
    "tasks": ("meridian", "/app/tasks.html", "tasks"),
    "many": ("sample", "/patterns/shop.html", "many"),  # 300 tools (bulk_0…: quiet, not logged) before the shop's own
}


def _call_of(page: str, quiet: bool = False) -> tuple[str, Any]:
    """The page-changing tool of `page` (or its read-only one, `quiet`) and its arguments by call
    number, as bench/peers makes them."""
    from bench.peers.measures import BENCH_PAGES

    key = _PAGES[page][2]
    if key == "many":
        return (
            ("bulk_0", lambda i: {"value": i})
            if quiet
            else ("call_page_tool", lambda i: {"name": "cart.add", "arguments": {"sku": f"S{i}"}})
        )
    if key is None:
        return ("get_queue_summary", lambda i: {}) if quiet else ("list_tickets", lambda i: {"status": "all"})
    bench_page = next(p for p in BENCH_PAGES if p.key == key)
    call = bench_page.read_only if quiet else bench_page.changing
    assert call is not None
    return call.tool, call.args


async def drive(opts: argparse.Namespace, out: str, errlog: TextIO) -> None:
    """Start the site and the traced bridge, and make the page's changing calls one after another."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from bench.bench_tool_call import start_site_process

    site_kind, path, _ = _PAGES[opts.page]
    tool, args_of = _call_of(opts.page, opts.quiet)
    site_process, site = await start_site_process(None, site_kind)
    try:
        command = [
            sys.executable,
            str(ROOT / "bench" / "trace_call.py"),
            "--serve",
            out,
            "--",
            "--headless",
            site + path,
        ]
        env = {**os.environ, "PYTHONPATH": f"{opts.code}{os.pathsep}{ROOT}"}
        if opts.frames:
            env["TRACE_FRAMES"] = opts.frames
        if opts.layout_log:
            env["TRACE_LAYOUT"] = opts.layout_log
        if opts.page_clock:
            env["TRACE_PAGE_CLOCK"] = "1"
        if opts.timeline:
            env["TRACE_TIMELINE"] = opts.timeline
        if opts.profile:
            env["TRACE_PROFILE"] = opts.profile
        if opts.profile_all:
            env["TRACE_PROFILE_ALL"] = "1"
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=opts.code, env=env)
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60) as client:
            name = ""
            with anyio.fail_after(60):
                while not name:
                    names = [t.name for t in (await client.list_tools()).tools]
                    name = next((n for n in names if n.endswith("__" + tool)), "")
                    await anyio.sleep(0 if name else 0.05)
            if opts.subscribe:  # as bench/peers' client does: an agent watching its windows
                await client.subscribe_resource("app://windows")
            pid = int(await anyio.Path(out + ".pid").read_text())
            walls: list[float] = []
            for i in range(opts.n):
                if i == opts.skip:
                    cpu_from = _cpu_of_tree(pid)
                if opts.pause:
                    await anyio.sleep(opts.pause)  # an agent's next call comes after its model's turn
                start = time.perf_counter()
                with anyio.fail_after(CALL_TIMEOUT):
                    result = await client.call_tool(name, args_of(i))
                walls.append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{name} failed: {result.structured_content}")
            # What the MCP client waited (stdio and the SDK's own work included), as bench/peers times it.
            print(f"client tools/call median (after {opts.skip}): {statistics.median(walls[opts.skip :]):.2f} ms")
            bridge, browser = (b - a for a, b in zip(cpu_from, _cpu_of_tree(pid), strict=True))
            calls = opts.n - opts.skip
            per_call = f"bridge {bridge / calls * 1000:.1f} ms, its browser {browser / calls * 1000:.1f} ms"
            print(f"CPU a call (after {opts.skip}): {per_call}")
    finally:
        site_process.terminate()


def report(calls: list[dict[str, Any]], skip: int) -> None:
    calls = calls[skip:]
    print(f"{len(calls)} calls; total median {statistics.median(c['total'] for c in calls):.2f} ms")
    starts: dict[str, list[float]] = defaultdict(list)
    durations: dict[str, list[float]] = defaultdict(list)
    cpus: dict[str, list[float]] = defaultdict(list)
    per_call: dict[str, list[float]] = defaultdict(list)  # summed per call
    for c in calls:
        summed: dict[str, float] = defaultdict(float)
        for name, start, duration, cpu in c["spans"]:
            starts[name].append(start)
            durations[name].append(duration)
            cpus[name].append(cpu)
            summed[name] += duration
        for name, total in summed.items():
            per_call[name].append(total)
    print("| span | calls with it | count | median start ms | median ms | median per call ms | median CPU ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in sorted(starts, key=lambda n: statistics.median(starts[n])):
        print(
            f"| {name} | {len(per_call[name])} | {len(durations[name])} | {statistics.median(starts[name]):.2f} | "
            f"{statistics.median(durations[name]):.2f} | {statistics.median(per_call[name]):.2f} | "
            f"{statistics.median(cpus[name]):.2f} |"
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        out, separator, *bridge_args = sys.argv[2:]
        if separator != "--":
            raise SystemExit("usage: trace_call.py --serve OUT -- BRIDGE-ARGS…")
        sys.exit(serve(out, bridge_args))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=sorted(_PAGES), default="sample")
    parser.add_argument("--quiet", action="store_true", help="the page's read-only tool instead (item 2)")
    parser.add_argument("-n", type=int, default=20, help="calls (default 20, as bench/peers)")
    parser.add_argument("--skip", type=int, default=2, help="first calls left out of the medians (default 2)")
    parser.add_argument("--code", default=str(ROOT), help="the bridge checkout to run (PYTHONPATH)")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds idle before each call (default 0)")
    parser.add_argument("--subscribe", action="store_true", help="subscribe to app://windows first, as bench/peers")
    parser.add_argument(
        "--timeline", help="append every span to this file (JSON lines, ns on one clock), those between the calls too"
    )
    parser.add_argument("--dump", help="write every call's spans to this JSON file too")
    parser.add_argument("--stderr", help="keep the bridge's stderr in this file")
    parser.add_argument("--frames", help="write what every build_view is given into this directory (JSON)")
    parser.add_argument("--layout-log", help="append, per incremental read, the touched nodes in running text (JSONL)")
    parser.add_argument(
        "--page-clock", action="store_true", help="time the take's script on the page's clock (queued, run, last frame)"
    )
    parser.add_argument("--profile", help="write cProfile stats of the bridge during its calls to this file")
    parser.add_argument(
        "--profile-all", action="store_true", help="with --profile: from the first call on, between the calls too"
    )
    opts = parser.parse_args()
    opts.code = str(Path(opts.code).resolve())
    for option in ("frames", "layout_log", "profile"):
        if getattr(opts, option):
            setattr(opts, option, str(Path(getattr(opts, option)).resolve()))
    import anyio

    with tempfile.TemporaryDirectory(prefix="trace-call-") as work:
        out = os.path.join(work, "spans.jsonl")
        with open(opts.stderr or os.path.join(work, "stderr.log"), "w") as errlog:  # the bridge's stderr
            anyio.run(drive, opts, out, errlog)
        with open(out, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
    if opts.dump:
        Path(opts.dump).write_text(json.dumps(calls))
    report(calls, opts.skip)


if __name__ == "__main__":
    main()
