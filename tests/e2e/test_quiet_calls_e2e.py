"""End to end: what a fast page-tool call still guarantees (issue 22 item 2).

A call's answer is masked with the secret values the page holds as it leaves, read in one
round trip once the frames' isolated worlds are known: a value typed by the person just
before the call, one a script set in a frame that appeared since, and one in a document
that replaced the frame's last, are all masked. On a page whose own timer changes the DOM,
a tool's own change is still in `app://windows` when its call returns.

The tools here are registered by the test in the page's main world (as a page script would),
on `/hostile/secrets.html`, whose fields are secret in many shapes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.stage import Stage
from webmcp.view.masking import MASK

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGE = "/hostile/secrets.html"

_TOOLS = """() => {
  const mc = document.modelContext;
  mc.registerTool({
    name: "peek_fields",
    description: "Answers what the session password field and every frame's password hold",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    execute: () => ({
      late: document.getElementById("late").value,
      frames: [...document.querySelectorAll("iframe")].map((f) => f.contentDocument.getElementById("pw").value),
    }),
  });
  let notes = 0;
  mc.registerTool({
    name: "add_note",
    description: "Adds a numbered note to the page",
    inputSchema: { type: "object", properties: {} },
    execute: () => {
      notes += 1;
      const p = document.createElement("p");
      p.textContent = `Agent note number ${notes}`;
      document.body.append(p);
      return { note: notes };
    },
  });
}"""

_TICKER = """() => {
  const p = document.createElement("p");
  document.body.append(p);
  let n = 0;
  setInterval(() => { n += 1; p.textContent = `Tick ${n}`; }, 300);
}"""

_FRAME = """(value) => new Promise((resolve) => {
  const frame = document.createElement("iframe");
  frame.srcdoc = '<label>Frame password <input id="pw" type="password"></label>';
  frame.onload = () => { frame.contentDocument.getElementById("pw").value = value; resolve(); };
  document.body.append(frame);
})"""


def _text(result: Any) -> str:
    return json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(c, "text", "") for c in result.content
    )


async def _open(stage: Stage) -> tuple[str, Any]:
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PAGE})
    assert not result.is_error, result.structured_content
    await stage.wait_windows(lambda d: "harbor-otter" in json.dumps(d))
    page = await stage.user_page(PAGE)
    await page.evaluate(_TOOLS)
    await stage.wait_tools(lambda names: f"{win}__peek_fields" in names and f"{win}__add_note" in names)
    return win, page


async def test_a_secret_the_person_types_just_before_each_call_is_masked_in_its_answer(stage: Stage) -> None:
    win, page = await _open(stage)
    for n in range(4):  # the first call makes the frames' worlds, the next ones reuse them
        typed = f"typed-just-now-{n}-Xq7"
        await page.fill("#late", "")
        await page.type("#late", typed)  # trusted key events, as a person's
        result = await stage.call(f"{win}__peek_fields")
        assert not result.is_error, result.structured_content
        assert result.structured_content["result"]["late"] == MASK
        assert typed not in _text(result)
    assert await page.evaluate("document.getElementById('late').value") == typed


async def test_a_secret_in_a_frame_added_since_the_last_call_is_masked(stage: Stage) -> None:
    win, page = await _open(stage)
    first = await stage.call(f"{win}__peek_fields")
    assert first.structured_content["result"]["frames"] == []
    await page.evaluate(_FRAME, "set-in-a-new-frame-Zr4")
    result = await stage.call(f"{win}__peek_fields")
    assert result.structured_content["result"]["frames"] == [MASK]
    assert "set-in-a-new-frame-Zr4" not in _text(result)


async def test_a_secret_set_in_the_document_that_replaced_the_last_one_is_masked(stage: Stage) -> None:
    win, page = await _open(stage)
    first = await stage.call(f"{win}__echo_form")
    assert not first.is_error and first.structured_content["result"]["late"] == MASK
    reloaded = await stage.call(f"{win}__navigate", {"go": "reload"})  # every world of the last document is gone
    assert not reloaded.is_error, reloaded.structured_content
    await stage.wait_tools(lambda names: f"{win}__echo_form" in names)
    page = await stage.user_page(PAGE)
    answer = await stage.call(f"{win}__echo_form")
    assert not answer.is_error, answer.structured_content
    late: list[str] = await page.evaluate("window.__secrets")
    assert answer.structured_content["result"]["late"] == MASK
    assert [s for s in late if s in _text(answer)] == []


async def test_on_a_page_whose_timer_changes_it_a_tools_own_change_is_read_after_write(stage: Stage) -> None:
    win, page = await _open(stage)
    await page.evaluate(_TICKER)
    await stage.wait_windows(lambda d: "Tick 2" in json.dumps(d))
    for n in range(1, 9):
        quiet = await stage.call(f"{win}__peek_fields")
        assert not quiet.is_error, quiet.structured_content
        added = await stage.call(f"{win}__add_note")
        assert added.structured_content["result"] == {"note": n}
        assert f"Agent note number {n}" in json.dumps(await stage.windows()), "read after write"
