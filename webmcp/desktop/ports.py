"""What the parts of the desktop may ask of each other, declared once.

A tab and its parts reach the desktop only through `DesktopLink`; a modal window (a
JavaScript dialog, an in-page `<dialog>`, a waiting form, a sign-in prompt, a file chooser)
reaches the tab it belongs to only through `ModalOwner`: facts, the tab's operations and
its one effects path (`write`), never one of its parts. Inside a tab, the parts are told
of its lifecycle through `parts.TabPart`, and a write is handed `effects.TabFacts` and the
`Effects` path, not the tab (calls.py, actions.py): no port hands out a part.

    Desktop ──(DesktopLink)──▶ Tab ──owns──▶ [TabPart …] (parts.py), Effects, TabWindow
                                  ▲
    ModalWindow subclasses ──(ModalOwner)──┘
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from cdp_bridge.connection import CDPSession
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.memory import KeptReads
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.permissions import PermissionPolicy
from webmcp.desktop.uploads import UploadFolder
from webmcp.desktop.windows import VersionCheck, WindowState

if TYPE_CHECKING:
    from webmcp.desktop.downloads import DownloadStore
    from webmcp.desktop.effects import Act
    from webmcp.desktop.mirror import Invocation, PageTool
    from webmcp.models import ToolResult

__all__ = ["DesktopLink", "ModalOwner", "OnFault", "Published", "W"]


class Published(Protocol):
    """Anything the desktop publishes as a window."""

    @property
    def window(self) -> WindowState: ...


W = TypeVar("W", bound=Published)

OnFault = Callable[[BaseException], None]
"""Told when a background task of a window failed (the window says so; the bridge goes on)."""


class DesktopLink(Protocol):
    """What a tab, its parts and its modal windows may ask of the desktop."""

    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def policy(self) -> OriginPolicy: ...
    @property
    def human_submit(self) -> bool: ...
    @property
    def page_actions(self) -> bool:
        """Whether tabs offer window actions (fill, press, submit); off with `--no-page-actions`."""

    @property
    def permissions(self) -> PermissionPolicy:
        """The browser's permission settings as the bridge made them (for the tabs' notices)."""

    @property
    def uploads(self) -> UploadFolder:
        """The folder agents may hand files from to a page's file chooser (`--upload-dir`)."""

    @property
    def downloads(self) -> DownloadStore | None:
        """The pages' downloads (None when the bridge does not follow them)."""

    def known_secrets(self) -> frozenset[str]:
        """The values of every tab's secret fields as of its last read (to mask what leaves)."""

    def changed(self) -> None:
        """The published state changed (it is readable now): tell the listeners."""

    def spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, on_fault: OnFault | None = None) -> None:
        """Run `func(*args)` in the background, supervised: a failure is logged and told to `on_fault`."""

    def publish_modal(self, tab_id: str, title: str, make: Callable[[WindowState], W]) -> W:
        """Mint a modal window over the top of `tab_id`'s chain, `make` its object, publish it."""

    def forget(self, window_id: str) -> None:
        """`window_id` is no longer published (the caller says `changed` when it is done)."""

    async def browser_send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a browser-level command (`Target.activateTarget`, `Target.closeTarget`)."""

    @property
    def kept_reads(self) -> KeptReads:
        """The tabs whose last read keeps its nodes (the ones read last)."""

    def opened_mark(self) -> int:
        """A mark to pass to `opened_since` later."""

    async def opened_since(self, opener_target_id: str, mark: int, expected: int, timeout: float) -> list[str]:
        """Window ids of tabs the page of `opener_target_id` opened since `mark` (waits for `expected`)."""


class ModalOwner(Protocol):
    """What a modal window may ask of the tab it belongs to."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def origin(self) -> str: ...
    @property
    def session(self) -> CDPSession:
        """The page's own session: where a modal's commands (answer, close, submit) go."""

    def mark_dirty(self) -> None: ...
    def blocked(self) -> str | None:
        """Why the page may not be shown to agents (the origin policy), or None."""

    async def refresh(self) -> bool: ...
    def page_tools(self) -> list[PageTool]: ...
    async def check_version(self) -> VersionCheck: ...
    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult: ...
    async def cancel_call(self, invocation: Invocation, timeout: float, reason: str) -> bool: ...
    def stop_dialogs(self) -> None:
        """Let the bridge answer the page's further dialogs until it navigates."""

    async def close_unasked(self, what: str) -> ToolResult:
        """Close the tab without running the page's beforeunload handler."""

    async def unless_dialog(self, work: Callable[[], Awaitable[Any]], timeout: float) -> tuple[bool, Any]:
        """Run `work` until it ends, a JavaScript dialog opens on the tab, or `timeout` passes."""

    def write(
        self, check: VersionCheck | None = None, *, answered_dialog: bool = False
    ) -> AbstractAsyncContextManager[Act]:
        """The tab's one effects path, for a write the modal window makes (`Effects.write`)."""
