"""The tool error's wire form (`ToolError.to_dict`, the `structuredContent` of an error result)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cdp_bridge.errors import CDPError, CommandTimeout, ProtocolError, SessionClosed
from webmcp.errors import ToolError, from_cdp_error
from webmcp.models import ToolErrorBody


def test_a_tool_error_with_only_a_code_and_message_carries_nothing_else() -> None:
    error = ToolError("window_not_found", "Window tab-9 closed.")
    assert error.to_dict() == {"code": "window_not_found", "message": "Window tab-9 closed."}


def test_every_typed_field_goes_on_the_wire_under_its_camel_case_name_after_code_and_message() -> None:
    error = ToolError(
        "action_timeout",
        "late",
        current_version=7,
        fields=[{"field": "url", "error": "Not allowed"}],
        blocking_window_id="dlg-2",
        page_message="boom",
        detail="net::ERR_FAILED",
        cancelled=True,
        outcome="unknown",
        page_told=False,
    )
    wire = error.to_dict()
    assert list(wire) == [
        "code",
        "message",
        "currentVersion",
        "fields",
        "blockingWindowId",
        "pageMessage",
        "detail",
        "cancelled",
        "outcome",
        "pageTold",
    ]
    assert wire == {
        "code": "action_timeout",
        "message": "late",
        "currentVersion": 7,
        "fields": [{"field": "url", "error": "Not allowed"}],
        "blockingWindowId": "dlg-2",
        "pageMessage": "boom",
        "detail": "net::ERR_FAILED",
        "cancelled": True,
        "outcome": "unknown",
        "pageTold": False,
    }


def test_a_false_or_zero_field_is_kept_on_the_wire() -> None:
    wire = ToolError("stale_state", "changed", current_version=0, page_told=False).to_dict()
    assert wire == {"code": "stale_state", "message": "changed", "currentVersion": 0, "pageTold": False}


def test_the_wire_form_is_a_valid_error_body() -> None:
    wire = ToolError("blocked_by_modal", "blocked", blocking_window_id="dlg-1").to_dict()
    assert ToolErrorBody.model_validate(wire).blocking_window_id == "dlg-1"


def test_a_field_error_must_be_exactly_field_and_error() -> None:
    with pytest.raises(ValidationError):
        ToolError("validation_failed", "bad", fields=[{"field": "n", "why": "no"}])


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (ProtocolError("Page.handleJavaScriptDialog", -32602, "No dialog is showing"), "window_not_found"),
        (SessionClosed("the tab closed"), "window_not_found"),
        (CommandTimeout("Page.handleJavaScriptDialog", 10.0), "action_timeout"),
    ],
)
def test_a_window_says_what_a_refusal_means_for_it_and_the_one_mapping_keeps_the_rest(
    failure: CDPError, code: str
) -> None:
    gone = ToolError("window_not_found", "Dialog dlg-2 is already closed.")
    assert from_cdp_error(failure, "answering dlg-2", gone=gone).code == code
    assert from_cdp_error(failure, "answering dlg-2").code != "window_not_found", "without it, the generic codes"
