"""Turn the per-round results into a Markdown table and a PNG chart (medians over rounds)."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .measures import BENCH_PAGES, PAGES, shown

__all__ = ["COLUMNS", "Target", "markdown_notes", "markdown_table", "markdown_targets", "targets", "write_chart"]

COLUMNS = [
    ("playwright", "Playwright MCP"),
    ("devtools", "chrome-devtools-mcp"),
    ("bridge", "bridge"),
    ("raw", "raw CDP (floor)"),
]
# (key, row label, kind)
ROWS: list[tuple[str, str, str]] = [
    ("start_first_list", "start → first `tools/list` answered", "time"),
    ("start_holds_page_tools", "… that first list holds the page's tools", "bool"),
    ("start_page_tools", "start → page's tools callable (peers: + navigate)", "time"),
]
ROWS += [(f"nav_{p.key}", f"navigate + state: {p.what}", "time") for p in PAGES]
ROWS.append(("nav_only_big", "… of which the navigate call alone: 3,000-row table", "time"))
ROWS += [(f"bytes_{p.key}", f"state bytes: {p.what} (kept?)", "bytes") for p in PAGES]
ROWS += [
    ("read_only", "read-only page tool (`get_queue_summary`, leaves the page as it is), median of 20", "time"),
    ("page_changing", "page tool that also changes the page (`list_tickets` logs the call), median of 20", "time"),
    ("confirm", "tool opens confirm() → accepted, result in hand", "time"),
    ("late_tool", "late tool (+1.5 s after load) → `tools/list_changed`, idle client", "time"),
    ("password_leaked", "typed password found in any output", "leak"),
    ("card_leaked", "typed card number found in any output", "leak"),
    # Issue 22: the sample site once more, then the pages of bench.site (no test uses them).
    ("start_state_sample", "start → page's state and tools: sample site `/` (peers: + navigate + snapshot)", "time"),
    ("page_changing_state", "… `list_tickets` + a state read afterwards, median of 10", "time"),
]
ROWS += [
    ("start_state_shop", "start → page's state and tools: bench `/shop/` (peers: + navigate + snapshot)", "time"),
    ("start_state_story", "start → page's state and tools: bench story (when started there)", "time"),
    ("start_state_tasks", "start → page's state and tools: bench tasks (when started there)", "time"),
]
for _p in BENCH_PAGES:
    assert _p.read_only is not None and _p.changing is not None
    ROWS += [
        (f"nav_{_p.key}", f"navigate + state: {_p.what}", "time"),
        (f"bytes_{_p.key}", f"state bytes: {_p.what} (kept?)", "bytes"),
        (f"ro_{_p.key}", f"{_p.key}: read-only tool `{_p.read_only.tool}` (changes nothing), median of 20", "time"),
        (f"rw_{_p.key}", f"{_p.key}: page-changing tool `{_p.changing.tool}`, median of 20", "time"),
        (f"rws_{_p.key}", f"{_p.key}: … `{_p.changing.tool}` + a state read afterwards, median of 10", "time"),
    ]
CHART_ROWS = [key for key, _label, kind in ROWS if kind == "time"]


def _numbers(values: list[Any]) -> list[float]:
    return [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def _failures(values: list[Any]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def _fmt_time(seconds: float) -> str:
    if seconds < 0.01:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 0.1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _fmt_bytes(n: float) -> str:
    return f"{n:.0f} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _readable(lost: str) -> str:
    """A lost-content entry; runs before 2026-11-30 07:00 stored `kind:regex`."""
    kind, sep, pattern = lost.partition(":")
    if not sep or "“" in lost:
        return lost
    return f"{kind} “{shown(pattern)}”"


def _shorten(reason: str) -> str:
    reason = re.sub(r"\s+", " ", reason.removeprefix("failed: "))
    return reason if len(reason) <= 110 else reason[:107] + "…"


def _cell(key: str, kind: str, rounds: list[dict[str, Any]], notes: list[dict[str, str]]) -> str:
    values = [r[key] for r in rounds if key in r]
    if not values:
        return "n/a"
    failed = _failures(values)
    numbers = _numbers(values)
    parts: list[str] = []
    if kind == "bool":
        parts.append("yes" if all(v is True for v in values) else "no" if all(v is False for v in values) else "mixed")
    elif kind == "leak":
        bools = [v for v in values if isinstance(v, bool)]
        if bools:
            parts.append("**yes**" if any(bools) else "no")
    elif numbers:
        fmt = _fmt_bytes if kind == "bytes" else _fmt_time
        text = fmt(statistics.median(numbers))
        if len(numbers) > 1 and fmt(min(numbers)) != fmt(max(numbers)):
            text += f" ({fmt(min(numbers))}–{fmt(max(numbers))})"
        parts.append(text)
        if kind == "bytes":
            found = [r.get("kept_" + key.removeprefix("bytes_")) for r in rounds]
            checks: list[list[str]] = [c for c in found if c is not None]
            lost = sorted({_readable(m) for c in checks for m in c})
            if checks and not lost:
                parts.append("all kept")
            elif lost:
                rounds_lost = sum(1 for c in checks if c)
                parts.append(f"**lost in {rounds_lost}/{len(checks)}**: " + ", ".join(lost))
        if key == "confirm":
            delivered = [r.get("confirm_result") for r in rounds if isinstance(r.get("confirm"), float)]
            parts.append("result delivered" if all(delivered) else "**result lost**")
    if failed:
        prefix = "failed" if not numbers and not parts else f"failed {len(failed)}/{len(values)}"
        parts.append(f"{prefix}: {_shorten(failed[0])}")
    return "; ".join(parts) if parts else "n/a"


def markdown_table(results: dict[str, list[dict[str, Any]]], notes: dict[str, list[dict[str, str]]]) -> str:
    """Rows = measures, columns = servers; cells = median over rounds (min–max)."""
    header = "| measure | " + " | ".join(label for _key, label in COLUMNS) + " |"
    lines = [header, "|---|" + "---|" * len(COLUMNS)]
    for key, label, kind in ROWS:
        cells = [_cell(key, kind, results.get(col, []), notes.get(col, [])) for col, _label in COLUMNS]
        if key.endswith("_leaked"):
            cells[-1] = "n/a"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Target:
    """One issue-40 target on one page: the bridge's median against the figure it is held to."""

    target: str
    page: str
    bridge: float | None
    peer: str
    """Whom it is held to, e.g. "chrome-devtools-mcp" or "the smaller peer (Playwright MCP)"."""
    against: float | None
    ratio: float | None
    limit: str
    met: bool | None
    """None when a figure is missing (failed or not run), or when this bench cannot tell."""
    why: str = ""


