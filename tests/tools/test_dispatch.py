"""The dispatcher's checks, in order, against a fake desktop: no browser, no MCP."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, Field

from cdp_bridge.errors import CommandTimeout, ProtocolError, SessionClosed
from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.tools import dispatch
from webmcp.tools.dispatch import call_tool
from webmcp.tools.records import ReadContentInput, ToolRecord

pytestmark = pytest.mark.anyio


@dataclass
class FakeTimeouts:
    tool_call: float = 1.0


@dataclass(eq=False)
class FakeTab:
    window: WindowState
    window_kind: str = "tab"
    tools: list[PageTool] = field(default_factory=list)
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)
    open: bool = True
    version_now: int | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    raises: BaseException | None = None

    def is_open(self) -> bool:
        return self.open

    def page_tools(self) -> list[PageTool]:
        return self.tools

    unlisted: list[PageTool] = field(default_factory=list)
    """Tools of the page beyond the window's caps."""

    @property
    def id(self) -> str:
        return self.window.id

    def every_page_tool(self) -> list[PageTool]:
        return [*self.tools, *self.unlisted]

    checks: list[VersionCheck | None] = field(default_factory=list)
    """The version check each page-tool call was handed."""

    async def check_version(self) -> VersionCheck:
        if self.version_now is not None:
            self.window.version = self.version_now
        return VersionCheck(self.window.version, inputs=self.window.version * 100)

    async def call(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        deadline: float | None = None,
        check: VersionCheck | None = None,
    ) -> ToolResult:
        self.calls.append((tool.name, arguments))
        self.checks.append(check)
        if self.raises is not None:
            raise self.raises
        return ToolResult(message=f"{tool.name} completed.", result={"echo": arguments})

    async def reload(self) -> ToolResult:
        self.calls.append(("reload", {}))
        if self.raises is not None:
            raise self.raises
        return ToolResult(message="reloaded")

    def offers_action(self, action: str) -> bool:
        return True  # a page with something to fill, press, hover and submit

    def why_not_action(self, action: str) -> str:
        return ""

    async def hover(
        self, label: str, block_id: str | None, check: VersionCheck | None, wheel: int | None
    ) -> ToolResult:
        self.calls.append(("hover", {"label": label, "wheel": wheel}))
        return ToolResult(message="hovered")

    async def press(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        self.calls.append(("press", {"label": label}))
        return ToolResult(message="pressed")


@dataclass(eq=False)
class FakeDialog:
    """A modal window as the dispatcher sees it: no `page_tools`, no `call` (it has no page tools)."""

    window: WindowState
    window_kind: str = "dialog"
    op_lock: anyio.Lock = field(default_factory=anyio.Lock)
    answered: list[bool] = field(default_factory=list)
    kind: str = "confirm"

    def is_open(self) -> bool:
        return True

    async def check_version(self) -> VersionCheck:
        return VersionCheck(self.window.version)

    async def answer(self, accept: bool, text: str | None) -> ToolResult:
        self.answered.append(accept)
        return ToolResult(message="Accepted the confirm dialog." if accept else "Dismissed the confirm dialog.")


@dataclass
class FakeDesktop:
    windows: dict[str, FakeTab | FakeDialog]
    timeouts: FakeTimeouts = field(default_factory=FakeTimeouts)

    def window_states(self) -> list[WindowState]:
        return [w.window for w in self.windows.values()]

    def window(self, window_id: str) -> FakeTab | FakeDialog | None:
        return self.windows.get(window_id)


def _tool(name: str, schema: dict[str, Any] | None = None) -> PageTool:
    return PageTool(
        handle=name,
        name=name,
        frame_id="F",
        session=None,  # type: ignore[arg-type]
        description="",
        input_schema=schema or {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        annotations={},
        backend_node_id=None,
    )


def _desktop(*, blocked: bool = False) -> tuple[FakeDesktop, FakeTab]:
    tab = FakeTab(WindowState(id="tab-1", title="T", version=3), tools=[_tool("get_ticket")])
    windows: dict[str, FakeTab | FakeDialog] = {"tab-1": tab}
    if blocked:
        windows["dlg-1"] = FakeDialog(WindowState(id="dlg-1", title="D", modal=True, owner_id="tab-1"))
    return FakeDesktop(windows), tab


async def _error(desktop: FakeDesktop, name: str, args: dict[str, Any] | None = None) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call_tool(desktop, name, args)
    return caught.value


async def test_a_page_tool_call_reaches_the_window_with_its_arguments() -> None:
    desktop, tab = _desktop()
    answer = await call_tool(desktop, "tab-1__get_ticket", {"n": 7})
    assert tab.calls == [("get_ticket", {"n": 7})]
    assert answer.result.wire() == {"message": "get_ticket completed.", "result": {"echo": {"n": 7}}}


async def test_an_unknown_window_is_window_not_found_before_anything_else() -> None:
    desktop, _ = _desktop(blocked=True)
    assert (await _error(desktop, "tab-9__nope", {"bad": True})).code == "window_not_found"


async def test_a_blocked_window_is_refused_before_its_action_or_input_is_looked_at() -> None:
    desktop, tab = _desktop(blocked=True)
    error = await _error(desktop, "tab-1__no_such_action", {"n": "not a number"})
    assert error.code == "blocked_by_modal"
    assert error.to_dict()["blockingWindowId"] == "dlg-1"
    assert tab.calls == []


async def test_a_missing_action_is_refused_before_the_input_is_checked() -> None:
    desktop, _ = _desktop()
    assert (await _error(desktop, "tab-1__gone_tool", {"n": "x"})).code == "action_not_available"


async def test_bad_input_names_every_field_and_calls_nothing() -> None:
    desktop, tab = _desktop()
    error = await _error(desktop, "tab-1__get_ticket", {"extra": 1})
    assert error.code == "validation_failed"
    assert {f["field"] for f in error.to_dict()["fields"]} == {"n"}
    assert tab.calls == []


async def test_a_stale_version_is_checked_against_the_fresh_view_and_refused() -> None:
    desktop, tab = _desktop()
    tab.version_now = 4  # the page changed since the agent read version 3
    error = await _error(desktop, "tab-1__get_ticket", {"n": 1, "expectedVersion": 3})
    assert error.code == "stale_state"
    assert error.to_dict()["currentVersion"] == 4
    assert tab.calls == []


async def test_the_current_version_lets_the_call_through_without_passing_it_to_the_page() -> None:
    desktop, tab = _desktop()
    await call_tool(desktop, "tab-1__get_ticket", {"n": 1, "expectedVersion": 3})
    assert tab.calls == [("get_ticket", {"n": 1})]


async def test_expected_version_must_be_an_integer() -> None:
    desktop, _ = _desktop()
    error = await _error(desktop, "tab-1__get_ticket", {"n": 1, "expectedVersion": True})
    assert error.code == "validation_failed"
    assert error.to_dict()["fields"][0]["field"] == "expectedVersion"


@pytest.mark.parametrize("value", [None, "3", 1.5])
async def test_an_expected_version_that_is_present_but_not_an_integer_is_refused_and_calls_nothing(
    value: object,
) -> None:
    desktop, tab = _desktop()
    error = await _error(desktop, "tab-1__get_ticket", {"n": 1, "expectedVersion": value})
    assert error.code == "validation_failed"
    assert tab.calls == []


async def test_a_window_that_closed_while_waiting_for_its_lock_is_window_not_found() -> None:
    desktop, tab = _desktop()
    tab.open = False
    assert (await _error(desktop, "tab-1__get_ticket", {"n": 1})).code == "window_not_found"


async def test_a_name_without_a_window_part_is_not_a_window_tool() -> None:
    desktop, _ = _desktop()
    assert (await _error(desktop, "reload")).code == "action_not_available"


async def test_browser_actions_come_from_the_records_and_run_the_window_operation() -> None:
    desktop, tab = _desktop()
    answer = await call_tool(desktop, "tab-1__navigate", {"go": "reload"})
    assert answer.result.message == "reloaded"
    assert tab.calls == [("reload", {})]
    assert (await _error(desktop, "tab-1__navigate", {"go": "reload", "hard": True})).code == "validation_failed"
    # One of url and go, never both or neither: refused before anything runs.
    assert (await _error(desktop, "tab-1__navigate", {})).code == "validation_failed"
    both = await _error(desktop, "tab-1__navigate", {"go": "back", "url": "https://example.com/"})
    assert both.code == "validation_failed" and "not both" in both.message
    assert (await _error(desktop, "tab-1__navigate", {"go": "sideways"})).code == "validation_failed"
    assert tab.calls == [("reload", {})]


async def test_dialog_actions_do_not_apply_to_tabs() -> None:
    desktop, _ = _desktop()
    assert (await _error(desktop, "tab-1__accept")).code == "action_not_available"


async def test_a_modal_window_without_page_tools_runs_its_actions_and_has_no_page_tool_by_that_name() -> None:
    desktop, _ = _desktop()
    dialog = FakeDialog(WindowState(id="dlg-1", title="D", modal=True, owner_id="tab-1", version=2))
    desktop.windows["dlg-1"] = dialog
    # The tab's page tool is not the dialog's: asked of a window with no page tools, it is no tool at all.
    assert (await _error(desktop, "dlg-1__get_ticket", {"n": 1})).code == "action_not_available"
    answer = await call_tool(desktop, "dlg-1__accept", {"expectedVersion": 2})
    assert answer.result.message == "Accepted the confirm dialog."
    assert dialog.answered == [True]


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (CommandTimeout("WebMCP.invokeTool", 5.0), "action_timeout"),
        (SessionClosed("gone"), "call_interrupted"),
        (ProtocolError("WebMCP.invokeTool", -32602, "Tool not found"), "action_not_available"),
        (ProtocolError("WebMCP.invokeTool", -32000, "Frame detached"), "browser_error"),
    ],
)
async def test_cdp_failures_become_tool_errors_in_one_place(failure: BaseException, code: str) -> None:
    desktop, tab = _desktop()
    tab.raises = failure
    assert (await _error(desktop, "tab-1__get_ticket", {"n": 1})).code == code


