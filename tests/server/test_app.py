"""The MCP server over a fake desktop, through a real in-memory `mcp.Client`: how failures reach the agent."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.runner import ServerRunner
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS
from opentelemetry import trace

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.server.app import CallAnswer, build_server, run_notifier, trace_requests_if_traced
from webmcp.server.transport import Broadcaster

pytestmark = pytest.mark.anyio

PAGE_TEXT = "card 4111 1111 1111 1111"
"""Text an exception might carry from the page: it must not reach the agent."""


@dataclass
class FakeTimeouts:
    tool_call: float = 5.0


@dataclass(eq=False)
class FakeTab:
    """A tab with one page tool, whose call fails with `raises` (or answers `result`)."""

    raises: Exception | None
    result: ToolResult | None = None
    window: WindowState = field(default_factory=lambda: WindowState(id="tab-1", title="T", version=1))
    window_kind: str = "tab"
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)
    origin: str = "http://127.0.0.1:1"
    actions: bool = False
    """Whether it offers the window actions (fill, press, hover, submit): most tests are about one page tool."""

    def is_open(self) -> bool:
        return True

    def offers_action(self, action: str) -> bool:
        return self.actions

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

    def every_page_tool(self) -> list[PageTool]:
        return self.page_tools()

    def has_downloads(self) -> bool:
        return False

    async def check_version(self) -> VersionCheck:
        return VersionCheck(self.window.version)

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        if self.raises is not None:
            raise self.raises
        assert self.result is not None
        return self.result


@dataclass
class FakeDesktop:
    tab: FakeTab
    timeouts: FakeTimeouts = field(default_factory=FakeTimeouts)

    def window_states(self) -> list[WindowState]:
        return [self.tab.window]

    def window(self, window_id: str) -> FakeTab | None:
        return self.tab if window_id == self.tab.window.id else None

    known: frozenset[str] = frozenset()
    """Secret values as of the last read of every tab."""
    now: frozenset[str] = frozenset()
    """Secret values the tab's page holds right now (set by script after the last read)."""
    asked: list[tuple[str, bool]] = field(default_factory=list)

    def known_secrets(self) -> frozenset[str]:
        return self.known

    async def secrets_for(self, window_id: str, *, live: bool = True) -> frozenset[str]:
        self.asked.append((window_id, live))
        return self.known | self.now if live else self.known


async def _call(raises: Exception | None, mode: str, desktop: FakeDesktop | None = None) -> Any:
    server = build_server(desktop or FakeDesktop(FakeTab(raises)), Broadcaster())  # type: ignore[arg-type]
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


LATE = "late-set-pw-9f3a"
"""A password a script set after the last read: only a read of the page as the answer leaves knows it."""


def _all_text(result: Any) -> str:
    return str(result.structured_content) + "".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize(
    "error",
    [
        ToolError("page_error", f"The page tool buy failed: bad {LATE}", page_message=f"bad {LATE}"),
        ToolError("browser_error", f"The browser refused buy: {LATE}", detail=LATE),
        ToolError("call_interrupted", f"The tab moved to /?pw={LATE} during the call", outcome="unknown"),
    ],
    ids=["pageMessage", "detail", "message"],
)
async def test_an_error_is_masked_with_the_secret_values_the_page_holds_as_it_leaves(error: ToolError) -> None:
    desktop = FakeDesktop(FakeTab(error), known=frozenset({"old-pw-1"}), now=frozenset({LATE}))
    result = await _call(None, "auto", desktop)
    assert result.is_error is True
    assert LATE not in _all_text(result) and "••••••" in _all_text(result)
    assert result.structured_content["code"] == error.code
    assert desktop.asked == [("tab-1", True)]


