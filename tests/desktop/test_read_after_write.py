"""Read after write: when a call that changed the page returns, the view comes from a read begun after its answer."""

from __future__ import annotations

from typing import Any, cast

import anyio
import anyio.abc
import pytest

import webmcp.desktop.live_view as live_view_module
from cdp_bridge.connection import CDPSession
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.live_view import PageRead
from webmcp.desktop.refresher import LiveView
from webmcp.view.build import View, build_view

pytestmark = pytest.mark.anyio


class FakePage:
    """What the page shows now; each read of the view notes what it saw when it began."""

    def __init__(self) -> None:
        self.shows = "the queue"
        self.reads: list[str] = []
        self.read = anyio.Event()
        """Set when a read begins (then replaced)."""

    async def read_page(self, _page: Any, _doc_seq: int, ids: Any) -> PageRead:
        self.reads.append(self.shows)
        self.read.set()
        self.read = anyio.Event()
        await anyio.lowlevel.checkpoint()
        return PageRead(build_view([], ids, secret_values=set()), frozenset())


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> FakePage:
    fake = FakePage()
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    return fake


class FakeHost:
    """The tab, as a live view sees it (`refresher.ViewHost`): it keeps the views it is shown."""

    doc_seq = 1

    def __init__(self) -> None:
        self.shown: list[View] = []
        self.crashed = anyio.Event()

    def show(self, view: View) -> None:
        self.shown.append(view)

    async def after_read(self) -> None:
        pass

    def fault(self, exc: BaseException) -> None:
        raise AssertionError(f"the view failed: {exc!r}")

    async def until_crashed(self) -> None:
        await self.crashed.wait()


def _tab(_tg: anyio.abc.TaskGroup) -> LiveView:
    """The live view of a tab on no real page: its reads go to the `page` fixture's FakePage."""
    page = PageTarget(target_id="T", session=cast(CDPSession, object()))
    return LiveView(page, Timeouts(), FakeHost())


async def test_a_change_reported_after_the_answer_is_in_the_view_the_call_returns_with(page: FakePage) -> None:
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        began = anyio.current_time()
        # The tool logs its call: the observer reports it at once, and a rebuild reads the page.
        page.shows = "the queue, with the call logged"
        tab.reported_change()
        with anyio.fail_after(5):
            assert await tab.refresh()
        # Its next change comes within the observer's 15 ms: reported only later, after the answer.
        page.shows = "the queue, with the call logged and its result"
        with anyio.fail_after(5):
            await tab.catch_up(5, since=began)
        assert page.reads[-1] == "the queue, with the call logged and its result"
        tg.cancel_scope.cancel()


async def test_a_call_during_which_the_page_reported_nothing_reads_nothing(page: FakePage) -> None:
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        tab.mark_dirty()
        with anyio.fail_after(5):
            assert await tab.refresh()  # the first view
        reads = len(page.reads)
        with anyio.fail_after(5):
            await tab.catch_up(5, since=anyio.current_time())  # the page reported nothing in or near the call
        assert len(page.reads) == reads
        tg.cancel_scope.cancel()


async def test_a_read_begun_on_the_document_the_tab_left_is_thrown_away_and_read_again(
    page: FakePage, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = FakeHost()
    view = LiveView(PageTarget(target_id="T", session=cast(CDPSession, object())), Timeouts(), host)
    committed = anyio.Event()

    async def read_across_a_commit(_page: Any, _doc_seq: int, ids: Any) -> PageRead:
        page.reads.append(page.shows)
        if len(page.reads) == 1:
            host.doc_seq += 1  # the tab commits the next document while the read is under way
            page.shows = "the new page"
            committed.set()
        await anyio.lowlevel.checkpoint()
        return PageRead(build_view([], ids, secret_values=set()), frozenset())

    monkeypatch.setattr(live_view_module, "read_page", read_across_a_commit)
    view.mark_dirty()
    with anyio.fail_after(5):
        assert not await view.refresh(), "a read of the page left is not a read of the page shown"
    assert host.shown == [] and committed.is_set()
    with anyio.fail_after(5):
        assert await view.refresh()  # still dirty: read again, now the new document
    assert page.reads == ["the queue", "the new page"] and len(host.shown) == 1


async def test_the_refresher_follows_a_page_while_it_loads(page: FakePage) -> None:
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        tg.start_soon(tab.run)
        for step in ("loading", "half the rows", "all the rows"):  # the page builds itself while it loads
            page.shows = step
            tab.mark_dirty()
            with anyio.fail_after(5):
                await page.read.wait()
        assert page.reads == ["loading", "half the rows", "all the rows"]
        tg.cancel_scope.cancel()
