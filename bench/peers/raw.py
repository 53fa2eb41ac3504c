"""The floor: the same steps over raw CDP, with no MCP server in between.

Chromium is launched with the project's launcher (`cdp_bridge.launcher.launch_browser`) and
driven through `cdp_bridge.connection.Connection`: `Page.navigate` + `Page.loadEventFired`,
`Accessibility.getFullAXTree` for the state, `WebMCP.invokeTool` + `WebMCP.toolResponded` for a
page tool, `Page.javascriptDialogOpening` + `Page.handleJavaScriptDialog` for confirm(), and
`WebMCP.toolsAdded` for a late tool. It stands beside the servers; it is not one.
"""

from __future__ import annotations

import json
import time
from contextlib import AsyncExitStack
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession, Connection
from cdp_bridge.launcher import LaunchOptions, launch_browser

from .mcp_subject import StepFailed

__all__ = ["RawCdp"]

STEP = 30.0


class RawCdp:
    key = "raw"
    label = "raw CDP (floor)"

    def __init__(self) -> None:
        self._stack = AsyncExitStack()
        self.session: CDPSession | None = None
        self.frame_id = ""
        self.tools: set[str] = set()
        self._tools_changed = anyio.Event()
        self._responded: dict[str, dict[str, Any]] = {}
        self._responded_changed = anyio.Event()

    async def open(self) -> None:
        """Launch Chromium and attach to its page (outside any caller's cancel scope, as for MCP)."""
        browser = await self._stack.enter_async_context(
            await launch_browser(LaunchOptions(headless=True, debugging="port"))
        )
        connection = await self._stack.enter_async_context(Connection.connect(browser.ws_url))
        targets = (await connection.browser.send("Target.getTargets"))["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        attach = {"targetId": page["targetId"], "flatten": True}
        attached = await connection.browser.send("Target.attachToTarget", attach)
        session = self.session = connection.session(attached["sessionId"], page["targetId"])
        session.on("WebMCP.toolsAdded", self._on_added)
        session.on("WebMCP.toolsRemoved", self._on_removed)
        session.on("Page.frameNavigated", self._on_navigated)
        session.on("WebMCP.toolResponded", self._on_responded)
        await session.send("Page.enable")
        await session.send("WebMCP.enable")
        self.frame_id = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]

    async def start(self, site: str, started: float) -> tuple[float, bool, float]:
        """(launch → page session with WebMCP on, False, launch → the page's tools seen)."""
        first = time.perf_counter() - started
        await self.navigate(site + "/")
        await self._wait_tool("list_tickets", STEP)
        return first, False, time.perf_counter() - started

    async def start_state(self, url: str, tool: str, started: float) -> tuple[float, str]:
        """launch → navigate → the page's `tool` seen → the full AX tree."""
        await self.navigate(url)
        await self._wait_tool(tool, STEP)
        text = await self.state()
        return time.perf_counter() - started, text

    async def close(self) -> None:
        # No cancel scope of our own around it: the task groups inside must exit in the scope they
        # entered. Each piece bounds its own shutdown (the SDK's stdio, the launcher's close).
        await self._stack.aclose()

    def _on_added(self, params: dict[str, Any]) -> None:
        self.tools.update(t["name"] for t in params["tools"] if t.get("frameId") == self.frame_id)
        self._wake_tools()

    def _on_removed(self, params: dict[str, Any]) -> None:
        self.tools.difference_update(t["name"] for t in params["tools"] if t.get("frameId") == self.frame_id)
        self._wake_tools()

    def _on_navigated(self, params: dict[str, Any]) -> None:
        if params["frame"]["id"] == self.frame_id:  # a new document brings its own tools, no toolsRemoved
            self.tools.clear()

    def _wake_tools(self) -> None:
        changed, self._tools_changed = self._tools_changed, anyio.Event()
        changed.set()

    def _on_responded(self, params: dict[str, Any]) -> None:
        self._responded[params["invocationId"]] = params
        changed, self._responded_changed = self._responded_changed, anyio.Event()
        changed.set()

    def _live(self) -> CDPSession:
        if self.session is None:
            raise StepFailed("no page session")
        return self.session

    async def _wait_tool(self, name: str, timeout: float) -> None:
        with anyio.fail_after(timeout):
            while name not in self.tools:
                await self._tools_changed.wait()

    async def navigate(self, url: str) -> str:
        session = self._live()
        async with session.expect("Page.loadEventFired") as loaded:
            await session.send("Page.navigate", {"url": url})
            await loaded.wait(STEP)
        return ""

    async def state(self) -> str:
        nodes = (await self._live().send("Accessibility.getFullAXTree", timeout=STEP))["nodes"]
        return json.dumps(nodes)

    async def page_tool(self, name: str, args: dict[str, Any], timeout: float = 15) -> str:
        await self._wait_tool(name, timeout)
        invocation = await self._invoke(name, args)
        with anyio.fail_after(timeout):
            while invocation not in self._responded:
                await self._responded_changed.wait()
        params = self._responded.pop(invocation)
        if params.get("status") != "Completed":
            raise StepFailed(f"{name} ended {params.get('status')}")
        return json.dumps(params.get("output"))

    async def _invoke(self, name: str, args: dict[str, Any]) -> str:
        reply = await self._live().send(
            "WebMCP.invokeTool", {"frameId": self.frame_id, "toolName": name, "input": args}, timeout=STEP
        )
        return str(reply["invocationId"])

    async def open_modal(self) -> str:
        await self.page_tool("open_editor", {})
        return await self.state()

    async def close_modal(self) -> None:
        """An open <dialog> does not stop a navigation over CDP."""

    async def confirm(self) -> tuple[bool, str]:
        session = self._live()
        await self._wait_tool("purge_closed_tickets", STEP)
        async with session.expect("Page.javascriptDialogOpening") as opening:
            invocation = await self._invoke("purge_closed_tickets", {})
            await opening.wait(STEP)
        await session.send("Page.handleJavaScriptDialog", {"accept": True})
        with anyio.fail_after(STEP):
            while invocation not in self._responded:
                await self._responded_changed.wait()
        output = self._responded.pop(invocation).get("output")
        return "purged" in json.dumps(output), "toolResponded after handleJavaScriptDialog"

    async def late_tool(self, url: str, tool: str, timeout: float) -> float:
        await self.navigate(url)
        started = time.perf_counter()
        await self._wait_tool(tool, timeout)
        return time.perf_counter() - started
