"""Background work for a page is supervised: its failure is noted on its tab, and nothing else stops."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import PageTarget
from webmcp.desktop.registry import Desktop
from webmcp.desktop.tab import Tab

pytestmark = pytest.mark.anyio


async def test_a_failing_background_task_is_noted_on_its_tab_and_the_task_group_lives() -> None:
    async with anyio.create_task_group() as tg:
        desktop = Desktop(cast(Connection, object()), tg)
        tab = Tab("tab-1", PageTarget(target_id="T", session=cast(CDPSession, object())), desktop)
        ran: list[str] = []
        later_done = anyio.Event()

        async def hostile_data_breaks_this() -> None:
            raise KeyError("a field the page left out")

        async def later_work(note: str) -> None:
            ran.append(note)
            later_done.set()

        desktop.spawn(hostile_data_breaks_this, on_fault=tab.fault)
        desktop.spawn(later_work, "still running", on_fault=tab.fault)
        with anyio.fail_after(5):
            await later_done.wait()  # spawned after the failing one, so that one has run
        notices: list[dict[str, Any]] = [b for b in tab.window.blocks if b["type"] == "notice"]
        assert [n["id"] for n in notices] == ["bridge-fault"]
        assert "KeyError" in notices[0]["text"]
        assert ran == ["still running"]
