"""BrowserTargets against a scripted DevTools endpoint: which targets it serves, which it lets run.

`waitForDebuggerOnStart` pauses every target auto-attach reports. The endpoint plays the
browser: it reports a page, then a dedicated worker under that page and a shared worker at
the browser level, all paused, and records what the bridge sends back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
import websockets
from anyio.abc import TaskGroup
from websockets.asyncio.server import ServerConnection, serve

from cdp_bridge.batch import SetUp, set_up
from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.targets import CLOSED_KEEP, BrowserTargets, PageTarget

pytestmark = pytest.mark.anyio


class _Observer:
    def __init__(self) -> None:
        self.pages: list[PageTarget] = []
        self.frames: list[CDPSession] = []

    def page_added(self, page: PageTarget) -> None:
        self.pages.append(page)

    def page_changed(self, page: PageTarget) -> None:
        pass

    def page_removed(self, page: PageTarget) -> None:
        pass

    def page_crashed(self, page: PageTarget) -> None:
        pass

    def frame_session_added(self, page: PageTarget, session: CDPSession) -> None:
        self.frames.append(session)


def _attached(session_id: str, target_id: str, kind: str, parent: str | None = None) -> str:
    event: dict[str, Any] = {
        "method": "Target.attachedToTarget",
        "params": {
            "sessionId": session_id,
            "targetInfo": {"targetId": target_id, "type": kind, "url": "http://127.0.0.1/", "title": ""},
            "waitingForDebugger": True,
        },
    }
    if parent is not None:
        event["sessionId"] = parent
    return json.dumps(event)


@asynccontextmanager
async def _browser(received: list[dict[str, Any]], done: anyio.Event) -> AsyncIterator[str]:
    """A fake browser that reports a page, its worker and a shared worker once auto-attach is on."""

    async def serve_one(ws: ServerConnection) -> None:
        try:
            async for raw in ws:
                message = json.loads(raw)
                received.append(message)
                answer: dict[str, Any] = {"id": message["id"], "result": {}}
                if "sessionId" in message:
                    answer["sessionId"] = message["sessionId"]
                await ws.send(json.dumps(answer))
                method, session = message["method"], message.get("sessionId")
                if method == "Target.setAutoAttach" and session is None:
                    await ws.send(_attached("S-page", "T-page", "page"))
                    await ws.send(_attached("S-shared", "T-shared", "shared_worker"))
                elif method == "Target.setAutoAttach" and session == "S-page":
                    await ws.send(_attached("S-worker", "T-worker", "worker", parent="S-page"))
                elif method == "Target.detachFromTarget":
                    detached = message["params"]["sessionId"]
                    event = {"method": "Target.detachedFromTarget", "params": {"sessionId": detached}}
                    if session is not None:
                        event["sessionId"] = session
                    await ws.send(json.dumps(event))
                    if {m["params"].get("sessionId") for m in received if m["method"] == "Target.detachFromTarget"} >= {
                        "S-worker",
                        "S-shared",
                    }:
                        done.set()
        except websockets.ConnectionClosed:
            pass

    async with serve(serve_one, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/devtools/browser/test"


async def test_targets_the_bridge_does_not_serve_are_resumed_then_detached() -> None:
    received: list[dict[str, Any]] = []
    done = anyio.Event()
    observer = _Observer()

    async def setup(page: PageTarget, session: CDPSession) -> None:
        pass

    async with _browser(received, done) as url, Connection.connect(url) as conn, anyio.create_task_group() as tg:
        targets = BrowserTargets(conn, tg, observer, setup)
        await targets.start()
        with anyio.fail_after(10):
            await done.wait()
        tg.cancel_scope.cancel()

    def sent(method: str, session: str | None) -> list[dict[str, Any]]:
        return [m for m in received if m["method"] == method and m.get("sessionId") == session]

    for worker, parent in (("S-worker", "S-page"), ("S-shared", None)):
        resumed = sent("Runtime.runIfWaitingForDebugger", worker)
        detached = [m for m in sent("Target.detachFromTarget", parent) if m["params"]["sessionId"] == worker]
        assert resumed and detached, f"{worker} must be resumed and let go"
        assert received.index(resumed[0]) < received.index(detached[0]), "resume before detaching"
        assert not sent("Target.setAutoAttach", worker), "no session is set up on a worker"
    assert [p.target_id for p in observer.pages] == ["T-page"] and not observer.frames
    assert sent("Runtime.runIfWaitingForDebugger", "S-page"), "the page itself runs once set up"
    browser_filter = sent("Target.setAutoAttach", None)[0]["params"]["filter"]
    assert {"type": "worker", "exclude": True} not in browser_filter and {} in browser_filter


def test_destroyed_targets_are_remembered_up_to_a_bound_over_a_long_run() -> None:
    # Every iframe and worker target a long run destroys was kept forever (issue 22 item 5).
    targets = BrowserTargets(cast(Connection, None), cast(TaskGroup, None), _Observer(), _no_setup)
    for number in range(CLOSED_KEEP + 500):
        targets._on_destroyed({"targetId": f"T{number}"})
    assert len(targets._closed_targets) == CLOSED_KEEP
    assert "T0" not in targets._closed_targets
    last = f"T{CLOSED_KEEP + 499}"
    # A late title change for a page just destroyed is still ignored, not kept for a page to come.
    targets._on_info_changed({"targetInfo": {"targetId": last, "type": "page", "url": "http://x/", "title": ""}})
    assert last not in targets._latest_info


async def _no_setup(page: PageTarget, session: CDPSession) -> None:
    pass


@asynccontextmanager
async def _browser_with_a_noopener_popup(received: list[dict[str, Any]]) -> AsyncIterator[str]:
    """A fake browser whose one page has no renderer until it runs, as a `target=_blank` link's tab.

    Its page-side commands are answered only once the page runs, and it runs only once resumed;
    then its document's request pauses (`Fetch.requestPaused`) until the bridge continues it, and
    only then is its renderer made: the set-up is answered, then the document commits.
    """

    async def serve_one(ws: ServerConnection) -> None:
        waiting: list[dict[str, Any]] = []

        async def answer(message: dict[str, Any]) -> None:
            await ws.send(json.dumps({"id": message["id"], "result": {}, "sessionId": message.get("sessionId")}))

        async def event(method: str, params: dict[str, Any]) -> None:
            await ws.send(json.dumps({"method": method, "params": params, "sessionId": "S-popup"}))

        try:
            async for raw in ws:
                message = json.loads(raw)
                received.append(message)
                method, session = message["method"], message.get("sessionId")
                if session is None:
                    await ws.send(json.dumps({"id": message["id"], "result": {}}))
                    if method == "Target.setAutoAttach":
                        await ws.send(_attached("S-popup", "T-popup", "page"))
                elif method in ("Target.setAutoAttach", "Runtime.runIfWaitingForDebugger"):  # the browser's own
                    await answer(message)
                    if method == "Runtime.runIfWaitingForDebugger":
                        await event("Fetch.requestPaused", {"requestId": "R1"})
                elif method == "Fetch.continueRequest":
                    await answer(message)
                    for queued in waiting:  # the renderer is made: what waited for it is answered
                        await answer(queued)
                    await event("Page.frameNavigated", {"frame": {"id": "T-popup", "url": "http://127.0.0.1/p"}})
                else:
                    waiting.append(message)
        except websockets.ConnectionClosed:
            pass

    async with serve(serve_one, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/devtools/browser/test"


async def test_a_page_that_answers_only_once_it_runs_is_set_up_run_and_added() -> None:
    # A target=_blank link's tab never became a window: the bridge waited for the set-up's
    # answers before letting the page run, and the page answers only once it runs.
    received: list[dict[str, Any]] = []
    heard: list[str] = []
    observer = _Observer()

    async with (
        _browser_with_a_noopener_popup(received) as url,
        Connection.connect(url) as conn,
        anyio.create_task_group() as tg,
    ):

        async def setup(page: PageTarget, session: CDPSession) -> None:
            def paused(params: dict[str, Any]) -> None:
                tg.start_soon(session.send, "Fetch.continueRequest", params)

            session.on("Fetch.requestPaused", paused)
            session.on("Page.frameNavigated", lambda p: heard.append("navigated"))
            await set_up(session, [SetUp("Page.enable"), SetUp("Fetch.enable"), SetUp("Page.getFrameTree")])
            heard.append("set up")

        targets = BrowserTargets(conn, tg, observer, setup)
        await targets.start()
        page = await targets.wait_attached("T-popup", timeout=5)
        tg.cancel_scope.cancel()

    assert page is not None and [p.target_id for p in observer.pages] == ["T-popup"], "the page is published"
    popup = [m["method"] for m in received if m.get("sessionId") == "S-popup"]
    assert popup.index("Page.getFrameTree") < popup.index("Runtime.runIfWaitingForDebugger"), (
        f"the set-up is written before the page runs: {popup}"
    )
    assert heard == ["set up", "navigated"], "what the page did once it ran is heard after the set-up's answers"
