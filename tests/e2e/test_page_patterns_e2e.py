"""End to end: patterns of real WebMCP apps (issue 18 items 2, 7, 10), through a real MCP client.

`/patterns/bistro.html` answers in MCP's own shape (the `use-webmcp-tool` hook's),
`/patterns/shop.html` registers 300 tools besides its own, `/patterns/abort.html` logs why
its tool's signal aborted; `/` has a declarative form that waits for a person.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage, tool_started
from webmcp.view.masking import MASK

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _activity(stage: Stage, path: str, pattern: str) -> str:
    """Wait until the page's activity log has a line matching `pattern`; that line."""
    page = await stage.user_page(path)
    handle = await page.wait_for_function(
        "re => [...document.querySelectorAll('#activity li')].map(li => li.textContent)"
        ".find(t => new RegExp(re).test(t)) || false",
        arg=pattern,
        timeout=10_000,
    )
    return str(await handle.json_value())


# --- item 2: MCP-shaped answers -----------------------------------------------------------------


async def test_a_page_error_in_mcp_shape_is_an_error_and_a_success_passes_its_content(
    site: str, browser: BrowserProcess
) -> None:
    path = "/patterns/bistro.html"
    async with open_stage(site, browser, "auto", start_path=path) as stage:
        win = (await stage.tab_for(path))["id"]
        await stage.wait_tools(lambda n: f"{win}__explain_closure" in n)

        refused = await stage.call(f"{win}__book_table", {"party": 12, "time": "19:00"})
        body = refused.structured_content
        assert refused.is_error and body["code"] == "page_error", body
        assert body["pageMessage"] == "Error: No table for 12 at 19:00: we seat at most 8."
        assert "completed" not in body["message"] and "No table for 12" in _text(refused)

        booked = await stage.call(f"{win}__book_table", {"party": 2, "time": "19:30"})
        assert not booked.is_error, booked.structured_content
        assert booked.structured_content["result"] == {"text": "Booked a table for 2 at 19:30."}
        assert "Table for 2 at 19:30" in json.dumps(await stage.windows()), "read after write"

        menu = await stage.call(f"{win}__get_menu")
        assert menu.structured_content["result"] == {"dishes": ["Bouillabaisse", "Moules marinières", "Tarte Tatin"]}

        card = "4929-1234-5678"
        await (await stage.user_page(path)).fill("#member-card", card)
        masked = await stage.call(f"{win}__redeem_member_card")
        assert masked.is_error and masked.structured_content["code"] == "page_error"
        seen = json.dumps(masked.structured_content) + _text(masked)
        assert card not in seen and MASK in masked.structured_content["pageMessage"]

        long = await stage.call(f"{win}__explain_closure")
        page_message = long.structured_content["pageMessage"]
        assert long.is_error and len(page_message.encode()) <= 2048 and "cut by the bridge" in page_message


# --- item 7: more tools than a window lists -----------------------------------------------------


