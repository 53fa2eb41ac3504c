"""Reading again an element whose child list alone changed: its node, and the children it gained.

A card moved from one column of a board to another changes two child lists; reading both columns'
subtrees whole reads every card they hold again, though only the moved one is new. The page's
observer (webmcp/js/observer.js) hands over such an element (`relisted`) when no style rule can
tell where its children stand among their siblings and they are blocks (so no text runs between
them): the children it kept are, for the accessibility tree, as they were. `read_relisted` reads
its node with its ancestors (`Accessibility.getAXNodeAndAncestors`: its new list of children) and
the subtree of each added child (`Accessibility.queryAXTree`), with the other changed subtrees, in
one write; `relist` (pure)
makes of them the `ax_patch.Subtree` a whole read of the element would give, its kept children's
nodes the very objects the last read has (so a walk's memo stands for them).

`relist` gives None where the tree says otherwise than the page did (a child it lists that is
neither kept nor read; text, a list marker or an item of a set among the kept children, whose
node may change with its siblings'): the caller reads the element whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .ax import Send
from .ax_patch import Known, Subtree, read_changed, subtree_ids

__all__ = ["Relisted", "read_relisted", "relist"]

Node = dict[str, Any]
_TEXT = frozenset({"StaticText", "InlineTextBox", "LineBreak"})
# Nodes that may change with their siblings (a list marker's number, a set's items, the first
# `<summary>`, a table's rows and cells, a fieldset's first legend).
_POSITIONED = frozenset(
    {
        "ListMarker",
        "list",
        "listitem",
        "listbox",
        "option",
        "MenuListPopup",
        "MenuListOption",
        "combobox",
        "menu",
        "menubar",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tablist",
        "tab",
        "tree",
        "treeitem",
        "treegrid",
        "grid",
        "table",
        "row",
        "rowgroup",
        "cell",
        "gridcell",
        "columnheader",
        "rowheader",
        "LayoutTable",
        "LayoutTableRow",
        "LayoutTableCell",
        "caption",
        "radiogroup",
        "radio",
        "feed",
        "DescriptionList",
        "term",
        "definition",
        "DisclosureTriangle",
        "legend",
        "figcaption",
    }
)


@dataclass
class Relisted:
    """An element whose child list alone changed, as the AX tree has it now."""

    ancestors: list[Node]
    """Its own node first (with its children's ids), then its parent's, up to the root."""
    added: list[list[Node]]
    """For each child it gained, that child's node and every node below it (empty: none)."""


async def read_relisted(
    send: Send,
    relisted: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    elements: list[dict[str, Any]] | None = None,
    own: list[dict[str, Any]] | None = None,
    known: Known | None = None,
) -> tuple[list[Subtree], list[Relisted]]:
    """For each (element, the children it gained) of `relisted`, its node and ancestors and those
    children's subtrees; with the subtrees of `elements` and `own` (`ax_patch.read_subtrees`), all
    commands side by side in one write (`ax_patch.read_changed`: with `known`, ancestors the
    elements share are read once).

    Raises:
        CDPError: an element is gone.
    """
    whole, owned, read = await read_changed(send, elements or [], own or [], relisted, known)
    return whole + owned, [Relisted(ancestors, below) for ancestors, below in read]


def relist(by_id: Mapping[str, Node], read: Relisted) -> Subtree | None:
    """The element of `read` as a whole read of its subtree would give it, from the last read's
    nodes `by_id` (the children it kept, as they were) and what `read` read; None if unsure."""
    if not read.ancestors:
        return None
    top = read.ancestors[0]
    before = by_id.get(str(top.get("nodeId", "")))
    if before is None or "backendDOMNodeId" not in top or before.get("backendDOMNodeId") != top["backendDOMNodeId"]:
        return None
    node_id = top["nodeId"]
    gained: dict[str, list[Node]] = {}
    for nodes in read.added:
        if nodes:  # An added child with no node (not rendered): the list of children says the rest.
            gained[nodes[0]["nodeId"]] = nodes
    out: list[Node] = [top]
    for child in top.get("childIds", ()):
        if child in gained:
            out += gained.pop(child)
            continue
        kept = by_id.get(child)
        if kept is None or kept.get("parentId") != node_id or not _may_keep(kept):
            return None
        below = [by_id[i] for i in subtree_ids(kept, by_id)]
        if any(_role(n) == "ListMarker" for n in below):
            return None
        out += below
    if gained:
        return None  # A child read that its parent does not list.
    return Subtree(read.ancestors, out)


def _role(node: Node) -> str:
    return str(node.get("role", {}).get("value", ""))


def _may_keep(node: Node) -> bool:
    """Whether a kept child's node stands whatever its siblings: an element's, no text, no item of a set."""
    role = _role(node)
    return "backendDOMNodeId" in node and role not in _TEXT and role not in _POSITIONED
