"""What every modal window is: a published window over its tab, open until the page or an answer closes it.

A JavaScript dialog, an in-page `<dialog>`, a waiting form, a sign-in prompt and a file
chooser differ in what they show and how they are answered; they share this: their
`WindowState`, the tab they belong to (reached only through `ports.ModalOwner`), the lock
their operations take one at a time, and whether they are still open. Their version is
their own (nothing of the page changes it while they are open), so `check_version` reads
no page; a modal that shows the page's own content (`InPageModal`) checks its tab instead.

A modal window carries no page tools unless it says so: the dispatcher and the catalogue
ask for page tools only of a window that has them (`tools.kinds.has_page_tools`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import anyio

from webmcp.desktop.ports import ModalOwner
from webmcp.desktop.windows import VersionCheck, WindowState

__all__ = ["ModalWindow"]


@dataclass(eq=False)
class ModalWindow:
    """A modal window owned by its tab; subclasses add what it shows and how it is answered."""

    window: WindowState
    owner: ModalOwner
    op_lock: anyio.Lock = field(default_factory=anyio.Lock, kw_only=True)
    _open: bool = field(default=True, kw_only=True)

    window_kind: ClassVar[str]
    """Which records (`tools.records`) apply to it: "dialog", "modal", "form", "sign_in", "chooser"."""

    @property
    def tab_id(self) -> str:
        """The id of the tab it belongs to (its `owner_id` may be a modal it lies over)."""
        return self.owner.id

    def is_open(self) -> bool:
        return self._open

    def closed(self) -> None:
        """The window is no longer published (answered, or its page, frame or tab went)."""
        self._open = False

    async def check_version(self) -> VersionCheck:
        return VersionCheck(self.window.version)  # nothing of the page changes it while it is open
