"""A tab's file choosers as windows, with a fake tab and desktop (no browser)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from webmcp.desktop.file_chooser import FileChooser, FileChoosers
from webmcp.desktop.uploads import UploadFolder
from webmcp.desktop.windows import WindowState


class _Owner:
    id = "tab-1"
    title = "Apply"

    def __init__(self, blocked: str | None = None) -> None:
        self._blocked = blocked
        self.dirty = 0

    def blocked(self) -> str | None:
        return self._blocked

    def mark_dirty(self) -> None:
        self.dirty += 1


class _Desktop:
    def __init__(self, uploads: UploadFolder) -> None:
        self.uploads = uploads
        self.published: list[FileChooser] = []
        self.forgotten: list[str] = []
        self.spawned: list[Any] = []

    def publish_modal(self, tab_id: str, title: str, make: Callable[[WindowState], FileChooser]) -> FileChooser:
        window = make(WindowState(id=f"dlg-{len(self.published) + 1}", title=title, modal=True, owner_id=tab_id))
        self.published.append(window)
        return window

    def spawn(self, func: Any, *args: Any, on_fault: Any = None) -> None:
        self.spawned.append((func, args))

    def forget(self, window_id: str) -> None:
        self.forgotten.append(window_id)

    def changed(self) -> None:
        pass


class _Session:
    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {}

    def on(self, method: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self.handlers[method] = handler

    async def send(self, method: str, params: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
        return {}


def _open(owner: _Owner, uploads: UploadFolder, frame: str = "F") -> tuple[FileChoosers, _Desktop, _Session]:
    desktop = _Desktop(uploads)
    choosers = FileChoosers(owner, desktop)  # type: ignore[arg-type]
    session = _Session()
    choosers._opened(session, {"frameId": frame, "mode": "selectMultiple", "backendNodeId": 7})  # type: ignore[arg-type]
    return choosers, desktop, session


def test_a_chooser_is_published_at_once_and_goes_with_its_frame(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    choosers, desktop, _ = _open(_Owner(), UploadFolder.at(str(tmp_path)))
    (chooser,) = desktop.published
    assert choosers.modal_ids() == ["dlg-1"] and chooser.window.title == "Choose files for \u2018a file field\u2019"
    assert chooser.asks.multiple and chooser.backend_node_id == 7 and desktop.spawned, "its label is read next"
    assert {"type": "list", "id": "files", "items": ["a.txt"]} in chooser.window.blocks
    choosers.frame_gone("other-frame")
    assert choosers.modal_ids() == ["dlg-1"]
    choosers.frame_gone("F")
    assert choosers.modal_ids() == [] and desktop.forgotten == ["dlg-1"] and not chooser.is_open()


def test_without_an_upload_folder_the_window_says_so() -> None:
    _, desktop, _ = _open(_Owner(), UploadFolder.at(None))
    notices = [b for b in desktop.published[0].window.blocks if b["type"] == "notice"]
    assert len(notices) == 1 and "--upload-dir" in notices[0]["text"]


def test_a_page_the_origin_policy_hides_gets_no_chooser_window(tmp_path: Path) -> None:
    choosers, desktop, _ = _open(_Owner(blocked="not allowed"), UploadFolder.at(str(tmp_path)))
    assert desktop.published == [] and choosers.modal_ids() == []
