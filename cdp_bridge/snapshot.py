"""Accessibility tree → semantic blocks (seed 001 §4.4). Pure functions, no I/O.

`build_view` walks the nodes of `Accessibility.getFullAXTree` (one list per frame) in
reading order and emits flat blocks: `text` for headings and prose, `fields` for form
controls, `table`, `list`, `notice` for alerts and status messages, `media` for images.
Hidden content is already marked `ignored` by Chromium and is skipped. Secret inputs
(passwords, and the backend node ids the caller found to be card numbers or one-time
codes) come out `sensitive` with the value masked here, before anything leaves the bridge.

Block ids come from a `BlockIds` table the caller keeps per window, so an id stays with
its element while the element lives and is never handed out twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MASK", "BlockIds", "View", "build_view", "Limits"]

MASK = "••••••"

_FIELD_ROLES = {
    "textbox", "searchbox", "combobox", "checkbox", "radio", "spinbutton", "slider", "switch",
    "listbox", "textfield", "TextField", "menulistpopup",
}
_NOTICE_SEVERITY = {"alert": "error", "alertdialog": "error", "status": "info", "log": "info", "marquee": "info"}
_SKIP_ROLES = {"LabelText", "InlineTextBox", "ListMarker", "MenuListPopup", "button", "Iframe", "dialog"}
_BOUNDARY_ROLES = {
    "paragraph", "generic", "main", "region", "article", "section", "navigation", "banner",
    "contentinfo", "complementary", "form", "group", "blockquote", "figure", "Section", "div",
    "DescriptionList", "term", "definition", "listitem", "cell", "row",
}


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a page goes into a window's state; the rest via the read tool."""

    table_rows: int = 20
    list_items: int = 20
    text_chars: int = 600
    budget_chars: int = 12_000


@dataclass
class BlockIds:
    """Stable block ids for one window: same element → same id, never an id twice."""

    prefix: str = "b"
    _next: int = 1
    _by_key: dict[Any, str] = field(default_factory=dict)

    def id_for(self, key: Any) -> str:
        """The id of the element `key` (a stable element identity), minting one if new."""
        found = self._by_key.get(key)
        if found is None:
            found = f"{self.prefix}{self._next}"
            self._next += 1
            self._by_key[key] = found
        return found

    def retain(self, live: Iterable[Any]) -> None:
        """Forget keys of elements that are gone; their ids are never minted again."""
        keep = set(live)
        self._by_key = {k: v for k, v in self._by_key.items() if k in keep}


@dataclass
class View:
    """What a page shows, as blocks plus the facts a summary is made from."""

    blocks: list[dict[str, Any]]
    title: str
    """The main document's title (the accessible name of its root)."""
    headings: list[str]
    notices: list[dict[str, Any]]
    field_count: int
    left_out: int
    full_blocks: list[dict[str, Any]]
    keys: list[Any]


def _name(node: Mapping[str, Any]) -> str:
    return str(node.get("name", {}).get("value", "") or "").strip()


def _value(node: Mapping[str, Any]) -> Any:
    return node.get("value", {}).get("value")


def _prop(node: Mapping[str, Any], name: str) -> Any:
    for prop in node.get("properties", ()):
        if prop.get("name") == name:
            return prop.get("value", {}).get("value")
    return None


def _role(node: Mapping[str, Any]) -> str:
    return str(node.get("role", {}).get("value", ""))


