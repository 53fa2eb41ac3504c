"""The page's own data requests that a navigation waits for (webmcp/desktop/page_requests.py)."""

from __future__ import annotations

import anyio
import pytest

from webmcp.desktop.page_requests import DataRequests, same_site

pytestmark = pytest.mark.anyio

_PAGE = "https://shop.example.com/items/4"


def _sent(request_id: str, url: str, kind: str = "Fetch") -> dict[str, object]:
    return {"requestId": request_id, "type": kind, "request": {"url": url}}


@pytest.mark.parametrize(
    ("url", "same"),
    [
        ("https://shop.example.com/api/items", True),
        ("https://api.example.com/v1/items", True),
        ("http://127.0.0.1:8080/api", False),
        ("https://tracker.example.net/collect", False),
        ("data:application/json,{}", False),
        ("not a url", False),
    ],
)
def test_a_request_counts_only_when_it_goes_to_the_pages_own_site(url: str, same: bool) -> None:
    assert same_site(url, _PAGE) is same


def test_on_one_machine_each_port_is_a_site_of_its_own() -> None:
    assert same_site("http://127.0.0.1:8/api", "http://127.0.0.1:8/") is True
    assert same_site("http://127.0.0.1:9/img/pv.gif", "http://127.0.0.1:8/") is False, "a CDN or vendor on its port"
    assert same_site("http://localhost:9/x", "http://127.0.0.1:9/") is False
    assert same_site("http://localhost:9/x", "http://localhost:9/") is True
    assert same_site("http://[::1]:9/x", "http://[::1]:9/") is True


async def test_only_the_documents_own_fetches_and_xhrs_are_waited_for() -> None:
    requests = DataRequests()
    requests.document(_PAGE)
    requests.sent(_sent("1", "https://shop.example.com/api/items"))
    requests.sent(_sent("2", "https://api.example.com/cart", kind="XHR"))
    requests.sent(_sent("3", "https://shop.example.com/logo.png", kind="Image"))
    requests.sent(_sent("4", "https://ads.example.org/slot"))
    assert requests.open == 2

    async def answer() -> None:
        await anyio.sleep(0.05)
        requests.ended({"requestId": "1"})
        requests.ended({"requestId": "4"})  # not counted: changes nothing
        assert requests.open == 1
        await anyio.sleep(0.05)
        requests.ended({"requestId": "2"})

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer)
        with anyio.fail_after(5):
            answered = await requests.answered()
    assert answered is not None and requests.open == 0
    assert await requests.answered() is None, "nothing open: nothing to wait for"


async def test_a_new_document_forgets_the_requests_of_the_last_one() -> None:
    requests = DataRequests()
    requests.document(_PAGE)
    requests.sent(_sent("1", "https://shop.example.com/api/items"))
    requests.document("https://shop.example.com/items/5")
    assert requests.open == 0
    with anyio.fail_after(1):
        assert await requests.answered() is None
