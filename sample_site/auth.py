"""The staff area of the sample site: a folder behind HTTP Basic authentication (issue 21).

* ``GET /private/`` (and anything under it) answers 401 with
  ``WWW-Authenticate: Basic realm="Harbor staff area"`` unless the request signs in as
  ``staff`` / ``harbor-staff-2026``; then the staff page, which greets the user by name.
* ``GET /private/echo`` is a careless server: signed in, it prints the password it received
  (the bridge must mask it in every window).

The static pages ``/staff.html`` (a link and a tool that open the staff area) and
``/permissions.html`` (a page asking for geolocation and notifications) go with it.
"""

from __future__ import annotations

import base64
import binascii
import html

from aiohttp import web

__all__ = ["STAFF_PASSWORD", "STAFF_REALM", "STAFF_USER", "add_auth_routes"]

STAFF_USER = "staff"
STAFF_PASSWORD = "harbor-staff-2026"
STAFF_REALM = "Harbor staff area"


def _credentials(request: web.Request) -> tuple[str, str] | None:
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


def _page(title: str, body: str) -> web.Response:
    text = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="stylesheet" href="/style.css"></head><body><main><h1>{title}</h1>{body}</main></body></html>'
    )
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})


async def private(request: web.Request) -> web.Response:
    """Everything under ``/private/``: the staff pages, for the staff account only."""
    given = _credentials(request)
    if given != (STAFF_USER, STAFF_PASSWORD):
        response = _page("Sign-in required", "<p>This area is for Harbor staff.</p>")
        response.set_status(401)
        response.headers["WWW-Authenticate"] = f'Basic realm="{STAFF_REALM}"'
        return response
    if request.match_info.get("rest") == "echo":
        return _page("Staff echo", f"<p>The password you sent: {html.escape(given[1])}</p>")
    return _page("Staff area", f"<p>Signed in as {html.escape(given[0])}.</p><p>Shift notes are pinned here.</p>")


def add_auth_routes(app: web.Application) -> None:
    app.router.add_get("/private/{rest:.*}", private)