class _Walker:
    def __init__(self, nodes: Sequence[Mapping[str, Any]], frame_key: str, secret_ids: set[int]) -> None:
        self.by_id = {n["nodeId"]: n for n in nodes}
        self.frame_key = frame_key
        self.secret_ids = secret_ids
        self.out: list[tuple[Any, dict[str, Any]]] = []
        self._text: list[str] = []
        self._text_key: Any = None
        self._fields: list[dict[str, Any]] = []
        self._fields_key: Any = None

    def key(self, node: Mapping[str, Any]) -> Any:
        return (self.frame_key, node.get("backendDOMNodeId", node["nodeId"]))

    def text_of(self, node: Mapping[str, Any]) -> str:
        parts: list[str] = []
        self._collect_text(node, parts)
        return " ".join("".join(parts).split())

    def _collect_text(self, node: Mapping[str, Any], parts: list[str]) -> None:
        role = _role(node)
        if role == "StaticText":
            parts.append(_name(node))
            return
        if role in ("InlineTextBox", "ListMarker"):
            return
        for child_id in node.get("childIds", ()):
            child = self.by_id.get(child_id)
            if child is not None and not self._hidden(child):
                self._collect_text(child, parts)

    @staticmethod
    def _hidden(node: Mapping[str, Any]) -> bool:
        return bool(node.get("ignored")) and _role(node) not in ("generic", "none", "")

    def flush(self) -> None:
        text = " ".join("".join(self._text).split())
        if text:
            self.out.append((self._text_key, {"type": "text", "text": text}))
        self._text, self._text_key = [], None
        if self._fields:
            self.out.append((self._fields_key, {"type": "fields", "items": self._fields}))
        self._fields, self._fields_key = [], None

    def walk(self, node: Mapping[str, Any]) -> None:
        if node.get("ignored"):
            for child_id in node.get("childIds", ()):
                child = self.by_id.get(child_id)
                if child is not None:
                    self.walk(child)
            return
        role = _role(node)
        if role == "StaticText":
            if self._text_key is None:
                self._text_key = self.key(node)
            self._text.append(_name(node))
            return
        if role == "link":
            if self._text_key is None:
                self._text_key = self.key(node)
            # Separate links from their neighbours: a nav bar of links has no spaces of its own.
            self._text.append(f" {self.text_of(node) or _name(node)} ")
            return
        if role in _SKIP_ROLES:
            return
        if role == "heading":
            self.flush()
            text = self.text_of(node) or _name(node)
            if text:
                self.out.append((self.key(node), {"type": "text", "text": text, "heading": _prop(node, "level") or 1}))
            return
        if role.lower() in _FIELD_ROLES or role in ("checkbox", "radio"):
            if self._text:
                text_key, text = self._text_key, self._text
                self._text, self._text_key = [], None
                joined = " ".join("".join(text).split())
                if joined:
                    self.out.append((text_key, {"type": "text", "text": joined}))
            if not self._fields:
                self._fields_key = self.key(node)
            self._fields.append(self.field_item(node))
            return
        if role in _NOTICE_SEVERITY:
            self.flush()
            text = self.text_of(node) or _name(node)
            if text:
                self.out.append((self.key(node), {"type": "notice", "severity": _NOTICE_SEVERITY[role], "text": text}))
            return
        if role in ("image", "img"):
            self.flush()
            self.out.append((self.key(node), {
                "type": "media", "mimeType": _guess_mime(str(_prop(node, "url") or "")),
                "url": str(_prop(node, "url") or ""), "alt": _name(node),
            }))
            return
        if role in ("table", "grid", "treegrid"):
            self.flush()
            self.out.append((self.key(node), self.table(node)))
            return
        if role == "list":
            self.flush()
            self.out.append((self.key(node), self.list_block(node)))
            return
        boundary = role in _BOUNDARY_ROLES
        if boundary:
            self.flush()
        for child_id in node.get("childIds", ()):
            child = self.by_id.get(child_id)
            if child is not None:
                self.walk(child)
        if boundary:
            self.flush()

    def field_item(self, node: Mapping[str, Any]) -> dict[str, Any]:
        role = _role(node)
        label = _name(node) or role
        backend = node.get("backendDOMNodeId")
        if role in ("checkbox", "switch", "radio"):
            value: Any = str(_prop(node, "checked")) == "true"
        else:
            value = _value(node)
            if value is None:
                value = ""
        item: dict[str, Any] = {"label": label, "value": value}
        secret = backend in self.secret_ids or (isinstance(value, str) and value != "" and set(value) == {"•"})
        if secret:
            item["value"] = MASK if value not in ("", None) else ""
            item["sensitive"] = True
        if str(_prop(node, "invalid") or "false") not in ("false", "None"):
            item["invalid"] = True
        if _prop(node, "required"):
            item["required"] = True
        return item

    def table(self, node: Mapping[str, Any]) -> dict[str, Any]:
        columns: list[str] = []
        rows: list[list[str]] = []
        for row in self._descendants(node, {"row"}):
            cells = [c for c in self._children(row) if _role(c) in ("cell", "gridcell", "columnheader", "rowheader")]
            if cells and all(_role(c) == "columnheader" for c in cells) and not columns:
                columns = [self.text_of(c) or _name(c) for c in cells]
            elif cells:
                rows.append([self.text_of(c) or _name(c) for c in cells])
        return {"type": "table", "columns": columns, "rows": rows}

    def list_block(self, node: Mapping[str, Any]) -> dict[str, Any]:
        items = [self.text_of(item) for item in self._children(node) if _role(item) == "listitem"]
        return {"type": "list", "items": items}

    def _children(self, node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        out: list[Mapping[str, Any]] = []
        for child_id in node.get("childIds", ()):
            child = self.by_id.get(child_id)
            if child is None:
                continue
            if child.get("ignored") or _role(child) in ("generic", "rowgroup"):
                out.extend(self._children(child))
            else:
                out.append(child)
        return out

    def _descendants(self, node: Mapping[str, Any], roles: set[str]) -> list[Mapping[str, Any]]:
        found: list[Mapping[str, Any]] = []
        for child in self._children(node):
            if _role(child) in roles:
                found.append(child)
            elif _role(child) not in ("table", "grid"):
                found.extend(self._descendants(child, roles))
        return found


def _guess_mime(url: str) -> str:
    lowered = url.lower().split("?", 1)[0]
    for ext, mime in ((".svg", "image/svg+xml"), (".png", "image/png"), (".gif", "image/gif"), (".webp", "image/webp")):
        if lowered.endswith(ext):
            return mime
    return "image/jpeg" if lowered.endswith((".jpg", ".jpeg")) else "image/*"


def _cut(block: dict[str, Any], limits: Limits) -> dict[str, Any]:
    if block["type"] == "table" and len(block["rows"]) > limits.table_rows:
        return {**block, "rows": block["rows"][: limits.table_rows], "offset": 0, "total": len(block["rows"])}
    if block["type"] == "list" and len(block["items"]) > limits.list_items:
        return {**block, "items": block["items"][: limits.list_items], "offset": 0, "total": len(block["items"])}
    if block["type"] == "text" and len(block["text"]) > limits.text_chars:
        return {**block, "text": block["text"][: limits.text_chars] + "…", "truncated": True}
    return block


def build_view(
    frames: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
    ids: BlockIds,
    secret_backend_ids: Iterable[int] = (),
    limits: Limits = Limits(),
) -> View:
    """Blocks for one tab from its frames' AX nodes, main frame first.

    `frames` pairs a frame key (stable per document) with that frame's nodes.
    """
    secret = set(secret_backend_ids)
    keyed: list[tuple[Any, dict[str, Any]]] = []
    title = ""
    if frames and frames[0][1]:
        title = _name(next((n for n in frames[0][1] if not n.get("parentId")), frames[0][1][0]))
    for frame_key, nodes in frames:
        if not nodes:
            continue
        walker = _Walker(nodes, frame_key, secret)
        roots = [n for n in nodes if not n.get("parentId")]
        for root in roots[:1]:
            walker.walk(root)
        walker.flush()
        keyed.extend(walker.out)
    full: list[dict[str, Any]] = []
    for key, block in keyed:
        full.append({"type": block["type"], "id": ids.id_for(key), **{k: v for k, v in block.items() if k != "type"}})
    ids.retain(k for k, _ in keyed)
    blocks: list[dict[str, Any]] = []
    used = 0
    left_out = 0
    for block in full:
        cut = _cut(block, limits)
        size = len(repr(cut))
        if used + size > limits.budget_chars and blocks:
            left_out += 1
            continue
        used += size
        blocks.append(cut)
    if left_out:
        blocks.append({
            "type": "notice", "id": f"{ids.prefix}-more", "severity": "info",
            "text": f"{left_out} more blocks are not shown here; the window's read_content tool returns them all.",
        })
    headings = [b["text"] for b in full if b["type"] == "text" and "heading" in b]
    notices = [b for b in full if b["type"] == "notice"]
    field_count = sum(len(b["items"]) for b in full if b["type"] == "fields")
    return View(blocks, title, headings, notices, field_count, left_out, full, [k for k, _ in keyed])
