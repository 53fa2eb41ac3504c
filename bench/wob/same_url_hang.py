#!/usr/bin/env python
"""Repro: a page the bridge (attached by --cdp-url) navigated to the address it already showed never runs.

    .venv/bin/python bench/wob/same_url_hang.py MINIWOB_HTML [--rounds 8] [--peer] [--bridge-code DIR]

Each round, as bench/miniwob.py does between two episodes of one task: the server's navigate tool
opens click-widget.html (the address the tab already shows, from the second round on), a side CDP
connection starts the episode, `app://windows` is read once (the peer: its snapshot), 1 s passes,
the side connection ends the episode. Seen with the bridge at main 2ffde2b: in the second round the
new document answers no Runtime.evaluate, not even on a second connection (Debugger.enable gets no
answer either), while the browser answers Page.getNavigationHistory. Without the 1 s pause, or
with Playwright MCP (`--peer`), every round runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.wob.adapters import Adapter, BridgeAdapter, Counted, PlaywrightAdapter  # noqa: E402
from bench.wob.harness import Chromium, Side, serve  # noqa: E402

PEER = ROOT / "bench" / "wob" / "peer" / "node_modules" / "@playwright" / "mcp" / "cli.js"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("html", type=Path)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--pause", type=float, default=1.0)
    parser.add_argument("--peer", action="store_true", help="Playwright MCP instead of the bridge")
    parser.add_argument("--bridge-code", type=Path, default=ROOT)
    args = parser.parse_args()
    async with serve(args.html) as origin:
        chromium = Chromium()
        await chromium.start()
        workdir = Path(tempfile.mkdtemp(prefix="wob-hang-"))
        if args.peer:
            subject = Counted(["node", str(PEER), "--cdp-endpoint", chromium.http], workdir, {})
        else:
            bridge = str(Path(sys.executable).parent / "webmcp-bridge")
            subject = Counted([bridge, "--cdp-url", chromium.http], workdir, {"PYTHONPATH": str(args.bridge_code)})
        await subject.open()
        adapter: Adapter = PlaywrightAdapter(subject) if args.peer else BridgeAdapter(subject)
        if isinstance(adapter, BridgeAdapter):
            await adapter.ready()
        url = f"{origin}/miniwob/click-widget.html"
        try:
            for n in range(args.rounds):
                await adapter.navigate(url)
                side = Side()
                await side.attach(chromium, url)
                started = time.monotonic()
                try:
                    await side.start_episode(n, 120000)
                except TimeoutError as exc:
                    print(f"round {n}: the page never ran ({time.monotonic() - started:.1f} s): {exc}")
                    await side.close()
                    return
                await adapter.look()
                await asyncio.sleep(args.pause)
                await side.evaluate("core.endEpisode(0, false, 'round over')")
                await side.close()
            print(f"every one of {args.rounds} rounds ran")
        finally:
            await subject.close()
            chromium.stop()


if __name__ == "__main__":
    asyncio.run(main())
