"""Tool errors an agent can act on, and how browser errors become them.

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

`from_cdp_error` maps the CDP side's exceptions (`cdp_bridge.errors`) onto these codes: the one
mapping. It is applied at the edge of each part by `cdp_errors`, which names what was being done
and what a refusal means there:

    with cdp_errors(f"answering {dialog_id}", gone=ToolError("window_not_found", …)):
        await session.send("Page.handleJavaScriptDialog", …)

A command whose failure leaves nothing to do (a clean-up or letting the page go on, whose target
may be gone already; a set-up the browser may lack) runs under `best_effort`, which logs the
failure and drops it. Any other
`except CDPError` on the agent side turns a failed read into what the caller does without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from cdp_bridge.errors import CDPError, CommandTimeout, ConnectionClosed, ProtocolError, SessionClosed
from webmcp.models import ErrorCode, ToolErrorBody

__all__ = ["ToolError", "best_effort", "cdp_errors", "from_cdp_error", "internal_error"]

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


@contextmanager
def cdp_errors(
    what: str, timeout: float | None = None, *, gone: ToolError | Callable[[CDPError], ToolError] | None = None
) -> Iterator[None]:
    """A part's operation at its edge: a `CDPError` inside becomes `from_cdp_error(exc, what, timeout, gone=…)`.

    `gone` is what a refusal or a closed session means for this operation (see `from_cdp_error`);
    given as a function, it is called with the failure, for a message that quotes it or reads the
    state when it happened. The CDP failure is the tool error's `__cause__`; any other exception
    passes through untouched.

    Raises:
        ToolError: a browser command inside failed.
    """
    try:
        yield
    except CDPError as exc:
        meaning = gone if gone is None or isinstance(gone, ToolError) else gone(exc)
        raise from_cdp_error(exc, what, timeout, gone=meaning) from exc


@contextmanager
def best_effort(log: logging.Logger, what: str, *, level: int = logging.DEBUG) -> Iterator[None]:
    """A browser command whose failure leaves nothing to do: a `CDPError` inside is logged and dropped.

    For clean-ups and for letting a page go on, whose target may already be gone, and for
    set-ups the browser may lack: there is nobody to tell and nothing to undo. The log says
    `what`, then the failure, at `level`. The rest of the `with` block does not run after a
    failure; any other exception passes through.
    """
    try:
        yield
    except CDPError as exc:
        log.log(level, "%s: %s", what, exc)


def internal_error(exc: Exception) -> ToolError:
    """The tool error for an exception the bridge did not expect while carrying out a call.

    Only the exception's type is named: its text may quote the page or a secret value.
    """
    return ToolError(
        "internal_error",
        f"The bridge failed internally ({type(exc).__name__}) while carrying out this call; it may or may "
        "not have taken effect. Read app://windows to see the current state before trying again.",
    )