async def test_300_tools_registered_first_leave_the_shops_own_reachable_and_counted(
    site: str, browser: BrowserProcess
) -> None:
    path = "/patterns/shop.html"
    async with open_stage(site, browser, "auto", start_path=path) as stage:
        win = (await stage.tab_for(path))["id"]
        names = await stage.wait_tools(lambda n: f"{win}__call_page_tool" in n)
        assert f"{win}__bulk_0" in names and f"{win}__bulk_127" in names and f"{win}__bulk_128" not in names
        assert not any(n.startswith((f"{win}__page_cart_add", f"{win}__checkout")) for n in names)
        assert f"{win}__list_page_tools" in names
        doc = await stage.wait_windows(lambda d: "308 tools" in json.dumps(_window(d, win)))
        [notice] = [b for b in _window(doc, win)["blocks"] if b.get("id") == "tools-capped"]
        assert "308 tools; 180 of them are not listed" in notice["text"]
        assert f"{win}__call_page_tool" in notice["text"]

        listing = await stage.call(f"{win}__list_page_tools", {"offset": 295, "limit": 50})
        assert not listing.is_error, listing.structured_content
        result = listing.structured_content["result"]
        assert result["total"] == 308 and "nextOffset" not in result
        order = [t["name"] for t in result["tools"]]
        # The page's order: its script's 300 first, then its own seven, the iframe's last.
        assert order == [f"bulk_{i}" for i in range(295, 300)] + [
            "cart.add", "cart.remove", "cart.view", "search_products", "apply_coupon", "checkout", "close",
            "search_kb",
        ]  # fmt: skip
        cart_add = result["tools"][5]
        assert "listedAs" not in cart_add and cart_add["inputSchema"]["required"] == ["sku"]

        bad = await stage.call(f"{win}__call_page_tool", {"name": "cart.add", "arguments": {"sku": None}})
        assert bad.is_error and bad.structured_content["fields"] == [
            {"field": "sku", "error": "null is not of type string"}
        ]
        version = _window(await stage.windows(), win)["version"]
        stale = await stage.call(
            f"{win}__call_page_tool", {"name": "cart.add", "arguments": {"sku": "ball"}, "expectedVersion": version - 1}
        )
        assert stale.is_error and stale.structured_content["code"] == "stale_state"
        added = await stage.call(
            f"{win}__call_page_tool",
            {"name": "cart.add", "arguments": {"sku": "ball", "quantity": 2}, "expectedVersion": version},
        )
        assert not added.is_error, added.structured_content
        assert added.structured_content["result"] == {"cart": ["ball", "ball"]}
        assert "Cart: ball, ball" in json.dumps(_window(await stage.windows(), win)), "read after write"
        closed = await stage.call(f"{win}__call_page_tool", {"name": "close"})
        assert closed.structured_content["result"] == {"closed": True}, "the page's close, not the tab's"
        assert any(w["id"] == win for w in (await stage.windows())["windows"])

        moved = await stage.call(f"{win}__navigate", {"url": site + path + "?bulk=after"})
        assert not moved.is_error, moved.structured_content
        names = await stage.wait_tools(lambda n: f"{win}__checkout" in n)
        assert f"{win}__search_products" in names and any(n.startswith(f"{win}__page_cart_add_") for n in names)
        # The shop's 7 come first; 121 of the 300 registered after them fit in the 128.
        assert f"{win}__bulk_120" in names and f"{win}__bulk_121" not in names


# --- item 10: words -----------------------------------------------------------------------------


async def test_an_agents_cancel_is_not_said_to_be_the_pages_and_the_page_sees_no_reason(
    site: str, browser: BrowserProcess
) -> None:
    path = "/patterns/abort.html"
    async with open_stage(site, browser, "auto", "--tool-timeout", "2", start_path=path) as stage:
        win = (await stage.tab_for(path))["id"]
        await stage.wait_tools(lambda n: f"{win}__export_report" in n)
        late = await stage.call(f"{win}__export_report", {"seconds": 30})
        body = late.structured_content
        assert late.is_error and body["code"] == "action_timeout" and body["pageTold"] is True, body
        assert "page cancelled" not in _text(late)
        # WebMCP.cancelInvocation carries no reason (docs/protocols.md): the page gets the default AbortError.
        line = await _activity(stage, path, "export_report aborted")
        assert line.endswith("export_report aborted: AbortError: signal is aborted without reason"), line

        page = await stage.user_page(path)
        await page.evaluate("document.getElementById('activity').replaceChildren()")
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await stage.call(f"{win}__export_report", {"seconds": 30})

            tg.start_soon(call)
            await tool_started(page, "export_report")
            tg.cancel_scope.cancel()  # the client abandons the request: notifications/cancelled
        assert "without reason" in await _activity(stage, path, "export_report aborted")


async def test_the_waiting_form_is_titled_by_its_tool_and_a_cancel_says_who_cancelled(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__contact_customer" in n)
    filled = await stage.call(f"{win}__contact_customer", {"email": "ada@example.com", "message": "Hello"})
    assert not filled.is_error, filled.structured_content
    (form_id,) = filled.structured_content["openedWindowIds"]
    assert _window(await stage.windows(), form_id)["title"] == "Submit \u2018contact_customer\u2019?"

    cancelled = await stage.call(f"{form_id}__cancel")
    assert not cancelled.is_error, cancelled.structured_content
    error = cancelled.structured_content["result"]["originalCall"]["error"]
    assert error["code"] == "call_interrupted" and error["cancelled"] is True, error
    assert f"the agent cancelled it with {form_id}__cancel" in error["message"]
    assert "page cancelled" not in _text(cancelled)


async def test_validation_errors_speak_json_and_a_select_is_reported_once(stage: Stage) -> None:
    win = (await stage.tab_for("/"))["id"]
    await stage.wait_tools(lambda n: f"{win}__create_ticket" in n)
    null = await stage.call(f"{win}__get_ticket", {"id": None})
    assert null.structured_content["fields"] == [{"field": "id", "error": "null is not of type integer"}]
    urgent = await stage.call(f"{win}__create_ticket", {"subject": "Printer", "priority": "urgent"})
    assert urgent.structured_content["fields"] == [
        {"field": "priority", "error": '"urgent" is not one of ["low", "normal", "high"]'}
    ]
