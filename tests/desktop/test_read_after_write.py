"""Read after write: when a call that changed the page returns, the view comes from a read begun after its answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, cast

import anyio
import anyio.abc
import pytest

import webmcp.desktop.live_view as live_view_module
import webmcp.desktop.refresher as refresher_module
from cdp_bridge.ax import PageNodes
from cdp_bridge.connection import CDPSession
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from tests.support.sessions import EventSession
from webmcp.desktop.live_view import PageRead
from webmcp.desktop.memory import KeptReads
from webmcp.desktop.refresher import LiveView
from webmcp.view.build import BlockIds, View, build_view

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


@asynccontextmanager
async def _running() -> AsyncIterator[LiveView]:
    """A tab's live view (`_tab`) with its refresher running, stopped on the way out."""
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        tg.start_soon(tab.run)
        yield tab
        tg.cancel_scope.cancel()


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
    async with _running() as tab:
        for step in ("loading", "half the rows", "all the rows"):  # the page builds itself while it loads
            page.shows = step
            tab.mark_dirty()
            with anyio.fail_after(5):
                await page.read.wait()
        assert page.reads == ["loading", "half the rows", "all the rows"]


class HeldRead(FakePage):
    """A page whose reads wait for `go` once begun, so a test can act while one is under way."""

    def __init__(self) -> None:
        super().__init__()
        self.go = anyio.Event()

    async def read_page(self, page: Any, doc_seq: int, ids: Any) -> PageRead:
        read = await super().read_page(page, doc_seq, ids)
        await self.go.wait()
        return read


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldRead:
    fake = HeldRead()
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    return fake


async def test_a_navigation_answers_with_the_read_its_load_event_began_and_reads_no_more(held: HeldRead) -> None:
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        tg.start_soon(tab.run)
        loaded = anyio.current_time()
        held.shows = "the loaded page"
        tab.mark_dirty()  # the load event: the refresher begins a read
        with anyio.fail_after(5):
            await held.read.wait()
        answered = anyio.Event()

        async def answer() -> None:
            await tab.read_since(loaded, 5)  # while that read is under way
            answered.set()

        tg.start_soon(answer)
        held.go.set()
        with anyio.fail_after(5):
            await answered.wait()
        assert held.reads == ["the loaded page"], "the read under way began after the load: it is the answer's"
        assert tab.view is not None
        tg.cancel_scope.cancel()


async def test_a_read_begun_before_the_moment_is_followed_by_one_begun_after(held: HeldRead) -> None:
    async with _running() as tab:
        held.shows = "parsed, still rendering"
        tab.mark_dirty()
        with anyio.fail_after(5):
            await held.read.wait()
        usable = anyio.current_time()  # the page became usable while that read was under way, unreported
        held.shows = "rendered"
        held.go.set()
        with anyio.fail_after(5):
            await tab.read_since(usable, 5)
        assert held.reads == ["parsed, still rendering", "rendered"]


async def test_a_change_reported_during_the_read_under_way_is_read_again(held: HeldRead) -> None:
    async with _running() as tab:
        loaded = anyio.current_time()
        held.shows = "the loaded page"
        tab.mark_dirty()
        with anyio.fail_after(5):
            await held.read.wait()
        held.shows = "the loaded page, its data rendered"
        tab.reported_change()  # after the read began: that read may have missed it
        held.go.set()
        with anyio.fail_after(5):
            await tab.read_since(loaded, 5)
        assert held.reads[-1] == "the loaded page, its data rendered"


async def test_a_held_refresher_reads_nothing_until_released_and_a_direct_read_still_happens(page: FakePage) -> None:
    async with anyio.create_task_group() as tg:
        tab = _tab(tg)
        tab.hold()  # a start page loading: no client sees its window yet
        tg.start_soon(tab.run)
        page.shows = "half loaded"
        tab.mark_dirty()
        for _ in range(20):  # the refresher had every chance to begin a read
            await anyio.lowlevel.checkpoint()
        assert page.reads == []
        page.shows = "usable"
        with anyio.fail_after(5):
            await tab.read_since(anyio.current_time(), 5)  # the navigation's own read is not held
        assert page.reads == ["usable"]
        page.shows = "its data rendered"
        tab.reported_change()
        tab.release()
        with anyio.fail_after(5):
            await page.read.wait()
        assert page.reads == ["usable", "its data rendered"]
        tg.cancel_scope.cancel()


