#!/usr/bin/env python
"""Real pages with ground truth, side by side with the peers (issue 19 item 6).

    python bench/real_pages.py CORPUS [--limit 80] [--subjects bridge,playwright,devtools]
        [--pages ID,ID…] [--network mixed|hang|drop|fail|none] [--keep DIR] [--navigate-timeout S]
    python bench/real_pages.py --make-samples DIR    # a few saved pages made from the sample site

CORPUS is a checkout (or `git archive`) of github:scrapinghub/article-extraction-benchmark:
`html/<id>.html.gz` (pages saved from news sites, blogs, shops) and `ground-truth.json`
(`{id: {"url": …, "articleBody": …}}`). It stays out of this repository and of CI.
CORPUS may instead be a directory of saved pages, `<id>.html` or `<id>.html.gz`, each with its
article's text in `<id>.txt` (without one, the text of the page's `<article>`, else `<main>`,
else `<body>`). `--make-samples DIR` writes such a directory from the sample site's articles,
each as saved and with what real pages hold that the network then decides: a synchronous
`<script src>` from a third-party host in its `<head>` (32 of 78 corpus pages had one), a
stylesheet from one.

Each page is served as saved, unchanged, from 127.0.0.1 (`/p/<id>`, utf-8, gzip as stored;
its relative subresources get a quick 404). Its third-party hosts (ads, trackers, fonts,
CDNs) cannot be reached, as on a filtering network; a wrapper around Chromium decides how
they fail (`--network`), with `--host-resolver-rules` (127.0.0.1 and localhost never mapped):

* `hang`: every other host goes to a local blackhole that accepts the connection and never
  answers. Those requests stay pending for Chromium's own timeouts (minutes): a
  parser-blocking script from such a host holds DOMContentLoaded, any of them holds the load
  event.
* `drop`: every other host goes to a local port whose queue is full, so its connections are
  never accepted: the kernel drops them, as a firewall that drops packets does (the connect
  hangs through its retries).
* `fail`: every other host resolves to nothing (`~NOTFOUND`): requests fail at once, as
  behind a DNS filter.
* `mixed` (default): all three. A stable quarter of the hosts named in the corpus's markup (by
  a hash of the name, over the whole corpus whatever pages run) hangs, another eighth is
  dropped; the rest, and hosts only scripts name, fail at once. Most pages then parse and
  render while their load event waits: the case of issue 19.
* `none`: no rule; the machine's own network (here, without DNS, everything fails at once).

For each subject (one at a time, all pages in a row, one browser) and page: navigate (timed),
then the state an agent reads first (bridge `app://windows`, peers their snapshot; timed and
measured in bytes), then everything the server hands out (bridge: every page of the tab's
`read_content`; peers: that snapshot again, which is all of it), then each server's own wait
for the article's first words (bridge `wait_for`, Playwright MCP `browser_wait_for`,
chrome-devtools-mcp `wait_for`; at most `--wait-timeout`) and the state read after it. Measured: the recall of the
article's words (lowercase runs of Unicode letters and digits; |truth ∩ seen| / |truth| as
multisets) in the state and in everything; whether the window's title is the document's
`<title>` or its address; whether the state shows the new page's address. Every step has its
own timeout; a step that times out restarts that server before the next page.

Writes `bench/results/real-pages-<stamp>.json` (every figure, per page) and `.md` (summary and
per-page tables). Nothing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import hashlib
import html
import json
import logging
import os
import re
import selectors
import socket
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/real_pages.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.peers.__main__ import versions  # noqa: E402
from bench.peers.mcp_subject import StepFailed  # noqa: E402
from bench.peers.subjects import CHROMIUM, Bridge, ChromeDevtoolsMcp, PlaywrightMcp, Subject  # noqa: E402
from sample_site.slow import dropping_port as dropper  # noqa: E402  (a firewall that drops packets)

RESULTS = ROOT / "bench" / "results"
KINDS: dict[str, Callable[..., Subject]] = {
    "bridge": Bridge,
    "playwright": PlaywrightMcp,
    "devtools": ChromeDevtoolsMcp,
}
LABELS = {"playwright": "Playwright MCP", "devtools": "chrome-devtools-mcp", "bridge": "bridge"}
REACHED = 0.95
"""A page's article is reachable when at least this share of its words is there."""
INDEX_TITLE = "Real pages bench"


