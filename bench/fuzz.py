#!/usr/bin/env python
"""The long fuzz run: the e2e fuzzer (tests/e2e/test_fuzz_e2e.py) for minutes, over both transports.

    python bench/fuzz.py --seconds 300          # 300 s over stdio, then 300 s over HTTP
    python bench/fuzz.py --seconds 60 --seed 7

Every call must be refused with a structured error (or a JSON-RPC error for what no model
could have sent), the sample site's /api/state must not change, and the bridge must still
list its tools at the end. Prints the refusals by code per transport.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/fuzz.py` from a checkout
    sys.path.insert(0, str(ROOT))

from soak import _free_port, _wait_http  # noqa: E402  (bench/ is the script directory)

from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.e2e.test_fuzz_e2e import _state, fuzz_client  # noqa: E402
from tests.support.mcp_harness import open_http_client, open_stdio_client  # noqa: E402
from tests.support.stage import run_site  # noqa: E402


async def _ready(client: object) -> None:
    with anyio.fail_after(30):
        while not any(t.name.endswith("__close_ticket") for t in (await client.list_tools()).tools):  # type: ignore[attr-defined]  # noqa: ASYNC110
            await anyio.sleep(0.2)


async def run(seconds: float, seed: int) -> dict[str, object]:
    report: dict[str, object] = {}
    with run_site() as site:
        # The bridge attaches with --cdp-url: the port, not the launcher's pipe default.
        browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
        try:
            before = await _state(site)
            command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, site + "/"]
            async with open_stdio_client(command, mode="auto", subscribe=()) as mcp:
                await _ready(mcp.client)
                report["stdio"] = dict(await fuzz_client(mcp.client, seed, seconds))
            port, token = _free_port(), "fuzz-token"
            bridge = await anyio.open_process(
                [*command[:-1], "--http", f"127.0.0.1:{port}", f"--token={token}", site + "/"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                url = f"http://127.0.0.1:{port}/mcp"
                await _wait_http(url)
                async with open_http_client(url, token, mode="auto", subscribe=()) as mcp:
                    await _ready(mcp.client)
                    report["http"] = dict(await fuzz_client(mcp.client, seed + 1, seconds))
                    await _ready(mcp.client)
                report["bridge_alive"] = bridge.returncode is None
            finally:
                bridge.terminate()
                with anyio.move_on_after(10):
                    await bridge.wait()
            report["state_unchanged"] = await _state(site) == before
        finally:
            await browser.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="per transport (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.seconds, args.seed), indent=1))


if __name__ == "__main__":
    main()
