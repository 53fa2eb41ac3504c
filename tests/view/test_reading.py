"""A real-world article as a person reads it, from a recorded AX tree (no browser).

`gazette_article` is `/gazette/article.html` recorded by `tests/support/record_ax.py`: a skip
link, an "Accessibility links" heading and a masthead with the site's name before the
headline in `<main><article>`; links inside words and URLs; a frame whose host does not
resolve (out of process) and one whose port refuses (in process). The summary rules are
also checked on small outlines, as pure functions.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from webmcp.view.build import BlockIds, FrameNodes, Heading, View, build_view
from webmcp.view.summary import page_subject, summarize_tab, title_parts

DATA = Path(__file__).parent / "data" / "ax"
TITLE = "Harbor to Lift Ferry Restrictions - The Harbor Gazette"
URL = "http://127.0.0.1:8765/gazette/article.html"


def _frames() -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / "gazette_article.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _strings(blocks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if block["type"] in ("text", "notice"):
            out.append(block["text"])
        elif block["type"] == "list":
            out.extend(block["items"])
        elif block["type"] == "table":
            out.extend(cell for row in block["rows"] for cell in row)
    return out


def _view(frames: list[FrameNodes] | None = None) -> View:
    return build_view(frames if frames is not None else _frames(), BlockIds())


def test_the_recording_holds_the_failed_frames_and_the_layout_read() -> None:
    frames = _frames()
    assert sorted(f.unreachable_url for f in frames if f.unreachable_url) == [
        "http://127.0.0.1:9/comments",
        "http://nonexistent.invalid/ad",
        "http://tracker.nonexistent.invalid/pixel",  # display: none
    ]
    assert all(not f.nodes for f in frames if f.unreachable_url), "an error page's tree is never read"
    assert frames[0].display and frames[0].gaps, "the main frame's layout was read"


def test_summary_names_the_headline_not_the_skip_links_or_the_masthead() -> None:
    view = _view()
    assert [h.text for h in view.outline][:3] == [
        "Accessibility links",
        "The Harbor Gazette",
        "Harbor to Lift Ferry Restrictions",
    ]
    assert summarize_tab(TITLE, URL, view, False) == "Shows \u201cHarbor to Lift Ferry Restrictions\u201d."
    # The main landmark decides when the title names no heading; a title naming the masthead gets it.
    assert page_subject("Today's paper", URL, view) == "Harbor to Lift Ferry Restrictions"
    assert page_subject("The Harbor Gazette", URL, view) == "The Harbor Gazette"


@pytest.mark.parametrize(
    "shown",
    [
        "The old booking page was written for Netscape. Its code",
        "is kept at mozilla.org/ with the rest",
        "Fares start at $4.50 a crossing.",
        "Quay, A. (2019). Ferries of the Harbor. Retrieved from https://www.mozilla.org/tr/, 12 March 2019.",
        "mozilla.org/,%20https://www.mozilla.org/tr/",
        "harbor.example/timetable",
        "By Ada Quay, 12 March 2019",
        "acceptance of our User Agreement (updated 5/25/18) and Privacy Policy.",
        "Evening boats run every forty minutes from Pier 3, the board said.",
    ],
)
def test_inline_links_and_spans_join_as_the_page_shows_them(shown: str) -> None:
    assert any(shown in text for text in _strings(_view().full_blocks)), shown


def test_no_text_gains_a_space_the_page_does_not_show() -> None:
    everything = "\n".join(_strings(_view().full_blocks))
    for wrong in ("Netscape .", "mozilla .org", ".org /", "https: //", "$ 4", "4 . 50", "harbor .example"):
        assert wrong not in everything, wrong
    assert (
        "ourUser" not in everything and "Agreement(updated" not in everything and "NewsletterPrivacy" not in everything
    )
    heading = next(b for b in _view().full_blocks if b.get("heading") == 2 and "Sources" in b["text"])
    assert heading["text"] == "Sources at harbor.example/ferries"


def test_links_and_spans_laid_out_as_blocks_stay_on_lines_of_their_own() -> None:
    # The sign-up box's spans are blocks by CSS only: Chromium leaves them out of the tree.
    everything = "\n".join(_strings(_view().full_blocks))
    assert "Gazette Newsletter\nPrivacy Policy\nGet the harbor news every morning" in everything
    assert "Pier 3 reopens after repairs\nNight buses to meet the last ferry" in everything


def test_without_the_layout_read_links_stay_words_of_their_own() -> None:
    frames = _frames()
    for frame in frames:
        frame.display = frame.gaps = None
    everything = "\n".join(_strings(_view(frames).full_blocks))
    assert "our User Agreement (updated" in everything, "never fused into one word"
    assert "Pier 3 reopens after repairs Night buses" in everything


def test_frames_that_failed_to_load_are_one_notice_and_never_page_text() -> None:
    view = _view()
    notices = [b for b in view.full_blocks if b["type"] == "notice"]
    assert notices == [
        {
            "type": "notice",
            "id": notices[0]["id"],
            "severity": "warn",
            "text": "2 frames of this page did not load (nonexistent.invalid, 127.0.0.1); "
            "the browser shows an error page there.",
        }
    ]
    texts = [b.get("text") for b in view.full_blocks]
    assert texts.index(notices[0]["text"]) == texts.index("Advertisement") - 1, "where the first failed frame sits"
    everything = json.dumps(view.full_blocks, ensure_ascii=False)
    for error_page in ("could not be found", "refused to connect", "ERR_", "This site can"):
        assert error_page not in everything
    assert view.notices == [], "the bridge's word on frames is not something the page says"
    assert "did not load" not in summarize_tab(TITLE, URL, view, False)


def test_one_failed_frame_is_named_alone_and_a_hidden_one_not_at_all() -> None:
    frames = [f for f in _frames() if f.unreachable_url != "http://127.0.0.1:9/comments"]
    notice = next(b for b in _view(frames).full_blocks if b["type"] == "notice")
    assert (
        notice["text"]
        == "A frame of this page did not load (nonexistent.invalid); the browser shows an error page there."
    )
    hidden = copy.deepcopy(frames)
    owner = next(f.owner_backend_id for f in hidden if f.unreachable_url)
    iframe = next(n for n in hidden[0].nodes if n.get("backendDOMNodeId") == owner)
    iframe["ignored"], iframe["ignoredReasons"] = (
        True,
        [{"name": "notRendered", "value": {"type": "boolean", "value": True}}],
    )
    assert not any(b["type"] == "notice" for b in _view(hidden).full_blocks)


def _outline(*headings: tuple[str, int, bool], blocks: list[dict[str, Any]] | None = None) -> View:
    return View(
        blocks=[],
        title="",
        headings=[h[0] for h in headings],
        notices=[],
        field_count=0,
        left_out=0,
        full_blocks=blocks or [],
        keys=[],
        outline=[Heading(*h) for h in headings],
    )


@pytest.mark.parametrize(
    ("title", "url", "view", "subject"),
    [
        # the title names a heading: that heading, even with a masthead h1 and no main landmark
        (
            "United States to Lift Sudan Sanctions - The New York Times",
            "https://www.nytimes.com/2017/01/13/world/africa/sudan-sanctions.html",
            _outline(("The New York Times", 1, False), ("United States to Lift Sudan Sanctions", 1, False)),
            "United States to Lift Sudan Sanctions",
        ),
        # ... and give or take a section name or a cut-off tail
        (
            "Opinion | Republicans Are Following Trump to Nowhere - The New York Times",
            "https://www.nytimes.com/",
            _outline(("Republicans Are Following Trump to Nowhere", 1, True)),
            "Republicans Are Following Trump to Nowhere",
        ),
        # a skip-links heading first, the article's h1 later, no main: the h1
        (
            "Russia and Syria: Forces Blocking Refugee Return",
            "https://www.rferl.org/a/1.html",
            _outline(("Accessibility links", 2, False), ("Print Options:", 3, False), ("A headline", 1, False)),
            "A headline",
        ),
        # no heading the title names: the largest inside main/article
        (
            "Harbor Help Desk \u2014 Agent sign-in",
            "http://127.0.0.1/login.html",
            _outline(("Menu", 2, False), ("Sign in to your desk", 1, True), ("Help", 2, True)),
            "Sign in to your desk",
        ),
        # no headings: the title without the site's name when the page shows that name alone...
        (
            "Ferry timetable | The Harbor Gazette",
            "http://127.0.0.1/",
            _outline(blocks=[{"type": "text", "id": "b1", "text": "The Harbor Gazette"}]),
            "Ferry timetable",
        ),
        # ... or when the host names it (here first)
        ("GitHub \u00b7 Sign in", "https://github.com/login", _outline(), "Sign in"),
        # ... and whole when nothing tells which part is the site
        (
            "Harbor Help Desk \u2014 Queue settings",
            "http://127.0.0.1/",
            _outline(),
            "Harbor Help Desk \u2014 Queue settings",
        ),
    ],
)
def test_the_subject_is_the_main_heading_or_the_title_without_the_site(
    title: str, url: str, view: View, subject: str
) -> None:
    assert page_subject(title, url, view) == subject


@pytest.mark.parametrize(
    ("title", "url", "parts"),
    [
        ("Sign in | GitHub", "https://github.com/login", ("Sign in", "GitHub")),
        ("BBC News - Home", "https://www.bbc.co.uk/news", ("Home", "BBC News")),
        ("Spider-Man review", "https://example.com/", ("Spider-Man review", "")),
        ("A - B", "http://127.0.0.1/", ("A - B", "")),
    ],
)
def test_title_parts_strip_the_site_only_where_something_names_it(title: str, url: str, parts: tuple[str, str]) -> None:
    assert title_parts(title, url) == parts


def test_key_state_follows_the_subject() -> None:
    view = _view()
    view.notices = [{"type": "notice", "id": "n1", "severity": "error", "text": "Payment failed."}]
    assert summarize_tab(TITLE, URL, view, False) == (
        "Shows \u201cHarbor to Lift Ferry Restrictions\u201d; needs attention: error \u201cPayment failed.\u201d."
    )


def test_a_frame_read_while_it_committed_its_error_page_is_still_no_page_text() -> None:
    # Page.getFrameTree answered before the error page committed: no unreachable_url, but the
    # document read is Chromium's error page (its root's url chrome-error://, its name the host).
    frames = [f for f in _frames() if f.unreachable_url != "http://127.0.0.1:9/comments"]
    failed = next(f for f in frames if f.unreachable_url == "http://nonexistent.invalid/ad")
    failed.unreachable_url = ""
    failed.nodes = [
        {
            "nodeId": "1",
            "role": {"type": "internalRole", "value": "RootWebArea"},
            "name": {"type": "computedString", "value": "nonexistent.invalid"},
            "properties": [{"name": "url", "value": {"type": "string", "value": "chrome-error://chromewebdata/"}}],
            "childIds": ["2"],
        },
        {
            "nodeId": "2",
            "parentId": "1",
            "role": {"type": "role", "value": "StaticText"},
            "name": {
                "type": "computedString",
                "value": "nonexistent.invalid\u2019s server IP address could not be found.",
            },
        },
    ]
    for owner in (failed.owner_backend_id, None):  # where its <iframe> sits, and with no known owner
        failed.owner_backend_id = owner
        blocks = _view(frames).full_blocks
        assert "could not be found" not in json.dumps(blocks, ensure_ascii=False)
        notices = [b["text"] for b in blocks if b["type"] == "notice"]
        assert notices == (
            ["A frame of this page did not load (nonexistent.invalid); the browser shows an error page there."]
            if owner is not None
            else []
        )
