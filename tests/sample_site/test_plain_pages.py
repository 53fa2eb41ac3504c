"""The Harbor Outfitters pages (no WebMCP tools) answer their forms as a real site does.

Plain HTTP against a fresh site per test (the `site` fixture): the forms post and answer
with the right page, and the section state (`/api/plain/state`) shows the effect.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from sample_site.plain import CARD_NUMBER, PASSWORD

pytestmark = pytest.mark.timeout(30)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _send(url: str, form: dict[str, str] | None = None) -> tuple[int, str, str]:
    """GET (or POST form-encoded) without following redirects: (status, Location, body)."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with _OPENER.open(urllib.request.Request(url, data=data), timeout=10) as response:
            return response.status, "", response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", ""), exc.read().decode()


def _post_json(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _state(site: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{site}/api/plain/state", timeout=10) as response:
        return dict(json.loads(response.read()))


def _alert(body: str) -> str:
    found = re.search(r'<div role="alert" id="error">(.*?)</div>', body)
    assert found is not None, body
    return found.group(1)


def test_plain_pages_register_no_webmcp_tools(site: str) -> None:
    pages = ["/plain/", "/plain/signin.html", "/plain/search.html?q=tide", "/plain/cart.html"]
    pages += ["/plain/articles/lighthouses.html", "/plain/lantern.html", "/plain/guides/knots.html"]
    for page in pages:
        status, _, body = _send(site + page)
        assert status == 200, page
        assert "toolname" not in body and "modelContext" not in body and "{{" not in body, page


def test_sign_in_with_the_right_password_lands_on_the_account_page(site: str) -> None:
    form = {"email": "ines@example.com", "password": PASSWORD, "remember": "on"}
    status, location, _ = _send(f"{site}/plain/signin", form)
    assert (status, location) == (303, "/plain/account.html")
    status, _, body = _send(f"{site}/plain/account.html")
    assert status == 200 and "Signed in as ines@example.com" in body
    assert "This device will remember you." in body
    state = _state(site)
    assert state["signed_in"] == {"email": "ines@example.com", "remember": True}
    assert PASSWORD not in json.dumps(state)


def test_sign_in_with_a_wrong_password_shows_the_form_again_with_an_error(site: str) -> None:
    status, location, body = _send(f"{site}/plain/signin", {"email": "ines@example.com", "password": "nope"})
    assert (status, location) == (200, "")
    assert _alert(body) == "Wrong email or password. Try again."
    assert 'value="ines@example.com"' in body and "nope" not in body
    assert _state(site)["signed_in"] is None
    assert _send(f"{site}/plain/account.html")[:2] == (303, "/plain/signin.html")


def test_search_lists_matching_guides_as_links_that_open(site: str) -> None:
    _, _, body = _send(f"{site}/plain/search.html?q=tide")
    links = re.findall(r'<a href="(/plain/guides/[^"]+)">([^<]+)</a>', body)
    assert links == [
        ("/plain/guides/tide-tables.html", "Reading a tide table"),
        ("/plain/guides/tide-fishing.html", "Fishing the turn of the tide"),
    ]
    assert "2 results for “tide”" in body
    status, _, guide = _send(site + links[0][0])
    assert status == 200 and "<h1>Reading a tide table</h1>" in guide
    assert _state(site)["searches"] == ["tide"]
    assert _send(f"{site}/plain/search.html?q=anchor%20chain")[2].count("/plain/guides/") == 0


def test_checkout_over_three_pages_places_an_order_and_keeps_only_the_last_four_digits(site: str) -> None:
    _, _, cart = _send(f"{site}/plain/cart.html")
    assert "Brass deck lantern" in cart and "€61.00" in cart and "Proceed to checkout" in cart
    shipping = {"name": "Ines Berg", "country": "no", "speed": "express", "date": "2027-03-15", "gift_wrap": "on"}
    assert _send(f"{site}/plain/shipping.html", shipping)[:2] == (303, "/plain/payment.html")
    _, _, payment = _send(f"{site}/plain/payment.html")
    assert "To Ines Berg, Norway, Express (1–2 days), on 2027-03-15, gift wrapped." in payment
    assert "€77.00" in payment and "confirm(" in payment
    status, location, _ = _send(f"{site}/plain/pay", {"card": CARD_NUMBER, "holder": "Ines Berg"})
    assert (status, location) == (303, "/plain/confirmation.html?order=HO-5001")
    _, _, done = _send(site + location)
    assert "Order number HO-5001" in done and "card ending in 4242" in done
    state = _state(site)
    assert state["orders"][0]["total"] == 77.0 and state["orders"][0]["card_last4"] == "4242"
    assert state["cart"] == {}
    assert CARD_NUMBER.replace(" ", "") not in json.dumps(state) and CARD_NUMBER not in json.dumps(state)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"country": "aq"}, "Choose a country we deliver to."),
        ({"speed": "same-day"}, "Choose a delivery speed."),
        ({"date": "next tuesday"}, "Enter a delivery date."),
        ({"name": " "}, "Enter the name to deliver to."),
    ],
)
def test_shipping_refuses_what_the_form_does_not_offer(site: str, change: dict[str, str], error: str) -> None:
    form = {"name": "Ines Berg", "country": "pt", "speed": "standard", "date": "2027-03-15"} | change
    status, location, body = _send(f"{site}/plain/shipping.html", form)
    assert (status, location) == (200, "")
    assert _alert(body) == error
    assert _state(site)["shipping"] is None


