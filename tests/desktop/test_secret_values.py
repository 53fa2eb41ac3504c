"""Masking a result with the secret values the page holds at the moment the result leaves."""

from __future__ import annotations

from typing import Any

import pytest

from cdp_bridge.errors import ProtocolError
from webmcp.desktop.secret_values import current_secrets, read_secret_values
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


class _NavigatingSession:
    """Frames whose documents (and so their isolated worlds) a test replaces, adds and removes."""

    def __init__(self, frames: dict[str, list[str]]) -> None:
        self.frames = frames
        self.calls: list[str] = []
        self._contexts: dict[int, str] = {}
        self._next = 1

    def navigate(self, frame_id: str, values: list[str]) -> None:
        """`frame_id` shows another document: the worlds of the one it left are gone."""
        self._contexts = {c: f for c, f in self._contexts.items() if f != frame_id}
        self.frames[frame_id] = values

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(method)
        if method == "Page.getFrameTree":
            ids = list(self.frames)
            return {"frameTree": {"frame": {"id": ids[0]}, "childFrames": [{"frame": {"id": i}} for i in ids[1:]]}}
        if method == "Page.createIsolatedWorld":
            context = next((c for c, f in self._contexts.items() if f == params["frameId"]), self._next)
            self._contexts[context] = params["frameId"]
            self._next += 1
            return {"executionContextId": context}
        if method == "Runtime.evaluate":
            frame = self._contexts.get(params["contextId"])
            if frame is None or frame not in self.frames:
                raise ProtocolError(method, -32000, "Cannot find context with specified id")
            return {"result": {"value": self.frames[frame]}}
        raise AssertionError(method)


@pytest.mark.anyio
async def test_the_worlds_of_a_read_are_kept_so_the_next_read_is_one_round_trip() -> None:
    session = _NavigatingSession({"F1": ["pw-one"], "F2": ["4111111111111111"]})
    worlds: dict[str, int] = {}
    assert await read_secret_values(session.send, worlds=worlds) == {"pw-one", "4111111111111111"}
    assert set(worlds) == {"F1", "F2"}
    session.calls.clear()
    session.frames["F1"] = ["pw-typed-since"]  # a value set since, in the same document
    assert await read_secret_values(session.send, worlds=worlds) == {"pw-typed-since", "4111111111111111"}
    assert sorted(session.calls) == ["Page.getFrameTree", "Runtime.evaluate", "Runtime.evaluate"]


@pytest.mark.anyio
async def test_a_frame_that_navigated_or_is_new_since_the_last_read_is_still_read() -> None:
    session = _NavigatingSession({"F1": ["pw-one"], "F2": ["card-one"]})
    worlds: dict[str, int] = {}
    await read_secret_values(session.send, worlds=worlds)
    session.navigate("F2", ["card-on-the-next-page"])  # its world went with its document
    session.frames["F3"] = ["otp-in-a-new-frame"]
    assert await read_secret_values(session.send, worlds=worlds) == {
        "pw-one",
        "card-on-the-next-page",
        "otp-in-a-new-frame",
    }
    del session.frames["F2"]  # the frame detached: forgotten
    assert await read_secret_values(session.send, worlds=worlds) == {"pw-one", "otp-in-a-new-frame"}
    assert set(worlds) == {"F1", "F3"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
