#!/usr/bin/env python
"""Pages with no WebMCP tools, side by side: the bridge's window actions and Playwright MCP (issue 20).

    python bench/page_actions.py [--rounds 3] [--only bridge,playwright,playwright-secrets] [--tasks signin,…]

The tasks are those of the Harbor Outfitters pages (`/plain/`, sample_site/README.md): sign
in, search and open a result, a three-page checkout with a confirm() before paying, follow
two links between articles, and icon-only buttons. Each is one script of abstract steps
(`Goto`, `Look`, `Fill`, `Press`, `Submit`, `Accept`), played by a driver per server with that
server's own tools, as an agent that reads the page before acting on it would:

* bridge (`webmcp-bridge --headless`, stdio): `tab-N__navigate`, `resources/read
  app://windows` to look, `tab-N__fill {fields:[{label, value}]}`, `tab-N__press {label}`,
  `tab-N__submit {}`, and the dialog window's `accept`: labels as the blocks show them.
* Playwright MCP (`@playwright/mcp`, pinned in bench/peers/package.json): `browser_navigate`,
  `browser_snapshot` to look (its navigate and click answers point at a snapshot file
  instead of carrying one), `browser_fill_form` / `browser_click` / `browser_type` on the
  `ref`s the last snapshot shows, `browser_handle_dialog`.
* Playwright MCP with `--secrets` (`playwright-secrets`): the same, told the password and the
  card beforehand in a dotenv file; the agent types their names and the server their values.

Measured per task: MCP calls the agent makes (tool calls and resource reads), the bytes it
reads (UTF-8 of every tool result and resource text), wall time, whether it is done (the
site's own state, `GET /api/plain/state`, and never the server's word), whether the last
look shows the outcome (if not, the agent looks again, up to 3 times, each look counted),
and whether the password or the card number appears in anything the server put out during
the task (results, resources, notifications, lists; at the end also its stderr and the
files it wrote). The site is reset before each task; one server process
per subject and round. Writes bench/results/page-actions-<stamp>.json and .md. Nothing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import re
import statistics
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/page_actions.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.peers.__main__ import _reset_site, versions  # noqa: E402
from bench.peers.mcp_subject import StepFailed  # noqa: E402
from bench.peers.subjects import Bridge, PlaywrightMcp, Subject  # noqa: E402
from sample_site import serve_in_thread  # noqa: E402
from sample_site.plain import CARD_NUMBER, PASSWORD  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SECRETS = {"password": [PASSWORD], "card": [CARD_NUMBER, CARD_NUMBER.replace(" ", "")]}
STEP_TIMEOUT = 30.0
EXTRA_LOOKS = 3


# --- the tasks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Goto:
    path: str


@dataclass(frozen=True)
class Look:
    """The agent reads the page (to learn its labels, or to see what happened)."""


@dataclass(frozen=True)
class Field:
    label: str
    role: str
    """The ARIA role a snapshot names it by: textbox, checkbox, radio, combobox."""
    value: str


@dataclass(frozen=True)
class Fill:
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Press:
    label: str
    role: str = "button"


@dataclass(frozen=True)
class Submit:
    """Submit the page's form (the bridge's `submit`; a peer presses the form's button)."""

    button: str


@dataclass(frozen=True)
class Accept:
    """Accept the dialog the last step opened."""


Step = Goto | Look | Fill | Press | Submit | Accept


@dataclass(frozen=True)
class Task:
    key: str
    what: str
    steps: tuple[Step, ...]
    done: Callable[[dict[str, Any]], bool]
    """Is the site's state (`/api/plain/state`) the task's end state?"""
    shows: str
    """What the last look must show for the agent to see it done."""


def _orders_ok(state: dict[str, Any]) -> bool:
    orders = state["orders"]
    if len(orders) != 1:
        return False
    shipping = orders[0]["shipping"]
    return (
        orders[0]["card_last4"] == "4242"
        and orders[0]["total"] == 77.0
        and shipping
        == {"name": "Ines Berg", "country": "Norway", "speed": "express", "date": "2027-03-15", "gift_wrap": True}
    )


