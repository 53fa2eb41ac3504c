"""Masking a result with the secret values the page holds at the moment the result leaves."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp.desktop.secret_values import current_secrets
from webmcp.view.masking import MASK, mask_secrets
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


class _FakeTab:
    """A tab whose last read saw `known`, over the fake sessions."""

    def __init__(self, sessions: list[_FakeSession], known: frozenset[str], *, fields: bool, dialog: bool) -> None:
        self._sessions, self._known, self._fields = sessions, known, fields
        self.dialog = object() if dialog else None

    def has_secret_fields(self) -> bool:
        return self._fields

    def secret_values(self) -> frozenset[str]:
        return self._known

    def sessions(self) -> list[Any]:
        return self._sessions


@pytest.mark.anyio
async def test_current_secrets_reads_the_values_every_frame_holds_right_now() -> None:
    main = _FakeSession({"F1": ["s3cret-set-by-script"], "F2": ["4111111111111111"]})
    oopif = _FakeSession({"F3": ["918273"]})
    tab = _FakeTab([main, oopif], frozenset({"typed-earlier"}), fields=True, dialog=False)
    values = await current_secrets(tab, timeout=5)
    assert values == {"typed-earlier", "s3cret-set-by-script", "4111111111111111", "918273"}
    result = {"echo": "pw=s3cret-set-by-script card=4111111111111111", "otp": ["918273"], "old": "typed-earlier"}
    assert mask_secrets(result, values) == {"echo": f"pw={MASK} card={MASK}", "otp": [MASK], "old": MASK}
    assert main.calls.count("Runtime.evaluate") == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("fields", "dialog"), [(False, False), (True, True)], ids=["no secret field", "under a dialog"]
)
async def test_current_secrets_does_not_ask_a_page_without_secret_fields_or_under_a_dialog(
    fields: bool, dialog: bool
) -> None:
    main = _FakeSession({"F1": ["s3cret-set-by-script"]})
    tab = _FakeTab([main], frozenset({"typed-earlier"}), fields=fields, dialog=dialog)
    assert await current_secrets(tab, timeout=5) == {"typed-earlier"}
    assert main.calls == []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
