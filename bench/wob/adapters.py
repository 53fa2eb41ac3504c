"""One small interface the policies act through, and two adapters that translate it.

A policy sees a `Page`: the items the server's answer shows, in reading order, each with the
name the server gives it (a button's label, a field's label, a run of text), its value and
states where the server says them. It acts on an `Item` it picked: `press`, `fill`, `hover`,
`key`, `select`. The adapters translate, and nothing else:

* `BridgeAdapter`: `resources/read app://windows` (the tab's blocks; the address block left
  out), and the window actions `{win}__press {label, blockId}` (with `key`, a key), `__fill {fields}`,
  `__hover`. An item is addressed by the words the window shows and its block's id. As an
  agent that keeps the version it read does: when an action's answer says the window is at that
  very version (and opened no window), the next look is the page it read, not read again (a
  window's version rises whenever its blocks or summary change, seed 001 §7.1); the next look
  after that reads. So too after a fill that says nothing else changed since the version it read
  (the page it read, with the values it filled). As a client subscribed to app://windows does
  (seed 001 §4.1, §6: every change sends its `resources/updated`, then the client reads again), a
  look with no action and no `resources/updated` since the last read is that read.
  `skipped`/`skipped_bytes` count those looks and what the reads would have cost.
* `PlaywrightAdapter`: `browser_snapshot` (its YAML, refs kept), and `browser_click`,
  `browser_type`, `browser_hover`, `browser_press_key`, `browser_select_option`. An item is
  addressed by its ref.
* `DevtoolsAdapter` (chrome-devtools-mcp): `take_snapshot` (its text tree, uids kept), and
  `click`, `fill` (a <select>'s option too), `fill_form`, `hover`, `press_key`, `type_text`, each
  with the page's id. An item is addressed by its uid.

Every byte the server sends back (answers, state reads, tool lists) is counted by the subject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bench.peers.mcp_subject import McpSubject, StepFailed, result_text

__all__ = [
    "Adapter",
    "BridgeAdapter",
    "Counted",
    "DevtoolsAdapter",
    "Item",
    "Page",
    "PlaywrightAdapter",
    "norm",
    "parse_devtools_snapshot",
]


def norm(text: str) -> str:
    return " ".join(str(text).split()).strip()


@dataclass
class Item:
    index: int
    kind: str
    """Playwright, chrome-devtools-mcp: the role (`text` for a text run). Bridge: text, field, item (list), cell,
    notice, media."""
    name: str
    value: Any = None
    states: frozenset[str] = frozenset()
    options: tuple[str, ...] = ()
    group: str = ""
    """The bridge: the block's id. Playwright: the ref of the nearest ancestor with one. chrome-devtools-mcp:
    the parent's uid."""
    handle: Any = None
    depth: int = 0
    parent: int | None = None


@dataclass
class Page:
    items: list[Item]
    query: str
    raw: str = ""
    loose: bool = False
    """The server's press takes any words the window shows (the bridge), not only a whole item's."""

    def texts(self) -> list[str]:
        return [i.name for i in self.items if i.name]

    def text(self) -> str:
        return "\n".join(self.texts())

    def find_all(self, name: str | Callable[[str], bool], kinds: Iterable[str] | None = None) -> list[Item]:
        want = set(kinds) if kinds is not None else None
        test: Callable[[str], bool]
        if isinstance(name, str):
            target = norm(name).lower()
            test = lambda n: norm(n).lower() == target  # noqa: E731
        else:
            test = name
        return [i for i in self.items if test(i.name) and (want is None or i.kind in want)]

    def find(self, name: str | Callable[[str], bool], kinds: Iterable[str] | None = None, nth: int = 0) -> Item:
        found = self.find_all(name, kinds)
        if len(found) <= nth:
            raise PolicyFailed(f"the page shows no {name!r} (#{nth + 1}) among {self.short()}")
        return found[nth]

    def has(self, name: str | Callable[[str], bool], kinds: Iterable[str] | None = None) -> bool:
        return bool(self.find_all(name, kinds))

    def fields(self) -> list[Item]:
        return [i for i in self.items if i.kind in FIELD_KINDS]

    def after(self, anchor: Item, test: Callable[[Item], bool]) -> Item:
        for item in self.items[anchor.index + 1 :]:
            if test(item):
                return item
        raise PolicyFailed(f"nothing after {anchor.name!r} matches")

    def short(self, n: int = 30) -> str:
        return json.dumps([f"{i.kind}:{i.name[:30]}" for i in self.items[:n]], ensure_ascii=False)


