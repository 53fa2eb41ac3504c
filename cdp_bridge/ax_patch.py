"""Reading again only the parts of a frame's AX tree that changed, and splicing them in.

A frame's nodes as `Accessibility.getFullAXTree` gives them (`ax.read_frame_tree`) stay
what a full read would give if every subtree that changed is read again whole, with the
ancestors above it (their names may come from their contents: a row, a link, a heading):
`read_subtrees` reads, for the element of each backend id, its whole subtree
(`Accessibility.queryAXTree`, one command, ignored nodes included) and its node and ancestors
(`Accessibility.getAXNodeAndAncestors`), all in one write (`RELEASED`); `splice` (pure) puts them in place of the
old ones in a copy of the frame's list. `queryAXTree` computes a role and a name for the
ignored nodes that `getFullAXTree` leaves as role "none" without a name: `full_form` makes
them as the full tree has them.

Whatever cannot be said for certain gives None (the caller then reads the frame whole): an
element without an AX node, a subtree that does not hang where its ancestors say, a list
read level by level with runs left unread (`ax.UNREAD`), a result that is not one tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .ax import UNREAD, Send
from .batch import commands_side_by_side, succeeded

__all__ = [
    "RELEASED",
    "Command",
    "Known",
    "Spliced",
    "Subtree",
    "full_form",
    "read_subtrees",
    "proven_tree",
    "splice",
    "splice_index",
    "splice_tree",
    "chain_plan",
    "read_changed",
    "subtree_ids",
]

Node = dict[str, Any]
Command = tuple[str, dict[str, Any]]
RELEASED = "Accessibility.getAXNodeAndAncestors"
"""Sent after every `queryAXTree` of a read. Chromium answers `queryAXTree` from a callback it
runs once the AX tree is clean (`ScheduleAXUpdateWithCallback`): at the page's next lifecycle
update (up to a frame, 16.7 ms), or sooner when a command that brings the tree up to date at
once (`getAXNodeAndAncestors` does, `UpdateAXForAllDocuments`) comes after it. Same answer,
read at that moment instead of the next frame: the shop's three subtrees went from 10.6 to
3.9 ms, the story's one from 17 to 9 ms (loaded machine, medians of 10)."""
_NONE_ROLE = {"type": "role", "value": "none"}
_NONE_CHROME_ROLE = {"type": "internalRole", "value": 0}


@dataclass
class Subtree:
    """One changed element as the AX tree has it now."""

    ancestors: list[Node]
    """Its own node first, then its parent's, up to the root (`getAXNodeAndAncestors`)."""
    nodes: list[Node]
    """Its node and every node below it, ignored ones too (`queryAXTree`, in `full_form`); empty
    when only its own node was read again (`whole` False)."""
    whole: bool = True
    """False for an element whose name or relations changed but not what it holds (a control
    named by a changed `<label>`, a section named by a changed heading): `splice` keeps the
    nodes below it, and its new node must list the same children."""


def full_form(node: Node) -> Node:
    """`node` from `queryAXTree` as `getFullAXTree` gives it: an ignored node has role "none" and no name."""
    if not node.get("ignored"):
        return node
    out = {k: v for k, v in node.items() if k != "name"}
    out["role"] = dict(_NONE_ROLE)
    out["chromeRole"] = dict(_NONE_CHROME_ROLE)
    return out


async def read_subtrees(
    send: Send, elements: list[dict[str, Any]], own: list[dict[str, Any]] | None = None, known: Known | None = None
) -> list[Subtree]:
    """The nodes, ancestors and subtrees of `elements` (each `{"backendNodeId": …}` or
    `{"objectId": …}`), then the nodes and ancestors only of `own` (`Subtree.whole` False), all
    commands side by side; with `known` (the frame's last read), ancestors that several elements
    share are read once (`read_changed`).

    Raises:
        CDPError: an element is gone.
    """
    whole, owned, _ = await read_changed(send, elements, own or [], [], known)
    return whole + owned


@dataclass(frozen=True, slots=True)
class Known:
    """A frame's nodes as the last read gave them, by id and by backend id: where the elements a
    change names hung then (`read_changed` reads each ancestor they share once)."""

    by_id: Mapping[str, Node]
    by_backend: Mapping[int, Node]


