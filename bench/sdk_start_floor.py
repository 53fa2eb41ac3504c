#!/usr/bin/env python
"""The `mcp` SDK's own start-up floor (issue 40 item 4): spawn → first `tools/list` answered, for a
server that is nothing but the SDK's low-level `Server` over stdio with one tool.

    .venv/bin/python bench/sdk_start_floor.py [-n 7]

Driven by `mcp.Client` over stdio in handshake mode, as bench/bench_start.py drives the bridge. No
server written with the SDK starts faster than this; the bridge's first `tools/list` (bench_start.py)
and the peers' (bench/peers) are read against it. Nothing here is asserted by any test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import anyio


def serve() -> None:
    import mcp_types as types  # noqa: PLC0415 - the import is what is measured
    from mcp.server import Server  # noqa: PLC0415
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    server = Server("floor", on_list_tools=list_tools)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


async def once() -> float:
    from mcp import Client  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415

    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve"])
    started = time.perf_counter()
    async with Client(stdio_client(params), mode="legacy") as client:
        await client.list_tools()
        return (time.perf_counter() - started) * 1000


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7)
    opts = parser.parse_args()

    async def rounds() -> list[float]:
        return [await once() for _ in range(opts.n)]

    times = anyio.run(rounds)
    print(f"SDK-only server, start → first tools/list: median {statistics.median(times):.0f} ms "
          f"(min {min(times):.0f}, max {max(times):.0f}), n={len(times)}")  # fmt: skip


if __name__ == "__main__":
    main()
