"""A tab as a window: its page, tool mirror, dialog and semantic view, and its operations.

A `Tab` turns CDP events of one page into window state: observer pings, navigation and
load events mark it dirty, and a refresher task rebuilds the view at a bounded rate,
raising `version` only when the summary or blocks differ. Its operations (focus,
navigate, back, forward, reload, close, and calling a page tool) are methods here; the
caller holds `op_lock`. What it shows is handed out by `content` (read_content,
screenshot); the notices about its tools come from `notices`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import PageTarget
from webmcp.desktop import calls, navigation
from webmcp.desktop.dialog_guard import DialogGuard
from webmcp.desktop.dialogs import JsDialog
from webmcp.desktop.input_guard import read_inputs
from webmcp.desktop.live_view import BINDING, PageRead, install_observer, read_page
from webmcp.desktop.mirror import Invocation, Outcome, PageTool, ToolMirror
from webmcp.desktop.notices import tool_notices
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.page_limits import MAX_TITLE_BYTES, cap_window_tools
from webmcp.untrusted.schema_guard import BROWSER_ACTIONS, cap_text
from webmcp.view.build import BlockIds, View
from webmcp.view.masking import mask_secrets
from webmcp.view.summary import summarize_tab

if TYPE_CHECKING:
    from webmcp.desktop.registry import Desktop

__all__ = ["TAB_OPERATIONS", "Tab", "install_observer"]

logger = logging.getLogger(__name__)

TAB_OPERATIONS = BROWSER_ACTIONS
"""Names of browser operations on windows: a page tool never takes one of them as its handle."""

_REFRESH_MIN_INTERVAL = 0.05
_FOLD_WINDOW = 0.1
"""How long after a reported change a further one may still be unreported: the observer folds
changes within 15 ms of a report into one at the end (live_view.py), and a busy page runs that
timer late."""
CRASH_NOTICE = "This page crashed (its renderer process died). Use reload to load it again, or close."
NAVIGATION_ANSWER_GRACE = 2.0
"""After a call's tab has loaded another document, how long the call may still answer.

