"""The bridge as new users meet it: the MCP Inspector CLI and the TypeScript SDK (issue 9.11).

Both come from the npm registry at pinned versions (tests/e2e/js/package.json), installed
into tests/e2e/js/node_modules by tests/e2e/js/install.sh, and drive the bridge over stdio
and over Streamable HTTP: list, read, subscribe, call, bad input.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

JS_DIR = Path(__file__).resolve().parent / "js"
INSPECTOR = JS_DIR / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"


@pytest.fixture(scope="module")
def node() -> str:
    """The node binary, with the pinned clients installed (once; the script is idempotent)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the JavaScript MCP clients")
    subprocess.run(["bash", str(JS_DIR / "install.sh")], check=True, timeout=600)
    return node


def _bridge(browser: BrowserProcess, *extra: str) -> list[str]:
    return [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, *extra]


async def _run(command: list[str], timeout: float = 60, cwd: Path = JS_DIR) -> str:
    with anyio.fail_after(timeout):
        done = await anyio.run_process(command, check=False, cwd=cwd, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout.decode()


async def _drive(node: str, *args: str) -> dict[str, Any]:
    """Run the TypeScript SDK client script; its JSON report."""
    out = await _run([node, str(JS_DIR / "drive_bridge.mjs"), *args])
    return json.loads(out.strip().splitlines()[-1])


def _check_sdk_report(report: dict[str, Any], site: str) -> None:
    tab = report["tab"]
    assert "app__open_tab" in report["toolNames"] and f"{tab}__close_ticket" in report["toolNames"]
    assert report["capabilities"]["resources"]["subscribe"] is True
    assert any(w["id"] == tab for w in report["windows"]["windows"])
    assert not report["closed"].get("isError"), report["closed"]
    assert "app://windows" in report["updatedUris"], "the subscription announced the change"
    ticket = report["ticket"]
    assert not ticket.get("isError") and ticket["structuredContent"]["result"]["subject"] == "Cannot reset my password"
    assert ticket["content"][0]["type"] == "text" and ticket["content"][0]["text"]


def _check_sdk_errors(report: dict[str, Any]) -> None:
    """Error results reach the SDK's caller as results (the SDK validates them against outputSchema)."""
    bad = report["badInput"]
    assert "thrown" not in bad, bad["thrown"]
    assert bad["isError"] is True and bad["structuredContent"]["code"] == "validation_failed"
    assert bad["structuredContent"]["fields"][0]["field"] == "id"
    assert report["noWindow"]["structuredContent"]["code"] == "window_not_found"


async def test_typescript_sdk_client_drives_the_bridge_over_stdio(
    node: str, site: str, browser: BrowserProcess
) -> None:
    report = await _drive(node, "stdio", *_bridge(browser, site + "/"))
    _check_sdk_report(report, site)


async def test_typescript_sdk_client_drives_the_bridge_over_streamable_http(
    node: str, site: str, browser: BrowserProcess
) -> None:
    async with http_bridge(browser, site + "/") as (url, token):
        report = await _drive(node, "http", url, token)
    _check_sdk_report(report, site)


async def test_typescript_sdk_client_gets_error_results_as_results(
    node: str, site: str, browser: BrowserProcess
) -> None:
    report = await _drive(node, "stdio", *_bridge(browser, site + "/"))
    _check_sdk_errors(report)


async def _inspect(node: str, target: list[str], method: str, *options: str) -> Any:
    """Run one Inspector CLI command; `target` is a URL with its options, or a command line."""
    if "://" in target[0]:
        args = [*target, "--method", method, *options]
    else:  # a command: its own options go after "--", where the CLI does not read them
        args = [target[0], "--method", method, *options, "--", *target[1:]]
    # The CLI finds its own package.json (for its client name) at "../package.json" from the
    # working directory, then imports that path relative to itself: run it from node_modules/.
    out = await _run([node, str(INSPECTOR), *args], cwd=JS_DIR / "node_modules")
    return json.loads(out)


async def test_inspector_cli_lists_reads_and_calls_over_stdio(node: str, site: str, browser: BrowserProcess) -> None:
    # The Inspector CLI starts the server anew for each command, as a user trying it does.
    target = _bridge(browser)
    listed = await _inspect(node, target, "tools/list")
    assert "app__open_tab" in [t["name"] for t in listed["tools"]]
    resources = await _inspect(node, target, "resources/list")
    assert "app://windows" in [r["uri"] for r in resources["resources"]]
    read = await _inspect(node, target, "resources/read", "--uri", "app://windows")
    assert "operableWindowIds" in json.loads(read["contents"][0]["text"])


async def test_inspector_cli_lists_reads_and_calls_over_streamable_http(
    node: str, site: str, browser: BrowserProcess
) -> None:
    async with http_bridge(browser, site + "/") as (url, token):
        target = [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
        with anyio.fail_after(20):
            while True:
                names = [t["name"] for t in (await _inspect(node, target, "tools/list"))["tools"]]
                tab = next((n.split("__")[0] for n in names if n.endswith("__get_ticket")), None)
                if tab is not None:
                    break
        read = await _inspect(node, target, "resources/read", "--uri", "app://windows")
        assert tab in json.loads(read["contents"][0]["text"])["operableWindowIds"]
        ticket = await _inspect(node, target, "tools/call", "--tool-name", f"{tab}__get_ticket", "--tool-arg", "id=101")
        assert not ticket.get("isError") and ticket["structuredContent"]["result"]["id"] == 101


async def test_inspector_cli_shows_bad_input_as_an_error_result(node: str, site: str, browser: BrowserProcess) -> None:
    stdio = _bridge(browser)
    bad = await _inspect(node, stdio, "tools/call", "--tool-name", "app__open_tab", "--tool-arg", "url=javascript:1")
    assert bad["isError"] is True and bad["structuredContent"]["code"] == "validation_failed"
    async with http_bridge(browser, site + "/") as (url, token):
        target = [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
        missing = await _inspect(node, target, "tools/call", "--tool-name", "tab-999__navigate")
        assert missing["isError"] is True and missing["structuredContent"]["code"] == "window_not_found"


async def test_a_host_that_reads_only_content_sees_the_pages_answer(
    node: str, site: str, browser: BrowserProcess
) -> None:
    report = await _drive(node, "stdio", *_bridge(browser, site + "/"))
    ticket_text = report["ticket"]["content"][0]["text"]
    assert "Cannot reset my password" in ticket_text, ticket_text
