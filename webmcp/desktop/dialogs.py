"""Modal windows: JavaScript dialogs and in-page `<dialog>`s opened with showModal().

Both are seed-001 modal windows owned by the top of their tab's chain at the moment they
open (the tab, or a modal already over it), so a dialog over a dialog chains. A JavaScript
dialog is answered with accept/dismiss; an in-page modal is closed with `close`, and the
declarative tools whose form lies inside it are its tools while it is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession
from webmcp.desktop.mirror import Invocation, PageTool
from webmcp.desktop.windows import WindowState

__all__ = ["InPageModal", "JsDialog"]


@dataclass(eq=False)
class InPageModal:
    """An open `<dialog>` (showModal) of a tab, published as its own modal window."""

    window: WindowState
    tab_id: str
    key: Any
    backend_node_id: int | None
    backend_ids: frozenset[int]
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def owns(self, tool: PageTool) -> bool:
        """True for a declarative tool whose form lies inside this dialog."""
        return tool.backend_node_id is not None and tool.backend_node_id in self.backend_ids


@dataclass
class JsDialog:
    """An open alert/confirm/prompt/beforeunload, as a modal window owned by its tab."""

    window: WindowState
    kind: str
    message: str
    default_prompt: str
    session: CDPSession
    tab_id: str
    opened_by_call: Invocation | None = None
    call_done: anyio.Event = field(default_factory=anyio.Event)
    call_outcome: dict[str, Any] | None = None