_CHAIN_EXTRA_MAX = 2
"""Ancestors of an element read one by one (besides its own node) before it reads its whole chain."""


async def read_changed(
    send: Send,
    elements: list[dict[str, Any]],
    own: list[dict[str, Any]],
    relisted: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    known: Known | None = None,
) -> tuple[list[Subtree], list[Subtree], list[tuple[list[Node], list[list[Node]]]]]:
    """What a change names, read again in one batch of commands: for each of `elements` its
    subtree and ancestors, for each of `own` its node and ancestors, for each relisted (element,
    the children it gained) its node and ancestors and those children's subtrees.

    An element's ancestors are its node, its parent's, and so on up to the root, as
    `getAXNodeAndAncestors` gives them. Without `known`, each element reads its own so; with it,
    the elements whose chains (as the last read had them) hold the others' read theirs, and each
    other element reads its node alone (`getPartialAXTree`, no relatives) with the few ancestors
    it does not share (`_CHAIN_EXTRA_MAX`): its chain is then made of nodes read in this batch,
    by their parents. One whose parents do not lead through nodes read now (the tree moved) reads
    its chain after, itself. `getAXNodeAndAncestors` also makes Chromium send every later change of
    the nodes it gave (`Accessibility.nodesUpdated`), a node built again at each change.

    Each `queryAXTree` comes before a command that brings the AX tree up to date (`RELEASED`):
    else Chromium answers it at the page's next lifecycle update.

    Raises:
        CDPError: an element is gone.
    """
    items: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [(e, [e]) for e in elements]
    items += [(e, []) for e in own]
    items += [(e, list(added)) for e, added in relisted]
    readers, extras = chain_plan([element for element, _ in items], known)
    reads: list[Command] = []
    for (element, queried), reader in zip(items, readers, strict=True):
        reads += [("Accessibility.queryAXTree", q) for q in queried]
        reads.append((RELEASED, element) if reader else (_NODE_ALONE, {**element, "fetchRelatives": False}))
    reads += [(_NODE_ALONE, {"backendNodeId": b, "fetchRelatives": False}) for b in extras]
    answers = await commands_side_by_side(send, reads)
    pool: dict[str, Node] = {}
    for reply in answers[len(reads) - len(extras) :]:  # an ancestor gone since: its chains are read after
        if isinstance(reply, dict) and reply.get("nodes"):
            pool.setdefault(str(reply["nodes"][0].get("nodeId")), reply["nodes"][0])
    found = succeeded(answers[: len(reads) - len(extras)])
    below: list[list[list[Node]]] = []
    chains: list[list[Node] | None] = []
    at = 0
    for (_element, queried), reader in zip(items, readers, strict=True):
        below.append([[full_form(n) for n in reply.get("nodes", ())] for reply in found[at : at + len(queried)]])
        nodes = list(found[at + len(queried)].get("nodes", ()))
        at += len(queried) + 1
        chains.append(nodes if reader else nodes[:1])
        for node in nodes if reader else nodes[:1]:
            pool.setdefault(str(node.get("nodeId")), node)
    again: list[int] = []
    for index, reader in enumerate(readers):
        if not reader:
            alone = chains[index]
            chains[index] = _chain(alone[0], pool) if alone else None
            if chains[index] is None:
                again.append(index)
    if again:
        later = succeeded(await commands_side_by_side(send, [(RELEASED, items[i][0]) for i in again]))
        for index, reply in zip(again, later, strict=True):
            chains[index] = list(reply.get("nodes", ()))
    whole_out = [Subtree(chains[i] or [], below[i][0]) for i in range(len(elements))]
    own_out = [Subtree(chains[i] or [], [], whole=False) for i in range(len(elements), len(elements) + len(own))]
    relisted_out = [(chains[i] or [], below[i]) for i in range(len(elements) + len(own), len(items))]
    return whole_out, own_out, relisted_out


_NODE_ALONE = "Accessibility.getPartialAXTree"
"""With `fetchRelatives` false: the node alone, built as `getAXNodeAndAncestors` builds it; it
brings the AX tree up to date too, and makes Chromium send no later changes of it."""


