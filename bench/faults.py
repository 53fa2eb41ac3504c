#!/usr/bin/env python
"""Timings of the fault paths of issue 11, for docs/reliability.md (the tests assert no times).

    python bench/faults.py                 # 3 rounds of each
    python bench/faults.py --rounds 5

* deadline: `--tool-timeout 5`; a cancellable slow tool, and a page whose main thread is
  busy (`freeze_page` 20 s): time from the call to its `action_timeout`, and `pageTold`;
  then a write whose version check meets the still-frozen page.
* browser death: kill -9 of the browser the bridge launched while a page tool runs, over
  stdio and over HTTP: time to the call's answer, time to the bridge's exit, exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/faults.py` from a checkout
    sys.path.insert(0, str(ROOT))

from soak import _free_port, _wait_http  # noqa: E402  (bench/ is the script directory)

from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.e2e.test_browser_death_e2e import _LineClient, _main_browser, _slow_report_running  # noqa: E402
from tests.support.mcp_harness import open_http_client, open_stdio_client  # noqa: E402
from tests.support.stage import run_site  # noqa: E402

DEADLINE = 5.0


async def _tools_ready(client: Any, suffix: str) -> str:
    with anyio.fail_after(30):
        while True:
            names = [t.name for t in (await client.list_tools()).tools if t.name.endswith(suffix)]
            if names:
                return names[0]
            await anyio.sleep(0.2)


async def deadline_round(site: str) -> dict[str, Any]:
    # The bridge attaches with --cdp-url: the port, not the launcher's pipe default.
    browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    out: dict[str, Any] = {}
    try:
        base = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--tool-timeout", str(DEADLINE)]
        async with open_stdio_client([*base, site + "/", site + "/danger.html"], mode="auto", subscribe=()) as mcp:
            slow = await _tools_ready(mcp.client, "__slow_report")
            freeze = await _tools_ready(mcp.client, "__freeze_page")
            started = time.perf_counter()
            answer = await mcp.client.call_tool(slow, {"seconds": 60})
            out["slow_tool_s"] = round(time.perf_counter() - started, 2)
            out["slow_tool_pageTold"] = (answer.structured_content or {}).get("pageTold")
            started = time.perf_counter()
            answer = await mcp.client.call_tool(freeze, {"seconds": 20})
            out["busy_page_s"] = round(time.perf_counter() - started, 2)
            out["busy_page_pageTold"] = (answer.structured_content or {}).get("pageTold")
            started = time.perf_counter()
            answer = await mcp.client.call_tool(freeze, {"seconds": 1, "expectedVersion": 1})
            out["busy_version_check_s"] = round(time.perf_counter() - started, 2)
            out["busy_version_check_code"] = (answer.structured_content or {}).get("code")
    finally:
        await browser.close()
    return out


async def death_round(site: str, transport: str, tmp: Path) -> dict[str, Any]:
    profile = tmp / f"profile-{transport}-{time.monotonic_ns()}"
    command = [sys.executable, "-m", "webmcp", "--headless", "--user-data-dir", str(profile)]
    out: dict[str, Any] = {"transport": transport}
    if transport == "stdio":
        return {**out, **await _stdio_death(command, site, profile)}
    port, token = _free_port(), "faults-token"
    bridge = await anyio.open_process(
        [*command, "--http", f"127.0.0.1:{port}", f"--token={token}", site + "/"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        await _wait_http(url)
        async with open_http_client(url, token, mode="auto", subscribe=()) as mcp:
            out.update(await _kill_during_call(mcp.client, profile))
        killed = out.pop("_killed_at")
        with anyio.fail_after(60):
            out["exit_status"] = await bridge.wait()
        out["exit_after_kill_s"] = round(time.perf_counter() - killed, 2)
    finally:
        if bridge.returncode is None:
            bridge.kill()
            await bridge.wait()
    return out


async def _stdio_death(command: list[str], site: str, profile: Path) -> dict[str, Any]:
    """Over stdio with a bare JSON-RPC client, stdin kept open: answer and exit after kill -9."""
    process = await anyio.open_process(
        [*command, site + "/"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    client = _LineClient(process)
    out: dict[str, Any] = {}
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.pump)
            with anyio.fail_after(60):
                call = await _slow_report_running(client)
                killed = time.perf_counter()
                os.kill(_main_browser(profile), signal.SIGKILL)
                answer = await client.answer(call)
                out["answer_after_kill_s"] = round(time.perf_counter() - killed, 2)
                out["code"] = answer["result"]["structuredContent"]["code"]
                out["exit_status"] = await process.wait()
                out["exit_after_kill_s"] = round(time.perf_counter() - killed, 2)
            tg.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return out


async def _kill_during_call(client: Any, profile: Path) -> dict[str, Any]:
    slow = await _tools_ready(client, "__slow_report")
    result: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            answer = await client.call_tool(slow, {"seconds": 60})
            result["answer_after_kill_s"] = round(time.perf_counter() - result["_killed_at"], 2)
            result["code"] = (answer.structured_content or {}).get("code")

        tg.start_soon(call)
        with anyio.fail_after(30):
            while "Building report" not in (await client.read_resource("app://windows")).contents[0].text:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        result["_killed_at"] = time.perf_counter()
        os.kill(_main_browser(profile), signal.SIGKILL)
    return result


async def run(rounds: int) -> dict[str, Any]:
    import tempfile

    report: dict[str, Any] = {"deadline_s": DEADLINE, "deadline": [], "death": []}
    with run_site() as site, tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            report["deadline"].append(await deadline_round(site))
            for transport in ("stdio", "http"):
                entry = await death_round(site, transport, Path(tmp))
                entry.pop("_killed_at", None)
                report["death"].append(entry)
    for key in ("slow_tool_s", "busy_page_s", "busy_version_check_s"):
        values = [r[key] for r in report["deadline"]]
        report[f"max_{key}"] = max(values)
        report[f"median_{key}"] = statistics.median(values)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.rounds), indent=1))


if __name__ == "__main__":
    main()
