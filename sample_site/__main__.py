"""Command line entry point: ``python -m sample_site --port 8765``."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable

from aiohttp import web

from sample_site.server import start_site

Starter = Callable[[str, int], Awaitable[tuple[web.AppRunner, str]]]


async def _serve(host: str, port: int, start: Starter, banner: str) -> None:
    """Serve until cancelled (Ctrl-C)."""
    runner, base_url = await start(host, port)
    print(f"{banner} listening on {base_url}/  (Ctrl-C to stop)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(
    argv: list[str] | None = None,
    *,
    prog: str = "python -m sample_site",
    description: str | None = __doc__,
    default_port: int = 8765,
    start: Starter = start_site,
    banner: str = "Harbor Help Desk",
) -> None:
    """Parse arguments and run the server until interrupted (another site passes its own starter)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=default_port, help=f"port (0 = any free port; default {default_port})"
    )
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args.host, args.port, start, banner))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