def chain_plan(elements: list[dict[str, Any]], known: Known | None) -> tuple[list[bool], list[int]]:
    """Which of `elements` read their whole chain of ancestors, and the backend ids of the
    ancestors read alone besides (`read_changed`), from where `known` had them.

    The deepest elements first: one reads its chain; one whose ancestors (as they were) meet a
    node some chain read already, at most `_CHAIN_EXTRA_MAX` levels up, reads those levels
    alone; any other reads its chain, as does an element `known` did not have.
    """
    if known is None or len(elements) < 2:
        return [True] * len(elements), []
    chains: list[list[tuple[str, int]] | None] = []
    owns: list[str | None] = []
    for element in elements:
        backend = element.get("backendNodeId")
        node = known.by_backend.get(backend) if isinstance(backend, int) else None
        owns.append(str(node["nodeId"]) if node is not None else None)
        chains.append(_old_chain(node, known.by_id) if node is not None else None)
    order = sorted(range(len(elements)), key=lambda i: (chains[i] is not None, -len(chains[i] or ())))
    readers = [False] * len(elements)
    extras: list[int] = []
    covered: set[str] = set()
    for index in order:
        chain = chains[index]
        missing: list[tuple[str, int]] | None = None
        if chain is not None and covered:
            missing = []
            for node_id, backend in chain:
                if node_id in covered:
                    break
                missing.append((node_id, backend))
            else:
                missing = None  # it meets no chain read: a chain of its own
        if missing is None or len(missing) > _CHAIN_EXTRA_MAX:
            readers[index] = True
            covered.update(node_id for node_id, _ in chain or ())
        else:
            extras += [backend for _, backend in missing]
            covered.update(node_id for node_id, _ in missing)
        if owns[index] is not None:
            covered.add(str(owns[index]))
    return readers, extras


def _old_chain(node: Node, by_id: Mapping[str, Node]) -> list[tuple[str, int]] | None:
    """The ids and backend ids of `node`'s ancestors in `by_id`, parent first; None where one has
    no backend id or they do not lead to a root."""
    chain: list[tuple[str, int]] = []
    for _ in range(len(by_id)):
        parent = node.get("parentId")
        if not parent:
            return chain
        upper = by_id.get(str(parent))
        if upper is None or not isinstance(upper.get("backendDOMNodeId"), int):
            return None
        chain.append((str(parent), int(upper["backendDOMNodeId"])))
        node = upper
    return None


def _chain(node: Node, pool: Mapping[str, Node]) -> list[Node] | None:
    """`node` and its ancestors, by their parents, each a node of `pool` that lists the one below
    it; None where a parent is not there or does not list it (an element hidden now: its own
    `getAXNodeAndAncestors` tells)."""
    chain = [node]
    for _ in range(len(pool) + 1):
        parent = node.get("parentId")
        if not parent:
            return chain
        upper = pool.get(str(parent))
        if upper is None or node.get("nodeId") not in upper.get("childIds", ()):
            return None
        chain.append(upper)
        node = upper
    return None


def subtree_ids(node: Node, by_id: Mapping[str, Node]) -> set[str]:
    """The ids of `node` and of every node below it in `by_id`."""
    seen: set[str] = {node["nodeId"]}
    stack = [node]
    while stack:
        for child in stack.pop().get("childIds", ()):
            if child not in seen and child in by_id:
                seen.add(child)
                stack.append(by_id[child])
    return seen


def splice(old: list[Node], subtrees: list[Subtree]) -> list[Node] | None:
    """A copy of the frame's nodes `old` with each subtree read again, or None if unsure.

    Old nodes below a subtree's element that are not in it any more go; nodes read again
    take the place of their old selves; new ones follow the rest. The result must be one
    tree (every node's parent lists it, every node is reachable from the same root), as
    `old` is; nothing of `old` is changed. A node `old` lists twice (Chromium does so with some
    `InlineTextBox`, alike both times) is listed once.
    """
    return splice_tree(old, subtrees)[0]


def splice_tree(old: list[Node], subtrees: list[Subtree], proven: bool = False) -> tuple[list[Node] | None, bool]:
    """`splice(old, subtrees)`, and whether the result is a proven tree (`_still_proven`).

    With `proven` (`old` is one, as the last splice said), the result is checked only where it
    differs from `old` (`_still_proven`); where that cannot tell, it is checked whole as
    `splice` checks it. Either way the nodes given are the same.
    """
    found = splice_index(old, subtrees, proven)
    return (None, False) if found is None else (found.nodes, found.proven)