FIELD_KINDS = frozenset(
    {"field", "textbox", "searchbox", "spinbutton", "combobox", "checkbox", "radio", "listbox", "slider"}
)
TEXT_KINDS = frozenset({"textbox", "searchbox", "spinbutton"})


class PolicyFailed(Exception):
    """The policy could not go on with what the page showed (its message says why)."""


class Counted(McpSubject):
    """A subject that counts the bytes and calls of everything it hands the client."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bytes = 0
        self.list_bytes = 0
        self.calls = 0
        self.log: list[dict[str, Any]] = []
        self.record = False

    def _note(self, what: str, args: Any, text: str, error: bool = False) -> None:
        size = len(text.encode())
        self.bytes += size
        self.calls += 1
        if self.record:
            self.log.append({"call": what, "args": args, "bytes": size, "error": error, "text": text[:4000]})

    async def tool_names(self, timeout: float = 10) -> list[str]:
        before = len(self.outputs)
        names = await super().tool_names(timeout)
        self._note("tools/list", None, "".join(self.outputs[before:]))
        self.list_bytes += len("".join(self.outputs[before:]).encode())
        return names

    async def call(self, name: str, args: dict[str, Any] | None = None, timeout: float = 15) -> str:
        before = len(self.outputs)
        try:
            text = await super().call(name, args, timeout)
        except StepFailed:
            self._note(name, args, "".join(self.outputs[before:]), error=True)
            raise
        self._note(name, args, text)
        return text

    async def call_raw(self, name: str, args: dict[str, Any], timeout: float = 15) -> tuple[bool, str]:
        """(is_error, text) without raising on a tool error."""
        import anyio

        try:
            with anyio.fail_after(timeout):
                result = await self._live().call_tool(name, args)
        except TimeoutError:
            self._note(name, args, "", error=True)
            raise StepFailed(f"{name} gave no answer within {timeout:g} s") from None
        text = result_text(result)
        self.outputs.append(text)
        self._note(name, args, text, error=bool(result.is_error))
        return bool(result.is_error), text

    async def read(self, uri: str, timeout: float = 10) -> str:
        text = await super().read(uri, timeout)
        self._note(f"read {uri}", None, text)
        return text


class ActionFailed(Exception):
    """The server refused or failed an action; the message is its answer's first line."""


class Adapter:
    """What a policy may do. `look()` reads the page; the rest act on an item it showed."""

    def __init__(self, subject: Counted) -> None:
        self.s = subject
        self.page: Page | None = None
        self.lists_seen = -1
        """tools/list_changed notifications already answered by a tools/list."""
        self.verify: Callable[[str, Any, str], Awaitable[None]] | None = None
        """Called after each action the server said it did: (action, value, answer)."""

    async def _said(self, action: str, value: Any, text: str) -> str:
        if self.verify is not None:
            await self.verify(action, value, text)
        return text

    async def ready(self) -> None:
        """Once a session, after the first tools/list: what the adapter must know before the first episode."""

    async def navigate(self, url: str) -> None:
        raise NotImplementedError

    async def look(self) -> Page:
        raise NotImplementedError

    async def press(self, item: Item) -> str:
        raise NotImplementedError

    async def fill(self, item: Item, value: Any) -> str:
        raise NotImplementedError

    async def fill_many(self, pairs: list[tuple[Item, Any]]) -> None:
        for item, value in pairs:
            await self.fill(item, value)

    async def hover(self, item: Item) -> str:
        raise NotImplementedError

    async def key(self, key: str, item: Item | None = None) -> str:
        raise NotImplementedError

    async def wheel(self, item: Item, delta: int) -> str:
        """Turn the mouse wheel over `item` by `delta` px (down when positive)."""
        raise NotImplementedError

    async def select(self, item: Item, values: list[str]) -> str:
        raise NotImplementedError

    async def check(self, item: Item, on: bool) -> None:
        """Set a checkbox to `on` (pressing it only when it is not)."""
        raise NotImplementedError

    async def type_keys(self, item: Item, text: str) -> None:
        """Type `text` key by key into `item` (for pages that listen to keydown), then Enter."""
        raise NotImplementedError


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            return line.strip()[:300]
    return text.strip()[:300]


# ---------------------------------------------------------------------------------------------
# The bridge


