"""aiohttp server for the Harbor Help Desk sample site.

The site is the stage for the webmcp-bridge end-to-end tests and the demo.
It serves the static pages in ``sample_site/static/`` and a tiny JSON API
whose state lives in memory, per application instance, so that WebMCP tools
registered by the pages have real, observable effects.

API (all JSON):

* ``GET  /api/tickets?status=open|closed|all`` -> ``{"tickets": [...]}``
* ``GET  /api/tickets/{id}`` -> ticket, or 404 ``{"error": "No ticket #N"}``
* ``POST /api/tickets`` ``{subject, priority?, description?}`` -> ticket (201)
* ``POST /api/tickets/{id}/close`` ``{resolution}`` -> ticket
* ``POST /api/tickets/{id}/notes`` ``{text}`` -> ticket
* ``POST /api/tickets/purge-closed`` -> ``{"purged": n}``
* ``GET  /api/shifts`` -> ``{"shifts": [...]}``
* ``GET  /api/kb?q=...`` -> ``{"articles": [...]}``
* ``POST /api/contact`` ``{email, message}`` -> ``{"sent": true, ...}``
* ``POST /api/login`` ``{username, password, ...}`` -> ``{"ok": bool, ...}``
* ``GET  /api/state`` -> the whole state (for tests)
* ``POST /api/reset`` -> restores the seed data (the kitchen's and the plain pages' too)

The Harbor Kitchen section (restaurant, booking, shop) adds its routes from
``sample_site.kitchen``; the pages without WebMCP tools (Harbor Outfitters, ``/plain/``)
from ``sample_site.plain``.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from sample_site.auth import add_auth_routes
from sample_site.effects import add_effect_routes
from sample_site.files import add_file_routes
from sample_site.kitchen import SITE_KEY, add_kitchen_routes, reset_kitchen
from sample_site.plain import add_plain_routes, reset_plain
from sample_site.slow import add_slow_routes

STATIC_DIR = Path(__file__).resolve().parent / "static"

SEED_TICKETS: list[dict[str, Any]] = [
    {
        "id": 101,
        "subject": "Cannot reset my password",
        "status": "open",
        "priority": "high",
        "customer": "Maria Lopez",
        "description": "The reset email never arrives.",
        "notes": [],
    },
    {
        "id": 102,
        "subject": "Invoice shows the wrong VAT rate",
        "status": "open",
        "priority": "normal",
        "customer": "Fjord Logistics AS",
        "description": "March invoice uses 20% instead of 25%.",
        "notes": [],
    },
    {
        "id": 103,
        "subject": "Mobile app crashes on launch",
        "status": "open",
        "priority": "high",
        "customer": "Kenji Watanabe",
        "description": "Android 15, version 4.2.1.",
        "notes": [],
    },
    {
        "id": 104,
        "subject": "Request to export all my data",
        "status": "closed",
        "priority": "low",
        "customer": "Aisha Bello",
        "description": "GDPR export request.",
        "notes": ["Export sent by email."],
        "resolution": "Export delivered",
    },
    {
        "id": 105,
        "subject": "Delivery tracking not updating",
        "status": "open",
        "priority": "normal",
        "customer": "Tom Becker",
        "description": "Parcel stuck at 'in transit' for 6 days.",
        "notes": [],
    },
    {
        "id": 106,
        "subject": "Duplicate charge on credit card",
        "status": "closed",
        "priority": "high",
        "customer": "Priya Nair",
        "description": "Charged twice for order #55821.",
        "notes": ["Refund issued."],
        "resolution": "Refunded duplicate charge",
    },
]

SHIFTS: list[dict[str, str]] = [
    {"agent": "Sam Okafor", "hours": "07:00-15:00", "queue": "Tier 1"},
    {"agent": "Lena Fischer", "hours": "09:00-17:00", "queue": "Billing"},
    {"agent": "Diego Alvarez", "hours": "15:00-23:00", "queue": "Tier 2"},
]

KB_ARTICLES: list[dict[str, str]] = [
    {"id": "kb-1", "title": "How to reset a customer password"},
    {"id": "kb-2", "title": "Refunding a duplicate card charge"},
    {"id": "kb-3", "title": "Correcting VAT on an issued invoice"},
    {"id": "kb-4", "title": "Troubleshooting mobile app crashes"},
    {"id": "kb-5", "title": "Handling GDPR data export requests"},
    {"id": "kb-6", "title": "Escalating a ticket to Tier 2"},
]

STATE_KEY: web.AppKey[dict[str, Any]] = web.AppKey("harbor_state", dict)


def fresh_state() -> dict[str, Any]:
    """Return a new, independent copy of the seed data."""
    return {
        "tickets": copy.deepcopy(SEED_TICKETS),
        "next_id": max(t["id"] for t in SEED_TICKETS) + 1,
        "contacts": [],
        "logins": [],
    }


def _state(request: web.Request) -> dict[str, Any]:
    return request.app[STATE_KEY]


def _find(request: web.Request) -> dict[str, Any]:
    """Return the ticket named by the ``id`` path segment or raise a JSON 404."""
    raw = request.match_info["id"]
    try:
        ticket_id = int(raw)
    except ValueError:
        raise _error(400, f"Bad ticket id {raw!r}") from None
    for ticket in _state(request)["tickets"]:
        if ticket["id"] == ticket_id:
            return ticket
    raise _error(404, f"No ticket #{ticket_id}")


def _error(status: int, message: str) -> web.HTTPException:
    """Build an HTTP error whose body is ``{"error": message}``."""
    cls = {400: web.HTTPBadRequest, 404: web.HTTPNotFound}.get(status, web.HTTPBadRequest)
    return cls(text=json.dumps({"error": message}), content_type="application/json")


async def _body(request: web.Request) -> dict[str, Any]:
    """Parse a JSON object body; an empty body counts as ``{}``."""
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except ValueError:
        raise _error(400, "Body must be JSON") from None
    if not isinstance(data, dict):
        raise _error(400, "Body must be a JSON object")
    return data


async def list_tickets(request: web.Request) -> web.Response:
    """``GET /api/tickets`` with an optional ``status`` filter."""
    status = request.query.get("status", "all")
    if status not in ("open", "closed", "all"):
        raise _error(400, f"Unknown status {status!r}")
    tickets = [t for t in _state(request)["tickets"] if status == "all" or t["status"] == status]
    return web.json_response({"tickets": tickets})


async def get_ticket(request: web.Request) -> web.Response:
    """``GET /api/tickets/{id}``."""
    return web.json_response(_find(request))


async def create_ticket(request: web.Request) -> web.Response:
    """``POST /api/tickets``: open a new ticket."""
    data = await _body(request)
    subject = str(data.get("subject", "")).strip()
    if not subject:
        raise _error(400, "Subject is required")
    priority = data.get("priority") or "normal"
    if priority not in ("low", "normal", "high"):
        raise _error(400, f"Unknown priority {priority!r}")
    state = _state(request)
    ticket = {
        "id": state["next_id"],
        "subject": subject,
        "status": "open",
        "priority": priority,
        "customer": str(data.get("customer") or "Web form"),
        "description": str(data.get("description") or ""),
        "notes": [],
    }
    state["next_id"] += 1
    state["tickets"].append(ticket)
    return web.json_response(ticket, status=201)


async def close_ticket(request: web.Request) -> web.Response:
    """``POST /api/tickets/{id}/close``."""
    ticket = _find(request)
    data = await _body(request)
    ticket["status"] = "closed"
    ticket["resolution"] = str(data.get("resolution") or "")
    return web.json_response(ticket)


async def add_note(request: web.Request) -> web.Response:
    """``POST /api/tickets/{id}/notes``."""
    ticket = _find(request)
    data = await _body(request)
    text = str(data.get("text", "")).strip()
    if not text:
        raise _error(400, "Note text must not be empty")
    ticket["notes"].append(text)
    return web.json_response(ticket)


async def purge_closed(request: web.Request) -> web.Response:
    """``POST /api/tickets/purge-closed``: delete every closed ticket."""
    state = _state(request)
    before = len(state["tickets"])
    state["tickets"] = [t for t in state["tickets"] if t["status"] != "closed"]
    return web.json_response({"purged": before - len(state["tickets"])})


async def shifts(request: web.Request) -> web.Response:
    """``GET /api/shifts``."""
    return web.json_response({"shifts": SHIFTS})


async def search_kb(request: web.Request) -> web.Response:
    """``GET /api/kb?q=``: case-insensitive word search over article titles."""
    words = [w for w in request.query.get("q", "").lower().split() if w]
    hits = [a for a in KB_ARTICLES if all(w in a["title"].lower() for w in words)]
    return web.json_response({"articles": hits})


async def contact(request: web.Request) -> web.Response:
    """``POST /api/contact``: record a message to a customer."""
    data = await _body(request)
    email = str(data.get("email", "")).strip()
    if "@" not in email:
        raise _error(400, "A valid email address is required")
    entry = {"email": email, "message": str(data.get("message", "")), "at": time.time()}
    _state(request)["contacts"].append(entry)
    return web.json_response({"sent": True, "email": email})


async def login(request: web.Request) -> web.Response:
    """``POST /api/login``: any non-empty username with password "harbor" works."""
    data = await _body(request)
    username = str(data.get("username", "")).strip()
    ok = bool(username) and data.get("password") == "harbor"
    _state(request)["logins"].append({"username": username, "ok": ok})
    return web.json_response({"ok": ok, "username": username})


async def get_state(request: web.Request) -> web.Response:
    """``GET /api/state``: dump the in-memory state (used by tests)."""
    return web.json_response(_state(request))


async def reset(request: web.Request) -> web.Response:
    """``POST /api/reset``: restore the seed data."""
    state = _state(request)  # mutate in place: a started app must not be re-assigned
    state.clear()
    state.update(fresh_state())
    reset_kitchen(request.app)
    reset_plain(request.app)
    return web.json_response({"reset": True})


async def index(request: web.Request) -> web.FileResponse:
    """Serve ``index.html`` for ``/``."""
    return web.FileResponse(STATIC_DIR / "index.html")


async def favicon(request: web.Request) -> web.FileResponse:
    """Serve the logo for ``/favicon.ico`` so browsers do not log a 404."""
    return web.FileResponse(STATIC_DIR / "logo.svg", headers={"Content-Type": "image/svg+xml"})


@web.middleware
async def cache_policy(request: web.Request, handler: Any) -> web.StreamResponse:
    """Cache as a real site does: the API never, pages and assets after revalidation.

    API answers carry per-test state, so they are ``no-store``. Pages and assets are
    ``no-cache`` (aiohttp adds ``ETag`` and ``Last-Modified``): the browser asks again on
    each load, so edits show at once, and the back-forward cache stays usable, which a
    ``no-store`` page would switch off (the history tests need it on, as on real sites).
    """
    response = await handler(request)
    if "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "no-store" if request.path.startswith("/api/") else "no-cache"
    return response


def make_app() -> web.Application:
    """Build a fresh application with its own in-memory state."""
    app = web.Application(middlewares=[cache_policy])
    app[STATE_KEY] = fresh_state()
    app.router.add_get("/", index)
    app.router.add_get("/favicon.ico", favicon)
    app.router.add_get("/api/tickets", list_tickets)
    app.router.add_post("/api/tickets", create_ticket)
    app.router.add_post("/api/tickets/purge-closed", purge_closed)
    app.router.add_get("/api/tickets/{id}", get_ticket)
    app.router.add_post("/api/tickets/{id}/close", close_ticket)
    app.router.add_post("/api/tickets/{id}/notes", add_note)
    app.router.add_get("/api/shifts", shifts)
    app.router.add_get("/api/kb", search_kb)
    app.router.add_post("/api/contact", contact)
    app.router.add_post("/api/login", login)
    app.router.add_get("/api/state", get_state)
    app.router.add_post("/api/reset", reset)
    add_kitchen_routes(app)
    add_slow_routes(app)
    add_plain_routes(app)
    add_auth_routes(app)
    add_file_routes(app)
    add_effect_routes(app)
    app.router.add_static("/", STATIC_DIR, show_index=False)
    return app


async def start_site(host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, str]:
    """Start the site on ``host:port`` (0 = a free port).

    Returns the runner (call ``await runner.cleanup()`` to stop) and the base
    URL without a trailing slash, e.g. ``"http://127.0.0.1:43121"``.
    """
    # A request the site never answers (its slow pages) holds a stop for at most half a second.
    runner = web.AppRunner(make_app(), access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_port = runner.addresses[0][1]
    # The kitchen's reviews widget comes from a second port: another origin on the same site,
    # as a third-party widget would be (a cross-origin iframe).
    partner = web.TCPSite(runner, host, 0)
    await partner.start()
    partner_port = runner.addresses[1][1]
    runner.app[SITE_KEY]["partner_origin"] = f"http://{host}:{partner_port}"
    return runner, f"http://{host}:{bound_port}"
