"""Uploads and downloads on the sample site (issue 21): an upload form's receiver and files to download.

* ``POST /files/upload`` (multipart, from ``static/files/upload.html``): a page listing the
  name and size of every file it received, field by field (a cross-document answer).
* ``GET /files/report.csv``, ``/files/notes.txt``, ``/files/data.json``: small files, sent as
  attachments; ``notes.txt`` names itself ``../../etc/notes<1>.txt`` (a hostile name).
* ``GET /files/huge?mb=N&declared=1`` streams N MiB of text (at most 512); with ``declared``
  it says its length up front, without it the length is known only at the end.
* ``GET /files/image.png``: a binary file, for "says its type and size".
"""

from __future__ import annotations

import html

from aiohttp import BodyPartReader, web

__all__ = ["add_file_routes"]

_REPORT = "id,subject,status\n101,Cannot reset my password,open\n102,Invoice shows the wrong VAT rate,open\n"
_NOTES = "Shift notes\n\nRemember to check the billing queue before noon.\n"
_DATA = '{"tickets": [101, 102, 103], "exported": true}\n'
# The smallest valid PNG: one transparent pixel.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)
_CHUNK = b"harbor " * 9362 + b"\n"  # 65,535 bytes
_MAX_MB = 512


def _attachment(body: bytes, content_type: str, filename: str) -> web.Response:
    return web.Response(
        body=body,
        content_type=content_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


async def report(_request: web.Request) -> web.Response:
    return _attachment(_REPORT.encode(), "text/csv", "report.csv")


async def notes(_request: web.Request) -> web.Response:
    return _attachment(_NOTES.encode(), "text/plain", "../../etc/notes<1>.txt")


async def data(_request: web.Request) -> web.Response:
    return _attachment(_DATA.encode(), "application/json", "data.json")


async def image(_request: web.Request) -> web.Response:
    return _attachment(_PNG, "image/png", "pixel.png")


async def huge(request: web.Request) -> web.StreamResponse:
    """``GET /files/huge?mb=N``: N MiB of text, as an attachment (the client may stop it any time)."""
    try:
        mb = min(_MAX_MB, max(1, int(request.query.get("mb", "8"))))
    except ValueError:
        raise web.HTTPBadRequest(text="mb must be a whole number") from None
    total = mb * 1024 * 1024
    headers = {
        "Content-Type": "text/plain",
        "Content-Disposition": 'attachment; filename="huge.txt"',
        "Cache-Control": "no-store",
    }
    response = web.StreamResponse(headers=headers)
    if request.query.get("declared"):
        response.content_length = total
    else:
        response.enable_chunked_encoding()
    await response.prepare(request)
    sent = 0
    try:
        while sent < total:
            piece = _CHUNK[: total - sent]
            await response.write(piece)
            sent += len(piece)
    except (ConnectionResetError, ConnectionError):
        return response  # the browser cancelled the download
    await response.write_eof()
    return response


async def upload(request: web.Request) -> web.Response:
    """``POST /files/upload``: the names and sizes of the files received, as a page."""
    received: list[tuple[str, str, int]] = []
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader) or not part.filename:
            continue
        size = 0
        while chunk := await part.read_chunk():
            size += len(chunk)
        received.append((part.name or "", part.filename, size))
    rows = "".join(
        f'<li data-field="{html.escape(field)}">{html.escape(name)} ({size} bytes)</li>'
        for field, name, size in received
    )
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbor Help Desk — Upload received'
        '</title><link rel="stylesheet" href="/style.css"></head><body><main><h1>Upload received</h1>'
        f'<p id="count">{len(received)} file(s) received.</p><ul id="received">{rows}</ul>'
        '<p><a href="/files/upload.html">Upload more</a></p></main></body></html>'
    )
    return web.Response(text=body, content_type="text/html", headers={"Cache-Control": "no-store"})


def add_file_routes(app: web.Application) -> None:
    app.router.add_post("/files/upload", upload)
    app.router.add_get("/files/report.csv", report)
    app.router.add_get("/files/notes.txt", notes)
    app.router.add_get("/files/data.json", data)
    app.router.add_get("/files/image.png", image)
    app.router.add_get("/files/huge", huge)
