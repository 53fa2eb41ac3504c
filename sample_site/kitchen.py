"""Harbor Kitchen: the restaurant, booking and shop section of the sample site.

The help desk pages were written for the bridge; these follow what public WebMCP sites do
(issue 9): a takeaway form that POSTs to a confirmation page carrying JSON-LD, a tool that
answers from a Worker, history navigations, a booking form that waits for the person, a
shop whose buttons carry the prices, and a reviews widget from another origin.

API (all JSON, state per application instance, next to the help desk's):

* ``POST /kitchen/order`` (form-encoded ``dish``, ``quantity``, ``pickup``) -> the
  confirmation page (HTML with an ``Order`` in JSON-LD)
* ``GET  /kitchen/orders/{number}`` -> the confirmation page of an order placed before
* ``GET  /api/kitchen/orders`` -> ``{"orders": [...]}``
* ``POST /api/kitchen/orders`` ``{dish, quantity?, pickup?}`` -> order (201)
* ``GET  /api/kitchen/bookings`` -> ``{"bookings": [...]}`` (cards kept as their last 4 digits)
* ``POST /api/kitchen/bookings`` ``{name, party, date, time, card?}`` -> booking (201)
* ``GET  /api/kitchen/partner`` -> ``{"origin": ...}``: the reviews widget's own origin
  (the same site on a second port: another origin, so a cross-origin frame)
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from aiohttp import web

__all__ = ["KITCHEN_KEY", "MENU", "SITE_KEY", "add_kitchen_routes", "reset_kitchen"]

MENU: dict[str, dict[str, Any]] = {
    "chowder": {"name": "Smoked haddock chowder", "price": 12},
    "mussels": {"name": "Mussels in cider", "price": 16},
    "fishcakes": {"name": "Crab fishcakes", "price": 14},
    "tart": {"name": "Treacle tart", "price": 7},
}

KITCHEN_KEY: web.AppKey[dict[str, Any]] = web.AppKey("harbor_kitchen", dict)

KITCHEN_DIR = Path(__file__).resolve().parent / "static" / "kitchen"

SITE_KEY: web.AppKey[dict[str, Any]] = web.AppKey("harbor_site", dict)
"""Facts about where the site listens, filled in once it is started (see `start_site`)."""


def fresh_kitchen_state() -> dict[str, Any]:
    """The kitchen's part of a fresh application state."""
    return {"orders": [], "bookings": [], "next_order": 1001}


def _state(request: web.Request) -> dict[str, Any]:
    return request.app[KITCHEN_KEY]


def reset_kitchen(app: web.Application) -> None:
    """Restore the kitchen's empty state (in place: a started app must not be re-assigned)."""
    app[KITCHEN_KEY].clear()
    app[KITCHEN_KEY].update(fresh_kitchen_state())


