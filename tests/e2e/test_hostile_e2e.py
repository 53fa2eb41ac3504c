"""End to end: hostile pages against the bridge (issue 10 items 1, 3, 4 and 8).

Each test opens one page of `sample_site/static/hostile/` (test-only) through the bridge
and asserts what must hold after the attack, then that the bridge still serves: the tool
list, `app://windows`, and a call on the attacked window. Cases that fail on the landed
bridge are xfail(strict=True) with the failure seen; they turn into passes as the
`schema_guard` / `schema_validate` / page-text modules are wired in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.support.recorder import recording_server
from tests.support.stage import WAIT, Stage
from webmcp.server.app import TOOLS_HOLD

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SDK_HTTP_EVENT_LIMIT = 1_000_000
"""The SDK HTTP client drops an SSE event larger than this: no answer may exceed it."""
CALL_DEADLINE = 30.0

WIRE_GUARD = "awaits webmcp.untrusted.schema_guard.normalise_tool in the mirror/catalog"
WIRE_TEXT = "awaits page-text caps and attribution in tool descriptions (item 3)"


def _xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


async def _open(stage: Stage, path: str) -> tuple[str, Any]:
    """Navigate the first tab to `path`; its window id and Playwright's page."""
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not result.is_error, result.structured_content
    return win, await stage.user_page(path)


async def _open_case(stage: Stage, case: str, extra: str = "") -> tuple[str, Any]:
    win, page = await _open(stage, f"/hostile/tools.html?case={case}{extra}")
    await page.wait_for_function("window.__registered !== undefined", timeout=20_000)
    return win, page


async def _still_serves(stage: Stage, win: str) -> None:
    """The bridge lives: it lists tools, publishes windows, and runs a call on `win`."""
    with anyio.fail_after(CALL_DEADLINE):
        names = await stage.tool_names()
        assert f"{win}__read_content" in names
        assert any(w["id"] == win for w in (await stage.windows())["windows"])
        result = await stage.call(f"{win}__read_content")
        assert not result.is_error, result.structured_content


def _page_tool(names: list[str], win: str, fragment: str) -> str:
    found = [n for n in names if n.startswith(f"{win}__") and fragment in n]
    assert len(found) == 1, names
    return found[0]


