"""One agent task per demo: what a user would ask, done with the window's tools, checked on the page.

Each task gets a `Session` on a bridge started at the demo's URL and returns whether the task
is done, judged from what `app://windows` shows after the last step (never from the bridge's
answer). Values an agent would read first (a hotel id, a showtime, a confirmation id) are
read from the previous answer or the page, as an agent would. A task notes what it had to
work around; `Session.call` notes what the bridge said that was untrue.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .session import Session, TaskFailed, Windows, address, text_of

__all__ = ["TASKS", "Task"]


@dataclass(frozen=True)
class Task:
    demo: str
    path: str
    """Start URL, relative to the server's root."""
    goal: str
    run: Callable[[Session], Awaitable[bool]]
    label: str = ""
    """The row's name when one demo has more than one task (a URL variant)."""
    needs_internet: str = ""
    """What of the demo needs the internet at run time, when something does."""


def _shows(*needles: str, window: str | None = None) -> Callable[[Windows], bool]:
    """Holds when one window (or the one with id `window`) shows every needle (case-insensitive)."""

    def holds(state: Windows) -> bool:
        for w in state["windows"]:
            if window is not None and w["id"] != window:
                continue
            text = text_of(w).lower()
            if all(n.lower() in text for n in needles):
                return True
        return False

    return holds


def _at(path_part: str, title_part: str) -> Callable[[Windows], bool]:
    """The first tab shows the page at `path_part` with `title_part` in its title."""

    def holds(state: Windows) -> bool:
        tab = next(w for w in state["windows"] if not w["modal"])
        return path_part in address(tab) and title_part.lower() in tab["title"].lower()

    return holds


async def _result(call_structured: dict[str, Any] | None) -> Any:
    """The page's own result inside a bridge answer: unwrapped from `{value}`, from MCP's
    `{content: [{text}]}` and from JSON text, as often as the page nested them."""
    value = (call_structured or {}).get("result")
    for _ in range(4):
        if isinstance(value, dict) and set(value) in ({"value"}, {"text"}):
            value = value.get("value", value.get("text"))  # {"text"}: an MCP-shaped answer's text (issue 18)
        elif isinstance(value, dict) and isinstance(value.get("content"), list):
            value = " ".join(str(c.get("text", "")) for c in value["content"] if isinstance(c, dict))
        elif isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return value
        else:
            return value
    return value


def _matches(pattern: str, window: str) -> Callable[[Windows], bool]:
    """Holds when the window `window` has a block whose text matches `pattern`."""

    def holds(state: Windows) -> bool:
        for w in state["windows"]:
            if w["id"] == window and any(re.search(pattern, str(b.get("text", ""))) for b in w["blocks"]):
                return True
        return False

    return holds


async def _mixed_documents(s: Session, old_path: str, new_title: str) -> None:
    """Note a tab window that shows the new page's title over the old page's address."""
    tab = await s.tab()
    if new_title.lower() in tab["title"].lower() and old_path in address(tab):
        s.problem(
            "mixed_documents",
            f"{tab['id']} titled {tab['title']!r} shows the address {address(tab)} of the page it left",
        )


async def _answer_pending_form(s: Session, opened: list[str]) -> None:
    """Submit the waiting form (a non-autosubmit declarative tool) the call opened."""
    if not opened:
        modal = await s.modals()
        if not modal:
            raise TaskFailed("the form tool opened no window to submit")
        opened = [modal[0]["id"]]
    await s.wait_tool(opened[0], "submit")
    await s.call(opened[0], "submit", {})


# ---- the tasks ---------------------------------------------------------------------------


def _future(days: int) -> str:
    return (datetime.date.today() + datetime.timedelta(days=days)).isoformat()


_BISTRO_ARGS = {"name": "Ada Lovelace", "phone": "5551234567", "time": "19:30", "guests": "4", "seating": "Terrace"}


async def bistro(s: Session) -> bool:
    """Book a table; the form waits for its submission, which the agent does with the pending window."""
    tab = (await s.tab())["id"]
    args = {**_BISTRO_ARGS, "date": _future(10)}
    call = await s.call(tab, "book_table_le_petit_bistro", args, version=True, need=False)
    if call.code == "stale_state":
        s.note("retried book_table without expectedVersion after stale_state")
        call = await s.call(tab, "book_table_le_petit_bistro", args)
    elif call.is_error:
        raise TaskFailed(f"book_table answered {call.code}: {call.message[:200]}")
    await _answer_pending_form(s, call.opened)
    return await s.check(
        "the “Reservation Received” dialog for Ada Lovelace", _shows("Reservation Received", "Ada Lovelace")
    )


