"""The sample site, served on 127.0.0.1 from a thread of the bench's own process."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sample_site import start_site

__all__ = ["serve_site"]


@contextmanager
def serve_site() -> Iterator[str]:
    """The sample site on 127.0.0.1 from a thread with its own event loop; yields its base URL."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)

        async def start() -> None:
            holder["runner"], holder["url"] = await start_site("127.0.0.1", 0)
            ready.set()

        loop.run_until_complete(start())
        loop.run_forever()
        loop.run_until_complete(holder["runner"].cleanup())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the sample site did not start")
    try:
        yield str(holder["url"])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
