"""Command line entry point: ``python -m sample_site --port 8765``."""

from __future__ import annotations

import argparse
import asyncio

from sample_site.server import start_site


async def _serve(host: str, port: int) -> None:
    """Serve until cancelled (Ctrl-C)."""
    runner, base_url = await start_site(host, port)
    print(f"Harbor Help Desk listening on {base_url}/  (Ctrl-C to stop)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the server until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m sample_site", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0 = any free port; default 8765)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args.host, args.port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