async def bistro_autosubmit(s: Session) -> bool:
    """The same form with toolautosubmit: one call books the table and opens the <dialog>."""
    tab = (await s.tab())["id"]
    args = {**_BISTRO_ARGS, "date": _future(10)}
    call = await s.call(tab, "book_table_le_petit_bistro", args, version=True, need=False)
    if call.code == "stale_state":
        s.note("retried book_table without expectedVersion after stale_state")
        call = await s.call(tab, "book_table_le_petit_bistro", args)
    if call.is_error:
        raise TaskFailed(f"book_table answered {call.code}: {call.message[:200]}")
    return await s.check(
        "the “Reservation Received” dialog for Ada Lovelace", _shows("Reservation Received", "Ada Lovelace")
    )


async def coffee(s: Session) -> bool:
    """Reorder the usual beans (read from the order history), then open the Alchemist's page."""
    tab = (await s.tab())["id"]
    history = await _result((await s.call(tab, "get_order_history", {})).structured)
    item_id = history["last_order"]["item_id"] if isinstance(history, dict) else "DR-001"
    await s.call(tab, "reorder_product", {"item_id": item_id})
    added = await s.check("the toast “Item added to your ritual!”", _shows("Item added to your ritual"), timeout=3)
    await s.call(tab, "search_catalog", {"query": "The Alchemist"})
    # The page navigates 100 ms after answering, on its own: not a read-after-write case.
    arrived = await s.check("the Alchemist's page", _at("the_alchemist.html", "Alchemist"), sync=False)
    if arrived:
        await s.wait_tool(tab, "get_machine_specifications")
    return added and arrived


async def doors(s: Session) -> bool:
    """Open door 3 (the attic), cast light, return to the hallway: two autosubmit navigations."""
    tab = (await s.tab())["id"]
    await s.call(tab, "openDoor3", {}, version=True)
    await _mixed_documents(s, "/doors/index.html", "Wizard")
    if not await s.check("the Wizard's Attic", _at("magic.html", "Wizard")):
        return False
    await s.wait_tool(tab, "castLight")
    await s.call(tab, "castLight", {})
    if not await s.check("the owl blinking in the light", _shows("owl blinks")):
        return False
    await s.wait_tool(tab, "returnToHallway")
    await s.call(tab, "returnToHallway", {}, version=True)
    return await s.check("the hallway again", _at("/doors/index.html", "Hallway"))


async def explainer(s: Session) -> bool:
    """Book the first free consultation slot of the next two weeks, read from getAvailability."""
    tab = (await s.tab())["id"]
    slots = await _result(
        (await s.call(tab, "getAvailability", {"startDate": _future(0), "endDate": _future(14)})).structured
    )
    if not isinstance(slots, dict) or not any(slots.values()):
        raise TaskFailed(f"getAvailability gave no slot: {str(slots)[:200]}")
    day, times = next((d, t) for d, t in sorted(slots.items()) if t)
    booked = await _result(
        (
            await s.call(
                tab, "bookSlot", {"date": day, "time": times[0], "name": "Ada Lovelace", "email": "ada@example.com"}
            )
        ).structured
    )
    if not isinstance(booked, dict) or not booked.get("ok"):
        raise TaskFailed(f"bookSlot did not book: {booked}")
    return await s.check(f"the confirmation {booked['confirmationId']}", _shows(str(booked["confirmationId"])))


async def order_tracking(s: Session) -> bool:
    """Look up last month's orders, then start a return of the delivered ORD123."""
    tab = (await s.tab())["id"]
    await s.call(tab, "get_order_status", {"timeframe": "last_30_days"}, version=True)
    await _mixed_documents(s, "/order-tracking/index.html", "History")
    if not await s.check("the order history", _shows("ORD123", "ORD456")):
        return False
    await s.wait_tool(tab, "initiate_return")
    await s.call(tab, "initiate_return", {"order_id": "ORD123", "reason": "defective"}, version=True)
    return await s.check(
        "the return confirmation for ORD123", _shows("Return Confirmation", "ORD123", "successfully processed")
    )


