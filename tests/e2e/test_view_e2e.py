"""End to end: the semantic view of sample-site pages, read through a real MCP client.

Playwright acts as the user (typing secrets, changing the page); the agent side only sees
`app://windows` and tool results. No sleeps: every wait is on a notification or on the
page, bounded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.stage import WAIT, Stage, text_spans

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SECRETS = {"password": "Tr0ub4dor&3-secret", "card": "5555444433331111", "otp": "918273"}
_ECHO_TOOL = """() => document.modelContext.registerTool({
  name: "echo_form", description: "Echo the sign-in form", inputSchema: {type: "object", properties: {}},
  execute: async () => ({card: document.getElementById("card").value,
                         note: "typed " + document.getElementById("password").value}),
})"""


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


async def _open(stage: Stage, path: str) -> str:
    """Navigate the first tab to `path`; its window id once the page's view is built."""
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not result.is_error, result.structured_content
    return win


def _blocks_text(window: dict[str, Any]) -> str:
    return json.dumps(window["blocks"], ensure_ascii=False)


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_typed_secrets_never_leave_the_bridge(stage: Stage) -> None:
    win = await _open(stage, "/login.html")
    page = await stage.user_page("/login.html")
    await page.fill("#username", "sam.okafor")
    for selector, value in SECRETS.items():
        await page.fill(f"#{selector}", value)
    await page.evaluate(_ECHO_TOOL)

    def masked(doc: dict[str, Any]) -> bool:
        fields = [i for b in _window(doc, win)["blocks"] if b["type"] == "fields" for i in b["items"]]
        by_label = {i["label"]: i for i in fields}
        return by_label.get("Username", {}).get("value") == "sam.okafor" and all(
            by_label.get(label, {}).get("value") == "\u2022" * 6 and by_label[label].get("sensitive")
            for label in ("Password", "Card number", "One-time code")
        )

    doc = await stage.wait_windows(masked)
    await stage.wait_tools(lambda names: f"{win}__echo_form" in names)
    read = await stage.call(f"{win}__read_content")
    echo = await stage.call(f"{win}__echo_form")
    assert not echo.is_error, echo.structured_content
    assert echo.structured_content["result"]["card"] == "\u2022" * 6
    for text in (
        json.dumps(doc, ensure_ascii=False),
        json.dumps(read.structured_content, ensure_ascii=False),
        json.dumps(echo.structured_content, ensure_ascii=False),
        echo.content[0].text,
    ):
        for secret in SECRETS.values():
            assert secret not in text


@pytest.mark.parametrize("mode", ["auto"])
async def test_big_table_fits_the_budget_and_reads_in_pages(stage: Stage) -> None:
    win = await _open(stage, "/big.html?rows=3000")

    def table_of(doc: dict[str, Any]) -> dict[str, Any] | None:
        return next((b for b in _window(doc, win)["blocks"] if b["type"] == "table" and b.get("total") == 3000), None)

    doc = await stage.wait_windows(table_of)
    state = json.dumps(_window(doc, win), ensure_ascii=False, separators=(",", ":"))
    assert len(state.encode()) <= 16 * 1024
    table = table_of(doc)
    assert table is not None and table["offset"] == 0 and len(table["rows"]) == 20
    notice = _window(doc, win)["blocks"][-1]
    assert notice["type"] == "notice" and table["id"] in notice["text"]
    rows: list[Any] = []
    while len(rows) < 3000:
        part = await stage.call(f"{win}__read_content", {"blockId": table["id"], "offset": len(rows), "limit": 1000})
        assert not part.is_error and part.structured_content["result"]["total"] == 3000
        rows.extend(part.structured_content["result"]["rows"])
    assert len(rows) == 3000 and rows[:20] == table["rows"] and rows[-1][0] == "13000"
    # Read in part and the rest on demand: every row once, in order, cells complete.
    assert [r[0] for r in rows] == [str(10001 + i) for i in range(3000)]
    assert all(len(r) == 4 and r[1] and r[2].startswith("$") for r in rows)
    customers = next(b for b in _window(doc, win)["blocks"] if b["type"] == "list" and b.get("total") == 500)
    assert customers["items"][0].startswith("Customer 1:") and len(customers["items"]) == 20
    items = await stage.call(f"{win}__read_content", {"blockId": customers["id"], "offset": 480, "limit": 50})
    got = items.structured_content["result"]
    assert got["total"] == 500 and [i.split(":")[0] for i in got["items"]] == [f"Customer {n}" for n in range(481, 501)]
    tail = await stage.call(f"{win}__read_content", {"blockId": table["id"], "offset": 2990})
    assert len(tail.structured_content["result"]["rows"]) == 10
    blocks = await stage.call(f"{win}__read_content", {"limit": 1000})
    assert blocks.structured_content["result"]["total"] == len(blocks.structured_content["result"]["blocks"])


