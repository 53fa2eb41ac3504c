"""The MCP server over a fake desktop, through a real in-memory `mcp.Client`: how failures reach the agent."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp import Client

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.server.app import build_server
from webmcp.server.transport import Broadcaster

pytestmark = pytest.mark.anyio

PAGE_TEXT = "card 4111 1111 1111 1111"
"""Text an exception might carry from the page: it must not reach the agent."""


@dataclass
class FakeTimeouts:
    tool_call: float = 5.0


@dataclass(eq=False)
class FakeTab:
    """A tab with one page tool, whose call fails with `raises`."""

    raises: Exception
    window: WindowState = field(default_factory=lambda: WindowState(id="tab-1", title="T", version=1))
    window_kind: str = "tab"
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def is_open(self) -> bool:
        return True

    def page_tools(self) -> list[PageTool]:
        return [
            PageTool(
                handle="buy",
                name="buy",
                frame_id="F",
                session=None,  # type: ignore[arg-type]
                description="",
                input_schema={"type": "object", "properties": {}},
                annotations={},
                backend_node_id=None,
            )
        ]

    async def check_version(self) -> VersionCheck:
        return VersionCheck(self.window.version)

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        raise self.raises


@dataclass
class FakeDesktop:
    tab: FakeTab
    timeouts: FakeTimeouts = field(default_factory=FakeTimeouts)

    def window_states(self) -> list[WindowState]:
        return [self.tab.window]

    def window(self, window_id: str) -> FakeTab | None:
        return self.tab if window_id == self.tab.window.id else None


async def _call(raises: Exception, mode: str) -> Any:
    server = build_server(FakeDesktop(FakeTab(raises)), Broadcaster())  # type: ignore[arg-type]
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        return await client.call_tool("tab-1__buy", {})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_bug_in_the_bridge_is_an_internal_error_result_not_a_protocol_error(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="webmcp.server.app"):
        result = await _call(RuntimeError(f"unexpected state near {PAGE_TEXT}"), mode)
    assert result.is_error is True
    body = result.structured_content
    assert body["code"] == "internal_error"
    assert "RuntimeError" in body["message"] and "app://windows" in body["message"]
    assert set(body) == {"code", "message"}
    assert PAGE_TEXT not in str(result.model_dump())
    # The traceback is in the log, for whoever fixes the bug.
    logged = [r for r in caplog.records if r.exc_info is not None]
    assert len(logged) == 1 and isinstance(logged[0].exc_info[1], RuntimeError)  # type: ignore[index]


async def test_a_tool_error_is_its_own_result_and_is_not_logged_as_a_failure(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="webmcp.server.app"):
        result = await _call(ToolError("page_error", "The page tool buy failed: no", page_message="no"), "auto")
    assert result.is_error is True
    assert result.structured_content == {
        "code": "page_error",
        "message": "The page tool buy failed: no",
        "pageMessage": "no",
    }
    assert [r for r in caplog.records if r.exc_info is not None] == []
