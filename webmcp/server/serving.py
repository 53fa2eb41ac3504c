"""Serving one stdio connection with the SDK's own loops, without its relay task (issue 22).

`Server.run` (the SDK's `serve_dual_era_loop`) peeks at the client's first request to pick
the protocol era, then relays every later message through a task and a memory stream of
its own to the serving loop: a task switch and a context copy on every request. When the
server reads from `MessageReader`, which can keep the first request to be received again,
the era is picked here and the SDK's loop for it reads the stream itself.

The loops are private to the SDK (`mcp.server.runner`): when they are not there as this
module expects, `Server.run` serves as before.
"""

from __future__ import annotations

from typing import Any

from mcp.server import runner as _runner
from mcp.server.lowlevel.server import Server
from mcp.server.models import InitializationOptions

from webmcp.server.stdio import MessageReader

__all__ = ["serve_connection"]

_LOOPS = ("_serve_legacy_stream", "_serve_modern_stream", "_has_modern_envelope")


async def serve_connection(
    server: Server[Any], read_stream: Any, write_stream: Any, options: InitializationOptions
) -> None:
    """Serve one client over the two streams until its input ends (as `Server.run` does)."""
    if not isinstance(read_stream, MessageReader) or not all(hasattr(_runner, name) for name in _LOOPS):
        await server.run(read_stream, write_stream, options)
        return
    async with server.lifespan(server) as state:
        try:
            opening = await read_stream.opening_request()
            # As serve_dual_era_loop: a request with the 2026-07-28 envelope opens a modern
            # connection, anything else (`initialize` above all) a handshake one.
            if opening is not None and opening.method != "initialize" and _runner._has_modern_envelope(opening.params):
                await _runner._serve_modern_stream(
                    server, read_stream, write_stream, lifespan_state=state, raise_exceptions=False
                )
            else:
                await _runner._serve_legacy_stream(
                    server,
                    read_stream,
                    write_stream,
                    lifespan_state=state,
                    session_id=None,
                    init_options=options,
                    raise_exceptions=False,
                )
        finally:
            await write_stream.aclose()
