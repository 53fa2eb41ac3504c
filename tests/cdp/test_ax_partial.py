"""The partial AX read against a real Chromium: the big page's long runs are read only as far as asked.

`read_frame_tree` with `keep` must give, for a small document, exactly `getFullAXTree`;
for a big one, the same nodes for everything except the rows and list items past `keep`,
which stay as bare nodes marked `UNREAD`. `read_run_range` reads any stretch of those later.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from cdp_bridge.ax import UNREAD, read_frame_tree, read_run_range
from cdp_bridge.connection import CDPSession
from cdp_bridge.launcher import BrowserProcess

pytestmark = pytest.mark.anyio


@pytest.fixture
async def page(browser: BrowserProcess, site: str) -> AsyncIterator[tuple[CDPSession, str]]:
    async with browser.connect() as connection:
        target = await connection._send("Target.createTarget", {"url": "about:blank"}, None, 10)
        attached = await connection._send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, None, 10
        )
        session = connection.session(attached["sessionId"], target["targetId"])
        await session.send("Page.enable")
        await session.send("Runtime.enable")
        yield session, site


async def _load(session: CDPSession, url: str, ready: str) -> str:
    await session.send("Page.navigate", {"url": url})
    with anyio.fail_after(15):
        while True:
            reply = await session.send("Runtime.evaluate", {"expression": ready, "returnByValue": True})
            if reply.get("result", {}).get("value") is True:
                break
            await anyio.sleep(0.05)
    tree = await session.send("Page.getFrameTree")
    return str(tree["frameTree"]["frame"]["id"])


def _role(node: dict[str, Any]) -> str:
    return str(node.get("role", {}).get("value", ""))


async def test_a_small_document_is_read_whole(page: tuple[CDPSession, str]) -> None:
    session, site = page
    frame = await _load(session, f"{site}/cinema/book.html", "document.readyState === 'complete'")
    full = (await session.send("Accessibility.getFullAXTree", {"frameId": frame}))["nodes"]
    got = await read_frame_tree(session.send, frame, keep=20)
    assert [n["nodeId"] for n in got] == [n["nodeId"] for n in full]
    assert not any(n.get(UNREAD) for n in got)


async def test_a_big_document_is_read_except_the_long_runs_past_keep(page: tuple[CDPSession, str]) -> None:
    session, site = page
    ready = "document.querySelectorAll('#orders tbody tr').length === 3000"
    frame = await _load(session, f"{site}/big.html?rows=3000", ready)
    full = (await session.send("Accessibility.getFullAXTree", {"frameId": frame}, timeout=60))["nodes"]
    got = await read_frame_tree(session.send, frame, keep=20)
    by_id = {n["nodeId"]: n for n in got}
    rows = [n for n in got if _role(n) == "row"]
    items = [n for n in got if _role(n) == "listitem"]
    assert len(rows) == 3001 and len(items) == 500  # every row and item is there, to be counted
    assert sum(1 for n in rows if not n.get(UNREAD)) == 21  # the header row and the first 20 of the body
    assert sum(1 for n in items if not n.get(UNREAD)) == 20
    for node in got:  # nothing was read below an unread row or item
        parent = by_id.get(node.get("parentId", ""))
        assert parent is None or not parent.get(UNREAD)
    # Everything else is as the whole tree has it (bar the text boxes, which the view never reads).
    whole = {n["nodeId"]: n for n in full}
    unread = {n["nodeId"] for n in got if n.get(UNREAD)}

    def below_unread(node: dict[str, Any]) -> bool:
        parent = whole.get(node.get("parentId", ""))
        while parent is not None:
            if parent["nodeId"] in unread:
                return True
            parent = whole.get(parent.get("parentId", ""))
        return False

    expected = [n for n in full if _role(n) != "InlineTextBox" and not below_unread(n)]
    assert sorted(by_id) == sorted(n["nodeId"] for n in expected)
    assert all(by_id[n["nodeId"]].get("name") == n.get("name") for n in expected)
    assert len(got) < len(full) // 5
    kept_text = {n["name"]["value"] for n in got if _role(n) == "StaticText"}
    assert {"Billing report", "10001", "10020", "Customer 20: Maria Lopez"} <= kept_text
    assert "10021" not in kept_text and "13000" not in kept_text


async def test_a_stretch_of_a_long_run_is_read_later(page: tuple[CDPSession, str]) -> None:
    session, site = page
    ready = "document.querySelectorAll('#orders tbody tr').length === 3000"
    frame = await _load(session, f"{site}/big.html?rows=3000", ready)
    doc = await session.send("DOM.getDocument", {"depth": 0})
    table = await session.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "#orders"})
    backend = (await session.send("DOM.describeNode", {"nodeId": table["nodeId"]}))["node"]["backendNodeId"]
    part = await read_run_range(session.send, frame, backend, 2500, 10, keep=20)
    assert _role(part.nodes[0]) == "table" and "parentId" not in part.nodes[0]
    texts = {n["name"]["value"] for n in part.nodes if _role(n) == "StaticText"}
    # The header row (run index 0) and rows 2,500 … 2,510 of the run, whose first row is the header.
    assert {"ID", "Customer", *(str(10000 + i) for i in range(2500, 2511))} <= texts
    assert "12499" not in texts and "12512" not in texts and "10001" not in texts
    assert sum(1 for n in part.nodes if _role(n) == "row" and not n.get(UNREAD)) == 12
