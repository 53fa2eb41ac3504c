"""A slow network on the sample site: resources that finish late or never (issues 18, 19 and 41).

Real pages keep their load event waiting on an ad, a font or a tracker whose host is slow or
filtered; these routes play that part, so that tests meet what the field does:

* ``GET /slow/late?ms=N&type=image|font|script|css|json`` answers after N ms (at most 10 minutes).
* ``GET /slow/never?type=...`` sends its headers and then nothing, until the client gives up
  or the site stops: a resource that never finishes.
* ``GET /slow/held?by=script|style&where=head|after&title=late`` a page whose ``<script src>`` or
  stylesheet comes from a second port of 127.0.0.1 that accepts connections and never answers (a
  third-party host on a filtering network): ``where=head`` (the default) puts it in ``<head>``,
  after the ``<title>`` (before it with ``title=late``), so nothing of the page renders;
  ``where=after`` puts it after the article, ``where=middle`` between the page's header and its
  article. With ``ms=N`` the script comes from this site's ``/slow/late`` after N ms instead (a
  slow host that does answer): the parser goes on then. With ``host=drop`` it comes from a port
  that never accepts a connection (its queue is kept full, so the kernel drops the handshakes, as
  a firewall that drops packets does): the connect fails only when the browser gives up on it.
  With ``async=1`` the page's ``<head>`` also loads an analytics script, ``async``, from the host
  that never answers: it holds neither the parser nor the render, only the load event.

Pages in ``static/slow/`` use them (see sample_site/README.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import socket
from collections.abc import AsyncIterator, Iterator

from aiohttp import web

__all__ = ["DROP_HOST_KEY", "HANG_HOST_KEY", "add_slow_routes", "dropping_port"]

_LONGEST = 600.0
_TYPES = {
    "image": ("image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'),
    "font": ("font/woff2", b""),
    "script": ("text/javascript", b"/* late */"),
    "css": ("text/css", b"/* late */"),
    "json": ("application/json", b'{"berth": 14, "holder": "Maria Lopez", "until": "Friday"}'),
}
HANG_HOST_KEY: web.AppKey[str] = web.AppKey("hang_host", str)
"""``127.0.0.1:port`` of the server that accepts connections and never answers."""
DROP_HOST_KEY: web.AppKey[str] = web.AppKey("drop_host", str)
"""``127.0.0.1:port`` of a port whose every new connection is dropped unanswered."""


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


_ARTICLE = """<h1>Lighthouse keepers' logs go online</h1>
    <p id="lede">Two centuries of the lighthouse keepers' logs, from 1821 to the automation of the
      light in 1994, can now be read on the county archive's website.</p>
    <p>Volunteers transcribed the 41 volumes over three winters, entry by entry.</p>"""


async def held(request: web.Request) -> web.Response:
    """``GET /slow/held?by=script|style&where=head|after[&async=1]``: a page held by a resource from a host that
    never answers (and, with ``async=1``, an async script from one)."""
    by, where = request.query.get("by", "script"), request.query.get("where", "head")
    late_title = request.query.get("title") == "late"  # the resource before the <title>: no title is parsed
    host = request.query.get("host", "hang")
    if by not in ("script", "style") or where not in ("head", "after", "middle") or host not in ("hang", "drop"):
        raise web.HTTPBadRequest(text="by=script|style, where=head|after|middle, host=hang|drop")
    held_by = request.app[DROP_HOST_KEY if host == "drop" else HANG_HOST_KEY]
    source = f"http://{held_by}/{'vendor.js' if by == 'script' else 'theme.css'}"
    if request.query.get("ms", "").isdigit():
        source = f"/slow/late?ms={request.query['ms']}&type={'script' if by == 'script' else 'css'}"
    tag = (
        f'<script src="{html.escape(source)}"></script>'
        if by == "script"
        else f'<link rel="stylesheet" href="{html.escape(source)}">'
    )
    analytics = ""
    if request.query.get("async") == "1":
        analytics = f'<script async src="http://{request.app[HANG_HOST_KEY]}/analytics.js"></script>'
    page = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  {tag if where == "head" and late_title else ""}
  <title>Keepers' logs — Harbor Gazette</title>
  {tag if where == "head" and not late_title else ""}
  {analytics}
</head>
<body>
  <header><p>Harbor Gazette — news from the county's coast</p></header>
  {tag if where == "middle" else ""}
  <main><article>
    {_ARTICLE}
  </article></main>
  {tag if where == "after" else ""}
</body>
</html>
"""
    return web.Response(text=page, content_type="text/html", headers={"Cache-Control": "no-store"})


async def _hang_server(app: web.Application) -> AsyncIterator[None]:
    """A server on another port of 127.0.0.1 that accepts every connection and never answers."""
    held_open: list[asyncio.StreamWriter] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held_open.append(writer)  # kept open, unanswered, until the site stops

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    app[HANG_HOST_KEY] = f"127.0.0.1:{port}"
    with dropping_port() as dropping:
        app[DROP_HOST_KEY] = f"127.0.0.1:{dropping}"
        try:
            yield
        finally:
            server.close()
            for writer in held_open:
                writer.close()


@contextlib.contextmanager
def dropping_port() -> Iterator[int]:
    """A port on 127.0.0.1 that never accepts: its queue is kept full (a backlog of 0 still queues
    one connection; a second makes sure), so Linux drops every handshake that comes."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(2):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for sock in (*fillers, listener):
            sock.close()


def add_slow_routes(app: web.Application) -> None:
    app.router.add_get("/slow/late", late)
    app.router.add_get("/slow/never", never)
    app.router.add_get("/slow/held", held)
    app.cleanup_ctx.append(_hang_server)
