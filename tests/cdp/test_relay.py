"""The extension relay on 127.0.0.1 against scripted clients over real WebSockets.

What is tested is the bridge's side: who may connect (Origin, the pairing proof both ways),
and how a `Connection` over the relay lives through an extension leaving and coming back.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from cdp_bridge import Connection, ProtocolError, SessionClosed
from cdp_bridge.relay import ExtensionRelay, load_pairing_code, proof

pytestmark = pytest.mark.anyio

CODE = "ABCD-EFGH-JKMN"
ORIGIN = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"


@asynccontextmanager
async def extension(port: int, code: str = CODE, origin: str | None = ORIGIN) -> AsyncIterator[ClientConnection]:
    """A scripted extension that completes the pairing handshake (or fails it with a wrong code)."""
    headers = {"Origin": origin} if origin else None
    async with connect(f"ws://127.0.0.1:{port}/", origin=None, additional_headers=headers) as ws:
        challenge = json.loads(await ws.recv())
        nonce = secrets.token_hex(16)
        await ws.send(
            json.dumps({"relay": "hello", "proof": proof(code, "extension", challenge["nonce"]), "nonce": nonce})
        )
        welcome = json.loads(await ws.recv())
        assert welcome == {"relay": "welcome", "proof": proof(CODE, "bridge", nonce)}, "the bridge proves itself"
        yield ws


async def recv_json(ws: ClientConnection) -> dict[str, Any]:
    with anyio.fail_after(5):
        return json.loads(await ws.recv())


async def test_foreign_or_missing_origin_is_refused_before_the_upgrade() -> None:
    async with ExtensionRelay.serve(CODE, port=0) as relay:
        for origin in (None, "https://evil.example", "chrome-extension://"):
            headers = {"Origin": origin} if origin else None
            with pytest.raises(websockets.InvalidStatus) as refused:
                async with connect(f"ws://127.0.0.1:{relay.port}/", additional_headers=headers):
                    pass
            assert refused.value.response.status_code == 403
        assert not relay.connected


async def test_wrong_pairing_proof_is_closed_without_passing_any_cdp() -> None:
    async with ExtensionRelay.serve(CODE, port=0) as relay:
        async with connect(f"ws://127.0.0.1:{relay.port}/", additional_headers={"Origin": ORIGIN}) as ws:
            challenge = await recv_json(ws)
            wrong = proof("ZZZZ-ZZZZ-ZZZZ", "extension", challenge["nonce"])
            await ws.send(json.dumps({"relay": "hello", "proof": wrong, "nonce": secrets.token_hex(16)}))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await recv_json(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4003
        assert not relay.connected


async def test_commands_pass_through_and_an_extension_that_leaves_and_returns_is_transparent() -> None:
    async with ExtensionRelay.serve(CODE, port=0) as relay, Connection.open(relay, close_transport=False) as conn:
        # Before any extension: browser-wide settings are accepted (and kept), the rest is refused.
        await conn.browser.send("Target.setAutoAttach", {"autoAttach": True, "flatten": True})
        with pytest.raises(ProtocolError, match="no extension is connected"):
            await conn.browser.send("Target.createTarget", {"url": "about:blank"})
        detached: list[dict[str, Any]] = []
        destroyed: list[dict[str, Any]] = []
        conn.browser.on("Target.detachedFromTarget", detached.append)
        conn.browser.on("Target.targetDestroyed", destroyed.append)

        async with extension(relay.port) as ws:
            replayed = await recv_json(ws)
            assert replayed["method"] == "Target.setAutoAttach" and replayed["id"] < 0
            await ws.send(json.dumps({"id": replayed["id"], "result": {}}))
            info = {"targetId": "T1", "type": "page", "url": "http://127.0.0.1/", "title": "t"}
            async with conn.browser.expect("Target.attachedToTarget") as attached:
                await ws.send(json.dumps({"method": "Target.attachedToTarget",
                                          "params": {"sessionId": "S1", "targetInfo": info}}))  # fmt: skip
                await attached.wait(5)
            page = conn.session("S1", "T1")

            async def answer_one() -> None:
                command = await recv_json(ws)
                assert command["sessionId"] == "S1"
                await ws.send(json.dumps({"id": command["id"], "sessionId": "S1", "result": {"ok": 1}}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_one)
                assert await page.send("Runtime.evaluate", {"expression": "1"}) == {"ok": 1}

            async def leave_with_a_command_unanswered() -> None:
                await recv_json(ws)
                await ws.close()

            async with anyio.create_task_group() as tg, conn.browser.expect("Target.targetDestroyed") as gone:
                tg.start_soon(leave_with_a_command_unanswered)
                with anyio.fail_after(5), pytest.raises(SessionClosed):
                    await page.send("Page.navigate", {"url": "http://127.0.0.1/x"})
                await gone.wait(5)
        assert detached == [{"sessionId": "S1", "targetId": "T1"}] and destroyed == [{"targetId": "T1"}]
        assert page.closed and not conn.closed.is_set()

        async with extension(relay.port) as ws:  # it comes back: the settings are sent again
            again = await recv_json(ws)
            assert again["method"] == "Target.setAutoAttach"


async def test_a_newer_paired_extension_replaces_the_older_one() -> None:
    async with ExtensionRelay.serve(CODE, port=0) as relay:
        async with extension(relay.port) as first, extension(relay.port):
            with pytest.raises(websockets.ConnectionClosed):
                await recv_json(first)
            assert relay.connected


def test_pairing_code_is_kept_between_runs_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    code = load_pairing_code()
    assert load_pairing_code() == code and len(code.replace("-", "")) == 12
    stored = tmp_path / "webmcp-bridge" / "extension-pairing-code"
    assert stored.stat().st_mode & 0o777 == 0o600
    assert load_pairing_code(renew=True) != code