async def test_a_result_is_masked_with_the_live_values_and_its_bridge_fields_are_kept() -> None:
    answer = ToolResult(message="buy completed.", result={"echo": f"pw {LATE}", LATE: 1}, opened_window_ids=["tab"])
    # A secret as short as a window id must not break the answer's shape.
    desktop = FakeDesktop(FakeTab(None, answer), known=frozenset({"tab"}), now=frozenset({LATE}))
    result = await _call(None, "auto", desktop)
    assert result.is_error is False
    assert result.structured_content == {
        "message": "buy completed.",
        "openedWindowIds": ["tab"],
        "result": {"echo": "pw ••••••", "••••••": 1},
    }
    assert LATE not in _all_text(result)


async def test_an_error_that_says_the_page_does_not_answer_does_not_wait_for_the_page() -> None:
    error = ToolError("action_timeout", "buy did not answer within 5 s", page_told=False)
    desktop = FakeDesktop(FakeTab(error), known=frozenset({"old-pw-1"}), now=frozenset({LATE}))
    result = await _call(None, "auto", desktop)
    assert result.structured_content["code"] == "action_timeout"
    assert desktop.asked == [("tab-1", False)]


class _SomeTracerProvider(trace.TracerProvider):
    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return trace.NoOpTracer()


def test_requests_are_traced_only_when_a_tracer_provider_is_set() -> None:
    untraced = build_server(FakeDesktop(FakeTab(None)), Broadcaster())  # type: ignore[arg-type]
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in untraced.middleware)
    traced = build_server(FakeDesktop(FakeTab(None)), Broadcaster())  # type: ignore[arg-type]
    traced.middleware.append(OpenTelemetryMiddleware())
    trace_requests_if_traced(traced, _SomeTracerProvider())
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in traced.middleware)
    trace_requests_if_traced(traced, trace.ProxyTracerProvider())
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in traced.middleware)


# --- tools/call answered on the wire: what the SDK itself would write --------------------------------


_ANSWERS = [
    CallAnswer({"message": "buy completed.", "result": {"n": 1, "note": None, "deep": {"list": [1, "two"]}}}),
    CallAnswer({"message": "Screenshot taken."}, image_png=b"\x89PNG fake"),
    CallAnswer({"code": "page_error", "message": "The page tool buy failed: no", "pageMessage": "no"}, is_error=True),
    CallAnswer({"message": "done \u2022 \u00e9", "openedWindowIds": ["tab-2"]}),
]


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("answer", _ANSWERS, ids=["result", "image", "error", "opened"])
def test_a_call_answered_on_the_wire_is_what_the_sdks_own_path_writes(version: str, answer: CallAnswer) -> None:
    server = build_server(FakeDesktop(FakeTab(None)), Broadcaster())  # type: ignore[arg-type]
    runner = ServerRunner.__new__(ServerRunner)  # `_serialize` reads only `server`
    runner.server = server
    sdk = runner._serialize("tools/call", version, answer.model())
    ours = answer.wire(version, server.server_info_stamp)
    assert json.dumps(ours, sort_keys=True) == json.dumps(sdk, sort_keys=True)
    assert list(ours) == list(sdk)  # the same order of keys too


def _raw_call(client: Client, params: dict[str, Any]) -> Any:
    return client.session._dispatcher.send_raw_request("tools/call", params, {})


async def test_a_call_is_answered_alike_on_the_wire_and_through_the_sdks_handler() -> None:
    answer = ToolResult(message="buy completed.", result={"n": 1}, opened_window_ids=["tab-2"])
    server = build_server(FakeDesktop(FakeTab(None, answer)), Broadcaster())  # type: ignore[arg-type]
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        on_the_wire = await _raw_call(client, {"name": "tab-1__buy", "arguments": {}})
        # A call that asks for progress goes the SDK's way (its handler tells progress).
        through_sdk = await _raw_call(client, {"name": "tab-1__buy", "arguments": {}, "_meta": {"progressToken": 7}})
    assert on_the_wire == through_sdk
    assert on_the_wire["structuredContent"] == {
        "message": "buy completed.",
        "openedWindowIds": ["tab-2"],
        "result": {"n": 1},
    }