async def pizza(s: Session) -> bool:
    """A large pesto pizza with three mushrooms."""
    tab = (await s.tab())["id"]
    await s.call(tab, "set_pizza_size", {"size": "Large"})
    await s.call(tab, "set_pizza_style", {"style": "Pesto"})
    await s.call(tab, "add_topping", {"topping": "🍄", "count": 3})

    def three_mushrooms(state: Windows) -> bool:
        tab_window = next(w for w in state["windows"] if w["id"] == tab)
        # Lines, as a reader counts them: a run of text blocks is one block of lines (view/shown.py).
        lines = [line for b in tab_window["blocks"] for line in str(b.get("text", "")).split("\n")]
        return lines.count("🍄") == 3

    return await s.check("three 🍄 on the pizza", three_mushrooms)


async def real_estate(s: Session) -> bool:
    """Search Seattle from the landing page (an autosubmit form to the map page)."""
    tab = (await s.tab())["id"]
    call = await s.call(tab, "search_location", {"location": "Seattle"}, version=True, need=False)
    if call.code == "stale_state":
        # The page changed since the read (it may still be loading its CDN scripts): read again, retry.
        s.note("retried search_location with the version read again after stale_state")
        call = await s.call(tab, "search_location", {"location": "Seattle"}, version=True, need=False)
    for dialog in call.opened:
        await s.wait_tool(dialog, "accept")
        await s.call(dialog, "accept", {}, need=False)
    for modal in await s.modals():
        s.note(f"a dialog the call did not report was open: {modal['title']!r}")
        await s.wait_tool(modal["id"], "accept")
        await s.call(modal["id"], "accept", {}, need=False)
    await _mixed_documents(s, "/real-estate-map/index.html", "Map")
    return await s.check("the map page for Seattle", _at("map.html?location=Seattle", ""), sync=False)


async def ticket_booking(s: Session) -> bool:
    """Pick a horror film in Montpelier and start the checkout for one of its showtimes."""
    tab = (await s.tab())["id"]
    await s.call(tab, "update_location", {"city": "Montpelier"})
    found = await _result((await s.call(tab, "query_content", {"genre": "horror"})).structured)
    films = found.get("results", []) if isinstance(found, dict) else []
    film = next((f for f in films if "Montpelier" in f.get("locations", [])), None)
    if film is None:
        raise TaskFailed(f"no horror film in Montpelier: {str(found)[:200]}")
    day = film["showtimes"][0]
    date, times = (day["date"], day["times"]) if isinstance(day, dict) else (_future(0), film["showtimes"])
    # The page's own pattern '^[1-12]:…' accepts only times starting with 1 or 2; pick one.
    time = next((t for t in times if re.match(r"^[1-2]:[0-5][0-9] (AM|PM)$", t)), times[0])
    await s.call(tab, "select_showtime", {"movie_id": film["id"], "date": date, "time": time})
    return await s.check(f"the checkout for {film['title']} at {time}", _shows(film["title"], time))


async def page_agent(s: Session) -> bool:
    """The agent page loads a WebMCP site into its iframe and chats with Gemini about its tools.

    Offline its module script (imported from esm.sh) never runs, so the iframe stays empty and
    there is nothing to drive: the task is recorded as not done, with what the window shows."""
    tab = (await s.tab())["id"]
    listed = await s.page_tools(tab)
    shown = await s.until(_shows("tools are exposed"), timeout=3) is not None
    s.note(f"page tools listed: {listed or 'none'}; the iframe's tool count line {'shown' if shown else 'never shown'}")
    return False