def _bad(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": message}), content_type="application/json")


def _place(request: web.Request, dish: str, quantity: Any, pickup: str, via: str) -> dict[str, Any]:
    if dish not in MENU:
        raise _bad(f"Unknown dish {dish!r}; the menu has {', '.join(MENU)}")
    try:
        count = int(quantity or 1)
    except (TypeError, ValueError):
        raise _bad("quantity must be a whole number") from None
    if not 1 <= count <= 20:
        raise _bad("quantity must be between 1 and 20")
    state = _state(request)
    order = {
        "number": f"HK-{state['next_order']}",
        "dish": dish,
        "name": MENU[dish]["name"],
        "quantity": count,
        "total": MENU[dish]["price"] * count,
        "pickup": pickup or "18:30",
        "via": via,
    }
    state["next_order"] += 1
    state["orders"].append(order)
    return order


def _confirmation(order: dict[str, Any]) -> web.Response:
    """The page a takeaway order lands on: what a person reads, and the same in JSON-LD."""
    ld = {
        "@context": "https://schema.org",
        "@type": "Order",
        "orderNumber": order["number"],
        "orderStatus": "https://schema.org/OrderProcessing",
        "orderedItem": {
            "@type": "OrderItem",
            "orderQuantity": order["quantity"],
            "orderedItem": {"@type": "MenuItem", "name": order["name"]},
        },
        "price": order["total"],
        "priceCurrency": "USD",
    }
    # "</" must not end the script element early, whatever a dish is called.
    ld_json = json.dumps(ld).replace("</", "<\\/")
    e = html.escape
    body = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Order {e(order["number"])} confirmed — Harbor Kitchen</title>
  <link rel="stylesheet" href="/style.css">
  <script type="application/ld+json">{ld_json}</script>
</head>
<body>
  <header class="app">
    <img src="/logo.svg" alt="Harbor Kitchen lighthouse logo">
    <span class="brand">Harbor Kitchen</span>
    <nav aria-label="Main"><a href="/kitchen/">Kitchen</a> <a href="/kitchen/order.html">Order</a></nav>
  </header>
  <main>
    <h1>Order {e(order["number"])} confirmed</h1>
    <p>{order["quantity"]} × {e(order["name"])}, ${order["total"]}. Pick it up at {e(order["pickup"])}.</p>
    <div role="status" id="status" aria-live="polite">We have started cooking.</div>
  </main>
</body>
</html>
"""
    return web.Response(text=body, content_type="text/html")


async def kitchen_home(request: web.Request) -> web.FileResponse:
    """``GET /kitchen/``: the restaurant's front page."""
    return web.FileResponse(KITCHEN_DIR / "index.html")


async def order_form_post(request: web.Request) -> web.Response:
    """``POST /kitchen/order``: the takeaway form's own submission, answered with a page."""
    form = await request.post()
    order = _place(request, str(form.get("dish", "")), form.get("quantity"), str(form.get("pickup", "")), "form")
    return _confirmation(order)


async def order_page(request: web.Request) -> web.Response:
    """``GET /kitchen/orders/{number}``."""
    number = request.match_info["number"]
    order = next((o for o in _state(request)["orders"] if o["number"] == number), None)
    if order is None:
        raise web.HTTPNotFound(text=f"No order {number}")
    return _confirmation(order)


async def list_orders(request: web.Request) -> web.Response:
    """``GET /api/kitchen/orders``."""
    return web.json_response({"orders": _state(request)["orders"]})


async def create_order(request: web.Request) -> web.Response:
    """``POST /api/kitchen/orders``: an order placed by script (the "usual" reorder)."""
    data = await request.json()
    order = _place(request, str(data.get("dish", "")), data.get("quantity"), str(data.get("pickup", "")), "api")
    return web.json_response(order, status=201)


async def list_bookings(request: web.Request) -> web.Response:
    """``GET /api/kitchen/bookings``."""
    return web.json_response({"bookings": _state(request)["bookings"]})


async def create_booking(request: web.Request) -> web.Response:
    """``POST /api/kitchen/bookings``: a table; a card number is kept as its last four digits."""
    data = await request.json()
    name = str(data.get("name", "")).strip()
    if not name:
        raise _bad("A name for the booking is required")
    card = "".join(ch for ch in str(data.get("card", "")) if ch.isdigit())
    state = _state(request)
    booking = {
        "reference": f"T-{len(state['bookings']) + 1:03d}",
        "name": name,
        "party": int(data.get("party") or 2),
        "date": str(data.get("date", "")),
        "time": str(data.get("time", "")),
        "cardLast4": card[-4:],
    }
    state["bookings"].append(booking)
    return web.json_response(booking, status=201)


async def partner(request: web.Request) -> web.Response:
    """``GET /api/kitchen/partner``: where the reviews widget is served from."""
    return web.json_response({"origin": request.app[SITE_KEY].get("partner_origin")})


def add_kitchen_routes(app: web.Application) -> None:
    """Add the kitchen's routes to the help desk application (before its static catch-all)."""
    app[KITCHEN_KEY] = fresh_kitchen_state()
    app[SITE_KEY] = {"partner_origin": None}  # mutated in place once the site is up
    app.router.add_get("/kitchen/", kitchen_home)
    app.router.add_post("/kitchen/order", order_form_post)
    app.router.add_get("/kitchen/orders/{number}", order_page)
    app.router.add_get("/api/kitchen/orders", list_orders)
    app.router.add_post("/api/kitchen/orders", create_order)
    app.router.add_get("/api/kitchen/bookings", list_bookings)
    app.router.add_post("/api/kitchen/bookings", create_booking)
    app.router.add_get("/api/kitchen/partner", partner)
