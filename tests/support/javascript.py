"""Checking page scripts with Node: is a file, or an expression built from files, valid JavaScript?"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import pytest

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to check the page scripts")


def script_names(package: str) -> list[str]:
    """The `.js` files a package ships as data."""
    return sorted(f.name for f in resources.files(package).iterdir() if f.name.endswith(".js"))


def syntax_error(source: str) -> str:
    """What `node --check` says of `source` (empty when it is valid JavaScript)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.js"
        path.write_text(source, encoding="utf-8")
        reply = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=30)
    return "" if reply.returncode == 0 else reply.stderr


def expression_error(source: str) -> str:
    """`syntax_error` of `source` used as one expression, as `call` and `Runtime.callFunctionOn` use it."""
    return syntax_error(f"({source});")


def assert_one_valid_expression(source: str) -> None:
    """`source` is a non-empty script that node parses, both as it is and as the one expression the bridge sends."""
    assert source.strip()
    assert syntax_error(source) == ""
    assert expression_error(source) == ""
