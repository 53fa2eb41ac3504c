"""The upload folder's rules: only regular files inside it, symlinks followed before the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from webmcp.desktop.uploads import UploadFolder
from webmcp.errors import ToolError


@pytest.fixture
def folder(tmp_path: Path) -> UploadFolder:
    root = tmp_path / "up"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.txt").write_text("bravo!")
    (tmp_path / "secret.txt").write_text("s")
    (root / "out-link").symlink_to(tmp_path / "secret.txt")
    (root / "dir-link").symlink_to(tmp_path)
    (root / "in-link").symlink_to(root / "a.txt")
    return UploadFolder.at(str(root))


def test_files_inside_resolve_to_their_real_paths_and_sizes(folder: UploadFolder) -> None:
    assert folder.root is not None
    got = folder.resolve(["a.txt", "sub/b.txt", str(folder.root / "in-link")])
    assert got == [
        (str(folder.root / "a.txt"), 5),
        (str(folder.root / "sub" / "b.txt"), 6),
        (str(folder.root / "a.txt"), 5),
    ]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../secret.txt", "outside the upload folder"),
        ("/etc/passwd", "outside the upload folder"),
        ("out-link", "leaves the upload folder through a symlink"),
        ("dir-link/secret.txt", "leaves the upload folder through a symlink"),
        ("nope.txt", "no such file"),
        ("sub", "is a directory"),
        ("a\x00.txt", "not a file name"),
    ],
)
def test_each_bad_path_is_refused_by_name_and_nothing_is_returned(folder: UploadFolder, path: str, says: str) -> None:
    with pytest.raises(ToolError) as caught:
        folder.resolve(["a.txt", path])
    assert caught.value.code == "validation_failed"
    body = caught.value.to_dict()
    assert says in body["message"] and (repr(path) in body["message"] or "\x00" in path)
    assert [f["field"] for f in body["fields"]] == ["paths[1]"]


def test_without_a_folder_nothing_can_be_chosen() -> None:
    with pytest.raises(ToolError) as caught:
        UploadFolder.at(None).resolve(["a.txt"])
    assert caught.value.code == "action_not_available" and "--upload-dir" in caught.value.to_dict()["message"]


def test_the_listing_shows_files_inside_only(folder: UploadFolder) -> None:
    files, more = folder.listing()
    assert files == ["a.txt", "in-link", "sub/b.txt"] and not more


def test_a_missing_folder_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        UploadFolder.at(str(tmp_path / "none"))
