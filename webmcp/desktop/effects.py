"""One path for what a write did: the write guard, the marks before, the settling after.

Every write to a tab's page goes through `Effects.write`: a page-tool call, a waiting
form's submit, `fill` / `press` / `submit`, a dialog's `accept` / `dismiss`, `navigate`,
`back` / `forward` / `reload` and `open_tab` (which navigates its new tab). It

1. holds the write guard when the write passed a version check (the person's keystrokes
   are held while it starts; `stale_state` if they typed since the check, nothing done);
2. takes the marks before the write: the time, the document, the tabs and modal windows
   open, the downloads begun;
3. runs the write (the body of the `async with`), and then settles what it started: a
   navigation (until the new page is usable), a JavaScript dialog (which then waits for
   the agent), new tabs, in-page `<dialog>`s, file choosers, sign-in prompts, downloads;
4. catches the view up, so that what the write changed is readable when it answers
   (read after write), and
5. says what happened: `Act.answer` adds the windows it opened (`openedWindowIds`) and
   one note for each effect the answer did not name already.

A write whose body raises settles nothing: the error says what happened. Nothing here
is written twice: a call's follower (a form the person submits later) settles with
`Effects.settle` on marks it took with `Effects.marks`, the same steps.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.dialogs import a_dialog
from webmcp.desktop.downloads import Download, TabDownloads, started_note
from webmcp.desktop.input_guard import WriteGuard
from webmcp.desktop.navigation import Navigator, usable_within
from webmcp.desktop.refresher import FRESH_LIMIT
from webmcp.desktop.windows import VersionCheck
from webmcp.errors import ToolError, best_effort
from webmcp.models import ToolResult

if TYPE_CHECKING:
    from webmcp.desktop.dialogs import JsDialog
    from webmcp.desktop.mirror import Invocation
    from webmcp.desktop.modal_stack import ModalStack, PagePrompt
    from webmcp.desktop.refresher import LiveView

__all__ = ["Act", "Effects", "Marks", "TabFacts"]

logger = logging.getLogger(__name__)

NAV_START_WAIT = 1.0
"""After a write asked for a navigation, how long the browser may take to start it (s)."""
OPENED_WAIT = 2.0
"""How long an answer waits for tabs its page opened to be set up (none come when blocked)."""
DOWNLOAD_WAIT = 1.0
"""After a navigation that did not commit (Chromium turned it into a download), how long to wait for it."""
Read = Literal["changes", "whole", "none"]
"""How a write's settling catches the view up: "changes", what the page's observers reported
during the write (a page tool's own change, or none: the common quiet call costs no read);
"whole", a whole read (the bridge's own script acted in the page: `fill`, `press`, `submit`);
"none", no read (a navigation reads its new page itself once usable, and its answer
names the version it read)."""
_DRAIN = 1.0
"""After a dialog is answered, how long the page may take to finish the script that opened it (s)."""


class TabFacts(Protocol):
    """Read-only facts about a tab, for the writes made on it and the parts that follow them."""

    @property
    def id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def address(self) -> str: ...
    @property
    def loading(self) -> bool:
        """The document shown has not fired its load event."""

    @property
    def doc_seq(self) -> int:
        """Counts the documents the tab's main frame has committed."""

    @property
    def window_opens(self) -> int:
        """How many times the page called window.open (or the like)."""

    @property
    def timeouts(self) -> Timeouts: ...


class _Opened(Protocol):
    def opened_mark(self) -> int: ...
    async def opened_since(self, opener_target_id: str, mark: int, expected: int, timeout: float) -> list[str]: ...


@dataclass(frozen=True)
class Marks:
    """The tab as a write found it, to tell afterwards what the write started."""

    began: float
    doc: int
    opened: int
    """The desktop's mark of tabs opened (`opened_since`)."""
    opens: int
    """The page's count of window.open calls."""
    modals: tuple[str, ...]
    downloads: int
    version: int
    """The tab's window version."""


@dataclass(eq=False)
class Act:
    """One write under way and, once settled, what it started."""

    marks: Marks
    facts: TabFacts
    requested: Callable[[], bool] = lambda: False
    """Whether the page asked for a main-frame navigation since the write began."""
    dialog: JsDialog | None = None
    prompt: PagePrompt | None = None
    """A sign-in the write's navigation waits for (the page it leaves may answer no read until then)."""
    opened: list[str] = field(default_factory=list)
    downloads: list[Download] = field(default_factory=list)
    loading_note: str = ""
    """What the answer says of a page the write left the tab on that has not loaded (`Navigator.loading_note`)."""
    _release: Callable[[], Any] | None = None

    @property
    def moved(self) -> bool:
        """The tab committed another document during the write."""
        return self.facts.doc_seq != self.marks.doc

    def holding(self, release: Callable[[], Any]) -> None:
        """The write guard holds the person's keystrokes until `release_guard` calls `release`."""
        self._release = release

    async def release_guard(self) -> None:
        """End the hold on the person's keystrokes (the write has started); at most once."""
        release, self._release = self._release, None
        if release is not None:
            await release()

    def notes(self, named: frozenset[str] = frozenset(), *, where: bool = True) -> list[str]:
        """A sentence for each effect not in `named` (window ids the answer names already);
        `where`: say where the tab is now (false when the answer says it itself)."""
        facts = self.facts
        notes: list[str] = []
        if self.dialog is not None and self.dialog.window.id not in named:
            notes.append(
                f"The page opened {a_dialog(self.dialog.kind, self.dialog.window.id)} and waits for it; answer it with "
                "its accept or dismiss tool."
            )
        elif self.prompt is not None:
            if self.prompt.window.id not in named:
                notes.append(f"{self.prompt.waits_for()}.")
        elif where and self.dialog is None:
            if self.moved:
                notes.append(f"The tab now shows {facts.address} (version {facts.version}).")
                if self.loading_note:
                    notes.append(self.loading_note)
            else:
                # "still": the window read after the write is the one before it (its version rises with any
                # change of its blocks or summary), so an agent that read that version need not read it again.
                still = "still " if facts.version == self.marks.version else ""
                notes.append(f"{facts.id} is {still}at version {facts.version}.")
        if self.downloads:
            notes.append(started_note(facts.id, self.downloads))
        return notes

    def answer(self, answer: ToolResult, *, where: bool = True) -> ToolResult:
        """`answer` with the windows the write opened and a note for each effect it does not name."""
        named = frozenset(answer.opened_window_ids or ())
        notes = self.notes(named, where=where)
        if notes:
            answer.message = " ".join([answer.message or "", *notes]).strip()
        opened = [w for w in self.opened if w not in named]
        if opened:
            answer.opened_window_ids = [*(answer.opened_window_ids or []), *opened]
        return answer


class Effects:
    """The one path a tab's writes go through (see the module's docstring)."""

    def __init__(
        self,
        facts: TabFacts,
        page: PageTarget,
        *,
        guard: WriteGuard,
        modals: ModalStack,
        view: LiveView,
        navigator: Navigator,
        downloads: TabDownloads,
        modal_ids: Callable[[], list[str]],
        desktop: _Opened,
    ) -> None:
        self._facts = facts
        self._page = page
        self._guard = guard
        self._modals = modals
        self._view = view
        self._navigator = navigator
        self._downloads = downloads
        self._modal_ids = modal_ids
        self._desktop = desktop
        self._starts: set[anyio.Event] = set()
        """Waits that the page beginning a tab or a download ends (`page_started`)."""

    # --- what a write may ask on its way ---------------------------------------------

    @property
    def dialog(self) -> JsDialog | None:
        """The JavaScript dialog open on the tab now, if any."""
        return self._modals.dialog

    async def until_answered(self, invocation: Invocation, timeout: float, *, or_started: bool = False) -> None:
        """Until `invocation` settles, a JavaScript dialog opens, or `timeout` passes (`ModalStack`).

        `or_started`: also until the page opens a prompt, a tab or a download, which a form's submit
        leads to without Chromium ever answering the call (a form to `_blank`, to a page that asks
        for a sign-in, to a file)."""
        if not or_started:
            await self._modals.until_answered(invocation, timeout)
            return
        wake = anyio.Event()
        self._starts.add(wake)
        try:
            await self._modals.until_answered(invocation, timeout, wake)
        finally:
            self._starts.discard(wake)

    def page_started(self) -> None:
        """The page began a tab or a download: the waits for a form's answer look at it."""
        for wake in list(self._starts):
            wake.set()

    def left_the_page(self, marks: Marks) -> bool:
        """Whether, since `marks`, the page opened a tab or a browser prompt, or began a download: where
        a form's submit goes when Chromium never answers its call."""
        return (
            self._facts.window_opens > marks.opens
            or bool(self._downloads.since(marks.downloads))
            or any(p.window.id not in marks.modals for p in self._modals.prompts())
        )

    async def unless_dialog(
        self, work: Callable[[], Awaitable[Any]], timeout: float, *, prompts: bool = True
    ) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog or a browser prompt opens, or `timeout` passes:
        (finished, value). Not finished and no `stopped_by` answer: the time was up. Without
        `prompts`, a prompt (which blocks no script) does not stop it (`ModalStack.unless_dialog`)."""
        return await self._modals.unless_dialog(work, timeout, prompts=prompts)

    def prompt_open(self) -> bool:
        """A browser prompt (a sign-in) waits on the tab now."""
        return bool(self._modals.prompts())

    def stopped_by(self, what: str) -> ToolResult | None:
        """The answer "`what`: the page opened … and waits for it" when a JavaScript dialog or a browser
        prompt (a sign-in) is open on the tab now, naming it in `openedWindowIds`; else None."""
        return self._modals.dialog_answer(what)

    async def catch_up(self, budget: float, since: float | None = None) -> None:
        """Rebuild the view now if the page changed since the last build (see `LiveView.catch_up`)."""
        await self._view.catch_up(budget, since)

    def marks(self) -> Marks:
        """The tab as it is now, for `settle` later."""
        return Marks(
            began=anyio.current_time(),
            doc=self._facts.doc_seq,
            opened=self._desktop.opened_mark(),
            opens=self._facts.window_opens,
            modals=tuple(self._modal_ids()),
            downloads=self._downloads.mark(),
            version=self._facts.version,
        )

    # --- the path ------------------------------------------------------------------

    @asynccontextmanager
    async def write(
        self, check: VersionCheck | None = None, *, answered_dialog: bool = False, read: Read = "changes"
    ) -> AsyncIterator[Act]:
        """Hold the guard (with `check`), take the marks, run the body, settle what it started.

        `answered_dialog`: the body answers a JavaScript dialog, and the script that opened it
        goes on only then (a confirm() before a form goes on): the settling waits for it.
        `read`: how the view is caught up after the write (see `Read`).

        Raises:
            ToolError: stale_state (the person typed since `check`; nothing done), or what
                the body raised (nothing settled).
        """
        watch = _NavWatch(self._page)
        act = Act(self.marks(), self._facts, requested=lambda: watch.requested)
        try:
            try:
                await self._hold(act, check)
                yield act
            finally:
                await act.release_guard()
            if answered_dialog:
                await self._drained()
            await self._settle(act, watch, read)
        finally:
            watch.close()

    async def settle(self, marks: Marks) -> Act:
        """What happened since `marks` (a write whose body ran elsewhere: a form the person submitted)."""
        act = Act(marks, self._facts)
        await self._settle(act, None, "changes")  # the navigation, if any, is under way or done: no watch
        return act

    async def _hold(self, act: Act, check: VersionCheck | None) -> None:
        if check is None or check.inputs is None:
            return
        held = await self._guard.hold(check.inputs)
        if held is False:
            await self._view.catch_up(self._facts.timeouts.snapshot)
            raise ToolError(
                "stale_state",
                "The person typed in the page after the version was checked; nothing was done. "
                "Re-read app://windows before deciding.",
                current_version=self._facts.version,
            )
        if held:
            act.holding(self._guard.release)

    async def check_version(self) -> VersionCheck:
        """The window's version, checked against the page as it is now, for the one call that asks.

        Raises:
            ToolError: `state_unverified` when the page could not be read, so the version
                could not be checked (a write must not pass on an old view).
        """
        # Read before the rebuild: a keystroke during it is then caught by the write guard.
        # Bounded like the view read, and ended by a crash: a page too busy for either is
        # answered state_unverified, a crashed one at once.
        timeouts = self._facts.timeouts
        inputs = await self._guard.count(min(timeouts.command, timeouts.snapshot))
        self._view.mark_dirty()
        if not await self._view.refresh():
            raise ToolError(
                "state_unverified",
                f"{self._facts.id} could not be read just now (the page is busy, loading or crashed), so "
                "expectedVersion could not be checked against it; nothing was done. Read app://windows and try again.",
                current_version=self._facts.version,
            )
        return VersionCheck(self._facts.version, inputs)

    async def typed_since(self, check: VersionCheck | None) -> bool:
        """Whether the person typed since `check` counted their input."""
        return check is not None and check.inputs is not None and await self._guard.typed_since(check.inputs)

    async def _drained(self) -> None:
        """Until the page has run what follows the dialog it showed (one round trip behind it, bounded);
        a dialog the page opens next ends the wait (it answers nothing until that one is answered)."""

        async def round_trip() -> None:
            with best_effort(logger, "the page did not answer after its dialog (it is navigating or gone)"):
                await self._page.session.send("Runtime.evaluate", {"expression": "0"}, timeout=_DRAIN)

        await self._modals.unless_dialog(round_trip, _DRAIN)

    async def _settle(self, act: Act, watch: _NavWatch | None, read: Read) -> None:
        timeouts = self._facts.timeouts
        if self._modals.dialog is None and watch is not None and watch.requested and not watch.started:
            # A sign-in ends the wait too: the browser starts a navigation that asks for one later.
            await self._modals.unless_dialog(partial(watch.until_started, NAV_START_WAIT), NAV_START_WAIT)
        if self._modals.dialog is None:
            await self._navigator.settled(usable_within(timeouts.navigation))
        act.loading_note = self._navigator.loading_note()
        if self._waits_for(act) is None:
            if read == "whole":
                self._view.mark_dirty()
            # A dialog or a sign-in that opens meanwhile ends the read: the page it stops answers no
            # read until it is answered (a sign-in: 10 s, then the read's 15 s bound, in the effects
            # matrix), and the answer names it instead.
            with self._modals.ends_on_a_dialog() as reading:
                await self._read_after(act, read)
            if not reading.cancelled_caught and (opens := self._facts.window_opens - act.marks.opens) > 0:
                target = self._page.target_id
                act.opened.extend(await self._desktop.opened_since(target, act.marks.opened, opens, OPENED_WAIT))
        if (waited := self._waits_for(act)) is not None:
            act.opened.append(waited)
        act.opened.extend(m for m in self._modal_ids() if m not in act.marks.modals and m not in act.opened)
        act.downloads = self._downloads.since(act.marks.downloads)
        if not act.downloads and watch is not None and watch.started and not act.moved and waited is None:
            # A navigation that committed nothing: Chromium may have made it a download.
            act.downloads = await self._downloads.began_since(act.marks.downloads, DOWNLOAD_WAIT)

    def _waits_for(self, act: Act) -> str | None:
        """The window the page now waits on (a JavaScript dialog, a sign-in the write led to), noted in
        `act`; None when there is none."""
        act.dialog = self._modals.dialog
        act.prompt = next((p for p in reversed(self._modals.prompts()) if p.window.id not in act.marks.modals), None)
        waited = act.dialog or act.prompt
        return waited.window.id if waited is not None else None

    async def _read_after(self, act: Act, read: Read) -> None:
        """Catch the view up with what the write changed (`read`), then make it fresh."""
        if read != "none":
            await self._view.catch_up(self._facts.timeouts.snapshot, since=act.marks.began)
        # The answer names the window's version: it holds every change the page made before it.
        await self._view.fresh(FRESH_LIMIT)


class _NavWatch:
    """Whether the page asked for a main-frame navigation (and the browser started it) since it was made."""

    def __init__(self, page: PageTarget) -> None:
        self._main = page.target_id
        self.requested = False
        self.started = False
        self._started = anyio.Event()
        session = page.session
        self._off = [
            session.on("Page.frameRequestedNavigation", self._requested),
            session.on("Page.frameStartedNavigating", self._began),
        ]

    def _requested(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self._main and params.get("disposition", "currentTab") == "currentTab":
            self.requested = True

    def _began(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self._main:
            kind = str(params.get("navigationType", ""))
            if not kind.startswith(("sameDocument", "historySameDocument")):
                self.started = True
                self._started.set()

    async def until_started(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._started.wait()

    def close(self) -> None:
        for off in self._off:
            off()
