"""The least an MCP server can be in front of raw CDP: the floor under issue 22 item 2.

    python -m bench.peers.bare_server URL

No SDK on the server side: newline-delimited JSON-RPC on stdin and stdout, read by the event
loop and written with one `os.write`, and a page tool is `WebMCP.invokeTool` on a Chromium of
its own (`raw.RawCdp`, the same steps as the raw floor of `bench/peers`). It answers
`initialize`, `ping`, `tools/list` (the page's tools, as `tab__<name>`) and `tools/call` (the
tool's output as text), nothing else. It reads no state, masks nothing and checks no input: what
is left between it and raw `invokeTool`, driven by the same `mcp.Client`, is the client's MCP
round trip and the stdio hop. `bench/quiet_call_floor.py --bare` runs it beside the bridges.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import anyio

from .raw import RawCdp

_PROTOCOL = "2025-11-25"


def _write(message: dict[str, Any]) -> None:
    os.write(1, json.dumps(message, separators=(",", ":")).encode() + b"\n")


async def _answer(raw: RawCdp, request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification (notifications/initialized)
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", _PROTOCOL),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bare", "version": "0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        schema = {"type": "object"}
        result = {"tools": [{"name": f"tab__{n}", "inputSchema": schema} for n in sorted(raw.tools)]}
    elif method == "tools/call":
        name = str(params.get("name", "")).removeprefix("tab__")
        try:
            text = await raw.page_tool(name, params.get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}]}
        except Exception as exc:  # noqa: BLE001 (a bench floor: any failure is the caller's error text)
            result = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def serve(url: str) -> None:
    raw = RawCdp()
    await raw.open()
    try:
        await raw.navigate(url)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if not line.strip():
                continue
            answer = await _answer(raw, json.loads(line))
            if answer is not None:
                _write(answer)
    finally:
        await raw.close()


def main() -> None:
    anyio.run(serve, sys.argv[1])


if __name__ == "__main__":
    main()
