"""A call waits for the view only for what the page did during it or just before (LiveView.catch_up).

A page's own clock or ticker keeps its view dirty or being rebuilt; a quiet call that began
well after the page last changed must not wait for that rebuild, while a change reported or
marked during the call is still read before the call returns (read after write).
"""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

import webmcp.desktop.live_view as live_view_module
from cdp_bridge.connection import CDPSession
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.live_view import PageRead
from webmcp.desktop.refresher import LiveView
from webmcp.view.build import View, build_view

pytestmark = pytest.mark.anyio

_LONG_AFTER = 1.0
"""How long after the page's last change the calls here begin (well past the observer's fold)."""


class SlowPage:
    """A page whose reads take as long as the test says: each waits for `release`."""

    def __init__(self) -> None:
        self.reads = 0
        self.began = anyio.Event()
        self.release = anyio.Event()

    async def read_page(self, _page: Any, _doc_seq: int, ids: Any) -> PageRead:
        self.reads += 1
        self.began.set()
        await self.release.wait()
        return PageRead(build_view([], ids, secret_values=set()), frozenset())


class Host:
    doc_seq = 1

    def __init__(self) -> None:
        self.shown: list[View] = []

    def show(self, view: View) -> None:
        self.shown.append(view)

    async def after_read(self) -> None:
        pass

    def fault(self, exc: BaseException) -> None:
        raise AssertionError(f"the view failed: {exc!r}")

    async def until_crashed(self) -> None:
        await anyio.sleep_forever()


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> SlowPage:
    fake = SlowPage()
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    return fake


async def _view_with_a_first_read(page: SlowPage) -> LiveView:
    view = LiveView(PageTarget(target_id="T", session=cast(CDPSession, object())), Timeouts(), Host())
    view.mark_dirty()
    page.release.set()
    with anyio.fail_after(5):
        assert await view.refresh()
    page.release = anyio.Event()
    return view


async def test_a_call_does_not_wait_for_a_rebuild_of_what_the_page_did_before_it(page: SlowPage) -> None:
    view = await _view_with_a_first_read(page)
    view.reported_change()  # the page's clock ticks; the refresher begins a rebuild that takes long
    async with anyio.create_task_group() as tg:
        tg.start_soon(view.refresh)
        with anyio.fail_after(5):
            await page.began.wait()
            # The rebuild is still under way (it waits for `release`): the call returns all the same.
            await view.catch_up(5, since=anyio.current_time() + _LONG_AFTER)
        assert not page.release.is_set()
        page.release.set()
    assert page.reads == 2


async def test_a_call_does_not_rebuild_a_view_left_stale_by_a_change_before_it(page: SlowPage) -> None:
    view = await _view_with_a_first_read(page)
    view.reported_change()  # dirty; the refresher has not got to it yet
    with anyio.fail_after(5):
        await view.catch_up(5, since=anyio.current_time() + _LONG_AFTER)
    assert page.reads == 1
    page.release.set()
    with anyio.fail_after(5):
        assert await view.refresh()  # still dirty: the refresher reads it
    assert page.reads == 2


@pytest.mark.parametrize("how", ["reported by the observer", "marked by a page event"])
async def test_a_change_during_the_call_is_still_read_before_it_returns(page: SlowPage, how: str) -> None:
    view = await _view_with_a_first_read(page)
    view.reported_change()  # an older change, as above
    began = anyio.current_time()
    if how == "reported by the observer":
        view.reported_change()  # the tool's own change
    else:
        view.mark_dirty()  # e.g. a frame the tool navigated
    page.release.set()
    with anyio.fail_after(5):
        await view.catch_up(5, since=began)
    assert page.reads >= 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
