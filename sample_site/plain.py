"""Harbor Outfitters: sample-site pages that register no WebMCP tools at all (issue 20).

Nearly every page an agent meets today declares no tools, so these pages are built as
ordinary sites are: forms that POST cross-document and answer with the next page (303 to
it, or the form again with an error), links to follow, and icon-only buttons whose work is
a ``fetch``. They are the stage for the window actions (``fill``, ``press``, ``submit``)
and for ``bench/page_actions.py``. The state lives in memory, per application instance,
and ``POST /api/reset`` restores it.

Pages are templates in ``static/plain/`` (``{{name}}`` is replaced, escaped unless the
value is a `Markup`); every ``/plain/`` path goes through a route here, so a template is
never served raw. Routes:

* ``GET /plain/`` -> the section's index
* ``GET /plain/signin.html``, ``POST /plain/signin`` (form-encoded ``email``, ``password``,
  ``remember``) -> 303 to ``/plain/account.html``, or the form again with an error
* ``GET /plain/account.html`` -> who is signed in (303 to the form when nobody is)
* ``GET /plain/search.html?q=`` -> the search form and the guides whose title or summary
  has every word; ``GET /plain/guides/{slug}.html`` -> one guide
* ``GET /plain/articles/{slug}.html`` -> an article with links to others
* ``GET /plain/cart.html`` -> the cart; ``GET|POST /plain/shipping.html``;
  ``GET /plain/payment.html``, ``POST /plain/pay``; ``GET /plain/confirmation.html``
* ``GET /plain/lantern.html`` -> a product whose buttons are icons with ``aria-label``\\ s
* ``POST /api/plain/cart`` ``{sku, delta}`` -> ``{cart, count}``;
  ``POST /api/plain/like`` ``{sku, liked}`` -> ``{liked, likes}``
* ``GET /api/plain/state`` -> the whole section state (for tests and the bench)
"""

from __future__ import annotations

import copy
import datetime
import html
import json
import re
from pathlib import Path
from typing import Any

from aiohttp import web

__all__ = ["CARD_NUMBER", "PASSWORD", "PLAIN_KEY", "add_plain_routes", "reset_plain"]

PLAIN_DIR = Path(__file__).resolve().parent / "static" / "plain"
PLAIN_KEY: web.AppKey[dict[str, Any]] = web.AppKey("harbor_plain", dict)

PASSWORD = "Tide-Lantern-4417"
"""The one password the sign-in form accepts (any email): a secret the bench looks for."""
CARD_NUMBER = "4242 4242 4242 4242"
"""A card number that passes the Luhn check; the bench looks for it in what servers send."""

PRODUCTS: dict[str, dict[str, Any]] = {
    "deck-lantern": {"name": "Brass deck lantern", "price": 42.0},
    "oslofjord-chart": {"name": "Chart of the Oslofjord", "price": 9.5},
    "storm-lantern": {"name": "Storm lantern", "price": 28.0},
}
SEED_CART = {"deck-lantern": 1, "oslofjord-chart": 2}
SEED_LIKES = {"storm-lantern": 12}

# Offered countries by option text; "Antarctica" is listed but disabled (not offered).
COUNTRIES = {"no": "Norway", "pt": "Portugal", "jp": "Japan"}
SPEEDS = {"standard": ("Standard (3–5 days)", 0.0), "express": ("Express (1–2 days)", 12.0)}
GIFT_WRAP_PRICE = 4.0

GUIDES: dict[str, dict[str, str]] = {
    "tide-tables": {
        "title": "Reading a tide table",
        "summary": "High and low water, the rule of twelfths, and when to cross a bar.",
    },
    "knots": {"title": "Five knots every sailor uses", "summary": "Bowline, cleat hitch, reef knot and more."},
    "lantern-care": {
        "title": "Caring for a brass lantern",
        "summary": "Trimming the wick, polishing brass, and storing oil safely.",
    },
    "night-lights": {
        "title": "Navigation lights at night",
        "summary": "Which lights a vessel shows, and what a lighthouse's flashes tell you.",
    },
    "tide-fishing": {
        "title": "Fishing the turn of the tide",
        "summary": "Why fish feed at slack water and where to stand.",
    },
}

