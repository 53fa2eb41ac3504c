"""A tab window's `summary`: one true sentence about what the page shows now (seed 001 §4.3).

Made only from the view (main heading, what needs attention, how many fields) and the
tool count: never empty, never an id, a URL-encoded blob or another machine code. What
needs attention comes first after the heading: an open dialog, error notices, fields
marked invalid.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cdp_bridge.snapshot import View

__all__ = ["summarize_tab"]

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
