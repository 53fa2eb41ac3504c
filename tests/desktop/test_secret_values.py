"""Masking a result with the secret values the page holds at the moment the result leaves."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp.desktop.secret_values import mask_outgoing
from webmcp.view.masking import MASK
from webmcp.view.secrets import READ_SECRETS_JS


class _FakeSession:
    """A CDP session whose frames hold secret values the page set after the last snapshot."""

    def __init__(self, frames: dict[str, list[str]]) -> None:
        self.frames = frames
        self.calls: list[str] = []

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(method)
        if method == "Page.getFrameTree":
            ids = list(self.frames)
            return {"frameTree": {"frame": {"id": ids[0]}, "childFrames": [{"frame": {"id": i}} for i in ids[1:]]}}
        if method == "Page.createIsolatedWorld":
            return {"executionContextId": params["frameId"]}
        if method == "Runtime.evaluate":
            assert params["expression"] == READ_SECRETS_JS
            return {"result": {"value": self.frames[params["contextId"]]}}
        raise AssertionError(method)


@pytest.mark.anyio
async def test_mask_outgoing_reads_the_values_the_page_holds_right_now() -> None:
    main = _FakeSession({"F1": ["s3cret-set-by-script"], "F2": ["4111111111111111"]})
    oopif = _FakeSession({"F3": ["918273"]})
    result = {"echo": "pw=s3cret-set-by-script card=4111111111111111", "otp": ["918273"], "old": "typed-earlier"}
    masked = await mask_outgoing(result, [main.send, oopif.send], known={"typed-earlier"})
    assert masked == {"echo": f"pw={MASK} card={MASK}", "otp": [MASK], "old": MASK}
    assert main.calls.count("Runtime.evaluate") == 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
