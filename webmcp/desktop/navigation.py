"""A tab's navigator: navigate, back, forward and reload, each until the new page is usable.

It follows the main frame's navigations (started, committed, painted, parsed, loaded,
stopped) for the tab. A new document is usable once it shows something of its own and its
first render has settled:

1. Shown: its first contentful paint (text, an image: the observer in its isolated world tells,
   observer.js), or its load event (a page with nothing to show), within `HELD_LIMIT` of the
   commit. Until then a person sees a blank page, whatever the document holds: its parser held
   by a synchronous `<script src>` in `<head>`, or its render by a stylesheet, from a host that
   is slow or never answers. When all it waits for is still connecting to its host, the browser
   gives those connections up within a bound of its own and the page goes on: that is waited for,
   within `CONNECT_LIMIT`. Past the bound the answer says so, and what the page waits for
   (the scripts and stylesheets of the document still pending, by host: `Blockers`).
2. Settled: parsed (DOMContentLoaded), or a render that no change has followed for
   `SETTLE_QUIET` (a parser held after what has rendered: a script at the end of the body);
   then quiet for `SETTLE_QUIET` or loaded, at most `SETTLE_LIMIT`; then the data requests the
   document sent to its own site answered and rendered (`page_requests`), at most
   `SETTLE_LIMIT`: a page that fetches its data fires its load event before the data is there.
   All of step 2 is bounded by `AFTER_COMMIT_LIMIT`.

A page that has rendered but whose parser still waits for a script it asked for answers as soon
as it has rendered too; the answer says that its parser waits for a script from that host and
that more of the page may come (`wait_for` waits for it). Waiting for the parser instead cost
one of issue 41's 30 corpus pages 11 s (its script was after the article) and brought no page
more of its article.

So a page whose load event a hanging subresource holds (an ad, a font, a tracker) answers as
soon as it has rendered, saying it is still loading. Its window keeps following it as it
renders (the refresher is not held). A navigation may make the page ask first
(beforeunload), and a page may alert while it loads: then the navigation returns the dialog
in `openedWindowIds` instead of waiting on it, because the page now waits for the agent.
Every wait is bounded: the commit by `navigation`, what follows it by the page's own bounds
above (`usable_within`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.spawn import CONNECT_TIMEOUT
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.live_view import BINDING
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.page_requests import DataRequests
from webmcp.desktop.parts import Commit, Part
from webmcp.desktop.races import first_of
from webmcp.desktop.refresher import LiveView
from webmcp.desktop.waiting import WAIT_LIMIT
from webmcp.errors import ToolError, best_effort
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text

logger = logging.getLogger(__name__)

__all__ = [
    "AFTER_COMMIT_LIMIT",
    "CONNECT_LIMIT",
    "HELD_LIMIT",
    "SETTLE_LIMIT",
    "SETTLE_QUIET",
    "STILL_LOADING",
    "Blockers",
    "Navigator",
    "check_url",
    "usable_within",
]

SETTLE_QUIET = 0.3
"""After DOMContentLoaded, this long with no change reported by the page means its first render has settled (s)."""
SETTLE_LIMIT = 2.0
"""The longest a navigation waits for that quiet period once the page has parsed (s)."""
STILL_LOADING = (
    "It is still loading (its load event has not fired: a resource is slow or never finishes); what has "
    "rendered is readable, and its window follows the page as it goes on."
)
"""What an answer adds when the page it leaves the tab on has not loaded yet."""
AFTER_COMMIT_LIMIT = 5.0
"""The longest a navigation waits, once its page has shown something, for it to parse and settle (s)."""
HELD_LIMIT = 12.0
"""The longest a navigation waits after its commit for its page to show anything of its own (s),
when something it waits for has been asked of its host, which may never answer. Issue 41's 32
real pages held by a synchronous script from an unreachable host showed their article 8-13 s after
navigate (the connection failed after about 10 s); on the sample site a page that is not held
paints within 0.1 s of its commit."""
CONNECT_LIMIT = 40.0
"""...and when everything it waits for is still connecting to its host: the browser gives such a
connection up within a bound of its own (a TCP connect after 8 s, `spawn.CONNECT_TIMEOUT_FEATURE`;
a TLS handshake after 30 s, Chromium's fixed limit), and then the page goes on. On issue 41's
corpus over `mixed`, pages held by hosts that accept and never answer https showed their article
30 s after navigate. `GIVEN_UP_AFTER` after the last of them began, or this, whichever is first."""
_TLS_HANDSHAKE_LIMIT = 30.0
"""Chromium's own, fixed (`kSSLHandshakeTimeoutInSeconds`)."""
GIVEN_UP_AFTER = CONNECT_TIMEOUT + _TLS_HANDSHAKE_LIMIT + 1.0
"""When the browser has given up a connection that began this long ago (s): its TCP connect, its
TLS handshake, and a second to spare."""
_DATA_RENDER = 0.1
"""After the page's data requests are answered: how long its rendering of them is waited for."""
_DATA_FOLD = 0.02
"""...and how quiet it must then be (the observer folds changes of 15 ms into one report)."""
_BLOCKING_TYPES = {"Script": "script", "Stylesheet": "stylesheet"}
"""The requests a document's first render may wait for, by `Network.requestWillBeSent` type."""
_BLOCKERS_KEPT = 64


Start = Callable[[], Awaitable["str | ToolResult | None"]]
"""Starts a navigation: its loaderId, None when the loader is not known, or a finished answer."""


def usable_within(navigation: float) -> float:
    """How long a write waits for the document it moved the tab to: its commit within `navigation`,
    then the page's own bounds (`CONNECT_LIMIT` the longest)."""
    return navigation + CONNECT_LIMIT - HELD_LIMIT


def check_url(policy: OriginPolicy, url: str) -> None:
    """Refuse a URL the origin policy does not allow (local schemes, blocked origins) with validation_failed."""
    decision = policy.check(url)
    if not decision.allowed:
        raise ToolError(
            "validation_failed",
            f"The bridge does not open {cap_text(url, 200)!r}: {decision.reason}",
            fields=[{"field": "url", "error": decision.reason}],
        )


def _host(url: str) -> str:
    """`host[:port]` of `url`: never its user name or password (`https://user:secret@host/`), which a
    page may put there and which the bridge's own answer must not carry."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    host = parts.hostname or ""
    return f"{host}:{port}" if host and port else host


@dataclass(slots=True)
class _Pending:
    loader: str
    kind: str
    """"script" or "stylesheet"."""
    host: str
    began: float
    asked: bool = False
    """Its request went out on a connection (`Network.requestWillBeSentExtraInfo`): its host may
    never answer. Until then it is connecting (name, TCP, TLS), which the browser gives up in time."""
    late: bool = False
    """Fetched at low priority (an async or deferred script, one a script inserted): it holds
    neither the parser nor the first render."""


class Blockers:
    """The scripts and stylesheets the main frame's document asked for that have not arrived."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        """The navigator's (`anyio.current_time`), on which `given_up_by` answers."""
        self._pending: dict[str, _Pending] = {}
        """By request id."""
        self._asked: dict[str, None] = {}
        """Request ids whose request went out before `requestWillBeSent` told of it (Chromium sends
        the two in either order), the latest `_BLOCKERS_KEPT`."""

    def sent(self, params: dict[str, Any], main_frame: str) -> None:
        """`Network.requestWillBeSent`."""
        kind = _BLOCKING_TYPES.get(str(params.get("type", "")))
        if kind is None or params.get("frameId") != main_frame or len(self._pending) >= _BLOCKERS_KEPT:
            return
        host = _host(str(params.get("request", {}).get("url", ""))) or "the page's own site"
        request = str(params.get("requestId", ""))
        # A redirect's next request may have gone out before this says so: taken as asked (the
        # shorter wait).
        asked = request in self._asked or "redirectResponse" in params
        self._asked.pop(request, None)
        late = params.get("request", {}).get("initialPriority") in ("Low", "VeryLow")
        self._pending[request] = _Pending(str(params.get("loaderId", "")), kind, host, self._clock(), asked, late)

    def asked(self, params: dict[str, Any]) -> None:
        """`Network.requestWillBeSentExtraInfo`: the request went out on a connection."""
        request = str(params.get("requestId", ""))
        if (pending := self._pending.get(request)) is not None:
            pending.asked = True
            return
        self._asked[request] = None
        while len(self._asked) > _BLOCKERS_KEPT:
            del self._asked[next(iter(self._asked))]

    def ended(self, params: dict[str, Any]) -> None:
        """`Network.loadingFinished` or `Network.loadingFailed`."""
        self._pending.pop(str(params.get("requestId", "")), None)

    def committed(self, loader_id: str) -> None:
        """A new document replaced the last: what the others asked for holds nothing now (Chromium
        does not always say that their requests ended), and must not fill the `_BLOCKERS_KEPT`."""
        self._pending = {r: p for r, p in self._pending.items() if p.loader == loader_id}

    def holds_parser(self, loader_id: str) -> bool:
        """A script the document of `loader_id` asked for has not arrived, one its parser waits for
        (an async or deferred script, or one a script inserted, does not hold it)."""
        return any(p.loader == loader_id and p.kind == "script" and not p.late for p in self._pending.values())

    def given_up_by(self, loader_id: str) -> float | None:
        """When the browser will have given up every connection the document of `loader_id` still
        waits for (on the clock given), when all it waits for is still connecting; None when it
        waits for nothing, or for a request its host may never answer. A request fetched at low
        priority (`late`) is not waited for."""
        waits = [p for p in self._pending.values() if p.loader == loader_id and not p.late]
        if not waits or any(p.asked for p in waits):
            return None
        return max(p.began for p in waits) + GIVEN_UP_AFTER

    def describe(self, loader_id: str, kind: str | None = None, *, holding: bool = False) -> str:
        """What the document of `loader_id` waits for: "a script from a.example and a stylesheet from b.example";
        only those of `kind`, and with `holding` only those fetched at once (not `late`)."""
        hosts: dict[str, list[str]] = {}
        for p in self._pending.values():
            if p.loader != loader_id or p.kind != (kind or p.kind) or (holding and p.late):
                continue
            if p.host not in hosts.setdefault(p.kind, []):
                hosts[p.kind].append(p.host)
        parts = []
        for what, named in hosts.items():
            shown = [cap_text(h, 80) for h in named[:3]]
            more = f" and {len(named) - 3} more" if len(named) > 3 else ""
            if len(named) == 1:
                parts.append(f"a {what} from {shown[0]}")
            else:
                parts.append(f"{what}s from {', '.join(shown)}{more}")
        return " and ".join(parts) or "a resource that has not arrived"


class Navigator(Part):
    """The navigations of one tab's main frame, and the operations that start them (a part: parts.py)."""

    def __init__(
        self,
        tab_id: str,
        page: PageTarget,
        timeouts: Timeouts,
        policy: OriginPolicy,
        modals: ModalStack,
        view: LiveView,
        version: Callable[[], int],
        requests: DataRequests | None = None,
    ) -> None:
        self._tab_id = tab_id
        self._page = page
        self._timeouts = timeouts
        self._policy = policy
        self._modals = modals
        self._view = view
        self._version = version
        self._requests = requests or DataRequests()
        self._main_frame = ""
        self._loading = True
        self._navigating = False
        """A cross-document navigation of the main frame started and has not loaded or stopped."""
        self._committed = False
        """That navigation has committed its document."""
        self._parsed = False
        """The document shown has fired DOMContentLoaded (or was restored whole)."""
        self._painted = True
        """The document shown has painted something of its own (or is hidden, or was restored whole)."""
        self._loader = ""
        """The loader id of the document shown."""
        self._doc = 0
        """Counts the main frame's commits: the document shown."""
        self._waited = -1
        """The document `_after_commit` waited for last."""
        self._blockers = Blockers(anyio.current_time)
        self._progress = anyio.Event()
        """Set (and replaced) at each step above."""

    @property
    def loading(self) -> bool:
        """True while the page shown has not fired its load event."""
        return self._loading

    @property
    def replacing(self) -> bool:
        """The main frame began loading another document, which has not committed (nor stopped) yet."""
        return self._navigating and not self._committed

    @property
    def main_frame_id(self) -> str:
        # A page target's id is its main frame's id; the commits tell if that ever differs.
        return self._main_frame or self._page.target_id

    # --- following the main frame ------------------------------------------------------

    def _step(self) -> None:
        progress, self._progress = self._progress, anyio.Event()
        progress.set()

    # --- the tab's lifecycle (parts.py) ------------------------------------------------

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        """The main frame's navigations: started, parsed, stopped (its commits come as `committed`)."""
        session.on("Page.loadEventFired", lambda _p: self.loaded())
        if main:
            session.on("Page.frameStartedNavigating", lambda p: self._starting(session, p))
            session.on("Page.domContentEventFired", lambda _p: self.parsed())
            session.on("Page.frameStoppedLoading", lambda p: self.stopped(str(p.get("frameId", ""))))
            session.on("Page.frameNavigated", self._loader_of)
            session.on("Runtime.bindingCalled", self._observer_said)
            session.on("Network.requestWillBeSent", lambda p: self._blockers.sent(p, self.main_frame_id))
            session.on("Network.requestWillBeSentExtraInfo", self._asked)
            session.on("Network.loadingFinished", self._blockers.ended)
            session.on("Network.loadingFailed", self._blockers.ended)
        return []

    def _asked(self, params: dict[str, Any]) -> None:
        self._blockers.asked(params)
        if self._navigating and not self.shown:
            self._step()  # a page held past HELD_LIMIT may no longer be worth waiting for

    def _loader_of(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self._loader = str(frame.get("loaderId", ""))
            self._blockers.committed(self._loader)

    def _observer_said(self, params: dict[str, Any]) -> None:
        """The main frame's observer: its document painted (or is hidden, so it cannot tell)."""
        if params.get("name") == BINDING and params.get("payload") in ("painted", "hidden") and not self._painted:
            self._painted = True
            self._view.reshow()  # its notice no longer says that nothing has rendered
            self._step()

    def _starting(self, session: CDPSession, params: dict[str, Any]) -> None:
        same_document = str(params.get("navigationType", "")).startswith(("sameDocument", "historySameDocument"))
        if params.get("frameId") == self.main_frame_id and not same_document:
            self.started()

    def started(self) -> None:
        """The main frame began a cross-document navigation."""
        self._navigating, self._committed = True, False
        self._step()

    def committed(self, doc: Commit) -> None:
        """The main frame committed a new document (`restored` from the back-forward cache)."""
        self._main_frame = doc.frame_id
        self._doc += 1
        self._committed = True
        # A restored page fires no load event: it is shown as it was.
        self._loading = not doc.restored
        self._parsed = self._painted = doc.restored
        if doc.restored:
            self._navigating = False
        self._step()

    def parsed(self) -> None:
        """The main frame's document fired DOMContentLoaded."""
        self._parsed = True
        self._step()

    def stopped(self, frame_id: str) -> None:
        """A frame stopped loading: for the main frame, also the end of an aborted navigation
        (a 204, a download, a blocked URL)."""
        if frame_id == self.main_frame_id:
            self._navigating = False
            self._step()

    def loaded(self) -> None:
        """The page fired its load event."""
        self._loading = self._navigating = False
        self._parsed = True
        self._step()

    def attached(self, loaded: bool) -> None:
        """The bridge attached to a page that was already there: its load event may be past."""
        self._loading = not loaded
        self._parsed = self._painted = True  # what it shows is what there is to read

    def crashed(self) -> None:
        """The renderer died: nothing is loading any more."""
        self._loading = self._navigating = False
        self._step()

    @property
    def shown(self) -> bool:
        """The document shown has painted something of its own, or loaded, or is not loading."""
        return self._painted or not self._loading

    def loading_note(self) -> str:
        """What an answer adds about the page it leaves the tab on: "" once it has loaded."""
        if not self._loading:
            return ""
        if self.shown and not self._parsed and self._blockers.holds_parser(self._loader):
            return (
                "What has rendered is readable, but the page's parser still waits for "
                f"{self._blockers.describe(self._loader, 'script', holding=True)}: more of it may come (its "
                "wait_for waits for the text you expect). Its window follows the page."
            )
        if self.shown:
            return STILL_LOADING
        return (
            f"Nothing of it has rendered yet: it waits for {self._blockers.describe(self._loader)}. Its window "
            f"follows the page: its wait_for waits (up to {WAIT_LIMIT:g} s) for the text you expect."
        )

    async def settled(self, budget: float) -> None:
        """Wait, at most `budget` seconds, for a cross-document navigation under way to make its page usable.

        Usable: see the module's docstring (or the navigation ended otherwise). A JavaScript
        dialog (the new page alerting as it renders) ends the wait too: the page now waits for
        the agent.
        """
        if self._navigating:
            await self._modals.unless_dialog(self._until_usable_now, budget)

    async def _until_usable_now(self) -> None:
        while self._navigating and not self._committed:
            await self._progress.wait()
        if self._navigating and self._waited != self._doc:
            await self._after_commit()

    async def _after_commit(self) -> None:
        """The document committed: until it is usable (the module's docstring), within its bounds.

        Once per document: the write that navigated (`navigate`) settles after it, and must not
        wait for the same page again."""
        self._waited = self._doc
        committed = anyio.current_time()
        with anyio.move_on_after(HELD_LIMIT):
            while not self.shown:
                await self._progress.wait()
        # Past it, a page that waits only for connections the browser gives up in time is waited
        # for until then (it goes on after): within CONNECT_LIMIT of the commit.
        while not self.shown and (until := self._blockers.given_up_by(self._loader)) is not None:
            left = min(until, committed + CONNECT_LIMIT) - anyio.current_time()
            if left <= 0:
                break
            with anyio.move_on_after(left):
                await self._progress.wait()
        if not self.shown:
            return  # nothing to read yet: the answer says what the page waits for
        with anyio.move_on_after(AFTER_COMMIT_LIMIT):
            if self._loading and not self._parsed:
                # A parser held after what has rendered (a script at the end of the body) may never
                # go on: what has rendered, once it has settled, is what there is.
                await first_of(self._until_parsed, lambda: self._view.quiet(SETTLE_QUIET))
            if self._loading:
                await self._render_settled(self._until_loaded)
            await self._data_rendered()

    async def _until_parsed(self) -> None:
        while self._loading and not self._parsed:
            await self._progress.wait()

    async def _until_loaded(self) -> None:
        while self._loading:
            await self._progress.wait()

    async def _render_settled(self, loaded: Callable[[], Awaitable[None]]) -> None:
        """The page has parsed: until its first render settles or `loaded` returns, at most `SETTLE_LIMIT`."""
        await first_of(loaded, lambda: self._view.quiet(SETTLE_QUIET), timeout=SETTLE_LIMIT)

    # --- operations (the caller holds the tab's lock) ----------------------------------

    async def navigate(self, url: str) -> ToolResult:
        """Load `url` and return once it has loaded (or a dialog stops it)."""
        check_url(self._policy, url)

        async def start() -> str | ToolResult | None:
            began = anyio.current_time()
            session = self._page.session
            async with self._view.navigating(self.main_frame_id):
                reply = await session.send("Page.navigate", {"url": url}, timeout=self._timeouts.navigation)
            if reply.get("errorText"):
                raise ToolError(
                    "browser_error", f"Could not load {url}: {reply['errorText']}", detail=reply["errorText"]
                )
            if not reply.get("loaderId"):
                # The page's hashchange/popstate handlers run a task later: one round trip behind them,
                # then what they changed is read (read after write, as for any move).
                with best_effort(logger, "the page did not answer after moving within itself"):
                    await session.send("Runtime.evaluate", {"expression": "0"}, timeout=self._timeouts.command)
                await self._view.catch_up(self._timeouts.snapshot, since=began)
                return ToolResult(message=f"{self._tab_id} moved to {url} within the page (version {self._version()}).")
            return str(reply["loaderId"])

        return await self._run("navigate", start)

    async def history(self, step: int) -> ToolResult:
        """Go `step` entries through the tab's history (-1 back, +1 forward)."""
        action = "back" if step < 0 else "forward"

        async def start() -> None:
            session = self._page.session
            entries_reply = await session.send("Page.getNavigationHistory")
            index = entries_reply["currentIndex"] + step
            entries = entries_reply["entries"]
            if not 0 <= index < len(entries):
                raise ToolError(
                    "action_not_available",
                    f"{self._tab_id} has no {'previous' if step < 0 else 'next'} page in its history.",
                )
            async with self._view.navigating(self.main_frame_id):
                await session.send(
                    "Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]}, timeout=self._timeouts.navigation
                )

        return await self._run(action, start)

    async def reload(self) -> ToolResult:
        """Reload the page and return once it has loaded."""

        async def start() -> None:
            async with self._view.navigating(self.main_frame_id):
                await self._page.session.send("Page.reload", {}, timeout=self._timeouts.navigation)

        return await self._run("reload", start)

    async def _run(self, action: str, start: Start) -> ToolResult:
        session = self._page.session
        limit = self._timeouts.navigation
        watch = _LoadWatch(self._page.target_id)
        unsubscribe = [
            session.on("Page.frameNavigated", watch.committed),
            session.on("Page.navigatedWithinDocument", watch.moved_within),
            session.on("Page.domContentEventFired", watch.parsed),
            session.on("Page.loadEventFired", watch.loaded),
        ]

        began = anyio.current_time()

        def still_loading() -> ToolResult:
            after = anyio.current_time() - began
            return ToolResult(message=f"{self._tab_id} is still loading after {after:.0f} s: nothing has shown yet.")

        try:
            finished, started = await self._modals.unless_dialog(start, limit)
            if not finished:
                return self._modals.dialog_answer(f"{action} waits") or still_loading()
            if isinstance(started, ToolResult):
                return started
            usable = usable_within(limit)
            finished, _ = await self._modals.unless_dialog(lambda: self._until_usable(watch, started), usable)
            if not finished:
                return self._modals.dialog_answer(f"{action} is under way") or still_loading()
        finally:
            for off in unsubscribe:
                off()
        # The window has followed the page as it rendered; the answer's view is read after it became
        # usable. A page that fired its load event has nothing left to render unseen: its observer
        # reports every later change, so the read the load event began (the refresher's) will do, or,
        # when the load brought nothing that read could miss, the one begun after the last change.
        loaded_at = None if self._loading else watch.loaded_at(started if isinstance(started, str) else None)
        moment = anyio.current_time() if loaded_at is None else loaded_at
        await self._view.read_since(moment, self._timeouts.snapshot, loaded=loaded_at is not None)
        shown = watch.url or self._page.url or "the page"
        message = f"{self._tab_id} now shows {shown} (version {self._version()})."
        note = self.loading_note()
        return ToolResult(message=f"{message} {note}" if note else message)

    async def _until_usable(self, watch: _LoadWatch, loader_id: str | None) -> None:
        """Until the navigation of `loader_id` has committed, then parsed and settled (or loaded)."""
        await watch.until(loader_id, _COMMITTED)
        if watch.reached(loader_id, _LOADED):
            await self._data_rendered()  # within the page, restored whole, or loaded already
            return
        await self._after_commit()

    async def _data_rendered(self) -> None:
        """Until the page's own data requests are answered and what they brought is rendered,
        at most `SETTLE_LIMIT` (a request that is never answered does not hold the answer longer)."""
        with anyio.move_on_after(SETTLE_LIMIT):
            while (answered := await self._requests.answered()) is not None:
                with anyio.move_on_after(_DATA_RENDER):
                    await self._view.reported_after(answered)
                await self._view.quiet(_DATA_FOLD)


_COMMITTED, _PARSED, _LOADED = 1, 2, 3
"""How far a navigation has come (`_LoadWatch.reached`)."""


class _LoadWatch:
    """Main-frame commits, DOMContentLoaded and load events of one tab, in the order the browser sent them.

    A navigation's own parse and load are the first after *its* commit: an event still due
    from the page being left (say, a slow iframe holding its load) must not count as the new
    page's. A page restored from the back-forward cache fires neither (its commit says so),
    and a same-document move (`#fragment`, `history.pushState`) commits nothing: each ends
    the wait at once.
    """

    def __init__(self, main_frame: str) -> None:
        self.main_frame = main_frame
        self.events: list[tuple[str, str]] = []
        self.times: list[float] = []
        """When each of `events` came (`anyio.current_time()`)."""
        self.url = ""
        self.changed = anyio.Event()

    def _add(self, kind: str, loader_id: str = "") -> None:
        self.events.append((kind, loader_id))
        self.times.append(anyio.current_time())
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def committed(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self.url = str(frame.get("url", ""))
            restored = params.get("type") == "BackForwardCacheRestore"
            self._add("restored" if restored else "commit", str(frame.get("loaderId", "")))

    def moved_within(self, params: dict[str, Any]) -> None:
        if params.get("frameId") in (self.main_frame, None):
            self.url = str(params.get("url", ""))
            self._add("within")

    def parsed(self, _params: dict[str, Any]) -> None:
        self._add("parsed")

    def loaded(self, _params: dict[str, Any]) -> None:
        self._add("load")

    def reached(self, loader_id: str | None, step: int) -> bool:
        """Whether the navigation of `loader_id` (any, when None) has come as far as `step`."""
        seen = 0
        for kind, loader in self.events:
            if kind in ("restored", "within") and loader_id is None:
                return True
            if kind == "commit" and (loader_id is None or loader == loader_id):
                seen = _COMMITTED
            elif kind == "parsed" and seen:
                seen = max(seen, _PARSED)
            elif kind == "load" and seen:
                return True
            if seen >= step:
                return True
        return False

    def loaded_at(self, loader_id: str | None) -> float | None:
        """When the document of `loader_id`'s navigation (any, when None) fired its load event, if it has."""
        committed = False
        for (kind, loader), at in zip(self.events, self.times, strict=True):
            if kind == "commit" and (loader_id is None or loader == loader_id):
                committed = True
            elif kind == "load" and committed:
                return at
        return None

    async def until(self, loader_id: str | None, step: int) -> None:
        """Until the navigation of `loader_id` (any commit when None) has come as far as `step`."""
        while not self.reached(loader_id, step):
            await self.changed.wait()