class BridgeAdapter(Adapter):
    def __init__(self, subject: Counted) -> None:
        super().__init__(subject)
        self.win = ""
        self.version: int | None = None
        self.said: int | None = None
        """The window's version as the last action's answer said it, until the next look."""
        self.acted = True
        """Whether an action was asked for since the last read."""
        self.heard = -1
        """The `resources/updated` notifications that had come when the last read was asked for."""
        self.skipped = 0
        self.skipped_bytes = 0

    async def ready(self) -> None:
        await self.s.subscribe("app://windows")
        state = json.loads(await self.s.read("app://windows"))
        tabs = [w["id"] for w in state["windows"] if w["id"].startswith("tab-")]
        if not tabs:
            raise StepFailed("the bridge shows no tab window")
        self.win = tabs[0]

    async def navigate(self, url: str) -> None:
        self.said, self.acted = None, True
        await self.s.call(f"{self.win}__navigate", {"url": url}, timeout=60)

    async def look(self) -> Page:
        said, self.said = self.said, None
        unchanged = said is not None and said == self.version
        quiet = not self.acted and self.s.count("resource") == self.heard
        if self.page is not None and (unchanged or quiet):
            self.skipped += 1
            self.skipped_bytes += len(self.page.raw.encode())
            return self.page
        # A notification that comes during the read may be of a change the read already shows:
        # the next look reads again.
        self.acted, self.heard = False, self.s.count("resource")
        raw = await self.s.read("app://windows")
        state = json.loads(raw)
        window = next((w for w in state["windows"] if w["id"] == self.win), None)
        if window is None:
            raise PolicyFailed(f"{self.win} is not among the windows")
        self.version = window.get("version")
        items: list[Item] = []

        def add(kind: str, name: str, group: str, **extra: Any) -> None:
            shown, states = _state_suffix(name)
            extra["states"] = extra.get("states", frozenset()) | states
            items.append(Item(len(items), kind, norm(shown), group=group, handle=(shown, group), **extra))

        for block in window.get("blocks", []):
            kind, bid = block.get("type"), block.get("id", "")
            if bid == "address":
                continue
            if kind == "text":
                # A run of text blocks is shown as one block of lines: a reader takes each line.
                for line in block.get("text", "").split("\n"):
                    for run in _runs(line):
                        add("text", run, bid)
            elif kind == "notice":
                add("notice", block.get("text", ""), bid)
            elif kind == "fields":
                for f in block.get("items", []):
                    states = frozenset(
                        k for k in ("required", "invalid", "disabled", "readOnly", "sensitive") if f.get(k)
                    )
                    states |= frozenset(f.get("states", []) or [])
                    if f.get("kind"):
                        states |= {f["kind"]}
                    options = tuple(o if isinstance(o, str) else o.get("label", "") for o in f.get("options", []) or [])
                    add("field", f.get("label", ""), bid, value=f.get("value"), states=states, options=options)
            elif kind == "list":
                for entry in block.get("items", []):
                    add("item", entry if isinstance(entry, str) else entry.get("text", json.dumps(entry)), bid)
            elif kind == "table":
                for row in block.get("rows", []):
                    for cell in row if isinstance(row, list) else row.values():
                        add("cell", str(cell), bid)
            elif kind == "media":
                add("media", block.get("alt", ""), bid)
        _ordinals(items)
        query = next((i.name for i in items if i.kind == "text"), "")
        self.page = Page(items, query, raw, loose=True)
        return self.page

    def _target(self, item: Item) -> dict[str, Any]:
        label, block = item.handle
        return {"label": label, "blockId": block} if block else {"label": label}

    async def _act(self, action: str, args: dict[str, Any]) -> str:
        self.acted = True
        error, text = await self.s.call_raw(f"{self.win}__{action}", args)
        listed = _candidates(text) if error else []
        if listed and "label" in args and not re.search(r" #\d+$", args["label"]):
            # The window showed one; the refusal counts more. As an agent would: the first it lists,
            # one standing alone before words inside a longer text (a query that quotes it).
            pick = next((c for c in listed if "in" not in c), listed[0])
            retry = {**args, "label": pick["label"]}
            if pick.get("blockId"):
                retry["blockId"] = pick["blockId"]
            error, text = await self.s.call_raw(f"{self.win}__{action}", retry)
            args = retry
        if error:
            self.said = None
            raise ActionFailed(f"{action} {json.dumps(args, ensure_ascii=False)}: {_first_line(text)}")
        at = re.search(rf"\b{re.escape(self.win)} is (?:still )?at version (\d+)\.", text)
        self.said = int(at.group(1)) if at and "openedWindowIds" not in text else None
        return text

    async def press(self, item: Item) -> str:
        for attempt in range(5):
            try:
                text = await self._act("press", self._target(item))
                break
            except ActionFailed as exc:
                # "covered by …": a picker or menu still closing. As a person does: look again, retry.
                if "is covered by" not in str(exc) or attempt == 4:
                    raise
                if attempt == 1:  # still covered: a list left open, closed as a person does
                    await self.key("Escape")
                await self.look()
        return await self._said("press", item.name, text)

    async def fill(self, item: Item, value: Any) -> str:
        return await self.fill_many_text([(item, value)])

    async def fill_many(self, pairs: list[tuple[Item, Any]]) -> None:
        await self.fill_many_text(pairs)

    async def fill_many_text(self, pairs: list[tuple[Item, Any]]) -> str:
        fields = [{**self._target(item), "value": value} for item, value in pairs]
        text = await self._act("fill", {"fields": fields})
        since = re.search(r"; nothing else changed since version (\d+)\.", text)
        if self.page is not None and self.said is not None and since and int(since.group(1)) == self.version:
            # The window it read, but for the values it filled: the next look need not read it
            # (`said` is the version the answer gave). A secret field shows its mask, not the value.
            if not any("sensitive" in item.states for item, _ in pairs):
                for item, value in pairs:
                    item.value = value
                self.version = self.said
        for _item, value in pairs:
            await self._said("fill", value, text)
        return text

    async def hover(self, item: Item) -> str:
        return await self._said("hover", None, await self._act("hover", self._target(item)))

    async def wheel(self, item: Item, delta: int) -> str:
        return await self._said("hover", None, await self._act("hover", {**self._target(item), "wheel": delta}))

    async def key(self, key: str, item: Item | None = None) -> str:
        text = await self._act("press", {"key": key, **(self._target(item) if item else {})})
        return await self._said("key", key, text)

    async def select(self, item: Item, values: list[str]) -> str:
        return await self.fill(item, values if len(values) != 1 or item.states & {"multiple"} else values[0])

    async def check(self, item: Item, on: bool) -> None:
        if item.value is not on:
            await self.fill(item, on)

    async def type_keys(self, item: Item, text: str) -> None:
        # press takes one key or chord a call: a command is a call per character. The first
        # goes to the field by its label (which may change as it is typed in), the rest to the focus.
        for n, key in enumerate([*text, "Enter"]):
            await self.key(key, item if n == 0 else None)