@dataclass(frozen=True)
class Page:
    key: str
    url: str
    """Where it was saved from (ground truth); it is served from 127.0.0.1."""
    title: str
    """The document's own `<title>`, whitespace collapsed ("" when it has none)."""
    truth: Counter[str]
    body: bytes = field(repr=False)
    phrase: str = ""
    """The article's first words, as an agent would wait for them to show."""


def words(text: str) -> Counter[str]:
    """Lowercase runs of Unicode letters and digits, counted."""
    return Counter(re.findall(r"[^\W_]+", text.lower()))


def recall(truth: Counter[str], seen: Counter[str]) -> float:
    total = sum(truth.values())
    return sum((truth & seen).values()) / total if total else 1.0


def _collapse(text: str) -> str:
    return " ".join(text.split())


class _TitleParser(HTMLParser):
    """The first `<title>` outside any `<svg>` (an icon's title is not the document's)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self._inside = False
        self._svg_depth = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "svg":
            self._svg_depth += 1
        elif tag == "title" and self.title is None and not self._svg_depth:
            self._inside, self.title = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg_depth = max(0, self._svg_depth - 1)
        elif tag == "title":
            self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside and self.title is not None:
            self.title += data


def document_title(markup: str) -> str:
    parser = _TitleParser()
    parser.feed(markup)
    return _collapse(html.unescape(parser.title or ""))


_PHRASE_WORDS = 5


def phrase_of(text: str) -> str:
    """The first words of an article's text, as a wait for it names them."""
    return " ".join(text.split()[:_PHRASE_WORDS])


class _TextParser(HTMLParser):
    """The text of a document's `<article>`, `<main>` and `<body>` (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, list[str]] = {"article": [], "main": [], "body": []}
        self._open: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("article", "main", "body", "script", "style"):
            self._open[tag] += 1

    def handle_endtag(self, tag: str) -> None:
        if self._open[tag]:
            self._open[tag] -= 1

    def handle_data(self, data: str) -> None:
        if self._open["script"] or self._open["style"]:
            return
        for tag, texts in self.texts.items():
            if self._open[tag]:
                texts.append(data)


def article_text(markup: str) -> str:
    """What a saved page without a truth file is measured against: its article, else its main, else its body."""
    parser = _TextParser()
    parser.feed(markup)
    for tag in ("article", "main", "body"):
        text = _collapse(" ".join(parser.texts[tag]))
        if text:
            return text
    return ""


def first_paragraph(markup: str) -> str:
    """The text of the first `<p>` of ten words or more of the page's article (else of its main, else of
    its body): a wait names words one block shows, and the article's text begins there (not at its heading)."""
    for tag in ("article", "main", "body"):
        at = markup.find(f"<{tag}")
        for found in re.finditer(r"<p[\s>].*?</p>", markup[at:], re.DOTALL) if at >= 0 else ():
            text = _collapse(html.unescape(re.sub(r"<[^>]+>", "", found.group(0))))
            if len(text.split()) >= 2 * _PHRASE_WORDS:  # a kicker or a byline is not where the text begins
                return text
    return ""


def load_saved(path: Path, keys: list[str], limit: int | None) -> list[Page]:
    """A directory of saved pages (`<id>.html`, `<id>.html.gz`, optional `<id>.txt`), in id order."""
    pages = []
    for file in sorted([*path.glob("*.html"), *path.glob("*.html.gz")]):
        key = file.name.removesuffix(".gz").removesuffix(".html")
        if keys and not any(key.startswith(k) for k in keys):
            continue
        raw = file.read_bytes()
        body = raw if file.suffix == ".gz" else gzip.compress(raw, mtime=0)  # the same bytes, the same sha256
        markup = gzip.decompress(body).decode("utf-8", errors="replace")
        told = path / f"{key}.txt"
        text = told.read_text(encoding="utf-8") if told.exists() else article_text(markup)
        phrase = phrase_of(text if told.exists() else first_paragraph(markup))
        pages.append(Page(key, f"file://{file}", document_title(markup), words(text), body, phrase))
        if limit is not None and len(pages) >= limit:
            break
    return pages


