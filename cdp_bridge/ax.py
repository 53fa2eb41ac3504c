"""Raw accessibility reads of one page session: frames, their AX trees, chosen input values.

This is the I/O half of a tab's view (the pure half is `webmcp.view`). It
takes a bare `send(method, params)` coroutine so the bridge (a `CDPSession`) and the
recorder of test fixtures (`tests/record_ax.py`, a Playwright CDP session) share it and
the recorded trees are exactly what the bridge sees.

Per frame of the session's frame tree: `Accessibility.getFullAXTree {frameId}` and the
backend node id of the `<iframe>` element that owns it (`DOM.getFrameOwner`), so the
frame's blocks can be placed where the iframe sits. Secret inputs are found with a DOM
query per document (the AX tree cannot tell a card number field from any other textbox),
and their current values are read once, kept in memory only, so a page tool that echoes
them can be masked by the caller. Pages with form controls get one more query per document
for what the AX tree leaves out: which controls are `required` (Chromium 156 reports it
for text boxes only), and which the page or the person has marked invalid (`:user-invalid`
or `aria-invalid`), since Chromium reports a required select, checkbox or date input as
invalid before anyone touched it. How the text of links and spans joins the text around
them (their CSS `display`, the white space shown beside them) is read by `layout.py`.

A frame that failed to load shows Chromium's error page (`chrome-error://chromewebdata/`,
with the address it could not reach as `unreachableUrl` in `Page.getFrameTree`): its tree
is not read; the frame is kept, without nodes, with that address.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .batch import side_by_side, succeeded
from .errors import CDPError, ProtocolError
from .js import call, load
from .layout import RunningText, read_text_layout, running_text

if TYPE_CHECKING:
    from .ax_patch import Spliced

__all__ = [
    "FLAGGED_SELECTOR",
    "FORM_STATE_MAX",
    "REQUIRED_SELECTOR",
    "RUN_ROLES",
    "SMALL_DOCUMENT",
    "UNREAD",
    "FrameNodes",
    "PageNodes",
    "Send",
    "collect_page",
    "enable_accessibility",
    "has_form_controls",
    "read_frame_tree",
    "read_run_range",
]

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
T = TypeVar("T")

_VALUE_JS = "function() { return typeof this.value === 'string' ? this.value : ''; }"
_GROUP = "webmcp-bridge-secrets"
REQUIRED_SELECTOR = "input[required], select[required], textarea[required]"
FLAGGED_SELECTOR = ":user-invalid, [aria-invalid]:not([aria-invalid='false'])"
# AX roles of controls whose `required` or `invalid` the DOM must settle; a page without any skips the query.
_FORM_ROLES = frozenset(
    {"textbox", "searchbox", "combobox", "checkbox", "radio", "spinbutton", "listbox", "switch", "slider"}
    | {"Date", "DateTime", "InputTime"}
)
FORM_STATE_MAX = 200
RUN_ROLES = frozenset({"row", "listitem"})
"""Roles of a run (a table's rows, a list's items) that a partial read may leave unread past `keep`."""
UNREAD = "bridgeUnread"
"""Set (True) on a node of a run whose subtree a partial read left out; never a CDP field."""
_NESTED_RUNS = frozenset({"table", "grid", "treegrid", "list", "directory", "feed"})
# Nodes whose children the view never reads: text (its name is the text), and the <iframe>
# element, whose document is read as a frame of its own.
_LEAVES = frozenset({"StaticText", "InlineTextBox", "Iframe"})
_BATCH = 256
# Up to this many elements a document's whole tree is read in one command (a few ms).
SMALL_DOCUMENT = 2_000
_SIZE_WORLD = "cdp_bridge_size"
# How much of a document lies in rows or list items past the first `keep` of their run.
_RUNS_JS = load("runs.js")
_ERROR_PAGE = "chrome-error:"


@dataclass
class FrameNodes:
    """One frame's AX nodes and where its `<iframe>` element sits in the parent document."""

    key: str
    """Stable for the frame's current document; part of every block key."""
    nodes: list[dict[str, Any]]
    owner_backend_id: int | None = None
    """backendDOMNodeId of the owning `<iframe>` (None for the main frame or if unknown)."""
    secret_ids: set[int] = field(default_factory=set)
    """Backend ids of secret inputs in this frame's process (ids are per renderer process)."""
    required_ids: set[int] | None = None
    """Backend ids of controls with the `required` attribute (None: not read, trust the AX tree)."""
    flagged_ids: set[int] | None = None
    """Backend ids of controls shown as invalid: `:user-invalid` or `aria-invalid` (None: not read)."""
    display: dict[int, str] | None = None
    """Backend id → CSS `display` of generic, none and link nodes in running text (None: not read;
    a node left out has no layout box, or was not asked about)."""
    gaps: dict[int, tuple[str, str]] | None = None
    """Backend id → what lies right before and after it, for nodes of `display` that have
    something there: " " (white space shown) or the CSS `display` of a box edge (None: not read)."""
    frame_id: str = ""
    """The CDP frame id the nodes were read from (to read more of them later; "" in recordings)."""
    unreachable_url: str = ""
    """The address the frame failed to load ("" when it loaded): it shows an error page, not read."""
    spliced: Spliced | None = field(default=None, compare=False, repr=False)
    """The splice that made `nodes` from an earlier read's, if one did (what changed, for the view)."""

    def to_json(self) -> dict[str, Any]:
        """The recorded form (tests/view/data/ax/*.json)."""
        doc: dict[str, Any] = {
            "key": self.key,
            "owner": self.owner_backend_id,
            "secret_ids": sorted(self.secret_ids),
        }
        if self.required_ids is not None:
            doc["required_ids"] = sorted(self.required_ids)
        if self.flagged_ids is not None:
            doc["flagged_ids"] = sorted(self.flagged_ids)
        if self.display is not None:
            doc["display"] = {str(k): v for k, v in sorted(self.display.items())}
        if self.gaps is not None:
            doc["gaps"] = {str(k): list(v) for k, v in sorted(self.gaps.items())}
        if self.unreachable_url:
            doc["unreachable_url"] = self.unreachable_url
        doc["nodes"] = self.nodes
        return doc

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FrameNodes:
        """Inverse of `to_json`."""
        required, flagged, display = data.get("required_ids"), data.get("flagged_ids"), data.get("display")
        gaps = data.get("gaps")
        return cls(
            str(data["key"]),
            list(data["nodes"]),
            data.get("owner"),
            set(data.get("secret_ids", ())),
            set(required) if required is not None else None,
            set(flagged) if flagged is not None else None,
            {int(k): str(v) for k, v in display.items()} if display is not None else None,
            {int(k): (str(v[0]), str(v[1])) for k, v in gaps.items()} if gaps is not None else None,
            unreachable_url=str(data.get("unreachable_url", "")),
        )


