"""Page targets and their sessions: discovery, auto-attach, frames, out-of-process iframes.

`BrowserTargets` keeps one `PageTarget` per page (tab or popup) of the browser. Every
page and every out-of-process iframe gets its own flat session, set up before the page
runs a line of script (`waitForDebuggerOnStart`), so tools registered and dialogs opened
during load are never missed. The agent side learns about pages through the callbacks of
`TargetObserver`; it never sees raw `Target.*` traffic.

`waitForDebuggerOnStart` pauses every target auto-attach reports, including those its
filter leaves out: a dedicated worker the bridge did not attach to never ran, and a page
tool waiting on it never answered. So auto-attach is told about every kind of target, and
those the bridge has no use for (workers, worklets, and so on) are resumed and let go at
once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import anyio
from anyio.abc import TaskGroup

from .connection import CDPSession, Connection
from .errors import CDPError
from .protocol import AttachedToTarget, TargetInfo

__all__ = ["BrowserTargets", "PageTarget", "TargetObserver", "SessionSetup"]

logger = logging.getLogger(__name__)

_SERVED_TYPES = ("page", "iframe")
"""Target types the bridge keeps a session for; any other is resumed and detached."""
CLOSED_KEEP = 1024
"""Destroyed target ids remembered, to ignore a late event or a setup that ends after the
target went: far more than can be in flight at once (a setup is bounded by its timeouts)."""

# Every kind of target but the browser and the tab wrappers: what auto-attach reports it
# pauses, so the bridge must hear of each one to resume it.
_EVERY_TARGET = [{"type": "browser", "exclude": True}, {"type": "tab", "exclude": True}, {}]
# Under a page: its out-of-process iframes and workers; pages are reported by the browser.
_EVERY_CHILD = [{"type": "page", "exclude": True}, *_EVERY_TARGET]

_ANSWER_AT_ONCE = frozenset({"Fetch.requestPaused", "Fetch.authRequired"})
"""Events the browser waits on an answer to before the page's navigation goes on."""

SessionSetup = Callable[["PageTarget", CDPSession], Awaitable[None]]
"""Enables what the agent side needs on a new page or iframe session, before it runs."""


@dataclass(eq=False)
class PageTarget:
    """One page target (a tab or a popup) and the sessions that serve it."""

    target_id: str
    session: CDPSession
    url: str = ""
    title: str = ""
    opener_id: str | None = None
    frame_sessions: dict[str, CDPSession] = field(default_factory=dict)
    """Out-of-process iframes: frame (= target) id → its own session."""
    closed: bool = False
    crashed: bool = False
    """The renderer died; the target stays (Chromium shows its crash page) until reloaded or closed."""

    def sessions(self) -> list[CDPSession]:
        """The page's own session first, then those of its out-of-process iframes."""
        return [self.session, *self.frame_sessions.values()]


class TargetObserver(Protocol):
    """What the agent side hears about pages. Callbacks must not block."""

    def page_added(self, page: PageTarget) -> None: ...
    def page_changed(self, page: PageTarget) -> None: ...
    def page_removed(self, page: PageTarget) -> None: ...
    def page_crashed(self, page: PageTarget) -> None: ...
    def frame_session_added(self, page: PageTarget, session: CDPSession) -> None: ...