async def test_cdp_failures_of_a_browser_action_become_tool_errors_in_the_same_place() -> None:
    desktop, tab = _desktop()
    tab.raises = SessionClosed("gone")
    assert (await _error(desktop, "tab-1__navigate", {"go": "reload"})).code == "call_interrupted"


class _PagedInput(BaseModel):
    block_id: str | None = Field(default=None, alias="blockId")
    limit: int = 100


async def test_a_record_handler_gets_its_parsed_input_model_with_defaults_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    received: list[tuple[object, BaseModel]] = []

    async def handler(window: FakeTab, params: _PagedInput) -> ToolResult:
        received.append((window, params))
        return ToolResult(message="read")

    record = ToolRecord(
        action="page",
        applies_to="tab",
        title="Page",
        description="",
        input_model=_PagedInput,
        annotations={},
        handler=handler,
    )
    monkeypatch.setattr(dispatch, "record_for", lambda kind, action: record if action == "page" else None)
    desktop, tab = _desktop()
    await call_tool(desktop, "tab-1__page", {"blockId": "rows", "expectedVersion": 3})
    assert received == [(tab, _PagedInput(blockId="rows", limit=100))]
    assert isinstance(received[0][1], _PagedInput)


async def test_read_content_takes_its_defaults_from_its_input_model(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[object, str | None, int, int]] = []

    async def read_content(tab: object, block_id: str | None, offset: int, limit: int) -> ToolResult:
        asked.append((tab, block_id, offset, limit))
        return ToolResult(message="rows")

    monkeypatch.setattr("webmcp.desktop.content.read_content", read_content)
    desktop, tab = _desktop()
    await call_tool(desktop, "tab-1__read_content", {})
    await call_tool(desktop, "tab-1__read_content", {"blockId": "b1", "limit": 5})
    defaults = ReadContentInput()
    assert asked == [(tab, None, defaults.offset, defaults.limit), (tab, "b1", 0, 5)]
    assert (defaults.offset, defaults.limit) == (0, 100)


