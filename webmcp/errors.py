"""Tool errors an agent can act on (seed 001 §7.4), and the codes this bridge adds.

ToolError                  → CallToolResult(isError=True, structuredContent={code, message, …})
  code = stale_state            expectedVersion ≠ the window's version (+ currentVersion)
         validation_failed      input does not match the tool's inputSchema (+ fields[])
         blocked_by_modal       the window has a dialog over it (+ blockingWindowId)
         window_not_found       the window closed, or never existed
         action_not_available   the tool is gone (unregistered, or the page navigated)
         action_timeout         the page did not answer in time; the call was cancelled
  codes this bridge adds:
         page_error             the page tool threw or reported an error (+ pageMessage)
         call_interrupted       the tab closed, crashed or navigated during the call
         browser_error          the browser refused a browser action (+ detail)
"""

from __future__ import annotations

from typing import Any

__all__ = ["ToolError"]


class ToolError(Exception):
    """A failure reported to the agent as a structured `isError` tool result."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        """The `structuredContent` of the error result."""
        return {"code": self.code, "message": self.message, **self.extra}
