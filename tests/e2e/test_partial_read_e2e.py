"""The two ways the bridge reads a page's AX tree give the same view, on every sample page.

`read_frame_tree` reads a big document that is mostly long runs level by level, and cuts the
runs at `keep`; everything else in one `getFullAXTree`. Here the level-by-level read is forced
on every page the recorder knows (the user having brought each into its state with
Playwright), and its view is compared with the one-command read: the window state must be the
same, and where no run is longer than `keep`, every block.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

import cdp_bridge.ax as ax
from cdp_bridge.errors import ProtocolError
from cdp_bridge.launcher import BrowserProcess
from tests.support.record_ax import PAGES
from webmcp.view.build import BlockIds, View, build_view
from webmcp.view.masking import SECRET_SELECTOR

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

KEEP = 20


@pytest.fixture
async def context(browser: BrowserProcess) -> AsyncIterator[Any]:
    async with async_playwright() as pw:
        user = await pw.chromium.connect_over_cdp(browser.ws_url)
        yield user.contexts[0] if user.contexts else await user.new_context()
        await user.close()


async def _views(page: Any, context: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[View, View]:
    cdp = await context.new_cdp_session(page)
    sent: list[str] = []

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        sent.append(method)
        try:
            return dict(await cdp.send(method, params))
        except PlaywrightError as exc:
            raise ProtocolError(method, -1, str(exc)) from exc

    whole = await ax.collect_page(send, "doc", secret_selector=SECRET_SELECTOR)
    assert "Accessibility.getFullAXTree" in sent and "Accessibility.getRootAXNode" not in sent
    sent.clear()

    async def always(_send: Any, _frame_id: str, _keep: int) -> bool:
        return True

    with monkeypatch.context() as patch:
        patch.setattr(ax, "_mostly_long_runs", always)
        part = await ax.collect_page(send, "doc", secret_selector=SECRET_SELECTOR, keep=KEEP)
    assert "Accessibility.getFullAXTree" not in sent and "Accessibility.getChildAXNodes" in sent
    views = [build_view(p.frames, BlockIds(), secret_values=p.secret_values) for p in (whole, part)]
    return views[0], views[1]


@pytest.mark.parametrize("name", [n for n in PAGES if n != "churn"])  # churn.html changes on its own
async def test_level_by_level_gives_the_view_of_the_whole_tree(
    name: str, site: str, context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, prepare = PAGES[name]
    page = await context.new_page()
    await page.goto(site + path, wait_until="load")
    await prepare(page)
    whole, part = await _views(page, context, monkeypatch)
    assert part.blocks == whole.blocks
    assert [m.blocks for m in part.modals] == [m.blocks for m in whole.modals]
    assert (part.title, part.headings, part.notices, part.invalid_fields) == (
        whole.title,
        whole.headings,
        whole.notices,
        whole.invalid_fields,
    )
    if not part.sources:  # nothing was cut: every block is the same
        assert part.full_blocks == whole.full_blocks
    else:
        assert name == "big" and len(part.full_blocks) == len(whole.full_blocks)
    await page.close()
