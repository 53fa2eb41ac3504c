"""Modal windows: JavaScript dialogs and in-page `<dialog>`s opened with showModal().

Both are seed-001 modal windows owned by the top of their tab's chain at the moment they
open (the tab, or a modal already over it), so a dialog over a dialog chains. A JavaScript
dialog is answered with accept/dismiss; an in-page modal is closed with `close`, and the
declarative tools whose form lies inside it are its tools while it is open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from .mirror import PageTool
from .windows import WindowState

__all__ = ["InPageModal", "dialog_summary", "dialog_blocks", "modal_summary", "top_of_tab"]


@dataclass(eq=False)
class InPageModal:
    """An open `<dialog>` (showModal) of a tab, published as its own modal window."""

    window: WindowState
    tab_id: str
    key: Any
    backend_node_id: int | None
    backend_ids: frozenset[int]
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def owns(self, tool: PageTool) -> bool:
        """True for a declarative tool whose form lies inside this dialog."""
        return tool.backend_node_id is not None and tool.backend_node_id in self.backend_ids


def top_of_tab(windows: Sequence[WindowState], tab_id: str) -> str:
    """The id of the newest window in `tab_id`'s modal chain (the tab itself if none)."""
    current = tab_id
    while True:
        children = [w for w in windows if w.modal and w.owner_id == current]
        if not children:
            return current
        current = children[-1].id


def dialog_summary(kind: str, message: str) -> str:
    """One sentence for a JavaScript dialog window."""
    text = message.strip().replace("\n", " ")[:160] or "(no message)"
    if kind == "prompt":
        return f"The page asks for input: \u201c{text}\u201d \u2014 accept with text, or dismiss."
    if kind == "confirm":
        return f"The page asks to confirm: \u201c{text}\u201d \u2014 accept or dismiss."
    if kind == "beforeunload":
        return "The page warns that changes may be lost if you leave \u2014 accept to leave, dismiss to stay."
    return f"The page shows an alert: \u201c{text}\u201d \u2014 accept to close it."


def dialog_blocks(kind: str, message: str, default_prompt: str) -> list[dict[str, Any]]:
    """The content of a JavaScript dialog window: its message, and a prompt's answer field."""
    blocks: list[dict[str, Any]] = [{"type": "text", "id": "message", "text": message}]
    if kind == "prompt":
        blocks.append({"type": "fields", "id": "answer", "items": [{"label": "Answer", "value": default_prompt}]})
    return blocks


def modal_summary(title: str, blocks: Sequence[dict[str, Any]], tool_count: int) -> str:
    """One sentence for an in-page modal dialog window."""
    fields = sum(len(b.get("items", ())) for b in blocks if b.get("type") == "fields")
    errors = [b["text"] for b in blocks if b.get("type") == "notice" and b.get("severity") == "error"]
    parts = [f"A dialog \u201c{title or 'untitled'}\u201d is open over the page"]
    if errors:
        parts.append(f"it needs attention: \u201c{errors[0][:120]}\u201d")
    if fields:
        parts.append(f"{fields} form field{'s' if fields != 1 else ''}")
    parts.append(f"{tool_count} page tool{'s' if tool_count != 1 else ''}" if tool_count else "close it to go on")
    return "; ".join(parts) + "."