async def maze(s: Session) -> bool:
    """Start a game and make one move through an open passage."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "start_game")
    await s.call(tab, "start_game", {})
    look = await _result((await s.call(tab, "look", {})).structured)
    open_dirs = look.get("openDirections", []) if isinstance(look, dict) else []
    if not open_dirs:
        raise TaskFailed(f"look gave no open direction: {str(look)[:200]}")
    await s.call(tab, "move", {"direction": open_dirs[0]})

    def one_move(state: Windows) -> bool:
        # The HUD's counters, in blocks of their own or in one line ("MOVES 1 … EXPLORED 3/100").
        blocks = [str(b.get("text", "")) for w in state["windows"] if w["id"] == tab for b in w["blocks"]]
        return re.search(r"\bMOVES\s+1\b", " ".join(blocks)) is not None

    # The maze itself is a canvas; the HUD beside it counts the moves.
    return await s.check("MOVES 1 in the HUD", one_move)


async def leather(s: Session) -> bool:
    """Open the signature satchel and add two brown ones to the cart (Angular signal form tool)."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "view_product")
    await s.call(tab, "view_product", {"slug": "signature-satchel"})
    await s.wait_tool(tab, "add_to_cart")
    call = await s.call(
        tab, "add_to_cart", {"variations": [{"color": "Brown", "quantity": 2}]}, version=True, need=False
    )
    if call.code == "stale_state":
        s.note("retried add_to_cart without expectedVersion after stale_state")
        call = await s.call(tab, "add_to_cart", {"variations": [{"color": "Brown", "quantity": 2}]})
    elif call.is_error:
        raise TaskFailed(f"add_to_cart answered {call.code}: {call.message[:200]}")
    if call.opened and (await s.modals()):
        await _answer_pending_form(s, call.opened)
    return await s.check("the cart badge at 2", _matches(r"shopping_bag\s*2$", tab))


