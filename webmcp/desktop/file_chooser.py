"""File choosers as modal windows: a page's `<input type=file>` asks for files.

With `Page.setInterceptFileChooserDialog` on, Chromium shows no chooser of its own; it
reports `Page.fileChooserOpened` (the input's backendNodeId and whether it takes several
files) and waits for nobody. The bridge publishes a modal window over the tab, "Choose a
file for ‘Résumé’", whether an agent's page tool or the person's click opened it. `choose`
hands files from the upload folder to the input (`DOM.setFileInputFiles`, which fires the
page's `input` and `change` events); `cancel` closes the window and leaves the input as it
was. The window closes by itself when its document goes (navigation, crash, tab closed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from webmcp.desktop.modal_window import ModalWindow
from webmcp.desktop.parts import Commit, Part
from webmcp.desktop.ports import DesktopLink, ModalOwner
from webmcp.desktop.uploads import UploadFolder
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError, cdp_errors
from webmcp.js import load
from webmcp.models import ToolResult, field_item, fields_block, list_block, notice_block, text_block
from webmcp.untrusted.schema_guard import cap_text

__all__ = ["FileChooser", "FileChoosers"]

logger = logging.getLogger(__name__)

_FILE_INPUT_JS = load("file_input.js")
_LABEL_BYTES = 200


@dataclass(frozen=True)
class _Input:
    """What the page's input asks for (its label and accept are the page's text, capped)."""

    label: str
    accept: str
    multiple: bool


@dataclass(eq=False)
class FileChooser(ModalWindow):
    """An open file chooser of a tab's page, as a modal window owned by its tab.

    Its version is its own: only what the input says of itself (`described`) changes it.
    """

    session: CDPSession
    frame_id: str
    backend_node_id: int
    folder: UploadFolder
    _asks: _Input
    _close: Callable[[FileChooser], None]

    window_kind = "chooser"

    @classmethod
    def opened(
        cls,
        window: WindowState,
        *,
        owner: ModalOwner,
        session: CDPSession,
        params: dict[str, Any],
        folder: UploadFolder,
        close: Callable[[FileChooser], None],
    ) -> FileChooser:
        """The window for a `Page.fileChooserOpened` event (`described` adds what the input says of itself)."""
        asks = _Input("", "", params.get("mode") == "selectMultiple")
        frame_id, backend = str(params.get("frameId", "")), int(params.get("backendNodeId", 0))
        chooser = cls(window, owner, session, frame_id, backend, folder, asks, close)
        chooser._show()
        return chooser

    def described(self, asks: _Input) -> None:
        """The input's label and accept, read from the page: the window shows them."""
        self._asks = _Input(asks.label, asks.accept, asks.multiple or self._asks.multiple)
        self._show()
        self.window.version += 1

    def _show(self) -> None:
        asks, folder, window = self.asks, self.folder, self.window
        label = asks.label or "a file field"
        what = "files" if asks.multiple else "a file"
        window.title = f"Choose {what} for \u2018{label}\u2019"
        items = [
            field_item("Field", label),
            field_item("Accepts", asks.accept or "any file"),
            field_item("Several files", "yes" if asks.multiple else "no, one"),
        ]
        if folder.root is not None:
            items.append(field_item("Upload folder", str(folder.root)))
        blocks = [fields_block("chooser", items)]
        if folder.root is None:
            text = (
                "No upload folder: the bridge was started without --upload-dir, so agents cannot choose files. "
                "Cancel, or let the person choose in the browser."
            )
            blocks.append(notice_block("no-upload-dir", "warn", text))
            window.summary = f"The page of {self.owner.id} asks for {what} for \u2018{label}\u2019; uploads are off."
        else:
            files, more = folder.listing()
            listed: list[Any] = list(files)
            if more:
                listed.append("(more files are in the folder: name any of them relative to it)")
            heading = "Files you may choose:" if files else "The upload folder is empty."
            blocks.append(text_block("files-heading", heading))
            if listed:
                blocks.append(list_block("files", listed))
            window.summary = (
                f"The page of {self.owner.id} asks for {what} for \u2018{label}\u2019 ({asks.accept or 'any file'}): "
                f"choose paths inside {folder.root}, or cancel."
            )
        window.blocks = blocks

    @property
    def asks(self) -> _Input:
        """What the input asks for: its label, what it accepts, whether it takes several files."""
        return self._asks

    async def choose(self, paths: list[str]) -> ToolResult:
        """Hand `paths` (inside the upload folder) to the input; the window closes.

        Raises:
            ToolError: a path is refused (nothing is handed over), or the input is gone.
        """
        if not self.asks.multiple and len(paths) > 1:
            raise ToolError(
                "validation_failed",
                f"\u2018{self.asks.label}\u2019 takes one file; {len(paths)} were given. Nothing was chosen.",
                fields=[{"field": "paths", "error": "This input takes one file"}],
            )
        files = self.folder.resolve(paths)
        gone = ToolError("window_not_found", f"The file field of {self.window.id} is gone (the page changed).")
        with cdp_errors(f"choosing files for {self.window.id}", gone=gone):
            try:
                await self.session.send(
                    "DOM.setFileInputFiles",
                    {"files": [path for path, _size in files], "backendNodeId": self.backend_node_id},
                    timeout=self.owner.timeouts.command,
                )
            except CDPError:
                self._close(self)  # refused or lost, the chooser is answered all the same: its window goes
                raise
        self._close(self)
        self.owner.mark_dirty()
        await self.owner.refresh()
        chosen = [{"name": Path(path).name, "size": size} for path, size in files]
        named = ", ".join(f"{c['name']} ({c['size']} bytes)" for c in chosen)
        return ToolResult(
            message=f"Chose {len(files)} file(s) for \u2018{self.asks.label}\u2019: {named}. The page has them now.",
            result={"files": chosen},
        )

    async def cancel(self) -> ToolResult:
        """Close the chooser without choosing; the input keeps what it had."""
        self._close(self)
        self.owner.mark_dirty()
        return ToolResult(message=f"Cancelled the file chooser for \u2018{self.asks.label}\u2019; nothing was chosen.")