async def test_bad_input_to_a_browser_action_is_refused_by_the_schema_before_its_handler_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def read_content(*_args: object) -> ToolResult:
        raise AssertionError("the handler must not run")

    monkeypatch.setattr("webmcp.desktop.content.read_content", read_content)
    desktop, _ = _desktop()
    error = await _error(desktop, "tab-1__read_content", {"limit": 0, "offset": "x"})
    assert error.code == "validation_failed"
    assert error.message == "Input rejected: 2 field(s) are invalid"
    assert {f["field"] for f in error.to_dict()["fields"]} == {"limit", "offset"}


async def test_a_window_busy_beyond_the_deadline_refuses_the_next_call() -> None:
    desktop, tab = _desktop()
    desktop.timeouts.tool_call = 0.05
    holding, release = anyio.Event(), anyio.Event()

    async def earlier_operation() -> None:
        async with tab.op_lock:
            holding.set()
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(earlier_operation)
        await holding.wait()
        assert (await _error(desktop, "tab-1__get_ticket", {"n": 1})).code == "action_timeout"
        release.set()
    assert tab.calls == []


async def test_a_version_check_guards_only_the_call_it_was_made_for() -> None:
    tab = FakeTab(WindowState(id="tab-1", title="T", version=4), tools=[_tool("get_ticket")])
    desktop = FakeDesktop({"tab-1": tab})
    refused = await _error(desktop, "tab-1__get_ticket", {"n": 1, "expectedVersion": 3})
    assert refused.code == "stale_state"
    await call_tool(desktop, "tab-1__get_ticket", {"n": 2})
    await call_tool(desktop, "tab-1__get_ticket", {"n": 3, "expectedVersion": 4})
    await call_tool(desktop, "tab-1__get_ticket", {"n": 4})
    # A refused check arms nothing, and a call without expectedVersion is never held to an earlier check.
    assert tab.checks == [None, VersionCheck(4, inputs=400), None]