def _candidates(text: str) -> list[dict[str, Any]]:
    """The `candidates` of an ambiguous label's refusal, from its text (the message, then the rest as JSON)."""
    _message, _, rest = text.partition("\n")
    try:
        fields = json.JSONDecoder().raw_decode(rest)[0].get("fields") or []
    except (ValueError, AttributeError):
        return []
    return [c for f in fields if isinstance(f, dict) for c in f.get("candidates") or [] if isinstance(c, dict)]


_STATE_WORDS = frozenset(
    {"expanded", "collapsed", "selected", "checked", "mixed", "pressed", "unavailable", "read-only", "guessed"}
)
_SUFFIX = re.compile(r" \(([a-z-]+(?:, [a-z-]+)*)\)$")


def _state_suffix(label: str) -> tuple[str, frozenset[str]]:
    """The window's "Section #1 (collapsed)": the label a person reads, and its states."""
    found = _SUFFIX.search(label)
    if found is not None and all(w in _STATE_WORDS for w in found.group(1).split(", ")):
        return label[: found.start()], frozenset(found.group(1).split(", "))
    return label, frozenset()


_MARK = re.compile(r" \(([a-z-]+(?:, [a-z-]+)*)\)(?=\s|$)")


def _runs(text: str) -> list[str]:
    """A line of controls as the window writes it ("reply (guessed) retweet (guessed) like"), one
    item each, as a reader splits it at the state marks; a guessed icon's name is its last words
    (at most two, the guess's own), what comes before it is text of its own."""
    runs: list[str] = []
    start = 0
    for mark in _MARK.finditer(text):
        if not all(w in _STATE_WORDS for w in mark.group(1).split(", ")):
            continue
        piece = text[start : mark.start()].strip()
        if "guessed" in mark.group(1).split(", ") and len(piece.split()) > 2:
            before, name = piece.rsplit(" ", 2)[0], " ".join(piece.split()[-2:])
            runs.append(before)
            piece = name
        runs.append(piece + mark.group(0))
        start = mark.end()
    rest = text[start:].strip()
    if rest:
        runs.append(rest)
    return [r for r in runs if r.strip()] if len(runs) > 1 else [text]