TASKS = [
    Task(
        "signin",
        "sign in (email, password, Remember me)",
        (
            Goto("/plain/signin.html"),
            Look(),
            Fill(
                (
                    Field("Email", "textbox", "ines@example.com"),
                    Field("Password", "textbox", PASSWORD),
                    Field("Remember me", "checkbox", "true"),
                )
            ),
            Submit("Sign in"),
            Look(),
        ),
        lambda s: s["signed_in"] == {"email": "ines@example.com", "remember": True},
        "Signed in as ines@example.com",
    ),
    Task(
        "search",
        "search “tide”, open “Reading a tide table”",
        (
            Goto("/plain/search.html"),
            Look(),
            Fill((Field("Search guides", "searchbox", "tide"),)),
            Submit("Search"),
            Look(),
            Press("Reading a tide table", "link"),
            Look(),
        ),
        lambda s: s["searches"] == ["tide"] and s["views"][-1] == "/plain/guides/tide-tables.html",
        "Reading a tide table",
    ),
    Task(
        "checkout",
        "checkout: cart → shipping (select, radio, date, checkbox) → payment, confirm()",
        (
            Goto("/plain/cart.html"),
            Look(),
            Press("Proceed to checkout"),
            Look(),
            Fill(
                (
                    Field("Full name", "textbox", "Ines Berg"),
                    Field("Country", "combobox", "Norway"),
                    Field("Express (1–2 days), €12.00", "radio", "true"),
                    Field("Delivery date", "textbox", "2027-03-15"),
                    Field("Gift wrap (€4.00)", "checkbox", "true"),
                )
            ),
            Press("Continue"),
            Look(),
            Fill((Field("Card number", "textbox", CARD_NUMBER), Field("Name on card", "textbox", "Ines Berg"))),
            Press("Pay now"),
            Accept(),
            Look(),
        ),
        _orders_ok,
        "Order number HO-5001",
    ),
    Task(
        "article",
        "article: follow “Fresnel lens”, then “Augustin Fresnel”",
        (
            Goto("/plain/articles/lighthouses.html"),
            Look(),
            Press("Fresnel lens", "link"),
            Look(),
            Press("Augustin Fresnel", "link"),
            Look(),
        ),
        lambda s: (
            s["views"][-3:]
            == [
                "/plain/articles/lighthouses.html",
                "/plain/articles/fresnel-lens.html",
                "/plain/articles/augustin-fresnel.html",
            ]
        ),
        "Augustin-Jean Fresnel",
    ),
    Task(
        "icons",
        "icon buttons: quantity 3, Add to cart, Like",
        (
            Goto("/plain/lantern.html"),
            Look(),
            Press("Increase quantity"),
            Press("Increase quantity"),
            Press("Add to cart"),
            Press("Like"),
            Look(),
        ),
        lambda s: (
            s["cart"].get("storm-lantern") == 3
            and s["liked"] == ["storm-lantern"]
            and s["likes"]["storm-lantern"] == 13
        ),
        "13",
    ),
]


# --- the drivers ---------------------------------------------------------------------------


@dataclass
class Tally:
    calls: int = 0
    bytes: int = 0
    said: list[str] = field(default_factory=list)

    def add(self, text: str) -> str:
        self.calls += 1
        self.bytes += len(text.encode())
        self.said.append(text)
        return text


class Driver:
    """Plays a task's steps with one server's tools, counting what the agent calls and reads."""

    def __init__(self, subject: Subject, site: str) -> None:
        self.subject = subject
        self.site = site
        self.tally = Tally()
        self.last_look = ""

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        return self.tally.add(await self.subject.call(tool, args, timeout=STEP_TIMEOUT))

    async def play(self, step: Step) -> None:
        if isinstance(step, Goto):
            await self.goto(self.site + step.path)
        elif isinstance(step, Look):
            self.last_look = await self.look()
        elif isinstance(step, Fill):
            await self.fill(step.fields)
        elif isinstance(step, Press):
            await self.press(step.label, step.role)
        elif isinstance(step, Submit):
            await self.submit(step.button)
        else:
            await self.accept()

    async def goto(self, url: str) -> None:
        raise NotImplementedError

    async def look(self) -> str:
        raise NotImplementedError

    async def fill(self, fields: tuple[Field, ...]) -> None:
        raise NotImplementedError

    async def press(self, label: str, role: str) -> None:
        raise NotImplementedError

    async def submit(self, button: str) -> None:
        raise NotImplementedError

    async def accept(self) -> None:
        raise NotImplementedError


