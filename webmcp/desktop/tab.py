"""A tab as a window: one page target, the parts that follow it, and its operations.

A `Tab` owns its window state and is made of parts that each own theirs (parts.py):

    LiveView       the page read into a view, rebuilt when it changed (refresher.py)
    Navigator      the main frame's navigations, and navigate/back/forward/reload (navigation.py)
    ToolMirror     the tools its frames registered through WebMCP (mirror.py)
    ModalStack     its JavaScript dialog, in-page <dialog>s, waiting forms and prompts (modal_stack.py)
    FileChoosers   the file choosers its page opened (file_chooser.py)
    SignInWatch    the sign-in prompts its navigations met (sign_in.py)
    PermissionRequests, DataRequests, TabDownloads, BridgeNotices

The tab keeps them in one list, routes its sessions to them (`watch`), tells them of each
new document, a crash and its end in one loop each, and composes its window from the view
and what they add (`notices`). Every write goes through the one effects path (effects.py),
which `PageCalls` (calls.py) and `WindowActions` (actions.py) are handed with read-only
facts about the tab (`TabFacts`): neither reaches into another part. Nothing outside this
class writes the tab's window: the parts call back, and the desktop reaches the tab only
through its methods. Operations run with `op_lock` held by the caller (the dispatcher).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any

import anyio

from cdp_bridge.batch import SetUp, set_up
from cdp_bridge.connection import CDPSession
from cdp_bridge.reads import document_loaded
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.actions import FieldValue, PersonFocus, WindowActions
from webmcp.desktop.calls import PageCalls
from webmcp.desktop.closing import TabCloser
from webmcp.desktop.dialogs import JsDialog
from webmcp.desktop.downloads import TabDownloads
from webmcp.desktop.effects import DOWNLOAD_WAIT, Act, Effects
from webmcp.desktop.file_chooser import FileChoosers
from webmcp.desktop.input_guard import WriteGuard
from webmcp.desktop.life import TabLife
from webmcp.desktop.live_view import PageRead, frame_origins
from webmcp.desktop.mirror import Invocation, PageTool, ToolMirror
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.navigation import Navigator
from webmcp.desktop.notices import BridgeNotices
from webmcp.desktop.page_requests import DataRequests
from webmcp.desktop.parts import Commit, TabPart
from webmcp.desktop.permissions import PermissionRequests
from webmcp.desktop.ports import DesktopLink
from webmcp.desktop.refresher import LiveView
from webmcp.desktop.secret_values import current_secrets
from webmcp.desktop.sign_in import SignInWatch
from webmcp.desktop.tab_window import TabWindow
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import BROWSER_ACTIONS, cap_text
from webmcp.view.build import View

__all__ = ["TAB_OPERATIONS", "Tab"]

TAB_OPERATIONS = BROWSER_ACTIONS
"""Names of browser operations on windows: a page tool never takes one of them as its handle."""

RECOMPOSE_AFTER = 0.03
"""How soon after its page's tools changed a window shows their notices again (s): once for a burst."""


