"""Which tools exist right now: the records and page tools of the operable windows.

A `ToolSpec` (specs.py) is everything `tools/list` says of one tool. Browser actions come
from `records`; page tools from the windows that have them (`kinds.has_page_tools`: a tab,
an in-page modal), as many as a window lists (its caps; the rest through its
`list_page_tools` and `call_page_tool`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import WindowState, operable_ids
from webmcp.tools.kinds import AnyWindow, has_page_tools
from webmcp.tools.records import ToolRecord, WindowKind, records_for
from webmcp.tools.specs import (
    ACTION_OUTPUT,
    EXPECTED_VERSION,
    RESULT_SCHEMA,
    ToolSpec,
    action_schema,
    listed_schema,
    page_tool_spec,
)

__all__ = ["EXPECTED_VERSION", "RESULT_SCHEMA", "ToolSpec", "action_schema", "tool_set_key", "tool_specs"]


class ListedDesktop(Protocol):
    """What the catalogue reads of the desktop."""

    def window_states(self) -> list[WindowState]: ...
    def window(self, window_id: str) -> Any: ...


def _record_spec(window_id: str, record: ToolRecord[Any, Any]) -> ToolSpec:
    # Never the page's title here: a page must not be able to write the bridge's own words.
    return ToolSpec(
        name=f"{window_id}__{record.action}",
        title=record.title,
        description=record.description,
        input_schema=action_schema(listed_schema(record.input_schema), record.versioned),
        annotations=record.annotations,
        output_schema=ACTION_OUTPUT,
    )


def _id_order(window_id: str) -> tuple[str, int, str]:
    kind, _, number = window_id.rpartition("-")
    return (kind, int(number), "") if number.isdigit() else (window_id, 0, window_id)


def _operable(desktop: ListedDesktop) -> Iterator[tuple[str, AnyWindow, WindowKind]]:
    """Each operable window with its id and kind, by id (dlg-2 before tab-1, tab-2 before tab-10).

    The order is the ids' alone, never how the windows came to be, so that one set of tools is
    always listed in one order (MCP 2026-07-28 asks it of servers: clients cache the list).
    """
    for window_id in sorted(operable_ids(desktop.window_states()), key=_id_order):
        window: AnyWindow | None = desktop.window(window_id)
        if window is not None:
            yield window_id, window, window.window_kind  # type: ignore[misc]


def tool_specs(desktop: ListedDesktop) -> list[ToolSpec]:
    """The tools callable this moment: the app-level actions, then those of operable windows.

    The app's come first: they never change, so a client's cached prefix of the list stays.
    """
    specs: list[ToolSpec] = [
        ToolSpec(
            f"app__{r.action}", r.title, r.description, listed_schema(r.input_schema), r.annotations, ACTION_OUTPUT
        )
        for r in records_for("app")
    ]
    for window_id, window, kind in _operable(desktop):
        specs.extend(_record_spec(window_id, r) for r in records_for(kind) if r.offered_on(window))
        if has_page_tools(window):
            specs.extend(page_tool_spec(window_id, window.origin, t) for t in window.page_tools())
    return specs


def tool_set_key(desktop: ListedDesktop) -> tuple[Any, ...]:
    """What `tool_specs(desktop)` is made of, without making it: equal keys, equal specs.

    The notifier compares it on every change of any window to know whether to send
    `tools/list_changed`: building every window's specs and writing them as JSON took
    0.7 ms a change on the bench shop, on the event loop that also answers the calls. A
    record's spec is fixed by its window and its action; a page tool's by its own fields and
    its window's origin, which the key holds as they are (the same objects when nothing
    changed, so comparing two keys is mostly identity checks). A key may differ where the
    specs do not only if a page tool's words differ beyond the bridge's cap on them.
    """
    key: list[Any] = []
    for window_id, window, kind in _operable(desktop):
        actions = tuple(r.action for r in records_for(kind) if r.offered_on(window))
        tools: list[PageTool] = []
        origin = ""
        if has_page_tools(window) and (tools := window.page_tools()):
            origin = window.origin
        key.append((window_id, kind, actions, origin, tuple(_page_tool_key(t) for t in tools)))
    return tuple(key)


def _page_tool_key(tool: PageTool) -> tuple[Any, ...]:
    # Every field `page_tool_spec` reads (the schema, annotations and notices as they are).
    return (
        tool.handle,
        tool.display_name,
        tool.description,
        tool.input_schema,
        tool.annotations,
        tool.notices,
        tool.origin,
        tool.declarative,
    )