class BridgeDriver(Driver):
    """The window actions, by the labels the window's blocks show."""

    subject: Bridge

    def __init__(self, subject: Subject, site: str) -> None:
        super().__init__(subject, site)
        self.opened: list[str] = []

    async def _action(self, name: str, args: dict[str, Any]) -> None:
        text = await self.call(f"{self.subject.win}__{name}", args)
        last = text.strip().splitlines()[-1] if text.strip() else "{}"
        try:
            answer = json.loads(last)
        except json.JSONDecodeError:
            answer = {}
        self.opened = list(answer.get("openedWindowIds") or []) if isinstance(answer, dict) else []

    async def goto(self, url: str) -> None:
        await self.call(f"{self.subject.win}__navigate", {"url": url})

    async def look(self) -> str:
        return self.tally.add(await self.subject.read("app://windows"))

    async def fill(self, fields: tuple[Field, ...]) -> None:
        await self._action("fill", {"fields": [{"label": f.label, "value": _bridge_value(f)} for f in fields]})

    async def press(self, label: str, role: str) -> None:
        await self._action("press", {"label": label})

    async def submit(self, button: str) -> None:
        await self._action("submit", {})

    async def accept(self) -> None:
        if not self.opened:
            raise StepFailed("the last action opened no dialog window")
        await self.call(f"{self.opened[0]}__accept", {})


def _bridge_value(field: Field) -> Any:
    return field.value == "true" if field.role in ("checkbox", "radio") else field.value


class PlaywrightDriver(Driver):
    """`browser_*` tools on the refs of the last snapshot; a new snapshot when a ref is not in it."""

    _REF = r'- {role} "{name}"[^\n]*?\[ref=(\w+)\]'

    def __init__(self, subject: Subject, site: str) -> None:
        super().__init__(subject, site)
        self.snapshot = ""

    async def _ref(self, role: str, name: str) -> str:
        pattern = self._REF.format(role=re.escape(role), name=re.escape(name))
        found = re.search(pattern, self.snapshot)
        if found is None:  # as an agent does: look again before giving up
            self.last_look = await self.look()
            found = re.search(pattern, self.snapshot)
        if found is None:
            raise StepFailed(f'the snapshot shows no {role} "{name}"')
        return found.group(1)

    async def goto(self, url: str) -> None:
        await self.call("browser_navigate", {"url": url})
        self.snapshot = ""

    async def look(self) -> str:
        self.snapshot = await self.call("browser_snapshot", {})
        return self.snapshot

    async def fill(self, fields: tuple[Field, ...]) -> None:
        if len(fields) == 1 and fields[0].role == "searchbox":
            target = await self._ref("searchbox", fields[0].label)
            await self.call("browser_type", {"element": fields[0].label, "target": target, "text": fields[0].value})
            return
        rows = [
            {"name": f.label, "type": f.role, "target": await self._ref(f.role, f.label), "value": f.value}
            for f in fields
        ]
        await self.call("browser_fill_form", {"fields": rows})

    async def press(self, label: str, role: str) -> None:
        answer = await self.call("browser_click", {"element": label, "target": await self._ref(role, label)})
        # Refs stay good while the page stays; after a navigation the agent must look again.
        if _page_url(answer) not in ("", _page_url(self.snapshot)):
            self.snapshot = ""

    async def submit(self, button: str) -> None:
        await self.press(button, "button")

    async def accept(self) -> None:
        await self.call("browser_handle_dialog", {"accept": True})


class PlaywrightWithSecrets(PlaywrightMcp):
    """Playwright MCP told the secrets beforehand (`--secrets`, a dotenv file): its answers show
    `<secret>NAME</secret>` for their values, and an input that is a secret's name types its value."""

    key = "playwright-secrets"
    label = "Playwright MCP --secrets"
    NAMES = {PASSWORD: "PLAIN_PASSWORD", CARD_NUMBER: "PLAIN_CARD"}

    def __init__(self, workdir: Path, site: str) -> None:
        super().__init__(workdir, site)
        # Outside the work dir, whose files are searched for the secrets.
        self._secrets_dir = tempfile.TemporaryDirectory(prefix="page-actions-secrets-")
        env_file = Path(self._secrets_dir.name) / "secrets.env"
        env_file.write_text("".join(f"{name}={value}\n" for value, name in self.NAMES.items()))
        self.command += ["--secrets", str(env_file)]

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            self._secrets_dir.cleanup()


class PlaywrightSecretsDriver(PlaywrightDriver):
    """The agent types a secret's name where the value goes, as `--secrets` asks."""

    async def fill(self, fields: tuple[Field, ...]) -> None:
        names = PlaywrightWithSecrets.NAMES
        await super().fill(tuple(Field(f.label, f.role, names.get(f.value, f.value)) for f in fields))


def _page_url(text: str) -> str:
    found = re.search(r"^- Page URL: (.*)$", text, re.MULTILINE)
    return found.group(1).strip() if found else ""


SUBJECTS: dict[str, tuple[Callable[[Path, str], Subject], type[Driver]]] = {
    "bridge": (Bridge, BridgeDriver),
    "playwright": (PlaywrightMcp, PlaywrightDriver),
    "playwright-secrets": (PlaywrightWithSecrets, PlaywrightSecretsDriver),
}


