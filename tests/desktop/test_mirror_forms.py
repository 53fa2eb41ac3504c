"""The mirror tells its tab when a declarative tool's call is taken and answered: Chromium styles
the form (`:tool-form-active`, `:tool-submit-active`) from one to the other with no mutation an
observer sees, so the tab reads the page whole then (`Tab.mark_dirty`)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from cdp_bridge.connection import CDPSession
from tests.support.sessions import EventSession
from webmcp.desktop.mirror import PageTool, ToolMirror

pytestmark = pytest.mark.anyio


class _Session(EventSession):
    """Answers `invokeTool` with a numbered id; plays events to what `on` registered."""

    def __init__(self) -> None:
        super().__init__()
        self.session_id = "S1"
        self.invoked = 0

    async def send(self, method: str, params: dict[str, Any], **_: Any) -> dict[str, Any]:
        assert method == "WebMCP.invokeTool"
        self.invoked += 1
        return {"invocationId": f"inv-{self.invoked}"}


@pytest.mark.parametrize(("form", "told"), [(7, 2), (None, 0)], ids=["declarative", "imperative"])
async def test_a_declarative_calls_take_and_answer_are_told_to_the_tab(form: int | None, told: int) -> None:
    session = _Session()
    marks: list[str] = []
    mirror = ToolMirror(set(), lambda: None, lambda: marks.append("whole"))
    mirror.watch(cast(CDPSession, session))
    tool = PageTool("book", "book", "F1", cast(CDPSession, session), "", {"type": "object"}, {}, form)
    invocation = await mirror.start(tool, {}, timeout=1)
    assert marks == ["whole"][: min(told, 1)], "taken"
    session.emit("WebMCP.toolResponded", {"invocationId": invocation.invocation_id, "status": "Canceled"})
    assert invocation.outcome is not None and invocation.outcome.status == "Canceled"
    assert len(marks) == told, "answered"
