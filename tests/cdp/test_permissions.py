"""The browser's permission settings: every one sent at once, the first refusal reported."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError, CommandTimeout, ProtocolError
from cdp_bridge.permissions import PERMISSIONS, apply_permissions

pytestmark = pytest.mark.anyio


class Browser:
    """Takes the settings as `CDPSession.send_all` does: all written, then all answered."""

    def __init__(self, refuse: frozenset[str] = frozenset(), *, answers: bool = True) -> None:
        self.sent: list[tuple[str, str]] = []
        self.refuse = refuse
        self.answers = answers

    async def send_all(
        self, commands: Sequence[tuple[str, Mapping[str, Any]]], *, timeout: float
    ) -> list[dict[str, Any] | CDPError]:
        answers: list[dict[str, Any] | CDPError] = []
        for method, params in commands:
            assert method == "Browser.setPermission"
            self.sent.append((params["permission"]["name"], params["setting"]))
            refused = params["permission"]["name"] in self.refuse
            answers.append(ProtocolError(method, -32000, "Permissions cannot be overridden here") if refused else {})
        if not self.answers:
            return [CommandTimeout("Browser.setPermission", timeout) for _ in commands]
        return answers


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


async def test_settings_the_browser_did_not_answer_are_the_reason_returned() -> None:
    browser = Browser(answers=False)
    with anyio.fail_after(5):
        reason = await apply_permissions(cast(CDPSession, browser), set(), 1)
    assert reason is not None and "Browser.setPermission" in reason
