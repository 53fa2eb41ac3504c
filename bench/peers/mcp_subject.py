"""One MCP server on stdio, driven by the official `mcp.Client`, with everything it says recorded.

The same client drives the bridge and both peers: handshake protocol (`mode="legacy"`, what
both peers speak), stdio transport, the server's stderr to a file in its own work directory.
Every text the server sends back (tool results, lists, resources, notifications) is kept, so
the bench can later ask whether a secret appears anywhere in what a server put out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client

__all__ = ["McpSubject", "StepFailed", "result_text"]


class StepFailed(Exception):
    """A measure could not be taken; the message says why (it lands in the table as 'failed: …')."""


def result_text(result: types.CallToolResult) -> str:
    """All text a tool result carries: its text contents and its structured content (compact JSON, as sent)."""
    parts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(parts)


class McpSubject:
    """A server process under test: start it, call it, and keep its every word."""

    def __init__(self, command: list[str], workdir: Path, env: dict[str, str] | None = None) -> None:
        self.command = command
        self.workdir = workdir
        self.env = env or {}
        self.outputs: list[str] = []
        self.stderr_path = workdir / "stderr.log"
        self._changed = anyio.Event()
        self._counts = {"tools": 0, "resource": 0}
        self._stack = AsyncExitStack()
        self.client: Client | None = None
        self._listed: set[str] = set()
        self._listed_at = -1
        self.last_list = ""
        """The JSON of the last `tools/list` answer (as `outputs` holds it)."""

    async def open(self, timeout: float = 60) -> None:
        """Start the process and complete `initialize` (bounded by the client's read timeout).

        Call it outside any cancel scope of the caller's: the client holds a task group that
        must be left in the same scope it was entered in (close() does that)."""
        errlog = self._stack.enter_context(self.stderr_path.open("w"))
        params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env, cwd=self.workdir)
        client = Client(
            stdio_client(params, errlog=errlog),
            mode="legacy",
            read_timeout_seconds=timeout,
            message_handler=self._on_message,
        )
        self.client = await self._stack.enter_async_context(client)

    async def close(self) -> None:
        # The SDK's stdio shutdown closes stdin, then terminates the whole process tree.
        # No cancel scope of our own around it: the task groups inside must exit in the scope they
        # entered. Each piece bounds its own shutdown (the SDK's stdio, the launcher's close).
        await self._stack.aclose()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._bump("tools")
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._bump("resource")
        if not isinstance(message, Exception):
            self.outputs.append(repr(message))

    def _bump(self, kind: str) -> None:
        self._counts[kind] += 1
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def count(self, kind: str) -> int:
        """How many `tools` (list_changed) or `resource` (updated) notifications came so far."""
        return self._counts[kind]

    async def next_notification(self, kind: str, after: int, timeout: float) -> bool:
        """Wait until more than `after` notifications of `kind` came; False after `timeout`."""
        with anyio.move_on_after(timeout):
            while self._counts[kind] <= after:
                await self._changed.wait()
            return True
        return False

    def _live(self) -> Client:
        if self.client is None:
            raise StepFailed("the server is not running")
        return self.client

    async def tool_names(self, timeout: float = 10) -> list[str]:
        with anyio.fail_after(timeout):
            listed = await self._live().list_tools()
        self.last_list = json.dumps([t.model_dump(mode="json") for t in listed.tools])
        self.outputs.append(self.last_list)
        return [t.name for t in listed.tools]

    async def ensure_tool(self, tool: str, timeout: float) -> None:
        """Until `tool` is listed: as an agent does it, listing again only after a tools/list_changed."""
        if tool in self._listed and self.count("tools") == self._listed_at:
            return
        self._listed_at = self.count("tools")
        names = await self.tool_names()
        if tool not in names:
            names = await self.wait_tools(lambda n: tool in n, timeout)
        self._listed = set(names)

    async def call(self, name: str, args: dict[str, Any] | None = None, timeout: float = 15) -> str:
        """Call a tool; its text. Raises StepFailed on a tool error or timeout."""
        try:
            with anyio.fail_after(timeout):
                result = await self._live().call_tool(name, args or {})
        except TimeoutError:
            raise StepFailed(f"{name} gave no answer within {timeout:g} s") from None
        text = result_text(result)
        self.outputs.append(text)
        if result.is_error:
            raise StepFailed(f"{name} answered an error: {_first_line(text)}")
        return text

    async def read(self, uri: str, timeout: float = 10) -> str:
        with anyio.fail_after(timeout):
            result = await self._live().read_resource(uri)
        text = "\n".join(getattr(c, "text", "") for c in result.contents)
        self.outputs.append(text)
        return text

    async def subscribe(self, uri: str) -> None:
        with anyio.fail_after(10):
            await self._live().subscribe_resource(uri)

    async def wait_tools(self, predicate: Callable[[list[str]], bool], timeout: float) -> list[str]:
        """Re-list tools after each tools/list_changed (and every 0.25 s) until `predicate` holds."""
        deadline = time.perf_counter() + timeout
        while True:
            seen = self.count("tools")
            names = await self.tool_names()
            if predicate(names):
                return names
            left = deadline - time.perf_counter()
            if left <= 0:
                raise StepFailed(f"the expected tools did not appear within {timeout:g} s")
            await self.next_notification("tools", seen, min(0.25, left))

    def where_said(self, secret: str) -> list[str]:
        """Where `secret` appears in what the server put out: its MCP outputs (results, lists,
        resources, notifications), its stderr, and any file it wrote in its work dir."""
        found = [f"MCP output #{i}: …{_around(text, secret)}…" for i, text in enumerate(self.outputs) if secret in text]
        for path in sorted(self.workdir.rglob("*")):
            text = path.read_text(errors="replace") if path.is_file() else ""
            if secret in text:
                found.append(f"file {path.relative_to(self.workdir)}: …{_around(text, secret)}…")
        return found


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith("#")]
    return (lines[0] if lines else text.strip())[:160]


def _around(text: str, needle: str, width: int = 60) -> str:
    at = text.index(needle)
    return " ".join(text[max(0, at - width) : at + len(needle) + 10].split())
