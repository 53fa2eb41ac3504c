"""A tab's modal stack: its JavaScript dialog, its open in-page `<dialog>`s and its waiting forms.

Each is a modal window over the top of the tab's chain when it opens (published through
the desktop, `DesktopLink.publish_modal`). The stack is the one place that knows whether a
dialog is open on the tab, so it is also where work is raced against a dialog opening:
`unless_dialog` for any work, `until_answered` for the hot path of a page-tool call. Any
number of waits may be under way at once; each gets its own wake-up.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, Protocol, TypeVar

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from webmcp.desktop.dialog_guard import DialogGuard
from webmcp.desktop.dialogs import InPageModal, JsDialog, a_dialog
from webmcp.desktop.forms import PendingForm
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.parts import Commit, Part
from webmcp.desktop.ports import DesktopLink, ModalOwner
from webmcp.desktop.races import first_of
from webmcp.desktop.windows import WindowState
from webmcp.errors import best_effort
from webmcp.models import ToolResult, notice_block
from webmcp.view.build import Modal

__all__ = ["ModalStack", "PagePrompt"]

logger = logging.getLogger(__name__)


class PagePrompt(Protocol):
    """A prompt of the browser's own that the page waits on (a sign-in), published as a modal window."""

    @property
    def window(self) -> WindowState: ...
    def is_open(self) -> bool: ...
    def closed(self) -> None: ...
    def waits_for(self) -> str:
        """The clause for an answer that this prompt stopped ("… asks for …; answer it with …")."""


P = TypeVar("P", bound=PagePrompt)


class _Wake(Protocol):
    """What a dialog or prompt opening wakes: an event, or a scope it cancels (`ends_on_a_dialog`)."""

    def set(self) -> None: ...


