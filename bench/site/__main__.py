"""Serve the benchmark's Meridian site by hand: ``python -m bench.site --port 8766``."""

from __future__ import annotations

import argparse
import asyncio

from . import start_site


async def _serve(host: str, port: int) -> None:
    runner, base_url = await start_site(host, port)
    print(f"Meridian listening on {base_url}/  (shop/, news/story.html, app/tasks.html; Ctrl-C to stop)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.site", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8766, help="port (0 = any free port; default 8766)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args.host, args.port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
