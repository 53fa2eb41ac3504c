"""Accessibility trees → a tab's semantic view (GUI bridge §4.4, §4.5, §9; docs/protocols.md#gui-4.4). Pure.

`build_view` takes the frames gathered by `cdp_bridge.ax.collect_page` (AX nodes per frame,
plus the backend ids of secret inputs), walks them in reading order (`walk`) and
returns a `View`: the full block list, the cut-down list that fits a window's budget,
the open modal dialogs, and the facts a summary is made from.

Secret inputs (passwords, and fields whose autocomplete marks them as card data or
one-time codes) come out `sensitive` with the value masked here, before anything leaves
the bridge; `masking.mask_secrets` does the same for any other value that echoes the page.

Block ids come from a `BlockIds` table the caller keeps per window: an id stays with the
element that owns the block while it lives, and a number is never handed out twice. A run of
fields also stays with its fields: when a script re-renders a form group (a new element, so
a new key) with the same fields, the new group takes over the id of the one it replaced
(and so does its legend or hint text).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cdp_bridge.ax import FrameNodes
from webmcp.models import notice_block
from webmcp.view.masking import mask_secrets
from webmcp.view.nodes import name_of
from webmcp.view.paging import UNITS, cut_run
from webmcp.view.targets import ActionTarget, with_block_ids
from webmcp.view.walk import Heading, Keyed, walk_frames
from webmcp.view.walk_memo import Numbered, WalkMemo

__all__ = ["BlockIds", "FrameNodes", "Heading", "Limits", "Modal", "View", "WalkMemo", "build_view", "run_part"]


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a page goes into a window's state; the rest via the read tool."""

    table_rows: int = 20
    list_items: int = 20
    text_chars: int = 2_000
    options: int = 10
    """Options of a select or listbox shown in the window (all of them through read_content)."""
    budget_chars: int = 12_000
    """JSON characters of blocks in one window (the 16 KB window state leaves room for the rest)."""
    attention_chars: int = 2_000
    """Past the budget, how many more characters notices and a non-modal dialog's blocks may take."""


@dataclass
class BlockIds:
    """Stable block ids for one window: same element → same id, never an id twice."""

    prefix: str = "b"
    _next: int = 1
    _by_key: dict[Any, str] = field(default_factory=dict)
    _by_alias: dict[Any, Any] = field(default_factory=dict)
    """What a block shows (say, a run of fields' labels) → the key last seen showing it."""

    def id_for(self, key: Any, alias: Any = None, live: Collection[Any] = ()) -> str:
        """The id of the element `key` (a stable element identity), minting one if new.

        A new `key` whose `alias` was last seen on a key that is not `live` any more (the
        element was replaced by one showing the same) takes over that key's id.
        """
        found = self._by_key.get(key)
        if found is None and alias is not None:
            old = self._by_alias.get(alias)
            if old is not None and old not in live and old in self._by_key:
                found = self._by_key.pop(old)
                self._by_key[key] = found
        if found is None:
            found = f"{self.prefix}{self._next}"
            self._next += 1
            self._by_key[key] = found
        if alias is not None:
            self._by_alias[alias] = key
        return found

    def retain(self, live: Iterable[Any]) -> None:
        """Forget keys of elements that are gone; their ids are never minted again."""
        keep = set(live)
        self._by_key = {k: v for k, v in self._by_key.items() if k in keep}
        self._by_alias = {a: k for a, k in self._by_alias.items() if k in keep}


@dataclass
class Modal:
    """An open modal dialog of the page (`<dialog>` opened with `showModal()`)."""

    key: tuple[str, int]
    """(frame key, backendDOMNodeId of the dialog element): stable while it lives."""
    title: str
    """Its accessible name, or its first heading."""
    blocks: list[dict[str, Any]]
    """Its content, built and cut like a page's."""
    full_blocks: list[dict[str, Any]]
    backend_ids: frozenset[int]
    """Every node in its subtree (a declarative form tool inside belongs to the dialog)."""