@dataclass(frozen=True, slots=True)
class Spliced:
    """What `splice_index` made of a frame's nodes, and what of them changed."""

    base: list[Node]
    """The nodes it was made from."""
    nodes: list[Node]
    proven: bool
    by_id: dict[str, Node]
    """`nodes` by id."""
    changed: set[str]
    """The ids of the nodes that are not the objects `base` had (read again, or new)."""
    gone: set[str]
    """The ids of the nodes of `base` that are not in `nodes`."""


def splice_index(
    old: list[Node], subtrees: list[Subtree], proven: bool = False, old_by_id: dict[str, Node] | None = None
) -> Spliced | None:
    """`splice_tree(old, subtrees, proven)` with the ids of what changed, and the result by id.

    `old_by_id` is `old` by id, when the caller has it and `old` is a proven tree (each id once, no
    run left unread): the splice then looks only at what changed, but for the one pass that lists
    the nodes in order.
    """
    if not old:
        return None
    if old_by_id is not None and proven:
        by_id = old_by_id
    else:
        if any(n.get(UNREAD) for n in old):
            return None
        by_id = {}
        for node in old:
            first = by_id.setdefault(node["nodeId"], node)
            if first is not node and first != node:
                return None  # Two nodes of one id that differ: no telling which one counts.
        old_by_id = None
    fresh: dict[str, Node] = {}
    removed: set[str] = set()
    for sub in subtrees:
        if not sub.ancestors:
            return None
        top = sub.ancestors[0]
        if sub.whole and len(sub.ancestors) > 1 and top.get("nodeId") not in sub.ancestors[1].get("childIds", ()):
            if sub.ancestors[1].get("nodeId") != top.get("parentId"):
                return None
            # Its parent does not list it (it is hidden): it and what it held are out of the tree.
            if top.get("nodeId") in by_id:
                removed |= subtree_ids(by_id[top["nodeId"]], by_id)
            for node in sub.ancestors[1:]:
                fresh[node["nodeId"]] = node
            continue
        if sub.whole and not sub.nodes:
            return None
        if "backendDOMNodeId" not in top or (sub.whole and sub.nodes[0].get("nodeId") != top["nodeId"]):
            return None  # The element has no node of its own in the tree (Chromium left it out).
        before = by_id.get(top["nodeId"])
        if not sub.whole:
            if before is None or before.get("backendDOMNodeId") != top["backendDOMNodeId"]:
                return None  # A new node read alone: what is below it was never read.
        elif before is not None:
            removed |= subtree_ids(before, by_id)
        for node in sub.nodes[1:]:
            fresh[node["nodeId"]] = node
        for node in sub.ancestors:
            fresh[node["nodeId"]] = node
    # A node given again as the very object `old` has (a relisted element's kept children) stays as it is.
    for node_id in [i for i, node in fresh.items() if by_id.get(i) is node]:
        del fresh[node_id]
        removed.discard(node_id)
    out: list[Node]
    if old_by_id is not None:  # each id once: every node of `old` is its id's
        out = [fresh.get(i, n) for n in old if (i := n["nodeId"]) in fresh or i not in removed]
    else:
        out = []
        placed: set[str] = set()
        for node in old:
            node_id = node["nodeId"]
            if node_id in placed or by_id[node_id] is not node:
                continue  # Chromium lists some InlineTextBox twice, the same both times: once will do.
            if node_id in fresh:
                out.append(fresh[node_id])
                placed.add(node_id)
            elif node_id not in removed:
                out.append(node)
                placed.add(node_id)
    out.extend(node for node_id, node in fresh.items() if node_id not in by_id)
    gone = removed - fresh.keys()
    new_by_id = dict(by_id)
    for node_id in gone:
        del new_by_id[node_id]
    new_by_id.update(fresh)
    root = _root_of(old[0], by_id) if old_by_id is not None else _root_id(old)
    if proven and _still_proven(by_id, fresh, removed, root):
        return Spliced(old, out, True, new_by_id, set(fresh), gone)
    if not _one_tree(out, root):
        return None
    return Spliced(old, out, sum(len(n.get("childIds", ())) for n in out) == len(out) - 1, new_by_id, set(fresh), gone)