@dataclass
class PageNodes:
    """Everything one session contributed to a tab's view."""

    frames: list[FrameNodes] = field(default_factory=list)
    secret_ids: set[int] = field(default_factory=set)
    secret_values: set[str] = field(default_factory=set)
    required_ids: set[int] | None = None
    flagged_ids: set[int] | None = None
    display: dict[int, str] | None = None
    gaps: dict[int, tuple[str, str]] | None = None
    layout_wanted: set[int] | None = None
    """The nodes in running text when the layout was read (`layout.wanted` of the frames; None: not known)."""
    running: RunningText | None = None
    """What of the frames is in running text (`layout.running_text`), for the next incremental read."""
    trees: set[str] = field(default_factory=set)
    """Keys of the frames whose nodes a splice found a proven tree (`ax_patch.splice_tree`): the
    next splice checks only what it changed."""

    def share_with_frames(self) -> None:
        """Give every frame the session-wide secret ids, form state and text layout (each frame's view reads them)."""
        for frame in self.frames:
            frame.secret_ids = self.secret_ids
            frame.required_ids = self.required_ids
            frame.flagged_ids = self.flagged_ids
            frame.display = self.display
            frame.gaps = self.gaps


async def collect_page(
    send: Send,
    key_prefix: str,
    *,
    secret_selector: str,
    oopif: bool = False,
    keep: int | None = None,
    tree: dict[str, Any] | None = None,
) -> PageNodes:
    """Frames, AX trees and secret inputs of the session behind `send`.

    `key_prefix` makes frame keys unique per document generation (the caller bumps it on
    navigation, so a new document never reuses an old key). With `oopif`, the session is
    an out-of-process iframe: its frame tree's root is the iframe itself. Inputs matching
    the CSS `secret_selector` have their backend ids and current values read (the caller
    decides what is secret; the values stay in memory for masking). With `keep`, only the
    first `keep` rows or list items of a longer run are read below themselves (`read_frame_tree`).
    A child frame that shows Chromium's error page is kept without nodes, with its `unreachable_url`.
    `tree` is the session's `Page.getFrameTree` answer when the caller has just read it.

    Raises:
        CDPError: the main frame's tree could not be read (the page is gone or navigating).
    """
    result = PageNodes()
    if tree is None:
        tree = await send("Page.getFrameTree", {})
    # Breadth first, the session's root frame first; each with the index of its parent frame.
    frames: list[tuple[dict[str, Any], int]] = []
    pending: list[tuple[dict[str, Any], int]] = [(tree["frameTree"], -1)]
    while pending:
        node, parent = pending.pop(0)
        frames.append((node["frame"], parent))
        pending.extend((child, len(frames) - 1) for child in node.get("childFrames", ()))
    # Every frame's tree, owner and the document root are asked for at once (batch.py).
    reads: list[Callable[[], Awaitable[Any]]] = [lambda: send("DOM.getDocument", {"depth": 0})]
    # A child frame showing an error page is kept without its tree (the main frame's is read: it is the page).
    unreachable = [_unreachable(info) if index or oopif else "" for index, (info, _parent) in enumerate(frames)]
    for index, (info, _parent) in enumerate(frames):
        reads.append(_no_nodes if unreachable[index] else partial(read_frame_tree, send, info["id"], keep=keep))
        reads.append(partial(_frame_owner, send, info["id"]) if index or oopif else _no_owner)
    document, *replies = await side_by_side(reads)
    read: set[int] = set()
    for index, (info, parent) in enumerate(frames):
        reply, owner = replies[2 * index], replies[2 * index + 1]
        if isinstance(reply, CDPError):
            if index == 0:
                raise reply
            continue  # A child frame that is mid-navigation is simply left out this time.
        if parent >= 0 and parent not in read:
            continue  # ...and so are the frames inside it.
        read.add(index)
        key = f"{key_prefix}:{info.get('loaderId') or info['id']}"
        owner_id = owner if isinstance(owner, int) else None
        frame = FrameNodes(key, list(reply), owner_id, frame_id=str(info["id"]), unreachable_url=unreachable[index])
        result.frames.append(frame)
    # The secret inputs and the layout of running text are independent reads too.
    async with anyio.create_task_group() as tg:
        tg.start_soon(_collect_secrets, send, result, secret_selector, document)

        async def layout() -> None:
            frames = [(frame.frame_id, frame.nodes) for frame in result.frames]
            running = running_text(frames)
            result.display, result.gaps = await read_text_layout(send, frames, running)
            result.layout_wanted, result.running = running.wanted, running

        tg.start_soon(layout)
    result.share_with_frames()
    return result


