"""The reconnecting transport against a scripted farm that drops its session (a real websocket)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
import websockets
from websockets.asyncio.server import ServerConnection, serve

from cdp_bridge import Connection, ConnectionClosed, SessionClosed, Timeouts
from cdp_bridge.reconnect import ReconnectingTransport

pytestmark = pytest.mark.anyio


async def test_a_dropped_session_closes_its_pages_fails_its_calls_and_a_new_one_is_announced() -> None:
    sessions: list[list[dict[str, Any]]] = []

    async def farm(ws: ServerConnection) -> None:
        seen: list[dict[str, Any]] = []
        sessions.append(seen)
        number = len(sessions)
        try:
            async for raw in ws:
                message = json.loads(raw)
                seen.append(message)
                if message["method"] == "Target.setAutoAttach":
                    await ws.send(json.dumps({"id": message["id"], "result": {}}))
                    info = {"targetId": f"T{number}", "type": "page", "url": "about:blank", "title": ""}
                    event = {"sessionId": f"S{number}", "targetInfo": info, "waitingForDebugger": False}
                    await ws.send(json.dumps({"method": "Target.attachedToTarget", "params": event}))
                elif message["method"] == "Page.navigate" and number == 1:
                    await ws.close()  # the farm ends the session with a call in flight
                else:
                    answer = {"id": message["id"], "result": {"session": number}}
                    if "sessionId" in message:
                        answer["sessionId"] = message["sessionId"]
                    await ws.send(json.dumps(answer))
        except websockets.ConnectionClosed:
            pass

    async with serve(farm, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/session?token=t"
        transport = await ReconnectingTransport.open(url, timeouts=Timeouts(launch=5), give_up_after=10)
        async with Connection.open(transport) as conn:
            attached: list[str] = []
            destroyed: list[str] = []
            conn.browser.on("Target.attachedToTarget", lambda p: attached.append(p["sessionId"]))
            conn.browser.on("Target.targetDestroyed", lambda p: destroyed.append(p["targetId"]))
            async with conn.browser.expect("Target.attachedToTarget") as first:
                await conn.browser.send("Target.setAutoAttach", {"autoAttach": True, "flatten": True})
                await first.wait(5)
            page = conn.session("S1", "T1")
            async with conn.browser.expect("Target.attachedToTarget", lambda p: p["sessionId"] == "S2") as second:
                with anyio.fail_after(5), pytest.raises(SessionClosed):
                    await page.send("Page.navigate", {"url": "http://127.0.0.1/"})
                await second.wait(10)
            assert destroyed == ["T1"] and attached == ["S1", "S2"]
            assert (await conn.session("S2", "T2").send("Runtime.evaluate")) == {"session": 2}
            assert not conn.closed.is_set()
    replayed = [m for m in sessions[1] if m["method"] == "Target.setAutoAttach"]
    assert len(replayed) == 1 and replayed[0]["id"] < 0, "the new session got the settings again"


async def test_no_new_session_in_time_closes_the_connection() -> None:
    async def farm_that_hangs_up(ws: ServerConnection) -> None:
        await ws.close()

    async with serve(farm_that_hangs_up, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        transport = await ReconnectingTransport.open(url, timeouts=Timeouts(launch=2), give_up_after=1)
        server.close()  # the farm is gone for good
        async with Connection.open(transport) as conn:
            with anyio.fail_after(10):
                await conn.closed.wait()
            assert "no new session" in conn.close_reason
            with pytest.raises(ConnectionClosed):
                await conn.browser.send("Browser.getVersion")
