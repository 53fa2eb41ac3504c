"""The words of a window: a tab's one-sentence `summary`, and the content of dialog windows.

Made only from the view (what the page is, what needs attention, how many fields) and the
tool count: never empty, never an id, a URL-encoded blob or another machine code. What
the page is comes from its main heading, not the first one (a skip link's "Accessibility
links", a masthead with the site's name): the heading the document title names, else the
largest heading inside `main`/`article`, else the first `h1`, else the title without the
site's name. What needs attention comes next: an open dialog, error notices, fields
marked invalid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from webmcp.models import field_item, fields_block, text_block
from webmcp.view.build import View

__all__ = ["dialog_blocks", "dialog_summary", "modal_summary", "page_subject", "summarize_tab", "title_parts"]

_QUOTE_MAX = 100
# Between a page's own title and the site's name: "Headline - Site", "Site | Headline", "A — B".
_SITE_SEPARATOR = re.compile(r"\s+(?:[|\-\u2013\u2014\u00b7\u2022\u00bb/]|::)\s+")
_NOT_WORD = re.compile(r"[\W_]+")
_SECOND_LEVEL = frozenset({"co", "com", "net", "org", "ac", "gov", "edu", "ne", "or"})
_MATCH_SHARE = 0.5
"""A heading names the page when it holds the title's words, or they hold at least half of it."""


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


def _words(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def _names_host(part: str, url: str) -> bool:
    """Whether a part of a title names the site's host ("GitHub" on github.com)."""
    labels = [label for label in (urlsplit(url).hostname or "").split(".") if label not in ("www", "m")]
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL:
        labels = labels[:-1]  # bbc.co.uk: the name is bbc
    label = labels[-2] if len(labels) >= 2 else ""
    return bool(label) and not label.isdigit() and label in _NOT_WORD.sub("", part.casefold())


def title_parts(title: str, url: str = "", shown: Sequence[str] = ()) -> tuple[str, str]:
    """The document title without the site's name, and that name ("" when it cannot tell).

    `Sign in | GitHub` on github.com gives `Sign in` and `GitHub`: one side names the host of
    `url`, or is shown on the page on its own (`shown`: a masthead's text, a logo's alt), and
    the other is not. Without such a sign the title stays whole.
    """
    title = " ".join(title.split())
    for headline, site in _readings(title, url):
        if _names_host(site, url) and not _names_host(headline, url):
            return headline, site
    on_page = {_words(text) for text in shown}
    for headline, site in _readings(title, url):
        if _words(site) in on_page and _words(headline) not in on_page:
            return headline, site
    return title, ""


def _readings(title: str, url: str) -> list[tuple[str, str]]:
    """Both readings of a title with a separator, (headline, site) each, the likelier first.

    The site's name goes last ("Headline - Site") unless only the first part names the host.
    """
    found = list(_SITE_SEPARATOR.finditer(title))
    if not found:
        return []
    first, last = title[: found[0].start()], title[found[-1].end() :]
    suffix, prefix = (title[: found[-1].start()], last), (title[found[0].end() :], first)
    return [prefix, suffix] if _names_host(first, url) and not _names_host(last, url) else [suffix, prefix]


def _names(heading: str, title: str) -> bool:
    """Whether a heading and a title (or its headline) say the same thing, give or take a few words."""
    h, t = _words(heading), _words(title)
    if not h or not t:
        return False
    shorter, longer = sorted((h, t), key=len)
    return shorter in longer and len(shorter) >= _MATCH_SHARE * len(longer)


def _shown_alone(view: View) -> list[str]:
    """Short texts the page shows as blocks of their own: a masthead, a brand, a logo's alt."""
    texts: list[str] = []
    for block in view.full_blocks:
        if block["type"] == "text" and "heading" not in block:
            texts.append(block["text"])
        elif block["type"] == "list":
            texts.extend(item for item in block["items"] if isinstance(item, str))
        elif block["type"] == "media":
            texts.append(str(block.get("alt", "")))
    return texts


def page_subject(title: str, url: str, view: View) -> str:
    """What the page is, in its own words: its main heading, or its title without the site's name.

    In order: a heading the title's likelier headline names (one in `main`/`article` first);
    the largest heading in `main`/`article`; a heading the other reading of the title names;
    the first `h1`; the title, without the site's name where the page tells which part it is.
    A masthead that repeats the site's name is never taken for the page's headline.
    """
    title = " ".join(title.split())
    readings = [headline for headline, _site in _readings(title, url)] or [title]

    def named(headline: str) -> str | None:
        found = [(not h.in_main, h.level, i, h.text) for i, h in enumerate(view.outline) if _names(h.text, headline)]
        return min(found)[3] if found else None

    in_main = [h for h in view.outline if h.in_main]
    top = [h for h in view.outline if h.level == 1]
    return (
        named(readings[0])
        or (min(in_main, key=lambda h: h.level).text if in_main else None)
        or (named(readings[1]) if len(readings) > 1 else None)
        or (top[0].text if top else None)
        or title_parts(title, url, _shown_alone(view))[0]
    )


def summarize_tab(title: str, url: str, view: View | None, loading: bool) -> str:
    """One sentence for a tab window, e.g. `Shows “Agent sign-in”.` or `Shows “Checkout”; needs attention: …`.

    What the page is and what needs attention; nothing the window says elsewhere anyway (its
    info notices, how many fields its blocks hold, how many tools `tools/list` lists).
    """
    if view is None:
        return f"Loading {_place(url)}." if loading else f"Shows {_place(url)} with nothing readable yet."
    subject = page_subject(title, url, view)
    parts = [f"Shows {_quote(subject)}" if subject else f"Shows {_place(url)}"]
    attention: list[str] = []
    if view.modals:  # each dialog's title is its own window's
        attention.append("a dialog is open" if len(view.modals) == 1 else f"{len(view.modals)} dialogs are open")
    errors = [n["text"] for n in view.notices if n.get("severity") == "error"]
    if errors:
        more = f" (and {_plural(len(errors) - 1, 'more error')})" if len(errors) > 1 else ""
        attention.append(f"error {_quote(errors[0])}{more}")
    invalid = [label for label in view.invalid_fields if label]
    if invalid and not errors:
        attention.append(f"{_plural(len(invalid), 'field')} to fix ({', '.join(invalid[:3])})")
    if attention:
        parts.append("needs attention: " + ", ".join(attention))
    if loading:
        parts.append("still loading")
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
    blocks = [text_block("message", message)]
    if kind == "prompt":
        blocks.append(fields_block("answer", [field_item("Answer", default_prompt)]))
    return blocks


def modal_summary(blocks: Sequence[dict[str, Any]]) -> str:
    """One sentence for an in-page modal dialog window (its title is the window's own)."""
    errors = [b["text"] for b in blocks if b.get("type") == "notice" and b.get("severity") == "error"]
    if errors:
        return f"A dialog over the page needs attention: \u201c{errors[0][:120]}\u201d."
    return "A dialog is open over the page."
