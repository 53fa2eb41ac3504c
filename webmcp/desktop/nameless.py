"""Ask the page what hints at its nameless icon controls (their title, class, image), in one write.

The one hook is in live_view.py, where a session's nodes are read (whole or spliced): only
the nodes new in that read are looked at, and only nameless icon controls among them are asked
about (`view/nameless.py`), so a page without any costs one pass over its new nodes.
"""

from __future__ import annotations

import logging

from cdp_bridge.ax import PageNodes
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.view.nameless import MAX_NAMELESS, give_name, guess_name, nameless_nodes
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
    try:
        answers = await session.send_all(
            [("DOM.describeNode", {"backendNodeId": int(n["backendDOMNodeId"]), "depth": 1}) for n in wanted]
        )
    except CDPError as exc:
        logger.debug("nameless controls stay nameless: %s", exc)
        return
    for node, answer in zip(wanted, answers, strict=True):
        if isinstance(answer, dict):
            give_name(node, guess_name(answer))
