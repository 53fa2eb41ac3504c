"""How a page tool's answer becomes the agent's ToolResult or tool error (PageCalls._page_result)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from cdp_bridge.connection import CDPSession
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop import calls, mirror
from webmcp.desktop.mirror import Invocation, Outcome, PageTool
from webmcp.errors import ToolError
from webmcp.untrusted.page_limits import MAX_RESULT_BYTES
from webmcp.view.masking import MASK

pytestmark = pytest.mark.anyio

_TOOL = PageTool(
    handle="book_table",
    name="book_table",
    frame_id="F",
    session=cast(CDPSession, object()),
    description="",
    input_schema={"type": "object"},
    annotations={},
    backend_node_id=None,
)


class _Host:
    """The few things _page_result reads of a tab: its origin and the secret values known and live."""

    timeouts = Timeouts()
    origin = "http://127.0.0.1:1"
    window_opens = 0

    def __init__(self, secrets: frozenset[str] = frozenset(), live: frozenset[str] = frozenset()) -> None:
        self._secrets = secrets
        self._live = live
        self.reads = 0

    async def secrets_now(self) -> frozenset[str]:
        self.reads += 1
        return self._secrets | self._live


async def _result(outcome: Outcome, host: _Host | None = None) -> Any:
    invocation = Invocation(_TOOL)
    invocation.settle(outcome)
    page_calls = calls.PageCalls(
        cast(calls.CallHost, host or _Host()), cast(Any, None), cast(Any, None), cast(Any, None)
    )
    return await page_calls._page_result(_TOOL, invocation)


async def test_an_mcp_shaped_error_is_a_page_error_with_the_page_text() -> None:
    output = {"content": [{"type": "text", "text": "Error: No table for 12 at 19:00"}], "isError": True}
    with pytest.raises(ToolError) as raised:
        await _result(Outcome("Completed", output=output))
    body = raised.value.to_dict()
    assert body["code"] == "page_error"
    assert body["pageMessage"] == "Error: No table for 12 at 19:00"
    assert "No table for 12 at 19:00" in body["message"] and "completed" not in body["message"]


async def test_an_mcp_shaped_error_is_masked_and_capped() -> None:
    output = {"content": [{"type": "text", "text": "Card 4111-2222 refused. " + "x" * 9000}], "isError": True}
    with pytest.raises(ToolError) as raised:
        await _result(Outcome("Completed", output=output), _Host(frozenset({"4111-2222"})))
    page_message = raised.value.to_dict()["pageMessage"]
    assert "4111-2222" not in page_message and MASK in page_message
    assert len(page_message.encode()) <= calls._ERROR_TEXT_BYTES


async def test_a_secret_typed_since_the_last_read_is_masked_whole_though_a_prefix_of_it_was_known() -> None:
    # The last view read the field mid-typing; the page holds the whole value when it answers.
    host = _Host(frozenset({"typed-just-"}), live=frozenset({"typed-just-now-7"}))
    answer = await _result(Outcome("Completed", output={"late": "typed-just-now-7", "old": "typed-just-"}), host)
    assert answer.result == {"late": MASK, "old": MASK}
    assert answer.masked_with == {"typed-just-", "typed-just-now-7"} and host.reads == 1
    error = Outcome("Error", error_text="Refused typed-just-now-7")
    with pytest.raises(ToolError) as raised:
        await _result(error, _Host(frozenset({"typed-just-"}), live=frozenset({"typed-just-now-7"})))
    assert raised.value.to_dict()["pageMessage"] == f"Refused {MASK}"


async def test_a_secret_the_cut_would_split_is_masked_before_it() -> None:
    secret = "s3cret-at-the-cut-" * 3
    big = "x" * (MAX_RESULT_BYTES - 1024 - 20) + secret + "x" * 2048  # the cut falls inside the secret
    answer = await _result(Outcome("Completed", output=big), _Host(live=frozenset({secret})))
    assert answer.result is not None and answer.result["cut"] is True
    assert "s3cret" not in answer.result["preview"]


async def test_an_mcp_shaped_success_passes_its_text_not_the_envelope() -> None:
    answer = await _result(Outcome("Completed", output={"content": [{"type": "text", "text": "Booked for 2."}]}))
    assert answer.result == {"text": "Booked for 2."}
    assert answer.message == "book_table completed."


async def test_an_mcp_shaped_success_with_structured_content_passes_that() -> None:
    output = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"table": 4}}
    assert (await _result(Outcome("Completed", output=output))).result == {"table": 4}


async def test_a_plain_answer_is_passed_as_before() -> None:
    assert (await _result(Outcome("Completed", output={"content": "mine"}))).result == {"content": "mine"}
    assert (await _result(Outcome("Completed", output="Done"))).result == {"value": "Done"}


@pytest.mark.parametrize(
    ("sent", "meant"),
    [
        ('{"dishes":["Moules marinières"]}', {"dishes": ["Moules marinières"]}),  # Latin-1: Chromium left it unparsed
        ('["è"]', ["è"]),
        ("café", "café"),  # a string the page returned, no JSON: stays the string
        ("NaN \u00e9", "NaN \u00e9"),
        ({"a": "日本"}, {"a": "日本"}),  # Chromium parsed it
        ("plain", "plain"),
        (5, 5),
    ],
)
def test_a_tool_output_chromium_left_as_json_text_is_read_as_its_value(sent: Any, meant: Any) -> None:
    assert mirror._output_of({"invocationId": "1", "status": "Completed", "output": sent}) == meant
