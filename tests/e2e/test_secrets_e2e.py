"""End to end: twenty secret-field variants never leave the bridge, on any surface (issue 10 item 5).

`/hostile/secrets.html` fills every secret field by script; its page tool `echo_form`
answers all values after setting one more that no snapshot has seen. Each surface the
agent reads is searched for every value.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from cdp_bridge.errors import ProtocolError
from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage
from webmcp.desktop.secret_values import read_secret_fields, read_secret_values
from webmcp.view.masking import MASK, mask_secrets

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGE = "/hostile/secrets.html"


async def _open(stage: Stage) -> tuple[str, Any]:
    doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
    win = next(w["id"] for w in doc["windows"] if not w["modal"])
    result = await stage.call(f"{win}__navigate", {"url": stage.site + PAGE})
    assert not result.is_error, result.structured_content
    await stage.wait_tools(lambda names: f"{win}__echo_form" in names)
    # The view is built once the plain field's value shows (the control that proves we look in the right place).
    await stage.wait_windows(lambda d: "harbor-otter" in json.dumps(d))
    return win, await stage.user_page(PAGE)


async def _windows(stage: Stage, win: str) -> str:
    return json.dumps(await stage.windows(), ensure_ascii=False)


async def _read_content(stage: Stage, win: str) -> str:
    result = await stage.call(f"{win}__read_content")
    assert not result.is_error, result.structured_content
    return json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(c, "text", "") for c in result.content
    )


async def _ui_current(stage: Stage, win: str) -> str:
    return (await stage.client.read_resource("ui://current")).contents[0].text


async def _tool_result(stage: Stage, win: str) -> str:
    result = await stage.call(f"{win}__echo_form")
    assert not result.is_error, result.structured_content
    return json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(c, "text", "") for c in result.content
    )


SURFACES = {
    "app://windows": _windows,
    "read_content": _read_content,
    "ui://current": _ui_current,
    "page tool result": _tool_result,
}


@pytest.mark.parametrize(
    "surface",
    SURFACES,
)
async def test_no_secret_value_reaches_the_agent(stage: Stage, surface: str) -> None:
    win, page = await _open(stage)
    text = await SURFACES[surface](stage, win)
    secrets: list[str] = await page.evaluate("window.__secrets")
    assert len(secrets) >= 20
    leaked = [s for s in secrets if s in text]
    assert leaked == []


async def test_the_plain_field_still_shows_and_a_password_field_is_masked_today(stage: Stage) -> None:
    """What works before integration: `type=password` is masked everywhere, plain values show."""
    win, page = await _open(stage)
    secrets: list[str] = await page.evaluate("window.__secrets")
    for surface in SURFACES.values():
        text = await surface(stage, win)
        assert secrets[0] not in text  # s01, type=password
    assert "harbor-otter" in await _windows(stage, win)


async def test_the_element_rule_finds_every_variant_in_a_real_page(site: str, browser: BrowserProcess) -> None:
    """`read_secret_fields` in Chromium: all 23 secret fields by backend id (two in open shadow roots, one
    of them nested), their values, not the nickname."""
    async with async_playwright() as pw:
        user = await pw.chromium.connect_over_cdp(browser.ws_url)
        try:
            page = await user.contexts[0].new_page()
            await page.goto(site + PAGE)
            cdp = await page.context.new_cdp_session(page)

            async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
                try:
                    return dict(await cdp.send(method, params))
                except PlaywrightError as exc:
                    raise ProtocolError(method, -1, str(exc)) from exc

            with anyio.fail_after(20):
                found = await read_secret_fields(send, timeout=10)
                secrets: list[str] = await page.evaluate("window.__secrets")
                assert set(secrets) <= found.values
                assert "harbor-otter" not in found.values
                assert len(found.backend_ids) == 23  # 22 filled variants and the empty #late
                doc = await send("DOM.getDocument", {"depth": 0})
                plain = await send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "#plain"})
                described = await send("DOM.describeNode", {"nodeId": plain["nodeId"]})
                assert described["node"]["backendNodeId"] not in found.backend_ids

                await page.evaluate("document.getElementById('late').value = 'set-by-script-after-the-snapshot'")
                now = await read_secret_values(send, timeout=10)
                masked = mask_secrets({"echo": "pw set-by-script-after-the-snapshot"}, now)
            assert masked == {"echo": f"pw {MASK}"}
        finally:
            await user.close()
