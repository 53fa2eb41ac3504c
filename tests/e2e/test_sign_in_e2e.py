"""End to end: an HTTP sign-in (401 Basic) is a modal window, answered once, and its password never shown."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from sample_site.auth import STAFF_PASSWORD, STAFF_REALM, STAFF_USER
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def _prompts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"] and w["title"].startswith("Sign in to ")]


async def _start_tab(stage: Stage) -> str:
    return str((await stage.tab_for("/"))["id"])


def _never_shows_password(*texts: Any) -> None:
    for text in texts:
        dumped = text if isinstance(text, str) else json.dumps(text, default=str)
        assert STAFF_PASSWORD not in dumped


async def test_navigate_to_a_basic_auth_folder_answers_with_the_sign_in_window_that_blocks_the_tab(
    stage: Stage,
) -> None:
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/"})
    assert not opened.is_error, opened.structured_content
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    assert "sign_in or cancel" in opened.structured_content["message"]

    doc = await stage.windows()
    prompt = _window(doc, prompt_id)
    assert prompt is not None and prompt["modal"] and prompt["ownerId"] == win
    assert prompt["title"].startswith("Sign in to 127.0.0.1:")
    assert f"\u201c{STAFF_REALM}\u201d" in json.dumps(prompt["blocks"], ensure_ascii=False), "realm quoted as page text"
    assert "basic" in prompt["summary"]
    assert win not in doc["operableWindowIds"] and prompt_id in doc["operableWindowIds"]
    names = await stage.wait_tools(lambda n: f"{prompt_id}__sign_in" in n)
    assert f"{prompt_id}__cancel" in names and not any(n.startswith(f"{win}__") for n in names)
    blocked = await stage.call(f"{win}__reload")
    assert blocked.structured_content["code"] == "blocked_by_modal"
    assert blocked.structured_content["blockingWindowId"] == prompt_id

    # Wrong password: the server asks again, in a new window that says the last try was refused.
    wrong = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": "not-the-password"})
    assert not wrong.is_error, wrong.structured_content
    (again_id,) = wrong.structured_content["openedWindowIds"]
    assert again_id != prompt_id and "asks again" in wrong.structured_content["message"]
    doc = await stage.windows()
    assert _window(doc, prompt_id) is None
    again = _window(doc, again_id)
    assert again is not None and any(b.get("id") == "refused" for b in again["blocks"])
    gone = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert gone.structured_content["code"] == "window_not_found"

    signed = await stage.call(f"{again_id}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert not signed.is_error, signed.structured_content
    assert "did not ask again" in signed.structured_content["message"]
    assert "/private/" in signed.structured_content["message"]
    doc = await stage.wait_windows(lambda d: not _prompts(d) and "Staff area" in (_window(d, win) or {})["title"])
    assert "Signed in as staff" in json.dumps(_window(doc, win))
    _never_shows_password(opened.structured_content, wrong.structured_content, signed.structured_content, doc)

    # A careless server that prints the password: masked in the window, as the tab's secret.
    echoed = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/echo"})
    assert not echoed.is_error, echoed.structured_content
    doc = await stage.wait_windows(lambda d: "Staff echo" in (_window(d, win) or {})["title"])
    assert "\u2022\u2022\u2022\u2022\u2022\u2022" in json.dumps(_window(doc, win), ensure_ascii=False)
    _never_shows_password(echoed.structured_content, doc)
    current = await stage.client.read_resource("ui://current")
    _never_shows_password(current.contents[0].text)


async def test_cancel_shows_the_servers_refusal_and_a_tool_that_navigates_names_the_prompt(stage: Stage) -> None:
    win = await _start_tab(stage)
    await stage.call(f"{win}__navigate", {"url": stage.site + "/staff.html"})
    await stage.wait_tools(lambda n: f"{win}__open_staff_area" in n)
    called = await stage.call(f"{win}__open_staff_area")
    assert not called.is_error, called.structured_content
    (prompt_id,) = called.structured_content["openedWindowIds"]
    cancelled = await stage.call(f"{prompt_id}__cancel")
    assert not cancelled.is_error, cancelled.structured_content
    assert "Cancelled the sign-in" in cancelled.structured_content["message"]
    doc = await stage.wait_windows(lambda d: "Sign-in required" in (_window(d, win) or {})["title"])
    assert not _prompts(doc) and win in doc["operableWindowIds"]


async def test_a_sign_in_the_person_started_closes_by_itself_when_its_tab_goes(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/staff.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    page = await stage.user_page("/staff.html")
    # The person clicks the link (a script click: Playwright's own waits for the navigation to end).
    await page.evaluate("document.getElementById('staff-link').click()")
    doc = await stage.wait_windows(lambda d: _prompts(d))
    (prompt,) = _prompts(doc)
    assert prompt["ownerId"] == win and win not in doc["operableWindowIds"]
    await page.close()
    doc = await stage.wait_windows(lambda d: not _prompts(d) and _window(d, win) is None)
    late = await stage.call(f"{prompt['id']}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert late.is_error and late.structured_content["code"] == "window_not_found"
    _never_shows_password(late.structured_content)


async def test_two_racing_answers_reach_the_browser_once(stage: Stage) -> None:
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/"})
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    answers: list[Any] = []

    async def answer(name: str, args: dict[str, Any]) -> None:
        answers.append(await stage.call(f"{prompt_id}__{name}", args))

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer, "sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
        tg.start_soon(answer, "cancel", {})
    codes = sorted(a.structured_content.get("code", "ok") for a in answers)
    assert codes == ["ok", "window_not_found"], [a.structured_content for a in answers]
    winner = next(a for a in answers if not a.is_error)
    expected = "Staff area" if "Sent the sign-in" in winner.structured_content["message"] else "Sign-in required"
    await stage.wait_windows(lambda d: expected in (_window(d, win) or {})["title"])


async def test_a_wrongly_typed_password_is_refused_without_quoting_it(stage: Stage) -> None:
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/"})
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    refused = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": [STAFF_PASSWORD]})
    assert refused.is_error and refused.structured_content["code"] == "validation_failed"
    _never_shows_password(refused.structured_content, [c.model_dump() for c in refused.content])
    doc = await stage.windows()
    assert _window(doc, prompt_id) is not None, "a refused call changes nothing"