class _Cancels:
    """Cancels `scope` when set, as a waiter of a dialog or prompt opening."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self._scope = scope

    def set(self) -> None:
        self._scope.cancel()


class ModalStack(Part):
    """The modal windows of one tab, and the waits that a dialog opening ends (a part: parts.py)."""

    def __init__(self, owner: ModalOwner, desktop: DesktopLink) -> None:
        self._owner = owner
        self._desktop = desktop
        self._dialog: JsDialog | None = None
        self._waiters: set[_Wake] = set()
        self._guard = DialogGuard()
        self._modals: dict[Any, InPageModal] = {}
        self._forms: list[PendingForm] = []
        self._prompts: list[PagePrompt] = []
        self._prompt_waiters: set[_Wake] = set()
        """Waits that a prompt ends too (not a page-tool call's: its page may go on while a frame asks)."""
        self._doc_seq = 0
        self._closed = False
        """The tab closed: a read that ends after it publishes no `<dialog>` again."""
        self._form_answer: dict[str, Any] | None = None
        """The notice with the page's answer to a form the person submitted (nobody's call was waiting for it)."""

    @property
    def dialog(self) -> JsDialog | None:
        """The JavaScript dialog open on the tab now, if any."""
        return self._dialog

    def modals(self) -> list[InPageModal]:
        """The in-page modal dialogs open now, oldest first."""
        return list(self._modals.values())

    def forms(self) -> list[PendingForm]:
        """The forms waiting to be submitted."""
        return list(self._forms)

    # --- JavaScript dialogs --------------------------------------------------------

    def dialog_opened(self, session: CDPSession, params: dict[str, Any], doc_seq: int) -> None:
        """`Page.javascriptDialogOpening` on the tab's page (or one of its frames' sessions)."""
        if self._guard.stopped(doc_seq):
            # The agent or user stopped this page's dialogs: answer it, publish nothing.
            self._guard.suppressed += 1
            self._desktop.spawn(_answer_stopped_dialog, session, str(params.get("type", "alert")))
            self._owner.mark_dirty()
            return
        repeated = self._guard.opened(doc_seq, anyio.current_time())
        self._dialog = self._desktop.publish_modal(
            self._owner.id, "Dialog", lambda window: JsDialog.opened(window, self._owner, session, params, repeated)
        )
        for waiter in self._waiters:
            waiter.set()

    def dialog_closed(self, session: CDPSession) -> None:
        """`Page.javascriptDialogClosed`: the dialog was answered, here or in the browser."""
        dialog = self._dialog
        if dialog is None or dialog.session is not session:
            return
        self._drop_dialog()
        self._owner.mark_dirty()
        self._desktop.changed()

    def _drop_dialog(self) -> None:
        dialog, self._dialog = self._dialog, None
        if dialog is not None:
            dialog.closed()
            self._desktop.forget(dialog.window.id)

    # --- the tab's lifecycle (parts.py) ------------------------------------------------

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        """The JavaScript dialogs of every frame of `session`."""
        session.on("Page.javascriptDialogOpening", lambda p: self.dialog_opened(session, p, self._doc_seq))
        session.on("Page.javascriptDialogClosed", lambda _p: self.dialog_closed(session))
        return []

    def committed(self, doc: Commit) -> None:
        self._doc_seq = doc.seq

    def crashed(self) -> None:
        self.renderer_crashed()

    def closing(self) -> None:
        self.tab_closed()

    def notices(self) -> list[dict[str, Any]]:
        """The tab's notices: its dialogs are stopped; the answer to a form the person submitted."""
        answer = [self._form_answer] if self._form_answer is not None else []
        return [*self._guard.notices(self._doc_seq), *answer]

    def modal_ids(self) -> list[str]:
        """The in-page `<dialog>`s and the browser's prompts open over the tab, oldest first within each."""
        return [*(m.window.id for m in self._modals.values()), *(p.window.id for p in self.prompts())]

    def stop_dialogs(self) -> None:
        """Answer the further dialogs of the document shown without asking anyone."""
        self._guard.stop(self._doc_seq)

    def dialog_answer(self, what: str) -> ToolResult | None:
        """The answer for an operation that a JavaScript dialog or a prompt stopped, if one is open."""
        dialog = self._dialog
        if dialog is None:
            prompts = self.prompts()
            if not prompts:
                return None
            return ToolResult(message=f"{what}: {prompts[-1].waits_for()}.", opened_window_ids=[prompts[-1].window.id])
        return ToolResult(
            message=f"{what}: the page opened {a_dialog(dialog.kind, dialog.window.id)} and waits for it; answer it "
            "with its accept or dismiss tool.",
            opened_window_ids=[dialog.window.id],
        )

    @contextmanager
    def _woken_by_a_dialog(self, wake: anyio.Event) -> Iterator[None]:
        self._waiters.add(wake)
        try:
            yield
        finally:
            self._waiters.discard(wake)

    @contextmanager
    def ends_on_a_dialog(self) -> Iterator[anyio.CancelScope]:
        """A scope that a JavaScript dialog or a prompt opening on the tab cancels (cancelled at once
        when one is open): `unless_dialog` without its tasks, for what every write runs."""
        with anyio.CancelScope() as scope:
            if self._dialog is not None or self.prompts():
                scope.cancel()
            wake = _Cancels(scope)
            self._waiters.add(wake)
            self._prompt_waiters.add(wake)
            try:
                yield scope
            finally:
                self._waiters.discard(wake)
                self._prompt_waiters.discard(wake)

    async def unless_dialog(
        self, work: Callable[[], Awaitable[Any]], timeout: float, *, prompts: bool = True
    ) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog or a prompt opens on the tab, or `timeout` passes.

        Returns (finished, value). A dialog (beforeunload before a navigation or close, an
        alert during a page's load) or a prompt (a sign-in) stops the wait: the page now waits
        for the agent. Without `prompts`, a prompt does not: for a work that one cannot hold
        (a script already sent, which a sign-in does not block), whose answer is then on its way.

        Raises:
            Exception: what `work` raised.
        """
        if self._dialog is not None or (prompts and self.prompts()):
            # One opened between two phases of an action (say, an alert as the new page loads).
            return False, None
        opened = anyio.Event()
        if prompts:
            self._prompt_waiters.add(opened)
        try:
            with self._woken_by_a_dialog(opened):
                first = await first_of(work, opened.wait, timeout=timeout)
        finally:
            self._prompt_waiters.discard(opened)
        return first.index == 0, first.value

    async def until_answered(self, invocation: Invocation, timeout: float, wake: anyio.Event | None = None) -> None:
        """Wait until `invocation` settles, a JavaScript dialog opens on the tab, or `timeout` passes.

        `unless_dialog` for the hot path of a page-tool call: one event that both the answer
        and a dialog set, where a task for each cost ~0.15 ms of every call. Given `wake` (which
        others may set too), a prompt opening ends the wait as well.
        """
        if self._dialog is not None or invocation.done.is_set():
            return
        prompts = wake is not None
        wake = wake or anyio.Event()
        invocation.wakers.append(wake)
        if prompts:
            self._prompt_waiters.add(wake)
        try:
            with self._woken_by_a_dialog(wake), anyio.move_on_after(timeout):
                await wake.wait()
        finally:
            invocation.wakers.remove(wake)
            self._prompt_waiters.discard(wake)

    # --- in-page modals ------------------------------------------------------------

    def sync(self, found: list[Modal]) -> bool:
        """Publish the `<dialog>`s the latest view found open; True when a window changed."""
        if self._closed:
            return False
        seen = {m.key: m for m in found}
        changed = False
        for key in [k for k in self._modals if k not in seen]:
            self._forget(self._modals.pop(key))
            changed = True
        for key, modal_seen in seen.items():
            known = self._modals.get(key)
            if known is None:
                self._modals[key] = self._desktop.publish_modal(
                    self._owner.id,
                    modal_seen.title or "Dialog",
                    partial(InPageModal.seen, owner=self._owner, seen=modal_seen),
                )
                changed = True
            elif known.update(modal_seen):
                changed = True
        return changed

    def _forget(self, window: InPageModal | PendingForm | JsDialog | PagePrompt) -> None:
        window.closed()
        self._desktop.forget(window.window.id)

    # --- waiting forms -------------------------------------------------------------

    def open_form(self, tool: PageTool, invocation: Invocation) -> PendingForm:
        """Publish a form filled for `invocation` as a modal window over the tab."""
        may_submit = not self._desktop.human_submit
        form = self._desktop.publish_modal(
            self._owner.id, "", lambda window: PendingForm(window, self._owner, tool, invocation, may_submit)
        )
        self._forms.append(form)
        return form

    def close_form(self, form: PendingForm) -> None:
        """The form was submitted or cancelled: its window goes.

        When no agent's submit or cancel waits for the page's answer (the person submitted, as
        `--human-submit` requires), the answer stays on the tab as a notice until the next form's.
        """
        text = form.unclaimed_answer()
        if text is not None:
            self._form_answer = notice_block(
                "form-answer",
                "error" if text.startswith("error") else "success",
                f"The form \u201c{form.tool.name}\u201d (window {form.window.id}) was submitted in the "
                f"page; the call that filled it has finished: {text}",
            )
        if form in self._forms:
            self._forms.remove(form)
            self._forget(form)
            self._owner.mark_dirty()
            self._desktop.changed()

    # --- the browser's prompts -----------------------------------------------------

    def open_prompt(self, make: Callable[[WindowState], P]) -> P:
        """Publish a prompt the page now waits on (made by `make`) as a modal window over the tab."""
        prompt = self._desktop.publish_modal(self._owner.id, "", make)
        self._prompts = [p for p in self._prompts if p.is_open()]
        self._prompts.append(prompt)
        for waiter in self._prompt_waiters:
            waiter.set()
        self._owner.mark_dirty()
        return prompt

    def prompts(self) -> list[PagePrompt]:
        """The prompts open now, oldest first."""
        return [p for p in self._prompts if p.is_open()]

    # --- the tab's end -------------------------------------------------------------

    def renderer_crashed(self) -> None:
        """A crashed renderer takes its dialogs and in-page modals with it (forms end with their call)."""
        self._drop_dialog()
        for modal in self._modals.values():
            self._forget(modal)
        self._modals.clear()
        for prompt in self.prompts():
            self._forget(prompt)
        self._prompts.clear()

    def tab_closed(self) -> None:
        """The tab went away: every modal window of it goes, and none comes after."""
        self._closed = True
        self.renderer_crashed()
        for form in self._forms:
            self._forget(form)
        self._forms.clear()


async def _answer_stopped_dialog(session: CDPSession, kind: str) -> None:
    """Answer a dialog of a page whose dialogs were stopped: dismiss, or Leave for beforeunload."""
    with best_effort(logger, "could not answer a stopped dialog"):
        await session.send("Page.handleJavaScriptDialog", {"accept": kind == "beforeunload"})