def _unreachable(info: dict[str, Any]) -> str:
    """The address a frame failed to load, if it shows Chromium's error page ("" otherwise)."""
    if str(info.get("url", "")).startswith(_ERROR_PAGE) or info.get("unreachableUrl"):
        return str(info.get("unreachableUrl") or info.get("url", ""))
    return ""


async def _no_nodes() -> list[dict[str, Any]]:
    return []


async def read_frame_tree(send: Send, frame_id: str, *, keep: int | None = None) -> list[dict[str, Any]]:
    """The AX nodes of one frame's document, in the form `getFullAXTree` gives them.

    Without `keep`, for a document of at most `SMALL_DOCUMENT` elements, or for one that
    is not mostly long runs, that is one `getFullAXTree`. Otherwise the tree is read level
    by level from the root (`getRootAXNode`, then one pipelined `getChildAXNodes` per node
    of a level), so no single command holds the renderer for long and nothing is read that
    is not wanted: a run of more than `keep` rows or list items under one parent has only
    its first `keep` read below themselves; the others are kept as bare nodes marked
    `UNREAD` (so they can be counted, and read later with `read_run_range`).

    Raises:
        CDPError: the frame's document could not be read.
    """
    if keep is None or not await _mostly_long_runs(send, frame_id, keep):
        # One command is quicker unless most of a big document is rows no one will see.
        reply = await send("Accessibility.getFullAXTree", {"frameId": frame_id})
        return list(reply.get("nodes", ()))
    await enable_accessibility(send)
    root = (await send("Accessibility.getRootAXNode", {"frameId": frame_id}))["node"]
    nodes: dict[str, dict[str, Any]] = {root["nodeId"]: root}
    await _expand(send, frame_id, [root], nodes, keep)
    return list(nodes.values())


async def _mostly_long_runs(send: Send, frame_id: str, keep: int) -> bool:
    """Whether the frame's document is big and mostly rows or list items past `keep` in their run.

    Counted in an isolated world, where the page cannot interfere. Reading level by level
    costs about three times as much per node as one `getFullAXTree`, so it pays only when
    it leaves out more than two thirds of a document.
    """
    world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _SIZE_WORLD})
    reply = await send(
        "Runtime.evaluate",
        {
            "expression": call(_RUNS_JS, int(keep), SMALL_DOCUMENT),
            "contextId": world["executionContextId"],
            "returnByValue": True,
        },
    )
    value = reply.get("result", {}).get("value")
    if not isinstance(value, dict):
        return False
    elements, past = int(value.get("all", 0)), int(value.get("past", 0))
    return elements > SMALL_DOCUMENT and (elements - past) * 3 < elements


