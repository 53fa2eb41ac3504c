"""The `mcp` SDK's server pieces load without the whole SDK, and the whole SDK still loads when asked for."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    """`code` in a fresh interpreter (this one has imported `mcp` long ago); its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_bridge_server_imports_neither_the_client_nor_the_high_level_server() -> None:
    out = _run(
        """
        import sys
        import webmcp.server.app, webmcp.server.transport, webmcp.uicontext.provider
        print(sorted(m for m in sys.modules if m.startswith(("mcp.client", "mcp.server.mcpserver", "httpx2"))))
        """
    )
    assert out.strip() == "[]"


def test_the_whole_sdk_still_loads_on_the_first_name_the_packages_lack() -> None:
    out = _run(
        """
        import webmcp.server.app
        from mcp import Client
        import mcp, mcp.server
        from mcp.server import MCPServer, Server
        from mcp.server.lowlevel.server import Server as LowLevel
        print(mcp.Client is Client, Server is LowLevel, MCPServer.__name__, mcp.types.Tool.__name__)
        try:
            mcp.no_such_name
        except AttributeError as exc:
            print("AttributeError", exc)
        """
    )
    missing = "AttributeError module 'mcp' has no attribute 'no_such_name'"
    assert out.splitlines() == ["True True MCPServer Tool", missing]


def test_a_star_import_of_the_deferred_package_gets_its_names() -> None:
    out = _run(
        """
        import webmcp.server.app
        from mcp import *
        print(Client.__name__, ClientSession.__name__)
        """
    )
    assert out.strip() == "Client ClientSession"


def test_an_sdk_imported_first_is_left_as_it_is() -> None:
    out = _run(
        """
        import mcp
        import webmcp.server.app
        print(type(mcp).__name__, type(__import__("sys").modules["mcp.server"]).__name__)
        """
    )
    assert out.strip() == "module module"


def test_the_wire_models_build_on_first_use_and_validate_as_before() -> None:
    out = _run(
        """
        import webmcp.server.app, webmcp.server.transport
        import mcp_types._v2025_11_25 as wire
        from mcp_types.methods import parse_client_request
        from pydantic import ValidationError
        print(wire.InitializeRequest.__pydantic_complete__)  # made, its validator not built yet
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        request = parse_client_request("initialize", "2025-11-25", params)
        print(type(request).__name__, request.params.client_info.name)
        try:
            parse_client_request("initialize", "2025-11-25", {"capabilities": {}})
        except ValidationError as exc:
            print(sorted(".".join(map(str, e["loc"])) for e in exc.errors()))
        """
    )
    assert out.splitlines() == ["False", "InitializeRequest c", "['params.clientInfo', 'params.protocolVersion']"]