# --- the run -------------------------------------------------------------------------------


def _site_state(site: str) -> dict[str, Any]:
    with urllib.request.urlopen(site + "/api/plain/state", timeout=5) as response:  # noqa: S310 (loopback)
        return dict(json.loads(response.read()))


def _leaks(texts: list[str]) -> list[str]:
    return sorted({kind for kind, values in SECRETS.items() for t in texts for v in values if v in t})


async def _task(subject: Subject, driver: Driver, site: str, task: Task) -> dict[str, Any]:
    await anyio.to_thread.run_sync(_reset_site, site)
    driver.tally, driver.last_look = Tally(), ""
    first_output, first_list_change = len(subject.outputs), subject.count("tools")
    started = time.perf_counter()
    failed, seen_first, extra_looks = "", False, 0
    # The agent reads the tool list as it starts the task and again after each tools/list_changed
    # (issue 40 counts them in what a task costs); apart from `bytes`, to compare with older runs.
    list_bytes, listed_at = 0, subject.count("tools")

    async def read_list() -> None:
        nonlocal list_bytes, listed_at
        listed_at = subject.count("tools")
        await subject.tool_names()
        list_bytes += len(subject.last_list.encode())

    try:
        await read_list()
        for step in task.steps:
            failed = type(step).__name__
            await driver.play(step)
            if subject.count("tools") > listed_at:
                await read_list()
        failed, seen_first = "", task.shows in driver.last_look
        # An agent that does not see the outcome yet looks again, as it would; each look counts.
        while task.shows not in driver.last_look and extra_looks < EXTRA_LOOKS:
            await anyio.sleep(0.5)
            extra_looks += 1
            driver.last_look = await driver.look()
    except (StepFailed, TimeoutError) as exc:
        failed = f"{failed}: {exc}"
    elapsed = time.perf_counter() - started
    return {
        "calls": driver.tally.calls,
        "bytes": driver.tally.bytes,
        "list_bytes": list_bytes,
        "seconds": round(elapsed, 3),
        "done": await _done(site, task),
        "seen": task.shows in driver.last_look,
        "seen_at_first_look": seen_first,
        "extra_looks": extra_looks,
        "leaks": _leaks(subject.outputs[first_output:]),
        "tools_list_changed": subject.count("tools") - first_list_change,
        "failed": failed,
    }


async def _done(site: str, task: Task) -> bool:
    """Whether the site reaches the task's end state (a request still on its way gets 5 s)."""
    with anyio.move_on_after(5):
        while not task.done(await anyio.to_thread.run_sync(_site_state, site)):  # noqa: ASYNC110 (the site has no events)
            await anyio.sleep(0.2)
        return True
    return False


async def _session(kind: str, site: str, tasks: list[Task]) -> dict[str, Any]:
    subject_cls, driver_cls = SUBJECTS[kind]
    with tempfile.TemporaryDirectory(prefix=f"page-actions-{kind}-") as workdir:
        subject = subject_cls(Path(workdir), site)
        await subject.open()
        try:
            if isinstance(subject, Bridge):
                await subject.ready(60)
            driver = driver_cls(subject, site)
            results = {task.key: await _task(subject, driver, site, task) for task in tasks}
        finally:
            await subject.close()
        # What the server wrote besides its answers: its stderr and any file in its work dir.
        elsewhere = [
            f"{kind}: {where}"
            for values in SECRETS.values()
            for v in values
            for where in subject.where_said(v)
            if not where.startswith("MCP output")  # those are counted per task
        ]
    return {"tasks": results, "secret_sightings": elsewhere}


