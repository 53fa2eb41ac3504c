"""A tab lists its page's tools in the page's order, the main frame's first, and reaches the rest."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import PageTarget
from webmcp.desktop.mirror import ToolMirror
from webmcp.desktop.notices import BridgeNotices
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.registry import Desktop
from webmcp.desktop.tab import TAB_OPERATIONS, Tab
from webmcp.untrusted.page_limits import MAX_TOOLS_PER_WINDOW

pytestmark = pytest.mark.anyio

_CONNECTION = cast(Connection, object())


def _registered(session: CDPSession, frame_id: str, *names: str) -> None:
    # Chromium announces each live registration in its own toolsAdded, in registration order.
    for name in names:
        tool: dict[str, Any] = {"name": name, "description": "", "inputSchema": {"type": "object"}, "frameId": frame_id}
        session._dispatch("WebMCP.toolsAdded", {"tools": [tool]})


async def test_the_main_frames_tools_come_first_in_registration_order_and_the_rest_are_reachable() -> None:
    page_session = CDPSession(_CONNECTION, None, "MAIN")
    oopif = CDPSession(_CONNECTION, "S-OOPIF", "OOPIF")
    mirror = ToolMirror(set(TAB_OPERATIONS), lambda: None)
    mirror.watch(page_session, main=True)
    mirror.watch(oopif)
    _registered(page_session, "CHILD", "search_kb")  # a same-process iframe, registered first
    _registered(oopif, "OOPIF", "reviews")
    _registered(page_session, "MAIN", *(f"bulk_{i}" for i in range(300)))
    _registered(page_session, "MAIN", "cart.add", "close", "checkout")
    ordered, listed, _capped = mirror.listed()
    every = [t.name for t in ordered]
    assert every == [*(f"bulk_{i}" for i in range(300)), "cart.add", "close", "checkout", "search_kb", "reviews"]
    assert [t.name for t in listed] == every[:MAX_TOOLS_PER_WINDOW]
    notices = BridgeNotices("tab-1", mirror, lambda: None).notices()
    [notice] = [n for n in notices if n["id"] == "tools-capped"]
    assert "305 tools; 177 of them are not listed" in notice["text"]
    assert "tab-1__list_page_tools" in notice["text"] and "tab-1__call_page_tool" in notice["text"]


async def test_a_page_whose_own_tools_come_first_keeps_them_listed_whatever_a_script_adds() -> None:
    page_session = CDPSession(_CONNECTION, None, "MAIN")
    mirror = ToolMirror(set(TAB_OPERATIONS), lambda: None)
    mirror.watch(page_session, main=True)
    _registered(page_session, "MAIN", "cart.add", "close")
    _registered(page_session, "MAIN", *(f"bulk_{i}" for i in range(300)))
    listed = [t.name for t in mirror.listed()[1]]
    assert listed[:2] == ["cart.add", "close"] and len(listed) == MAX_TOOLS_PER_WINDOW


async def test_a_tab_is_blocked_by_the_policy_for_the_address_it_shows_now(monkeypatch: pytest.MonkeyPatch) -> None:
    page = PageTarget(target_id="MAIN", session=CDPSession(_CONNECTION, None, "MAIN"), url="https://ads.example/x")
    async with anyio.create_task_group() as tg:
        desktop = Desktop(_CONNECTION, tg, policy=OriginPolicy(block=("https://ads.example",)))
        asked: list[str] = []
        check = OriginPolicy.check
        monkeypatch.setattr(OriginPolicy, "check", lambda self, url: asked.append(url) or check(self, url))
        tab = Tab("tab-1", page, desktop)
        assert tab.blocked() is not None and "blocked" in str(tab.blocked())
        assert tab.page_tools() == []
        assert asked == ["https://ads.example/x"], "decided once for the address"
        page.url = "https://docs.example/"
        assert tab.blocked() is None
        page.url = "about:blank"
        assert tab.blocked() is None
        # The policy is the desktop's from its construction (the command line's): it never changes.
        allowing = Desktop(_CONNECTION, tg, policy=OriginPolicy(allow=("https://ads.example",)))
        other = Tab("tab-2", PageTarget(target_id="OTHER", session=page.session, url="https://docs.example/"), allowing)
        assert other.blocked() is not None and allowing.policy.allow == ("https://ads.example",)
        tg.cancel_scope.cancel()
