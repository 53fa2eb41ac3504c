"""A slow network on the sample site: resources that finish late or never (issues 18 and 19).

Real pages keep their load event waiting on an ad, a font or a tracker whose host is slow or
filtered; these routes play that part, so that tests meet what the field does:

* ``GET /slow/late?ms=N&type=image|font|script|css|json`` answers after N ms (at most 10 minutes).
* ``GET /slow/never?type=...`` sends its headers and then nothing, until the client gives up
  or the site stops: a resource that never finishes.

Pages in ``static/slow/`` use them (see sample_site/README.md).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

__all__ = ["add_slow_routes"]

_LONGEST = 600.0
_TYPES = {
    "image": ("image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'),
    "font": ("font/woff2", b""),
    "script": ("text/javascript", b"/* late */"),
    "css": ("text/css", b"/* late */"),
    "json": ("application/json", b'{"berth": 14, "holder": "Maria Lopez", "until": "Friday"}'),
}


def _kind(request: web.Request) -> tuple[str, bytes]:
    return _TYPES.get(request.query.get("type", "image"), _TYPES["image"])


async def late(request: web.Request) -> web.Response:
    """``GET /slow/late?ms=N``: the resource, after N ms."""
    try:
        delay = min(_LONGEST, max(0.0, float(request.query.get("ms", "1000")) / 1000))
    except ValueError:
        raise web.HTTPBadRequest(text="ms must be a number") from None
    await asyncio.sleep(delay)
    content_type, body = _kind(request)
    return web.Response(body=body, content_type=content_type, headers={"Cache-Control": "no-store"})


async def never(request: web.Request) -> web.StreamResponse:
    """``GET /slow/never``: headers, then nothing: the response never ends."""
    content_type, _body = _kind(request)
    response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-store"})
    await response.prepare(request)
    await asyncio.sleep(_LONGEST)  # the client going away or the site stopping cancels this
    return response


def add_slow_routes(app: web.Application) -> None:
    app.router.add_get("/slow/late", late)
    app.router.add_get("/slow/never", never)
