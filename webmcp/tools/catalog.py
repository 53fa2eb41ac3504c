"""Which tools exist right now: the records and page tools of the operable windows.

A `ToolSpec` (specs.py) is everything `tools/list` says of one tool. Browser actions come
from `records`; page tools from the windows, as many as a window lists (its caps; the rest
through its `list_page_tools` and `call_page_tool`).
"""

from __future__ import annotations

from typing import Any, Protocol

from webmcp.desktop.mirror import PageTool
from webmcp.desktop.windows import WindowState, operable_ids
from webmcp.tools.records import ToolRecord, WindowKind, records_for
from webmcp.tools.specs import EXPECTED_VERSION, RESULT_SCHEMA, ToolSpec, action_schema, page_tool_spec

__all__ = ["EXPECTED_VERSION", "RESULT_SCHEMA", "ToolSpec", "action_schema", "tool_specs"]


class ListedWindow(Protocol):
    """What the catalogue reads of a window."""

    window: WindowState
    window_kind: str

    def page_tools(self) -> list[PageTool]: ...


class ListedDesktop(Protocol):
    """What the catalogue reads of the desktop."""

    def window_states(self) -> list[WindowState]: ...
    def window(self, window_id: str) -> Any: ...


def _record_spec(window_id: str, record: ToolRecord[Any, Any]) -> ToolSpec:
    # Never the page's title here: a page must not be able to write the bridge's own words.
    return ToolSpec(
        name=f"{window_id}__{record.action}",
        title=f"{record.title} (window {window_id})",
        description=f"{record.description} Browser action on window {window_id}.",
        input_schema=action_schema(record.input_schema),
        annotations=record.annotations,
        output_schema=RESULT_SCHEMA,
    )


def tool_specs(desktop: ListedDesktop) -> list[ToolSpec]:
    """The tools callable this moment: those of operable windows, plus app-level actions."""
    specs: list[ToolSpec] = []
    for window_id in operable_ids(desktop.window_states()):
        window: ListedWindow | None = desktop.window(window_id)
        if window is None:
            continue
        kind: WindowKind = window.window_kind  # type: ignore[assignment]
        origin = str(getattr(window, "origin", ""))
        specs.extend(_record_spec(window_id, r) for r in records_for(kind) if r.offered_on(window))
        specs.extend(page_tool_spec(window_id, origin, t) for t in window.page_tools())
    specs.extend(
        ToolSpec(f"app__{r.action}", r.title, r.description, r.input_schema, r.annotations, RESULT_SCHEMA)
        for r in records_for("app")
    )
    return specs