def _ordinals(items: list[Item]) -> None:
    """Same-named items are given back as the window counts them: "Reply #2" (fields apart from the rest)."""
    groups: dict[tuple[bool, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.kind == "field", " ".join(item.handle[0].split())), []).append(item)
    for same in groups.values():
        if len(same) > 1:
            for k, item in enumerate(same, 1):
                item.handle = (f"{' '.join(item.handle[0].split())} #{k}", item.handle[1])


# ---------------------------------------------------------------------------------------------
# The peers: an item is addressed by the handle of their snapshot, a refusal is an error result


class PeerAdapter(Adapter):
    """What Playwright MCP's and chrome-devtools-mcp's adapters share: a tool call whose error result
    is a refusal, and a fill that checks a box, picks an option or types (`_type`)."""

    async def _act(self, tool: str, args: dict[str, Any]) -> str:
        error, text = await self.s.call_raw(tool, args, timeout=30)
        if error:
            raise ActionFailed(f"{tool} {json.dumps(args, ensure_ascii=False)}: {_first_line(text)}")
        return text

    async def _type(self, item: Item, text: str) -> str:
        """Type `text` into `item` with the server's own tool; its answer."""
        raise NotImplementedError

    async def fill(self, item: Item, value: Any) -> str:
        if isinstance(value, bool):
            await self.check(item, value)
            return ""
        if isinstance(value, list):
            return await self.select(item, value)
        if item.kind == "combobox" and item.options:
            return await self.select(item, [value])
        return await self._said("fill", str(value), await self._type(item, str(value)))


# ---------------------------------------------------------------------------------------------
# Playwright MCP