@dataclass
class View:
    """What a page shows, as blocks plus the facts a summary is made from."""

    blocks: list[dict[str, Any]]
    """Fits the window's budget: long tables and lists cut (offset/total), a notice for the rest."""
    title: str
    """The main document's title (the accessible name of its root)."""
    headings: list[str]
    notices: list[dict[str, Any]]
    field_count: int
    left_out: int
    """Blocks dropped from `blocks` for the budget (tables and lists cut short not counted)."""
    full_blocks: list[dict[str, Any]]
    keys: list[Any]
    modals: list[Modal] = field(default_factory=list)
    """Open modal dialogs; their content is not in `blocks`."""
    invalid_fields: list[str] = field(default_factory=list)
    """Labels of fields marked invalid (page and modals)."""
    url: str = ""
    """The address of the document the view was read from (its root's `url`)."""
    sources: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Block id → key (frame key, backend node id, …) of each table or list read only in part."""
    outline: list[Heading] = field(default_factory=list)
    """The main document's headings outside modals, with their level and landmark."""
    targets: list[ActionTarget] = field(default_factory=list)
    """The fields, buttons and links the page shows (outside modals), with the id of the block showing each."""


def _cut(block: dict[str, Any], limits: Limits) -> dict[str, Any]:
    if block["type"] in UNITS:
        return cut_run(block, limits.table_rows if block["type"] == "table" else limits.list_items)
    if block["type"] == "fields" and any(len(i.get("options", ())) > limits.options for i in block["items"]):
        items = [
            {**i, "options": i["options"][: limits.options], "optionCount": len(i["options"])}
            if len(i.get("options", ())) > limits.options
            else i
            for i in block["items"]
        ]
        return {**block, "items": items}
    if block["type"] == "text" and len(block["text"]) > limits.text_chars:
        return {**block, "text": block["text"][: limits.text_chars] + "…"}
    return block


def _sized(
    keyed: list[Keyed], full: list[dict[str, Any]], limits: Limits, before: Numbered, now: Numbered
) -> list[tuple[dict[str, Any], int]]:
    """Each block of `full` as `_cut` leaves it, with the length of its JSON.

    A block not cut whose walked block (`keyed`) is the object the last build numbered with the
    same id has the length that build measured (`before`); every such length goes into `now`.
    """
    out: list[tuple[dict[str, Any], int]] = []
    for (_key, walked), block in zip(keyed, full, strict=True):
        cut = _cut(block, limits)
        if cut is not block:
            out.append((cut, len(json.dumps(cut, ensure_ascii=False))))
            continue
        hit = before.sizes.get(id(walked))
        if hit is not None and hit[0] is walked and hit[1] == block["id"]:
            size = hit[2]
        else:
            size = len(json.dumps(block, ensure_ascii=False))
        now.sizes[id(walked)] = (walked, block["id"], size)
        out.append((block, size))
    return out


