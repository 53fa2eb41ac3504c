"""A tab's live view: the page read into a `View`, kept current as the page changes.

The observer's reports, navigation and load events mark the view dirty; the refresher
task rebuilds it at a bounded rate and hands each new view to the tab (`ViewHost.show`),
which composes its window from it. A caller that needs the view current now (a version
check, read after write) calls `refresh` or `catch_up`; a read of the window (`app://windows`, a
write's answer) calls `fresh`, which waits, within `FRESH_LIMIT`, for a read that began after
every change the page made before it. The view follows a page as it loads
and renders; a read that began on a document the tab has since left is thrown away
(`new_document`), so a window never shows the document it left.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict
from functools import partial
from typing import Any, Protocol

import anyio

from cdp_bridge.ax_patch import proven_tree
from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop import live_view
from webmcp.desktop.live_view import BINDING, OBSERVER_SET_UP, PageRead
from webmcp.desktop.memory import KeptReads
from webmcp.desktop.observer_take import FrameMoves
from webmcp.desktop.parts import Commit, Part
from webmcp.desktop.races import first_of
from webmcp.view.build import BlockIds, View, WalkMemo
from webmcp.view.masking import mask_secrets

__all__ = ["FLUSH_LIMIT", "FRESH_LIMIT", "INCREMENTAL", "LiveView", "ViewHost"]

logger = logging.getLogger(__name__)

INCREMENTAL = {"reads": 0, "whole": 0, "verified": 0, "raced": 0, "mismatches": 0}
"""Reads of this process: incremental (`live_view.read_changes`), whole after an incremental one
was unsure, and under `WEBMCP_VERIFY_INCREMENTAL=1` the ones checked against a whole read, those
that could not be (the page changed again between the two), and those that differed (each logged
at ERROR)."""
_INCREMENTAL_ON = os.environ.get("WEBMCP_INCREMENTAL", "1") != "0"
_VERIFY = os.environ.get("WEBMCP_VERIFY_INCREMENTAL", "") == "1"
_VERIFY_COUNTS = os.environ.get("WEBMCP_VERIFY_INCREMENTAL_COUNTS", "")
"""A file that the counts are written to (JSON) after each checked read, for the tests to read."""

_REFRESH_MIN_INTERVAL = 0.05
Observer = tuple[int, int | None]
"""A frame's change observer: its session (`id`) and its world's execution context."""
_REPORTS_KEPT = 64
"""Past this many observers' last reports, those older than `_FOLD_WINDOW` are let go."""
_FOLD_WINDOW = 0.1
"""How long after a reported change a further one may still be unreported: the observer folds
changes within 15 ms of a report into one at the end (live_view.py), and a busy page runs that
timer late."""
_CALL_HOLD = 0.2
"""How long a change reported while a page-tool call runs may wait for its answer before it is read
(the call's read after write reads it then, once, instead of a read begun mid-call and one after)."""
_CALL_GRACE = 0.01
FRESH_LIMIT = 1.0
"""The longest a read of a window waits for its view to catch up with the changes the page made
before the read (s): one read under way and one more, on all but huge or hung pages."""
_UNSEEN_TYPES = frozenset(
    {
        "Image",
        "Font",
        "Script",
        "XHR",
        "Fetch",
        "EventSource",
        "WebSocket",
        "Ping",
        "Manifest",
        "CSPViolationReport",
        "Preflight",
        "Prefetch",
    }
)
"""Network resource types whose arrival changes nothing a read shows unless the DOM changes too
(which the observers report): an image's or a font's changes only pixels (the accessibility tree
of unnamed, named, mapped and input images, and of text in a blocking web font, was the same
before and after they loaded, Chromium 156), and what a script or data request brings is the
page's scripts' to insert. A stylesheet, a medium (its error names it) or a document can."""
_UNSEEN_KEPT = 256
"""The most resources of those types answered and not yet finished that are kept (past it they
are forgotten, and their arrivals counted like any other's)."""
FLUSH_LIMIT = 0.05
"""How long a read of a window waits for the reports of changes a page made before it to arrive
(`LiveView.flush`): one round trip; a page that cannot answer that soon (busy, a dialog open) is not waited for."""
PARSE_HOLD = 1.0
"""After a commit, how long the refresher leaves a document that has not fired DOMContentLoaded to
parse before it reads it anyway (s): an AX read mid-parse can slow a big document's parse fivefold."""