@pytest.mark.parametrize("mode", ["auto"])
async def test_block_ids_stay_put_when_the_page_re_renders_its_table(stage: Stage) -> None:
    doc = await stage.wait_windows(
        lambda d: any(
            b["type"] == "table" and any(r[0] == "#101" for r in b["rows"]) for w in d["windows"] for b in w["blocks"]
        )
    )
    window = next(w for w in doc["windows"] if any(b["type"] == "table" for b in w["blocks"]))
    before = {b["id"]: b["type"] for b in window["blocks"] if "id" in b}
    table_id = next(b["id"] for b in window["blocks"] if b["type"] == "table")
    await stage.wait_tools(lambda names: f"{window['id']}__close_ticket" in names)
    result = await stage.call(f"{window['id']}__close_ticket", {"id": 101, "resolution": "Sent a new reset link"})
    assert not result.is_error, result.structured_content

    def closed(d: dict[str, Any]) -> bool:
        table = next((b for b in _window(d, window["id"])["blocks"] if b.get("id") == table_id), None)
        return table is not None and ["#101", "Cannot reset my password", "closed", "high"] in table["rows"]

    after_doc = await stage.wait_windows(closed)
    after = {b["id"]: b["type"] for b in _window(after_doc, window["id"])["blocks"] if "id" in b}
    assert _window(after_doc, window["id"])["version"] > window["version"]
    # Every block that was there keeps its id (the activity list, empty before, may appear).
    assert {k: v for k, v in before.items() if v != "notice"}.items() <= after.items()


@pytest.mark.parametrize("mode", ["auto"])
async def test_version_holds_still_while_only_hidden_content_churns(stage: Stage) -> None:
    win = await _open(stage, "/churn.html")
    page = await stage.user_page("/churn.html")
    await page.wait_for_function("Number(document.getElementById('counter').textContent) > 5", timeout=WAIT * 1000)
    # Hide what changes visibly: what is left churning 50x a second is the aria-hidden clock.
    await page.evaluate("""() => { for (const id of ['counter', 'waiting'])
        document.getElementById(id).setAttribute('aria-hidden', 'true'); }""")
    doc = await stage.wait_windows(
        lambda d: "updates" in _blocks_text(_window(d, win)) and "Calls waiting:" not in _blocks_text(_window(d, win))
    )
    version = _window(doc, win)["version"]
    start = int(await page.evaluate("Number(document.getElementById('counter').textContent)"))
    await page.wait_for_function(
        f"Number(document.getElementById('counter').textContent) > {start + 50}", timeout=WAIT * 1000
    )
    assert _window(await stage.windows(), win)["version"] == version


