"""Ask the page what hints at its nameless icon controls (their title, class, image) and how large
they show, in one write: one a person cannot see, or an empty box too large for an icon, stays
nameless (`seen_as_one_thing`).

The one hook is in live_view.py, where a session's nodes are read (whole or spliced): only
the nodes new in that read are looked at, and only nameless icon controls among them are asked
about (`view/nameless.py`), so a page without any costs one pass over its new nodes.
"""

from __future__ import annotations

import logging

from cdp_bridge.ax import PageNodes
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.view.nameless import MAX_NAMELESS, give_name, guess_name, nameless_nodes, seen_as_one_thing
from webmcp.view.nodes import Node, name_of

__all__ = ["name_nameless"]

logger = logging.getLogger(__name__)


async def name_nameless(session: CDPSession, read: PageNodes, *, whole: bool) -> None:
    """Give each nameless icon control new in `read` a name from its title, class or image (a guess).

    `whole`: `read` is a whole read (every node is new); else a spliced one, whose frames' changed
    nodes are the new ones.
    """
    wanted: list[Node] = []
    for frame in read.frames:
        spliced = frame.spliced
        left = MAX_NAMELESS - len(wanted)
        if whole:
            wanted += nameless_nodes(frame.nodes, None, left)
        elif spliced is not None:
            fresh = [spliced.by_id[i] for i in spliced.changed if i in spliced.by_id]
            wanted += nameless_nodes(fresh, spliced.by_id, left)
    # A tooltip tied to it (`aria-describedby`) is in the tree already: no need to ask.
    for node in wanted:
        give_name(node, " ".join(str((node.get("description") or {}).get("value", "") or "").split()))
    wanted = [n for n in wanted if not name_of(n)]
    if not wanted:
        return
    commands: list[tuple[str, dict[str, int]]] = []
    for node in wanted:
        backend = int(node["backendDOMNodeId"])
        commands += [
            ("DOM.describeNode", {"backendNodeId": backend, "depth": 1}),
            ("DOM.getBoxModel", {"backendNodeId": backend}),
        ]
    try:
        answers = await session.send_all(commands)
    except CDPError as exc:
        logger.debug("nameless controls stay nameless: %s", exc)
        return
    for node, described, box in zip(wanted, answers[::2], answers[1::2], strict=True):
        # A node with no box (display: contents, not laid out) answers getBoxModel with an error.
        if isinstance(described, dict) and seen_as_one_thing(node, box if isinstance(box, dict) else None):
            give_name(node, guess_name(described))