async def bench(rounds: int, kinds: list[str], tasks: list[Task]) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    with serve_in_thread() as site:
        for round_no in range(rounds):
            order = kinds[round_no % len(kinds) :] + kinds[: round_no % len(kinds)]
            for kind in order:
                print(f"round {round_no + 1}/{rounds}: {kind} …", file=sys.stderr, flush=True)
                session = await _session(kind, site, tasks)
                for key, result in session["tasks"].items():
                    if result["failed"] or not result["done"]:
                        print(f"  {kind} {key}: done={result['done']} {result['failed']}", file=sys.stderr, flush=True)
                runs[kind].append(session)
    return runs


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _with_lists(raw: dict[str, Any], tasks: list[Task], kinds: list[str]) -> list[str]:
    """Bytes per task with the tool lists the agent read (at its start, after each list_changed), beside the first's."""
    if not all("list_bytes" in g for k in kinds for r in raw["runs"][k] for g in r["tasks"].values()):
        return []  # a run from before the lists were counted

    def total(kind: str, key: str) -> float:
        return _median([r["tasks"][key]["bytes"] + r["tasks"][key]["list_bytes"] for r in raw["runs"][kind]])

    first = kinds[0]
    head = "| task | " + " | ".join(f"{_label(k)} bytes with lists" for k in kinds) + " |"
    lines = [
        "Bytes per task with the tool lists read (median over rounds; ratio to the first subject's):",
        "",
        head,
        "|---|" + "---:|" * len(kinds),
    ]
    for task in tasks:
        cells = [task.what]
        for kind in kinds:
            value = total(kind, task.key)
            ratio = "" if kind == first else f" ({_label(first)} {total(first, task.key) / value:.2f}×)"
            cells.append(f"{value:,.0f}{ratio}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(raw: dict[str, Any], tasks: list[Task]) -> str:
    """The side-by-side table: medians over rounds; done and leaks over every round."""
    kinds = list(raw["runs"])
    head = "| task | " + " | ".join(f"{_label(k)} calls | bytes | s | done | secret in clear" for k in kinds) + " |"
    lines = [head, "|---|" + "---:|---:|---:|---|---|" * len(kinds)]
    for task in tasks:
        cells = [task.what]
        for kind in kinds:
            got = [run["tasks"][task.key] for run in raw["runs"][kind] if task.key in run["tasks"]]
            done = sum(1 for g in got if g["done"])
            leaks = sorted({leak for g in got for leak in g["leaks"]})
            cells += [
                f"{_median([g['calls'] for g in got]):g}",
                f"{_median([g['bytes'] for g in got]):,.0f}",
                f"{_median([g['seconds'] for g in got]):.2f}",
                f"{done}/{len(got)}",
                ", ".join(leaks) or "no",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    churn = []
    for kind in kinds:
        per_task = [
            f"{task.key} {_median([r['tasks'][task.key].get('tools_list_changed', 0) for r in raw['runs'][kind]]):g}"
            for task in tasks
        ]
        churn.append(f"- {_label(kind)}: " + ", ".join(per_task))
    lines += ["", "`tools/list_changed` notifications per task (median; not counted in calls or bytes):", "", *churn]
    lines += ["", *_with_lists(raw, tasks, kinds)]
    notes = []
    for kind in kinds:
        for run_no, run in enumerate(raw["runs"][kind], 1):
            for key, result in run["tasks"].items():
                if result["failed"] or not result["seen_at_first_look"]:
                    looks = result["extra_looks"]
                    later = f"it did after {looks} more look(s)" if result["seen"] else f"nor {looks} more looks"
                    why = result["failed"] or f"the look after the last step did not show “{_shows(key)}”; {later}"
                    notes.append(f"- {_label(kind)}, round {run_no}, {key}: {why}")
            notes += [f"- round {run_no}: {s[:300]}" for s in run["secret_sightings"]]
    return "\n".join(lines) + ("\n\nNotes:\n\n" + "\n".join(notes) if notes else "") + "\n"


def _shows(key: str) -> str:
    return next(t.shows for t in TASKS if t.key == key)


def _label(kind: str) -> str:
    return {"bridge": "bridge", "playwright": "Playwright MCP", "playwright-secrets": "Playwright MCP --secrets"}[kind]


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/page_actions.py", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default=",".join(SUBJECTS), help="comma-separated subset of " + ",".join(SUBJECTS))
    parser.add_argument("--tasks", default=",".join(t.key for t in TASKS))
    args = parser.parse_args()
    kinds = [k for k in args.only.split(",") if k]
    tasks = [t for t in TASKS if t.key in args.tasks.split(",")]
    if set(kinds) - set(SUBJECTS) or not tasks:
        parser.error("unknown subject or no task")
    warnings.filterwarnings("ignore", message="resources/subscribe is removed")
    logging.getLogger("client").setLevel(logging.ERROR)
    started = datetime.datetime.now(datetime.UTC)
    info = versions()
    runs = anyio.run(bench, args.rounds, kinds, tasks)
    raw = {"started": started.isoformat(), "rounds": args.rounds, "versions": info, "runs": runs}
    stamp = started.strftime("%Y%m%d-%H%M")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"page-actions-{stamp}.json").write_text(json.dumps(raw, indent=1))
    header = (
        f"Run {started:%Y-%m-%d %H:%M} UTC, {args.rounds} round(s); medians over rounds. Versions: "
        + "; ".join(f"{k} {v}" for k, v in info.items())
        + "\n\n"
    )
    document = header + markdown(raw, tasks)
    (RESULTS / f"page-actions-{stamp}.md").write_text(document)
    print(document)


if __name__ == "__main__":
    main()