@pytest.mark.parametrize(
    "params",
    [{"name": "tab-1__buy", "arguments": "x"}, {"name": 5}, {"arguments": {}}],
    ids=["arguments", "name", "none"],
)
async def test_a_call_the_sdk_refuses_is_refused_as_the_sdk_refuses_it(params: dict[str, Any]) -> None:
    tab = FakeTab(None, ToolResult(message="buy completed."))
    server = build_server(FakeDesktop(tab), Broadcaster())  # type: ignore[arg-type]
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as refused:
            await _raw_call(client, params)
    assert refused.value.error.code == INVALID_PARAMS


# --- tools/list_changed: announced once the tool set keeps still ----------------------------------


class _NotifyingDesktop:
    """A desktop whose tool set the test moves; `on_change` as `Desktop` has it."""

    def __init__(self) -> None:
        self.tools: tuple[str, ...] = ("open_door_1", "open_door_2")
        self._listeners: list[Any] = []

    def on_change(self, listener: Any) -> None:
        self._listeners.append(listener)

    def move(self, *tools: str) -> None:
        self.tools = tools
        for listener in self._listeners:
            listener()


class _Heard(Broadcaster):
    """A broadcaster with no client: it records what it would tell (and lists are answered by `listed`)."""

    def __init__(self) -> None:
        super().__init__()
        self.updated = 0
        self.lists: list[tuple[float, tuple[str, ...]]] = []
        self.desktop: _NotifyingDesktop | None = None

    async def resource_updated(self, uri: str) -> None:
        self.updated += 1

    async def tools_list_changed(self) -> None:
        assert self.desktop is not None
        self.lists.append((anyio.current_time(), self.desktop.tools))  # what a client's re-list reads


async def _notifier_with(desktop: _NotifyingDesktop, heard: _Heard, tg: Any) -> None:
    heard.desktop = desktop
    tg.start_soon(
        partial(run_notifier, desktop, heard, min_interval=0.0, tools_key=lambda d: d.tools, quiet=0.2, hold=1.0)
    )
    await anyio.sleep(0.05)


async def test_a_page_that_moves_on_is_announced_once_with_the_next_pages_tools() -> None:
    # The tab's page leaves (its tools go), the next registers its own 30 ms later: one
    # tools/list_changed, after which a client reads the new page's tools, not an empty set between.
    desktop, heard = _NotifyingDesktop(), _Heard()
    async with anyio.create_task_group() as tg:
        await _notifier_with(desktop, heard, tg)
        desktop.move()
        await anyio.sleep(0.03)
        desktop.move("cast_light")
        await anyio.sleep(0.5)
        tg.cancel_scope.cancel()
    assert [tools for _, tools in heard.lists] == [("cast_light",)]
    assert heard.updated == 2, "every change is a resources/updated, at once"


async def test_a_set_that_comes_back_before_it_kept_still_is_not_announced() -> None:
    desktop, heard = _NotifyingDesktop(), _Heard()
    async with anyio.create_task_group() as tg:
        await _notifier_with(desktop, heard, tg)
        desktop.move()
        await anyio.sleep(0.03)
        desktop.move("open_door_1", "open_door_2")
        await anyio.sleep(0.5)
        tg.cancel_scope.cancel()
    assert heard.lists == []


async def test_a_set_that_came_back_after_a_client_read_it_in_between_is_announced() -> None:
    # A modal hid the tab's tools for 0.1 s and a client listed them then: it holds the empty
    # set, so the restoring is announced although the set is the one announced before.
    desktop, heard = _NotifyingDesktop(), _Heard()
    async with anyio.create_task_group() as tg:
        await _notifier_with(desktop, heard, tg)
        desktop.move()
        await anyio.sleep(0.05)
        heard.listed(desktop.tools)  # a tools/list answered while the tools were hidden
        await anyio.sleep(0.05)
        desktop.move("open_door_1", "open_door_2")
        await anyio.sleep(0.5)
        tg.cancel_scope.cancel()
    assert [tools for _, tools in heard.lists] == [("open_door_1", "open_door_2")]


