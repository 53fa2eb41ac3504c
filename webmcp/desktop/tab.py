"""A tab as a window: one page target, the parts that follow it, and its operations.

A `Tab` owns its window state and is made of parts that each own theirs:

    LiveView    the page read into a view, rebuilt when it changed (refresher.py)
    Navigator   the main frame's navigations, and navigate/back/forward/reload (navigation.py)
    ModalStack  its JavaScript dialog, in-page <dialog>s and waiting forms (modal_stack.py)
    WriteGuard  the person's typing, held while a checked write starts (input_guard.py)
    ToolMirror  the tools its frames registered through WebMCP (mirror.py)

The tab routes its sessions' CDP events to them and composes its window from the view
(`show`). Nothing outside this class writes the tab's window: the parts call back, and
the desktop reaches the tab only through its methods. Operations run with `op_lock` held
by the caller (the dispatcher).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

from cdp_bridge.batch import SetUp, set_up
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.reads import document_loaded
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop import calls
from webmcp.desktop.actions import FieldValue, WindowActions
from webmcp.desktop.dialogs import JsDialog
from webmcp.desktop.downloads import Download, download_blocks, read_download, started_note
from webmcp.desktop.file_chooser import FileChoosers
from webmcp.desktop.input_guard import WriteGuard
from webmcp.desktop.live_view import BINDING, OBSERVER_SET_UP, PageRead, frame_origins
from webmcp.desktop.mirror import Invocation, PageTool, ToolMirror
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.navigation import Navigator
from webmcp.desktop.notices import tool_notices
from webmcp.desktop.page_requests import DataRequests
from webmcp.desktop.permissions import PermissionRequests
from webmcp.desktop.ports import DesktopLink
from webmcp.desktop.refresher import LiveView
from webmcp.desktop.secret_values import current_secrets
from webmcp.desktop.sign_in import SignInWatch
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError, from_cdp_error
from webmcp.models import ToolResult
from webmcp.untrusted.page_limits import MAX_TITLE_BYTES, cap_window_tools
from webmcp.untrusted.schema_guard import BROWSER_ACTIONS, cap_text
from webmcp.view.build import View
from webmcp.view.shown import Shown
from webmcp.view.shown import page_blocks as page_blocks_of
from webmcp.view.summary import summarize_tab

__all__ = ["TAB_OPERATIONS", "Tab"]

logger = logging.getLogger(__name__)

TAB_OPERATIONS = BROWSER_ACTIONS
"""Names of browser operations on windows: a page tool never takes one of them as its handle."""

_DOWNLOAD_WAIT = 1.0
"""After a navigation Chromium aborted, how long to wait for the download it may have become."""
CRASH_NOTICE = "This page crashed (its renderer process died). Use reload to load it again, or close."


class Tab:
    """One page target, published as the window `window.id`."""

    window_kind = "tab"

    def __init__(self, window_id: str, page: PageTarget, desktop: DesktopLink) -> None:
        self._page = page
        self._desktop = desktop
        self._timeouts = desktop.timeouts
        self._window = WindowState(id=window_id, title=page.title or page.url or "New tab")
        self.op_lock = anyio.Lock()
        """Held by whoever operates the window: one operation at a time."""
        self._closed = False
        self._gone = anyio.Event()
        self._renderer_gone = anyio.Event()
        """Set when the renderer crashed; replaced by a fresh one when a new document commits."""
        self._end_wakers: set[anyio.Event] = set()
        self._doc_seq = 0
        self._doc_url = ""
        self._expected_url = ""
        """Before its first commit, the address the tab was sent to (start pages)."""
        """The address of the document shown, from its commit (the target's info may lag behind it)."""
        self._page_blocks: list[dict[str, Any]] = []
        self._shown: Shown = {}  # what the window showed of the last view (`page_blocks_of`)
        self._window_opens = 0
        """How many times the page called window.open (or the like); tabs it opens arrive later."""
        self._unsolicited_opens = 0
        """Of those, opened without a user gesture and outside an agent's call, not yet closed."""
        self._popups_closed = 0
        self._faults = 0
        self._fault_name = ""
        self._listed: tuple[int, list[PageTool], list[PageTool], str | None] = (-1, [], [], None)
        self._blocked_for: tuple[tuple[str, object] | None, str | None] = (None, None)
        """The address and policy `blocked` last decided, and its answer."""
        """(mirror revision, every page tool in the page's order, those listed within the caps, the notice)."""
        self._mirror = ToolMirror(set(TAB_OPERATIONS), self._tools_changed, self.mark_dirty)
        self._view = LiveView(
            page,
            self._timeouts,
            self,
            calling=lambda: [i.done for i in self._mirror.in_flight],
            kept=self._desktop.kept_reads,
        )
        self._modals = ModalStack(self, desktop)
        self._choosers = FileChoosers(self, desktop)
        self._requests = DataRequests()
        self._navigator = Navigator(
            window_id,
            page,
            self._timeouts,
            desktop.policy,
            self._modals,
            self._view,
            lambda: self._window.version,
            self._requests,
        )
        self._guard = WriteGuard(page, self._timeouts, self.until_ended)
        self._actions = WindowActions(self)
        self._sign_in = SignInWatch(self, desktop, self._modals.open_prompt)
        self._permissions = PermissionRequests(desktop.permissions)
        self._compose(None)  # a window is never without a summary, even before its first read

    # --- what others read ------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._window.id

    @property
    def window(self) -> WindowState:
        """The window as `app://windows` shows it (read it; only the tab writes it)."""
        return self._window

    @property
    def title(self) -> str:
        return self._window.title

    @property
    def version(self) -> int:
        return self._window.version

    @property
    def page(self) -> PageTarget:
        return self._page

    @property
    def session(self) -> CDPSession:
        return self._page.session

    @property
    def timeouts(self) -> Timeouts:
        return self._timeouts

    @property
    def mirror(self) -> ToolMirror:
        return self._mirror

    @property
    def modals(self) -> ModalStack:
        return self._modals

    @property
    def guard(self) -> WriteGuard:
        return self._guard

    @property
    def dialog(self) -> JsDialog | None:
        """The JavaScript dialog open on the tab now, if any."""
        return self._modals.dialog

    @property
    def view(self) -> View | None:
        return self._view.view

    @property
    def last_read(self) -> PageRead | None:
        return self._view.last_read

    @property
    def loading(self) -> bool:
        return self._navigator.loading

    @property
    def replacing_document(self) -> bool:
        """The main frame began loading another document, which has not committed yet."""
        return self._navigator.replacing

    @property
    def doc_seq(self) -> int:
        """Counts the main frame's documents: it moves on every cross-document navigation."""
        return self._doc_seq

    @property
    def faults(self) -> int:
        return self._faults

    @property
    def fault_name(self) -> str:
        return self._fault_name

    @property
    def popups_closed(self) -> int:
        return self._popups_closed

    @property
    def window_opens(self) -> int:
        return self._window_opens

    @property
    def origin(self) -> str:
        """The origin of the page the tab shows (its main frame's)."""
        return self._mirror.origin_of(self._navigator.main_frame_id)

    def is_open(self) -> bool:
        return not self._closed

    @property
    def agent_may_submit(self) -> bool:
        """False under `--human-submit`: only the person at the browser submits forms."""
        return not self._desktop.human_submit

    def offers_action(self, action: str) -> bool:
        """Whether the window action `action` (fill, press, submit) is offered now: visible means callable."""
        if not self._desktop.page_actions or self.blocked() is not None or self.ended() is not None:
            return False
        return self._actions.offers(action)

    def sessions(self) -> list[CDPSession]:
        return self._page.sessions()

    # --- following the page ------------------------------------------------------------

    async def attach(self, session: CDPSession) -> None:
        """Follow `session` (the page's own, or an OOPIF's): tools, changes, dialogs, navigation.

        Raises:
            CDPError: the session could not be set up (the target went away).
        """
        self._mirror.watch(session)
        on = session.on
        on("Runtime.bindingCalled", lambda p: self._view.reported_change() if p.get("name") == BINDING else None)
        on("Page.frameStartedNavigating", lambda p: self._navigation_started(session, p))
        on("Page.frameNavigated", lambda p: self._navigated(session, p))
        on("Page.navigatedWithinDocument", lambda p: self._moved_within(session, p))
        on("Page.frameStoppedLoading", lambda p: self._stopped_loading(session, p))
        on("Page.frameDetached", lambda p: self._mirror.drop_frames(lambda t: t.frame_id != p["frameId"]))
        on("Page.loadEventFired", lambda _p: self._loaded())
        on("Page.domContentEventFired", lambda _p: self._parsed(session))
        on("Page.windowOpen", self._window_opened)
        on("Page.javascriptDialogOpening", lambda p: self._modals.dialog_opened(session, p, self._doc_seq))
        on("Page.javascriptDialogClosed", lambda _p: self._modals.dialog_closed(session))
        on("Page.frameDetached", lambda p: self._choosers.frame_gone(str(p.get("frameId", ""))))
        # Every handler is on before the first command goes: the dozen commands are written at
        # once, in this order, and answered together (one after another they took ~70 ms while
        # the browser was starting, most of it waiting).
        steps = [
            *self._sign_in.watch(session),
            *self._permissions.watch(session, self.mark_dirty),
            *OBSERVER_SET_UP,
            *(self._watch_data_requests(session) if session is self._page.session else ()),
            *self._choosers.watch(session),
            SetUp("Page.getFrameTree"),
        ]
        *_, tree = await set_up(session, steps)
        self._mirror.frames_show(frame_origins(tree))
        if session is self._page.session and self._page.url in ("", "about:blank"):
            self._navigator.attached(True)  # a blank tab is not loading anything
        elif session is self._page.session:
            # A page that was already loaded when the bridge attached (--cdp-url).
            await self._mirror.recover_child_frames(session)
            # Its load event is past: ask once (after Page.enable, so a load still to come is heard).
            self._navigator.attached(await document_loaded(session, self._timeouts.command))

    def _watch_data_requests(self, session: CDPSession) -> list[SetUp]:
        """Follow the page's fetch and XHR requests, so a navigation waits for its data (page_requests.py)."""
        session.on("Network.requestWillBeSent", self._requests.sent)
        session.on("Network.loadingFinished", self._requests.ended)
        session.on("Network.loadingFailed", self._requests.ended)
        # No response body is kept for the bridge: it never reads one.
        params = {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}
        return [SetUp("Network.enable", params, optional="a navigation will not wait for the page's data requests")]

    def _window_opened(self, params: dict[str, Any]) -> None:
        self._window_opens += 1
        # As a popup blocker would: no click and no agent call asked for it (docs/security.md).
        if not params.get("userGesture") and not self._mirror.in_flight:
            self._unsolicited_opens += 1

    def take_unsolicited_popup(self) -> bool:
        """A tab this page opened has come: True (and counted as closed) when nobody asked for it."""
        if self._unsolicited_opens <= 0:
            return False
        self._unsolicited_opens -= 1
        self._popups_closed += 1
        self.mark_dirty()
        return True

    def _tools_changed(self) -> None:
        self.mark_dirty()
        self._desktop.changed()

    def _loaded(self) -> None:
        self._navigator.loaded()
        self._view.parsed()
        self.mark_dirty()
        self._give_navigated_calls_a_grace()

    def _parsed(self, session: CDPSession) -> None:
        if session is self._page.session:
            self._navigator.parsed()
            self._view.parsed()
        self.mark_dirty()

    def _moved_within(self, session: CDPSession, params: dict[str, Any]) -> None:
        if session is self._page.session and params.get("frameId") == self._navigator.main_frame_id:
            self._doc_url = str(params.get("url", "")) or self._doc_url
        self.mark_dirty()

    def _stopped_loading(self, session: CDPSession, params: dict[str, Any]) -> None:
        if session is self._page.session:
            self._navigator.stopped(str(params.get("frameId", "")))

    def _navigation_started(self, session: CDPSession, params: dict[str, Any]) -> None:
        same_document = str(params.get("navigationType", "")).startswith(("sameDocument", "historySameDocument"))
        main = session is self._page.session and params.get("frameId") == self._navigator.main_frame_id
        if main and not same_document:
            self._mirror.document_starting()
            self._navigator.started()

    def _navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = frame.get("id", "")
        self._mirror.frames_show({frame_id: str(frame.get("securityOrigin", ""))})
        if session is self._page.session and not frame.get("parentId"):
            self._doc_seq += 1
            self._permissions.document_changed(self._doc_seq)
            self._page.crashed = False  # a reload after a crash commits a new document
            if self._renderer_gone.is_set():
                self._renderer_gone = anyio.Event()
            restored = params.get("type") == "BackForwardCacheRestore"
            self._doc_url = str(frame.get("url", ""))
            self._requests.document(self._doc_url)
            self._navigator.committed(frame_id, restored)
            self._choosers.frame_gone(None)  # a chooser ends with its document
            # From the commit on, the window shows the new document, as far as it has rendered.
            self._view.new_document(parsing=not restored)
            self._compose(None)
            self._mirror.navigated(str(frame.get("url", "")))
            self._mirror.document_committed(session, restored)
            if restored:
                self._give_navigated_calls_a_grace()
        else:
            self._mirror.interrupt_all(
                "The frame that holds the tool navigated while it was running.",
                only=lambda inv: inv.tool.frame_id == frame_id,
            )
            self._mirror.drop_frames(lambda t: t.frame_id != frame_id)
            self._choosers.frame_gone(frame_id)
        self.mark_dirty()

    def _give_navigated_calls_a_grace(self) -> None:
        waiting = [i for i in self._mirror.in_flight if i.navigated_to is not None and not i.done.is_set()]
        if waiting:
            self.spawn_follower(calls.end_navigated_calls, waiting)

    def fault(self, exc: BaseException) -> None:
        """The bridge failed while following this page: say so in the window (the details are logged)."""
        self._faults += 1
        self._fault_name = type(exc).__name__
        self.mark_dirty()

    def spawn_follower(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run `func(*args)` past the current request, supervised; a failure is noted on this tab."""
        self._desktop.spawn(func, *args, on_fault=self.fault)

    def changed(self) -> None:
        self._desktop.changed()

    def mark_dirty(self) -> None:
        """Note that the page may have changed; the refresher rebuilds the view soon."""
        self._view.mark_dirty()

    def title_changed(self) -> None:
        """The target's title or URL changed."""
        self._retitle()
        self.mark_dirty()

    def document_title(self) -> str:
        """The title of the document shown now; a page without `<title>` is titled by its address."""
        title, url = self._page.title, self._page.url
        address = self.address
        view = self._view.view
        # Only a view of this very document (the view goes at each commit).
        if view is not None and view.title and view.url == address:
            return view.title
        if _bare(url) != _bare(address):
            return address  # the target's title is still the document's that the tab left
        # Chromium gives the address (without "http://" or a bare trailing "/") as the title of a
        # page without <title>, and of one whose <title> it has not reported (yet).
        if title and _bare(title) != _bare(url):
            return title
        return address or "New tab"

    def expect(self, url: str) -> None:
        """The tab is about to load `url`: until a document commits, the window says it is loading it."""
        self._expected_url = url
        self._compose(self._view.view)

    @property
    def address(self) -> str:
        """The address of the document the tab shows now."""
        return self._doc_url or self._page.url

    def _retitle(self) -> None:
        # A page's title is its own text: capped (a 200,000-character title stays a title).
        title = cap_text(self.document_title(), MAX_TITLE_BYTES)
        if title != self._window.title:
            self._window.title = title
            self._desktop.changed()

    # --- its end -------------------------------------------------------------------------

    def ended(self) -> str | None:
        """ "crashed" or "closed" once the tab can no longer answer, else None."""
        if self._renderer_gone.is_set():
            return "crashed"
        return "closed" if self._closed else None

    @contextmanager
    def woken_by_its_end(self, event: anyio.Event) -> Iterator[None]:
        """Within the block, `event` is set too when the tab closes or its renderer crashes."""
        if self.ended() is not None:
            event.set()
        self._end_wakers.add(event)
        try:
            yield
        finally:
            self._end_wakers.discard(event)

    async def until_ended(self) -> None:
        """Returns once the tab closed or its renderer crashed."""
        ended = anyio.Event()
        with self.woken_by_its_end(ended):
            await ended.wait()

    async def until_crashed(self) -> None:
        await self._renderer_gone.wait()

    def _wake_on_end(self) -> None:
        for event in list(self._end_wakers):
            event.set()

    def close(self) -> None:
        """The target went away: end the refresher, every call in flight and every modal window."""
        self._closed = True
        self._gone.set()
        self._wake_on_end()
        self._view.close()
        self._modals.tab_closed()
        self._sign_in.tab_closed()
        self._choosers.frame_gone(None)
        what = "crashed" if self._page.crashed else "closed"
        self._mirror.interrupt_all(
            f"The tab {what} while the tool was running; whether the call took effect is unknown."
        )

    def interrupt_calls(self, reason: str) -> None:
        """End every call in flight at once (the browser went away)."""
        self._mirror.interrupt_all(reason)

    def renderer_crashed(self) -> None:
        """The page's renderer died: the tab stays, showing that it crashed, until reloaded or closed."""
        self._renderer_gone.set()
        self._wake_on_end()
        self._mirror.interrupt_all(
            "The tab crashed while the tool was running; whether the call took effect is unknown."
        )
        self._mirror.drop_frames(lambda _t: False)
        self._modals.renderer_crashed()
        self._sign_in.tab_closed()
        self._choosers.frame_gone(None)
        self._navigator.crashed()
        self._view.forget()
        address = {"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.address}]}
        notice = {"type": "notice", "id": "crashed", "severity": "error", "text": CRASH_NOTICE}
        self._window.summary = "This page crashed; reload the tab to load it again, or close it."
        self._window.blocks = [address, notice]
        self._window.version += 1
        self._desktop.changed()

    # --- the view ------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow the page until the tab closes (the refresher)."""
        await self._view.run()

    def hold_view(self) -> None:
        """Read nothing in the background until `release_view` (see `LiveView.hold`)."""
        self._view.hold()

    def release_view(self) -> None:
        self._view.release()

    async def refresh(self) -> bool:
        """Rebuild the view now if anything changed; False when the page could not be read."""
        return await self._view.refresh()

    async def catch_up(self, budget: float, since: float | None = None) -> None:
        """Rebuild the view now if the page changed since the last build (see `LiveView.catch_up`)."""
        await self._view.catch_up(budget, since)

    async def navigation_settled(self, budget: float) -> None:
        """Wait, at most `budget` seconds, for a cross-document navigation under way to make its page
        usable, or for a dialog it opens (see `Navigator.settled`)."""
        await self._navigator.settled(budget)

    async def check_version(self) -> VersionCheck:
        """The window's version, checked against the page as it is now, for the one call that asks.

        Raises:
            ToolError: `state_unverified` when the page could not be read, so the version
                could not be checked (a write must not pass on an old view).
        """
        # Read before the rebuild: a keystroke during it is then caught by the write guard.
        # Bounded like the view read, and ended by a crash: a page too busy for either is
        # answered state_unverified, a crashed one at once.
        inputs = await self._guard.count(min(self._timeouts.command, self._timeouts.snapshot))
        self.mark_dirty()
        if not await self._view.refresh():
            raise ToolError(
                "state_unverified",
                f"{self.id} could not be read just now (the page is busy, loading or crashed), so expectedVersion "
                "could not be checked against it; nothing was done. Read app://windows and try again.",
                current_version=self._window.version,
            )
        return VersionCheck(self._window.version, inputs)

    def has_secret_fields(self) -> bool:
        return self._view.has_secret_fields()

    def secret_values(self) -> frozenset[str]:
        return self._view.secret_values() | self._sign_in.passwords()

    def mask(self, value: Any) -> Any:
        return self._view.mask(value)

    async def secrets_now(self) -> frozenset[str]:
        """Every secret value the bridge knows, and those this tab's page holds right now (one read)."""
        return self._desktop.known_secrets() | await current_secrets(self, timeout=self._timeouts.command)

    def show(self, view: View) -> None:
        """Compose the window from a new view (LiveView calls this after each read)."""
        self._compose(view)
        if self._modals.sync(view.modals if self.blocked() is None else []):
            self._desktop.changed()

    def _compose(self, view: View | None) -> None:
        """The window from `view`, the document's latest read (None: nothing of it read yet)."""
        self._retitle()
        # A start page on its way: the blank document shown meanwhile is not what the tab is for.
        expected = self._expected_url if self.address in ("", "about:blank") else ""
        summary = summarize_tab(
            self._window.title, expected or self.address, None if expected else view, self.loading or bool(expected)
        )
        # Chromium leaves everything behind a showModal() dialog out of the AX tree; the page
        # is still there (inert, under the backdrop), so the tab keeps showing what it showed.
        if view is None:
            self._page_blocks = []
        elif not view.modals:
            self._page_blocks = page_blocks_of(view, self._shown)
        page_blocks = self._page_blocks
        # Like a browser's address bar: the agent always knows where the tab is.
        address = {"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.address}]}
        state: list[dict[str, Any]] = []
        blocked = self.blocked()
        if blocked is not None:
            # Title and address only: the page's content and tools stay with the person at the browser.
            summary = f"This page is not shown to agents: {blocked}"
            page_blocks = [{"type": "notice", "id": "blocked", "severity": "warn", "text": summary}]
        elif expected:
            text = f"Loading {cap_text(expected, 300)}: its server has not answered yet."
            state.append({"type": "notice", "id": "loading", "severity": "info", "text": text})
        elif self.loading and self.address not in ("", "about:blank"):
            text = (
                "Still loading: what has rendered is shown, and this window follows the page as it goes on."
                if view is not None
                else "Loading: nothing of this page has been read yet."
            )
            state.append({"type": "notice", "id": "loading", "severity": "info", "text": text})
        notices = [*self._modals.notices(self._doc_seq), *self._permissions.notices(), *tool_notices(self)]
        downloads = self._desktop.downloads
        listed = download_blocks(downloads.of_tab(self.id)) if downloads is not None else []
        blocks = [address, *state, *notices, *listed, *page_blocks]
        if summary != self._window.summary or blocks != self._window.blocks:
            self._window.summary = summary
            self._window.blocks = blocks
            self._window.version += 1
            self._desktop.changed()

    async def after_read(self) -> None:
        for form in self._modals.forms():
            await calls.refresh_form(self, form)  # the person may have edited the waiting form

    # --- tools -------------------------------------------------------------------------

    def blocked(self) -> str | None:
        """Why the page the tab shows may not be shown to agents (the origin policy), or None."""
        url, policy = self.address, self._desktop.policy
        # Asked on every call and every read: decided once per address (and policy, which is pure).
        if (url, policy) != self._blocked_for[0]:
            decision = policy.check(url) if url and url != "about:blank" else None
            self._blocked_for = ((url, policy), None if decision is None or decision.allowed else decision.reason)
        return self._blocked_for[1]

    def page_tools(self) -> list[PageTool]:
        """The page's tools the window lists: the first in the page's order, within the per-window caps."""
        if self.blocked() is not None:
            return []
        return self.capped_tools()[0]

    def every_page_tool(self) -> list[PageTool]:
        """All the page's tools, listed or not, in the page's order (none while the page is blocked)."""
        if self.blocked() is not None:
            return []
        self.capped_tools()
        return list(self._listed[1])

    def capped_tools(self) -> tuple[list[PageTool], str | None]:
        """The page's tools within the per-window caps, and the notice text when some were left out."""
        # Every call and every tools/list asks; the caps are worked out once per tool set.
        if self._listed[0] != self._mirror.revision:
            # The page's order: as registered (WebMCP announces each registration live, in order; on
            # attaching to a loaded page Chromium replays them by name), the main frame's first.
            main = self._navigator.main_frame_id
            ordered = sorted(
                self._mirror.tools.values(),
                key=lambda t: not (t.session is self._page.session and t.frame_id == main),
            )
            self._listed = (self._mirror.revision, ordered, *cap_window_tools(ordered))
        return list(self._listed[2]), self._listed[3]

    def opened_mark(self) -> int:
        return self._desktop.opened_mark()

    def download_mark(self) -> int:
        """A mark to pass to `downloads_since`."""
        return self._desktop.downloads.mark() if self._desktop.downloads is not None else 0

    def downloads_since(self, mark: int) -> list[Download]:
        """The downloads this tab's page began after `mark`."""
        return self._desktop.downloads.since(mark, self.id) if self._desktop.downloads is not None else []

    def has_downloads(self) -> bool:
        """The tab's page began at least one download."""
        return self._desktop.downloads is not None and bool(self._desktop.downloads.of_tab(self.id))

    def downloads_changed(self) -> None:
        """A download of this tab began, moved on or ended: the window lists it as it is now."""
        self._compose(self._view.view)

    async def read_download(self, name: str, max_bytes: int) -> ToolResult:
        """The text of the finished download `name` of this tab, or its type and size."""
        store = self._desktop.downloads
        return await read_download(self.id, store.named(self.id, name) if store is not None else None, name, max_bytes)

    def prompt_ids(self) -> list[str]:
        """The window ids of the browser prompts open over the tab now (sign-in prompts, then file
        choosers), oldest first within each."""
        return [p.window.id for p in self._modals.prompts()] + self._choosers.ids()

    async def opened_since(self, mark: int, expected: int, timeout: float) -> list[str]:
        return await self._desktop.opened_since(self._page.target_id, mark, expected, timeout)

    # --- operations (the caller holds op_lock) -------------------------------------------

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        """Call one of the page's tools (see `calls.call_page_tool`); `check` is this call's own version check."""
        return await calls.call_page_tool(self, tool, arguments, deadline, check)

    async def fill(self, fields: list[FieldValue], check: VersionCheck | None) -> ToolResult:
        """Set visible fields by their labels (see `WindowActions.fill`)."""
        return await self._actions.fill(fields, check)

    async def press(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        """Press a button or link the window shows (see `WindowActions.press`)."""
        return await self._actions.press(label, block_id, check)

    async def submit(self, form: str | None, check: VersionCheck | None) -> ToolResult:
        """Submit a form the window shows (see `WindowActions.submit`)."""
        return await self._actions.submit(form, check)

    async def cancel_call(self, invocation: Invocation, timeout: float, reason: str) -> bool:
        return await self._mirror.cancel(invocation, timeout, reason)

    def stop_dialogs(self) -> None:
        self._modals.stop_dialogs(self._doc_seq)

    async def focus(self) -> ToolResult:
        """Bring the tab to the front."""
        await self._desktop.browser_send("Target.activateTarget", {"targetId": self._page.target_id})
        await _try_send(self._page.session, "Page.bringToFront", self._timeouts.command)
        return ToolResult(message=f"{self.id} is in front.")

    async def navigate(self, url: str) -> ToolResult:
        """Load `url` and return once it has loaded (or a dialog stops it, or it is a download)."""
        store, mark = self._desktop.downloads, self.download_mark()
        try:
            return await self._navigator.navigate(url)
        except ToolError as exc:
            # Chromium aborts the navigation to a file it downloads instead (net::ERR_ABORTED).
            if exc.code != "browser_error" or store is None:
                raise
            started = await store.began_since(mark, self.id, _DOWNLOAD_WAIT)
            if not started:
                raise
            return ToolResult(
                message=f"{cap_text(url, 300)} is a download, not a page: {self.id} still shows {self.address}. "
                f"{started_note(self.id, started)}"
            )

    async def history(self, step: int) -> ToolResult:
        """Go `step` entries back (-1) or forward (+1) in the tab's history."""
        return await self._navigator.history(step)

    async def reload(self) -> ToolResult:
        """Reload the page and return once it has loaded."""
        return await self._navigator.reload()

    async def close_tab(self) -> ToolResult:
        """Close the tab as a user would (beforeunload runs; its dialog is returned)."""
        # Page.close runs the page's beforeunload handler, as a user's close would. Chromium may
        # also answer a close with success yet keep a tab that is mid-navigation: only the
        # target's destruction counts, with Target.closeTarget as the second try.
        await _try_send(self._page.session, "Page.close", self._timeouts.command)
        finished, _ = await self._modals.unless_dialog(self._gone.wait, 2)
        if not finished and (answer := self._modals.dialog_answer(f"{self.id} did not close yet")) is not None:
            return answer
        if not self._gone.is_set():
            await self._desktop.browser_send("Target.closeTarget", {"targetId": self._page.target_id})
            with anyio.move_on_after(self._timeouts.navigation):
                await self._gone.wait()
        if not self._gone.is_set():
            raise ToolError("browser_error", f"{self.id} did not close; the page may be blocking it.")
        return ToolResult(message=f"Closed {self.id}.")

    async def close_unasked(self, what: str) -> ToolResult:
        """Close the tab without running the page's beforeunload handler (`what`: how it was left)."""
        try:
            await self._desktop.browser_send("Target.closeTarget", {"targetId": self._page.target_id})
        except CDPError as exc:
            raise from_cdp_error(exc, f"closing {self.id}", self._timeouts.command) from exc
        with anyio.move_on_after(self._timeouts.navigation):
            await self._gone.wait()
        if not self._gone.is_set():
            raise ToolError("browser_error", f"{self.id} did not close.")
        return ToolResult(message=f"Closed {self.id} {what}; the page's beforeunload handler was skipped.")


def _bare(address: str) -> str:
    """An address without its scheme and trailing slash, as Chromium shows it in place of a title."""
    return address.split("://", 1)[-1].rstrip("/")


async def _try_send(session: CDPSession, method: str, timeout: float) -> None:
    """Send a command whose failure changes nothing (the target may already be gone)."""
    try:
        await session.send(method, {}, timeout=timeout)
    except CDPError as exc:
        logger.debug("%s failed: %s", method, exc)