async def test_a_tab_that_closes_while_its_refresher_is_held_ends_it(page: FakePage) -> None:
    tab = _tab(cast(anyio.abc.TaskGroup, None))
    tab.hold()
    tab.mark_dirty()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(tab.run)
            await anyio.lowlevel.checkpoint()
            tab.close()  # run() returns: the task group can end
    assert page.reads == []


async def test_the_refresher_leaves_a_document_alone_until_it_has_parsed(page: FakePage) -> None:
    async with _running() as tab:
        page.shows = "half parsed"
        tab.new_document(parsing=True)  # a commit: the document is being parsed
        tab.mark_dirty()
        await anyio.wait_all_tasks_blocked()
        assert page.reads == [], "no read while the document parses"
        page.shows = "parsed"
        tab.parsed()
        with anyio.fail_after(5):
            await page.read.wait()
        assert page.reads == ["parsed"]


async def test_a_document_whose_parse_never_ends_is_read_once_the_hold_has_passed(
    page: FakePage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(refresher_module, "PARSE_HOLD", 0.05)
    async with _running() as tab:
        page.shows = "what rendered before the script that never comes"
        tab.new_document(parsing=True)
        with anyio.fail_after(5):
            await page.read.wait()
        assert page.reads == ["what rendered before the script that never comes"]


async def test_a_read_asked_for_while_the_document_parses_still_happens(page: FakePage) -> None:
    async with _running() as tab:
        page.shows = "half parsed"
        tab.new_document(parsing=True)
        with anyio.fail_after(5):
            assert await tab.refresh()
        assert page.reads == ["half parsed"]


async def test_a_document_restored_whole_is_read_at_once(page: FakePage) -> None:
    async with _running() as tab:
        page.shows = "restored from the back-forward cache"
        tab.new_document(parsing=False)
        with anyio.fail_after(5):
            await page.read.wait()
        assert page.reads == ["restored from the back-forward cache"]


async def test_every_read_asked_of_a_crashed_page_says_it_could_not_read_it(page: FakePage) -> None:
    target = PageTarget(target_id="T", session=cast(CDPSession, object()))
    view = LiveView(target, Timeouts(), FakeHost())
    view.mark_dirty()
    with anyio.fail_after(5):
        assert await view.refresh()  # the first view
    target.crashed = True
    view.forget()
    view.mark_dirty()
    with anyio.fail_after(5):
        assert not await view.refresh(), "the refresher meets the crash"
        # A version check that comes next finds nothing marked: it must still not be told the view is current.
        assert not await view.refresh()
    assert page.reads == ["the queue"]


async def test_a_view_that_shed_its_nodes_reads_its_page_whole_next_and_still_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []
    kept_nodes = [(cast(CDPSession, object()), cast(PageNodes, object()))]

    def answer() -> PageRead:
        view = build_view([], BlockIds(), secret_values=set())
        return PageRead(view, frozenset(), readers={"main": (_no_send, "F")}, doc_seq=1, sessions=kept_nodes)

    async def read_page(_page: Any, _doc_seq: int, _ids: Any) -> PageRead:
        reads.append("whole")
        return answer()

    async def read_changes(_page: Any, last: PageRead, _ids: Any, _moves: Any = None) -> PageRead:
        assert last.sessions, "an incremental read is only ever asked with the last read's nodes"
        reads.append("incremental")
        return answer()

    monkeypatch.setattr(live_view_module, "read_page", read_page)
    monkeypatch.setattr(live_view_module, "read_changes", read_changes)
    kept = KeptReads(keep=1)
    target = PageTarget(target_id="T", session=cast(CDPSession, object()))
    tab, other = (
        LiveView(target, Timeouts(), FakeHost(), kept=kept),
        LiveView(target, Timeouts(), FakeHost(), kept=kept),
    )
    with anyio.fail_after(5):
        tab.mark_dirty()
        assert await tab.refresh()
        tab.reported_change()
        assert await tab.refresh()
        assert reads == ["whole", "incremental"]
        other.mark_dirty()
        assert await other.refresh()  # read last now: the tab lets its nodes go
        assert tab.view is not None and tab.last_read is not None
        assert not tab.last_read.sessions and "main" in tab.last_read.readers
        tab.reported_change()
        assert await tab.refresh()
    assert reads == ["whole", "incremental", "whole", "whole"]
    assert other.last_read is not None and not other.last_read.sessions, "read before the tab's last read"


async def _no_send(method: str, params: dict[str, Any] | None = None, **_kw: Any) -> dict[str, Any]:
    raise AssertionError(f"nothing is sent: {method}")


async def test_a_read_of_a_document_the_tab_left_ends_at_once_and_the_new_one_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    began, reads = anyio.Event(), []

    async def read_page(_page: Any, doc_seq: int, ids: BlockIds) -> PageRead:
        reads.append(doc_seq)
        if len(reads) == 1:
            began.set()
            await anyio.Event().wait()  # an AX query of a document being torn down: never answered
        return PageRead(build_view([], ids, secret_values=set()), frozenset(), doc_seq=doc_seq)

    monkeypatch.setattr(live_view_module, "read_page", read_page)
    host = FakeHost()
    view = LiveView(PageTarget(target_id="T", session=cast(CDPSession, object())), Timeouts(), host)
    outcome: list[bool] = []

    async def first_read() -> None:
        outcome.append(await view.refresh())

    view.mark_dirty()
    with anyio.fail_after(5):  # the snapshot deadline is 15 s: the read must not wait it out
        async with anyio.create_task_group() as tg:
            tg.start_soon(first_read)
            await began.wait()
            host.doc_seq = 2
            view.new_document(parsing=False)
        assert outcome == [False]
        assert await view.refresh()
    assert reads == [1, 2] and view.last_read is not None and view.last_read.doc_seq == 2


# --- a whole read that flushed the observers' folds; a load that brought nothing new ----------

_MAIN_OBSERVER = (7, 42)
"""The main frame's observer: its session's id and its world's context (what a report names)."""


class FlushingRead(FakePage):
    """A page whose whole reads flush the main frame's observer first (`live_view._flush_folds`),
    at `flush` (set by the test), and end at `go`; each read says when its flush was answered."""

    def __init__(self) -> None:
        super().__init__()
        self.flush = anyio.Event()
        self.go = anyio.Event()

    async def read_page(self, page: Any, doc_seq: int, ids: Any) -> PageRead:
        read = await super().read_page(page, doc_seq, ids)
        await self.flush.wait()
        flushed = anyio.current_time()
        await self.go.wait()
        return replace(read, flushed={_MAIN_OBSERVER: flushed})


@pytest.fixture
def flushing(monkeypatch: pytest.MonkeyPatch) -> FlushingRead:
    fake = FlushingRead()
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    return fake


async def test_a_report_of_a_change_the_whole_read_saw_after_its_flush_leaves_the_view_clean(
    flushing: FlushingRead,
) -> None:
    async with _running() as tab:
        flushing.shows = "all the rows"
        tab.mark_dirty()  # DOMContentLoaded: the refresher begins a whole read
        with anyio.fail_after(5):
            await flushing.read.wait()
        # The page's first layout held the observer's fold timer: its report of the rows, made
        # before the read began, comes only now, before the flush's answer.
        tab.reported_change(_MAIN_OBSERVER)
        flushing.flush.set()
        flushing.go.set()
        loaded = anyio.current_time()
        with anyio.fail_after(5):
            await tab.read_since(loaded, 5, loaded=True)
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert flushing.reads == ["all the rows"], "the read saw the change it reported: no second read"


async def test_a_report_after_the_flush_is_of_a_change_the_read_may_have_missed(flushing: FlushingRead) -> None:
    async with _running() as tab:
        flushing.shows = "all the rows"
        tab.mark_dirty()
        with anyio.fail_after(5):
            await flushing.read.wait()
        flushing.flush.set()
        await anyio.sleep(0.01)  # the flush is answered; the page then changes and reports at once
        flushing.shows = "all the rows, and a notice"
        tab.reported_change(_MAIN_OBSERVER)
        flushing.go.set()
        with anyio.fail_after(5):
            await tab.read_since(anyio.current_time(), 5, loaded=True)
        assert flushing.reads == ["all the rows", "all the rows, and a notice"]


async def test_a_report_from_an_observer_the_read_did_not_flush_is_read_again(flushing: FlushingRead) -> None:
    async with _running() as tab:
        flushing.shows = "the page, its iframe empty"
        tab.mark_dirty()
        with anyio.fail_after(5):
            await flushing.read.wait()
        flushing.shows = "the page, its iframe filled"
        tab.reported_change((7, 43))  # another frame's observer (not flushed): it may hold more
        flushing.flush.set()
        flushing.go.set()
        with anyio.fail_after(5):
            await tab.read_since(anyio.current_time(), 5, loaded=True)
        assert flushing.reads[-1] == "the page, its iframe filled"


async def _parsed(
    tab: LiveView, held: HeldRead, shows: str, *, arrived: bool, session: EventSession | None = None
) -> EventSession:
    """The tab's main session (`session`, or a new one) once its page parsed showing `shows` (after
    a resource arrived, when `arrived`; else Network events never come) and the read
    DOMContentLoaded began is under way."""
    session = session or EventSession()
    tab.watch(cast(CDPSession, session), main=True)
    if arrived:
        session.emit("Network.loadingFinished", {"requestId": "document"})
        await anyio.sleep(0.01)
    held.shows = shows
    session.emit("Page.domContentEventFired", {})
    with anyio.fail_after(5):
        await held.read.wait()
    return session


def _arrive(session: EventSession, request: str, kind: str) -> None:
    """A resource of type `kind` answered, then finished loading."""
    session.emit("Network.responseReceived", {"requestId": request, "type": kind})
    session.emit("Network.loadingFinished", {"requestId": request})


async def _answer_after_the_load(tab: LiveView, session: EventSession, held: HeldRead) -> None:
    """The page fires its load event; the read under way ends; a navigation's answer reads since the load."""
    loaded = anyio.current_time()
    session.emit("Page.loadEventFired", {})
    held.go.set()
    with anyio.fail_after(5):
        await tab.read_since(loaded, 5, loaded=True)
    for _ in range(20):
        await anyio.lowlevel.checkpoint()


async def test_a_load_event_after_every_resource_arrived_before_the_read_began_reads_nothing_more(
    held: HeldRead,
) -> None:
    async with _running() as tab:
        session = await _parsed(tab, held, "the parsed page", arrived=True)
        await _answer_after_the_load(tab, session, held)  # 2 ms after DOMContentLoaded: nothing arrived between
        assert held.reads == ["the parsed page"]


async def test_a_load_event_after_a_resource_arrived_during_the_read_reads_the_page_again(held: HeldRead) -> None:
    async with _running() as tab:
        session = await _parsed(tab, held, "the parsed page, unstyled", arrived=True)
        held.shows = "the parsed page, styled"
        session.emit("Network.loadingFinished", {"requestId": "style"})  # it shows without a DOM change
        await _answer_after_the_load(tab, session, held)
        assert held.reads == ["the parsed page, unstyled", "the parsed page, styled"]


@pytest.mark.parametrize("arrival", ["finished", "failed"])
async def test_a_load_event_after_only_an_image_and_a_font_arrived_during_the_read_reads_nothing_more(
    held: HeldRead, arrival: str
) -> None:
    async with _running() as tab:
        session = await _parsed(tab, held, "the parsed page", arrived=True)
        # A logo that came after the read began, on a loaded machine: pixels, not the page's tree.
        _arrive(session, "logo", "Image")
        if arrival == "finished":
            _arrive(session, "font", "Font")
        else:
            session.emit("Network.loadingFailed", {"requestId": "font", "type": "Font"})
        await _answer_after_the_load(tab, session, held)
        assert held.reads == ["the parsed page"]


async def test_a_stylesheet_answered_among_images_still_reads_the_page_again(held: HeldRead) -> None:
    async with _running() as tab:
        session = await _parsed(tab, held, "the parsed page, unstyled", arrived=True)
        held.shows = "the parsed page, styled"
        session.emit("Network.responseReceived", {"requestId": "logo", "type": "Image"})
        _arrive(session, "style", "Stylesheet")
        session.emit("Network.loadingFinished", {"requestId": "logo"})
        await _answer_after_the_load(tab, session, held)
        assert held.reads == ["the parsed page, unstyled", "the parsed page, styled"]


class PageSession(EventSession):
    """The page's own session, which answers every command at once."""

    closed = False

    async def send(self, method: str, params: Any = None, *, timeout: float | None = None) -> dict[str, Any]:
        return {}


@asynccontextmanager
async def _still_loading(held: HeldRead) -> AsyncIterator[tuple[LiveView, PageSession]]:
    """A tab whose page parsed (showing "the parsed page") and waits for its load event; the read
    its DOMContentLoaded began is under way."""
    session = PageSession()
    tab = LiveView(PageTarget(target_id="T", session=cast(CDPSession, session)), Timeouts(), FakeHost())
    async with anyio.create_task_group() as tg:
        tg.start_soon(tab.run)
        await _parsed(tab, held, "the parsed page", arrived=True, session=session)
        yield tab, session
        tg.cancel_scope.cancel()


async def _answer_before_the_load(tab: LiveView, held: HeldRead) -> None:
    """What a navigation's answer does once the page is usable, its load event still to come."""
    held.go.set()
    with anyio.fail_after(5):
        await tab.read_since(anyio.current_time(), 5)
    for _ in range(20):
        await anyio.lowlevel.checkpoint()


async def test_an_answer_before_the_load_takes_the_read_under_way_when_only_an_image_arrived_since(
    held: HeldRead,
) -> None:
    async with _still_loading(held) as (tab, session):
        # The logo, from a slow host, holds the load event: it arrives after the read began.
        _arrive(session, "logo", "Image")
        await _answer_before_the_load(tab, held)
        assert held.reads == ["the parsed page"]


async def test_an_answer_before_the_load_reads_again_after_a_stylesheet_arrived(held: HeldRead) -> None:
    async with _still_loading(held) as (tab, session):
        held.shows = "the parsed page, styled"
        _arrive(session, "style", "Stylesheet")
        await _answer_before_the_load(tab, held)
        assert held.reads == ["the parsed page", "the parsed page, styled"]


async def test_an_answer_before_the_load_reads_again_after_a_change_reported_since_the_read_began(
    held: HeldRead,
) -> None:
    async with _still_loading(held) as (tab, _session):
        held.shows = "the parsed page, and a banner"
        tab.reported_change((9, 1))
        await _answer_before_the_load(tab, held)
        assert held.reads == ["the parsed page", "the parsed page, and a banner"]


async def test_an_answer_before_the_load_reads_again_when_a_frame_in_another_process_loads(held: HeldRead) -> None:
    async with _still_loading(held) as (tab, _session):
        frame = PageSession()  # its resources are not followed: what they show is not known
        tab.watch(cast(CDPSession, frame), main=False)
        held.shows = "the parsed page, its ad styled"
        await _answer_before_the_load(tab, held)
        assert held.reads == ["the parsed page", "the parsed page, its ad styled"]


async def test_without_network_events_a_load_event_reads_the_page_again(held: HeldRead) -> None:
    async with _running() as tab:
        session = await _parsed(tab, held, "the parsed page", arrived=False)  # Network.enable failed
        loaded = anyio.current_time()
        session.emit("Page.loadEventFired", {})
        held.go.set()
        with anyio.fail_after(5):
            await tab.read_since(loaded, 5, loaded=True)
        assert held.reads == ["the parsed page", "the parsed page"]
