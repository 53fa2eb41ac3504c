"""Fresh reads (issue 39 item 6): a read of a window waits, within a bound, for a read of the page
begun after every change the page made before it, and never cuts that read short."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from types import SimpleNamespace
from typing import Any, cast

import anyio
import pytest

import webmcp.desktop.live_view as live_view_module
import webmcp.desktop.refresher as refresher_module
from cdp_bridge.connection import CDPSession
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.live_view import BINDING, PageRead
from webmcp.desktop.refresher import LiveView
from webmcp.desktop.registry import BEHIND_NOTICE, _behind
from webmcp.models import address_block, text_block
from webmcp.view.build import View, build_view

pytestmark = pytest.mark.anyio


class FakePage:
    """What the page shows now; each read notes what it saw when it began, and waits for `go` if held."""

    def __init__(self) -> None:
        self.shows = "story 1"
        self.reads: list[str] = []
        self.go = anyio.Event()
        self.go.set()

    async def read_page(self, _page: Any, _doc_seq: int, ids: Any) -> PageRead:
        self.reads.append(self.shows)
        await self.go.wait()
        return PageRead(build_view([], ids, secret_values=set()), frozenset())


class FakeHost:
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
def page(monkeypatch: pytest.MonkeyPatch) -> FakePage:
    fake = FakePage()
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    # The refresher's own pace between reads: far longer than any wait below, so only a hurried
    # refresher can read in time.
    monkeypatch.setattr(refresher_module, "_REFRESH_MIN_INTERVAL", 30.0)
    return fake


class FakeSession:
    """The page's session: a round trip to the page is answered at once (`parsed` may be told first)."""

    def __init__(self) -> None:
        self.before_answer: list[object] = []
        self.sent: list[str] = []
        self.closed = False

    async def send(self, method: str, _params: object = None, *, timeout: float | None = None) -> dict[str, Any]:
        self.sent.append(method)
        for event in self.before_answer:
            event()  # type: ignore[operator]
        self.before_answer.clear()
        await anyio.lowlevel.checkpoint()
        return {}


SESSION = FakeSession()


@asynccontextmanager
async def _running() -> AsyncIterator[LiveView]:
    async with anyio.create_task_group() as tg:
        SESSION.sent.clear()
        SESSION.closed = False
        view = LiveView(PageTarget(target_id="T", session=cast(CDPSession, SESSION)), Timeouts(), FakeHost())
        tg.start_soon(view.run)
        view.mark_dirty()
        with anyio.fail_after(5):
            assert await view.fresh(5)  # the first view
        yield view
        tg.cancel_scope.cancel()


async def test_a_read_of_a_view_the_page_has_not_changed_since_reads_nothing(page: FakePage) -> None:
    async with _running() as view:
        reads = len(page.reads)
        assert view.is_fresh()
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert len(page.reads) == reads


async def test_a_change_the_page_reported_before_the_read_is_in_the_view_it_returns_with(page: FakePage) -> None:
    async with _running() as view:
        page.shows = "story 2"
        view.reported_change()  # the refresher is in its pause between reads (30 s here)
        assert not view.is_fresh()
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert page.reads[-1] == "story 2"


async def test_changes_the_observer_may_not_have_reported_yet_are_read_by_a_read_begun_after(
    page: FakePage,
) -> None:
    async with _running() as view:
        view.reported_change()
        with anyio.fail_after(5):
            assert await view.fresh(5)
        # Within the observer's fold of 15 ms after a report, a further change is not reported yet.
        page.shows = "story 3, not reported yet"
        assert not view.is_fresh()
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert page.reads[-1] == "story 3, not reported yet"


class TakingPage(FakePage):
    """A page read incrementally after its first read: each read takes the changes of the observers
    in `worlds` (as `read_changes` does, which ends their folds: observer.js)."""

    def __init__(self, worlds: list[int]) -> None:
        super().__init__()
        self.worlds = worlds

    async def read_page(self, _page: Any, doc_seq: int, ids: Any) -> PageRead:
        return replace(await super().read_page(_page, doc_seq, ids), doc_seq=doc_seq)

    async def read_changes(self, _page: Any, last: PageRead, ids: Any, _moves: Any = None) -> PageRead:
        read = await self.read_page(_page, last.doc_seq, ids)
        frames = [SimpleNamespace(key=f"frame {w}") for w in self.worlds]
        nodes = cast(Any, SimpleNamespace(frames=frames))
        contexts = {f"frame {w}": w for w in self.worlds}
        return replace(read, sessions=[(cast(CDPSession, SESSION), nodes)], contexts=contexts, took=True)


@pytest.fixture
def taking(monkeypatch: pytest.MonkeyPatch) -> TakingPage:
    fake = TakingPage([7])
    monkeypatch.setattr(live_view_module, "read_page", fake.read_page)
    monkeypatch.setattr(live_view_module, "read_changes", fake.read_changes)
    monkeypatch.setattr(refresher_module, "_REFRESH_MIN_INTERVAL", 30.0)
    return fake