async def enable_accessibility(send: Send) -> None:
    """Turn the session's Accessibility domain on, and leave it on for the session's life.

    Reading a tree level by level (`getRootAXNode`, `getChildAXNodes`) needs the domain on,
    and its node ids stay valid only while it is. The bridge turns it on when it attaches to a
    page (`webmcp.desktop.live_view.install_observer`), before the page is read, and never
    off: turning it on later, on a page whose iframe had just navigated, crashed Chromium
    156's renderer (SIGSEGV at address 0x10, 50–90 ms after the `enable`) in about one read
    in six of the 3,000-row report with its frame; turning it on at attach crashed none in
    25. `enable` where it is on already does nothing, so every such read calls this first.
    """
    await send("Accessibility.enable", {})


async def read_run_range(
    send: Send, frame_id: str, backend_id: int, first: int, count: int, *, keep: int | None
) -> FrameNodes:
    """The AX subtree of the element `backend_id` (a table or list) with only some of its run read.

    Its rows or list items are numbered in document order (nested tables and lists apart);
    the first of them (a table's header row) and those numbered `first` … `first + count`
    are read below themselves, the others are kept as bare `UNREAD` nodes. The element's
    node comes first, without a parent, so the nodes stand as a tree of their own; the
    caller names the frame (`key`).

    Raises:
        CDPError: the element is gone, or its frame could not be read.
    """
    await enable_accessibility(send)
    reply = await send("Accessibility.getPartialAXTree", {"backendNodeId": backend_id, "fetchRelatives": False})
    found = [n for n in reply.get("nodes", ()) if n.get("backendDOMNodeId") == backend_id]
    if not found:
        raise ProtocolError("Accessibility.getPartialAXTree", -32000, f"no accessibility node for {backend_id}")
    top = {k: v for k, v in found[0].items() if k != "parentId"}
    nodes: dict[str, dict[str, Any]] = {top["nodeId"]: top}
    await _expand(send, frame_id, [top], nodes, 0)  # every run left unread
    run = _run_of(top, nodes)
    chosen = [node for index, node in enumerate(run) if index == 0 or first <= index <= first + count]
    for node in chosen:
        node.pop(UNREAD, None)
    await _expand(send, frame_id, chosen, nodes, keep)
    frame = FrameNodes("", list(nodes.values()), frame_id=frame_id)
    frame.display, frame.gaps = await read_text_layout(send, [(frame_id, frame.nodes)])
    return frame


