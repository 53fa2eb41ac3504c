"""Meridian: pages written for the benchmark (issue 22) that no test uses.

A site a stranger might have written, with another look and structure than the sample site:
a shop (`/shop/`), a news story (`/news/story.html`) and a task board (`/app/tasks.html`),
each registering WebMCP tools, around the furniture of real sites (a header with nav and a
search box, cards, a long footer, inline SVG icons, a cookie banner, lazy images whose source
never answers, a third-party tag that hangs). Static files and a tiny JSON API whose state
lives in memory per application; `POST /api/reset` restores it.

    with serve_in_thread() as base:   # "http://127.0.0.1:PORT"
        ...

    python -m bench.site [--port N]   # by hand

The slow third parties live on a second port (another origin, as a CDN or a tag vendor is), so
the requests they hold open never take the browser's connections to the site itself:

* ``GET {cdn}/img/{name}.svg`` answers a small picture; ``GET {cdn}/img/hold/{name}`` holds the
  request open (at most 10 minutes, or until the site stops);
* ``GET {cdn}/tag/loader.js`` is a tag script that never finishes loading;
* ``/assets/env.js`` tells the pages where the CDN is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

from sample_site.slow import never
from sample_site.threaded import serve_in_thread as _serve_in_thread

__all__ = ["STATIC_DIR", "make_app", "serve_in_thread", "start_site"]

STATIC_DIR = Path(__file__).resolve().parent / "static"

_KINDS = [
    ("Trail shoe", "Footwear", 89),
    ("Rain shell", "Jackets", 149),
    ("Merino tee", "Base layers", 59),
    ("Daypack 22 L", "Packs", 79),
    ("Headlamp", "Gear", 35),
    ("Camp mug", "Kitchen", 14),
    ("Fleece hoodie", "Mid layers", 99),
    ("Trekking poles", "Gear", 119),
]
_COLOURS = ["Slate", "Moss", "Ember", "Glacier", "Sand"]

PRODUCTS: list[dict[str, Any]] = [
    {
        "sku": f"MR-{1001 + i}",
        "name": f"{_COLOURS[i % len(_COLOURS)]} {_KINDS[i % len(_KINDS)][0]}",
        "category": _KINDS[i % len(_KINDS)][1],
        "price": _KINDS[i % len(_KINDS)][2] + (i % 5) * 5,
        "rating": round(3.6 + (i * 7 % 14) / 10, 1),
        "reviews": 12 + i * 17 % 380,
        "inStock": i % 9 != 4,
    }
    for i in range(40)
]

COLUMNS = ["todo", "doing", "done"]
_TASK_TITLES = [
    "Draft the Q3 roadmap",
    "Fix login redirect loop",
    "Update the privacy page",
    "Migrate invoices to v2 API",
    "Review onboarding emails",
    "Design the pricing table",
    "Write release notes 4.2",
    "Audit image sizes",
    "Rotate staging secrets",
    "Plan the team offsite",
]
SEED_TASKS: list[dict[str, Any]] = [
    {
        "id": f"T-{101 + i}",
        "title": f"{_TASK_TITLES[i % len(_TASK_TITLES)]}" + ("" if i < 10 else f" (part {i // 10 + 1})"),
        "column": COLUMNS[i % 3],
        "assignee": ["Noor", "Ilya", "Chen", "Ama", "Rui"][i % 5],
        "points": [1, 2, 3, 5, 8][i % 5],
    }
    for i in range(30)
]

STATE_KEY: web.AppKey[dict[str, Any]] = web.AppKey("meridian_state", dict)
CDN_KEY: web.AppKey[dict[str, str]] = web.AppKey("meridian_cdn", dict)


def fresh_state() -> dict[str, Any]:
    return {"cart": {}, "tasks": copy.deepcopy(SEED_TASKS), "highlights": []}


def _state(request: web.Request) -> dict[str, Any]:
    return request.app[STATE_KEY]


def _bad(message: str, status: int = 400) -> web.HTTPException:
    cls = web.HTTPNotFound if status == 404 else web.HTTPBadRequest
    return cls(text=json.dumps({"error": message}), content_type="application/json")


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        data = await request.json() if request.can_read_body else {}
    except ValueError:
        raise _bad("Body must be JSON") from None
    if not isinstance(data, dict):
        raise _bad("Body must be a JSON object")
    return data


async def products(request: web.Request) -> web.Response:
    """``GET /api/products?q=&category=``: the catalogue, filtered by words and category."""
    words = request.query.get("q", "").lower().split()
    category = request.query.get("category", "")
    hits = [
        p
        for p in PRODUCTS
        if all(w in f"{p['name']} {p['category']}".lower() for w in words)
        and (not category or p["category"] == category)
    ]
    return web.json_response({"products": hits, "total": len(hits)})


async def cart(request: web.Request) -> web.Response:
    """``GET /api/cart``: sku → quantity, and the item count."""
    items = _state(request)["cart"]
    return web.json_response({"items": items, "count": sum(items.values())})


async def add_to_cart(request: web.Request) -> web.Response:
    """``POST /api/cart`` ``{sku, quantity}``."""
    data = await _body(request)
    sku = str(data.get("sku", ""))
    product = next((p for p in PRODUCTS if p["sku"] == sku), None)
    if product is None:
        raise _bad(f"No product {sku!r}", 404)
    quantity = data.get("quantity", 1)
    if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 99:
        raise _bad("quantity must be an integer from 1 to 99")
    if not product["inStock"]:
        raise _bad(f"{product['name']} is out of stock")
    items = _state(request)["cart"]
    items[sku] = items.get(sku, 0) + quantity
    return web.json_response({"sku": sku, "name": product["name"], "inCart": items[sku], "count": sum(items.values())})


async def tasks(request: web.Request) -> web.Response:
    """``GET /api/tasks``."""
    return web.json_response({"tasks": _state(request)["tasks"], "columns": COLUMNS})


async def move_task(request: web.Request) -> web.Response:
    """``POST /api/tasks/{id}/move`` ``{column}``."""
    task = next((t for t in _state(request)["tasks"] if t["id"] == request.match_info["id"]), None)
    if task is None:
        raise _bad(f"No task {request.match_info['id']}", 404)
    column = (await _body(request)).get("column")
    if column not in COLUMNS:
        raise _bad(f"column must be one of {', '.join(COLUMNS)}")
    task["column"] = column
    return web.json_response(task)


async def highlights(request: web.Request) -> web.Response:
    """``GET /api/highlights``, ``POST /api/highlights`` ``{text}``."""
    saved = _state(request)["highlights"]
    if request.method == "POST":
        text = str((await _body(request)).get("text", "")).strip()
        if not text:
            raise _bad("text must not be empty")
        saved.append(text[:280])
    return web.json_response({"highlights": saved})


async def reset(request: web.Request) -> web.Response:
    """``POST /api/reset``: the seed data again."""
    state = _state(request)
    state.clear()
    state.update(fresh_state())
    return web.json_response({"reset": True})


async def env_js(request: web.Request) -> web.Response:
    """``/assets/env.js``: where the pages find the CDN (another origin)."""
    body = f"window.MERIDIAN_ENV = {json.dumps(request.app[CDN_KEY])};\n"
    return web.Response(text=body, content_type="text/javascript", headers={"Cache-Control": "no-store"})


async def picture(request: web.Request) -> web.Response:
    """``GET {cdn}/img/{name}.svg``: a small placeholder picture, tinted by its name."""
    hue = sum(request.match_info["name"].encode()) % 360
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200">'
        f'<rect width="320" height="200" fill="hsl({hue} 35% 82%)"/>'
        f'<circle cx="160" cy="100" r="48" fill="hsl({hue} 40% 60%)"/></svg>'
    )
    return web.Response(text=svg, content_type="image/svg+xml", headers={"Cache-Control": "max-age=3600"})


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC_DIR / "index.html")


async def shop(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC_DIR / "shop" / "index.html")


@web.middleware
async def no_cache_api(request: web.Request, handler: Any) -> web.StreamResponse:
    response = await handler(request)
    if "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "no-store" if request.path.startswith("/api/") else "no-cache"
    return response


def make_app() -> web.Application:
    """A fresh application with its own state; the CDN routes answer on any port it is served on."""
    app = web.Application(middlewares=[no_cache_api])
    app[STATE_KEY] = fresh_state()
    app[CDN_KEY] = {"cdn": ""}
    app.router.add_get("/", index)
    app.router.add_get("/shop/", shop)
    app.router.add_get("/api/products", products)
    app.router.add_get("/api/cart", cart)
    app.router.add_post("/api/cart", add_to_cart)
    app.router.add_get("/api/tasks", tasks)
    app.router.add_post("/api/tasks/{id}/move", move_task)
    app.router.add_route("*", "/api/highlights", highlights)
    app.router.add_post("/api/reset", reset)
    app.router.add_get("/assets/env.js", env_js)
    app.router.add_get("/img/hold/{name}", _hold)
    app.router.add_get("/img/{name}.svg", picture)
    app.router.add_get("/tag/loader.js", _never_script)
    app.router.add_static("/", STATIC_DIR, show_index=False)
    return app


async def _hold(request: web.Request) -> web.StreamResponse:
    """``GET {cdn}/img/hold/{name}``: headers, then nothing (sample_site.slow's `never`); a browser
    that gave up before the headers went is no error of the site's."""
    try:
        return await never(request)
    except ConnectionResetError:
        return web.Response(status=499)


async def _never_script(request: web.Request) -> web.StreamResponse:
    """``GET {cdn}/tag/loader.js``: a third-party tag whose server never finishes the answer."""
    return await _hold(request.clone(rel_url=request.rel_url.update_query(type="script")))


async def start_site(host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, str]:
    """Serve the site on `host:port` (0 = free) and its CDN on another free port; (runner, base URL)."""
    runner = web.AppRunner(make_app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    await web.TCPSite(runner, host, 0).start()
    (_, site_port), (_, cdn_port) = runner.addresses[0][:2], runner.addresses[1][:2]
    runner.app[CDN_KEY]["cdn"] = f"http://{host}:{cdn_port}"
    return runner, f"http://{host}:{site_port}"


@contextmanager
def serve_in_thread(host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve a fresh Meridian (its own data) from a thread; yields its base URL, stops on exit."""
    with _serve_in_thread(host, port, start_site) as base:
        yield base
