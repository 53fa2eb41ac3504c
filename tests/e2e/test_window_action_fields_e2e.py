"""Window actions on the field kinds the Outfitters pages lack: textarea, number, time, rich text.

`/patterns/fields.html` reports what its own `input` listeners saw in an `<output>`, so each
value is checked as the page received it, not as the bridge says it set it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGE = "/patterns/fields.html"


async def _open(stage: Stage) -> str:
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PAGE})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__fill" in names)
    return win


def _seen(doc: dict[str, Any], win: str) -> str:
    """What the page's `<output>` (a status, so a notice block) says its listeners saw."""
    window = next(w for w in doc["windows"] if w["id"] == win)
    return " ".join(str(b.get("text", "")) for b in window["blocks"] if b["type"] == "notice")


async def test_fill_sets_a_textarea_a_number_a_time_and_rich_text_editors_as_the_page_hears_them(
    stage: Stage,
) -> None:
    win = await _open(stage)
    fields = [
        {"label": "Summary", "value": "Printer on deck 3 fixed.\nRouter still flaky."},
        {"label": "Calls taken", "value": 42},
        {"label": "Handover time", "value": "18:30"},
        {"label": "Message to the next shift", "value": "Call Maria back"},
        {"label": "Sign-off", "value": "Kenji"},
    ]
    result = await stage.call(f"{win}__fill", {"fields": fields})
    assert not result.is_error, result.structured_content
    doc = await stage.wait_windows(lambda d: "plain=Kenji" in _seen(d, win))
    seen = _seen(doc, win)
    for part in ("calls=42", "handover=18:30", "editor=Call Maria back", "plain=Kenji", "Router still flaky"):
        assert part in seen, seen


async def test_fill_refuses_a_time_that_is_not_iso_and_changes_nothing(stage: Stage) -> None:
    win = await _open(stage)
    result = await stage.call(
        f"{win}__fill",
        {"fields": [{"label": "Calls taken", "value": 7}, {"label": "Handover time", "value": "half past six"}]},
    )
    assert result.is_error
    error = result.structured_content
    assert error["code"] == "validation_failed", error
    assert "Handover time" in str(error) or "fields[1]" in str(error), error
    # Checked before anything was set: the number was not entered either.
    assert "calls=" not in _seen(await stage.windows(), win)
