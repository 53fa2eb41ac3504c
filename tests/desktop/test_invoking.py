"""Starting a page tool's call (`start_invocation`) against a scripted browser on real OS pipes.

`invokeTool` goes out from the caller's own task when the pipe takes it at once; a page that
takes the call only after the deadline (its main thread busy), or after the agent gave up,
has it cancelled the moment it does, whichever way the command went out.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from cdp_bridge import Connection, ConnectionClosed, Timeouts
from cdp_bridge.transport import PipeTransport
from webmcp.desktop.invoking import start_invocation
from webmcp.desktop.mirror import PageTool, ToolMirror
from webmcp.errors import ToolError

pytestmark = pytest.mark.anyio

_TARGET = "T1"


class Browser:
    """The browser's end of the debugging pipe: answers `invokeTool` when told to, records what came."""

    def __init__(self, transport: PipeTransport) -> None:
        self.transport = transport
        self.received: list[dict[str, Any]] = []
        self.take = anyio.Event()
        """Set: `invokeTool` is answered (until then the page is busy and takes nothing)."""
        self.take.set()
        self.cancelled = anyio.Event()

    async def serve(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                message = json.loads(await self.transport.receive())
                self.received.append(message)
                if message["method"] == "WebMCP.invokeTool":
                    await self.take.wait()
                    await self._answer(message, {"invocationId": f"inv-{message['id']}"})
                elif message["method"] == "WebMCP.cancelInvocation":
                    self.cancelled.set()
                    await self._answer(message, {})
                else:
                    await self._answer(message, {})

    async def _answer(self, message: dict[str, Any], result: dict[str, Any]) -> None:
        await self.transport.send(json.dumps({"id": message["id"], "sessionId": "S1", "result": result}))

    def methods(self) -> list[str]:
        return [m["method"] for m in self.received]


class _Mirror(ToolMirror):
    """The tab's mirror, offering the tools the test says the page registered."""

    def __init__(self) -> None:
        super().__init__(set(), lambda: None)
        self.offered: dict[tuple[str | None, str, str], PageTool] = {}

    def current(self, key: tuple[str | None, str, str]) -> PageTool | None:
        return self.offered.get(key)


class Host:
    """What `start_invocation` needs of a tab; its followers run in the test's task group."""

    def __init__(self, tg: anyio.abc.TaskGroup, deadline_s: float = 5.0) -> None:
        self.timeouts = Timeouts(command=5.0, tool_call=deadline_s)
        self.mirror = _Mirror()
        self.followers = 0
        self._tg = tg

    replacing_document = False

    async def navigation_settled(self, budget: float) -> None:
        pass

    def ended(self) -> str | None:
        return None

    @contextlib.contextmanager
    def woken_by_its_end(self, event: anyio.Event) -> Iterator[None]:
        yield

    def spawn_follower(self, func: Any, *args: Any) -> None:
        self.followers += 1
        self._tg.start_soon(func, *args)


@asynccontextmanager
async def stage() -> AsyncIterator[tuple[Browser, Connection, anyio.abc.TaskGroup]]:
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    browser = Browser(PipeTransport(to_browser_r, from_browser_w))
    async with anyio.create_task_group() as tg, Connection.open(PipeTransport(from_browser_r, to_browser_w)) as conn:
        tg.start_soon(browser.serve)
        try:
            yield browser, conn, tg
        finally:
            browser.take.set()
            await browser.transport.close()
            tg.cancel_scope.cancel()


def _tool(conn: Connection) -> PageTool:
    session = conn.session("S1", _TARGET)
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    return PageTool("search", "search", _TARGET, session, "", schema, {}, None)


def _offered(host: Host, tool: PageTool) -> PageTool:
    """`tool`, offered by the page as `host`'s mirror knows it."""
    host.mirror.offered[tool.key] = tool
    return tool


async def test_the_call_is_written_by_its_own_task_with_the_activation_before_it() -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        invocation = await start_invocation(
            host, host.mirror, _offered(host, _tool(conn)), {"q": "a"}, anyio.current_time() + 5
        )
    assert invocation.invocation_id is not None and invocation.invocation_id.startswith("inv-")
    assert host.followers == 0, "no task was needed to send it"
    assert browser.methods() == ["Runtime.evaluate", "WebMCP.invokeTool"]
    assert browser.received[0]["params"]["userGesture"] is True
    assert host.mirror.in_flight == {invocation}


async def test_a_read_only_tool_is_called_without_the_users_activation() -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        tool = _tool(conn)
        quiet = PageTool("peek", "peek", _TARGET, tool.session, "", tool.input_schema, {"readOnly": True}, None)
        await start_invocation(host, host.mirror, _offered(host, quiet), {"q": "a"}, anyio.current_time() + 5)
    assert browser.methods() == ["WebMCP.invokeTool"]


async def test_a_command_too_long_for_one_pipe_write_is_sent_by_a_task_of_its_own() -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        invocation = await start_invocation(
            host, host.mirror, _offered(host, _tool(conn)), {"q": "x" * 8192}, anyio.current_time() + 5
        )
    assert invocation.invocation_id is not None
    assert host.followers == 1
    assert browser.methods() == ["Runtime.evaluate", "WebMCP.invokeTool"]


@pytest.mark.parametrize("arguments", [{"q": "a"}, {"q": "x" * 8192}], ids=["written-at-once", "sent-by-a-task"])
async def test_a_call_the_page_takes_only_after_its_deadline_is_cancelled_once_taken(arguments: dict[str, str]) -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg, deadline_s=0.05)
        browser.take = anyio.Event()  # the page's main thread is busy
        with pytest.raises(ToolError) as refused:
            await start_invocation(
                host, host.mirror, _offered(host, _tool(conn)), arguments, anyio.current_time() + 0.05
            )
        assert refused.value.code == "action_timeout" and refused.value.to_dict()["pageTold"] is False
        assert "WebMCP.cancelInvocation" not in browser.methods(), "nothing to cancel before the page takes it"
        browser.take.set()
        await _the_taken_call_is_cancelled(browser, host)
        assert host.mirror.in_flight == set(), "the late invocation is not tracked any more"


