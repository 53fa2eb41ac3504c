"""After DOMContentLoaded, how long until a real page stops changing? The measure behind SETTLE_QUIET.

`.venv/bin/python bench/settle_quiet.py CORPUS [N]`: N pages (default 40) of the
article-extraction-benchmark corpus (CORPUS/html/*.html.gz), from the 81st on, so none of the
pages `bench/real_pages.py --limit 80` uses. Each is served on 127.0.0.1, every other host fails
at once, and the page's mutations are recorded for 3 s after DOMContentLoaded. Printed: when
the changes stop, and for each candidate quiet period how many pages had no pause that long
before their last change (a navigation that waits for that quiet period sees them whole).
"""

from __future__ import annotations

import asyncio
import gzip
import statistics
import sys
from pathlib import Path

from aiohttp import web
from playwright.async_api import async_playwright

_RECORD = (
    "window.__m = []; new MutationObserver(() => window.__m.push(performance.now()))"
    ".observe(document, {subtree: true, childList: true, characterData: true, attributes: true});"
)
_DCL = "performance.timing.domContentLoadedEventEnd - performance.timing.navigationStart"
_CHROMIUM_ARGS = ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


async def _serve(corpus: Path) -> tuple[web.AppRunner, int]:
    async def page(request: web.Request) -> web.Response:
        body = gzip.decompress((corpus / f"{request.match_info['id']}.html.gz").read_bytes())
        return web.Response(body=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{id}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])


async def main(corpus: Path, count: int) -> None:
    files = sorted(await asyncio.to_thread(lambda: list(corpus.glob("*.html.gz"))))[80 : 80 + count]
    runner, port = await _serve(corpus)
    longest_pause: list[float] = []
    last_change: list[float] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=_CHROMIUM_ARGS)
        for path in files:
            context = await browser.new_context()
            tab = await context.new_page()
            await tab.add_init_script(_RECORD)
            try:
                url = f"http://127.0.0.1:{port}/p/{path.name.removesuffix('.html.gz')}"
                await tab.goto(url, wait_until="domcontentloaded", timeout=15_000)
                parsed = float(await tab.evaluate(_DCL))
                await asyncio.sleep(3)
                changes = sorted(t for t in await tab.evaluate("window.__m") if t >= parsed)
            except Exception as exc:  # a page that does not parse in 15 s is left out, and said so
                print(f"{path.name[:8]}: left out ({type(exc).__name__})")
                continue
            finally:
                await context.close()
            marks = [parsed, *changes]
            longest_pause.append(max((b - a for a, b in zip(marks, marks[1:], strict=False)), default=0.0))
            last_change.append(changes[-1] - parsed if changes else 0.0)
        await browser.close()
    await runner.cleanup()
    print(
        f"pages {len(last_change)}; last change after DOMContentLoaded: median "
        f"{statistics.median(last_change):.0f} ms, p75 {_quantile(last_change, 0.75):.0f}, "
        f"p90 {_quantile(last_change, 0.9):.0f}"
    )
    for quiet in (100, 200, 300, 500, 1000):
        whole = sum(1 for pause in longest_pause if pause < quiet)
        print(f"quiet {quiet} ms: {whole} of {len(longest_pause)} pages had no pause that long before its last change")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) / "html", int(sys.argv[2]) if len(sys.argv) > 2 else 40))