_PEERS = {"playwright": "Playwright MCP", "devtools": "chrome-devtools-mcp"}
CHANGING_LIMIT = 1.5
"""Item 3: a tool that changes the page, at most this many times chrome-devtools-mcp's time."""
BIG_PAGE_LIMIT = 0.5
"""Item 5: the 3,000-row page's navigate + state, at most this many times the better peer's."""


def median_of(results: dict[str, list[dict[str, Any]]], column: str, key: str) -> float | None:
    """The median over rounds of one measure of one server; None when no round has a number."""
    numbers = _numbers([r[key] for r in results.get(column, []) if key in r])
    return statistics.median(numbers) if numbers else None


def _best_peer(results: dict[str, list[dict[str, Any]]], key: str) -> tuple[str, float | None]:
    """The peer with the smallest median for `key` (the better start, the smaller state)."""
    medians = {col: median_of(results, col, key) for col in _PEERS}
    known = {col: v for col, v in medians.items() if v is not None}
    if not known:
        return "the better peer", None
    col = min(known, key=lambda c: known[c])
    return _PEERS[col], known[col]


def _ratio(bridge: float | None, against: float | None) -> float | None:
    return bridge / against if bridge is not None and against else None


def _round_ratios(results: dict[str, list[dict[str, Any]]], key: str) -> str:
    """The bridge ÷ chrome-devtools-mcp ratios of each round (rounds are paired by their order), as a
    range: a round's calls meet the page's frame clock at about one phase, and its ratio with it."""
    pairs = zip(results.get("bridge", []), results.get("devtools", []), strict=False)
    both = [_numbers([b.get(key), d.get(key)]) for b, d in pairs]
    ratios = [bridge / peer for bridge, peer in (n for n in both if len(n) == 2) if peer]
    return f"rounds {min(ratios):.2f}–{max(ratios):.2f}×" if len(ratios) > 1 else ""


def _held(
    results: dict[str, list[dict[str, Any]]], target: str, page: str, key: str, limit: float, *, devtools: bool
) -> Target | None:
    """The bridge's median for `key` against chrome-devtools-mcp's (`devtools`) or the better peer's."""
    bridge = median_of(results, "bridge", key)
    if bridge is None:
        return None
    if devtools:
        peer, against = "chrome-devtools-mcp", median_of(results, "devtools", key)
    else:
        peer, against = _best_peer(results, key)
    ratio = _ratio(bridge, against)
    met = None if ratio is None else ratio <= limit
    why = _round_ratios(results, key) if devtools else ""
    return Target(target, page, bridge, peer, against, ratio, f"≤ {limit:g}×", met, why)