def _run_of(top: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows or list items of `top`, in document order, not looking into nested runs."""
    found: list[dict[str, Any]] = []
    stack = [nodes[c] for c in reversed(top.get("childIds", ())) if c in nodes]
    while stack:
        node = stack.pop()
        role = node.get("role", {}).get("value")
        if role in RUN_ROLES:
            found.append(node)
        elif role not in _NESTED_RUNS:
            stack.extend(nodes[c] for c in reversed(node.get("childIds", ())) if c in nodes)
    return found


async def _expand(
    send: Send, frame_id: str, level: list[dict[str, Any]], nodes: dict[str, dict[str, Any]], keep: int | None
) -> None:
    """Read the children of `level`, then theirs, and so on; runs past `keep` are marked, not read."""
    while level:
        wanted = [n for n in level if _has_unread_children(n, nodes)]
        replies = await _pipelined(
            send, "Accessibility.getChildAXNodes", [{"id": n["nodeId"], "frameId": frame_id} for n in wanted]
        )
        fresh: list[dict[str, Any]] = []
        for reply in replies:
            for child in reply.get("nodes", ()):
                if child["nodeId"] not in nodes:
                    nodes[child["nodeId"]] = child
                    fresh.append(child)
        if keep is not None:
            runs: dict[str, list[dict[str, Any]]] = {}
            for child in fresh:
                if child.get("role", {}).get("value") in RUN_ROLES and child.get("childIds"):
                    runs.setdefault(str(child.get("parentId", "")), []).append(child)
            for run in runs.values():
                for child in run[keep:]:
                    child[UNREAD] = True
        level = [c for c in fresh if not c.get(UNREAD)]


def _has_unread_children(node: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> bool:
    if node.get(UNREAD) or node.get("role", {}).get("value") in _LEAVES:
        return False
    return any(c not in nodes for c in node.get("childIds", ()))


async def _pipelined(send: Send, method: str, params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`send` each of `params` side by side, `_BATCH` in flight at most; the replies in order.

    Raises:
        CDPError: the first command that failed.
    """
    replies: list[dict[str, Any]] = []
    for start in range(0, len(params), _BATCH):
        for reply in await side_by_side([partial(send, method, p) for p in params[start : start + _BATCH]]):
            if isinstance(reply, CDPError):
                raise reply
            replies.append(reply)
    return replies


async def _no_owner() -> None:
    return None


async def _frame_owner(send: Send, frame_id: str) -> int | None:
    try:
        reply = await send("DOM.getFrameOwner", {"frameId": frame_id})
    except CDPError:
        return None  # An OOPIF's owner lives in its parent's session; the caller asks there.
    backend = reply.get("backendNodeId")
    return int(backend) if backend is not None else None


async def _collect_secrets(send: Send, result: PageNodes, selector: str, doc: dict[str, Any] | CDPError) -> None:
    """Backend ids and values of secret inputs in the session's documents (frames included).

    `doc` is the session's `DOM.getDocument` answer (or how asking for it failed).
    """
    try:
        if isinstance(doc, CDPError):
            raise doc
        roots = [doc["root"]["nodeId"]]
        # Same-process iframes: their documents are reachable through the owner element.
        owners = [f.owner_backend_id for f in result.frames if f.owner_backend_id is not None]
        for found_roots in succeeded(await side_by_side([partial(_content_root, send, o) for o in owners])):
            roots.extend(found_roots)
        queries = [partial(send, "DOM.querySelectorAll", {"nodeId": r, "selector": selector}) for r in roots]
        node_ids = [n for found in succeeded(await side_by_side(queries)) for n in found.get("nodeIds", ())]
        reads: list[Callable[[], Awaitable[Any]]] = [partial(_read_secret, send, n, result) for n in node_ids]
        if has_form_controls(result):

            async def required() -> None:
                result.required_ids = await _backend_ids(send, roots, REQUIRED_SELECTOR)

            async def flagged() -> None:
                result.flagged_ids = await _backend_ids(send, roots, FLAGGED_SELECTOR)

            reads += [required, flagged]
        for outcome in await side_by_side(reads):
            if isinstance(outcome, CDPError):
                raise outcome
    except CDPError:
        return  # The document changed under us; the next refresh (which follows any change) retries.
    finally:
        try:
            await send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
        except CDPError:
            pass


async def _content_root(send: Send, owner: int) -> list[int]:
    """The DOM node ids of the document inside the same-process `<iframe>` `owner` (none if it has none)."""
    described = await send("DOM.describeNode", {"backendNodeId": owner, "depth": 1, "pierce": True})
    content = described["node"].get("contentDocument")
    if content is None:
        return []
    pushed = await send("DOM.pushNodesByBackendIdsToFrontend", {"backendNodeIds": [content["backendNodeId"]]})
    return [n for n in pushed.get("nodeIds", ()) if n]


def has_form_controls(result: PageNodes) -> bool:
    """Whether a frame of `result` shows a form control (then its required and invalid ones are read)."""
    return any(n.get("role", {}).get("value") in _FORM_ROLES for f in result.frames for n in f.nodes)


async def _backend_ids(send: Send, roots: list[int], selector: str) -> set[int]:
    """Backend ids of the first `FORM_STATE_MAX` elements matching `selector` under `roots`."""
    queries = [partial(send, "DOM.querySelectorAll", {"nodeId": r, "selector": selector}) for r in roots]
    replies = succeeded(await side_by_side(queries))
    node_ids = [n for reply in replies for n in reply.get("nodeIds", ())][:FORM_STATE_MAX]
    described = succeeded(await side_by_side([partial(send, "DOM.describeNode", {"nodeId": n}) for n in node_ids]))
    return {int(d["node"]["backendNodeId"]) for d in described}


async def _read_secret(send: Send, node_id: int, result: PageNodes) -> None:
    described = await send("DOM.describeNode", {"nodeId": node_id})
    result.secret_ids.add(int(described["node"]["backendNodeId"]))
    resolved = await send("DOM.resolveNode", {"nodeId": node_id, "objectGroup": _GROUP})
    object_id = resolved.get("object", {}).get("objectId")
    if not object_id:
        return
    reply = await send(
        "Runtime.callFunctionOn",
        {"objectId": object_id, "functionDeclaration": _VALUE_JS, "returnByValue": True},
    )
    value = reply.get("result", {}).get("value")
    if isinstance(value, str) and value:
        result.secret_values.add(value)