class Tab:
    """One page target, published as the window `window.id`."""

    window_kind = "tab"

    def __init__(self, window_id: str, page: PageTarget, desktop: DesktopLink) -> None:
        self._page = page
        self._desktop = desktop
        self._timeouts = desktop.timeouts
        self.op_lock = anyio.Lock()
        """Held by whoever operates the window: one operation at a time."""
        self._life = TabLife(page)
        # The parts, each owning its state; `_parts` is the order they are told things in.
        self._mirror = ToolMirror(
            set(TAB_OPERATIONS), self._tools_changed, self.mark_dirty, self.spawn_follower, self._life.ended
        )
        self._view = LiveView(
            page,
            self._timeouts,
            self,
            calling=lambda: [i.done for i in self._mirror.in_flight],
            kept=desktop.kept_reads,
        )
        self._modals = ModalStack(self, desktop)
        self._choosers = FileChoosers(self, desktop)
        requests = DataRequests()
        self._navigator = Navigator(
            window_id, page, self._timeouts, desktop.policy, self._modals, self._view, lambda: self.version, requests
        )
        self._sign_in = SignInWatch(self, desktop, self._modals.open_prompt)
        self._downloads = TabDownloads(desktop.downloads, window_id)
        self._recompose_due = False
        """A recompose of the window after its page's tools changed is on its way (`_tools_changed`)."""
        self._bridge = BridgeNotices(
            window_id,
            self._mirror,
            self._notices_changed,
            opened=lambda: self._effects.page_started(),
        )
        self._parts: list[TabPart] = [
            self._sign_in,
            self._view,
            requests,
            self._choosers,
            self._navigator,
            self._mirror,
            self._modals,
            PermissionRequests(desktop.permissions, self.mark_dirty),
            self._bridge,
            self._downloads,
            PersonFocus(),
        ]
        self._effects = Effects(
            self,
            page,
            guard=WriteGuard(page, self._timeouts, self._life.until_ended),
            modals=self._modals,
            view=self._view,
            navigator=self._navigator,
            downloads=self._downloads,
            modal_ids=lambda: [m for part in self._parts for m in part.modal_ids()],
            desktop=desktop,
        )
        self._calls = PageCalls(self, self._effects, self._mirror, self._modals)
        self._actions = WindowActions(self, self._effects, page, lambda: self._view.last_read, self._view)
        self._closer = TabCloser(window_id, page, self._life, self._modals, desktop)
        self._window = TabWindow(
            window_id,
            page,
            self._life,
            desktop.policy,
            loading=lambda: self._navigator.loading,
            shown=lambda: self._navigator.shown,
            notices=lambda: [block for part in self._parts for block in part.notices()],
            changed=desktop.changed,
        )
        self._window.compose(None)  # a window is never without a summary, even before its first read

    # --- what others read ------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._window.state.id

    @property
    def window(self) -> WindowState:
        """The window as `app://windows` shows it (read it; only `TabWindow` writes it)."""
        return self._window.state

    @property
    def title(self) -> str:
        return self._window.state.title

    @property
    def version(self) -> int:
        return self._window.state.version

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
        return self._life.doc_seq

    @property
    def address(self) -> str:
        """The address of the document the tab shows now."""
        return self._life.address

    @property
    def window_opens(self) -> int:
        return self._bridge.window_opens

    @property
    def origin(self) -> str:
        """The origin of the page the tab shows (its main frame's)."""
        return self._mirror.origin_of(self._navigator.main_frame_id)

    def has_frame(self, frame_id: str) -> bool:
        """Whether `frame_id` is (or lately was) one of the page's frames."""
        return self._mirror.has_frame(frame_id)

    def is_open(self) -> bool:
        return not self._life.closed

    @property
    def agent_may_submit(self) -> bool:
        """False under `--human-submit`: only the person at the browser submits forms."""
        return not self._desktop.human_submit

    def offers_action(self, action: str) -> bool:
        """Whether the window action `action` is listed: always, but under --no-page-actions (and submit
        under --human-submit), and not on a tab that crashed or closed (see `WindowActions.offers`)."""
        if not self._desktop.page_actions or self.blocked() is not None or self.ended() is not None:
            return False
        return self._actions.offers(action)

    def why_not_action(self, action: str) -> str:
        """Why the window action `action` is not offered now, in a sentence."""
        if not self._desktop.page_actions:
            return "Window actions are off here (--no-page-actions)."
        if self.blocked() is not None or self.ended() is not None:
            return f"{self.id} cannot be acted on now ({self.blocked() or self.ended()})."
        return self._actions.why_not(action)

    def sessions(self) -> list[CDPSession]:
        return self._page.sessions()

    def ended(self) -> str | None:
        """ "crashed" or "closed" once the tab can no longer answer, else None."""
        return self._life.ended()

    def woken_by_its_end(self, event: anyio.Event) -> AbstractContextManager[None]:
        """Within the block, `event` is set too when the tab closes or its renderer crashes."""
        return self._life.woken_by_its_end(event)

    async def until_crashed(self) -> None:
        await self._life.until_crashed()

    def write(
        self, check: VersionCheck | None = None, *, answered_dialog: bool = False
    ) -> AbstractAsyncContextManager[Act]:
        return self._effects.write(check, answered_dialog=answered_dialog)

    async def unless_dialog(self, work: Callable[[], Awaitable[Any]], timeout: float) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog opens, or `timeout` passes: (finished, value)."""
        return await self._effects.unless_dialog(work, timeout)

    # --- following the page ------------------------------------------------------------

    async def attach(self, session: CDPSession) -> None:
        """Follow `session` (the page's own, or an OOPIF's): every part watches it, then its set-up is sent.

        Raises:
            CDPError: the session could not be set up (the target went away).
        """
        main = session is self._page.session
        # Every handler is on before the first command goes: the dozen commands are written at
        # once, in the parts' order, and answered together (one after another they took ~70 ms
        # while the browser was starting, most of it waiting).
        steps = [step for part in self._parts for step in part.watch(session, main)]
        on = session.on
        on("Page.frameNavigated", lambda p: self._navigated(session, p))
        if main:
            on("Page.navigatedWithinDocument", self._moved_within)
        *_, tree = await set_up(session, [*steps, SetUp("Page.getFrameTree")])
        self._mirror.frames_show(frame_origins(tree))
        if main and self._page.url in ("", "about:blank"):
            self._navigator.attached(True)  # a blank tab is not loading anything
        elif main:
            # A page that was already loaded when the bridge attached (--cdp-url).
            await self._mirror.recover_child_frames(session)
            # Its load event is past: ask once (after Page.enable, so a load still to come is heard).
            self._navigator.attached(await document_loaded(session, self._timeouts.command))

    def take_unsolicited_popup(self) -> bool:
        """A tab this page opened has come: True (and counted as closed) when nobody asked for it."""
        return self._bridge.take_unsolicited_popup()

    def _tools_changed(self) -> None:
        # The window's tool notices are composed again from the view shown, soon and once for a
        # burst (a page may register 5,000 tools): the page's content did not change with its tools
        # (a form that carries one is reported by the observer). A whole read asked for here, while
        # a big page's first read was under way (its tools register as its script ends), read it
        # whole a second time.
        self._desktop.changed()
        if not self._recompose_due:
            self._recompose_due = True
            self.spawn_follower(self._recompose)

    async def _recompose(self) -> None:
        await anyio.sleep(RECOMPOSE_AFTER)
        self._recompose_due = False
        if self.ended() is None:
            self._window.compose(self._view.view)
            self._desktop.changed()

    def _moved_within(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self._navigator.main_frame_id:
            self._life.moved_within(str(params.get("url", "")))

    def _navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = str(frame.get("id", ""))
        if session is self._page.session and not frame.get("parentId"):
            url = str(frame.get("url", ""))
            restored = params.get("type") == "BackForwardCacheRestore"
            doc = Commit(self._life.committed(url), url, frame_id, session, restored)
            for part in self._parts:
                part.committed(doc)
            # From the commit on, the window shows the new document, as far as it has rendered.
            self._window.compose(None)
        else:
            for part in self._parts:
                part.frame_left(frame_id)
        self.mark_dirty()

    def fault(self, exc: BaseException) -> None:
        """The bridge failed while following this page: say so in the window (the details are logged)."""
        self._bridge.fault(exc)

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
        self._window.retitle(self._view.view)
        self.mark_dirty()

    def expect(self, url: str) -> None:
        """The tab is about to load `url`: until a document commits, the window says it is loading it."""
        self._window.expect(url, self._view.view)

    # --- its end -------------------------------------------------------------------------

    def close(self) -> None:
        """The target went away: end the refresher, every call in flight and every modal window."""
        self._life.close()
        for part in self._parts:
            part.closing()

    def interrupt_calls(self, reason: str) -> None:
        """End every call in flight at once (the browser went away)."""
        self._mirror.interrupt_all(reason)

    def renderer_crashed(self) -> None:
        """The page's renderer died: the tab stays, showing that it crashed, until reloaded or closed."""
        self._life.crashed()
        for part in self._parts:
            part.crashed()
        self._window.crashed()

    # --- the view ------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow the page until the tab closes (the refresher)."""
        await self._view.run()

    def hold_view(self) -> None:
        self._view.hold()

    def release_view(self) -> None:
        self._view.release()

    async def refresh(self) -> bool:
        """Rebuild the view now if anything changed; False when the page could not be read."""
        return await self._view.refresh()

    async def catch_up(self, budget: float, since: float | None = None) -> None:
        await self._view.catch_up(budget, since)

    def is_fresh(self) -> bool:
        """Whether the window shows every change the page made before now (`fresh` need not wait)."""
        return self._view.is_fresh()

    async def fresh(self, budget: float) -> bool:
        """Until the window shows every change the page made before now, within `budget`; whether it does."""
        return await self._view.fresh(budget)

    async def flush(self, limit: float) -> None:
        """Let the reports of the changes the page made before now arrive (`LiveView.flush`), unless a
        JavaScript dialog holds the page (it answers nothing until the dialog is)."""
        if self.dialog is None:
            await self._view.flush(limit)

    async def navigation_settled(self, budget: float) -> None:
        """Wait, at most `budget` seconds, for a cross-document navigation under way to make its page
        usable, or for a dialog it opens (see `Navigator.settled`)."""
        await self._navigator.settled(budget)

    async def check_version(self) -> VersionCheck:
        return await self._effects.check_version()

    def has_secret_fields(self) -> bool:
        return self._view.has_secret_fields()

    def secret_values(self) -> frozenset[str]:
        return self._view.secret_values() | self._sign_in.passwords()

    async def secrets_now(self) -> frozenset[str]:
        """Every secret value the bridge knows, and those this tab's page holds right now (one read)."""
        return self._desktop.known_secrets() | await current_secrets(self, timeout=self._timeouts.command)

    def show(self, view: View) -> None:
        """Compose the window from a new view (LiveView calls this after each read)."""
        self._window.compose(view)
        if self._modals.sync(view.modals if self.blocked() is None else []):
            self._desktop.changed()

    async def after_read(self) -> None:
        for form in self._modals.forms():
            await self._calls.refresh_form(form)  # the person may have edited the waiting form

    # --- tools -------------------------------------------------------------------------

    def blocked(self) -> str | None:
        """Why the page the tab shows may not be shown to agents (the origin policy), or None."""
        return self._window.blocked()

    def page_blocks(self) -> list[dict[str, Any]]:
        """The page's own blocks as the window shows them now (not the address bar, not the bridge's notices)."""
        return self._window.page_blocks()

    def page_tools(self) -> list[PageTool]:
        """The page's tools the window lists: the first in the page's order, within the per-window caps."""
        return self._mirror.listed()[1] if self.blocked() is None else []

    def every_page_tool(self) -> list[PageTool]:
        """All the page's tools, listed or not, in the page's order (none while the page is blocked)."""
        return self._mirror.listed()[0] if self.blocked() is None else []

    def has_downloads(self) -> bool:
        """The tab's page began at least one download."""
        return self._downloads.any()

    def downloads_changed(self) -> None:
        """A download of this tab began, moved on or ended: the window lists it as it is now."""
        self._window.compose(self._view.view)
        self._effects.page_started()

    def _notices_changed(self) -> None:
        self._window.compose(self._view.view)

    async def read_download(self, name: str, max_bytes: int) -> ToolResult:
        """The text of the finished download `name` of this tab, or its type and size."""
        return await self._downloads.read(name, max_bytes)

    def prompt_ids(self) -> list[str]:
        """The window ids of the modal windows open over the tab now (in-page dialogs, prompts, choosers)."""
        return [m for part in self._parts for m in part.modal_ids()]

    # --- operations (the caller holds op_lock); every write goes through self._effects -----

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        return await self._calls.call(tool, arguments, deadline, check)

    async def fill(self, fields: list[FieldValue], check: VersionCheck | None) -> ToolResult:
        return await self._actions.fill(fields, check)

    async def press(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        return await self._actions.press(label, block_id, check)

    async def submit(self, form: str | None, check: VersionCheck | None) -> ToolResult:
        return await self._actions.submit(form, check)

    async def hover(
        self, label: str, block_id: str | None, check: VersionCheck | None, wheel: int | None = None
    ) -> ToolResult:
        return await self._actions.hover(label, block_id, check, wheel)

    async def press_key(
        self, key: str, label: str | None, block_id: str | None, check: VersionCheck | None
    ) -> ToolResult:
        return await self._actions.press_key(key, label, block_id, check)

    async def cancel_call(self, invocation: Invocation, timeout: float, reason: str) -> bool:
        return await self._mirror.cancel(invocation, timeout, reason)

    def stop_dialogs(self) -> None:
        self._modals.stop_dialogs()

    async def focus(self) -> ToolResult:
        """Bring the tab to the front."""
        return await self._closer.focus()

    async def navigate(self, url: str) -> ToolResult:
        """Load `url` and return once it has loaded (or a dialog stops it, or it is a download)."""
        async with self._effects.write(read="none") as act:
            try:
                answer = await self._navigator.navigate(url)
            except ToolError as exc:
                # Chromium aborts the navigation to a file it downloads instead (net::ERR_ABORTED).
                if exc.code != "browser_error" or not await self._downloads.began_since(
                    act.marks.downloads, DOWNLOAD_WAIT
                ):
                    raise
                answer = ToolResult(
                    message=f"{cap_text(url, 300)} is a download, not a page: {self.id} still shows {self.address}."
                )
        return act.answer(answer, where=False)

    async def history(self, step: int) -> ToolResult:
        """Go `step` entries back (-1) or forward (+1) in the tab's history."""
        async with self._effects.write(read="none") as act:
            answer = await self._navigator.history(step)
        return act.answer(answer, where=False)

    async def reload(self) -> ToolResult:
        """Reload the page and return once it has loaded."""
        async with self._effects.write(read="none") as act:
            answer = await self._navigator.reload()
        return act.answer(answer, where=False)

    async def close_tab(self) -> ToolResult:
        """Close the tab as a user would (beforeunload runs; its dialog is returned)."""
        return await self._closer.close_tab()

    async def close_unasked(self, what: str) -> ToolResult:
        """Close the tab without running the page's beforeunload handler (`what`: how it was left)."""
        return await self._closer.close_unasked(what)
