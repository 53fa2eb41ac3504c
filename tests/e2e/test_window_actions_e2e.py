"""Window actions on pages with no WebMCP tools (issue 20): each task done through fill, press and submit alone.

The sample site's Harbor Outfitters pages (sample_site/README.md) declare nothing; the
agent reads the window's blocks and acts by the labels it reads there. Every task is run
over stdio and over Streamable HTTP, and checked against the site's own state
(`GET /api/plain/state`), never against the bridge's word.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import open_http_client, open_stdio_client
from tests.support.stage import Stage, shown_texts

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PASSWORD = "Tide-Lantern-4417"
CARD = "4242 4242 4242 4242"


@asynccontextmanager
async def _bridge(site: str, browser: BrowserProcess, transport: str, path: str, *extra: str) -> AsyncIterator[Stage]:
    """The bridge attached to `browser` and showing `site + path`, with a client over `transport`."""
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, *extra]
    if transport == "stdio":
        async with open_stdio_client([*command, site + path], mode="auto") as mcp:
            yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]  # no Playwright user here
        return
    async with http_bridge(browser, *extra, site + path) as (url, token), open_http_client(url, token, "auto") as mcp:
        yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _state(site: str) -> dict[str, Any]:
    with urllib.request.urlopen(site + "/api/plain/state", timeout=5) as reply:
        state: dict[str, Any] = json.load(reply)
        return state


async def _tab(stage: Stage, path: str) -> dict[str, Any]:
    return await stage.tab_for(path)


async def _ok(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert not result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


async def _error(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


def _texts(window: dict[str, Any]) -> list[str]:
    return shown_texts(window["blocks"])


def _everything(*parts: Any) -> str:
    return json.dumps(parts, ensure_ascii=False)


async def test_sign_in_through_fill_and_press(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/plain/signin.html") as stage:
        tab = await _tab(stage, "/plain/signin.html")
        win = tab["id"]
        names = await stage.tool_names()
        assert {f"{win}__fill", f"{win}__press", f"{win}__submit"} <= set(names)
        filled = await _ok(
            stage,
            f"{win}__fill",
            {
                "fields": [
                    {"label": "Email", "value": "ines@example.com"},
                    {"label": "Password", "value": PASSWORD},
                    {"label": "Remember me", "value": True},
                ]
            },
        )
        # The password went in, and nothing the agent can read shows it.
        after = await stage.windows()
        assert PASSWORD not in _everything(filled, after)
        fields = {
            i["label"]: i
            for b in (await _tab(stage, "/plain/signin.html"))["blocks"]
            if b["type"] == "fields"
            for i in b["items"]
        }
        assert fields["Email"]["value"] == "ines@example.com" and fields["Remember me"]["value"] is True
        assert fields["Password"]["sensitive"] and fields["Password"]["value"] != ""
        # "Sign in" is both the header's link and the form's button: the agent is asked which.
        ambiguous = await _error(stage, f"{win}__press", {"label": "Sign in"})
        assert ambiguous["code"] == "validation_failed"
        candidates = ambiguous["fields"][0]["candidates"]
        assert len(candidates) == 2 and all(c["blockId"] for c in candidates)
        shown = await _tab(stage, "/plain/signin.html")
        # The header's links are a list block; the form's button a line of text.
        kinds = {b["id"]: b["type"] for b in shown["blocks"] if "id" in b}
        button_block = next(c["blockId"] for c in candidates if kinds[c["blockId"]] == "text")
        pressed = await _ok(stage, f"{win}__press", {"label": "Sign in", "blockId": button_block})
        assert "/plain/account.html" in pressed["message"]
        assert PASSWORD not in _everything(pressed)
        account = await _tab(stage, "/plain/account.html")
        assert "Signed in as ines@example.com" in _everything(account["blocks"]), account
        assert _state(site)["signed_in"] == {"email": "ines@example.com", "remember": True}


async def test_search_then_open_a_result(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/plain/search.html") as stage:
        win = (await _tab(stage, "/plain/search.html"))["id"]
        await _ok(stage, f"{win}__fill", {"fields": [{"label": "Search guides", "value": "tide"}]})
        submitted = await _ok(stage, f"{win}__submit", {})
        assert "q=tide" in submitted["message"]
        results = await _tab(stage, "/plain/search.html?q=tide")
        assert "Reading a tide table" in _everything(results["blocks"])
        await _ok(stage, f"{win}__press", {"label": "Reading a tide table"})
        guide = await _tab(stage, "/plain/guides/tide-tables.html")
        assert "Reading a tide table" in _texts(guide)
        state = _state(site)
        assert state["searches"] == ["tide"] and state["views"][-1] == "/plain/guides/tide-tables.html"


async def test_checkout_over_three_pages_with_a_confirm_before_paying(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/plain/cart.html") as stage:
        win = (await _tab(stage, "/plain/cart.html"))["id"]
        await _ok(stage, f"{win}__press", {"label": "Proceed to checkout"})
        shipping = await _tab(stage, "/plain/shipping.html")
        items = [i for b in shipping["blocks"] if b["type"] == "fields" for i in b["items"]]
        kinds = {i["label"]: i.get("kind") for i in items if isinstance(i["value"], bool)}
        # A person sees round radio buttons and a square check box: the window says which is which.
        assert kinds["Gift wrap (€4.00)"] is None and any(k.startswith("Express") for k in kinds), kinds
        assert all(v == "radio" for k, v in kinds.items() if k.startswith(("Standard", "Express"))), kinds
        await _ok(
            stage,
            f"{win}__fill",
            {
                "fields": [
                    {"label": "Full name", "value": "Ines Berg"},
                    {"label": "Country", "value": "Norway"},
                    {"label": "Delivery speed", "value": "Express"},
                    {"label": "Delivery date", "value": "2027-03-15"},
                    {"label": "Gift wrap (€4.00)", "value": True},
                ]
            },
        )
        await _ok(stage, f"{win}__press", {"label": "Continue"})
        await _tab(stage, "/plain/payment.html")
        filled = await _ok(
            stage,
            f"{win}__fill",
            {"fields": [{"label": "Card number", "value": CARD}, {"label": "Name on card", "value": "Ines Berg"}]},
        )
        pressed = await _ok(stage, f"{win}__press", {"label": "Pay now"})
        dialog = pressed["openedWindowIds"][0]
        assert _state(site)["orders"] == [], "nothing is paid before the confirm is answered"
        doc = await stage.windows()
        assert any(w["id"] == dialog and w["modal"] for w in doc["windows"])
        accepted = await _ok(stage, f"{dialog}__accept", {})
        confirmation = await _tab(stage, "/plain/confirmation.html")
        assert "We charged €77.00 to the card ending in 4242" in _everything(confirmation["blocks"])
        order = _state(site)["orders"][0]
        assert order["total"] == 77.0 and order["card_last4"] == "4242"
        assert order["shipping"]["country"] == "Norway" and order["shipping"]["speed"] == "express"
        assert order["shipping"]["gift_wrap"] is True
        assert CARD not in _everything(filled, pressed, accepted, await stage.windows())


async def test_follow_links_through_articles(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, "/plain/articles/lighthouses.html") as stage:
        win = (await _tab(stage, "/plain/articles/lighthouses.html"))["id"]
        names = await stage.tool_names()
        # The window actions are listed whatever the page shows (no list change per page); with no
        # field, fill says what the window shows instead.
        assert {f"{win}__press", f"{win}__fill", f"{win}__submit"} <= set(names)
        no_field = await _error(stage, f"{win}__fill", {"fields": [{"label": "Email", "value": "a@example.com"}]})
        assert no_field["code"] == "validation_failed" and "no field" in no_field["message"], no_field
        await _ok(stage, f"{win}__press", {"label": "Fresnel lens"})
        await _tab(stage, "/plain/articles/fresnel-lens.html")
        await _ok(stage, f"{win}__press", {"label": "Augustin Fresnel"})
        article = await _tab(stage, "/plain/articles/augustin-fresnel.html")
        assert "Augustin Fresnel" in _texts(article)
        views = _state(site)["views"]
        assert views[-3:] == [
            "/plain/articles/lighthouses.html",
            "/plain/articles/fresnel-lens.html",
            "/plain/articles/augustin-fresnel.html",
        ]


async def test_icon_buttons_are_pressed_by_their_accessible_names(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    async with _bridge(site, browser, transport, "/plain/lantern.html") as stage:
        win = (await _tab(stage, "/plain/lantern.html"))["id"]
        shown = _everything((await _tab(stage, "/plain/lantern.html"))["blocks"])
        for name in ("Decrease quantity", "Increase quantity", "Add to cart", "Like", "Share"):
            assert name in shown, f"the icon button {name!r} shows its accessible name"
        await _ok(stage, f"{win}__press", {"label": "Increase quantity"})
        await _ok(stage, f"{win}__press", {"label": "Increase quantity"})
        await _ok(stage, f"{win}__press", {"label": "Add to cart"})
        await _ok(stage, f"{win}__press", {"label": "Like"})
        # Read after write: the page's own counts, as the window shows them once the presses returned.
        await stage.wait_windows(lambda d: "13 likes" in _everything(d) and "Cart: 6 items" in _everything(d))
        state = _state(site)
        assert state["cart"]["storm-lantern"] == 3 and state["liked"] == ["storm-lantern"]
        assert state["likes"]["storm-lantern"] == 13


async def test_refused_labels_and_values_say_why_and_change_nothing(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/shipping.html") as stage:
        tab = await _tab(stage, "/plain/shipping.html")
        win, version = tab["id"], tab["version"]
        unknown = await _error(stage, f"{win}__fill", {"fields": [{"label": "Nickname", "value": "x"}]})
        assert unknown["code"] == "validation_failed" and "Nickname" in unknown["message"]
        assert "Full name" in unknown["fields"][0]["shown"] and "Country" in unknown["fields"][0]["shown"]
        for args, why in (
            ({"label": "Country", "value": "Antarctica (we do not ship there)"}, "disabled"),
            ({"label": "Country", "value": "Atlantis"}, "no option"),
            ({"label": "Pickup point", "value": "Oslo"}, "disabled"),
            ({"label": "Same day (sold out)", "value": True}, "disabled"),
            ({"label": "Delivery date", "value": "15/03/2027"}, "ISO"),
            ({"label": "Gift wrap (€4.00)", "value": "maybe"}, "true or false"),
        ):
            # A good field first: every value is checked before any is set, so it stays empty too.
            refused = await _error(stage, f"{win}__fill", {"fields": [{"label": "Full name", "value": "Ines"}, args]})
            assert refused["code"] == "validation_failed" and why in refused["message"], refused
        missing_result = await stage.call(f"{win}__press", {"label": "Pay now"})
        missing = missing_result.structured_content
        assert missing_result.is_error and missing is not None
        assert missing["code"] == "validation_failed" and "Continue" in missing["fields"][0]["shown"]
        # Said once: the labels shown are `shown`, not a list in the message and the field's error
        # too; the text a host gives its model carries the message and the rest, each once.
        (text,) = [c.text for c in missing_result.content if c.type == "text"]
        assert "Continue" not in missing["message"] and text.count("Continue") == 1, text
        assert text.count(missing["message"]) == 1, text
        stale = await _error(stage, f"{win}__press", {"label": "Continue", "expectedVersion": version - 1})
        assert stale["code"] == "stale_state"
        now = await _tab(stage, "/plain/shipping.html")
        names = {i["label"]: i["value"] for b in now["blocks"] if b["type"] == "fields" for i in b["items"]}
        assert names["Full name"] == "" and now["version"] == version
        assert _state(site)["shipping"] is None or _state(site)["shipping"] == {}


async def test_a_checked_fill_passes_on_the_current_version(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/signin.html") as stage:
        tab = await _tab(stage, "/plain/signin.html")
        filled = await _ok(
            stage,
            f"{tab['id']}__fill",
            {"fields": [{"label": "Email", "value": "a@example.com"}], "expectedVersion": tab["version"]},
        )
        assert "Email" in filled["message"]
        after = await _tab(stage, "/plain/signin.html")
        assert after["version"] > tab["version"]


async def test_no_page_actions_offers_none(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/signin.html", "--no-page-actions") as stage:
        win = (await _tab(stage, "/plain/signin.html"))["id"]
        names = await stage.tool_names()
        assert f"{win}__navigate" in names
        assert not any(n.endswith(("__fill", "__press")) for n in names)
        refused = await _error(stage, f"{win}__fill", {"fields": [{"label": "Email", "value": "a@example.com"}]})
        assert refused["code"] == "action_not_available"


async def test_the_window_actions_stay_listed_as_pages_come_and_go(site: str, browser: BrowserProcess) -> None:
    async with _bridge(site, browser, "stdio", "/plain/signin.html") as stage:
        opened = await _ok(stage, "app__open_tab", {})
        blank = opened["openedWindowIds"][0]
        names = await stage.tool_names()
        assert f"{blank}__navigate" in names and f"{blank}__press" in names
        nothing = await _error(stage, f"{blank}__press", {"label": "Sign in"})
        assert nothing["code"] == "validation_failed" and "Sign in" in nothing["message"], nothing
        await _ok(stage, f"{blank}__navigate", {"url": site + "/plain/signin.html"})
        await _ok(stage, f"{blank}__fill", {"fields": [{"label": "Email", "value": "a@example.com"}]})
        assert set(await stage.tool_names()) == set(names), "a page coming changes no action of the tab"
