"""The staff area of the sample site: folders behind HTTP Basic and Digest authentication (issue 21).

* ``GET /private/`` (and anything under it) answers 401 with
  ``WWW-Authenticate: Basic realm="Harbor staff area"`` unless the request signs in as
  ``staff`` / ``harbor-staff-2026``; then the staff page, which greets the user by name.
* ``GET /private/echo`` is a careless server: signed in, it prints the password it received
  (the bridge must mask it in every window).
* ``GET /private-digest/`` (and anything under it) is the same area behind HTTP Digest
  (RFC 7616, MD5, ``qop=auth``): 401 with ``WWW-Authenticate: Digest realm="Harbor staff
  area", qop="auth", algorithm=MD5, nonce="…", opaque="…"`` (a fresh nonce per challenge,
  accepted only if this server issued it) unless the response digest matches the same account.

The static pages ``/staff.html`` (a link and a tool that open the staff area) and
``/permissions.html`` (a page asking for geolocation and notifications) go with it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import html
import re
import secrets

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


_DIGEST_PARAM = re.compile(r'\s*([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


def _digest_params(header: str) -> dict[str, str] | None:
    """The parameters of an ``Authorization: Digest …`` header, or None for another scheme."""
    scheme, _, rest = header.partition(" ")
    if scheme.lower() != "digest":
        return None
    return {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
            for m in _DIGEST_PARAM.finditer(rest)}  # fmt: skip


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


class _DigestArea:
    """``/private-digest/``: the staff area behind RFC 7616 Digest (MD5, qop=auth)."""

    def __init__(self) -> None:
        self._nonces: set[str] = set()
        self._opaque = secrets.token_hex(8)

    def _signed_in(self, request: web.Request) -> bool:
        given = _digest_params(request.headers.get("Authorization", ""))
        if not given or given.get("nonce") not in self._nonces or given.get("opaque") != self._opaque:
            return False
        if given.get("username") != STAFF_USER or given.get("realm") != STAFF_REALM or given.get("qop") != "auth":
            return False
        if given.get("algorithm", "MD5").upper() != "MD5" or given.get("uri") != request.path_qs:
            return False
        ha1 = _md5(f"{STAFF_USER}:{STAFF_REALM}:{STAFF_PASSWORD}")
        ha2 = _md5(f"{request.method}:{given['uri']}")
        parts = [ha1, given["nonce"], given.get("nc", ""), given.get("cnonce", ""), "auth", ha2]
        return hmac.compare_digest(_md5(":".join(parts)), given.get("response", ""))

    async def handle(self, request: web.Request) -> web.Response:
        if not self._signed_in(request):
            nonce = secrets.token_hex(16)  # a fresh nonce for every challenge
            self._nonces.add(nonce)
            response = _page("Sign-in required", "<p>This area is for Harbor staff.</p>")
            response.set_status(401)
            response.headers["WWW-Authenticate"] = (
                f'Digest realm="{STAFF_REALM}", qop="auth", algorithm=MD5, nonce="{nonce}", opaque="{self._opaque}"'
            )
            return response
        return _page("Staff area", f"<p>Signed in as {STAFF_USER} (Digest).</p><p>Shift notes are pinned here.</p>")


def add_auth_routes(app: web.Application) -> None:
    app.router.add_get("/private/{rest:.*}", private)
    app.router.add_get("/private-digest/{rest:.*}", _DigestArea().handle)
