"""A version check is a value handed to the one call it was made for: nothing of it stays on the tab."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

import webmcp.desktop.calls as calls_module
import webmcp.desktop.live_view as live_view_module
from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import PageTarget
from webmcp.desktop.input_guard import WriteGuard
from webmcp.desktop.live_view import PageRead
from webmcp.desktop.mirror import PageTool
from webmcp.desktop.registry import Desktop
from webmcp.desktop.tab import Tab
from webmcp.desktop.windows import VersionCheck
from webmcp.models import ToolResult
from webmcp.view.build import build_view

pytestmark = pytest.mark.anyio

_TOOL = PageTool(
    handle="write",
    name="write",
    frame_id="T",
    session=cast(CDPSession, object()),
    description="",
    input_schema={"type": "object"},
    annotations={},
    backend_node_id=None,
)


async def _read_page(_page: Any, _doc_seq: int, ids: Any) -> PageRead:
    return PageRead(build_view([], ids, secret_values=set()), frozenset())


async def test_a_check_refused_for_one_call_guards_no_later_call_in_the_same_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed: list[VersionCheck | None] = []

    async def call_page_tool(
        _calls: Any, tool: PageTool, _args: dict[str, Any], _deadline: float | None = None, check: Any = None
    ) -> ToolResult:
        handed.append(check)
        return ToolResult(message=f"{tool.name} completed.")

    async def inputs_so_far(_timeout: float) -> int:
        return 7

    monkeypatch.setattr(live_view_module, "read_page", _read_page)
    monkeypatch.setattr(calls_module.PageCalls, "call", call_page_tool)
    async with anyio.create_task_group() as tg:
        tab = Tab(
            "tab-1",
            PageTarget(target_id="T", session=cast(CDPSession, object())),
            Desktop(cast(Connection, object()), tg),
        )
        monkeypatch.setattr(WriteGuard, "count", lambda _guard, timeout: inputs_so_far(timeout))
        with anyio.fail_after(5):
            check = await tab.check_version()  # the dispatcher then refuses the write: stale_state
            assert check == VersionCheck(tab.version, inputs=7)
            # The same task (the worst case of the old task-keyed slot) calls again, without expectedVersion.
            await tab.call(_TOOL, {})
            await tab.call(_TOOL, {}, check=check)
        assert handed == [None, check]
        tg.cancel_scope.cancel()
