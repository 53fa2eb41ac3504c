"""What the tools layer asks of a window, by kind: every window, and a window that has page tools.

Every window (`AnyWindow`) has its state, its kind (which records apply to it), its lock,
whether it is still open, and a version check. Only some windows carry the page's own
tools: a tab, and an in-page `<dialog>` whose form tools are its own while it is open
(`PageToolWindow`). A JavaScript dialog, a waiting form, a sign-in prompt or a file chooser
has none, and does not pretend to: the dispatcher and the catalogue ask for page tools only
of a window that `has_page_tools`.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeGuard

import anyio

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.models import ToolResult

__all__ = ["AnyWindow", "PageToolWindow", "has_page_tools"]


class AnyWindow(Protocol):
    """What the dispatcher and the catalogue read of every window."""

    window: WindowState
    window_kind: str
    op_lock: anyio.Lock

    def is_open(self) -> bool: ...
    async def check_version(self) -> VersionCheck: ...


class PageToolWindow(AnyWindow, Protocol):
    """A window that carries page tools: a tab, or an in-page modal over it."""

    @property
    def origin(self) -> str:
        """The origin of the page whose tools these are (shown in each tool's description)."""

    def page_tools(self) -> list[PageTool]:
        """The page tools it lists now (its caps applied)."""

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        """Call one of its page tools; `check` is the call's own version check (None without expectedVersion)."""


def has_page_tools(window: AnyWindow) -> TypeGuard[PageToolWindow]:
    """True when `window` carries page tools (a tab, an in-page modal).

    Asked of the object itself, as `isinstance` on a runtime-checkable protocol would, without
    its cost (about 8 µs a window on CPython 3.11, on every check of the tool set).
    """
    return hasattr(window, "page_tools")
