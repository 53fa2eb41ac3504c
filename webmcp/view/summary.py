"""The words of a window: a tab's one-sentence `summary`, and the content of dialog windows.

Made only from the view (main heading, what needs attention, how many fields) and the
tool count: never empty, never an id, a URL-encoded blob or another machine code. What
needs attention comes first after the heading: an open dialog, error notices, fields
marked invalid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from webmcp.view.build import View

__all__ = ["dialog_blocks", "dialog_summary", "modal_summary", "summarize_tab"]

_QUOTE_MAX = 100


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _QUOTE_MAX:
        text = text[: _QUOTE_MAX - 1].rstrip() + "\u2026"
    return f"\u201c{text}\u201d"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _place(url: str) -> str:
    """A human name for where the tab is: its host, or what kind of page it is."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        return f"a page on {parts.hostname}"
    if parts.scheme == "file":
        return "a local file"
    return "an empty tab" if url in ("", "about:blank") else "a browser page"


def summarize_tab(title: str, url: str, view: View | None, tool_count: int, loading: bool) -> str:
    """One sentence for a tab window, e.g. `Shows “Agent sign-in”; 5 form fields; 1 page tool.`"""
    if view is None:
        return f"Loading {_place(url)}." if loading else f"Shows {_place(url)} with nothing readable yet."
    subject = view.headings[0] if view.headings else title
    parts = [f"Shows {_quote(subject)}" if subject else f"Shows {_place(url)}"]
    attention: list[str] = [
        f"the dialog {_quote(modal.title)} is open" if modal.title else "a dialog is open" for modal in view.modals
    ]
    errors = [n["text"] for n in view.notices if n.get("severity") == "error"]
    if errors:
        more = f" (and {_plural(len(errors) - 1, 'more error')})" if len(errors) > 1 else ""
        attention.append(f"error {_quote(errors[0])}{more}")
    invalid = [label for label in view.invalid_fields if label]
    if invalid and not errors:
        attention.append(f"{_plural(len(invalid), 'field')} to fix ({', '.join(invalid[:3])})")
    if attention:
        parts.append("needs attention: " + ", ".join(attention))
    else:
        others = [n["text"] for n in view.notices if n.get("severity") in ("success", "warn", "info")]
        if others:
            parts.append(f"says {_quote(others[0])}")
    if view.field_count:
        parts.append(_plural(view.field_count, "form field"))
    if loading:
        parts.append("still loading")
    parts.append(_plural(tool_count, "page tool") if tool_count else "no page tools")
    return "; ".join(parts) + "."


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
