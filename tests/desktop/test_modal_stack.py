"""The modal stack: every wait a dialog should end is ended by it, however many run at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import anyio
import anyio.lowlevel
import pytest

from cdp_bridge.connection import CDPSession
from webmcp.desktop.modal_stack import ModalStack
from webmcp.desktop.ports import DesktopLink, ModalOwner
from webmcp.desktop.windows import WindowState

pytestmark = pytest.mark.anyio

W = TypeVar("W")


class FakeOwner:
    id = "tab-1"
    title = "Harbor Help Desk"

    def __init__(self) -> None:
        self.dirty = 0

    def mark_dirty(self) -> None:
        self.dirty += 1


class FakeDesktop:
    """Publishes modal windows in a list (`ports.DesktopLink`, the parts the stack uses)."""

    human_submit = False

    def __init__(self) -> None:
        self.published: list[str] = []
        self.changes = 0

    def publish_modal(self, tab_id: str, title: str, make: Callable[[WindowState], W]) -> W:
        window = make(WindowState(id=f"dlg-{len(self.published) + 1}", title=title, modal=True, owner_id=tab_id))
        self.published.append(window.window.id)  # type: ignore[attr-defined]
        self.changed()
        return window

    def forget(self, window_id: str) -> None:
        self.published.remove(window_id)

    def changed(self) -> None:
        self.changes += 1


def _stack() -> tuple[ModalStack, FakeDesktop, CDPSession]:
    desktop = FakeDesktop()
    stack = ModalStack(cast(ModalOwner, FakeOwner()), cast(DesktopLink, desktop))
    return stack, desktop, cast(CDPSession, object())


async def test_a_dialog_ends_every_wait_under_way_not_only_the_latest() -> None:
    stack, desktop, session = _stack()
    never = anyio.Event()
    ended: list[tuple[str, bool]] = []

    async def wait(name: str) -> None:
        finished, _ = await stack.unless_dialog(never.wait, timeout=10)
        ended.append((name, finished))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait, "navigate")
            tg.start_soon(wait, "close")
            await anyio.wait_all_tasks_blocked()
            stack.dialog_opened(session, {"type": "alert", "message": "Saved"}, doc_seq=1)
    assert sorted(ended) == [("close", False), ("navigate", False)], "a second wait must not replace the first"
    assert stack.dialog is not None and desktop.published == [stack.dialog.window.id]
    assert stack.dialog.window.title == "Alert \u2014 Harbor Help Desk"


async def test_work_that_ends_first_is_returned_and_a_dialog_that_closes_is_forgotten() -> None:
    stack, desktop, session = _stack()

    async def work() -> Any:
        return "loaded"

    assert await stack.unless_dialog(work, timeout=5) == (True, "loaded")
    stack.dialog_opened(session, {"type": "confirm", "message": "Leave?"}, doc_seq=1)
    dialog = stack.dialog
    assert dialog is not None and dialog.is_open()
    assert await stack.unless_dialog(work, timeout=5) == (False, None), "a dialog already open stops the work"
    stack.dialog_closed(session)
    assert stack.dialog is None and not dialog.is_open() and desktop.published == []


async def test_a_read_under_way_ends_when_a_dialog_opens_and_none_begins_under_one() -> None:
    # Every write's answer reads the page; one that a dialog (or a sign-in) stops answers nothing
    # until it is answered, so the read ends when one opens, without a task of its own.
    stack, _desktop, session = _stack()
    never = anyio.Event()
    read: list[bool] = []

    async def answer_read() -> None:
        with stack.ends_on_a_dialog() as reading:
            await never.wait()
        read.append(reading.cancelled_caught)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_read)
            await anyio.wait_all_tasks_blocked()
            assert read == [], "nothing ends the read before the dialog"
            stack.dialog_opened(session, {"type": "alert", "message": "Saved"}, doc_seq=1)
    assert read == [True]
    with anyio.fail_after(5), stack.ends_on_a_dialog() as reading:
        await never.wait()  # a dialog already open: the read never begins
    assert reading.cancelled_caught
    stack.dialog_closed(session)
    with stack.ends_on_a_dialog() as reading:
        await anyio.lowlevel.checkpoint()
    assert not reading.cancelled_caught, "a read with no dialog ends as it ends"


class _FakePrompt:
    """A sign-in prompt as `PagePrompt` (open until closed)."""

    def __init__(self, window: WindowState) -> None:
        self.window = window
        self._open = True

    def is_open(self) -> bool:
        return self._open

    def closed(self) -> None:
        self._open = False

    def waits_for(self) -> str:
        return "127.0.0.1 asks for a sign-in"


async def test_a_prompt_stops_a_work_unless_the_work_is_one_a_prompt_cannot_hold() -> None:
    # A fill's script already sent is not blocked by a sign-in its change handler led to: its answer
    # is on the way, and was lost when the prompt's event came first (CI, the effects matrix's
    # fill-sign_in). A JavaScript dialog still stops such a work.
    stack, _desktop, session = _stack()
    answer = anyio.Event()

    async def script() -> str:
        await answer.wait()
        return "filled"

    async def run(prompts: bool) -> tuple[bool, Any]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_prompt_then_answer, stack, answer)
            return await stack.unless_dialog(script, timeout=5, prompts=prompts)

    with anyio.fail_after(5):
        assert await run(prompts=True) == (False, None), "a prompt stops a work it may hold"
        answer = anyio.Event()
        for prompt in stack.prompts():
            prompt.closed()
        assert await run(prompts=False) == (True, "filled"), "the script's answer after the prompt is kept"
        assert stack.prompts(), "the prompt is open: the tab waits on it"
        answer = anyio.Event()
        never = anyio.Event()

        async def alert_then_nothing() -> None:
            await anyio.wait_all_tasks_blocked()
            stack.dialog_opened(session, {"type": "alert", "message": "Saved"}, doc_seq=1)

        async with anyio.create_task_group() as tg:
            tg.start_soon(alert_then_nothing)
            assert await stack.unless_dialog(never.wait, timeout=5, prompts=False) == (False, None)


async def _prompt_then_answer(stack: ModalStack, answer: anyio.Event) -> None:
    await anyio.wait_all_tasks_blocked()
    stack.open_prompt(_FakePrompt)
    await anyio.wait_all_tasks_blocked()
    answer.set()
