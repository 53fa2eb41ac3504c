"""The sample site served from a thread with its own event loop, for tests and benchmarks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from sample_site.server import start_site

__all__ = ["serve_in_thread"]


@contextmanager
def serve_in_thread(
    host: str = "127.0.0.1",
    port: int = 0,
    start_site: Callable[[str, int], Awaitable[tuple[web.AppRunner, str]]] = start_site,
) -> Iterator[str]:
    """Serve a fresh sample site (its own data) on `host:port`; yields its base URL, stops on exit.

    `start_site` may name another site's starter of the same shape (bench/site uses it)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)

        async def start() -> None:
            holder["runner"], holder["url"] = await start_site(host, port)
            ready.set()

        loop.run_until_complete(start())
        loop.run_forever()
        loop.run_until_complete(holder["runner"].cleanup())
        # A handler that outlived the shutdown timeout (a page that never answers, a client still
        # holding it) is cancelled and let finish, as `asyncio.run` does: closed with it pending, it
        # was reported at exit as "Task was destroyed but it is pending!".
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the site did not start")
    try:
        yield str(holder["url"])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
