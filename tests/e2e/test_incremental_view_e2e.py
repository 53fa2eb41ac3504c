"""End to end: a page that changed only where its observer saw it is read again only there
(`live_view.read_changes`), and that read gives the very view a whole read gives.

The bridge runs with `WEBMCP_VERIFY_INCREMENTAL=1`: every incremental read is followed by a
whole read with the block ids as they were, and any difference (blocks, version-making facts,
ids, targets, secret values) is logged at ERROR and counted; the counts go to the file named
by `WEBMCP_VERIFY_INCREMENTAL_COUNTS`, which the test reads. Every sample-site page with page
tools is visited and every tool there called with valid arguments (the few that are not are
in `NOT_CALLED` with the reason); a person types into fields with Playwright. No read may
differ, and incremental reads must have happened (checked, not raced), or the test proves nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

Plan = dict[str, dict[str, Any]]

# Page → every page tool it has, with valid arguments. A tool that leaves the page is in LEAVES.
HELP_DESK: dict[str, Plan] = {
    "/": {
        "list_tickets": {"status": "all"},
        "get_queue_summary": {},
        "get_ticket": {"id": 101},
        "close_ticket": {"id": 102, "resolution": "Reset the password"},
        "add_note": {"id": 101, "text": "Called the customer"},
        "explode": {},
        "slow_report": {"seconds": 0.2},
        "escalate_ticket": {"id": 103, "reason": "VIP"},
        "claim_welcome_bonus": {},
        "open_ticket_in_new_tab": {"id": 101},
        "create_ticket": {"subject": "Printer on fire", "priority": "high", "description": "Floor 2"},
        "contact_customer": {"email": "ada@example.com", "message": "Your ticket is closed."},
        "search_kb": {"query": "refund"},
    },
    "/frame.html": {"search_kb": {"query": "password"}},
    "/login.html": {"sign_in": {"username": "agent", "password": "harbor"}},
    "/danger.html": {
        "purge_closed_tickets": {},
        "rename_queue": {},
        "notify_agent": {"message": "Coffee is ready"},
        "freeze_page": {"seconds": 0.2},
    },
    "/modal.html": {"open_editor": {}, "save_edit": {"name": "Tier 2", "sla": 8}, "page_info": {}},
    "/big.html?rows=60": {"count_rows": {"status": "paid"}, "export_report": {"megabytes": 0.01}},
    "/ticket.html?id=101": {"ticket_details": {}},
    "/notepad.html": {"replace_draft": {"text": "A new draft"}},
    "/staff.html": {"open_staff_area": {}},
    "/permissions.html": {"find_nearest_office": {}, "enable_alerts": {}},
    "/files/downloads.html": {"export_tickets": {}, "download_report": {}},
    "/files/upload.html": {"attach_resume": {}, "send_application": {}},
}
KITCHEN: dict[str, Plan] = {
    "/kitchen/": {"show_menu": {"menu": "dinner"}, "jump_to": {"section": "hours"}, "todays_menu": {}},
    "/kitchen/display.html": {
        "estimate_wait": {"dishes": ["chowder", "tart"]},
        "rail_ticket": {"ticket": "Table 4: 2 chowder"},
        "stock_level": {"dish": "mussels"},
        "print_prep_list": {"stations": 1},
    },
    "/kitchen/order.html": {
        "place_order": {"dish": "mussels", "quantity": 2, "pickup": "18:30"},
        "reorder_usual": {},
        "track_order": {"number": "HK-1001"},
    },
    "/kitchen/book.html": {
        "book_table": {"name": "Ada", "party": 2, "date": "2026-12-24", "time": "19:00", "card": "4242424242424242"}
    },
    "/kitchen/shop.html": {"add_to_cart": {"sku": "smoked-salt", "quantity": 2}, "view_cart": {}},
    "/kitchen/events.html": {"add_guest": {"name": "Grace Hopper", "diet": "vegan"}},
    "/kitchen/reviews.html": {"read_reviews": {}},
}
OTHERS: dict[str, Plan] = {
    "/cinema/book.html": {
        "book_screening": {"date": "2026-12-24", "time": "20:45", "format": "2D", "rules": True, "seats": 2}
    },
    "/patterns/bistro.html": {
        "book_table": {"party": 2, "time": "19:30"},
        "get_menu": {},
        "redeem_member_card": {},
        "explain_closure": {},
    },
    "/patterns/shop.html?bulk=0": {
        "cart.add": {"sku": "kayak", "quantity": 2},
        "cart.remove": {"sku": "kayak"},
        "cart.view": {},
        "search_products": {"q": "paddle"},
        "apply_coupon": {"code": "HARBOR10"},
        "checkout": {},
        "close": {},
        "search_kb": {"query": "refund"},
    },
    "/patterns/abort.html": {"export_report": {"seconds": 0.1}},
    # A card moved between columns: laid out by the page (T-1), by a snapshot where a pseudo-element
    # (T-2) or the markup's white space (T-3) is in it.
    "/patterns/board.html": {"move_task": {"id": "T-1", "column": "done"}, "list_tasks": {}},
    "/patterns/board.html?card=urgent": {"move_task": {"id": "T-2", "column": "doing"}, "list_tasks": {}},
    "/patterns/board.html?card=spaced": {"move_task": {"id": "T-3", "column": "done"}, "list_tasks": {}},
    "/hostile/secret_table.html": {
        "echo_fields": {},
        "fail_with_late_secret": {},
        "warn_with_late_secret": {},
        "alert_known_secret": {},
        "register_key": {"gemini_api_key": "AIzaSyExampleExampleExample", "passport": "P1234567"},
    },
    "/hostile/secrets.html": {"echo_form": {}},
    "/hostile/title.html?case=injection": {"read_title": {}},
    "/hostile/tools.html?case=long_name": {"n" * 64: {}},
    "/slow/search.html?alert_ms=-1": {"search_moorings": {"q": "north"}, "search_form": {"q": "south"}},
}
LEAVES = {"open_staff_area", "place_order", "reorder_usual", "track_order", "search_moorings", "search_form"}
"""Tools that take the tab to another page: the page is visited again before the next tool."""
NOT_CALLED = {
    "/patterns/shop.html?bulk=before": "300 copies (`bulk_0` … `bulk_299`) of one tool that answers its input and "
    "changes nothing; the shop's own tools are called on `?bulk=0`, the same page without them",
    "/hostile/tools.html (other cases)": "the other cases register tools whose schemas attack the listing (5,000 "
    "tools, 8 MB answers, `$ref` loops); the bridge leaves them unlisted or refuses them before a call (the hostile "
    "tests); `long_name` is called",
}
WINDOW_ACTIONS = {
    "accept", "call_page_tool", "cancel", "choose", "close", "close_tab", "dismiss", "fill", "focus",
    "hover", "list_page_tools", "navigate", "open_tab", "press", "read_content", "read_download",
    "screenshot", "sign_in", "stop_dialogs", "submit", "wait_for",
}  # fmt: skip
CLOSERS = ("accept", "dismiss", "cancel", "close")


def _counts(path: Path) -> dict[str, int]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _page_tools(names: list[str], win: str, plan: Plan) -> set[str]:
    """The tab's page tools by their page names (a page tool may share a window action's name:
    `sign_in`, `close`; one whose name the bridge would misread is listed as `page_NAME_HASH`)."""
    found = set()
    for name in names:
        if not name.startswith(f"{win}__"):
            continue
        tool = name[len(win) + 2 :]
        renamed = next((p for p in plan if _renamed(tool, p)), None)
        found.add(renamed or tool)
    return found - (WINDOW_ACTIONS - set(plan))


def _renamed(listed: str, tool: str) -> bool:
    """Whether `listed` is the page tool `tool` renamed: `page_` + its name made safe and cut short + `_` + a hash."""
    if not listed.startswith("page_") or "_" not in listed[5:]:
        return False
    stem = listed[5:].rsplit("_", 1)[0]
    return bool(stem) and tool.replace(".", "_").startswith(stem)


def _listed_as(names: list[str], win: str, tool: str) -> str:
    """The listed name of the page tool `tool` (renamed when it shares a window action's name, as `close`)."""
    prefix = f"{win}__"
    found = (n for n in names if n.startswith(prefix) and _renamed(n[len(prefix) :], tool))
    return next(found, f"{win}__{tool}")


async def _settle(stage: Stage, win: str) -> None:
    """Close what a call opened (a dialog, a chooser, a tab, a sign-in prompt)."""
    with anyio.fail_after(20):
        while True:
            doc = await stage.windows()
            names = set(await stage.tool_names())
            others = [w["id"] for w in doc["windows"] if w["id"] != win]
            closing = next((f"{w}__{c}" for w in others for c in CLOSERS if f"{w}__{c}" in names), None)
            if closing is None:
                return
            await stage.call(closing)


async def _visit(stage: Stage, win: str, path: str, plan: Plan, called: list[str]) -> None:
    """Go to `path`, check its tools are the planned ones, and call each of them."""

    async def arrive() -> None:
        result = await stage.call(f"{win}__navigate", {"url": stage.site + path})
        assert not result.is_error, result.structured_content
        try:
            await stage.wait_tools(lambda n: set(plan) <= _page_tools(n, win, plan), timeout=20)
        except TimeoutError:
            listed = sorted(_page_tools(await stage.tool_names(), win, plan))
            pytest.fail(f"{path}: tools {listed}, planned {sorted(plan)}")

    await arrive()
    listed = _page_tools(await stage.tool_names(), win, plan)
    assert listed <= set(plan), f"{path}: tools without a plan: {sorted(listed - set(plan))}"
    for tool, args in plan.items():
        if tool not in _page_tools(await stage.tool_names(), win, plan):
            await arrive()  # claim_welcome_bonus unregisters itself; a tool that left the page
        result = await stage.call(_listed_as(await stage.tool_names(), win, tool), args)
        assert result.structured_content is not None, (path, tool)
        code = result.structured_content.get("code")
        assert code not in ("invalid_arguments", "tool_not_found", "window_not_found"), (path, tool, result)
        called.append(f"{path} {tool}")
        await _settle(stage, win)
        if tool in LEAVES:
            await arrive()


async def _person_types(stage: Stage, win: str) -> None:
    """A person types into the sign-in form, a draft and a rebuilt fieldset; the view follows."""
    await stage.call(f"{win}__navigate", {"url": stage.site + "/"})
    page = await stage.user_page("/")
    for path, fields in [
        ("/login.html", [("#username", "ada.l"), ("#password", "Tide-Lantern-4417"), ("#card", "4242424242424242")]),
        ("/notepad.html", [("textarea", " and more")]),
        ("/kitchen/events.html", [("#host", "Ada"), ("#guest-0-name", " King")]),
        ("/", [("#subject", "Cannot print")]),
    ]:
        await user_navigates(page, stage.site + path)
        await stage.wait_windows(
            lambda d, p=path: any(stage.site + p.rstrip("/") in json.dumps(w) for w in d["windows"])
        )
        for selector, text in fields:
            await page.locator(selector).first.click(timeout=10_000)
            await page.keyboard.type(text, delay=20)
            await page.keyboard.press("Tab")  # a change: the guest rows are built again
        last = fields[-1][1]
        if "Lantern" not in last and "4242" not in last:
            await stage.wait_windows(lambda d, t=last: any(t in json.dumps(w) for w in d["windows"]))


@pytest.mark.parametrize("pages", [HELP_DESK, KITCHEN, OTHERS], ids=["help-desk", "kitchen", "others"])
async def test_every_incremental_read_gives_the_whole_reads_view(
    site: str, browser: BrowserProcess, pages: dict[str, Plan], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = tmp_path / "counts.json"
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL", "1")
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL_COUNTS", str(counts))
    errors = tmp_path / "bridge.log"
    called: list[str] = []
    with errors.open("w", encoding="utf-8") as errlog:
        async with open_stage(site, browser, "auto", errlog=errlog) as stage:
            win = (await stage.tab_for("/"))["id"]
            for path, plan in pages.items():
                await _visit(stage, win, path, plan, called)
            if pages is HELP_DESK:
                await _person_types(stage, win)
    log = errors.read_text(encoding="utf-8")
    seen = _counts(counts)
    print(f"incremental reads: {seen}")
    assert len(called) == sum(len(p) for p in pages.values())
    assert "an incremental read differs" not in log, log[log.find("an incremental read differs") :][:4000]
    assert seen.get("mismatches") == 0, seen
    assert seen.get("verified", 0) > 0 and seen.get("reads", 0) > 0, seen
