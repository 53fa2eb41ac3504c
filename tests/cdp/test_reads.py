"""`reads.node_object`: a node's remote object, or None when it is not in the context's document."""

from __future__ import annotations

from typing import Any

import pytest

from cdp_bridge import reads
from cdp_bridge.errors import ProtocolError

pytestmark = pytest.mark.anyio


class _Resolver:
    """A session's `send` that answers DOM.resolveNode as given, and keeps what it was asked."""

    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any], float]] = []

    async def __call__(self, method: str, params: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        self.asked.append((method, params, timeout))
        if self.answer is None:
            raise ProtocolError(method, -32000, "No node with given id found")
        return self.answer


async def test_a_node_in_the_document_is_its_object_in_the_given_world() -> None:
    send = _Resolver({"object": {"type": "object", "subtype": "node", "objectId": "7.1.2"}})
    assert await reads.node_object(send, 42, 2.0, context=7, group="g") == "7.1.2"
    assert send.asked == [("DOM.resolveNode", {"backendNodeId": 42, "executionContextId": 7, "objectGroup": "g"}, 2.0)]


async def test_a_node_of_a_document_the_frame_left_or_a_gone_node_is_none() -> None:
    # A node of the old document, asked in the new one's world: an object without an id (chromium 156).
    assert await reads.node_object(_Resolver({"object": {"type": "object", "subtype": "null"}}), 42, 2.0, 7) is None
    assert await reads.node_object(_Resolver(None), 42, 2.0) is None


async def test_without_a_context_the_node_is_asked_in_its_documents_main_world() -> None:
    send = _Resolver({"object": {"objectId": "1.1.1"}})
    assert await reads.node_object(send, 3, 1.0) == "1.1.1"
    assert send.asked[0][1] == {"backendNodeId": 3}
