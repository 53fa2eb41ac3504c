"""Record the AX trees the bridge sees on each sample-site page into tests/view/data/ax/*.json.gz.

    python -m tests.support.record_ax                # all pages
    python -m tests.support.record_ax cinema_book    # some of them

Each file holds `{"url", "frames": [{key, owner, nodes}], "secret_ids": [...]}`, gathered
with the bridge's own collector (`cdp_bridge.ax.collect_page`), after Playwright
(as the user) brought the page into the state named in `PAGES`. Secret *values* are
never written: the login page is filled with made-up values, and only ids are recorded.
Then run `pytest tests/view --update-goldens` and review the golden diff.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError  # noqa: E402
from playwright.async_api import Page, async_playwright  # noqa: E402

from cdp_bridge.ax import FrameNodes, collect_page  # noqa: E402
from cdp_bridge.errors import ProtocolError  # noqa: E402
from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.support.stage import run_site  # noqa: E402
from webmcp.view.masking import SECRET_SELECTOR

DATA = Path(__file__).resolve().parents[1] / "view" / "data" / "ax"
WAIT_MS = 10_000


async def _home(page: Page) -> None:
    await page.wait_for_selector("#tickets tbody tr[data-id]", timeout=WAIT_MS)
    await page.wait_for_function("!document.getElementById('shifts').textContent.includes('Loading')", timeout=WAIT_MS)
    await page.frame_locator("#kb-frame").locator("body").wait_for(timeout=WAIT_MS)


async def _login(page: Page) -> None:
    await page.fill("#username", "sam.okafor")
    await page.fill("#password", "not-the-real-pass")
    await page.fill("#card", "4111111111111111")
    await page.fill("#otp", "123456")
    await page.check("#remember")


async def _big(page: Page) -> None:
    await page.wait_for_function("document.querySelectorAll('tbody tr').length >= 3000", timeout=WAIT_MS)


async def _modal(page: Page) -> None:
    await page.click("#open-editor")
    await page.wait_for_selector("#edit-dialog[open]", timeout=WAIT_MS)


async def _ticket(page: Page) -> None:
    await page.wait_for_function("document.querySelector('h1').textContent.includes('—')", timeout=WAIT_MS)


async def _invalid(page: Page) -> None:
    # A validation error as a page shows it: the field marked invalid, the message tied to it.
    await _home(page)
    await page.click("#create-ticket button[type=submit]")
    await page.evaluate("""() => {
      const subject = document.getElementById('subject');
      subject.setAttribute('aria-invalid', 'true');
      const msg = document.createElement('p'); msg.id = 'subject-error'; msg.textContent = 'Subject is required.';
      subject.parentElement.append(msg); subject.setAttribute('aria-errormessage', 'subject-error');
      subject.setAttribute('aria-describedby', 'subject-error');
    }""")


async def _danger(page: Page) -> None:
    # The closed-ticket count is fetched after the load event ("…" until then): a read taken
    # before it arrives differs from one taken after, and from the golden.
    await page.wait_for_function("/^\\d+$/.test(document.getElementById('closed-count').textContent)", timeout=WAIT_MS)


async def _noop(page: Page) -> None:
    return None


async def _cinema_book_touched(page: Page) -> None:
    # The person picks a date, a format, accepts the rules, gives a name, and presses Book with the email empty:
    # the browser stops the submit and the email field shows as invalid (:user-invalid).
    await page.fill("#date", "2026-12-03")
    await page.select_option("#format", "2D")
    await page.check("#rules")
    await page.fill("#name", "Ada Lovelace")
    await page.press("#name", "Tab")  # the change re-renders the guests, with a note: the button moves
    await page.wait_for_function("document.querySelector('#guests p') !== null", timeout=WAIT_MS)
    await page.click("#booking button[type=submit]")
    await page.wait_for_function("document.querySelector('#email:user-invalid') !== null", timeout=WAIT_MS)


async def _tree_open(page: Page) -> None:
    await page.click("text=Billing")
    await page.wait_for_selector("[role=treeitem][aria-expanded=true]", timeout=WAIT_MS)


async def _files_open(page: Page) -> None:
    await page.click("text=Reports")
    await page.click("text=Drafts")
    await page.wait_for_selector("text=April draft", timeout=WAIT_MS)


async def _menu_hovered(page: Page) -> None:
    await page.hover("#m-file")  # the submenu opens on mouseenter only
    await page.wait_for_selector("#m-file.open", timeout=WAIT_MS)


async def _autocomplete_typed(page: Page) -> None:
    await page.type("#city", "Pa")
    await page.wait_for_selector("#suggestions li", timeout=WAIT_MS)


async def _datepicker_open(page: Page) -> None:
    await page.click("#when")
    await page.wait_for_selector("#datepicker:not([hidden])", timeout=WAIT_MS)


PAGES: dict[str, tuple[str, Callable[[Page], Awaitable[None]]]] = {
    # `?late=never`: the page would otherwise log its late tool ~1.5 s after load, between
    # two reads of a test that compares them (a CI run saw it).
    "home": ("/?late=never", _home),
    "login": ("/login.html", _login),
    "big": ("/big.html?rows=3000", _big),
    "modal_open": ("/modal.html", _modal),
    "danger": ("/danger.html", _danger),
    "ticket": ("/ticket.html?id=101", _ticket),
    "churn": ("/churn.html", _noop),
    "invalid": ("/?late=never", _invalid),
    "cinema_home": ("/cinema/index.html", _noop),
    "cinema_book": ("/cinema/book.html", _noop),
    "cinema_book_touched": ("/cinema/book.html", _cinema_book_touched),
    "cinema_receipt": ("/cinema/receipt.html", _noop),
    "gazette_article": ("/gazette/article.html", _noop),
    # Widgets without tools (issue 39), each in the state a person brings it to.
    "pattern_accordion": ("/patterns/accordion.html", _noop),
    "pattern_tree": ("/patterns/tree.html", _tree_open),
    "pattern_menu": ("/patterns/menu.html", _menu_hovered),
    "pattern_autocomplete": ("/patterns/autocomplete.html", _autocomplete_typed),
    "pattern_nearby_labels": ("/patterns/nearby-labels.html", _noop),
    "pattern_duplicates": ("/patterns/duplicates.html", _noop),
    "pattern_multiselect": ("/patterns/multiselect.html", _noop),
    "pattern_clickable": ("/patterns/clickable.html", _noop),
    "pattern_datepicker": ("/patterns/datepicker.html", _datepicker_open),
    "pattern_tabs": ("/patterns/tabs.html", _noop),
    "pattern_editor": ("/patterns/editor.html", _noop),
    "pattern_navbar": ("/patterns/navbar.html", _noop),
    "pattern_todos": ("/patterns/todos.html", _noop),
    "pattern_drawn": ("/patterns/drawn.html", _noop),
    "pattern_rows": ("/patterns/rows.html", _noop),
    "pattern_files": ("/patterns/files.html", _files_open),
}


def _slim(node: dict[str, Any]) -> dict[str, Any] | None:
    """Drop what the bridge never reads (text-run boxes, name sources), to keep fixtures small."""
    if node.get("role", {}).get("value") == "InlineTextBox":
        return None
    out = {k: v for k, v in node.items() if k != "chromeRole"}
    for key in ("name", "value", "description"):
        if isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k != "sources"}
    return out


async def _out_of_process_frames(context: Any, page: Page, send: Any) -> list[FrameNodes]:
    """The frames of out-of-process iframes, each with its owner, as `live_view.read_page` reads them."""
    found: list[FrameNodes] = []
    for frame in page.frames[1:]:
        try:
            cdp = await context.new_cdp_session(frame)
        except PlaywrightError:
            continue  # an in-process frame: the page's own read has it

        async def frame_send(method: str, params: dict[str, Any], cdp: Any = cdp) -> dict[str, Any]:
            try:
                return dict(await cdp.send(method, params))
            except PlaywrightError as exc:
                raise ProtocolError(method, -1, str(exc)) from exc

        sub = await collect_page(frame_send, "doc", secret_selector=SECRET_SELECTOR, oopif=True)
        frame_id = (await frame_send("Page.getFrameTree", {}))["frameTree"]["frame"]["id"]
        owner = await send("DOM.getFrameOwner", {"frameId": frame_id})
        if sub.frames and sub.frames[0].owner_backend_id is None:
            sub.frames[0].owner_backend_id = owner.get("backendNodeId")
        found.extend(sub.frames)
    return found


async def record(names: list[str]) -> None:
    """Record the named pages (all when empty)."""
    DATA.mkdir(parents=True, exist_ok=True)
    process = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    try:
        with run_site() as site:
            async with async_playwright() as pw:
                browser = await pw.chromium.connect_over_cdp(process.ws_url)
                context = browser.contexts[0] if browser.contexts else await browser.new_context()
                for name in names or list(PAGES):
                    path, prepare = PAGES[name]
                    page = await context.new_page()
                    await page.goto(site + path, wait_until="load")
                    await prepare(page)
                    cdp = await context.new_cdp_session(page)

                    async def send(method: str, params: dict[str, Any], cdp: Any = cdp) -> dict[str, Any]:
                        try:
                            return dict(await cdp.send(method, params))
                        except PlaywrightError as exc:
                            raise ProtocolError(method, -1, str(exc)) from exc

                    nodes = await collect_page(send, "doc", secret_selector=SECRET_SELECTOR)
                    nodes.frames += await _out_of_process_frames(context, page, send)
                    for frame in nodes.frames:
                        frame.nodes = [n for n in map(_slim, frame.nodes) if n is not None]
                    doc = {"url": path, "frames": [f.to_json() for f in nodes.frames]}
                    # Gzipped: the 3,000-row page alone is 6 MB of JSON.
                    (DATA / f"{name}.json.gz").write_bytes(
                        gzip.compress((json.dumps(doc, separators=(",", ":")) + "\n").encode(), mtime=0)
                    )
                    print(
                        f"{name}: {sum(len(f.nodes) for f in nodes.frames)} nodes, "
                        f"{len(nodes.frames)} frame(s), {len(nodes.secret_ids)} secret(s)"
                    )
                    await page.close()
                await browser.close()
    finally:
        await process.close()


if __name__ == "__main__":
    asyncio.run(record(sys.argv[1:]))
