#!/usr/bin/env python
"""An incremental read after a small change, on a page whose style sheet holds N rules (stop 29).

    .venv/bin/python bench/big_sheet.py --rules 6000 [--code /work/main] [-n 15]

Real Chromium (the project's launcher, headless), the observer in its isolated world, a `data:`
page with one `<style>` of N generated rules (descendant, `:hover`, attribute, `:nth-child` and
`::before` selectors) and a line of text with a cart link. Each step sets a `data-` attribute, the
link's `aria-label` and a count, then times `live_view.read_changes` (the observer's take, the AX
read of what changed, the view). Real sites ship 1,000-10,000 rules; the sample site and bench.site
have 64. Prints the median, min and max over the steps after the first two. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
_PROPS = ["color:red", "margin:0 4px", "padding:2px", "font-weight:600", "border:1px solid #ccc"]
_CART = (
    '<p>Total<span id="sum" data-state="old">: 3 items</span>, in your bag '
    '<a id="cart" href="#cart" aria-label="Cart, 0 items"><span id="count">0</span></a>.</p>'
)
_CHANGE = (
    "document.querySelector('#sum').dataset.state = 's{i}';"
    "document.querySelector('#cart').setAttribute('aria-label', 'Cart, {i} items');"
    "document.querySelector('#count').textContent = '{i}';"
)


def page_html(count: int) -> str:
    """The page: one style sheet of `count` rules of the kinds real sites ship, and a cart line."""
    rng = random.Random(1)
    rules = []
    for i in range(count):
        selector = [
            f".c{i} .d{i % 50} > span",
            f".btn-{i}:hover, .btn-{i}:focus-visible",
            f"[data-x{i % 30}] .e{i}",
            f"#id{i} li:nth-child(2n)",
            f".u{i}::before",
        ][i % 5]
        rules.append(f"{selector}{{{';'.join(rng.sample(_PROPS, 2))}}}")
    return "<style>" + "\n".join(rules) + "</style>" + _CART


async def main(count: int, steps: int) -> None:
    from cdp_bridge.connection import Connection
    from cdp_bridge.launcher import LaunchOptions, launch_browser
    from cdp_bridge.targets import PageTarget
    from tests.support.tabs import new_tab
    from webmcp.desktop import live_view
    from webmcp.view.build import BlockIds

    process = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    try:
        async with Connection.connect(process.ws_url) as connection:
            session = await new_tab(connection)
            await live_view.install_observer(session)
            loaded = anyio.Event()
            session.on("Page.loadEventFired", lambda _p: loaded.set())
            await session.send("Page.navigate", {"url": "data:text/html," + urllib.parse.quote(page_html(count))})
            with anyio.fail_after(20):
                await loaded.wait()
            assert session.target_id is not None
            page = PageTarget(session.target_id, session)
            ids = BlockIds()
            last = await live_view.read_page(page, 0, ids)
            last = await live_view.read_changes(page, last, ids) or last
            times = []
            for i in range(1, steps + 1):
                await session.send("Runtime.evaluate", {"expression": _CHANGE.replace("{i}", str(i))})
                started = time.perf_counter()
                with anyio.fail_after(30):
                    read = await live_view.read_changes(page, last, ids)
                times.append((time.perf_counter() - started) * 1000)
                if read is None:
                    raise SystemExit("the change was not read incrementally")
                last = read
            kept = times[2:]
            print(
                f"{count} rules: incremental read after a change: median {statistics.median(kept):.1f} ms "
                f"(min {min(kept):.1f}, max {max(kept):.1f}), n={len(kept)}"
            )
    finally:
        await process.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=6000, help="rules in the page's style sheet (default 6000)")
    parser.add_argument("-n", type=int, default=15, help="changes read (default 15; the first two are left out)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the bridge checkout to run")
    opts = parser.parse_args()
    sys.path.insert(0, str(opts.code))
    anyio.run(main, opts.rules, opts.n)