class FileChoosers(Part):
    """A tab's open file choosers: intercepted on every session, each published as a window (a part: parts.py)."""

    def __init__(self, owner: ModalOwner, desktop: DesktopLink) -> None:
        self._owner = owner
        self._desktop = desktop
        self._open: list[FileChooser] = []

    def watch(self, session: CDPSession, main: bool = False) -> list[SetUp]:
        """Intercept `session`'s file choosers (its page's or an OOPIF's): the set-up to send."""
        session.on("Page.fileChooserOpened", lambda p: self._opened(session, p))
        session.on("Page.frameDetached", lambda p: self.frame_gone(str(p.get("frameId", ""))))
        return [SetUp("Page.setInterceptFileChooserDialog", {"enabled": True})]

    def modal_ids(self) -> list[str]:
        """The window ids of the choosers open now, oldest first."""
        return [c.window.id for c in self._open]

    def committed(self, doc: Commit) -> None:
        self.frame_gone(None)  # a chooser ends with its document

    def frame_left(self, frame_id: str) -> None:
        self.frame_gone(frame_id)

    def crashed(self) -> None:
        self.frame_gone(None)

    def closing(self) -> None:
        self.frame_gone(None)

    def _opened(self, session: CDPSession, params: dict[str, Any]) -> None:
        if self._owner.blocked() is not None:
            return  # a page agents may not see gets no files from them (its input stays as it was)
        # Published at once, so the call that opened it finds it; what the input says of itself follows.
        folder = self._desktop.uploads
        chooser = self._desktop.publish_modal(
            self._owner.id,
            "Choose a file",
            lambda window: FileChooser.opened(
                window, owner=self._owner, session=session, params=params, folder=folder, close=self.forget
            ),
        )
        self._open.append(chooser)
        self._owner.mark_dirty()
        self._desktop.spawn(self._describe, chooser)

    async def _describe(self, chooser: FileChooser) -> None:
        asks = await _read_input(chooser.session, chooser.backend_node_id, self._owner.timeouts.command)
        if asks is not None and chooser.is_open():
            chooser.described(asks)
            self._desktop.changed()

    def forget(self, chooser: FileChooser) -> None:
        """`chooser` was answered or its page went: its window goes."""
        if chooser not in self._open:
            return
        self._open.remove(chooser)
        chooser.closed()
        self._desktop.forget(chooser.window.id)
        self._desktop.changed()

    def frame_gone(self, frame_id: str | None) -> None:
        """The document of `frame_id` (None: every frame) went: its choosers close."""
        for chooser in [c for c in self._open if frame_id is None or c.frame_id == frame_id]:
            self.forget(chooser)


async def _read_input(session: CDPSession, backend_node_id: int, timeout: float) -> _Input | None:
    try:
        resolved = await session.send("DOM.resolveNode", {"backendNodeId": backend_node_id}, timeout=timeout)
        reply = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": resolved["object"]["objectId"], "functionDeclaration": _FILE_INPUT_JS, "returnByValue": True},
            timeout=timeout,
        )
    except CDPError as exc:  # the input went with its page: the window keeps the description it has
        logger.debug("could not read the file input: %s", exc)
        return None
    value = reply.get("result", {}).get("value") or {}
    return _Input(
        cap_text(str(value.get("label", "")), _LABEL_BYTES),
        cap_text(str(value.get("accept", "")), _LABEL_BYTES),
        bool(value.get("multiple")),
    )