_LINE = re.compile(
    r"^(?P<indent>\s*)- (?P<body>.*)$",
)
_HEAD = re.compile(r"^(?P<role>[a-zA-Z][\w-]*)(?: (?P<name>\"(?:[^\"\\]|\\.)*\"))?(?P<attrs>(?: \[[^\]]*\])*)$")


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        try:
            return str(json.loads(text))
        except json.JSONDecodeError:
            return text[1:-1]
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def _split_head(body: str) -> tuple[str, str | None]:
    """`role "name" [attrs]: value` → (head, value); the colon outside quotes and brackets."""
    depth, quote, i = 0, False, 0
    while i < len(body):
        c = body[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == ":" and depth == 0 and (i + 1 == len(body) or body[i + 1] == " "):
            return body[:i], body[i + 1 :].strip()
        i += 1
    return body, None


def parse_snapshot(text: str) -> list[Item]:
    """Playwright MCP's aria snapshot YAML → items in reading order (each node with its parent)."""
    block = re.search(r"```yaml\n(.*?)```", text, re.DOTALL)
    lines = (block.group(1) if block else text).splitlines()
    items: list[Item] = []
    stack: list[tuple[int, int]] = []  # (indent, item index)
    for line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        indent, body = len(m.group("indent")), m.group("body")
        if body.startswith("'") and body.rstrip().endswith(("':", "'")):
            inner = body.rstrip()
            colon = inner.endswith(":")
            body = _yaml_scalar(inner[:-1] if colon else inner) + (":" if colon else "")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        head, value = _split_head(body)
        if head.startswith("/"):  # a property (/url, /placeholder) of its parent
            continue
        if head == "text":
            item = Item(len(items), "text", norm(_yaml_scalar(value or "")), depth=indent // 2, parent=parent)
        else:
            h = _HEAD.match(head.strip())
            if not h:
                continue
            attrs = re.findall(r"\[([^\]]*)\]", h.group("attrs") or "")
            ref = next((a[4:] for a in attrs if a.startswith("ref=")), None)
            states = frozenset(a for a in attrs if not a.startswith("ref="))
            name = _yaml_scalar(h.group("name")) if h.group("name") else ""
            shown = _yaml_scalar(value) if value else ""
            role = h.group("role")
            item = Item(
                len(items), role, norm(name or shown), states=states, handle=ref, depth=indent // 2, parent=parent
            )
            if role in FIELD_KINDS:
                item.name = norm(name)
                item.value = shown
                if role in ("checkbox", "radio"):
                    item.value = "checked" in states or "checked=true" in states
            elif name and shown:
                items.append(item)
                item = Item(len(items), "text", norm(shown), depth=indent // 2 + 1, parent=item.index)
        items.append(item)
        stack.append((indent, item.index))
    for item in items:
        p = item.parent
        while p is not None and items[p].handle is None:
            p = items[p].parent
        item.group = items[p].handle if p is not None else ""
        if item.kind in ("combobox", "listbox"):
            item.options = tuple(o.name for o in items if o.parent == item.index and o.kind == "option")
    return items


def subtree(items: list[Item], root: int) -> Iterator[Item]:
    inside = {root}
    for item in items[root + 1 :]:
        if item.parent in inside:
            inside.add(item.index)
            yield item


class PlaywrightAdapter(PeerAdapter):
    async def navigate(self, url: str) -> None:
        await self.s.call("browser_navigate", {"url": url}, timeout=60)

    async def look(self) -> Page:
        raw = await self.s.call("browser_snapshot", {}, timeout=30)
        items = parse_snapshot(raw)
        first = next((i for i in items if i.name), None)
        query = ""
        if first is not None:
            root = first.parent if first.kind == "text" and first.parent is not None else first.index
            parts = [items[root].name] if items[root].kind != "generic" or not list(subtree(items, root)) else []
            parts += [i.name for i in subtree(items, root) if i.name]
            query = norm(" ".join(p for p in parts if p))
        self.page = Page(items, query, raw)
        return self.page

    def _target(self, item: Item) -> dict[str, Any]:
        if item.handle is None:
            # A text run has no ref: the nearest ancestor that has one is what a click on it hits.
            if not item.group:
                raise PolicyFailed(f"{item.name!r} has no ref to act on")
            return {"element": item.name[:80], "target": item.group}
        return {"element": (item.name or item.kind)[:80], "target": item.handle}

    async def press(self, item: Item) -> str:
        return await self._said("press", item.name, await self._act("browser_click", self._target(item)))

    async def _type(self, item: Item, text: str) -> str:
        return await self._act("browser_type", {**self._target(item), "text": text})

    async def hover(self, item: Item) -> str:
        return await self._said("hover", None, await self._act("browser_hover", self._target(item)))

    async def wheel(self, item: Item, delta: int) -> str:
        raise PolicyFailed("browser_mouse_wheel is offered only with --caps=vision, not in the default set run here")

    async def key(self, key: str, item: Item | None = None) -> str:
        if item is not None:
            await self.press(item)
        return await self._said("key", key, await self._act("browser_press_key", {"key": key}))

    async def select(self, item: Item, values: list[str]) -> str:
        text = await self._act("browser_select_option", {**self._target(item), "values": values})
        return await self._said("fill", values, text)

    async def check(self, item: Item, on: bool) -> None:
        if bool(item.value) != on:
            await self.press(item)

    async def type_keys(self, item: Item, text: str) -> None:
        args = {**self._target(item), "text": text, "slowly": True, "submit": True}
        await self._said("key", text, await self._act("browser_type", args))


# ---------------------------------------------------------------------------------------------
# chrome-devtools-mcp

_DT_BARE = (
    "disableable|disabled|expandable|expanded|focusable|focused|selectable|selected|modal|multiline|"
    "multiselectable|readonly|required|busy|atomic|checked|pressed"
)
_DT_KEYS = (
    "value|description|keyshortcuts|roledescription|valuetext|url|checked|pressed|level|valuemax|valuemin|"
    "autocomplete|haspopup|invalid|orientation|live|relevant|errormessage|details"
)
_DT_TAIL = re.compile(rf'(?: (?:(?:{_DT_BARE})(?= |$)|(?:{_DT_KEYS})=".*?"(?= |$)))*', re.DOTALL)
"""What follows a node's name: its attributes, bare state words and `key="value"` (values unescaped)."""
_DT_ATTR = re.compile(rf' (?:(?P<bare>{_DT_BARE})(?= |$)|(?P<key>{_DT_KEYS})=")')
_DT_NODE = re.compile(r"^(?P<indent>(?:  )*)uid=(?P<uid>\S+)(?P<rest>.*)$", re.DOTALL)
_DT_MARK = " [selected in the DevTools Elements panel]"


def _dt_quoted(text: str, start: int) -> tuple[str, int]:
    """The text from `start` to the first `"` after which only attributes follow; and where that ends."""
    at = start
    while True:
        end = text.find('"', at)
        if end < 0:
            return text[start:], len(text)
        if _DT_TAIL.fullmatch(text, end + 1):
            return text[start:end], end + 1
        at = end + 1


def _dt_line(rest: str) -> tuple[str, str, dict[str, str | bool]]:
    """` role "name" attrs` (a node's line after its uid) → role, name, attributes. Names and values
    are printed between double quotes with no escaping, so a quote ends one only where nothing but
    attributes follows it. A text run prints no role."""
    rest = rest.removesuffix(_DT_MARK)
    role, name = "", ""
    m = re.match(r" ([A-Za-z][\w-]*)(?= |$)", rest)
    if m is not None:
        role, rest = m.group(1), rest[m.end() :]
    at = 0
    if rest.startswith(' "'):
        name, at = _dt_quoted(rest, 2)
    attrs: dict[str, str | bool] = {}
    while (a := _DT_ATTR.match(rest, at)) is not None:
        if a.group("bare"):
            attrs[a.group("bare")] = True
            at = a.end()
        else:
            attrs[a.group("key")], at = _dt_quoted(rest, a.end())
    return role, name, attrs


_DT_KINDS = {"StaticText": "text", "ignored": "none"}
_DT_SKIP = frozenset({"RootWebArea", "LineBreak"})
"""No item: the document (named by the page's title), a line break (a node whose name is a newline)."""


def parse_devtools_snapshot(text: str) -> list[Item]:
    """chrome-devtools-mcp's `take_snapshot` text → items in reading order (each node with its parent).

    One node a line, two spaces a depth: `uid=<id> <role> "<name>" <attrs>`; a text run prints no
    role (kind `text` here). Every node has a uid: each item is its own handle, and its group is
    its parent's uid. The instruction MiniWoB puts at the top reads as a row of text runs (its bold
    words are runs of their own, its block is no node): the runs that continue one another (a
    space or punctuation between them, a quote still open) are read as one text, the page's first."""
    at = text.find("## Latest page snapshot\n")
    body = text[at + len("## Latest page snapshot\n") :] if at >= 0 else text
    nodes: list[list[str]] = []  # [indent, uid, rest]; a line that starts no node continues the last
    for line in body.split("\n"):
        m = _DT_NODE.match(line)
        if m is not None:
            nodes.append([m.group("indent"), m.group("uid"), m.group("rest")])
        elif nodes and line.startswith("## "):
            break
        elif nodes:
            nodes[-1][2] += "\n" + line
    for node in nodes:  # the blank line that ends the snapshot continues no name
        node[2] = node[2].rstrip("\n")
    items: list[Item] = []
    raws: list[str] = []
    stack: list[tuple[int, int | None, str]] = []  # (depth, item index or None, uid)
    for indent, uid, rest in nodes:
        depth = len(indent) // 2
        role, name, attrs = _dt_line(rest)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = next((s[1] for s in reversed(stack) if s[1] is not None), None)
        group = stack[-1][2] if stack else ""
        stack.append((depth, None, uid))
        if role in _DT_SKIP:
            continue
        kind = _DT_KINDS.get(role or "StaticText", role)
        states = frozenset(k for k, v in attrs.items() if v is True)
        item = Item(len(items), kind, norm(name), states=states, group=group, handle=uid, depth=depth, parent=parent)
        if kind in FIELD_KINDS or "value" in attrs:
            item.value = attrs.get("value", "")
            if kind in ("checkbox", "radio"):
                item.value = attrs.get("checked") is True
        stack[-1] = (depth, item.index, uid)
        items.append(item)
        raws.append(name)
    for item in items:
        if item.kind in ("combobox", "listbox"):
            item.options = tuple(o.name for o in items if o.parent == item.index and o.kind == "option")
    items = _dt_instruction(items, raws)
    # A run of white space between two others says nothing a reader reads: no item.
    return _dt_drop(items, {i.index for i in items if i.kind == "text" and not i.name})


def _dt_drop(items: list[Item], gone: set[int]) -> list[Item]:
    """`items` without those at the indexes `gone` (text runs: no item's parent), renumbered."""
    if not gone:
        return items
    shift, before = 0, {}
    for item in items:
        before[item.index] = shift
        shift += item.index in gone
    kept = [i for i in items if i.index not in gone]
    for item in kept:
        item.index -= before[item.index]
        if item.parent is not None:
            item.parent -= before[item.parent]
    return kept


def _dt_instruction(items: list[Item], raws: list[str]) -> list[Item]:
    """The first text and the runs that continue it (as a reader joins them) as one item."""
    first = next((i for i in items if i.name), None)
    if first is None or first.kind != "text":
        return items
    said, last = raws[first.index], first.index
    for k in range(first.index + 1, len(items)):
        run, nxt = items[k], raws[k]
        if run.kind != "text" or run.parent != first.parent:
            break
        if said.count('"') % 2 == 0 and not (said[-1:].isspace() or re.match(r"[\s.,;:!?)]", nxt)):
            break  # no quote open, no space or punctuation between: a text of its own
        said, last = said + nxt, k
    first.name = norm(said)
    return _dt_drop(items, set(range(first.index + 1, last + 1)))


class DevtoolsAdapter(PeerAdapter):
    """chrome-devtools-mcp: `take_snapshot` (its text tree, uids kept), and `click`, `fill`,
    `fill_form`, `hover`, `press_key`, `type_text`; each page tool takes the page's id, found once
    with `list_pages`. An item is addressed by its uid."""

    def __init__(self, subject: Counted) -> None:
        super().__init__(subject)
        self.page_id = 1
        self.focus: Any = None
        """The uid the last click or fill went to: a key meant for it needs no click first."""

    async def ready(self) -> None:
        pages = await self.s.call("list_pages", {}, timeout=60)
        found = re.search(r"^(\d+): .*\[selected\]", pages, re.MULTILINE)
        self.page_id = int(found.group(1)) if found else 1

    async def navigate(self, url: str) -> None:
        self.focus = None
        await self.s.call("navigate_page", {"pageId": self.page_id, "type": "url", "url": url}, timeout=60)

    async def look(self) -> Page:
        raw = await self.s.call("take_snapshot", {"pageId": self.page_id}, timeout=30)
        items = parse_devtools_snapshot(raw)
        first = next((i for i in items if i.name), None)
        self.page = Page(items, first.name if first is not None else "", raw)
        return self.page

    async def _act(self, tool: str, args: dict[str, Any]) -> str:
        return await super()._act(tool, {"pageId": self.page_id, **args})

    async def press(self, item: Item) -> str:
        text = await self._act("click", {"uid": item.handle})
        self.focus = item.handle
        return await self._said("press", item.name, text)

    async def _type(self, item: Item, text: str) -> str:
        answer = await self._act("fill", {"uid": item.handle, "value": text})
        self.focus = item.handle
        return answer

    async def fill_many(self, pairs: list[tuple[Item, Any]]) -> None:
        if len(pairs) < 2 or not all(isinstance(v, str) and i.kind in TEXT_KINDS for i, v in pairs):
            await super().fill_many(pairs)
            return
        # Its `fill_form` says to be preferred over one `fill` per field: one call for them all.
        text = await self._act("fill_form", {"elements": [{"uid": i.handle, "value": v} for i, v in pairs]})
        self.focus = pairs[-1][0].handle
        for _item, value in pairs:
            await self._said("fill", value, text)

    async def hover(self, item: Item) -> str:
        return await self._said("hover", None, await self._act("hover", {"uid": item.handle}))

    async def wheel(self, item: Item, delta: int) -> str:
        raise PolicyFailed("chrome-devtools-mcp has no wheel or scroll tool (a script through evaluate_script only)")

    async def key(self, key: str, item: Item | None = None) -> str:
        if item is not None and item.handle != self.focus:
            await self.press(item)
        return await self._said("key", key, await self._act("press_key", {"key": key}))

    async def select(self, item: Item, values: list[str]) -> str:
        if len(values) != 1:
            raise PolicyFailed("chrome-devtools-mcp's fill selects one option of a list, not several")
        # `fill` selects a <select>'s option by the text it shows.
        text = await self._act("fill", {"uid": item.handle, "value": values[0]})
        self.focus = item.handle
        return await self._said("fill", values, text)

    async def check(self, item: Item, on: bool) -> None:
        if bool(item.value) != on:
            await self.press(item)

    async def type_keys(self, item: Item, text: str) -> None:
        # `type_text` types into the focus key by key (a keydown each), then presses its submit key.
        if item.handle != self.focus:
            await self.press(item)
        await self._said("key", text, await self._act("type_text", {"text": text, "submitKey": "Enter"}))


@dataclass
class Budget:
    """Per-episode limits a policy's loops stay within."""

    looks: int = 40
    spent: int = field(default=0)