def _root_of(node: Node, by_id: dict[str, Node]) -> str | None:
    """The id of the root above `node` in a proven tree (`by_id`): its parents lead up to it."""
    for _ in range(len(by_id)):
        parent = node.get("parentId")
        if not parent:
            return str(node["nodeId"])
        upper = by_id.get(str(parent))
        if upper is None:
            return None
        node = upper
    return None


def proven_tree(nodes: list[Node]) -> bool:
    """Whether `nodes` are a proven tree (`splice_tree`), a node given twice alike counted once
    (as `splice_tree` takes them)."""
    return splice_tree(nodes, [])[1]


def _still_proven(old: dict[str, Node], fresh: dict[str, Node], removed: set[str], root: str | None) -> bool:
    """Whether the nodes `old` (by id, a proven tree) with `fresh` in place of their old selves and
    the `removed` ones gone are a proven tree, looking only at what changed; False: cannot tell.

    A proven tree is one tree as `_one_tree` says, each node listed once, by its parent (so the
    parents lead every node up to the root). Where nothing changed, that holds as it did: a kept
    node lists what it listed, and its children still have it as their parent unless they are
    fresh, gone or (being listed) hang elsewhere now. What is checked: the root stays; no kept node
    lists a node gone; each fresh node is listed by its parent, lists only nodes that have it as
    their parent, and still lists its kept children; and the parents lead each fresh node up to
    the root.
    """
    if root is None or (root in removed and root not in fresh) or (root in fresh and fresh[root].get("parentId")):
        return False

    def now(node_id: str) -> Node | None:
        found = fresh.get(node_id)
        if found is None and node_id not in removed:
            found = old.get(node_id)
        return found

    def kept(node_id: str) -> bool:
        return node_id in old and node_id not in removed and node_id not in fresh

    for node_id in removed:
        if node_id not in fresh and kept(str(old[node_id].get("parentId", ""))):
            return False  # a kept node lists it
    by_parent: set[str] = set()  # the fresh nodes' children, each listed by its parent
    for node_id, node in fresh.items():
        listed = node.get("childIds", ())
        for child_id in listed:
            child = now(child_id)
            if child is None or child.get("parentId") != node_id or child_id in by_parent:
                return False
            by_parent.add(child_id)
        before = old.get(node_id)
        if before is not None:
            if kept(str(before.get("parentId", ""))) and before.get("parentId") != node.get("parentId"):
                return False  # its old parent, kept, still lists it
            if any(kept(c) and c not in listed for c in before.get("childIds", ())):
                return False
    for node_id, node in fresh.items():
        parent_id = node.get("parentId")
        if not parent_id:
            if node_id != root:
                return False
        elif parent_id in fresh:
            if node_id not in by_parent:
                return False
        elif not kept(parent_id) or old.get(node_id, {}).get("parentId") != parent_id:
            return False  # a kept node lists what it listed: its children then
    up_to_root: set[str] = {root}
    for node_id in fresh:
        climbed: list[str] = []
        seen: set[str] = set()
        current = node_id
        while current not in up_to_root:
            upper = now(current)
            if upper is None or current in seen or not upper.get("parentId"):
                return False
            climbed.append(current)
            seen.add(current)
            current = upper["parentId"]
        up_to_root.update(climbed)
    return True


def _root_id(nodes: list[Node]) -> str | None:
    roots = [n["nodeId"] for n in nodes if not n.get("parentId")]
    return roots[0] if len(roots) == 1 else None


def _one_tree(nodes: list[Node], root: str | None) -> bool:
    """Whether `nodes` are one tree from `root`: unique ids, parents listing their children, all reachable."""
    by_id = {n["nodeId"]: n for n in nodes}
    if root is None or root not in by_id or len(by_id) != len(nodes):
        return False
    # Each node's (parent, itself) is among the (node, child) pairs its parent lists, every child
    # listed is a node, and one node has no parent: the root. One pass, no list searched per node.
    listed: set[tuple[str, str]] = set()
    parentless = []
    for node in nodes:
        node_id = node["nodeId"]
        for child in node.get("childIds", ()):
            if child not in by_id:
                return False
            listed.add((node_id, child))
        if not node.get("parentId"):
            parentless.append(node_id)
    if parentless != [root]:
        return False
    if any(node.get("parentId") and (node["parentId"], node["nodeId"]) not in listed for node in nodes):
        return False
    return len(subtree_ids(by_id[root], by_id)) == len(nodes)
