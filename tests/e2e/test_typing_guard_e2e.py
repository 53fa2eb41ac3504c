"""The person's typing is not overwritten by a write checked on an older view."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _draft(window: dict[str, Any]) -> str | None:
    for block in window["blocks"]:
        for item in block.get("items", ()) if block["type"] == "fields" else ():
            if isinstance(item, dict) and item.get("label") == "Draft":
                return str(item.get("value") or "")
    return None


async def test_a_write_on_a_view_older_than_the_persons_typing_is_refused(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/notepad.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{win}__replace_draft" in n)
    page = await stage.user_page("/notepad.html")
    await page.click("#draft")
    await page.keyboard.type("hello")
    doc = await stage.wait_windows(lambda d: any(w["id"] == win and _draft(w) == "hello" for w in d["windows"]))
    seen = next(w for w in doc["windows"] if w["id"] == win)
    await page.keyboard.type(" world")  # after the agent's read
    answer = await stage.call(f"{win}__replace_draft", {"text": "agent", "expectedVersion": seen["version"]})
    assert answer.is_error and answer.structured_content["code"] == "stale_state"
    assert await page.input_value("#draft") == "hello world"


async def test_writes_racing_a_typing_person_never_overwrite_text_they_did_not_see(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/notepad.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{win}__replace_draft" in n)
    page = await stage.user_page("/notepad.html")
    await page.click("#draft")
    typing_done = anyio.Event()
    overwritten: list[tuple[str, str]] = []
    accepted = 0

    async def person() -> None:
        for _ in range(3):
            await page.keyboard.type("abcdefghij", delay=15)
        typing_done.set()

    async def agent() -> None:
        nonlocal accepted
        while not typing_done.is_set():
            window = next(w for w in (await stage.windows())["windows"] if w["id"] == win)
            seen = _draft(window) or ""
            answer = await stage.call(
                f"{win}__replace_draft", {"text": seen + "#", "expectedVersion": window["version"]}
            )
            if not answer.is_error:
                accepted += 1
                before = answer.structured_content["result"]["before"]
                if before != seen:
                    overwritten.append((seen, before))

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(person)
            tg.start_soon(agent)
    assert not overwritten, f"writes overwrote typing they never saw: {overwritten}"


async def test_a_call_without_expected_version_is_not_held_to_an_earlier_check(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/notepad.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    await stage.wait_tools(lambda n: f"{win}__replace_draft" in n)
    window = next(w for w in (await stage.windows())["windows"] if w["id"] == win)
    focused = await stage.call(f"{win}__focus", {"expectedVersion": window["version"]})
    assert not focused.is_error, focused.structured_content
    page = await stage.user_page("/notepad.html")
    await page.click("#draft")
    await page.keyboard.type("typed after the check")
    answer = await stage.call(f"{win}__replace_draft", {"text": "agent"})
    assert not answer.is_error, "a call without expectedVersion is not version-checked"
    assert answer.structured_content["result"]["before"] == "typed after the check"
