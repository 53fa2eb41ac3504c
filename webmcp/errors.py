"""Tool errors an agent can act on, and the one place where browser errors become them.

    ToolError(code, message, *, current_version=…, fields=…, …)
        → CallToolResult(isError=True, structuredContent=ToolErrorBody(…).wire() = {code, message, …})
      code (`models.ErrorCode`, a closed set; GUI bridge §7.4 (docs/protocols.md#gui-7.4) and §4.6):
        stale_state            expectedVersion ≠ the window's version (+ currentVersion;
                               + cancelled, outcome when a started call was cancelled)
        validation_failed      input does not match the tool's inputSchema (+ fields[])
        blocked_by_modal       the window has a dialog over it (+ blockingWindowId)
        window_not_found       the window closed, or never existed
        action_not_available   the tool is gone (unregistered, or the page navigated)
        action_timeout         the page or browser did not answer in time (+ pageTold, outcome)
      codes this bridge adds:
        page_error             the page tool threw or reported an error (+ pageMessage)
        call_interrupted       the tab closed, crashed or navigated during the call (+ outcome)
        browser_error          the browser refused a browser action (+ detail)
        state_unverified       expectedVersion could not be checked: the page could not be read
                               then, so nothing was done (+ currentVersion, the last known one;
                               + pageTold)
        internal_error         the bridge itself failed (a bug, not the page or the browser): the
                               call may or may not have taken effect

`internal_error` is what `server.app` answers for any exception other than a `ToolError`
(`internal_error(exc)`, logged with its traceback), so a bug still reaches the agent as a
tool result with `isError`, never as a JSON-RPC error.

The fields are those of `models.ToolErrorBody`, snake_case here, camelCase on the wire.

`from_cdp_error` maps the CDP side's exceptions (`cdp_bridge.errors`) onto these codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from cdp_bridge.errors import CDPError, CommandTimeout, ConnectionClosed, ProtocolError, SessionClosed
from webmcp.models import ErrorCode, ToolErrorBody

__all__ = ["ToolError", "from_cdp_error", "internal_error"]

_TOOL_NOT_FOUND = -32602
"""With "Tool not found": what `WebMCP.invokeTool` answers for a tool the page no longer offers
(the same code with another message means invalid parameters)."""


class ToolError(Exception):
    """A failure reported to the agent as a structured `isError` tool result."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        current_version: int | None = None,
        fields: Sequence[Mapping[str, Any]] | None = None,
        blocking_window_id: str | None = None,
        page_message: str | None = None,
        detail: str | None = None,
        cancelled: bool | None = None,
        outcome: Literal["unknown"] | None = None,
        page_told: bool | None = None,
    ) -> None:
        """`fields` holds one `{"field", "error"}` per invalid input (see `models.FieldError`)."""
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.body = ToolErrorBody(
            code=code,
            message=message,
            current_version=current_version,
            fields=fields,
            blocking_window_id=blocking_window_id,
            page_message=page_message,
            detail=detail,
            cancelled=cancelled,
            outcome=outcome,
            page_told=page_told,
        )

    def to_dict(self) -> dict[str, Any]:
        """The `structuredContent` of the error result: camelCase keys, only the fields this error has."""
        return self.body.wire()


def from_cdp_error(
    exc: CDPError, what: str, timeout: float | None = None, *, gone: ToolError | None = None
) -> ToolError:
    """The tool error for a CDP failure while doing `what` (e.g. "navigate on tab-2").

    A command that timed out was not carried out as far as the bridge knows; a closed
    session means the target went away; a refusal is the browser's word, kept in `detail`.
    `gone` is what a refusal or a closed session means for the window at hand, where the
    thing the command was for has gone (a dialog already answered, a form or `<dialog>`
    removed, a block no longer on the page).
    """
    if gone is not None and isinstance(exc, ProtocolError | SessionClosed):
        return gone
    if isinstance(exc, CommandTimeout):
        waited = f" within {timeout:g} s" if timeout is not None else ""
        return ToolError(
            "action_timeout",
            f"The browser did not take {what}{waited} (the page may be busy); nothing was started.",
        )
    if isinstance(exc, SessionClosed | ConnectionClosed):
        return ToolError("call_interrupted", f"The tab went away during {what}: {exc}")
    if isinstance(exc, ProtocolError) and exc.code == _TOOL_NOT_FOUND and "not found" in exc.message.lower():
        return ToolError("action_not_available", f"The page no longer offers {what}; re-read tools/list.")
    message = exc.message if isinstance(exc, ProtocolError) else str(exc)
    return ToolError("browser_error", f"The browser refused {what}: {message}", detail=message)


def internal_error(exc: Exception) -> ToolError:
    """The tool error for an exception the bridge did not expect while carrying out a call.

    Only the exception's type is named: its text may quote the page or a secret value.
    """
    return ToolError(
        "internal_error",
        f"The bridge failed internally ({type(exc).__name__}) while carrying out this call; it may or may "
        "not have taken effect. Read app://windows to see the current state before trying again.",
    )