_SAMPLES = ROOT / "sample_site" / "static"
_THIRD_PARTY = {
    "headscript": '<script src="https://tags.adnetwork-example.com/loader.js"></script>',
    "stylesheet": '<link rel="stylesheet" href="https://fonts.cdn-example.net/css2?family=Serif">',
}
"""What a saved sample gets in its `<head>` besides its own markup, by variant."""


def make_samples(directory: Path) -> list[Path]:
    """Saved pages from the sample site's articles: each as it is, and with each of `_THIRD_PARTY`."""
    directory.mkdir(parents=True, exist_ok=True)
    sources = sorted((_SAMPLES / "plain" / "articles").glob("*.html")) + [_SAMPLES / "gazette" / "article.html"]
    written = []
    for source in sources:
        markup = source.read_text(encoding="utf-8").replace("{{header}}", "")
        name = source.stem if source.parent.name == "articles" else source.parent.name
        for variant, extra in {"saved": "", **_THIRD_PARTY}.items():
            page = directory / f"{name}-{variant}.html"
            page.write_text(markup.replace("</head>", f"  {extra}\n</head>", 1) if extra else markup, encoding="utf-8")
            written.append(page)
    return written


def load_corpus(path: Path, keys: list[str], limit: int | None) -> list[Page]:
    """The corpus's pages in id order, those whose id starts with one of `keys` (all when empty)."""
    if not (path / "ground-truth.json").exists():
        return load_saved(path, keys, limit)
    truth = json.loads((path / "ground-truth.json").read_text())
    pages = []
    for key in sorted(truth):
        if keys and not any(key.startswith(k) for k in keys):
            continue
        file = path / "html" / f"{key}.html.gz"
        if not file.exists():
            continue
        body = file.read_bytes()
        markup = gzip.decompress(body).decode("utf-8", errors="replace")
        text = truth[key]["articleBody"]
        pages.append(Page(key, truth[key]["url"], document_title(markup), words(text), body, phrase_of(text)))
        if limit is not None and len(pages) >= limit:
            break
    return pages