def _fit(
    full: list[dict[str, Any]],
    ids: BlockIds,
    limits: Limits,
    scope: Any,
    over_page: Collection[str] = (),
    sized: list[tuple[dict[str, Any], int]] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The blocks that fit the budget, plus one notice saying what was cut or left out.

    Blocks are taken in reading order until one does not fit; none after it, so nothing is
    shown apart from what it belongs to (a card's category line without its card). What asks
    for attention is kept past that point: notices, and the blocks of a non-modal dialog over
    the page (`over_page`, block ids), within `limits.attention_chars` more. `sized` is each
    block cut and measured (`_sized`), when the caller has it.
    """
    blocks: list[dict[str, Any]] = []
    used = 0
    left_out = 0
    full_up = False
    cut_notes: list[str] = []
    if sized is None:
        sized = [(cut, len(json.dumps(cut, ensure_ascii=False))) for cut in (_cut(b, limits) for b in full)]
    for block, (cut, size) in zip(full, sized, strict=True):
        urgent = block["type"] == "notice" or block.get("id") in over_page
        if blocks and (full_up or used + size > limits.budget_chars):
            full_up = True
            if not urgent or used + size > limits.budget_chars + limits.attention_chars:
                left_out += 1
                continue
        used += size
        blocks.append(cut)
        if "total" in cut and cut is not block:
            unit = "rows" if cut["type"] == "table" else "items"
            cut_notes.append(f"{len(cut[unit])} of {cut['total']} {unit} of {cut['type']} {cut['id']}")
    if left_out or cut_notes:
        parts = [f"Showing {', '.join(cut_notes)}"] if cut_notes else []
        if left_out:
            parts.append(f"{left_out} more block{'s are' if left_out != 1 else ' is'} not shown")
        text = "; ".join(parts) + ". The window's read_content tool returns everything."
        blocks.append(notice_block(ids.id_for((scope, "left-out")), "info", text))
    return blocks, left_out


def _alias(key: Any, block: dict[str, Any]) -> Any:
    """What a fields or text block shows, in its frame (None for other blocks)."""
    if not isinstance(key, tuple) or not key:
        return None
    if block["type"] == "fields":
        return (key[0], "fields", tuple(str(item.get("label", "")) for item in block["items"]))
    if block["type"] == "text":  # a re-rendered group's legend or hint
        return (key[0], "text", block.get("heading"), block["text"])
    return None


def _number(
    keyed: list[Keyed], ids: BlockIds, seen: set[str], live: Collection[Any], before: Numbered, now: Numbered
) -> list[dict[str, Any]]:
    """The blocks with their ids; a block the last build numbered with the same id is the very
    object it gave then (blocks are never changed once made), so an unchanged window compares fast."""
    out: list[dict[str, Any]] = []
    for key, block in keyed:
        block_id = ids.id_for(key, _alias(key, block), live)
        if block_id in seen:  # Two blocks claiming one element: the second gets its own key.
            block_id = ids.id_for((*key, "dup", len(seen)))
        seen.add(block_id)
        hit = before.blocks.get(id(block))
        if hit is not None and hit[0] is block and hit[1] == block_id:
            numbered = hit[2]
        else:
            numbered = {"type": block["type"], "id": block_id, **{k: v for k, v in block.items() if k != "type"}}
        now.blocks[id(block)] = (block, block_id, numbered)
        out.append(numbered)
    return out


def _with_block_ids(
    targets: list[ActionTarget], ids: dict[Any, str], before: Numbered, now: Numbered
) -> list[ActionTarget]:
    """`with_block_ids(targets, ids)`, a target the last build gave the same block id being its copy then."""
    out: list[ActionTarget] = []
    for target in targets:
        block_id = ids.get(target.block_key)
        hit = before.targets.get(id(target))
        made = hit[2] if hit is not None and hit[0] is target and hit[1] == block_id else None
        if made is None:
            made = with_block_ids([target], ids)[0]
        now.targets[id(target)] = (target, block_id, made)
        out.append(made)
    return out


def build_view(
    frames: Sequence[FrameNodes | tuple[str, Sequence[dict[str, Any]]]],
    ids: BlockIds,
    secret_backend_ids: Collection[int] = (),
    limits: Limits = Limits(),  # noqa: B008 - frozen
    secret_values: Collection[str] = (),
    memo: WalkMemo | None = None,
) -> View:
    """Blocks for one tab from its frames' AX nodes, main frame first.

    `frames` are `FrameNodes` (or `(frame key, nodes)` pairs); a frame's blocks go where
    its `<iframe>` is, when the frame's `owner_backend_id` is known. Fields whose backend
    id is secret (`secret_backend_ids`, or a frame's own `secret_ids`) are masked, and so
    is any text that repeats one of `secret_values` (a page echoing what was typed). `memo`
    (the last build's of the same document) spares walking again what did not change; the
    view is the same without it.
    """
    frame_list = [f if isinstance(f, FrameNodes) else FrameNodes(f[0], list(f[1])) for f in frames]
    frame_list = [f for f in frame_list if f.nodes or f.unreachable_url] if frame_list and frame_list[0].nodes else []
    title = url = ""
    if frame_list:
        root = next((n for n in frame_list[0].nodes if not n.get("parentId")), frame_list[0].nodes[0])
        title = name_of(root)
        url = next((str(p["value"].get("value", "")) for p in root.get("properties", ()) if p["name"] == "url"), "")
    walk = walk_frames(frame_list, set(secret_backend_ids), memo=memo)
    before, now = (memo.numbered, Numbered()) if memo is not None else (Numbered(), Numbered())
    keyed, raw_modals = walk.blocks, walk.modals
    if secret_values:
        keyed = [(k, mask_secrets(b, secret_values)) for k, b in keyed]
        for raw in raw_modals:
            raw.blocks = [(k, mask_secrets(b, secret_values)) for k, b in raw.blocks]
    seen: set[str] = set()
    live_now = {k for k, _ in keyed} | {k for raw in raw_modals for k, _ in raw.blocks}
    full = _number(keyed, ids, seen, live_now, before, now)
    live = [k for k, _ in keyed]
    modals: list[Modal] = []
    for raw in raw_modals:
        modal_full = _number(raw.blocks, ids, seen, live_now, before, now)
        modal_sized = _sized(raw.blocks, modal_full, limits, before, now)
        modal_blocks, _ = _fit(modal_full, ids, limits, raw.key, (), modal_sized)
        modals.append(Modal((raw.key[0], raw.key[1]), raw.title, modal_blocks, modal_full, raw.backend_ids))
        live.extend(k for k, _ in raw.blocks)
        live.append((raw.key, "left-out"))
    all_blocks = full + [b for m in modals for b in m.full_blocks]
    all_keys = [k for k, _ in keyed] + [k for raw in raw_modals for k, _ in raw.blocks]
    sources = {block["id"]: key for key, block in zip(all_keys, all_blocks, strict=True) if "total" in block}
    # The bridge's own word on frames that did not load is no notice of the page's.
    own = {b["id"] for (key, _), b in zip(keyed, full, strict=True) if key == walk.failed_frames_key}
    over_page = {b["id"] for (key, _), b in zip(keyed, full, strict=True) if key in walk.over_page}
    blocks, left_out = _fit(full, ids, limits, "page", over_page, _sized(keyed, full, limits, before, now))
    live.append(("page", "left-out"))
    ids.retain(live)
    targets = _with_block_ids(walk.targets, {k: b["id"] for (k, _), b in zip(keyed, full, strict=True)}, before, now)
    if memo is not None:
        memo.numbered = now
    return View(
        blocks=blocks,
        title=title,
        headings=[b["text"] for b in full if b["type"] == "text" and "heading" in b],
        notices=[b for b in all_blocks if b["type"] == "notice" and b["id"] not in own],
        field_count=sum(len(b["items"]) for b in full if b["type"] == "fields"),
        left_out=left_out,
        full_blocks=full,
        keys=[k for k, _ in keyed],
        modals=modals,
        invalid_fields=[
            i["label"] for b in all_blocks if b["type"] == "fields" for i in b["items"] if i.get("invalid")
        ],
        url=url,
        sources=sources,
        outline=walk.headings,
        targets=targets,
    )


def run_part(
    frame: FrameNodes, top_id: str, kind: str, offset: int, limit: int, secret_values: Collection[str] = ()
) -> list[Any]:
    """Rows (kind "table") or items ("list") `offset`… of the run read by `cdp_bridge.ax.read_run_range`.

    `frame` holds the nodes of that read, `top_id` the table's or list's own node. What was
    not read in the range is left out. Values are masked as in `build_view`.
    """
    root = {"nodeId": "bridge-root", "role": {"type": "role", "value": "generic"}, "childIds": [top_id]}
    whole = replace(frame, nodes=[root, *frame.nodes], owner_backend_id=None)
    keyed = walk_frames([whole], set(frame.secret_ids), gaps=True).blocks
    block = next((b for _, b in keyed if b["type"] == kind), None)
    if block is None:
        return []
    run = block[UNITS[kind]][offset : offset + limit]
    if None in run:
        run = run[: run.index(None)]
    return list(mask_secrets(run, secret_values)) if secret_values else run