A form tool that submits to another page answers a few hundred ms after the new page
loads (its output read from that page); past this grace the outcome is unknown.
"""


class Tab:
    """One page target, published as the window `window.id`."""

    window_kind = "tab"

    def __init__(self, window_id: str, page: PageTarget, desktop: Desktop) -> None:
        self.page = page
        self.desktop = desktop
        self.timeouts = desktop.timeouts
        self.window = WindowState(id=window_id, title=page.title or page.url or "New tab")
        self.mirror = ToolMirror(set(TAB_OPERATIONS), self._tools_changed)
        self.dialog: JsDialog | None = None
        self.op_lock = anyio.Lock()
        self._snapshot_lock = anyio.Lock()
        self._dirty = anyio.Event()
        self._holds = 0
        self._released = anyio.Event()
        self._doc_seq = 0
        self.ids = BlockIds()
        self.view: View | None = None
        self.last_read: PageRead | None = None
        """The read `view` came from (to read the rest of a long table or list from)."""
        self._page_blocks: list[dict[str, Any]] = []
        self._secret_values: frozenset[str] = frozenset()
        self.loading = True
        self.closed = False
        self.gone = anyio.Event()
        self._main_frame = ""
        self._navigation_done: anyio.Event | None = None
        """Set when the main frame's cross-document navigation under way has shown its page."""
        self.window_opens = 0
        """How many times the page called window.open (or the like); tabs it opens arrive later."""
        self.unsolicited_opens = 0
        """Of those, opened without a user gesture and outside an agent's call, not yet closed."""
        self.popups_closed = 0
        self.faults = 0
        self._has_secret_fields = True  # until a view says otherwise, mask by reading the page
        self.fault_name = ""
        self.dialog_guard = DialogGuard()
        self.renderer_gone = anyio.Event()
        """Set when the page's renderer crashed; replaced by a fresh one when a new document commits."""
        self._end_wakers: set[anyio.Event] = set()
        self._last_report = -float("inf")
        """When the page's observer last reported a change (`anyio.current_time()`)."""
        self._read_began = -float("inf")
        """When the latest view read began."""
        self._listed: tuple[int, list[PageTool], str | None] = (-1, [], None)
        """(mirror revision, the page tools listed within the caps, the notice for those left out)."""
        self._inputs_at_check: tuple[int, int | None] | None = None
        """(request task, the person's input count) when its version check began (desktop/input_guard.py)."""

    @property
    def id(self) -> str:
        return self.window.id

    @property
    def doc_seq(self) -> int:
        """Counts the main frame's documents: it moves on every cross-document navigation."""
        return self._doc_seq

    # --- following the page --------------------------------------------------------

    def watch(self, session: CDPSession) -> None:
        """Follow `session` (the page's own, or an OOPIF's) for tools, changes and navigation."""
        self.mirror.watch(session)
        session.on("Runtime.bindingCalled", lambda p: self.page_reported_change() if p.get("name") == BINDING else None)
        session.on("Page.frameStartedNavigating", lambda p: self._navigation_started(session, p))
        session.on("Page.frameNavigated", lambda p: self._navigated(session, p))
        session.on("Page.navigatedWithinDocument", lambda _p: self.mark_dirty())
        session.on("Page.frameStoppedLoading", lambda p: self._stopped_loading(session, p))
        session.on("Page.frameDetached", lambda p: self.mirror.drop_frames(lambda t: t.frame_id != p["frameId"]))
        session.on("Page.loadEventFired", lambda _p: self._loaded())
        session.on("Page.domContentEventFired", lambda _p: self.mark_dirty())
        session.on("Page.windowOpen", self._window_opened)

    def _window_opened(self, params: dict[str, Any]) -> None:
        self.window_opens += 1
        # As a popup blocker would: no click and no agent call asked for it (docs/security.md).
        if not params.get("userGesture") and not self.mirror.in_flight:
            self.unsolicited_opens += 1

    def _tools_changed(self) -> None:
        self.mark_dirty()
        self.desktop.changed()

    def _loaded(self) -> None:
        self.loading = False
        self.mark_dirty()
        self._navigation_shown()
        self._give_navigated_calls_a_grace()

    def _stopped_loading(self, session: CDPSession, params: dict[str, Any]) -> None:
        # Also the end of a navigation that was aborted (a 204, a download, a blocked URL).
        if session is self.page.session and params.get("frameId") == self._main_frame_id():
            self._navigation_shown()

    def _navigation_shown(self) -> None:
        done, self._navigation_done = self._navigation_done, None
        if done is not None:
            done.set()

    async def navigation_settled(self, budget: float) -> None:
        """Wait, at most `budget` seconds, for a cross-document navigation under way to show its page."""
        done = self._navigation_done
        if done is not None:
            with anyio.move_on_after(budget):
                await done.wait()

    def _navigation_started(self, session: CDPSession, params: dict[str, Any]) -> None:
        same_document = str(params.get("navigationType", "")).startswith(("sameDocument", "historySameDocument"))
        if session is self.page.session and params.get("frameId") == self._main_frame_id() and not same_document:
            self.mirror.document_starting()
            if self._navigation_done is None:
                self._navigation_done = anyio.Event()

    def _main_frame_id(self) -> str:
        # A page target's id is its main frame's id; the commits tell if that ever differs.
        return self._main_frame or self.page.target_id

    def _navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = frame.get("id", "")
        self.mirror.frame_origins[frame_id] = str(frame.get("securityOrigin", ""))
        if session is self.page.session and not frame.get("parentId"):
            self._doc_seq += 1
            self.page.crashed = False  # a reload after a crash commits a new document
            if self.renderer_gone.is_set():
                self.renderer_gone = anyio.Event()
            self._main_frame = frame_id
            restored = params.get("type") == "BackForwardCacheRestore"
            # A restored page fires no load event: it is shown as it was.
            self.loading = not restored
            self.mirror.navigated(str(frame.get("url", "")))
            self.mirror.document_committed(session, restored)
            if restored:
                self._navigation_shown()
                self._give_navigated_calls_a_grace()
        else:
            self.mirror.interrupt_all(
                "The frame that holds the tool navigated while it was running.",
                only=lambda inv: inv.tool.frame_id == frame_id,
            )
            self.mirror.drop_frames(lambda t: t.frame_id != frame_id)
        self.mark_dirty()

    def _give_navigated_calls_a_grace(self) -> None:
        waiting = [i for i in self.mirror.in_flight if i.navigated_to is not None and not i.done.is_set()]
        if waiting:
            self.desktop.spawn(self._end_navigated_calls, waiting, tab=self)

    async def _end_navigated_calls(self, invocations: list[Invocation]) -> None:
        await anyio.sleep(NAVIGATION_ANSWER_GRACE)
        for invocation in invocations:
            invocation.settle(
                Outcome(
                    "Interrupted",
                    error_text=f"The tab moved to {invocation.navigated_to} during the call and the page gave no "
                    "answer; whether the call took effect is unknown: read the window before trying again.",
                )
            )

    def fault(self, exc: BaseException) -> None:
        """The bridge failed while following this page: say so in the window (the details are logged)."""
        self.faults += 1
        self.fault_name = type(exc).__name__
        self.mark_dirty()

    @contextmanager
    def refresher_held(self) -> Iterator[None]:
        """No background rebuild inside the block: the caller reads the page itself at its end.

        A navigation that waits for its page to load would otherwise have the page read
        while it loads and then once more when it has (a big page read twice for one change).
        """
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self._released.set()
                self._released = anyio.Event()

    def mark_dirty(self) -> None:
        """Note that the page may have changed; the refresher rebuilds the view soon."""
        self._dirty.set()

    def page_reported_change(self) -> None:
        """The change observer in one of the page's frames reported a change."""
        self._last_report = anyio.current_time()
        self.mark_dirty()

    def title_changed(self) -> None:
        """The target's title or URL changed."""
        self._retitle()
        self.mark_dirty()

    def document_title(self) -> str:
        """The title of the document shown now; a page without `<title>` is titled by its address."""
        title, url = self.page.title, self.page.url
        view = self.view
        # Only a view of this very document: right after a navigation the last view is the old page's.
        if view is not None and view.title and view.url == url:
            return view.title
        # Chromium gives the address (without "http://" or a bare trailing "/") as the title of a
        # page without <title>, and of one whose <title> it has not reported (yet).
        if title and _bare(title) != _bare(url):
            return title
        return url or "New tab"

    def _retitle(self) -> None:
        # A page's title is its own text: capped (a 200,000-character title stays a title).
        title = cap_text(self.document_title(), MAX_TITLE_BYTES)
        if title != self.window.title:
            self.window.title = title
            self.desktop.changed()

    @contextmanager
    def woken_by_its_end(self, event: anyio.Event) -> Iterator[None]:
        """Within the block, `event` is set too when the tab closes or its renderer crashes."""
        if self.closed or self.renderer_gone.is_set():
            event.set()
        self._end_wakers.add(event)
        try:
            yield
        finally:
            self._end_wakers.discard(event)

    def _wake_on_end(self) -> None:
        for event in list(self._end_wakers):
            event.set()

    def close(self) -> None:
        """The target went away: end the refresher and every call in flight."""
        self.closed = True
        self.gone.set()
        self._wake_on_end()
        self._dirty.set()
        self._released.set()
        what = "crashed" if self.page.crashed else "closed"
        self.mirror.interrupt_all(
            f"The tab {what} while the tool was running; whether the call took effect is unknown."
        )

    def renderer_crashed(self) -> None:
        """The page's renderer died: the tab stays, showing that it crashed, until reloaded or closed."""
        self.renderer_gone.set()
        self._wake_on_end()
        self.mirror.interrupt_all(
            "The tab crashed while the tool was running; whether the call took effect is unknown."
        )
        self.mirror.drop_frames(lambda _t: False)
        self.dialog = None
        self.loading = False
        self.view = self.last_read = None
        self._navigation_shown()
        address = {"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.page.url}]}
        notice = {"type": "notice", "id": "crashed", "severity": "error", "text": CRASH_NOTICE}
        self.window.summary = "This page crashed; reload the tab to load it again, or close it."
        self.window.blocks = [address, notice]
        self.window.version += 1
        self.desktop.changed()

    # --- the view ------------------------------------------------------------------

    async def run_refresher(self) -> None:
        """Rebuild the view whenever the page changed, at most every 50 ms, until the tab closes.

        So a page that mutates without pause costs at most 20 rebuilds a second, and its
        `version` (which moves only when summary or blocks differ) at most 20 bumps a second.
        Each tab has its own refresher: a slow page never delays another tab's view.
        """
        while not self.closed:
            await self._dirty.wait()
            while self._holds and not self.closed:
                await self._released.wait()
            if self.closed:
                return
            started = anyio.current_time()
            try:
                await self.refresh()
            except Exception as exc:  # boundary: a page the bridge cannot read must not stop it following the page
                logger.exception("rebuilding the view of %s failed", self.id)
                self.fault(exc)
            # A huge page's AX tree takes seconds and holds its renderer meanwhile: pausing as
            # long as the build took leaves the page (and its tool calls) at least half the time.
            await anyio.sleep(max(_REFRESH_MIN_INTERVAL, anyio.current_time() - started))

    async def refresh(self) -> bool:
        """Rebuild the view now if anything changed since the last build.

        Returns True when the view reflects the page as it is now, False when the page
        could not be read (busy past the snapshot deadline, or mid-navigation).
        """
        async with self._snapshot_lock:
            if not self._dirty.is_set():
                return True
            self._dirty = anyio.Event()
            self._read_began = anyio.current_time()
            if self.page.crashed:
                return False  # Nothing to read until a reload brings a new renderer.
            try:
                with anyio.fail_after(self.timeouts.snapshot):
                    read = await self._read_unless_crashed()
                if read is None:
                    return False  # The renderer crashed mid-read: its commands would never be answered.
                self.last_read, view, self._secret_values = read, read.view, read.secret_values
            except CDPError as exc:
                # A navigation tore the document down under us; its next event retries.
                logger.debug("snapshot of %s failed: %s", self.id, type(exc).__name__)
                return False
            except anyio.get_cancelled_exc_class():
                # A caller's deadline ended the read: the change it was for is still unread.
                self._dirty.set()
                raise
            except TimeoutError:
                # A huge or hung page: try again later (the refresher's pause bounds the rate).
                logger.debug("snapshot of %s timed out after %s s", self.id, self.timeouts.snapshot)
                if not self.closed:
                    self._dirty.set()
                return False
            self._apply(view)
            self.desktop.sync_modals(self)
        for form in self.desktop.forms_of(self):
            await calls.refresh_form(form)  # the person may have edited the waiting form
        return True

    async def _read_unless_crashed(self) -> PageRead | None:
        """`read_page`, given up (None) the moment the renderer crashes.

        Raises:
            CDPError: the document could not be read.
        """
        gone = self.renderer_gone
        outcome: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:

            async def _read() -> None:
                # Kept and raised below, not from inside the group (it would come out wrapped).
                try:
                    outcome["view"] = await read_page(self.page, self._doc_seq, self.ids)
                except CDPError as exc:
                    outcome["error"] = exc
                tg.cancel_scope.cancel()

            async def _crash() -> None:
                await gone.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(_read)
            tg.start_soon(_crash)
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("view")

    async def catch_up(self, budget: float, since: float | None = None) -> None:
        """Rebuild the view now if the page changed since the last build, within `budget` seconds.

        `since` is when a call that the page has just answered began. The observer reports a
        change at once, but folds further changes of the next 15 ms into one later report,
        which can come after the answer: a rebuild that began before the answer may lack
        them, with nothing yet saying so. So when the page reported a change during the call
        or just before it, the view must come from a read that began after the answer.
        """
        quiet = since is None or self._last_report < since - _FOLD_WINDOW
        if quiet and not self._dirty.is_set() and not self._snapshot_lock.locked():
            return  # The view is current and no rebuild is under way: the common case of a read.
        if self.closed:
            return
        answered = anyio.current_time()
        with anyio.move_on_after(budget):
            # refresh() waits for a rebuild already under way, then rebuilds only if still dirty.
            await self.refresh()
            if not quiet and self._read_began < answered and not self.closed:
                self.mark_dirty()
                await self.refresh()

    async def fresh_version(self) -> int:
        """The window's version, checked against the page as it is now.

        Raises:
            ToolError: `state_unverified` when the page could not be read, so the version
                could not be checked (a write must not pass on an old view).
        """
        # Read before the rebuild: a keystroke during it is then caught by the write guard.
        # Kept for this request only: a version check before a browser action must not arm a later call.
        # Bounded like the view read: a page too busy for either is answered state_unverified.
        limit = min(self.timeouts.command, self.timeouts.snapshot)
        self._inputs_at_check = (anyio.get_current_task().id, await read_inputs(self, limit))
        self.mark_dirty()
        if not await self.refresh():
            raise ToolError(
                "state_unverified",
                f"{self.id} could not be read just now (the page is busy or loading), so expectedVersion "
                "could not be checked against it; nothing was done. Read app://windows and try again.",
                current_version=self.window.version,
            )
        return self.window.version

    def has_secret_fields(self) -> bool:
        """Whether the page showed a secret field (password, card, one-time code) at the last view."""
        return self._has_secret_fields

    def secret_values(self) -> frozenset[str]:
        """Values of the page's secret fields as of the last view (memory only, for masking)."""
        return self._secret_values

    def mask(self, value: Any) -> Any:
        """`value` with every secret input's current value replaced by the mask."""
        return mask_secrets(value, self._secret_values)

    def _apply(self, view: View) -> None:
        self.view = view
        self._retitle()
        summary = summarize_tab(self.window.title, self.page.url, view, len(self.mirror.tools), self.loading)
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
        # Chromium leaves everything behind a showModal() dialog out of the AX tree; the page
        # is still there (inert, under the backdrop), so the tab keeps showing what it showed.
        if not view.modals:
            self._page_blocks = view.blocks
        page_blocks = self._page_blocks if view.modals else view.blocks
        # Like a browser's address bar: the agent always knows where the tab is.
        address = {"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.page.url}]}
        blocked = self.blocked()
        if blocked is not None:
            # Title and address only: the page's content and tools stay with the person at the browser.
            summary = f"This page is not shown to agents: {blocked}"
            page_blocks = [{"type": "notice", "id": "blocked", "severity": "warn", "text": summary}]
        blocks = [address, *self.dialog_guard.notices(self._doc_seq), *tool_notices(self), *page_blocks]
        if summary != self.window.summary or blocks != self.window.blocks:
            self.window.summary = summary
            self.window.blocks = blocks
            self.window.version += 1
            self.desktop.changed()

    # --- operations (the caller holds op_lock) -------------------------------------

    def is_open(self) -> bool:
        return not self.closed

    @property
    def origin(self) -> str:
        """The origin of the page the tab shows (its main frame's)."""
        return self.mirror.origin_of(self._main_frame_id())

    def blocked(self) -> str | None:
        """Why the page the tab shows may not be shown to agents (the origin policy), or None."""
        url = self.page.url
        if not url or url == "about:blank":
            return None
        decision = self.desktop.policy.check(url)
        return None if decision.allowed else decision.reason

    def page_tools(self) -> list[PageTool]:
        """The page's tools the window lists, in handle order, within the per-window caps."""
        if self.blocked() is not None:
            return []
        return self.capped_tools()[0]

    def capped_tools(self) -> tuple[list[PageTool], str | None]:
        """The page's tools within the per-window caps, and the notice text when some were left out."""
        # Every call and every tools/list asks; the caps are worked out once per tool set.
        if self._listed[0] != self.mirror.revision:
            self._listed = (self.mirror.revision, *cap_window_tools(list(self.mirror.tools.values())))
        return list(self._listed[1]), self._listed[2]

    async def call(self, tool: PageTool, arguments: dict[str, Any], deadline: float | None = None) -> ToolResult:
        """Call one of the page's tools (see `calls.call_page_tool`)."""
        checked, self._inputs_at_check = self._inputs_at_check, None
        inputs = checked[1] if checked is not None and checked[0] == anyio.get_current_task().id else None
        return await calls.call_page_tool(self, tool, arguments, deadline, inputs)

    async def focus(self) -> ToolResult:
        """Bring the tab to the front."""
        await self.desktop.browser.send("Target.activateTarget", {"targetId": self.page.target_id})
        await _try_send(self.page.session, "Page.bringToFront", self.timeouts.command)
        return ToolResult(message=f"{self.id} is in front.")

    async def navigate(self, url: str) -> ToolResult:
        """Load `url` and return once it has loaded (or a dialog stops it)."""
        return await navigation.navigate(self, url)

    async def history(self, step: int) -> ToolResult:
        """Go `step` entries back (-1) or forward (+1) in the tab's history."""
        return await navigation.history(self, step)

    async def reload(self) -> ToolResult:
        """Reload the page and return once it has loaded."""
        return await navigation.reload(self)

    async def close_tab(self) -> ToolResult:
        """Close the tab as a user would (beforeunload runs; its dialog is returned)."""
        # Page.close runs the page's beforeunload handler, as a user's close would. Chromium may
        # also answer a close with success yet keep a tab that is mid-navigation: only the
        # target's destruction counts, with Target.closeTarget as the second try.
        await _try_send(self.page.session, "Page.close", self.timeouts.command)
        finished, _ = await self.desktop.unless_dialog(self, self.gone.wait, 2)
        if not finished and (answer := self.dialog_answer(f"{self.id} did not close yet")) is not None:
            return answer
        if not self.gone.is_set():
            await self.desktop.browser.send("Target.closeTarget", {"targetId": self.page.target_id})
            with anyio.move_on_after(self.timeouts.navigation):
                await self.gone.wait()
        if not self.gone.is_set():
            raise ToolError("browser_error", f"{self.id} did not close; the page may be blocking it.")
        return ToolResult(message=f"Closed {self.id}.")

    def dialog_answer(self, what: str) -> ToolResult | None:
        """The answer for an operation that a JavaScript dialog stopped, if one is open."""
        dialog = self.dialog
        if dialog is None:
            return None
        return ToolResult(
            message=f"{what}: the page opened a {dialog.kind} dialog ({dialog.window.id}) and waits for it; "
            "answer it with its accept or dismiss tool.",
            opened_window_ids=[dialog.window.id],
        )


def _bare(address: str) -> str:
    """An address without its scheme and trailing slash, as Chromium shows it in place of a title."""
    return address.split("://", 1)[-1].rstrip("/")


async def _try_send(session: CDPSession, method: str, timeout: float) -> None:
    """Send a command whose failure changes nothing (the target may already be gone)."""
    try:
        await session.send(method, {}, timeout=timeout)
    except CDPError as exc:
        logger.debug("%s failed: %s", method, exc)
