"""The write guard asks the observer's world of the main document in one round trip once it knows it."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import ProtocolError
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts
from webmcp.desktop.input_guard import WriteGuard

pytestmark = pytest.mark.anyio


class _Document:
    """The main document's observer world: its input counter, and the context it lives in."""

    def __init__(self) -> None:
        self.context = 1
        self.inputs = 0
        self.calls: list[str] = []

    def navigate(self) -> None:
        """Another document: a new world, a counter starting again."""
        self.context += 1
        self.inputs = 0

    async def send(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        self.calls.append(method)
        if method == "Page.createIsolatedWorld":
            return {"executionContextId": self.context}
        if method == "Runtime.evaluate":
            if params["contextId"] != self.context:
                raise ProtocolError(method, -32000, "Cannot find context with specified id")
            return {"result": {"value": self.inputs}}
        raise AssertionError(method)


def _guard(document: _Document) -> WriteGuard:
    page = PageTarget(target_id="T", session=cast(CDPSession, document))
    return WriteGuard(page, Timeouts(), anyio.sleep_forever)


async def test_the_second_read_of_the_counter_is_one_round_trip() -> None:
    document = _Document()
    guard = _guard(document)
    assert await guard.count(5) == 0
    document.calls.clear()
    document.inputs = 3  # the person typed
    assert await guard.count(5) == 3
    assert document.calls == ["Runtime.evaluate"]


async def test_after_a_navigation_the_new_documents_counter_is_read() -> None:
    document = _Document()
    guard = _guard(document)
    document.inputs = 4
    assert await guard.count(5) == 4
    document.navigate()
    document.inputs = 1
    assert await guard.count(5) == 1
    assert await guard.typed_since(1) is False


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