async def _call_refused(stage: Stage, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call `name` and expect an `isError` result with a code (not a JSON-RPC error, not a hang)."""
    with anyio.fail_after(CALL_DEADLINE):
        result = await stage.call(name, arguments)
    assert result.is_error
    return dict(result.structured_content)


async def _listed_bytes(stage: Stage) -> int:
    tools = (await stage.client.list_tools()).tools
    return len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]))


_HITS: list[str] = []


@pytest.fixture
def recorder() -> Iterator[str]:
    """A local HTTP server that records every request; yields its base URL (requests in `_HITS`)."""
    _HITS.clear()
    with recording_server(_HITS) as (url, _hits):
        yield url


# ---- item 1: schemas are data --------------------------------------------------------------


async def _unusable(stage: Stage, win: str, case: str) -> str:
    """The window's notice that the page tool `case` cannot be offered (it is never listed)."""
    doc = await stage.wait_windows(
        lambda d: any(
            case in b["text"] for w in d["windows"] if w["id"] == win for b in w["blocks"] if b["type"] == "notice"
        )
    )
    assert not [t.name for t in (await stage.client.list_tools()).tools if case in t.name]
    return next(b["text"] for w in doc["windows"] if w["id"] == win for b in w["blocks"] if case in b.get("text", ""))


async def test_a_remote_ref_is_never_fetched(stage: Stage, recorder: str) -> None:
    win, _page = await _open_case(stage, "remote_ref", f"&ref={recorder}/schema.json")
    notice = await _unusable(stage, win, "remote_ref")
    assert "no external references" in notice
    assert _HITS == []
    await _still_serves(stage, win)


async def test_a_file_ref_is_refused_with_a_notice_and_never_read(stage: Stage) -> None:
    win, _page = await _open_case(stage, "file_ref")
    assert "no external references" in await _unusable(stage, win, "file_ref")
    await _still_serves(stage, win)


async def test_a_catastrophic_pattern_is_answered_and_freezes_nothing(stage: Stage) -> None:
    win, _page = await _open_case(stage, "catastrophic_pattern")
    names = await stage.wait_tools(lambda n: any("catastrophic_pattern" in x for x in n))
    error = await _call_refused(stage, _page_tool(names, win, "catastrophic_pattern"), {"s": "a" * 40 + "!"})
    assert error["code"] == "validation_failed"
    assert [f["field"] for f in error["fields"]] == ["s"]
    await _still_serves(stage, win)


async def test_a_self_referencing_schema_is_refused_with_a_notice(stage: Stage) -> None:
    win, _page = await _open_case(stage, "self_ref")
    assert "cannot be offered" in await _unusable(stage, win, "self_ref")
    await _still_serves(stage, win)


# ---- item 4: no page breaks the MCP surface ------------------------------------------------


async def test_properties_null_leaves_the_bridge_alive_and_the_tool_callable(stage: Stage) -> None:
    win, _page = await _open_case(stage, "properties_null")
    names = await stage.wait_tools(lambda n: any("properties_null" in x for x in n))
    with anyio.fail_after(CALL_DEADLINE):
        result = await stage.call(_page_tool(names, win, "properties_null"), {})
    assert not result.is_error, result.structured_content
    await _still_serves(stage, win)


@pytest.mark.parametrize(
    ("case", "arguments"),
    [
        pytest.param("object_or_null", {"a": "x"}),
    ],
)
async def test_valid_non_object_schemas_are_published_as_object_schemas(
    stage: Stage, case: str, arguments: dict[str, Any]
) -> None:
    win, _page = await _open_case(stage, case)
    names = await stage.wait_tools(lambda n: any(case in x for x in n))
    for tool in (await stage.client.list_tools()).tools:
        assert tool.input_schema.get("type") == "object", tool
    with anyio.fail_after(CALL_DEADLINE):
        result = await stage.call(_page_tool(names, win, case), arguments)
    assert not result.is_error, result.structured_content
    await _still_serves(stage, win)


async def test_an_array_schema_is_listed_as_unusable_with_a_notice_saying_why(stage: Stage) -> None:
    # Chromium's invokeTool takes only an object as a tool's input: such a tool cannot be called.
    win, _page = await _open_case(stage, "array_type")
    doc = await stage.wait_windows(
        lambda d: any("array_type" in json.dumps(w) and "Chromium passes" in json.dumps(w) for w in d["windows"])
    )
    assert not any("array_type" in t.name for t in (await stage.client.list_tools()).tools)
    notices = [b for w in doc["windows"] if w["id"] == win for b in w["blocks"] if b["type"] == "notice"]
    assert any("cannot be offered as a tool" in n["text"] for n in notices), notices
    await _still_serves(stage, win)


async def test_an_unknown_type_keyword_is_refused_with_a_notice_not_a_protocol_error(stage: Stage) -> None:
    win, _page = await _open_case(stage, "unknown_type")
    assert "not valid JSON Schema" in await _unusable(stage, win, "unknown_type")
    await _still_serves(stage, win)


async def test_a_64_character_tool_name_stays_within_64_in_full(stage: Stage) -> None:
    win, _page = await _open_case(stage, "long_name")
    names = await stage.wait_tools(lambda n: len([x for x in n if x.startswith(f"{win}__")]) > 8)
    assert all(len(n) <= 64 for n in names), [n for n in names if len(n) > 64]
    await _still_serves(stage, win)


async def test_a_page_tool_name_with_double_underscore_gets_a_safe_handle(stage: Stage) -> None:
    win, _page = await _open_case(stage, "dunder_name")
    names = await stage.wait_tools(lambda n: len([x for x in n if x.startswith(f"{win}__")]) > 8)
    assert all(n.count("__") == 1 for n in names), [n for n in names if n.count("__") != 1]
    await _still_serves(stage, win)


@pytest.mark.parametrize(
    ("case", "count"),
    [
        pytest.param("many_tools", 5000),
        pytest.param("long_descriptions", 60),
    ],
)
async def test_tools_list_stays_within_the_http_clients_event_limit(stage: Stage, case: str, count: int) -> None:
    win, page = await _open_case(stage, case)
    assert await page.evaluate("window.__registered") == count
    await stage.wait_tools(lambda n: len([x for x in n if x.startswith(f"{win}__")]) > 8)
    assert await _listed_bytes(stage) <= SDK_HTTP_EVENT_LIMIT
    await _still_serves(stage, win)


async def test_an_8_mb_result_is_cut_with_a_notice(stage: Stage) -> None:
    win, _page = await _open_case(stage, "big_result")
    names = await stage.wait_tools(lambda n: any("big_result" in x for x in n))
    with anyio.fail_after(60):
        result = await stage.call(_page_tool(names, win, "big_result"), {})
    size = len(json.dumps(result.structured_content)) + sum(len(getattr(c, "text", "")) for c in result.content)
    assert size <= SDK_HTTP_EVENT_LIMIT
    assert "cut" in json.dumps(result.structured_content)
    await _still_serves(stage, win)


# ---- item 3: page text is the page's, and bounded ------------------------------------------


async def test_a_huge_title_does_not_swell_the_tool_list(stage: Stage) -> None:
    win, _page = await _open(stage, "/hostile/title.html?case=huge")
    await stage.wait_tools(lambda n: f"{win}__read_title" in n)
    tools = (await stage.client.list_tools()).tools
    assert all(len((t.description or "").encode()) <= 4096 and len((t.title or "").encode()) <= 512 for t in tools)
    assert await _listed_bytes(stage) <= SDK_HTTP_EVENT_LIMIT
    await _still_serves(stage, win)


async def test_a_title_that_changes_four_times_a_second_does_not_flood_list_changed(stage: Stage) -> None:
    win, page = await _open(stage, "/hostile/title.html?case=churn")
    await stage.wait_tools(lambda n: f"{win}__read_title" in n)
    # What opening the tab changed is announced once the tool set keeps still (at most TOOLS_HOLD
    # after): counted from then, only the title's changes are left.
    await anyio.sleep(TOOLS_HOLD + 0.5)
    start = await page.evaluate("window.__titleChanges")
    seen = stage.mcp.notifications.count("tools_list_changed")
    await page.wait_for_function(f"window.__titleChanges >= {start + 12}", timeout=20_000)
    assert stage.mcp.notifications.count("tools_list_changed") - seen <= 2
    await _still_serves(stage, win)


async def test_the_bridges_own_descriptions_never_embed_page_text(stage: Stage) -> None:
    win, _page = await _open(stage, "/hostile/title.html?case=injection")
    await stage.wait_windows(lambda d: any("SYSTEM NOTICE" in w["title"] for w in d["windows"]))
    tools = (await stage.client.list_tools()).tools
    own = [t for t in tools if t.name.split("__", 1)[-1] in ("navigate", "read_content", "close", "screenshot")]
    assert own
    for tool in own:
        assert "SYSTEM NOTICE" not in (tool.description or "")
        assert "SYSTEM NOTICE" not in (tool.title or "")
    await _still_serves(stage, win)


# ---- item 8: popups ------------------------------------------------------------------------


async def test_a_page_cannot_open_tabs_in_a_loop_without_a_gesture(stage: Stage) -> None:
    win, _page = await _open(stage, "/hostile/popups.html")
    # No Playwright evaluate here: it runs with a user gesture, which would let one popup through.
    doc = await stage.wait_windows(
        lambda d: any(
            b.get("id") == "popups-closed" and "20 tab(s)" in b["text"]
            for w in d["windows"]
            if w["id"] == win
            for b in w["blocks"]
        )
    )
    assert len([w for w in doc["windows"] if not w["modal"]]) <= 2, "a popup the page opened on its own was published"
    # The bridge has closed them; Playwright hears of each close a moment later (its own
    # session), so its count is waited on, bounded, not read at once.
    with anyio.move_on_after(WAIT):
        while len(stage.user.contexts[0].pages) > 3:  # noqa: ASYNC110 (one close event per page; the count is what matters)
            await anyio.sleep(0.05)
    assert len(stage.user.contexts[0].pages) <= 3, "the popups stay open in the browser"
    await _still_serves(stage, win)