async def test_a_set_read_only_once_it_came_back_is_not_announced() -> None:
    # A confirm dialog hid the tab's tools for 0.1 s; the client listed only after it was answered,
    # so it holds the set as it is: no tools/list_changed, no list of the same tools again.
    desktop, heard = _NotifyingDesktop(), _Heard()
    async with anyio.create_task_group() as tg:
        await _notifier_with(desktop, heard, tg)
        desktop.move("dlg_accept")
        await anyio.sleep(0.1)
        desktop.move("open_door_1", "open_door_2")
        heard.listed(desktop.tools)
        await anyio.sleep(0.5)
        tg.cancel_scope.cancel()
    assert heard.lists == []


def test_lists_beyond_those_remembered_count_as_another_set() -> None:
    heard = _Heard()
    heard.listed("a")
    assert not heard.listed_other_than(0, "a") and heard.listed_other_than(0, "b")
    assert not heard.listed_other_than(1, "b"), "no list since"
    for _ in range(200):
        heard.listed("a")
    assert heard.listed_other_than(0, "a"), "what the first lists showed is forgotten: told, to be safe"
    assert not heard.listed_other_than(150, "a")


async def test_a_set_that_keeps_moving_is_announced_within_the_hold() -> None:
    desktop, heard = _NotifyingDesktop(), _Heard()
    async with anyio.create_task_group() as tg:
        await _notifier_with(desktop, heard, tg)
        began = anyio.current_time()
        for n in range(20):  # a change every 0.1 s for 2 s: never still for 0.2 s
            desktop.move(f"tool_{n}")
            await anyio.sleep(0.1)
        await anyio.sleep(0.4)
        tg.cancel_scope.cancel()
    times = [at - began for at, _ in heard.lists]
    assert len(times) >= 2 and times[0] < 1.6, times  # not after the 2 s the set kept moving
    assert heard.lists[-1][1] == ("tool_19",), "the last set is announced once the set keeps still"


async def test_a_tabs_actions_fit_in_4_kib_of_tools_list_and_list_only_what_an_agent_needs() -> None:
    # Issue 40: a tab's browser and window actions together at most 4 KB of tools/list, on the wire.
    tab = FakeTab(None, window=WindowState(id="tab-10", title="T", version=1), actions=True)
    server = build_server(FakeDesktop(tab), Broadcaster())  # type: ignore[arg-type]
    async with Client(server, mode="legacy") as client:
        listed = (await client.list_tools()).tools
    actions = [t for t in listed if t.name.startswith("tab-10__") and t.name != "tab-10__buy"]
    assert {t.name.removeprefix("tab-10__") for t in actions} >= {
        "focus",
        "navigate",
        "fill",
        "press",
        "hover",
        "submit",
    }
    wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in actions]
    assert sum(len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode()) for t in wire) <= 4096
    for tool in wire:
        text = json.dumps(tool["inputSchema"])
        # Guards are checked on every call (tests/tools/test_dispatch.py), not listed.
        for guard in ("additionalProperties", "minLength", "maxLength", "pattern", "minItems", "minimum"):
            assert f'"{guard}"' not in text, (tool["name"], guard)
        writes = not tool.get("annotations", {}).get("readOnlyHint") and not tool["name"].endswith("__focus")
        assert ("expectedVersion" in tool["inputSchema"]["properties"]) == writes, tool["name"]
    # The bounds an agent's ask can reach stay listed.
    by_name = {t["name"].removeprefix("tab-10__"): t["inputSchema"]["properties"] for t in wire}
    assert by_name["wait_for"]["timeout"]["maximum"] == 30
    assert by_name["read_content"]["limit"]["maximum"] == 1000
