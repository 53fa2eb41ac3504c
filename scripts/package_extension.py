"""Build the extension's zip, for "Load unpacked" (unzip it) or a Chrome Web Store upload.

    python scripts/package_extension.py [--out DIR]   # default DIR: dist/

Writes DIR/webmcp-bridge-extension-<manifest version>.zip holding extension/'s files at the
zip's root (the manifest first), after checking that every file the manifest names exists.
The README and anything not shipped to the browser stay out. Prints the zip's path.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "extension"
SHIPPED = (".json", ".js", ".html", ".css", ".png")
# A fixed date: the same sources give the same zip, byte for byte.
STAMP = (2026, 1, 1, 0, 0, 0)


class PackagingError(Exception):
    """The extension folder is not fit to ship; the message says what is wrong."""


def _named_by(manifest: dict[str, Any]) -> set[str]:
    """Every file the manifest refers to."""
    names = set(manifest.get("icons", {}).values())
    action = manifest.get("action", {})
    names |= set(action.get("default_icon", {}).values())
    if "default_popup" in action:
        names.add(action["default_popup"])
    if "service_worker" in manifest.get("background", {}):
        names.add(manifest["background"]["service_worker"])
    return names


def package(out: Path, source: Path = EXTENSION) -> Path:
    """Write the zip into `out` and return its path.

    Raises:
        PackagingError: the manifest names a missing file, or has no icons.
    """
    manifest = json.loads((source / "manifest.json").read_text())
    if not manifest.get("icons"):
        raise PackagingError("manifest.json has no icons; run python scripts/extension_icons.py and list them")
    files = sorted(
        path.relative_to(source).as_posix() for path in source.rglob("*") if path.is_file() and path.suffix in SHIPPED
    )
    missing = sorted(_named_by(manifest) - set(files))
    if missing:
        raise PackagingError(f"manifest.json names files that are not in {source}: {', '.join(missing)}")
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"webmcp-bridge-extension-{manifest['version']}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ["manifest.json", *(f for f in files if f != "manifest.json")]:
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, (source / name).read_bytes())
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where to write the zip (default: dist/)")
    args = parser.parse_args(argv)
    try:
        print(package(args.out))
    except PackagingError as exc:
        print(f"package-extension: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