async def test_a_read_that_took_an_observers_changes_after_its_report_needs_no_second_read(taking: TakingPage) -> None:
    # A take ends the observer's fold (observer.js): what it held unreported is in the take, and
    # its next change is reported at once. So a read whose take came after the last report is
    # fresh now, within the fold window too (before, a page tool's answer read the page twice).
    async with _running() as view:
        taking.shows = "story 2"
        view.reported_change((id(SESSION), 7))
        with anyio.fail_after(5):
            assert await view.fresh(5)
        reads = len(taking.reads)
        assert taking.reads[-1] == "story 2"
        assert view.is_fresh(), "the take after the report holds all the observer saw"
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert len(taking.reads) == reads, "no second read"
        # A report after that read began, or from an observer it did not take, may hold more.
        taking.shows = "story 3"
        view.reported_change((id(SESSION), 7))
        assert not view.is_fresh()
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert taking.reads[-1] == "story 3"
        taking.shows = "story 4, in a frame the reads do not take"
        view.reported_change((id(SESSION), 9))
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert taking.reads[-1] == "story 4, in a frame the reads do not take"
        reads = len(taking.reads)
        assert not view.is_fresh(), "that frame's fold may still hold a change: a read begun after is due"
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert len(taking.reads) == reads + 1


async def test_a_first_paint_is_not_a_change_of_the_page_and_composes_the_window_again_unread(page: FakePage) -> None:
    # observer.js says "painted" (or "hidden") once: how the document shows, not what it holds. A
    # big page's first paint came during its first read and cost a second whole read.
    async with _running() as view:
        reads, host = len(page.reads), cast(FakeHost, view._host)
        shown = len(host.shown)
        view._observer_said(cast(CDPSession, SESSION), {"name": BINDING, "payload": "painted", "executionContextId": 3})
        assert view.is_fresh(), "nothing is unread"
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert len(page.reads) == reads
        view.reshow()  # what the navigator does then: the window's notice changes, from the same view
        assert len(host.shown) == shown + 1 and host.shown[-1] is host.shown[-2]
        view._observer_said(cast(CDPSession, SESSION), {"name": BINDING, "payload": "", "executionContextId": 3})
        assert not view.is_fresh(), "an empty payload is a change"


async def test_a_read_that_cannot_catch_up_in_time_says_so_and_the_read_under_way_goes_on(page: FakePage) -> None:
    async with _running() as view:
        page.go = anyio.Event()  # the next read of the page takes as long as the test wants
        page.shows = "story 4"
        view.reported_change()
        with anyio.fail_after(5):
            assert not await view.fresh(0.2), "the bound passed: not fresh"
        assert page.reads[-1] == "story 4"
        page.go.set()  # the read begun for it was not cut short by the reader's deadline
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert page.reads.count("story 4") == 1


async def test_a_reader_does_not_wait_for_a_read_of_a_page_whose_browser_is_gone(page: FakePage) -> None:
    # The browser died: its calls' answers have half a second to go out, and no read can come.
    async with _running() as view:
        page.go = anyio.Event()  # a read would never end
        view.reported_change()
        SESSION.closed = True
        assert view.is_fresh(), "nothing more can be read: the view is what there is"
        with anyio.fail_after(0.1):
            assert await view.fresh(5)
        page.go.set()


def test_a_window_behind_its_page_says_so_after_its_address() -> None:
    doc = {"id": "tab-1", "blocks": [address_block("http://x/"), text_block("t1", "Story 1")]}
    said = _behind(doc)
    assert [b.get("id") for b in said["blocks"]][:2] == ["address", "behind"]
    assert said["blocks"][1]["text"] == BEHIND_NOTICE
    assert len(doc["blocks"]) == 2, "the window's own document is left as it is"


async def test_a_document_left_to_parse_is_not_read_mid_parse_for_a_reader_until_it_has_parsed(page: FakePage) -> None:
    async with _running() as view:
        reads = len(page.reads)
        view.new_document(parsing=True)  # its window says nothing of it has been read yet
        assert not view.is_fresh(), "a reader asks the page whether it is still parsing"
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert len(page.reads) == reads, "a read mid-parse slows the parse"
        assert SESSION.sent == ["Runtime.evaluate"], "the page was asked whether it is still parsing"
        page.shows = "the new document"

        def dom_content_loaded() -> None:  # it fired before the read; its event comes before the answer
            view.parsed()
            view.mark_dirty()

        SESSION.before_answer.append(dom_content_loaded)
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert page.reads[-1] == "the new document", "the first read after the parse shows the new document"


class WatchedSession(FakeSession):
    """A session the view watches: its events, and a report that arrives just before an answer."""

    def __init__(self) -> None:
        super().__init__()
        self.handlers: dict[str, list[Any]] = {}

    def on(self, method: str, handler: Any) -> None:
        self.handlers.setdefault(method, []).append(handler)

    def report_before_next_answer(self) -> None:
        def arrive() -> None:
            for handler in self.handlers.get("Runtime.bindingCalled", []):
                handler({"name": BINDING, "payload": "", "executionContextId": 3})

        self.before_answer.append(arrive)


async def test_a_change_whose_report_is_still_on_its_way_when_a_read_comes_is_in_that_read(page: FakePage) -> None:
    # A person (or a timer) changed the page just before the agent's read; the observer's report
    # was still on the page's session, behind it. The read showed the window as it was (MiniWoB:
    # the page before its episode began). The report rides that session: a round trip on it
    # (`flush`) lets it arrive first.
    async with _running() as view:
        session = WatchedSession()
        view.watch(cast(CDPSession, session), main=True)
        page.shows = "story 2"
        session.report_before_next_answer()
        assert view.is_fresh(), "nothing has told the bridge yet"
        with anyio.fail_after(5):
            await view.flush(1)
        assert session.sent == ["Runtime.releaseObjectGroup"]
        assert not view.is_fresh(), "the report is in"
        with anyio.fail_after(5):
            assert await view.fresh(5)
        assert page.reads[-1] == "story 2"
        session.closed = True
        with anyio.fail_after(5):
            await view.flush(1)
        assert session.sent == ["Runtime.releaseObjectGroup"], "a session gone is not asked"
