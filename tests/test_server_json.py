"""server.json, the MCP registry's entry, says what the package and its command really are."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from webmcp.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _server() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "server.json").read_text())
    return data


def test_server_json_names_the_pypi_package_at_the_project_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    server = _server()
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", server["name"])
    assert 0 < len(server["description"]) <= 100  # the registry's limit
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert server["version"] == package["version"] == project["version"]
    assert package["transport"] == {"type": "stdio"}
    # The registry checks ownership by this marker in the package's description (the README).
    assert f"mcp-name: {server['name']}" in (ROOT / "README.md").read_text()


def test_every_argument_server_json_offers_is_one_the_command_takes() -> None:
    options = {option for action in build_parser()._actions for option in action.option_strings}
    (package,) = _server()["packages"]
    named = [argument for argument in package["packageArguments"] if argument["type"] == "named"]
    assert named and {argument["name"] for argument in named} <= options
    flags = {action.option_strings[0] for action in build_parser()._actions if action.nargs == 0}
    for argument in named:
        # A flag takes no value: the registry is told so with format boolean, and only then.
        assert (argument.get("format") == "boolean") == (argument["name"] in flags), argument["name"]
