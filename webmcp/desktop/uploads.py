"""The upload folder (`--upload-dir`): the only files an agent may hand to a page's file chooser.

A path is taken relative to the folder (or absolute, inside it), resolved with every
symlink followed, and must then still lie inside the folder's own resolved path and be a
regular file. Anything else is `validation_failed` naming the path as given; nothing is
handed to the page unless every path passes. Without the switch, no file can be chosen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from webmcp.errors import ToolError
from webmcp.untrusted.schema_guard import cap_text

__all__ = ["UploadFolder"]

_LISTED = 50
"""How many of the folder's files a chooser window lists."""
_DEPTH = 3


@dataclass(frozen=True)
class UploadFolder:
    """The folder agents may upload from; `root` None: uploads are off."""

    root: Path | None = None

    @classmethod
    def at(cls, folder: str | None) -> UploadFolder:
        """The folder `folder` names (resolved now), or none.

        Raises:
            ValueError: `folder` is not an existing directory.
        """
        if folder is None:
            return cls(None)
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise ValueError(f"--upload-dir {folder!r} is not a directory")
        return cls(root)

    def resolve(self, paths: list[str]) -> list[tuple[str, int]]:
        """The absolute, resolved paths of `paths` and their sizes, each a regular file inside the folder.

        Raises:
            ToolError: `action_not_available` without a folder; `validation_failed` naming
                each path that is outside the folder, missing, not a regular file, or leaves
                it through a symlink.
        """
        if self.root is None:
            raise ToolError(
                "action_not_available",
                "No file can be chosen: the bridge was started without --upload-dir, so agents may not upload "
                "files. Cancel the chooser, or ask the person to choose the file in the browser.",
            )
        if not paths:
            raise ToolError(
                "validation_failed",
                "Give at least one path (relative to the upload folder); to choose nothing, cancel.",
                fields=[{"field": "paths", "error": "Must name at least one file"}],
            )
        resolved: list[tuple[str, int]] = []
        problems: list[dict[str, str]] = []
        for index, given in enumerate(paths):
            found, problem = self._one(given)
            if problem is not None:
                problems.append({"field": f"paths[{index}]", "error": f"{cap_text(given, 300)!r}: {problem}"})
            elif found is not None:
                resolved.append(found)
        if problems:
            named = "; ".join(p["error"] for p in problems[:5])
            raise ToolError("validation_failed", f"Nothing was chosen: {named}.", fields=problems)
        return resolved

    def _one(self, given: str) -> tuple[tuple[str, int] | None, str | None]:
        assert self.root is not None
        if "\x00" in given or not given.strip():
            return None, "not a file name"
        candidate = Path(given).expanduser()
        joined = candidate if candidate.is_absolute() else self.root / candidate
        # Every symlink followed, `..` included: what the browser would read is what is checked.
        real = Path(os.path.realpath(joined))
        if not real.is_relative_to(self.root):
            where = (
                "leaves the upload folder through a symlink"
                if _lexically_inside(joined, self.root)
                else (f"is outside the upload folder {self.root}")
            )
            return None, where
        if not real.exists():
            return None, "no such file in the upload folder"
        if real.is_dir():
            return None, "is a directory, not a file"
        if not real.is_file():
            return None, "is not a regular file"
        if not os.access(real, os.R_OK):
            return None, "cannot be read"
        return (str(real), real.stat().st_size), None

    def listing(self) -> tuple[list[str], bool]:
        """Up to `_LISTED` files of the folder, relative to it (sorted), and whether there are more."""
        if self.root is None:
            return [], False
        found: list[str] = []
        more = False
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = Path(dirpath).relative_to(self.root)
            if len(rel.parts) >= _DEPTH:
                dirnames[:] = []
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if path.is_file() and Path(os.path.realpath(path)).is_relative_to(self.root):
                    if len(found) >= _LISTED:
                        more = True
                        break
                    found.append((rel / name).as_posix())
            if more:
                break
        return found, more


def _lexically_inside(path: Path, root: Path) -> bool:
    """`path` lies inside `root` by its name alone (no symlink followed, `..` collapsed)."""
    return Path(os.path.normpath(path)).is_relative_to(root)
