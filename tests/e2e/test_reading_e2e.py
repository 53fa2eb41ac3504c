"""End to end: a real-world article as the agent reads it (issue 19, items 2 to 4).

`/gazette/article.html` in real Chromium, the bridge on stdio, a real MCP client: the window's
summary names the headline, not the skip links or the masthead; text joined across links
and spans reads as the page shows it; frames that failed to load (a host that does not
resolve, out of process; a port that refuses, in process) are one notice, never their error
page's text. The same in `app://windows`, `read_content` and `ui://current`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from tests.support.stage import WAIT, Stage, shown_texts

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PATH = "/gazette/article.html"
HEADLINE = "Harbor to Lift Ferry Restrictions"
FRAMES_NOTICE = (
    "2 frames of this page did not load (nonexistent.invalid, 127.0.0.1); the browser shows an error page there."
)
AS_SHOWN = (
    "The old booking page was written for Netscape. Its code",
    "is kept at mozilla.org/ with the rest",
    "Fares start at $4.50 a crossing.",
    "Retrieved from https://www.mozilla.org/tr/, 12 March 2019.",
    "mozilla.org/,%20https://www.mozilla.org/tr/",
    "acceptance of our User Agreement (updated 5/25/18) and Privacy Policy.",
    "Gazette Newsletter\\nPrivacy Policy\\nGet the harbor news every morning",
)
NOT_SHOWN = (
    "Netscape .",
    "mozilla .org",
    "https: //",
    "ourUser",
    "NewsletterPrivacy",
    "could not be found",
    "refused to connect",
    "ERR_",
)


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _texts(window: dict[str, Any]) -> list[str]:
    return shown_texts(window["blocks"])


def _notices(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"] for b in blocks if b["type"] == "notice"]


def _check_text(blocks: list[dict[str, Any]]) -> None:
    text = json.dumps(blocks, ensure_ascii=False)
    for shown in AS_SHOWN:
        assert shown in text, shown
    for wrong in NOT_SHOWN:
        assert wrong not in text, wrong


@pytest.mark.parametrize("mode", ["auto"])
async def test_an_article_reads_as_a_person_reads_it_on_every_surface(stage: Stage) -> None:
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PATH})
    assert not result.is_error, result.structured_content

    # Both failed frames are in: the out-of-process one arrives through its own session.
    doc = await stage.wait_windows(lambda d: FRAMES_NOTICE in _notices(_window(d, win)["blocks"]))
    window = _window(doc, win)
    assert window["title"] == f"{HEADLINE} - The Harbor Gazette"
    assert window["summary"].startswith(f"Shows \u201c{HEADLINE}\u201d"), window["summary"]
    assert "did not load" not in window["summary"]
    assert _notices(window["blocks"]) == [FRAMES_NOTICE], "one notice for every failed frame, no other"
    _check_text(window["blocks"])
    assert any("Pier 3 reopens after repairs\nNight buses to meet the last ferry" in t for t in _texts(window))
    # A run of text blocks with nothing to act on is one block of lines; read_content keeps one each.
    ad = {"type": "text", "text": "Advertisement\nEvening boats run every forty minutes from Pier 3, the board said."}
    assert ad in window["blocks"], json.dumps(window["blocks"])
    plain = [b["type"] == "text" and set(b) == {"type", "text"} for b in window["blocks"]]
    assert not any(a and b for a, b in zip(plain, plain[1:], strict=False)), window["blocks"]

    read = await stage.call(f"{win}__read_content", {"limit": 1000})
    assert not read.is_error, read.structured_content
    blocks = read.structured_content["result"]["blocks"]
    assert _notices(blocks) == [FRAMES_NOTICE]
    _check_text(blocks)
    assert any(b.get("text") == "Advertisement" and "id" in b for b in blocks), "a block of its own"

    titles = await _current_titles(stage, lambda found: HEADLINE in found)
    assert "Sources at harbor.example/ferries" in titles, "a heading's title is its text as shown"
    assert not any("harbor .example" in t for t in titles)


async def _current_titles(stage: Stage, ready: Callable[[list[str]], bool]) -> list[str]:
    """Every title in `ui://current`, re-read after each change until `ready` (the tab's document is in)."""
    with anyio.fail_after(WAIT):
        while True:
            seen = stage.mcp.notifications.count("resource_updated")
            current = json.loads((await stage.client.read_resource("ui://current")).contents[0].text)
            titles = _titles(current["root"])
            if ready(titles):
                return titles
            with anyio.move_on_after(0.5):
                await stage.mcp.notifications.wait_for("resource_updated", after=seen, timeout=WAIT)


def _titles(element: dict[str, Any]) -> list[str]:
    return [element.get("title", ""), *(t for child in element.get("children", ()) for t in _titles(child))]