def _capped_desktop() -> tuple[FakeDesktop, FakeTab]:
    desktop, tab = _desktop()
    tab.unlisted = [
        _tool("cart.add", {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]})
    ]
    return desktop, tab


async def test_call_page_tool_reaches_an_unlisted_tool_through_the_same_checks() -> None:
    desktop, tab = _capped_desktop()
    assert (await _error(desktop, "tab-1__cart.add", {"sku": "x"})).code == "action_not_available"
    answer = await call_tool(
        desktop, "tab-1__call_page_tool", {"name": "cart.add", "arguments": {"sku": "A1"}, "expectedVersion": 3}
    )
    assert answer.result.message == "cart.add completed."
    assert tab.calls == [("cart.add", {"sku": "A1"})]
    assert tab.checks == [VersionCheck(3, inputs=300)], "the version check is handed to the call, as for a direct call"


async def test_call_page_tool_checks_the_arguments_against_the_tools_own_schema() -> None:
    desktop, tab = _capped_desktop()
    error = await _error(desktop, "tab-1__call_page_tool", {"name": "cart.add", "arguments": {"sku": None}})
    assert error.code == "validation_failed"
    assert error.to_dict()["fields"] == [{"field": "sku", "error": "null is not of type string"}]
    tab.version_now = 4
    stale = await _error(
        desktop, "tab-1__call_page_tool", {"name": "cart.add", "arguments": {"sku": "A"}, "expectedVersion": 3}
    )
    assert stale.code == "stale_state"
    assert tab.calls == []


async def test_call_page_tool_refuses_an_unknown_name_and_expected_version_inside_arguments() -> None:
    desktop, tab = _capped_desktop()
    assert (await _error(desktop, "tab-1__call_page_tool", {"name": "nope"})).code == "action_not_available"
    misplaced = await _error(
        desktop, "tab-1__call_page_tool", {"name": "cart.add", "arguments": {"sku": "A", "expectedVersion": 3}}
    )
    assert misplaced.code == "validation_failed"
    assert (await _error(desktop, "tab-1__call_page_tool", {"arguments": {}})).code == "validation_failed"
    assert tab.calls == []


async def test_the_reach_for_unlisted_tools_is_offered_only_while_some_are_unlisted() -> None:
    desktop, _ = _desktop()
    assert (await _error(desktop, "tab-1__call_page_tool", {"name": "get_ticket"})).code == "action_not_available"
    assert (await _error(desktop, "tab-1__list_page_tools")).code == "action_not_available"


@pytest.mark.parametrize(
    ("action", "args", "field"),
    [
        ("press", {"label": ""}, "label"),  # minLength: an empty label
        ("press", {"label": "OK", "colour": "red"}, "colour"),  # an unknown argument
        ("press", {"key": "k" * 41}, "key"),  # maxLength
        ("read_content", {"offset": -1}, "offset"),  # minimum
        ("hover", {"label": "Menu", "wheel": 100_001}, "wheel"),  # the wheel's bound, checked by its handler
        ("hover", {"label": "Menu", "wheel": -(10**400)}, "wheel"),
    ],
)
async def test_the_guards_tools_list_leaves_out_are_still_checked_and_nothing_runs(
    action: str, args: dict[str, Any], field: str
) -> None:
    desktop, tab = _desktop()
    error = await _error(desktop, f"tab-1__{action}", args)
    assert error.code == "validation_failed", error.message
    assert field in {f["field"] for f in error.to_dict()["fields"]}
    assert tab.calls == []


async def test_a_hover_within_the_wheels_bound_reaches_the_tab() -> None:
    desktop, tab = _desktop()
    await call_tool(desktop, "tab-1__hover", {"label": "Menu", "wheel": -100_000})
    await call_tool(desktop, "tab-1__press", {"label": "OK", "expectedVersion": 3})
    assert tab.calls == [("hover", {"label": "Menu", "wheel": -100_000}), ("press", {"label": "OK"})]


async def test_an_action_that_does_not_list_expected_version_still_checks_it() -> None:
    # focus and the reads do not list it (they write nothing), but a stale one is refused all the same.
    desktop, tab = _desktop()
    error = await _error(desktop, "tab-1__read_content", {"expectedVersion": 2})
    assert (error.code, error.to_dict()["currentVersion"]) == ("stale_state", 3)
