"""The effects lab's one server route (issue 38): a download named after the action that started it.

* ``GET /effects/download?via=ACTION`` answers a small text file as an attachment named
  ``ACTION-download.txt``, so that every cell of the effects matrix sees its own file
  (``ACTION`` is cut to letters, digits, ``_`` and ``-``).

The pages are static: ``static/effects/lab.html?effect=EFFECT`` starts one effect from every
kind of trigger an agent has, ``popup.html`` and ``landed.html`` are where a new tab and a
navigation end up.
"""

from __future__ import annotations

import re

from aiohttp import web

__all__ = ["add_effect_routes"]


async def download(request: web.Request) -> web.Response:
    """``GET /effects/download?via=ACTION``: ``ACTION-download.txt``, a few lines of text."""
    via = re.sub(r"[^A-Za-z0-9_-]", "", request.query.get("via", "unknown"))[:40] or "unknown"
    body = f"Started by {via}.\n".encode()
    return web.Response(
        body=body,
        content_type="text/plain",
        headers={"Content-Disposition": f'attachment; filename="{via}-download.txt"', "Cache-Control": "no-store"},
    )


def add_effect_routes(app: web.Application) -> None:
    app.router.add_get("/effects/download", download)
