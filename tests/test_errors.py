"""The tool error's wire form (`ToolError.to_dict`, the `structuredContent` of an error result), and the
context managers that map CDP failures at a part's edge (`cdp_errors`) or drop them (`best_effort`)."""

from __future__ import annotations

import logging

import anyio
import pytest
from pydantic import ValidationError

from cdp_bridge.errors import CDPError, CommandTimeout, ConnectionClosed, ProtocolError, SessionClosed
from webmcp.errors import ToolError, best_effort, cdp_errors, from_cdp_error
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


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (CommandTimeout("Page.navigate", 10.0), "action_timeout"),
        (SessionClosed("the tab closed"), "call_interrupted"),
        (ConnectionClosed("the browser went away"), "call_interrupted"),
        (ProtocolError("WebMCP.invokeTool", -32602, "Tool not found"), "action_not_available"),
        (ProtocolError("Page.navigate", -32000, "Cannot navigate to invalid URL"), "browser_error"),
    ],
)
def test_a_cdp_failure_inside_cdp_errors_becomes_the_mappings_tool_error_with_the_failure_as_its_cause(
    failure: CDPError, code: str
) -> None:
    with pytest.raises(ToolError) as raised, cdp_errors("navigate on tab-2", timeout=10.0):
        raise failure
    expected = from_cdp_error(failure, "navigate on tab-2", 10.0)
    assert raised.value.code == code
    assert raised.value.to_dict() == expected.to_dict()
    assert raised.value.__cause__ is failure


def test_cdp_errors_names_the_wait_it_was_given_in_a_timeout() -> None:
    with pytest.raises(ToolError) as raised, cdp_errors("navigate on tab-2", timeout=7.5):
        raise CommandTimeout("Page.navigate", 7.5)
    assert "navigate on tab-2 within 7.5 s" in raised.value.message


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (ProtocolError("DOM.resolveNode", -32000, "No node with given id found"), "window_not_found"),
        (SessionClosed("the tab closed"), "window_not_found"),
        (CommandTimeout("DOM.resolveNode", 10.0), "action_timeout"),
    ],
)
def test_cdp_errors_answers_gone_for_a_refusal_or_a_closed_session_and_the_mapping_for_the_rest(
    failure: CDPError, code: str
) -> None:
    gone = ToolError("window_not_found", "Dialog dlg-2 is already closed.")
    with pytest.raises(ToolError) as raised, cdp_errors("answering dlg-2", gone=gone):
        raise failure
    assert raised.value.code == code
    assert (raised.value is gone) == (code == "window_not_found")
    assert raised.value.__cause__ is failure


def test_cdp_errors_calls_a_gone_function_with_the_failure_only_when_it_happens() -> None:
    seen: list[CDPError] = []

    def gone(exc: CDPError) -> ToolError:
        seen.append(exc)
        return ToolError("window_not_found", f"The form of form-1 is gone: {exc}")

    with cdp_errors("submitting form-1", gone=gone):
        pass
    assert seen == [], "nothing failed, nothing was built"
    failure = ProtocolError("DOM.resolveNode", -32000, "No node with given id found")
    with pytest.raises(ToolError) as raised, cdp_errors("submitting form-1", gone=gone):
        raise failure
    assert seen == [failure]
    assert raised.value.to_dict() == {
        "code": "window_not_found",
        "message": "The form of form-1 is gone: DOM.resolveNode failed: No node with given id found (code -32000)",
    }


@pytest.mark.parametrize(
    "other",
    [
        ToolError("stale_state", "changed", current_version=3),
        TimeoutError(),
        KeyError("objectId"),
    ],
)
def test_cdp_errors_lets_every_other_exception_through_untouched(other: Exception) -> None:
    with pytest.raises(type(other)) as raised, cdp_errors("navigate on tab-2", gone=ToolError("window_not_found", "x")):
        raise other
    assert raised.value is other
    assert raised.value.__cause__ is None


def test_cdp_errors_lets_cancellation_through() -> None:
    async def cancelled() -> bool:
        with anyio.move_on_after(0) as scope, cdp_errors("navigate on tab-2"):
            await anyio.sleep(1)
        return scope.cancelled_caught

    assert anyio.run(cancelled)


def test_best_effort_logs_a_cdp_failure_and_skips_the_rest_of_its_block(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tests.best_effort")
    ran: list[str] = []

    def close_popup() -> None:
        raise SessionClosed("the tab closed")

    with caplog.at_level(logging.DEBUG, logger=log.name):
        with best_effort(log, "could not close a popup"):
            close_popup()
            ran.append("the rest of the block")
        ran.append("what follows it")
    assert ran == ["what follows it"]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "could not close a popup: the tab closed")
    ]


def test_best_effort_logs_at_the_level_it_is_given(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tests.best_effort")
    with caplog.at_level(logging.DEBUG, logger=log.name), best_effort(log, "no downloads", level=logging.WARNING):
        raise ProtocolError("Browser.setDownloadBehavior", -32601, "'Browser.setDownloadBehavior' wasn't found")
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


def test_best_effort_lets_every_other_exception_through() -> None:
    other = ToolError("window_not_found", "Window tab-9 closed.")
    with pytest.raises(ToolError) as raised, best_effort(logging.getLogger("tests.best_effort"), "x"):
        raise other
    assert raised.value is other
