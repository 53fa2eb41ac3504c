"""tool_set_key: what the notifier compares instead of the tool specs, equal exactly when they are."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from cdp_bridge.connection import CDPSession
from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import WindowState
from webmcp.tools.catalog import tool_set_key, tool_specs

SESSION = cast(CDPSession, object())


def _tool(name: str, **fields: Any) -> PageTool:
    base: dict[str, Any] = {
        "handle": name,
        "name": name,
        "frame_id": "F",
        "session": SESSION,
        "description": f"{name} does things",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "annotations": {"readOnly": True},
        "backend_node_id": None,
        "display_name": name,
        "origin": "http://127.0.0.1:1",
    }
    return PageTool(**{**base, **fields})


@dataclass
class FakeTab:
    """What the catalogue and the tab records' `offered` read of a tab."""

    window: WindowState
    tools: list[PageTool] = field(default_factory=list)
    every: list[PageTool] | None = None
    origin: str = "http://127.0.0.1:1"
    actions: frozenset[str] = frozenset({"fill", "press", "submit"})
    downloads: bool = False
    window_kind: str = "tab"
    repeated: bool = False  # a dialog's

    @property
    def id(self) -> str:
        return self.window.id

    def page_tools(self) -> list[PageTool]:
        return list(self.tools)

    def every_page_tool(self) -> list[PageTool]:
        return list(self.every if self.every is not None else self.tools)

    def offers_action(self, action: str) -> bool:
        return action in self.actions

    def has_downloads(self) -> bool:
        return self.downloads


@dataclass
class FakeDialog:
    """A modal window as the catalogue reads it: it has no page tools, so no `page_tools` either."""

    window: WindowState
    window_kind: str = "dialog"
    repeated: bool = False


@dataclass
class FakeDesktop:
    tabs: list[Any]

    def window_states(self) -> list[WindowState]:
        return [t.window for t in self.tabs]

    def window(self, window_id: str) -> Any:
        return next((t for t in self.tabs if t.window.id == window_id), None)


def _specs(desktop: FakeDesktop) -> list[tuple[Any, ...]]:
    return [(s.name, s.title, s.description, s.input_schema, s.annotations) for s in tool_specs(desktop)]


_OTHER_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
# Each change a page or the person can make, one at a time: what tools/list shows may move.
_CHANGES = {
    "a tool's description": lambda t: _retool(t, 0, description="now something else"),
    "a tool's schema": lambda t: _retool(t, 0, input_schema=_OTHER_SCHEMA),
    "a tool's schema, equal but another object": lambda t: _retool(t, 0, input_schema=dict(t.tools[0].input_schema)),
    "a tool's annotations": lambda t: _retool(t, 0, annotations={"readOnly": False}),
    "a tool's name shown": lambda t: _retool(t, 0, display_name="Other"),
    "a tool's handle": lambda t: _retool(t, 0, handle="other_handle"),
    "a tool from an embedded frame": lambda t: _retool(t, 0, origin="http://127.0.0.2:1"),
    "a tool now declarative": lambda t: _retool(t, 0, backend_node_id=7),
    "a declarative form re-registered": lambda t: _retool(t, 0, backend_node_id=8, handle=t.tools[0].handle),
    "a tool's notices": lambda t: _retool(t, 0, notices=("cut",)),
    "the same tool registered again": lambda t: _retool(t, 0, session=cast(CDPSession, object()), frame_id="G"),
    "a tool added": lambda t: setattr(t, "tools", [*t.tools, _tool("added")]),
    "a tool gone": lambda t: setattr(t, "tools", t.tools[1:]),
    "the tools reordered": lambda t: setattr(t, "tools", list(reversed(t.tools))),
    "the page's origin": lambda t: setattr(t, "origin", "http://127.0.0.3:1"),
    "an action offered": lambda t: setattr(t, "downloads", True),
    "an action withdrawn": lambda t: setattr(t, "actions", frozenset({"fill"})),
    "some tools left unlisted": lambda t: setattr(t, "every", [*t.tools, _tool("unlisted")]),
    "the title and the blocks": lambda t: setattr(t, "window", dataclasses.replace(t.window, title="New", version=9)),
}


def _retool(tab: FakeTab, index: int, **fields: Any) -> None:
    tools = list(tab.tools)
    tools[index] = dataclasses.replace(tools[index], **fields)
    tab.tools = tools


def _desktop() -> FakeDesktop:
    return FakeDesktop(
        [
            FakeTab(WindowState("tab-1", "Shop"), [_tool("search"), _tool("add_to_cart")]),
            FakeTab(WindowState("tab-2", "Blank")),
        ]
    )


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_the_key_moves_exactly_when_the_listed_tools_do(change: str) -> None:
    desktop = _desktop()
    key, specs = tool_set_key(desktop), _specs(desktop)
    _CHANGES[change](desktop.tabs[0])
    assert (tool_set_key(desktop) == key) == (_specs(desktop) == specs), change


def test_an_origin_with_no_page_tools_is_not_part_of_the_key() -> None:
    desktop = _desktop()
    key = tool_set_key(desktop)
    desktop.tabs[1].origin = "http://127.0.0.9:1"  # no page tools there: tools/list unchanged
    assert tool_set_key(desktop) == key


def test_a_window_under_a_modal_leaves_the_key_as_it_leaves_the_list() -> None:
    desktop = _desktop()
    key, specs = tool_set_key(desktop), _specs(desktop)
    dialog = FakeTab(WindowState("dlg-1", "Sure?", modal=True, owner_id="tab-1"), window_kind="dialog")
    desktop.tabs.append(dialog)
    assert _specs(desktop) != specs and tool_set_key(desktop) != key
    assert all("tab-1__" not in name for name, *_ in _specs(desktop))


def test_random_changes_in_a_row_keep_key_and_list_in_step() -> None:
    rng = random.Random(22)
    desktop = _desktop()
    names = sorted(_CHANGES)
    for _ in range(300):
        key, specs = tool_set_key(desktop), _specs(desktop)
        tab = desktop.tabs[rng.randrange(len(desktop.tabs))]
        if not tab.tools:
            tab.tools = [_tool(f"t{rng.randrange(5)}")]
        else:
            _CHANGES[rng.choice(names)](tab)
        assert (tool_set_key(desktop) == key) == (_specs(desktop) == specs)


def test_a_modal_window_without_page_tools_is_listed_with_its_actions_only() -> None:
    desktop = _desktop()
    desktop.tabs.append(FakeDialog(WindowState("dlg-1", "Sure?", modal=True, owner_id="tab-1")))
    names = [name for name, *_ in _specs(desktop) if name.startswith("dlg-1__")]
    assert names == ["dlg-1__accept", "dlg-1__dismiss", "dlg-1__close_tab"]
    assert [k[:2] for k in tool_set_key(desktop)] == [("dlg-1", "dialog"), ("tab-2", "tab")], "by id"
