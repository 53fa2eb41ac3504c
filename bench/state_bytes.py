"""Where the bytes of the state go: the bridge's `app://windows` against the peers' snapshots.

    PYTHONPATH=$PWD .venv/bin/python bench/state_bytes.py [--subjects bridge,devtools,playwright]
        [--corpus /tmp/aeb --real 10] [--dump DIR]

Per page of the benchmark (the sample-site pages of `bench/peers/measures.py` PAGES, the
`bench.site` pages of its BENCH_PAGES, and with `--corpus` the first N real article pages of
`bench/real_pages.py`, served with other hosts failing at once), each subject navigates there
and reads its state as an agent would (the bridge: `resources/read app://windows` over MCP
stdio; chrome-devtools-mcp: `take_snapshot`; Playwright MCP: `browser_snapshot`; the dialog
page after its `open_editor` tool). Printed: the bytes of each, the bridge's bytes split by
the document's parts (envelope, window keys, blocks by type, with the bytes of the block ids),
the ratio to the smaller peer, and what of `Page.kept` the state lacks. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.peers.measures import BENCH_PAGES, PAGES, missing  # noqa: E402
from bench.peers.measures import Page as SitePage  # noqa: E402
from bench.peers.subjects import Bridge, ChromeDevtoolsMcp, PlaywrightMcp, Subject  # noqa: E402
from bench.site import serve_in_thread as serve_bench_site  # noqa: E402
from sample_site import serve_in_thread as serve_site  # noqa: E402

KINDS: dict[str, type[Subject]] = {"bridge": Bridge, "devtools": ChromeDevtoolsMcp, "playwright": PlaywrightMcp}


@dataclass(frozen=True)
class Target:
    """One page to measure: its name, its address (under `site`), and how its state is read."""

    key: str
    site: str
    path: str
    page: SitePage | None = None
    """The sample-site page with its kept texts, or None (a page with no list of kept texts)."""


@dataclass
class Row:
    bytes: dict[str, int] = field(default_factory=dict)
    split: Counter[str] = field(default_factory=Counter)
    lacks: list[str] = field(default_factory=list)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def split(text: str) -> Counter[str]:
    """The bytes of an `app://windows` text by part: `envelope` (braces, commas, the document's
    own keys), `operableWindowIds`, `window.<key>` for each window key but blocks, and
    `block.<type>` for each block type (with `block.*.id` the bytes the block ids take)."""
    doc = json.loads(text)
    parts: Counter[str] = Counter()
    for key, value in doc.items():
        if key != "windows":
            parts[key] += _size({key: value}) - 2
    for window in doc.get("windows", []):
        for key, value in window.items():
            if key != "blocks":
                parts[f"window.{key}"] += _size({key: value}) - 1  # "key":value and its comma
        for block in window.get("blocks", []):
            parts[f"block.{block.get('type', '?')}"] += _size(block) + 1
            if "id" in block:
                parts["block.*.id"] += _size({"id": block["id"]}) - 1
        parts["window.blocks"] += len('"blocks":[]')
    parts["envelope"] = len(text.encode()) - sum(v for k, v in parts.items() if k != "block.*.id")
    return parts


async def read_state(subject: Subject, target: Target) -> str:
    await subject.navigate(target.site + target.path)
    if target.page is not None and target.page.modal:
        text = await subject.open_modal()
        await subject.close_modal()
        return text
    if isinstance(subject, Bridge):
        return await _settled(subject, target.page)
    return await subject.state()


async def _settled(subject: Bridge, page: SitePage | None, quiet: float = 0.5, limit: float = 15) -> str:
    """The bridge's state once the page has rendered: it answers navigate before a script's late
    rendering (a fetch), which it then follows. Read again after each notification until the state
    holds every kept text (a page with a list of them), or no notification came for `quiet` s."""
    text = await subject.state()
    with anyio.move_on_after(limit):
        while not page or missing(page, text):
            seen = subject.count("resource")
            if not await subject.next_notification("resource", seen, quiet if not page else limit):
                break
            text = await subject.state()
    return text


async def measure(kind: str, targets: list[Target], rows: dict[str, Row], dump: Path | None, browser: str) -> None:
    with tempfile.TemporaryDirectory(prefix=f"state-bytes-{kind}-") as workdir:
        site = targets[0].site
        subject = KINDS[kind](Path(workdir), site, browser=browser)  # type: ignore[call-arg]
        await subject.open(90)
        try:
            with anyio.fail_after(120):
                if kind == "bridge":
                    await subject.start(site, 0.0)
                else:
                    await subject.ready(90)
            for target in targets:
                try:
                    with anyio.fail_after(90):
                        text = await read_state(subject, target)
                except Exception as exc:  # boundary: a page that fails is a line in the table
                    print(f"{kind} {target.key}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                row = rows.setdefault(target.key, Row())
                row.bytes[kind] = len(text.encode())
                if kind == "bridge":
                    row.split = split(text)
                    row.lacks = missing(target.page, text) if target.page else []
                if dump is not None:
                    (dump / f"{target.key}.{kind}.txt").write_text(text)
                print(f"{kind} {target.key}: {row.bytes[kind]} B", file=sys.stderr, flush=True)
        finally:
            await subject.close()


def report(rows: dict[str, Row], kinds: list[str]) -> str:
    peers = [k for k in kinds if k != "bridge"]
    head = ["page", *kinds, "bridge / smaller peer", "bridge lacks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in rows.items():
        seen = [row.bytes[p] for p in peers if p in row.bytes]
        ratio = f"{row.bytes['bridge'] / min(seen):.2f}×" if seen and "bridge" in row.bytes else "—"
        cells = [f"{row.bytes[k]:,}" if k in row.bytes else "—" for k in kinds]
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {ratio} | {', '.join(row.lacks) or '—'} |")
    lines.append("")
    for key, row in rows.items():
        if row.split:
            total = row.bytes["bridge"]
            shares = ", ".join(f"{k} {v}" for k, v in row.split.most_common())
            lines.append(f"- {key} ({total} B): {shares}")
    return "\n".join(lines)


@contextlib.contextmanager
def serve_targets(corpus: Path | None, real: int) -> Iterator[tuple[list[Target], str]]:
    """The benchmark's pages, served; and the browser executable the subjects use."""
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(prefix="state-bytes-") as tmp:
        site = stack.enter_context(serve_site())
        targets = [Target(p.key, site, p.path, p) for p in PAGES if p.key != "big"]
        targets.append(next(Target(p.key, site, p.path, p) for p in PAGES if p.key == "big"))
        bench_site = stack.enter_context(serve_bench_site())
        targets += [Target(p.key, bench_site, p.path, p) for p in BENCH_PAGES]
        browser = os.environ.get("WEBMCP_BRIDGE_BROWSER", "/usr/bin/chromium")
        if corpus is not None:
            from bench.real_pages import browser_wrapper, load_corpus, serve_corpus

            pages = load_corpus(corpus, [], real)
            real_site = stack.enter_context(serve_corpus(pages))
            targets += [Target(f"real {p.key[:8]}", real_site, f"/p/{p.key}") for p in pages]
            browser = browser_wrapper(Path(tmp), "fail", None, [])
        yield targets, browser


async def run(kinds: list[str], corpus: Path | None, real: int, dump: Path | None) -> str:
    rows: dict[str, Row] = {}
    with serve_targets(corpus, real) as (targets, browser):
        for kind in kinds:
            await measure(kind, targets, rows, dump, browser)
    one, five, _ = os.getloadavg()
    return report(rows, kinds) + f"\n\nload average {one:.1f} / {five:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/state_bytes.py", description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", default="bridge,devtools,playwright", help="comma-separated, in this order")
    parser.add_argument("--corpus", type=Path, help="article-extraction-benchmark checkout (html/, ground-truth.json)")
    parser.add_argument("--real", type=int, default=10, help="with --corpus: how many real pages (id order)")
    parser.add_argument("--dump", type=Path, help="write each state text here as <page>.<subject>.txt")
    args = parser.parse_args()
    kinds = [k for k in args.subjects.split(",") if k]
    if unknown := set(kinds) - set(KINDS):
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    logging.getLogger("client").setLevel(logging.ERROR)
    print(re.sub(r"\n{3,}", "\n\n", anyio.run(run, kinds, args.corpus, args.real, args.dump)))


if __name__ == "__main__":
    main()
