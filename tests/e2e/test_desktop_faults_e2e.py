"""Faults the window model must make impossible, driven through the real stack.

A client that gives up while a waiting form's window is being shown must not leave that
window blocking its tab; a version check refused for one call must not guard a later one;
a renderer that crashes during a version check ends that check (and what queues behind
it) at once, not at the command timeout.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest
from playwright.async_api import Error as PlaywrightError

from tests.e2e.test_real_sites_e2e import BOOKING, _go, _kitchen_tab, kitchen  # noqa: F401 - the fixture
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

_BUSY_MS = 3000
"""How long the booking page keeps its main thread busy once filled: the bridge's read of the
filled form (and so the publishing of the form's window) cannot end before it does."""


def _form_windows(doc: dict[str, Any], win: str) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"] and w["ownerId"] == win]


async def test_a_client_that_gives_up_while_the_form_window_opens_leaves_no_window_behind(kitchen: Stage) -> None:  # noqa: F811
    win = await _kitchen_tab(kitchen)
    await _go(kitchen, win, f"/kitchen/book.html?busy_on_fill={_BUSY_MS}", "book_table")
    answered: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            answered.append(await kitchen.call(f"{win}__book_table", BOOKING))

        tg.start_soon(call)
        # The form's window is published; the bridge is still reading the filled form from the busy page.
        await kitchen.wait_windows(lambda d: _form_windows(d, win))
        tg.cancel_scope.cancel()  # the client abandons the request: notifications/cancelled
    assert answered == [], "the call must still have been under way when the client gave up"
    # Nobody learned of the form: the call is cancelled in the page and its window goes.
    doc = await kitchen.wait_windows(lambda d: not _form_windows(d, win) and win in d["operableWindowIds"])
    assert f"{win}__book_table" in await kitchen.tool_names()
    assert not any(w["id"] != win and w["modal"] for w in doc["windows"])


async def test_a_refused_version_check_never_guards_a_later_call(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/notepad.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{win}__replace_draft" in n)
    page = await stage.user_page("/notepad.html")
    await page.click("#draft")
    # Many rounds: the old task-keyed slot matched a later request only when Python reused a task id.
    for n in range(40):
        window = next(w for w in (await stage.windows())["windows"] if w["id"] == win)
        refused = await stage.call(f"{win}__replace_draft", {"text": "stale", "expectedVersion": window["version"] - 1})
        assert refused.is_error and refused.structured_content["code"] == "stale_state"
        await page.keyboard.type(f" {n}")  # the person types after that refused check
        answer = await stage.call(f"{win}__replace_draft", {"text": f"agent {n}"})
        assert not answer.is_error, (n, answer.structured_content)
        await page.click("#draft")


async def test_a_crash_during_a_version_check_ends_it_and_the_calls_queued_behind_it_at_once(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
    page = await stage.user_page("/")
    session = await page.context.new_cdp_session(page)
    window = next(w for w in (await stage.windows())["windows"] if w["id"] == win)
    # The page's main thread goes busy for longer than the bridge's command timeout (10 s), so the
    # write guard's read of it cannot be answered before the crash.
    await page.evaluate("setTimeout(() => { const until = Date.now() + 12000; while (Date.now() < until); }, 0)")
    answers: dict[str, Any] = {}
    both = anyio.Event()

    async def call(name: str, args: dict[str, Any]) -> None:
        answers[args.get("go", name)] = await stage.call(f"{win}__{name}", args)
        if len(answers) == 2:
            both.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "list_tickets", {"expectedVersion": window["version"]})
        # A busy page cannot say when the check reached it; the call's way there takes milliseconds.
        await anyio.sleep(0.5)
        tg.start_soon(call, "navigate", {"go": "reload"})  # queued behind the check on the tab's lock
        await anyio.sleep(0.2)
        # The renderer dies before it can answer: bounded, and its "Target crashed" refusal is the crash too.
        with anyio.move_on_after(3), contextlib.suppress(PlaywrightError):
            await session.send("Page.crash")
        # Well inside the 10 s command timeout the old guard waited out.
        with anyio.fail_after(5):
            await both.wait()
    checked = answers["list_tickets"]
    assert checked.is_error and checked.structured_content["code"] in ("state_unverified", "call_interrupted")
    reloaded = answers["reload"]
    assert not reloaded.is_error, reloaded.structured_content
    await stage.wait_tools(lambda n: f"{win}__list_tickets" in n)