@contextlib.contextmanager
def serve_corpus(pages: list[Page]) -> Iterator[str]:
    """The pages at `/p/<id>` on 127.0.0.1, as saved; `/` a small page; anything else a quick 404."""
    by_key = {p.key: p.body for p in pages}
    index = f"<!doctype html><title>{INDEX_TITLE}</title><p>{len(pages)} pages.</p>".encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = by_key.get(self.path.removeprefix("/p/")) if self.path.startswith("/p/") else None
            status, payload = (200, body) if body is not None else (200, index) if self.path == "/" else (404, b"")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")  # the corpus's pages are utf-8
            if body is not None:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="corpus", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def blackhole() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts every connection and never answers (reads and drops)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
    listener.setblocking(False)
    stop_r, stop_w = socket.socketpair()
    chooser = selectors.DefaultSelector()
    chooser.register(listener, selectors.EVENT_READ)
    chooser.register(stop_r, selectors.EVENT_READ)

    def run() -> None:
        while True:
            for key, _ in chooser.select():
                sock = key.fileobj
                if sock is stop_r:
                    return
                if sock is listener:
                    with contextlib.suppress(BlockingIOError):
                        conn, _addr = listener.accept()
                        conn.setblocking(False)
                        chooser.register(conn, selectors.EVENT_READ)
                    continue
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    chooser.unregister(sock)
                    sock.close()

    thread = threading.Thread(target=run, name="blackhole", daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop_w.send(b"x")
        thread.join(5)
        for key in list(chooser.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        stop_w.close()


def hole_fates(corpus: Path) -> tuple[list[str], list[str]]:
    """For `mixed`: the hosts that hang and those dropped (a stable quarter and eighth of the named ones)."""
    named = _named_hosts(corpus)
    digest = {h: hashlib.sha256(h.encode()).digest()[0] for h in named}
    return sorted(h for h in named if digest[h] % 4 == 0), sorted(h for h in named if digest[h] % 8 == 1)


_NAMED_HOST = re.compile(rb"""(?:src|href)\s*=\s*["']?(?:https?:)?//([A-Za-z0-9.-]+)""")


def _named_hosts(corpus: Path) -> set[str]:
    """The hosts named in the markup of the whole corpus (whatever pages are run), so a host a
    script loads has the same fate in every run."""
    files = sorted((corpus / "html").glob("*.html.gz")) or sorted([*corpus.glob("*.html"), *corpus.glob("*.html.gz")])
    markups = (gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes() for f in files)
    return {h.decode().lower() for m in markups for h in _NAMED_HOST.findall(m)} - {"127.0.0.1", "localhost"}


def hanging_hosts(corpus: Path) -> list[str]:
    """For `mixed`: the hosts that hang (accepted, never answered)."""
    return hole_fates(corpus)[0]


def browser_wrapper(
    directory: Path,
    network: str,
    hole: int | None,
    hanging: list[str],
    drop: int | None = None,
    dropped: Sequence[str] = (),
) -> str:
    """A Chromium executable for the subjects: the system one, with the network's resolver rules.

    Rules apply in order, the first that matches wins; 127.0.0.1 and localhost are never mapped."""
    if network == "none":
        return CHROMIUM
    rules = [f"MAP {host} 127.0.0.1:{hole}" for host in (hanging if network == "mixed" else [])]
    rules += [f"MAP {host} 127.0.0.1:{drop}" for host in (dropped if network == "mixed" else [])]
    rules.append(
        f"MAP * 127.0.0.1:{hole}"
        if network == "hang"
        else f"MAP * 127.0.0.1:{drop}"
        if network == "drop"
        else "MAP * ~NOTFOUND"
    )
    rules = ", ".join([*rules, "EXCLUDE 127.0.0.1", "EXCLUDE localhost"])
    wrapper = directory / "chromium"
    # exec keeps the descriptors a driver hands over (Playwright's --remote-debugging-pipe is fds 3/4).
    wrapper.write_text(f"#!/bin/sh\nexec {CHROMIUM} '--host-resolver-rules={rules}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@dataclass
class Timeouts:
    """Seconds each step may take; `keep`: a folder to write what the servers said, or None."""

    start: float = 90.0
    navigate: float = 90.0
    state: float = 30.0
    read_all: float = 60.0
    wait: float = 10.0
    """The longest each server's own wait for the article's first words may take."""
    keep: Path | None = None


def _is_address(title: str, url: str) -> bool:
    bare = url.split("://", 1)[-1]
    return not title or title in (url, bare) or bool(re.match(r"^(https?://|127\.0\.0\.1[:/])", title))


async def _timed(timeout: float, fn: Any) -> tuple[Any, float, str | None, bool]:
    """(value or None, seconds, error, timed out) of one bounded step."""
    started = time.perf_counter()
    try:
        with anyio.fail_after(timeout):
            return await fn(), time.perf_counter() - started, None, False
    except TimeoutError:
        return None, time.perf_counter() - started, f"no answer within {timeout:g} s", True
    except StepFailed as exc:
        return None, time.perf_counter() - started, str(exc), False
    except Exception as exc:  # boundary: a server failing a page is a result, never a crash
        return None, time.perf_counter() - started, f"{type(exc).__name__}: {exc}", True


async def measure_page(subject: Subject, page: Page, site: str, limits: Timeouts) -> tuple[dict[str, Any], bool]:
    """One page on one running server: its figures, and whether the server must be restarted.

    With `limits.keep`, what the server said goes there (`<id>.<subject>.navigate|state|all.txt`)."""
    keep = limits.keep
    url = f"{site}/p/{page.key}"
    row: dict[str, Any] = {}
    said, row["navigate_s"], row["navigate_error"], stuck = await _timed(
        limits.navigate, lambda: subject.navigate(url, limits.navigate)
    )
    if said is not None:
        row["navigate_said"] = _collapse(said)[:300]
        _keep(keep, page, subject, "navigate", said)
    if stuck:
        return row, True
    state, row["state_s"], row["state_error"], stuck = await _timed(limits.state, subject.state)
    if state is None:
        return row, stuck
    _keep(keep, page, subject, "state", state)
    try:
        shown = subject.shown(state)
    except (ValueError, KeyError, TypeError) as exc:  # a state not in the server's usual form
        row["state_error"] = f"unreadable state: {type(exc).__name__}: {exc}"
        return row, False
    row.update(
        state_bytes=len(state.encode()),
        state_recall=recall(page.truth, words(shown.text)),
        title=shown.title,
        title_is_document=bool(page.title) and _collapse(shown.title) == page.title,
        title_is_address=_is_address(shown.title, url),
        shows_new_address=shown.url == url,
    )
    if isinstance(subject, Bridge):
        everything, row["read_all_s"], row["read_all_error"], stuck = await _timed(
            limits.read_all, lambda: subject.read_all(limits.read_all)
        )
        if everything is not None:
            _keep(keep, page, subject, "all", everything)
            row["read_all_bytes"] = len(everything.encode())
            row["read_all_recall"] = recall(page.truth, words(subject.plain(everything)))
    else:
        row["read_all_recall"] = row["state_recall"]  # a peer's snapshot is all it hands out
    row["reached"] = max(row["state_recall"], row.get("read_all_recall", 0.0)) >= REACHED
    if page.phrase and not stuck:
        stuck = await _after_wait(subject, page, limits, row)
    return row, stuck


async def _after_wait(subject: Subject, page: Page, limits: Timeouts, row: dict[str, Any]) -> bool:
    """The server's own wait for the article's first words, then the state read after it, into `row`."""
    said, row["wait_s"], row["wait_error"], stuck = await _timed(
        limits.wait + 10, lambda: subject.wait_text(page.phrase, limits.wait)
    )
    if said is not None:
        row["wait_bytes"] = len(said.encode())
        _keep(limits.keep, page, subject, "wait", said)
    if stuck:
        return True
    state, row["after_wait_state_s"], error, stuck = await _timed(limits.state, subject.state)
    if state is None:
        row["after_wait_error"] = error
        return stuck
    _keep(limits.keep, page, subject, "after-wait", state)
    with contextlib.suppress(ValueError, KeyError, TypeError):
        row["after_wait_bytes"] = len(state.encode())
        row["after_wait_recall"] = recall(page.truth, words(subject.shown(state).text))
    return stuck


def _keep(directory: Path | None, page: Page, subject: Subject, step: str, text: str) -> None:
    if directory is not None:
        (directory / f"{page.key}.{subject.key}.{step}.txt").write_text(text)


async def _start(kind: str, workdir: Path, site: str, browser: str, limits: Timeouts) -> Subject:
    subject = KINDS[kind](workdir, site, browser=browser)
    await subject.open(limits.start)  # not inside a cancel scope: the client's task group must close in it
    try:
        with anyio.fail_after(limits.start):
            await subject.ready(limits.start)
            await subject.navigate(site + "/")  # warm-up: the peers launch their browser at the first call
    except BaseException:
        await subject.close()
        raise
    return subject


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


async def run_subject(
    kind: str,
    pages: list[Page],
    site: str,
    browser: str,
    limits: Timeouts,
    run: dict[str, Any],
    done: Callable[[], None],
) -> None:
    """All pages on one server (restarted after a stuck step) into `run`; `done()` after each page."""
    rows: dict[str, Any] = {}
    run.update(pages=rows, loads=[_load()], restarts=0)
    restarts = 0
    with tempfile.TemporaryDirectory(prefix=f"real-pages-{kind}-") as tmp:
        subject: Subject | None = None
        try:
            for number, page in enumerate(pages, 1):
                if subject is None:
                    workdir = Path(tmp) / f"run{restarts}"
                    workdir.mkdir()
                    try:
                        subject = await _start(kind, workdir, site, browser, limits)
                    except Exception as exc:  # boundary: a server that cannot start fails this page
                        rows[page.key] = {"navigate_error": f"could not start: {type(exc).__name__}: {exc}"}
                        restarts += 1
                        continue
                row, restart = await measure_page(subject, page, site, limits)
                rows[page.key] = row
                run["restarts"] = restarts
                done()
                print(f"{kind} {number}/{len(pages)} {page.key[:8]} {_brief(row)}", file=sys.stderr, flush=True)
                if restart:
                    await subject.close()
                    subject, restarts = None, restarts + 1
        finally:
            if subject is not None:
                await subject.close()
    run["loads"].append(_load())
    run["restarts"] = restarts


def _brief(row: dict[str, Any]) -> str:
    parts = [f"nav {row.get('navigate_s', 0):.1f}s"]
    if "state_bytes" in row:
        parts.append(f"state {row['state_bytes'] / 1024:.1f}KB r={row['state_recall']:.2f}")
    if "read_all_recall" in row:
        parts.append(f"all r={row['read_all_recall']:.2f}")
    if "title" in row:
        parts.append(f"title {'doc' if row['title_is_document'] else 'ADDR' if row['title_is_address'] else 'other'}")
    errors = [row[k] for k in ("navigate_error", "state_error", "read_all_error") if row.get(k)]
    return " ".join(parts + [f"[{e[:80]}]" for e in errors])


# ---- report ----


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summary(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    titled = {p["key"] for p in raw["pages"] if p["title"]}
    out: dict[str, dict[str, Any]] = {}
    for kind, run in raw["subjects"].items():
        rows = run["pages"]
        ok = [r for r in rows.values() if "state_bytes" in r]
        out[kind] = {
            "pages": len(rows),
            "measured": len(ok),
            "reached": sum(bool(r.get("reached")) for r in ok),
            "reached_in_state": sum(r["state_recall"] >= REACHED for r in ok),
            "titled_pages": sum(k in titled for k, r in rows.items() if "title" in r),
            "titled_by_address": sum(r["title_is_address"] for k, r in rows.items() if "title" in r and k in titled),
            "title_is_document": sum(r["title_is_document"] for r in ok),
            "shows_new_address": sum(r["shows_new_address"] for r in ok),
            "navigate_errors": sum(bool(r.get("navigate_error")) for r in rows.values()),
            "median_state_bytes": _median([r["state_bytes"] for r in ok]),
            "median_navigate_s": _median([r["navigate_s"] for r in rows.values() if "navigate_s" in r]),
            "median_navigate_state_s": _median([r["navigate_s"] + r["state_s"] for r in ok]),
            "median_state_recall": _median([r["state_recall"] for r in ok]),
            "median_read_all_recall": _median([r["read_all_recall"] for r in ok if "read_all_recall" in r]),
            "restarts": run["restarts"],
            "waited": sum("after_wait_recall" in r for r in ok),
            "reached_after_wait": sum(r.get("after_wait_recall", 0.0) >= REACHED for r in ok),
            "wait_errors": sum(bool(r.get("wait_error")) for r in ok),
            "median_wait_s": _median([r["wait_s"] for r in ok if "wait_s" in r]),
            "median_after_wait_bytes": _median([r["after_wait_bytes"] for r in ok if "after_wait_bytes" in r]),
            "median_after_wait_recall": _median([r["after_wait_recall"] for r in ok if "after_wait_recall" in r]),
        }
    return out


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "bytes":
        return f"{value / 1024:.1f} KB"
    if kind == "s":
        return f"{value:.2f} s"
    if kind == "pct":
        return f"{value * 100:.1f} %"
    return str(value)


def markdown(raw: dict[str, Any]) -> str:
    kinds = [k for k in LABELS if k in raw["subjects"]]
    figures = summary(raw)
    lines = [
        f"Run {raw['started'][:16].replace('T', ' ')} UTC, network `{raw['network']}`, {len(raw['pages'])} pages "
        f"of {raw['corpus']} (sha256 {raw['corpus_sha256'][:12]}); {raw['cpus']} CPUs; "
        "load average (1/5/15 min) before/after each subject: "
        + "; ".join(f"{LABELS[k]} {' → '.join(raw['subjects'][k]['loads'])}" for k in kinds)
        + ".",
        "",
        "Versions: " + "; ".join(f"{k} {v}" for k, v in raw["versions"].items()),
        "",
        f"Command: `{raw['command']}`",
        "",
        "| | " + " | ".join(LABELS[k] for k in kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]

    def of(key: str, kind: str = "") -> list[str]:
        return [_fmt(figures[k][key], kind) for k in kinds]

    def count(key: str, total: str = "measured") -> list[str]:
        return [f"{figures[k][key]} of {figures[k][total]}" for k in kinds]

    table = [
        (f"pages where the article is reachable (≥ {REACHED:.0%} of its words)", count("reached", "pages")),
        ("… in the state read first, right after navigate", count("reached_in_state", "pages")),
        (
            "… in the state read after the server's own wait for the article's first words",
            count("reached_after_wait", "pages"),
        ),
        (
            "that wait answered an error or ran out (the words did not show, or it could not tell)",
            count("wait_errors", "measured"),
        ),
        ("median wait", of("median_wait_s", "s")),
        ("median state read after the wait", of("median_after_wait_bytes", "bytes")),
        ("median recall, state read after the wait", of("median_after_wait_recall", "pct")),
        (
            "windows titled by their address, or untitled, after navigate (pages with a `<title>`)",
            count("titled_by_address", "titled_pages"),
        ),
        ("window title is the document's `<title>`", count("title_is_document")),
        ("state shows the new page's address", count("shows_new_address")),
        ("median state an agent reads first", of("median_state_bytes", "bytes")),
        ("median navigate time", of("median_navigate_s", "s")),
        ("median navigate + state", of("median_navigate_state_s", "s")),
        ("median recall, state read first", of("median_state_recall", "pct")),
        ("median recall, everything handed out (bridge: `read_content`)", of("median_read_all_recall", "pct")),
        ("navigate answered an error or timed out", count("navigate_errors", "pages")),
        ("restarts after a stuck step", of("restarts")),
    ]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in table]
    lines += [
        "",
        "Per page (navigate s / state KB / recall in state → in everything / title: doc, ADDR or other / "
        "wait s → recall after it):",
        "",
    ]
    lines += [
        "| page | host | words | " + " | ".join(LABELS[k] for k in kinds) + " |",
        "|---|---|---:|" + "---|" * len(kinds),
    ]
    for page in raw["pages"]:
        cells = [_cell(raw["subjects"][k]["pages"].get(page["key"], {})) for k in kinds]
        lines.append(f"| {page['key'][:8]} | {page['host']} | {page['words']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(row: dict[str, Any]) -> str:
    if not row:
        return "not run"
    if "state_bytes" not in row:
        return "failed: " + str(row.get("state_error") or row.get("navigate_error"))[:60].replace("|", "/")
    title = "doc" if row["title_is_document"] else "ADDR" if row["title_is_address"] else "other"
    everything = row.get("read_all_recall")
    more = f" → {everything * 100:.0f}" if everything is not None and everything != row["state_recall"] else ""
    flag = " ✗nav" if row.get("navigate_error") else ""
    size = f"{row['state_bytes'] / 1024:.1f}"
    waited = row.get("after_wait_recall")
    after = f" / wait {row['wait_s']:.1f} s → {waited * 100:.0f} %" if waited is not None and "wait_s" in row else ""
    return f"{row['navigate_s']:.1f} / {size} / {row['state_recall'] * 100:.0f}{more} % / {title}{flag}{after}"


def merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Runs of different subjects on the same pages, network and corpus as one run (the first's header).

    Raises:
        ValueError: the runs are not comparable, or two of them measured the same subject.
    """
    merged = {**runs[0], "subjects": dict(runs[0]["subjects"])}
    for other in runs[1:]:
        for key in ("network", "corpus_sha256", "hanging_hosts", "dropped_hosts"):
            if other.get(key) != merged.get(key):
                raise ValueError(f"runs differ in {key}: {merged.get(key)!r:.60} vs {other.get(key)!r:.60}")
        if [p["key"] for p in other["pages"]] != [p["key"] for p in merged["pages"]]:
            raise ValueError("runs measured different pages")
        if both := set(other["subjects"]) & set(merged["subjects"]):
            raise ValueError(f"more than one run of {', '.join(sorted(both))}")
        merged["subjects"].update(other["subjects"])
        merged["command"] += f"` and `{other['command']}"
        theirs = other["versions"]  # a version that differs between the runs shows both
        merged["versions"] = {
            k: v if theirs.get(k, v) == v else f"{v} / {theirs[k]}" for k, v in merged["versions"].items()
        }
    return merged


# ---- main ----


async def bench(
    pages: list[Page],
    kinds: list[str],
    network: str,
    hanging: list[str],
    limits: Timeouts,
    done: Callable[[dict[str, Any]], None],
    dropped: Sequence[str] = (),
) -> dict[str, Any]:
    """Every subject in turn on every page; `done(runs so far)` after each page."""
    runs: dict[str, Any] = {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(prefix="real-pages-") as tmp:
        site = stack.enter_context(serve_corpus(pages))
        hole = stack.enter_context(blackhole()) if network in ("hang", "mixed") else None
        drop = stack.enter_context(dropper()) if network in ("drop", "mixed") else None
        browser = browser_wrapper(Path(tmp), network, hole, hanging, drop, dropped)
        for kind in kinds:
            print(f"{kind}: {len(pages)} pages, load {_load()}", file=sys.stderr, flush=True)
            runs[kind] = {}
            await run_subject(kind, pages, site, browser, limits, runs[kind], lambda: done(runs))
            done(runs)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(prog="python bench/real_pages.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "corpus", type=Path, nargs="?", help="article-extraction-benchmark checkout: html/, ground-truth.json"
    )
    parser.add_argument("--limit", type=int, help="the first N pages (in id order, after --pages)")
    parser.add_argument("--pages", default="", help="comma-separated page ids or id prefixes")
    parser.add_argument("--subjects", default="bridge,playwright,devtools", help="comma-separated, run in this order")
    parser.add_argument(
        "--network", choices=["mixed", "hang", "drop", "fail", "none"], default="mixed", help="how other hosts fail"
    )
    parser.add_argument("--wait-timeout", type=float, default=Timeouts.wait, help="seconds (default %(default)s)")
    parser.add_argument("--make-samples", type=Path, metavar="DIR", help="write saved pages from the sample site")
    parser.add_argument(
        "--navigate-timeout", type=float, default=Timeouts.navigate, help="seconds (default %(default)s)"
    )
    parser.add_argument("--state-timeout", type=float, default=Timeouts.state, help="seconds (default %(default)s)")
    parser.add_argument("--read-timeout", type=float, default=Timeouts.read_all, help="seconds (default %(default)s)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write every answer there, per page and step")
    parser.add_argument(
        "--report",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="only print the Markdown of earlier runs (one table: runs of other subjects on the same pages)",
    )
    args = parser.parse_args()
    if args.report:
        try:
            print(markdown(merge([json.loads(path.read_text()) for path in args.report])))
        except ValueError as exc:
            parser.error(str(exc))
        return
    if args.make_samples:
        for written in make_samples(args.make_samples):
            print(written)
        return
    if args.corpus is None:
        parser.error("the corpus path is required (an article-extraction-benchmark checkout, or saved pages)")
    kinds = [k for k in args.subjects.split(",") if k]
    if unknown := set(kinds) - set(KINDS):
        parser.error(f"unknown subjects: {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")
    truth_file = args.corpus / "ground-truth.json"
    saved = not truth_file.exists()
    if not saved and not (args.corpus / "html").is_dir():
        parser.error(f"{args.corpus} has ground-truth.json but no html/: give an article-extraction-benchmark checkout")
    pages = load_corpus(args.corpus, [k for k in args.pages.split(",") if k], args.limit)
    if not pages:
        parser.error("no page of the corpus matches --pages")
    limits = Timeouts(
        navigate=args.navigate_timeout,
        state=args.state_timeout,
        read_all=args.read_timeout,
        wait=args.wait_timeout,
        keep=args.keep,
    )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    # Handshake clients subscribe with resources/subscribe; the SDK warns that 2026 clients do not.
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    logging.getLogger("client").setLevel(logging.ERROR)
    started = datetime.datetime.now(datetime.UTC)
    fates = hole_fates(args.corpus) if args.network == "mixed" else ([], [])
    raw: dict[str, Any] = {
        "started": started.isoformat(),
        "command": " ".join(["python bench/real_pages.py", *sys.argv[1:]]),
        "corpus": f"saved pages in {args.corpus}" if saved else "scrapinghub/article-extraction-benchmark",
        "corpus_sha256": hashlib.sha256(
            b"".join(p.body for p in pages) if saved else truth_file.read_bytes()
        ).hexdigest(),
        "network": args.network,
        "hanging_hosts": fates[0],
        "dropped_hosts": fates[1],
        "cpus": os.cpu_count(),
        "versions": versions(),
        "timeouts": {k: v for k, v in vars(limits).items() if k != "keep"},
        "pages": [
            {
                "key": p.key,
                "url": p.url,
                "host": urlsplit(p.url).hostname,
                "title": p.title,
                "words": sum(p.truth.values()),
            }
            for p in pages
        ],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = RESULTS / f"real-pages-{started:%Y%m%d-%H%M%S}"

    def write(runs: dict[str, Any]) -> None:  # after each page, so a run cut short keeps what it measured
        raw["subjects"] = runs
        stem.with_suffix(".json").write_text(json.dumps(raw, indent=1, ensure_ascii=False))
        stem.with_suffix(".md").write_text(markdown(raw))

    anyio.run(bench, pages, kinds, args.network, raw["hanging_hosts"], limits, write, raw["dropped_hosts"])
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
