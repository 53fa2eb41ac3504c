"""scripts/package-extension: a zip Chrome can load, icons included, or a clear refusal."""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_package_extension_writes_a_zip_with_the_manifest_and_every_file_it_names(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", "scripts/package-extension", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    target = Path(done.stdout.strip())
    manifest = json.loads((ROOT / "extension/manifest.json").read_text())
    assert target == tmp_path / f"webmcp-bridge-extension-{manifest['version']}.zip"
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
        assert names[0] == "manifest.json", "the manifest sits at the zip's root"
        assert json.loads(archive.read("manifest.json")) == manifest
        for size, name in manifest["icons"].items():
            assert _png_size(archive.read(name)) == (int(size), int(size)), name
        for name in [*manifest["action"]["default_icon"].values(), manifest["action"]["default_popup"]]:
            assert name in names
        assert manifest["background"]["service_worker"] in names and "cdp.js" in names
        assert "README.md" not in names


def test_package_extension_refuses_a_manifest_that_names_a_missing_icon(tmp_path: Path) -> None:
    source = tmp_path / "extension"
    shutil.copytree(ROOT / "extension", source)
    (source / "icons/icon48.png").unlink()
    packaging = _script("package_extension")
    with pytest.raises(packaging.PackagingError, match="icons/icon48.png"):
        packaging.package(tmp_path / "out", source)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir()), "no zip is written"


def test_the_committed_icons_are_what_the_icon_script_draws() -> None:
    assert _script("extension_icons").main(["--check"]) == 0