@pytest.mark.parametrize("mode", ["auto"])
async def test_validation_error_shows_as_an_error_notice_naming_the_field(stage: Stage) -> None:
    doc = await stage.wait_windows(lambda d: any(b["type"] == "table" for w in d["windows"] for b in w["blocks"]))
    win = next(w["id"] for w in doc["windows"] if any(b["type"] == "table" for b in w["blocks"]))
    page = await stage.user_page("/")
    await page.evaluate("""() => {
      const subject = document.getElementById('subject');
      const msg = document.createElement('p'); msg.id = 'subject-error'; msg.textContent = 'Subject is required.';
      subject.parentElement.append(msg);
      subject.setAttribute('aria-errormessage', 'subject-error'); subject.setAttribute('aria-invalid', 'true');
    }""")
    doc = await stage.wait_windows(
        lambda d: any(
            b["type"] == "notice" and b["severity"] == "error" and b["text"] == "Subject: Subject is required."
            for b in _window(d, win)["blocks"]
        )
    )
    assert "needs attention" in _window(doc, win)["summary"]


@pytest.mark.parametrize("mode", ["auto"])
async def test_open_modal_dialog_content_leaves_the_page_blocks(stage: Stage) -> None:
    win = await _open(stage, "/modal.html")
    page = await stage.user_page("/modal.html")
    await page.click("#open-editor")
    doc = await stage.wait_windows(lambda d: "dialog" in _window(d, win)["summary"])
    page_text = _blocks_text(_window(doc, win))
    assert "Edit queue settings" not in page_text, "the dialog's content is the dialog window's, not the page's"
    assert "Queue name: Tier 1" in page_text, "the page behind the backdrop keeps showing what it showed"
    (modal,) = [w for w in doc["windows"] if w["modal"]]
    assert "Edit queue settings" in _blocks_text(modal) or "Edit queue settings" in modal["title"]
    await page.click("#close-editor")
    doc = await stage.wait_windows(lambda d: "dialog" not in _window(d, win)["summary"])
    assert "Queue settings" in _window(doc, win)["summary"]


@pytest.mark.parametrize("mode", ["auto"])
async def test_a_big_page_read_in_part_keeps_its_frame_in_place_and_its_password_masked(stage: Stage) -> None:
    # 3,000 rows are far more than the view shows, so the page is read in part; what is
    # between the table and the list (an iframe and a password field) must be as on a small page.
    win = await _open(stage, "/big.html?rows=3000&extras=1")
    page = await stage.user_page("/big.html?rows=3000&extras=1")
    await page.fill("#export-password", SECRETS["password"])

    def ready(doc: dict[str, Any]) -> bool:
        blocks = _window(doc, win)["blocks"]
        fields = [i for b in blocks if b["type"] == "fields" for i in b["items"]]
        return any(i["label"] == "Export password" and i["value"] for i in fields) and any(
            i["label"] == "Search articles" for i in fields
        )

    doc = await stage.wait_windows(ready)
    blocks = _window(doc, win)["blocks"]
    order = [
        next(n for n, b in enumerate(blocks) if b["type"] == "table" and b.get("total") == 3000),
        next(n for n, b in enumerate(blocks) if b["type"] == "fields" and b["items"][0]["label"] == "Search articles"),
        next(n for n, b in enumerate(blocks) if "Reference customers" in text_spans(b.get("text", ""))),
    ]
    assert order == sorted(order), blocks
    password = next(i for b in blocks if b["type"] == "fields" for i in b["items"] if i["label"] == "Export password")
    assert password["sensitive"] and password["value"] == "\u2022" * 6
    table = blocks[order[0]]
    read = await stage.call(f"{win}__read_content", {"blockId": table["id"], "offset": 1000, "limit": 500})
    everything = await stage.call(f"{win}__read_content", {"limit": 1000})
    for text in (
        _blocks_text(_window(await stage.windows(), win)),
        json.dumps(read.structured_content),
        json.dumps(everything.structured_content),
    ):
        assert SECRETS["password"] not in text
    assert [r[0] for r in read.structured_content["result"]["rows"]] == [str(11001 + i) for i in range(500)]
    # It was read in part: the bridge holds the first 20 rows, the rest come when asked for.
    held = next(b for b in everything.structured_content["result"]["blocks"] if b["type"] == "table")
    assert held["total"] == 3000 and len(held["rows"]) == 20