class BrowserTargets:
    """Discovers page targets, attaches to each (and to their OOPIFs), reports them."""

    def __init__(
        self,
        connection: Connection,
        task_group: TaskGroup,
        observer: TargetObserver,
        setup: SessionSetup,
    ) -> None:
        self._conn = connection
        self._tg = task_group
        self._observer = observer
        self._setup = setup
        self.pages: dict[str, PageTarget] = {}
        self._attach_waiters: dict[str, anyio.Event] = {}
        self._closed_targets: dict[str, None] = {}
        """Destroyed targets, oldest first, the last `CLOSED_KEEP` (ids are never reused)."""
        self._latest_info: dict[str, dict[str, Any]] = {}
        self._probes: set[str] = set()

    async def start(self) -> None:
        """Subscribe to target events, then auto-attach to every page, present and future."""
        browser = self._conn.browser
        browser.on("Target.attachedToTarget", lambda p: self._on_attached(browser, cast(AttachedToTarget, p)))
        browser.on("Target.targetInfoChanged", self._on_info_changed)
        browser.on("Target.targetDestroyed", self._on_destroyed)
        browser.on("Target.targetCrashed", self._on_crashed)
        self._conn.on_session_closed(self._on_session_closed)
        await browser.send("Target.setDiscoverTargets", {"discover": True})
        await browser.send(
            "Target.setAutoAttach",
            {
                "autoAttach": True,
                "waitForDebuggerOnStart": True,
                "flatten": True,
                "filter": _EVERY_TARGET,
            },
        )

    async def wait_attached(self, target_id: str, timeout: float) -> PageTarget | None:
        """The page for `target_id` once it is set up, or None if it did not come in time."""
        if target_id in self.pages:
            return self.pages[target_id]
        event = self._attach_waiters.setdefault(target_id, anyio.Event())
        with anyio.move_on_after(timeout):
            await event.wait()
        return self.pages.get(target_id)

    async def create_page(self, url: str, timeout: float) -> PageTarget | None:
        """Open a new tab at `url`; the page once attached, or None after `timeout`.

        The tab starts blank and is sent to `url` only once its session is set up:
        `WebMCP.enable` replays the main frame's tools but not those of iframes, so a
        page that loaded before the bridge listened would hide its iframes' tools.
        """
        reply = await self._conn.browser.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)
        page = await self.wait_attached(reply["targetId"], timeout)
        if page is not None and url != "about:blank":
            await self.navigate(page, url, timeout)
        return page

    @staticmethod
    async def navigate(page: PageTarget, url: str, timeout: float) -> dict[str, Any]:
        """Start loading `url` in `page` (does not wait for the load)."""
        return await page.session.send("Page.navigate", {"url": url}, timeout=timeout)

    def leave_alone(self, target_id: str) -> None:
        """Sessions someone else attaches to `target_id` (a probe page's) are theirs: not served, not detached.

        Auto-attach's own session of it is still resumed and let go (the target waits for that).
        """
        self._probes.add(target_id)

    def _on_attached(self, parent: CDPSession, params: AttachedToTarget) -> None:
        info = params["targetInfo"]
        session = self._conn.session(params["sessionId"], info["targetId"])
        paused = params.get("waitingForDebugger", False)
        if info["targetId"] in self._probes and not paused:
            return
        if info["type"] not in _SERVED_TYPES or (info["type"] == "page" and parent is not self._conn.browser):
            self._tg.start_soon(self._let_go, parent, session, paused)
            return
        session.on("Target.attachedToTarget", lambda p: self._on_attached(session, cast(AttachedToTarget, p)))
        self._tg.start_soon(self._set_up, parent, session, info, paused)

    async def _let_go(self, parent: CDPSession, session: CDPSession, paused: bool) -> None:
        """Resume a target the bridge does not serve (a worker, a worklet…), then detach from it."""
        await self._release(session, paused)
        try:
            await parent.send("Target.detachFromTarget", {"sessionId": session.session_id})
        except CDPError as exc:
            logger.debug("could not detach from %s: %s", session.target_id, exc)

    async def _set_up(self, parent: CDPSession, session: CDPSession, info: TargetInfo, paused: bool) -> None:
        target_id = info["targetId"]
        if info["type"] == "page":
            page = PageTarget(
                target_id=target_id,
                session=session,
                url=info.get("url", ""),
                title=info.get("title", ""),
                opener_id=info.get("openerId"),
            )
        else:
            owner = next((p for p in self.pages.values() if parent in p.sessions()), None)
            if owner is None:
                await self._release(session, paused)
                return
            page = owner
        resume_written = False
        try:
            await session.send(
                "Target.setAutoAttach",
                {
                    "autoAttach": True,
                    "waitForDebuggerOnStart": True,
                    "flatten": True,
                    "filter": _EVERY_CHILD,
                },
            )
            if paused:
                self._run_once_set_up_is_written(session)
            await self._setup(page, session)
            resume_written = paused and not session.unfollow()  # else it is written below
        except CDPError as exc:
            # The target may close while it is being set up; that is not a failure of the bridge.
            logger.debug("setting up %s failed: %s", target_id, exc)
        except Exception:  # boundary: whatever a page's target does, the bridge keeps serving the others
            logger.exception("setting up %s failed", target_id)
        finally:
            session.unfollow()
            if not resume_written:
                await self._release(session, paused)
        try:
            if session.closed or target_id in self._closed_targets:
                return
            if info["type"] == "page":
                # Title and URL may have changed while the session was being set up.
                latest = self._latest_info.pop(target_id, None)
                if latest is not None:
                    page.url, page.title = latest.get("url", page.url), latest.get("title", page.title)
                self.pages[target_id] = page
                self._observer.page_added(page)
                waiter = self._attach_waiters.pop(target_id, None)
                if waiter is not None:
                    waiter.set()
            else:
                page.frame_sessions[target_id] = session
                self._observer.frame_session_added(page, session)
        finally:
            session.release_events()

    @staticmethod
    def _run_once_set_up_is_written(session: CDPSession) -> None:
        """Let the paused target run as soon as its set-up is written, not once it is answered.

        A page opened without an opener (a `target=_blank` link or form, which imply `noopener`,
        or `window.open(…, "noopener")`) has no renderer until its navigation runs, and
        `waitForDebuggerOnStart` holds that navigation: its page-side commands are answered
        only once it runs, so waiting for their answers before resuming it never ended. The
        browser hands a session's commands to the page in order, before the document they
        were sent for runs a line of script, so writing the resume right after the set-up still
        sets the page up before it runs. Its events wait until the set-up is done and the page
        is published, so what the set-up read (the frame tree) comes before what the page then
        did; but for a paused request (`_ANSWER_AT_ONCE`), which holds the very navigation that
        makes the page's renderer, and so the set-up's answers.
        """
        session.follow_next_write("Runtime.runIfWaitingForDebugger")
        session.hold_events(let_through=_ANSWER_AT_ONCE)

    @staticmethod
    async def _release(session: CDPSession, paused: bool) -> None:
        if not paused:
            return
        try:
            await session.send("Runtime.runIfWaitingForDebugger")
        except CDPError as exc:
            logger.debug("could not resume a target: %s", exc)

    def _on_info_changed(self, params: dict[str, Any]) -> None:
        info = params["targetInfo"]
        page = self.pages.get(info["targetId"])
        if page is None:
            if info.get("type") == "page" and info["targetId"] not in self._closed_targets:
                self._latest_info[info["targetId"]] = info
            return
        if page.url != info.get("url", "") or page.title != info.get("title", ""):
            page.url = info.get("url", "")
            page.title = info.get("title", "")
            self._observer.page_changed(page)

    def _on_crashed(self, params: dict[str, Any]) -> None:
        # The target and its session outlive a renderer crash: `Page.reload` on that same
        # session starts a new renderer (Inspector.targetReloadedAfterCrash) with every
        # domain and script still enabled, and `Target.closeTarget` closes it.
        page = self.pages.get(params["targetId"])
        if page is not None and not page.closed:
            page.crashed = True
            self._observer.page_crashed(page)

    def _on_destroyed(self, params: dict[str, Any]) -> None:
        target_id = params["targetId"]
        self._probes.discard(target_id)
        self._closed_targets[target_id] = None
        if len(self._closed_targets) > CLOSED_KEEP:  # each iframe's and worker's too: bounded over a long run
            del self._closed_targets[next(iter(self._closed_targets))]
        self._latest_info.pop(target_id, None)
        page = self.pages.pop(target_id, None)
        if page is not None and not page.closed:
            page.closed = True
            self._observer.page_removed(page)
        for other in self.pages.values():
            other.frame_sessions.pop(target_id, None)

    def _on_session_closed(self, session: CDPSession) -> None:
        if session.target_id is not None:
            page = self.pages.get(session.target_id)
            if page is not None and page.session is session:
                self._on_destroyed({"targetId": session.target_id})