async def sport_shop(s: Session) -> bool:
    """Find a basketball, add the first result to the cart, check out."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "search_product")
    await s.call(tab, "search_product", {"query": "basketball", "category": "BASKETBALL"})
    await s.wait_tool(tab, "add_search_result_to_cart")
    results = await _result((await s.call(tab, "get_current_search_results", {})).structured)
    first = (results.get("results") or [{}])[0] if isinstance(results, dict) else {}
    added = await _result((await s.call(tab, "add_search_result_to_cart", {"index": 0})).structured)
    if not isinstance(added, dict) or not added.get("success"):
        raise TaskFailed(f"add_search_result_to_cart: {added}")
    await s.call(tab, "open_cart", {})
    name = str(first.get("name", ""))
    if not await s.check(f"the cart with {name} and its subtotal", _shows(name, "Subtotal")):
        return False
    await s.wait_tool(tab, "start_checkout")
    await s.call(tab, "start_checkout", {})
    # The page shows “SECURING DATA” first, then the confirmation: not read after write.
    return await s.check("“LAUNCH CONFIRMED”", _shows("LAUNCH CONFIRMED"), sync=False)


async def hotel(s: Session) -> bool:
    """Find a hotel in Paris, open it, start a booking and complete it (a non-autosubmit form)."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "search_location")
    await s.call(tab, "search_location", {"query": "Paris", "nights": 2, "adults": 2})
    await s.wait_tool(tab, "get_current_search_results")
    found = await _result((await s.call(tab, "get_current_search_results", {})).structured)
    hotels = found if isinstance(found, list) else (found or {}).get("hotels") or []
    if not hotels:
        raise TaskFailed(f"no hotel in the results: {str(found)[:200]}")
    first = hotels[0]
    await s.call(tab, "view_hotel", {"hotel_name_or_id": first["id"]})
    await s.wait_tool(tab, "start_booking")
    await s.call(tab, "start_booking", {})
    await s.wait_tool(tab, "complete_booking")
    guest = {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"}
    call = await s.call(tab, "complete_booking", guest, version=True, need=False)
    if call.code == "stale_state":
        s.note("retried complete_booking without expectedVersion after stale_state")
        call = await s.call(tab, "complete_booking", guest)
    elif call.is_error:
        raise TaskFailed(f"complete_booking answered {call.code}: {call.message[:200]}")
    if any(w["id"] in call.opened for w in await s.modals()):
        await _answer_pending_form(s, call.opened)
    return await s.check("“Reservation Confirmed”", _shows("Reservation Confirmed"))


async def flights(s: Session) -> bool:
    """Search one-way flights, keep the non-stop ones, read the list."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "searchFlights")
    search = {
        "origin": "SFO",
        "destination": "JFK",
        "tripType": "one-way",
        "outboundDate": _future(20),
        "inboundDate": _future(27),
        "passengers": 1,
    }
    await s.call(tab, "searchFlights", search)
    await s.wait_tool(tab, "listFlights")
    listed = await _result((await s.call(tab, "listFlights", {})).structured)
    if not isinstance(listed, list) or not listed:
        raise TaskFailed(f"listFlights gave no flight: {str(listed)[:200]}")
    first = listed[0]
    flight_no = str(first.get("flightNumber") or first.get("id") or "")
    return await s.check(f"the results with {flight_no}", _shows("SFO", "JFK", flight_no), sync=False)


async def smart_home(s: Session) -> bool:
    """Show only the thermostat and the front-door lock on the dashboard."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "rearrangeDOMComponents")
    before = text_of(await s.tab())
    await s.call(tab, "rearrangeDOMComponents", {"componentIds": ["thermostat_control", "lock_front_door"]})
    changed = await s.check(
        "a changed dashboard", lambda st: text_of(next(w for w in st["windows"] if w["id"] == tab)) != before
    )
    return changed and await s.check("the HVAC and the door lock", _shows("HVAC", "Front Door Lock"), sync=False)


async def analytics(s: Session) -> bool:
    """Requests by status as a table."""
    tab = (await s.tab())["id"]
    await s.wait_tool(tab, "query")
    call = await s.call(tab, "query", {"groupBy": "status", "measure": "count", "chartType": "table"}, need=False)
    if call.is_error:
        s.note(f"query answered {call.code}: {call.message[:160]}")
    bad = await s.call(
        tab,
        "query",
        {"groupBy": "status", "measure": "count", "chartType": "table", "dateFrom": "not a date"},
        need=False,
    )
    s.note(f"query with dateFrom 'not a date': is_error={bad.is_error}, {bad.message[:160]!r}")
    if not await s.check("“Query applied” reflected: Chart = Table", _shows('"Chart:", "value": "Table"')):
        return False
    s.note("public/mockData.json is a large-file pointer missing from the stored repository: the dashboard has 0 rows")
    return True


TASKS: list[Task] = [
    Task("analytics-dashboard", "/demos/analytics-dashboard/", "query requests by status as a table", analytics),
    Task("coffee-shop", "/demos/coffee-shop/", "reorder the usual beans, open the Alchemist", coffee),
    Task("doors", "/demos/doors/", "door 3, cast light, back to the hallway", doors),
    Task("explainer", "/demos/explainer/", "book the first free slot", explainer),
    Task("french-bistro", "/demos/french-bistro/", "book a table (form waits for submit)", bistro),
    Task(
        "french-bistro",
        "/demos/french-bistro/?toolautosubmit",
        "book a table (toolautosubmit)",
        bistro_autosubmit,
        label="french-bistro ?toolautosubmit",
    ),
    Task("hotel-chain", "/demos/hotel-chain/", "find a hotel in Paris and book it", hotel),
    Task("leather-bag", "/demos/leather-bag/", "add two brown satchels to the cart", leather),
    Task("order-tracking", "/demos/order-tracking/", "find orders, return ORD123", order_tracking),
    Task(
        "page-agent",
        "/demos/page-agent/",
        "open the agent page",
        page_agent,
        needs_internet="its script imports @google/genai from esm.sh and chats with Gemini",
    ),
    Task("pizza-maker", "/demos/pizza-maker/", "large pesto pizza with 3 mushrooms", pizza),
    Task("react-flightsearch", "/demos/react-flightsearch/", "search SFO→JFK, list flights", flights),
    Task(
        "real-estate-map",
        "/demos/real-estate-map/",
        "search Seattle",
        real_estate,
        needs_internet="map.html loads Google Maps (API key), Tailwind and noUiSlider from CDNs",
    ),
    Task(
        "real-estate-map",
        "/demos/real-estate-map/?key=offline-test-key",
        "search Seattle (with a map key: the map page alerts when Maps cannot load)",
        real_estate,
        label="real-estate-map ?key",
        needs_internet="map.html loads Google Maps (API key), Tailwind and noUiSlider from CDNs",
    ),
    Task("smart-home", "/demos/smart-home/", "show thermostat and lock only", smart_home),
    Task(
        "sport-shop-angular",
        "/demos/sport-shop-angular/",
        "add a basketball to the cart, check out",
        sport_shop,
        needs_internet="its agent drawer calls Gemini (not used here)",
    ),
    Task("ticket-booking", "/demos/ticket-booking/", "horror film in Montpelier, pick a showtime", ticket_booking),
    Task("webmcp-maze", "/demos/webmcp-maze/", "start a game, make one move", maze),
]