def test_payment_waits_for_shipping_and_refuses_a_bad_card(site: str) -> None:
    assert _send(f"{site}/plain/payment.html")[:2] == (303, "/plain/shipping.html")
    shipping = {"name": "Ines Berg", "country": "jp", "speed": "standard", "date": "2027-03-15"}
    _send(f"{site}/plain/shipping.html", shipping)
    status, _, body = _send(f"{site}/plain/pay", {"card": "4242 4242 4242 4241", "holder": "Ines Berg"})
    assert status == 200 and _alert(body) == "That card number is not valid."
    assert "4242 4242 4242 4241" not in body
    state = _state(site)
    assert state["orders"] == [] and state["payment_errors"] == 1


def test_articles_link_to_each_other(site: str) -> None:
    _, _, first = _send(f"{site}/plain/articles/lighthouses.html")
    assert '<a href="/plain/articles/fresnel-lens.html">Fresnel lens</a>' in first
    _, _, second = _send(f"{site}/plain/articles/fresnel-lens.html")
    assert '<a href="/plain/articles/augustin-fresnel.html">Augustin Fresnel</a>' in second
    status, _, third = _send(f"{site}/plain/articles/augustin-fresnel.html")
    assert status == 200 and "<h1>Augustin Fresnel</h1>" in third
    assert _state(site)["views"][-3:] == [
        "/plain/articles/lighthouses.html",
        "/plain/articles/fresnel-lens.html",
        "/plain/articles/augustin-fresnel.html",
    ]
    assert _send(f"{site}/plain/articles/atlantis.html")[0] == 404


def test_icon_page_buttons_change_the_cart_and_the_likes(site: str) -> None:
    _, _, page = _send(f"{site}/plain/lantern.html")
    for label in ("Add to cart", "Remove", "Like", "Increase quantity", "Decrease quantity", "Share"):
        assert f'aria-label="{label}"' in page
    assert '<strong id="cart-count">3</strong>' in page and '<strong id="likes">12</strong>' in page
    assert _post_json(f"{site}/api/plain/cart", {"sku": "storm-lantern", "delta": 3}) == (
        200,
        {"cart": {"deck-lantern": 1, "oslofjord-chart": 2, "storm-lantern": 3}, "count": 6},
    )
    assert _post_json(f"{site}/api/plain/like", {"sku": "storm-lantern", "liked": True}) == (
        200,
        {"liked": True, "likes": 13},
    )
    assert _post_json(f"{site}/api/plain/like", {"sku": "storm-lantern", "liked": True})[1]["likes"] == 13
    _, _, again = _send(f"{site}/plain/lantern.html")
    assert '<strong id="in-cart">3</strong>' in again and 'aria-pressed="true"' in again
    assert _post_json(f"{site}/api/plain/cart", {"sku": "storm-lantern", "delta": -20})[1]["count"] == 3
    assert _post_json(f"{site}/api/plain/cart", {"sku": "anchor"})[0] == 400


def test_reset_restores_the_plain_seed_state(site: str) -> None:
    _send(f"{site}/plain/signin", {"email": "ines@example.com", "password": PASSWORD})
    _post_json(f"{site}/api/plain/cart", {"sku": "storm-lantern", "delta": 2})
    urllib.request.urlopen(urllib.request.Request(f"{site}/api/reset", data=b""), timeout=10).close()
    state = _state(site)
    assert state["signed_in"] is None and "storm-lantern" not in state["cart"] and state["views"] == []


def test_a_template_is_never_served_raw(site: str) -> None:
    for template in ("_header.html", "guide.html", "articles/", "lantern.js"):
        status, _, body = _send(f"{site}/plain/{template}")
        assert status == 404 and "{{" not in body, template
