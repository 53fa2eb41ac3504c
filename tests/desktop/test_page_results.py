"""How a page tool's answer becomes the agent's ToolResult or tool error (calls._page_result)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from cdp_bridge.connection import CDPSession
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop import calls, mirror
from webmcp.desktop.mirror import Invocation, Outcome, PageTool
from webmcp.errors import ToolError
from webmcp.view.masking import MASK, mask_secrets

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
    """The few things _page_result reads of a tab: its origin and its secret values."""

    timeouts = Timeouts()
    origin = "http://127.0.0.1:1"
    window_opens = 0

    def __init__(self, secrets: frozenset[str] = frozenset()) -> None:
        self._secrets = secrets

    def has_secret_fields(self) -> bool:
        return False

    def secret_values(self) -> frozenset[str]:
        return self._secrets

    def mask(self, value: Any) -> Any:
        return mask_secrets(value, self._secrets)


async def _result(outcome: Outcome, host: _Host | None = None) -> Any:
    invocation = Invocation(_TOOL)
    invocation.settle(outcome)
    return await calls._page_result(cast(calls.CallHost, host or _Host()), _TOOL, invocation)


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