ARTICLES = ("lighthouses", "fresnel-lens", "augustin-fresnel", "lightkeepers")


class Markup(str):
    """Text that is already HTML: a template puts it in as it is."""


def fresh_plain_state() -> dict[str, Any]:
    """The section's part of a fresh application state."""
    return {
        "signed_in": None,
        "signins": [],
        "searches": [],
        "views": [],
        "cart": dict(SEED_CART),
        "likes": dict(SEED_LIKES),
        "liked": [],
        "shipping": None,
        "orders": [],
        "next_order": 5001,
        "payment_errors": 0,
    }


def reset_plain(app: web.Application) -> None:
    """Restore the section's seed state (in place: a started app must not be re-assigned)."""
    app[PLAIN_KEY].clear()
    app[PLAIN_KEY].update(fresh_plain_state())


def _state(request: web.Request) -> dict[str, Any]:
    return request.app[PLAIN_KEY]


def _render(name: str, **values: str) -> str:
    """Fill ``static/plain/<name>``; every placeholder must be given, and is escaped."""
    text = (PLAIN_DIR / name).read_text(encoding="utf-8")
    values.setdefault("header", Markup((PLAIN_DIR / "_header.html").read_text(encoding="utf-8")))

    def fill(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        return value if isinstance(value, Markup) else html.escape(value)

    return re.sub(r"\{\{(\w+)\}\}", fill, text)


def _page(request: web.Request, name: str, **values: str) -> web.Response:
    """Answer with a rendered page and note the visit (the bench checks where it ended)."""
    _state(request)["views"].append(request.path)
    return web.Response(text=_render(name, **values), content_type="text/html")


def _see_other(location: str) -> web.HTTPSeeOther:
    return web.HTTPSeeOther(location)


def _money(amount: float) -> str:
    return f"€{amount:.2f}"


# --- sign-in -------------------------------------------------------------------------------


async def signin_form(request: web.Request) -> web.Response:
    """``GET /plain/signin.html``."""
    return _page(request, "signin.html", error="", email="")


async def signin_post(request: web.Request) -> web.Response:
    """``POST /plain/signin``: any email with `PASSWORD` signs in; the password is never kept."""
    form = await request.post()
    email = str(form.get("email", "")).strip()
    remember = form.get("remember") == "on"
    ok = "@" in email and form.get("password") == PASSWORD
    state = _state(request)
    state["signins"].append({"email": email, "remember": remember, "ok": ok})
    if not ok:
        return _page(request, "signin.html", error="Wrong email or password. Try again.", email=email)
    state["signed_in"] = {"email": email, "remember": remember}
    raise _see_other("/plain/account.html")


async def account(request: web.Request) -> web.Response:
    """``GET /plain/account.html``: who is signed in."""
    who = _state(request)["signed_in"]
    if who is None:
        raise _see_other("/plain/signin.html")
    device = "This device will remember you." if who["remember"] else "You are signed in until you close the browser."
    return _page(request, "account.html", email=who["email"], device=device)


# --- search --------------------------------------------------------------------------------


def _guide_hits(query: str) -> list[str]:
    words = [w for w in query.lower().split() if w]
    if not words:
        return []
    return [
        slug
        for slug, guide in GUIDES.items()
        if all(w in f"{guide['title']} {guide['summary']}".lower() for w in words)
    ]


async def search(request: web.Request) -> web.Response:
    """``GET /plain/search.html?q=``: a classic GET form with its results below."""
    query = request.query.get("q", "").strip()
    if query:
        _state(request)["searches"].append(query)
    hits = _guide_hits(query)
    items = "".join(
        f'<li><a href="/plain/guides/{slug}.html">{html.escape(GUIDES[slug]["title"])}</a>'
        f'<p class="muted">{html.escape(GUIDES[slug]["summary"])}</p></li>'
        for slug in hits
    )
    if not query:
        summary = "Type a few words to search the guides."
    else:
        summary = f"{len(hits)} result{'s' if len(hits) != 1 else ''} for “{query}”"
    return _page(request, "search.html", q=query, summary=summary, results=Markup(items))


async def guide(request: web.Request) -> web.Response:
    """``GET /plain/guides/{slug}.html``."""
    found = GUIDES.get(request.match_info["slug"])
    if found is None:
        raise web.HTTPNotFound(text="No such guide")
    return _page(request, "guide.html", title=found["title"], summary=found["summary"])


async def article(request: web.Request) -> web.Response:
    """``GET /plain/articles/{slug}.html``: a static article (no placeholders but the header)."""
    slug = request.match_info["slug"]
    if slug not in ARTICLES:
        raise web.HTTPNotFound(text="No such article")
    return _page(request, f"articles/{slug}.html")


# --- checkout ------------------------------------------------------------------------------


def _cart_total(cart: dict[str, int]) -> float:
    return sum(PRODUCTS[sku]["price"] * count for sku, count in cart.items())


async def cart_page(request: web.Request) -> web.Response:
    """``GET /plain/cart.html``."""
    cart = _state(request)["cart"]
    rows = "".join(
        f"<tr><td>{html.escape(PRODUCTS[sku]['name'])}</td><td>{count}</td>"
        f"<td>{_money(PRODUCTS[sku]['price'] * count)}</td></tr>"
        for sku, count in cart.items()
    )
    return _page(request, "cart.html", rows=Markup(rows), total=_money(_cart_total(cart)))


def _shipping_problem(form: Any) -> str | None:
    """Why the shipping form cannot be accepted, or None."""
    if not str(form.get("name", "")).strip():
        return "Enter the name to deliver to."
    if form.get("country") not in COUNTRIES:
        return "Choose a country we deliver to."
    if form.get("speed") not in SPEEDS:
        return "Choose a delivery speed."
    try:
        datetime.date.fromisoformat(str(form.get("date", "")))
    except ValueError:
        return "Enter a delivery date."
    return None


async def shipping_page(request: web.Request) -> web.Response:
    """``GET /plain/shipping.html``."""
    return _page(request, "shipping.html", error="")


async def shipping_post(request: web.Request) -> web.Response:
    """``POST /plain/shipping.html``: keep the shipping choice and go on to payment."""
    form = await request.post()
    problem = _shipping_problem(form)
    if problem is not None:
        return _page(request, "shipping.html", error=problem)
    _state(request)["shipping"] = {
        "name": str(form["name"]).strip(),
        "country": COUNTRIES[str(form["country"])],
        "speed": str(form["speed"]),
        "date": str(form["date"]),
        "gift_wrap": form.get("gift_wrap") == "on",
    }
    raise _see_other("/plain/payment.html")


def _amount_due(state: dict[str, Any]) -> float:
    shipping = state["shipping"]
    extra = SPEEDS[shipping["speed"]][1] + (GIFT_WRAP_PRICE if shipping["gift_wrap"] else 0.0)
    return _cart_total(state["cart"]) + extra


def _payment(request: web.Request, error: str) -> web.Response:
    state = _state(request)
    shipping = state["shipping"]
    if shipping is None:
        raise _see_other("/plain/shipping.html")
    wrap = ", gift wrapped" if shipping["gift_wrap"] else ""
    summary = (
        f"To {shipping['name']}, {shipping['country']}, {SPEEDS[shipping['speed']][0]}, on {shipping['date']}{wrap}."
    )
    return _page(request, "payment.html", summary=summary, total=_money(_amount_due(state)), error=error)


async def payment_page(request: web.Request) -> web.Response:
    """``GET /plain/payment.html`` (303 to shipping until that is chosen)."""
    return _payment(request, "")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


async def pay(request: web.Request) -> web.Response:
    """``POST /plain/pay``: place the order; only the card's last four digits are kept."""
    form = await request.post()
    state = _state(request)
    digits = re.sub(r"[\s-]", "", str(form.get("card", "")))
    holder = str(form.get("holder", "")).strip()
    if not (digits.isdigit() and 13 <= len(digits) <= 19 and _luhn_ok(digits)):
        state["payment_errors"] += 1
        return _payment(request, "That card number is not valid.")
    if not holder:
        return _payment(request, "Enter the name on the card.")
    if state["shipping"] is None:
        raise _see_other("/plain/shipping.html")
    order = {
        "number": f"HO-{state['next_order']}",
        "items": dict(state["cart"]),
        "shipping": state["shipping"],
        "total": round(_amount_due(state), 2),
        "card_last4": digits[-4:],
        "holder": holder,
    }
    state["next_order"] += 1
    state["orders"].append(order)
    state["cart"] = {}
    state["shipping"] = None
    raise _see_other(f"/plain/confirmation.html?order={order['number']}")


async def confirmation(request: web.Request) -> web.Response:
    """``GET /plain/confirmation.html?order=HO-N``."""
    number = request.query.get("order", "")
    order = next((o for o in _state(request)["orders"] if o["number"] == number), None)
    if order is None:
        raise web.HTTPNotFound(text="No such order")
    return _page(
        request,
        "confirmation.html",
        number=order["number"],
        total=_money(order["total"]),
        last4=order["card_last4"],
        date=order["shipping"]["date"],
    )


# --- the icon-button product page ----------------------------------------------------------


async def lantern(request: web.Request) -> web.Response:
    """``GET /plain/lantern.html``: counts rendered now, kept current by the page's script."""
    state = _state(request)
    return _page(
        request,
        "lantern.html",
        cart_count=str(sum(state["cart"].values())),
        in_cart=str(state["cart"].get("storm-lantern", 0)),
        likes=str(state["likes"]["storm-lantern"]),
        liked="true" if "storm-lantern" in state["liked"] else "false",
    )


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        data = await request.json()
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("sku") not in PRODUCTS:
        raise web.HTTPBadRequest(text=json.dumps({"error": "Body must be {sku, ...} with a known sku"}))
    return data


async def change_cart(request: web.Request) -> web.Response:
    """``POST /api/plain/cart {sku, delta}``: never below zero, at most 20 of one thing."""
    data = await _json_body(request)
    delta = data.get("delta", 1)
    if not isinstance(delta, int) or isinstance(delta, bool):
        raise web.HTTPBadRequest(text=json.dumps({"error": "delta must be an integer"}))
    cart = _state(request)["cart"]
    count = max(0, min(20, cart.get(data["sku"], 0) + delta))
    if count:
        cart[data["sku"]] = count
    else:
        cart.pop(data["sku"], None)
    return web.json_response({"cart": cart, "count": sum(cart.values())})


async def like(request: web.Request) -> web.Response:
    """``POST /api/plain/like {sku, liked}``: set (not toggle) whether the person likes it."""
    data = await _json_body(request)
    state = _state(request)
    sku = data["sku"]
    want = bool(data.get("liked", True))
    if want and sku not in state["liked"]:
        state["liked"].append(sku)
        state["likes"][sku] = state["likes"].get(sku, 0) + 1
    elif not want and sku in state["liked"]:
        state["liked"].remove(sku)
        state["likes"][sku] -= 1
    return web.json_response({"liked": want, "likes": state["likes"].get(sku, 0)})


async def plain_state(request: web.Request) -> web.Response:
    """``GET /api/plain/state``."""
    return web.json_response(copy.deepcopy(_state(request)))


async def index(request: web.Request) -> web.Response:
    """``GET /plain/``."""
    return _page(request, "index.html")


async def not_found(request: web.Request) -> web.Response:
    """Any other ``/plain/`` path: 404, so the static route never serves a raw template."""
    raise web.HTTPNotFound(text="No such page")


def add_plain_routes(app: web.Application) -> None:
    """Add the section's routes and state; call before the site-wide static route."""
    app[PLAIN_KEY] = fresh_plain_state()
    get, post = app.router.add_get, app.router.add_post
    get("/plain/", index)
    get("/plain/index.html", index)
    get("/plain/signin.html", signin_form)
    post("/plain/signin", signin_post)
    get("/plain/account.html", account)
    get("/plain/search.html", search)
    get("/plain/guides/{slug}.html", guide)
    get("/plain/articles/{slug}.html", article)
    get("/plain/cart.html", cart_page)
    get("/plain/shipping.html", shipping_page)
    post("/plain/shipping.html", shipping_post)
    get("/plain/payment.html", payment_page)
    post("/plain/pay", pay)
    get("/plain/confirmation.html", confirmation)
    get("/plain/lantern.html", lantern)
    post("/api/plain/cart", change_cart)
    post("/api/plain/like", like)
    get("/api/plain/state", plain_state)
    get("/plain/{tail:.*}", not_found)