def targets(results: dict[str, list[dict[str, Any]]]) -> list[Target]:
    """Issue 40's targets this bench measures, per page, from one run's per-round results (medians over rounds).

    2. a tool that changes nothing: at most the bare MCP server + 0.5 ms. This bench has no bare
       server (`bench/quiet_call_floor.py --bare` measures it): the row shows the bridge against
       chrome-devtools-mcp and raw CDP, and says n/a;
    3. a tool that changes the page ≤ 1.5 × chrome-devtools-mcp;
    4. start → first `tools/list` ≤ the better peer's;
    5. the 3,000-row page, navigate + state ≤ 0.5 × the better peer's.
    Pages without figures for the bridge are left out."""
    rows: list[Target] = []
    bench = [p.key for p in BENCH_PAGES]
    quiet = [("sample `get_queue_summary`", "read_only")] + [(p, f"ro_{p}") for p in bench]
    for page, key in quiet:
        bridge = median_of(results, "bridge", key)
        if bridge is None:
            continue
        devtools, raw = median_of(results, "devtools", key), median_of(results, "raw", key)
        why = "held to the bare server by bench/quiet_call_floor.py"
        if raw is not None:
            why = f"bridge − raw = {(bridge - raw) * 1000:+.2f} ms; {why}"
        limit = "≤ bare + 0.5 ms"
        rows.append(
            Target(
                "2 quiet tool",
                page,
                bridge,
                "chrome-devtools-mcp",
                devtools,
                _ratio(bridge, devtools),
                limit,
                None,
                why,
            )
        )
    changing = [("sample `list_tickets`", "page_changing")] + [(p, f"rw_{p}") for p in bench]
    for page, key in changing:
        row = _held(results, "3 changing tool", page, key, CHANGING_LIMIT, devtools=True)
        if row is not None:
            rows.append(row)
    for target, page, key, limit in (
        ("4 start → first `tools/list`", "sample", "start_first_list", 1.0),
        ("5 big page, navigate + state", "3,000 rows", "nav_big", BIG_PAGE_LIMIT),
    ):
        row = _held(results, target, page, key, limit, devtools=False)
        if row is not None:
            rows.append(row)
    return rows


def markdown_targets(results: dict[str, list[dict[str, Any]]]) -> str:
    """The targets as a Markdown table: the bridge, whom it is held to, the ratio, met or not."""
    lines = ["| target | page | bridge | held to | ratio | limit | met? |", "|---|---|---|---|---|---|---|"]
    for t in targets(results):
        fmt = _fmt_time
        against = "n/a" if t.against is None else f"{t.peer} {fmt(t.against)}"
        ratio = "n/a" if t.ratio is None else f"{t.ratio:.2f}×"
        met = {True: "met", False: "**not met**", None: "n/a"}[t.met]
        bridge = "n/a" if t.bridge is None else fmt(t.bridge)
        met += f" ({t.why})" if t.why else ""
        lines.append(f"| {t.target} | {t.page} | {bridge} | {against} | {ratio} | {t.limit} | {met} |")
    return "\n".join(lines)


def markdown_notes(notes: dict[str, list[dict[str, str]]]) -> str:
    """What each server said in the confirm() flow and where a password showed up (distinct notes)."""
    lines: list[str] = []
    for col, label in COLUMNS:
        for key in ("confirm", "password_leaked", "card_leaked"):
            seen = dict.fromkeys(n[key] for n in notes.get(col, []) if key in n)
            lines.extend(f"- {label}, {key}: {text[:500]}" for text in seen)
    return "\n".join(lines)


def write_chart(results: dict[str, list[dict[str, Any]]], path: Path, title: str) -> None:
    """Grouped horizontal bars, log scale, one group per time measure; a failed cell shows no bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {key: label for key, label, _kind in ROWS}
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(CHART_ROWS) * len(COLUMNS) / 2 + 1.5))
    height = 0.8 / len(COLUMNS)
    for i, (col, col_label) in enumerate(COLUMNS):
        ys, xs = [], []
        for j, key in enumerate(CHART_ROWS):
            numbers = _numbers([r[key] for r in results.get(col, []) if key in r])
            if numbers:
                ys.append(j + i * height)
                xs.append(statistics.median(numbers) * 1000)
        ax.barh(ys, xs, height=height, label=col_label)
        for j, key in enumerate(CHART_ROWS):
            rounds = [r for r in results.get(col, []) if key in r]
            if rounds and not _numbers([r[key] for r in rounds]):
                ax.text(1.05, j + i * height, f"{col_label}: failed", va="center", fontsize=6, color="dimgray")
            lost = key == "confirm" and any(r.get("confirm_result") is False for r in rounds)
            if lost and _numbers([r[key] for r in rounds]):
                ax.text(1.05, j + i * height, "result lost", va="center", fontsize=6, color="white")
    ax.set_yticks([j + 0.4 - height / 2 for j in range(len(CHART_ROWS))])
    ax.set_yticklabels([labels[k].replace("`", "") for k in CHART_ROWS], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(left=1)
    ax.set_xlabel("median over rounds, ms (log scale); no bar = failed or not offered")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=len(COLUMNS))
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
