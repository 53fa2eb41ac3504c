"""The browser's permission settings: every one sent at once, the first refusal reported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import ProtocolError
from cdp_bridge.permissions import PERMISSIONS, apply_permissions

pytestmark = pytest.mark.anyio

SETTINGS = sum(len(d) for d in PERMISSIONS.values())


class Browser:
    """Answers no setting until every one has been sent: settings sent one by one never finish."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.sent: list[tuple[str, str]] = []
        self.all_sent = anyio.Event()
        self.refuse = refuse

    async def send(self, method: str, params: Mapping[str, Any], *, timeout: float) -> dict[str, Any]:
        assert method == "Browser.setPermission"
        self.sent.append((params["permission"]["name"], params["setting"]))
        if len(self.sent) == SETTINGS:
            self.all_sent.set()
        await self.all_sent.wait()
        if params["permission"]["name"] in self.refuse:
            raise ProtocolError(method, -32000, "Permissions cannot be overridden here")
        return {}


async def test_every_setting_is_sent_before_any_answer_and_only_the_granted_are_granted() -> None:
    browser = Browser()
    with anyio.fail_after(5):
        assert await apply_permissions(cast(CDPSession, browser), {"clipboard"}, 1) is None
    assert sorted(browser.sent) == sorted(
        [(d, "granted" if name == "clipboard" else "denied") for name, ds in PERMISSIONS.items() for d in ds]
    )


async def test_a_refused_setting_is_the_reason_returned() -> None:
    browser = Browser(refuse=frozenset({"camera", "microphone"}))
    with anyio.fail_after(5):
        reason = await apply_permissions(cast(CDPSession, browser), set(), 1)
    assert reason is not None and "cannot be overridden" in reason