class ViewHost(Protocol):
    """What the live view needs of the tab it belongs to."""

    @property
    def doc_seq(self) -> int: ...

    def show(self, view: View) -> None:
        """A new view was read: compose the window from it (under the view's lock)."""

    async def after_read(self) -> None:
        """After a read, outside the lock: what else the page shows (a waiting form's values)."""

    def fault(self, exc: BaseException) -> None: ...

    async def until_crashed(self) -> None:
        """Returns when the page's renderer has crashed (a read of it is never answered then)."""


class LiveView(Part):
    """The view of one tab's page, rebuilt when the page changed (a part of the tab: parts.py)."""

    def __init__(
        self,
        page: PageTarget,
        timeouts: Timeouts,
        host: ViewHost,
        calling: Callable[[], list[anyio.Event]] = list,
        kept: KeptReads | None = None,
    ) -> None:
        """`calling` gives, for each page-tool call of the tab under way, the event of its answer
        (`_while_calling`); `kept`, the tabs whose last read keeps its nodes (None: this one always)."""
        self._page = page
        self._timeouts = timeouts
        self._host = host
        self._kept = kept
        self._lock = anyio.Lock()
        self._dirty = anyio.Event()
        self._closed = False
        self._calling = calling
        self._ids = BlockIds()
        self._view: View | None = None
        self._last_read: PageRead | None = None
        self._secret_values: frozenset[str] = frozenset()
        self._has_secret_fields = True  # until a view says otherwise, mask by reading the page
        self._last_report = -float("inf")
        """When the page's observer last reported a change (`anyio.current_time()`)."""
        self._reports: dict[Observer, float] = {}
        """When each frame's observer (its session and world) last reported a change, within
        `_FOLD_WINDOW` of now (older ones are let go)."""
        self._shown_takes: dict[Observer, float] = {}
        """The observers whose fold the read shown ended before it read (an incremental read's takes;
        a whole read's flush, `live_view._flush_folds`, of the frames of the page's own session), and
        until when a report of theirs was of a change that read saw: a take ends the fold at once
        (observer.js), so a report before that read began (`_shown_began`) holds nothing it missed;
        a flush's answer comes after every report of a change before it."""
        self._during: list[tuple[Observer | None, float]] | None = []
        """The marks (an observer's report, None for any other) since the latest read began; None
        when too many to keep: a read that saw every one of them leaves the view clean."""
        self._report = anyio.Event()
        """Set (and replaced) at each report of a change."""
        self._read_began = -float("inf")
        """When the latest read began."""
        self._shown_began = -float("inf")
        """When the read the view comes from began (-inf: no view of this document yet)."""
        self._released = anyio.Event()
        self._released.set()
        """Clear while the refresher is held (`hold`): reads asked for directly still happen."""
        self._parsed = anyio.Event()
        self._parsed.set()
        """Clear from a commit to the document's DOMContentLoaded (`new_document`, `parsed`)."""
        self._left = anyio.Event()
        """Set (and replaced) when the tab commits another document: a read of the last one ends."""
        self._moves = FrameMoves()
        """Which frames are navigating: an incremental read does not read their elements (`FrameMoves`)."""
        self._parse_ends = -float("inf")
        """When the refresher stops waiting for that (`PARSE_HOLD` after the commit)."""
        self._arrivals = 0
        """How many of the main session's resources finished loading (or failed): Network events come."""
        self._last_arrival = -float("inf")
        """When the last of them that may change what a read shows did (not one of `_UNSEEN_TYPES`)."""
        self._unseen: set[str] = set()
        """The main session's requests of `_UNSEEN_TYPES` answered and not yet finished."""
        self._marked = -float("inf")
        """When the page was last marked changed, by its observer or by anything else."""
        self._wholes = 0
        """How many times something other than the page's own observers marked the view dirty
        (navigation, a frame, a load, a new session): each asks for a whole read."""
        self._clean = -1
        """`_wholes` as it was when the last read that ended well began (-1: the last read failed,
        and the changes it took from the observers are lost): unless it still is, read whole."""
        self._read_ended = anyio.Event()
        """Set (and replaced) when a read ends, well or not."""
        self._hurried = False
        """A reader waits for the view (`fresh`): the refresher reads as soon as it can."""
        self._sessions: list[CDPSession] = []
        """The sessions whose frames' observers report to this view (the page's, its out-of-process frames')."""
        self._idle: anyio.CancelScope | None = None
        """The refresher's wait between reads, which `fresh` cuts short."""

    @property
    def view(self) -> View | None:
        """The latest view (None before the first read, and after a crash)."""
        return self._view

    @property
    def last_read(self) -> PageRead | None:
        """The read `view` came from (to read the rest of a long table or list from)."""
        return self._last_read

    # --- the tab's lifecycle (parts.py) ------------------------------------------------

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        """The change observer in every frame of `session`; the main document's parse and load."""
        self._sessions = [*(s for s in self._sessions if not s.closed), session]
        session.on("Runtime.bindingCalled", partial(self._observer_said, session))
        session.on("Page.loadEventFired", lambda _p: self._loaded(main))
        session.on("Page.domContentEventFired", lambda _p: self._loaded(main, parsed=main))
        if main:  # the data requests' Network.enable (page_requests.py) covers the main session
            session.on("Network.responseReceived", self._answered)
            session.on("Network.loadingFinished", self._arrived)
            session.on("Network.loadingFailed", self._arrived)
        session.on("Page.navigatedWithinDocument", lambda _p: self.mark_dirty())
        session.on("Page.frameStartedNavigating", self._moves.started)
        session.on("Page.frameNavigated", self._moves.committed)
        session.on("Page.frameStoppedLoading", self._moves.stopped)
        return list(OBSERVER_SET_UP)

    def _document_event(self, *, parsed: bool) -> None:
        """The page parsed or loaded a document: read it (whole), and no longer wait for its parse."""
        if parsed:
            self.parsed()
        self.mark_dirty()

    def _answered(self, params: dict[str, Any]) -> None:
        """A resource of the main session's frames is answered: one whose arrival cannot change
        what a read shows (`_UNSEEN_TYPES`) is noted, so that its arrival moves nothing."""
        if params.get("type") in _UNSEEN_TYPES:
            if len(self._unseen) >= _UNSEEN_KEPT:
                self._unseen.clear()
            self._unseen.add(str(params.get("requestId")))

    def _arrived(self, params: dict[str, Any]) -> None:
        """A resource of the main session's frames finished loading (or failed)."""
        self._arrivals += 1
        request = str(params.get("requestId"))
        if request in self._unseen:
            self._unseen.discard(request)
        elif params.get("type") not in _UNSEEN_TYPES:  # a failure says its type
            self._last_arrival = anyio.current_time()

    def _loaded(self, main: bool, *, parsed: bool = True) -> None:
        """The load event, or DOMContentLoaded (`parsed`: of the main frame): some of what they
        waited for (a stylesheet, a medium) may show without changing the DOM, so the page is read
        whole again, unless the latest read began after the last of the main session's resources
        that can arrived (not an image, a font, a script or data: `_UNSEEN_TYPES`): that read sees
        all they bring (what the parser and the page's scripts insert is the observers' to report).
        A big page's load, 2 ms after its DOMContentLoaded, cost a second whole read (140 ms on
        3,000 rows) before a navigation's answer; so did its DOMContentLoaded when its script ran
        past `SETTLE_QUIET` (a busy machine) and the navigation read the page before it, and its
        logo when that arrived after the read began (a loaded machine). Without Network events
        (none seen yet), or for another session's frames, it is read whole."""
        if main and self._arrivals and self._last_arrival < self._read_began:
            self.parsed()
            return
        self._document_event(parsed=parsed)

    def committed(self, doc: Commit) -> None:
        self.new_document(parsing=not doc.restored)

    def crashed(self) -> None:
        self.forget()

    def closing(self) -> None:
        self.close()

    # --- what the page did -----------------------------------------------------------

    def mark_dirty(self) -> None:
        """Note that the page may have changed; the refresher rebuilds the view soon, from a whole read."""
        self._marked = anyio.current_time()
        self._note(None, self._marked)
        self._wholes += 1
        self._dirty.set()

    def _note(self, observer: Observer | None, moment: float) -> None:
        if self._during is not None and len(self._during) < _REPORTS_KEPT:
            self._during.append((observer, moment))
        else:
            self._during = None

    def _observer_said(self, session: CDPSession, params: dict[str, Any]) -> None:
        # "painted" and "hidden" (observer.js) tell how the document shows, not that what it holds
        # changed: the window is composed again (navigation.py), nothing is read (a big page's
        # first paint, after its first read began, cost a second whole read before its answer).
        if params.get("name") == BINDING and not params.get("payload"):
            self.reported_change((id(session), params.get("executionContextId")))

    def reshow(self) -> None:
        """Compose the window again from the view shown: how the tab stands changed, not its page."""
        if self._view is not None and not self._closed:
            self._host.show(self._view)

    def reported_change(self, observer: Observer = (0, None)) -> None:
        """The change observer in one of the page's frames (`observer`: its session and world; none
        that a read takes when not known) reported a change."""
        self._last_report = self._marked = now = anyio.current_time()
        if len(self._reports) > _REPORTS_KEPT:
            self._reports = {o: t for o, t in self._reports.items() if now - t <= _FOLD_WINDOW}
        self._reports[observer] = now
        self._note(observer, now)
        self._dirty.set()
        report, self._report = self._report, anyio.Event()
        report.set()

    def shed(self) -> None:
        """Let the last read's nodes go (other tabs were read since, `KeptReads`): the view and
        where to read more of a long run stay; the next read of the page is a whole one."""
        read = self._last_read
        if read is None or not read.sessions:
            return
        self._last_read = dataclasses.replace(read, sessions=[], taken={}, memo=WalkMemo())
        self._clean = -1

    def forget(self) -> None:
        """The renderer crashed: there is no view until a new document is read."""
        self._view = self._last_read = None
        self._shown_began = -float("inf")
        self._shown_takes = {}
        self._wholes += 1
        self._parsed.set()

    def close(self) -> None:
        """The tab closed: the refresher ends."""
        if self._kept is not None:
            self._kept.closed(self)
        self._closed = True
        self._dirty.set()
        self._released.set()
        self._parsed.set()

    def hold(self) -> None:
        """The refresher reads nothing until `release` (a start page loading before any client can
        see its window: a read while it loads only competes with it for the renderer)."""
        if not self._closed:
            self._released = anyio.Event()

    def release(self) -> None:
        """The refresher follows the page again, beginning with what changed while it was held."""
        self._released.set()

    def new_document(self, *, parsing: bool = False) -> None:
        """The main frame committed another document: the last view is the old one's, and goes.

        `parsing`: the document is being parsed (not restored whole from the back-forward cache).
        Until it has parsed (`parsed`), for at most `PARSE_HOLD`, the refresher leaves it alone:
        Chromium serialising the AX tree of a document mid-parse, and keeping it current from then
        on, made a 15,000-element page parse in 2.7 s instead of 0.5 s about one first visit in
        three. Reads asked for (a version check, a client's read, a navigation's answer) still happen.
        """
        if parsing and not self._closed:
            self._parsed = anyio.Event()
            self._parse_ends = anyio.current_time() + PARSE_HOLD
        else:
            self._parsed.set()
        self._view = self._last_read = None
        self._shown_began = -float("inf")
        self._shown_takes = {}
        self._marked = anyio.current_time()
        self._wholes += 1
        self._dirty.set()
        left, self._left = self._left, anyio.Event()
        left.set()

    def parsed(self) -> None:
        """The document shown fired DOMContentLoaded (or its load event): the refresher reads it."""
        self._parsed.set()

    async def quiet(self, period: float) -> None:
        """Until the page has reported no change for `period` seconds (its rendering has settled)."""
        if anyio.current_time() - self._last_report >= period:
            return
        while True:
            with anyio.move_on_after(period) as waited:
                await self._report.wait()
            if waited.cancelled_caught:
                return

    async def reported_after(self, moment: float) -> None:
        """Until the page reports a change after `moment` (`anyio.current_time()`); the caller bounds it."""
        while self._last_report <= moment:
            await self._report.wait()

    # --- reading ----------------------------------------------------------------------

    async def run(self) -> None:
        """Rebuild the view whenever the page changed, at most every 50 ms, until the tab closes.

        So a page that mutates without pause costs at most 20 rebuilds a second, and its
        `version` (which moves only when summary or blocks differ) at most 20 bumps a second.
        Each tab has its own refresher: a slow page never delays another tab's view.
        """
        while not self._closed:
            await self._dirty.wait()
            await self._unless_hurried(self._ready)
            if self._closed:
                return
            started = anyio.current_time()
            try:
                await self.refresh()
            except Exception as exc:  # boundary: a page the bridge cannot read must not stop it following the page
                logger.exception("rebuilding a view failed")
                self._host.fault(exc)
            # A huge page's AX tree takes seconds and holds its renderer meanwhile: pausing as
            # long as the build took leaves the page (and its tool calls) at least half the time.
            pause = max(_REFRESH_MIN_INTERVAL, anyio.current_time() - started)
            await self._unless_hurried(partial(anyio.sleep, pause))

    async def _ready(self) -> None:
        """Until the refresher may read on its own: not held, the document parsed, the calls answered."""
        await self._released.wait()
        with anyio.move_on_after(self._parse_ends - anyio.current_time()):
            await self._parsed.wait()
        await self._while_calling()

    async def _unless_hurried(self, wait: Callable[[], Awaitable[object]]) -> None:
        """`wait`, cut short when a reader waits for the view (`fresh`)."""
        if self._hurried:
            return
        idle = self._idle = anyio.CancelScope()
        try:
            with idle:
                await wait()
        finally:
            self._idle = None

    async def _while_calling(self) -> None:
        """Until the page has answered every page-tool call of the tab under way, and a moment
        more for its read after write to begin, for at most `_CALL_HOLD` seconds.

        A tool's changes come over several tasks: a read begun at the first report misses the
        later ones, and the call's read after write must then read again (`catch_up`). Held
        while the call runs, the one read is the call's own, begun after the answer. Bounded,
        so a long call (one waiting for a person) leaves its page's view current meanwhile.
        """
        answers = self._calling()
        if not answers:
            return
        with anyio.move_on_after(_CALL_HOLD):
            for answered in answers:
                await answered.wait()
            await anyio.sleep(_CALL_GRACE)  # answer → settled → catch_up, which then reads

    async def refresh(self) -> bool:
        """Rebuild the view now if anything changed since the last build.

        Returns True when the view reflects the page as it is now, False when the page
        could not be read (busy past the snapshot deadline, or mid-navigation).
        """
        try:
            return await self._refresh()
        finally:
            ended, self._read_ended = self._read_ended, anyio.Event()
            ended.set()

    async def _refresh(self) -> bool:
        async with self._lock:
            if self._page.crashed:
                # Nothing to read until a reload brings a new renderer, and no view is current: asked
                # first, or a caller that comes after the refresher met the crash would be told True.
                self._dirty = anyio.Event()
                return False
            if not self._dirty.is_set():
                return True
            self._dirty = anyio.Event()
            self._hurried = False  # this read serves every reader that came before it began
            self._read_began = began = anyio.current_time()
            self._during = []
            doc_seq = self._host.doc_seq
            last = self._last_read if self._last_read is not None and self._last_read.doc_seq == doc_seq else None
            asked = self._wholes
            whole = self._clean != asked or not _INCREMENTAL_ON or last is None
            # The observers' changes are taken (and forgotten) by the read: until one ends well,
            # the next must read the page whole.
            self._clean = -1
            try:
                with anyio.fail_after(self._timeouts.snapshot):
                    read = await self._read_unless_crashed(last, whole)
                if read is None:
                    # The renderer crashed mid-read, or the tab left the document (`new_document`
                    # marked the next one dirty): its commands may never be answered (an AX query of
                    # a document being torn down waited out the whole command timeout, holding the
                    # new document's first read 10 s).
                    return False
            except CDPError as exc:
                # A navigation tore the document down under us; its next event retries.
                logger.debug("a snapshot failed: %s", type(exc).__name__)
                return False
            except anyio.get_cancelled_exc_class():
                # A caller's deadline ended the read: the change it was for is still unread.
                self._dirty.set()
                raise
            except TimeoutError:
                # A huge or hung page: try again later (the refresher's pause bounds the rate).
                logger.debug("a snapshot timed out after %s s", self._timeouts.snapshot)
                if not self._closed:
                    self._dirty.set()
                return False
            if self._host.doc_seq != doc_seq:
                # The tab committed another document during the read: this is the one it left.
                self._dirty.set()
                return False
            if self._closed:
                return False  # the tab closed during the read: nothing of it is shown any more
            self._clean = asked  # a whole read asked for meanwhile is still to come
            self._shown_began = began
            self._shown_takes = {**dict.fromkeys(read.observers(), began), **read.flushed}
            self._saw_all_since(began)
            self._take(read)
            self._host.show(read.view)
        await self._host.after_read()
        return True

    def _saw_all_since(self, began: float) -> None:
        """The read begun at `began` is shown: when every mark since was an observer's report of a
        change that read saw (a flushed fold's), nothing is left to read and the view is clean."""
        during, took = self._during, self._shown_takes
        if not during or any(o is None or not t < took.get(o, began) for o, t in during):
            return
        self._during = []
        self._marked = began  # every mark since was seen; the last one before came before it
        self._dirty = anyio.Event()

    async def _read_unless_crashed(self, last: PageRead | None, whole: bool) -> PageRead | None:
        """`_read`, given up (None) the moment the renderer crashes or the tab commits another document.

        Raises:
            CDPError: the document could not be read.
        """
        left = self._left
        first = await first_of(lambda: self._read(last, whole), self._host.until_crashed, left.wait)
        return first.value if first.index == 0 else None

    async def _read(self, last: PageRead | None, whole_only: bool) -> PageRead:
        """The page read whole, or (unless `whole_only`) only where it changed since `last`, an
        earlier read of the same document, when that can be said.

        Raises:
            CDPError: the document could not be read.
        """
        if last is None:
            return await live_view.read_page(self._page, self._host.doc_seq, self._ids)
        before = copy.deepcopy(self._ids) if _VERIFY and not whole_only else None
        read = None if whole_only else await live_view.read_changes(self._page, last, self._ids, self._moves)
        if read is None:
            INCREMENTAL["whole"] += 0 if whole_only else 1
            whole_read = await live_view.read_page(self._page, self._host.doc_seq, self._ids)
            if whole_read.doc_seq == last.doc_seq:
                whole_read.contexts.update(last.contexts)  # the observers' worlds live as long as their documents
            return whole_read
        INCREMENTAL["reads"] += 1
        if before is None:
            return read
        # The check: a whole read, with the ids as they were, must give the very same view.
        whole = await live_view.read_page(self._page, self._host.doc_seq, before)
        # What the takes gave stands for the next incremental read, which is then one after an
        # incremental read, as without the check.
        whole.contexts.update(read.contexts)
        whole.taken.update(read.taken)
        for _session, nodes in whole.sessions:  # and the splice of the next one checks only what it changed
            nodes.trees |= {frame.key for frame in nodes.frames if proven_tree(frame.nodes)}
        incremental_ids, self._ids = self._ids, before
        try:
            if await live_view.changed_since(read):
                # The page changed again meanwhile: the two reads saw different pages (the change
                # is recorded, and the next read takes it).
                INCREMENTAL["raced"] += 1
            else:
                _compare(read, incremental_ids, whole, before)
        finally:
            if _VERIFY_COUNTS:
                await anyio.Path(_VERIFY_COUNTS).write_text(json.dumps(INCREMENTAL), encoding="utf-8")
        return whole

    def _take(self, read: PageRead) -> None:
        view = read.view
        self._last_read, self._view, self._secret_values = read, view, read.secret_values
        if self._kept is not None:
            self._kept.read(self)
        self._has_secret_fields = (
            bool(self._secret_values)
            or any(item.get("sensitive") for b in view.full_blocks if b["type"] == "fields" for item in b["items"])
            or any(
                item.get("sensitive")
                for m in view.modals
                for b in m.full_blocks
                if b["type"] == "fields"
                for item in b["items"]
            )
        )

    def navigating(self, frame_id: str) -> AbstractAsyncContextManager[None]:
        """Around a command that navigates `frame_id`: no incremental read names its elements meanwhile."""
        return self._moves.sending(frame_id)

    async def catch_up(self, budget: float, since: float | None = None) -> None:
        """Rebuild the view now if the page changed since the last build, within `budget` seconds.

        `since` is when a call that the page has just answered began. The observer reports a
        change at once, but folds further changes of the next 15 ms into one later report,
        which can come after the answer: a rebuild that began before the answer may lack
        them, with nothing yet saying so. So when the page reported a change during the call
        or just before it, the view must come from a read that began after the answer.

        A call near which nothing was reported or marked changed waits for nothing, even when
        the view is stale or being rebuilt for an older change (a page's clock or ticker).
        """
        quiet = since is None or self._last_report < since - _FOLD_WINDOW
        if quiet and not self._dirty.is_set() and not self._lock.locked():
            return  # The view is current and no rebuild is under way: the common case of a read.
        if quiet and since is not None and self._marked < since and self._view is not None:
            return  # What is unread the page did before the call: the refresher reads it, the call need not wait.
        if self._closed:
            return
        answered = anyio.current_time()
        with anyio.move_on_after(budget):
            # refresh() waits for a rebuild already under way, then rebuilds only if still dirty.
            await self.refresh()
            if not quiet and self._read_began < answered and not self._closed:
                # What the observer saw and has not reported yet is read (from the page's own
                # observer, so only where it changed).
                self._dirty.set()
                await self.refresh()

    def _changed_before(self, moment: float) -> float:
        """When the page last changed before `moment` as far as the bridge can tell (`moment` itself
        within `_FOLD_WINDOW` of a report: its observer may hold changes it has not reported yet)."""
        if moment - self._last_report > _FOLD_WINDOW:
            return self._marked
        # A report within the window from an observer whose changes the view's read took after it
        # holds nothing unread: that take ended its fold, and it reports at once again.
        took = self._shown_takes
        unread = any(moment - t <= _FOLD_WINDOW and (o not in took or took[o] <= t) for o, t in self._reports.items())
        return moment if unread else self._marked

    def _parsing_unread(self) -> bool:
        """The document shown is left to parse (`new_document`, `PARSE_HOLD`) and nothing of it is read."""
        return self._view is None and not self._parsed.is_set() and anyio.current_time() < self._parse_ends

    def _unreadable(self) -> bool:
        """Nothing more can be read of the page: the tab closed, its renderer crashed, or its session
        (the browser) is gone. A reader then has the view as it is, at once: an answer waiting for a
        read that cannot come missed the moment the browser's death left to answer in."""
        return self._closed or self._page.crashed or self._page.session.closed

    async def flush(self, limit: float) -> None:
        """Let every report of a change the page's observers sent before now arrive: one round trip
        on each of its sessions, side by side, at most `limit` seconds. A report rides its session's
        pipe, so it is in before that session's answer; without this, a change made just before an
        agent's read (by a person, a timer, another client) whose report was still on its way was
        unknown to the read, which showed the window as it was, saying nothing (MiniWoB: a first
        read showed the page before its episode began, 8 of 190 episodes on a loaded machine).

        A page that answers nothing in time (a long task, a dialog open) is left as it stands: its
        changes are known as their reports come.
        """
        sessions = [s for s in self._sessions if not s.closed]
        if not sessions or self._unreadable():
            return

        async def ask(session: CDPSession) -> None:
            try:
                await session.send("Runtime.releaseObjectGroup", {"objectGroup": "webmcp-flush"}, timeout=limit)
            except CDPError:
                pass  # gone, or no answer in time: nothing more to wait for there

        if len(sessions) == 1:  # most pages: no task group to start
            await ask(sessions[0])
            return
        with anyio.move_on_after(limit):
            async with anyio.create_task_group() as tg:
                for session in sessions:
                    tg.start_soon(ask, session)

    def is_fresh(self) -> bool:
        """Whether the view comes from a read begun after every change the page made before now."""
        if self._unreadable():
            return True
        return self._shown_began >= self._changed_before(anyio.current_time())

    async def fresh(self, budget: float) -> bool:
        """Until the view comes from a read begun after every change the page made before now,
        within `budget` seconds; whether it does.

        A change is known by its mark (`mark_dirty`, `reported_change`); within `_FOLD_WINDOW` of
        a report the observer may hold changes it has not reported yet, which a read begun now
        takes (`_changed_before`). A page that has reported nothing lately costs nothing here.
        The wait is for the refresher's reads (hurried, not begun here), so a reader's deadline
        never cuts a read short: a page that changes without pause is read once more and shown as
        that read saw it, within `budget`.

        A document still parsing, of which nothing has been read, is not read for a reader: its
        window says that nothing of it has been read yet, which is true, and a read mid-parse
        slows a big document's parse. Whether it is still parsing is asked of the page first (one
        round trip: its DOMContentLoaded, if it came before the read, is in before the answer).
        """
        moment = anyio.current_time()
        with anyio.move_on_after(budget):
            if self._parsing_unread() and not self.is_fresh():
                try:
                    await self._page.session.send("Runtime.evaluate", {"expression": "0"}, timeout=budget)
                except CDPError:
                    pass  # the document is going: what its next one does is marked as it comes
            if self._parsing_unread():
                return True
            target = self._changed_before(moment)
            while self._shown_began < target and not self._unreadable():
                ended = self._read_ended
                if not self._dirty.is_set() and not self._lock.locked():
                    self._dirty.set()  # the last read failed and nothing asked again since
                self._hurried = True
                if self._idle is not None:
                    self._idle.cancel()
                await ended.wait()
        if self._parsing_unread() or self._unreadable():
            return True
        return self._shown_began >= self._changed_before(moment)

    async def read_since(self, moment: float, budget: float, *, loaded: bool = False) -> None:
        """Until the view comes from a read begun after `moment`, with nothing marked changed since,
        within `budget` seconds. With `loaded`, `moment` is the page's load event, after which
        nothing renders unseen: a read begun after the last change marked before it will do too
        (`_loaded` marks a load that brought anything the latest read may have missed). Without,
        on a page still loading, so will a read begun after that change and after the last of the
        page's resources that can show without a DOM change arrived (`_unseen_before`).

        A read under way that began after `moment` (the refresher's, at a load event) is the one:
        it is waited for, not followed by another, unless the page changed meanwhile.
        """
        with anyio.move_on_after(budget):
            await self.refresh()  # waits for a read under way, then reads again only if dirty
            if loaded:
                target = min(moment, self._changed_before(moment))
            else:
                await self.flush(FLUSH_LIMIT)  # the reports of changes made before `moment` are in
                target = self._unseen_before(moment)
            if self._shown_began < target and not self._closed:
                self.mark_dirty()
                await self.refresh()

    def _unseen_before(self, moment: float) -> float:
        """Since when a page still loading may show something a read begun then did not see, as of
        `moment`: its last change marked, or the last of its resources that can show without a DOM
        change arrived (an image on a slow host, still holding the load event, changes nothing a
        read shows: it cost a 3,000-row page a second whole read before its navigation's answer).
        `moment` itself when that cannot be told: no Network events (they tell the arrivals), or
        frames in other processes, whose resources are not followed."""
        if not self._arrivals or any(s is not self._page.session and not s.closed for s in self._sessions):
            return moment
        return min(moment, max(self._changed_before(moment), self._last_arrival))

    # --- secrets ----------------------------------------------------------------------

    def has_secret_fields(self) -> bool:
        """Whether the page showed a secret field (password, card, one-time code) at the last view."""
        return self._has_secret_fields

    def secret_values(self) -> frozenset[str]:
        """Values of the page's secret fields as of the last view (memory only, for masking)."""
        return self._secret_values

    def mask(self, value: Any) -> Any:
        """`value` with every secret input's current value replaced by the mask."""
        return mask_secrets(value, self._secret_values)


def _view_json(view: View, ids: BlockIds) -> str:
    """Everything a view (masked: no secret value is in it) and its ids say, one item a line."""
    return json.dumps({"view": asdict(view), "ids": repr(ids)}, indent=1, sort_keys=True, default=repr)


def _compare(read: PageRead, ids: BlockIds, whole: PageRead, whole_ids: BlockIds) -> None:
    """Count the check of an incremental read against a whole one; log at ERROR how they differ."""
    INCREMENTAL["verified"] += 1
    got, want = _view_json(read.view, ids), _view_json(whole.view, whole_ids)
    if got != want or read.secret_values != whole.secret_values:
        INCREMENTAL["mismatches"] += 1
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "whole", "incremental", n=1, lineterm="")
        logger.error(
            "an incremental read differs from the whole read (secret values: %d whole, %d incremental, %s):\n%s",
            len(whole.secret_values),
            len(read.secret_values),
            "the same" if read.secret_values == whole.secret_values else "not the same",
            "\n".join(list(diff)[:60]),
        )
