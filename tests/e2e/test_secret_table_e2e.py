"""End to end: secrets both ways, and every exit masked with the values the page holds as it leaves.

`/hostile/secret_table.html` holds 18 secret fields (a password, two fields drawn as dots by
CSS, `api_key`, `token`, `secret`, `gemini_api_key`, …) and 17 plain ones whose names merely
contain a secret word (`passengers`, `passport`, `cardholder`, `card_message`, `compass`, …),
all filled by script (issue 19 item 5). Its tools quote a password set by script after the
last read in a thrown error and in a notice, and a known API key in an alert (issue 18 item 8).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.support.stage import Stage
from webmcp.view.masking import MASK

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGE = "/hostile/secret_table.html"


class Table:
    def __init__(self, secret: list[str], plain: list[str], values: dict[str, str]) -> None:
        self.secret = {i: values[i] for i in secret}
        self.plain = {i: values[i] for i in plain}


async def _open(stage: Stage) -> tuple[str, Any, Table]:
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PAGE})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__alert_known_secret" in names)
    page = await stage.user_page(PAGE)
    table = Table(*await page.evaluate("[window.__secret, window.__plain, window.__values]"))
    assert len(table.secret) >= 15 and len(table.plain) >= 15
    last = next(iter(reversed(table.plain.values())))
    await stage.wait_windows(lambda d: last in json.dumps(d, ensure_ascii=False))
    return win, page, table


def _text(result: Any) -> str:
    return json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(c, "text", "") for c in result.content
    )


async def _windows(stage: Stage, win: str) -> str:
    return json.dumps(await stage.windows(), ensure_ascii=False)


async def _read_content(stage: Stage, win: str) -> str:
    result = await stage.call(f"{win}__read_content")
    assert not result.is_error, result.structured_content
    return _text(result)


async def _tool_result(stage: Stage, win: str) -> str:
    result = await stage.call(f"{win}__echo_fields")
    assert not result.is_error, result.structured_content
    return _text(result)


SURFACES = {"app://windows": _windows, "read_content": _read_content, "page tool result": _tool_result}


@pytest.mark.parametrize("surface", SURFACES)
async def test_secret_fields_are_masked_and_plain_fields_are_shown(stage: Stage, surface: str) -> None:
    win, _page, table = await _open(stage)
    text = await SURFACES[surface](stage, win)
    assert [i for i, v in table.secret.items() if v in text] == []
    assert [i for i, v in table.plain.items() if v not in text] == []


async def test_the_window_marks_exactly_the_secret_fields_sensitive(stage: Stage) -> None:
    win, _page, table = await _open(stage)
    doc = await stage.windows()
    window = next(w for w in doc["windows"] if w["id"] == win)
    items = [i for b in window["blocks"] if b["type"] == "fields" for i in b["items"]]
    sensitive = {i["label"] for i in items if i.get("sensitive")}
    shown = {i["value"] for i in items if not i.get("sensitive")}
    assert set(table.plain.values()) <= shown
    assert {"Passengers", "Passport", "Cardholder", "Card message", "Compass heading"}.isdisjoint(sensitive)
    assert {"Account key", "Key", "Access", "API", "Gemini", "Auth token"} <= sensitive
    assert all(i["value"] == MASK for i in items if i.get("sensitive") and i["value"])


def _focused(element: dict[str, Any]) -> dict[str, Any] | None:
    """The deepest element on the focus path of a `ui://current` tree."""
    for child in element.get("children", ()):
        found = _focused(child)
        if found is not None:
            return found
    return element if "focused" in element.get("states", ()) else None


async def test_ui_current_masks_a_focused_secret_field_and_shows_a_focused_plain_one(stage: Stage) -> None:
    win, page, table = await _open(stage)
    every = {**table.secret, **table.plain}
    for field_id, value in every.items():
        await page.focus(f"#{field_id}")
        with anyio.fail_after(15):
            while True:
                text = (await stage.client.read_resource("ui://current")).contents[0].text
                focused = _focused(json.loads(text)["root"])
                if focused is not None and "value" in focused and focused["role"] != "Document":
                    break
        if field_id in table.secret:
            assert focused["value"] == MASK, field_id
            assert value not in text, field_id
        else:
            assert focused["value"] == value, field_id
        assert [i for i, v in table.secret.items() if v in text] == []


async def test_a_password_set_late_and_quoted_by_a_thrown_error_is_masked(stage: Stage) -> None:
    win, page, table = await _open(stage)
    result = await stage.call(f"{win}__fail_with_late_secret")
    assert result.is_error is True
    body = result.structured_content
    assert body["code"] == "page_error"
    late: list[str] = await page.evaluate("window.__late")
    assert len(late) == 1
    text = _text(result)
    assert late[0] not in text
    assert f"Sign-in refused for password {MASK} (passport {table.plain['passport']})" in body["pageMessage"]
    assert MASK in body["message"]
    # The page still holds it: nothing but the bridge's masking kept it out.
    assert await page.evaluate("document.getElementById('late_pw').value") == late[0]


async def test_a_password_set_late_and_quoted_by_a_notice_is_masked(stage: Stage) -> None:
    win, page, table = await _open(stage)
    result = await stage.call(f"{win}__warn_with_late_secret")
    assert not result.is_error, result.structured_content
    passport = table.plain["passport"]
    doc = await stage.wait_windows(lambda d: f"passport {passport}" in json.dumps(d, ensure_ascii=False))
    late: list[str] = await page.evaluate("window.__late")
    text = json.dumps(doc, ensure_ascii=False)
    assert late[0] not in text
    assert f"Weak password {MASK}; passport {passport}" in text
    assert late[0] not in await _read_content(stage, win)


async def test_a_dialog_that_quotes_a_secret_field_is_masked_in_app_windows(stage: Stage) -> None:
    win, _page, table = await _open(stage)
    result = await stage.call(f"{win}__alert_known_secret")
    assert not result.is_error, result.structured_content
    dialog_id = result.structured_content["openedWindowIds"][0]
    doc = await stage.wait_windows(lambda d: any(w["id"] == dialog_id for w in d["windows"]))
    dialog = json.dumps(next(w for w in doc["windows"] if w["id"] == dialog_id), ensure_ascii=False)
    assert table.secret["s_api"] not in dialog
    assert f"Your key is {MASK}; cardholder {table.plain['cardholder']}" in dialog
    answer = await stage.call(f"{dialog_id}__accept")
    assert not answer.is_error, answer.structured_content
    assert table.secret["s_api"] not in _text(answer)


async def test_a_waiting_form_masks_its_secret_field_and_shows_its_plain_one(stage: Stage) -> None:
    win, _page, _table = await _open(stage)
    key, passport = "AIzaSy-agent-typed-key-42", "X1234567"
    result = await stage.call(f"{win}__register_key", {"gemini_api_key": key, "passport": passport})
    assert not result.is_error, result.structured_content
    form_id = result.structured_content["openedWindowIds"][0]
    doc = await stage.wait_windows(lambda d: any(w["id"] == form_id for w in d["windows"]))
    form = next(w for w in doc["windows"] if w["id"] == form_id)
    items = {i["label"]: i for b in form["blocks"] if b["type"] == "fields" for i in b["items"]}
    assert items["Gemini API key"] == {"label": "Gemini API key", "value": MASK, "sensitive": True}
    assert items["Passport"]["value"] == passport and not items["Passport"].get("sensitive")
    assert key not in json.dumps(doc)
    cancelled = await stage.call(f"{form_id}__cancel")
    assert not cancelled.is_error, cancelled.structured_content