async def test_a_call_its_agent_gave_up_on_before_the_page_took_it_is_cancelled_once_taken() -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        browser.take = anyio.Event()
        with anyio.CancelScope() as scope:
            tg.start_soon(_cancel_when_sent, browser, scope)
            await start_invocation(host, host.mirror, _offered(host, _tool(conn)), {"q": "a"}, anyio.current_time() + 5)
        assert scope.cancelled_caught
        browser.take.set()
        with anyio.fail_after(5):
            await browser.cancelled.wait()


async def _the_taken_call_is_cancelled(browser: Browser, host: Host) -> None:
    """The page is told to cancel the one call it took, and the mirror stops tracking it."""
    with anyio.fail_after(5):
        await browser.cancelled.wait()
    (cancel,) = [m for m in browser.received if m["method"] == "WebMCP.cancelInvocation"]
    (invoke,) = [m for m in browser.received if m["method"] == "WebMCP.invokeTool"]
    assert cancel["params"]["invocationId"] == f"inv-{invoke['id']}"
    with anyio.fail_after(5):
        while host.mirror.in_flight:
            await anyio.wait_all_tasks_blocked()


async def _cancel_when_sent(browser: Browser, scope: anyio.CancelScope) -> None:
    while "WebMCP.invokeTool" not in browser.methods():
        await anyio.wait_all_tasks_blocked()
    scope.cancel()


async def test_a_refused_call_is_a_tool_error_and_leaves_nothing_in_flight() -> None:
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        tool = _offered(host, _tool(conn))
        await browser.transport.close()  # the browser went away
        with pytest.raises(ToolError) as refused:
            await start_invocation(host, host.mirror, tool, {"q": "a"}, anyio.current_time() + 5)
    assert refused.value.code == "call_interrupted"
    assert host.mirror.in_flight == set()


class _GiveUpOnAnswer:
    """Stands in for an event the answer sets: the caller gives up in that same turn of the loop."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope

    def set(self) -> None:
        self.scope.cancel()


@pytest.mark.parametrize("arguments", [{"q": "a"}, {"q": "x" * 8192}], ids=["written-at-once", "sent-by-a-task"])
async def test_a_call_given_up_on_as_the_page_takes_it_is_cancelled(
    arguments: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client's cancel and invokeTool's answer came together (a CI run's test of a client's
    # cancel saw the page go on): the invocation never reached the call, so nobody cancelled it.
    async with stage() as (browser, conn, tg):
        host = Host(tg)
        with anyio.CancelScope() as scope:
            begin, start = host.mirror.begin, host.mirror.start

            def begin_then_give_up(*args: Any, **kwargs: Any) -> Any:
                starting = begin(*args, **kwargs)
                if starting is not None:
                    starting.reply.wakes(_GiveUpOnAnswer(scope))  # type: ignore[arg-type]
                return starting

            async def start_then_give_up(*args: Any, **kwargs: Any) -> Any:
                invocation = await start(*args, **kwargs)
                scope.cancel()
                return invocation

            monkeypatch.setattr(host.mirror, "begin", begin_then_give_up)
            monkeypatch.setattr(host.mirror, "start", start_then_give_up)
            await start_invocation(host, host.mirror, _offered(host, _tool(conn)), arguments, anyio.current_time() + 5)
        assert scope.cancelled_caught, "the caller gave up"
        await _the_taken_call_is_cancelled(browser, host)
