"""End-to-end MCP client helpers shared by the project's tests.

`open_stdio_client` / `open_http_client` connect a real `mcp.Client` in either protocol
generation and attach a `Notifications` recorder that sees change notifications the
same way for both: handshake sessions subscribe with `resources/subscribe` and are
observed through the client's message handler, 2026-07-28 sessions keep a
`subscriptions/listen` stream open in a background task.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from webmcp.demo import on_a_stream

Kind = Literal["resource_updated", "tools_list_changed"]
WINDOWS_URI = "app://windows"
CONNECT_TIMEOUT_S = 30.0


class Notifications:
    """Counts change notifications and lets a test await the next one without sleeping."""

    def __init__(self) -> None:
        self._counts: dict[Kind, int] = {"resource_updated": 0, "tools_list_changed": 0}
        self.updated_uris: list[str] = []
        self._changed = anyio.Event()

    def count(self, kind: Kind) -> int:
        """How many notifications of `kind` arrived so far."""
        return self._counts[kind]

    # A per-call deadline is the point of this helper, hence the ASYNC109 exemption.
    async def wait_for(self, kind: Kind, after: int | None = None, timeout: float = 10.0) -> int:  # noqa: ASYNC109
        """Wait until more than `after` (default: the current count) `kind` notifications arrived.

        Take `after = rec.count(kind)` *before* triggering the change, or a notification
        that lands before this call is awaited would be missed. Returns the new count.
        """
        threshold = self._counts[kind] if after is None else after
        with anyio.fail_after(timeout):
            while True:
                changed = self._changed  # snapshot before checking, so a record() in between still wakes us
                if self._counts[kind] > threshold:
                    return self._counts[kind]
                await changed.wait()

    def record(self, kind: Kind, uri: str | None = None) -> None:
        """Count one notification and wake every waiter."""
        self._counts[kind] += 1
        if uri is not None:
            self.updated_uris.append(uri)
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def on_message(self, message: IncomingMessage) -> None:
        """`Client(message_handler=...)` hook for handshake-era notifications (a listen stream's frames,
        which the client hands this hook too, are counted once, as the stream's events: `on_event`)."""
        if on_a_stream(message):
            return
        if isinstance(message, types.ResourceUpdatedNotification):
            self.record("resource_updated", str(message.params.uri))
        elif isinstance(message, types.ToolListChangedNotification):
            self.record("tools_list_changed")

    def on_event(self, event: ServerEvent) -> None:
        """Record one event from a 2026-07-28 listen stream."""
        if isinstance(event, ResourceUpdated):
            self.record("resource_updated", event.uri)
        elif isinstance(event, ToolsListChanged):
            self.record("tools_list_changed")


@dataclass
class McpTestClient:
    """A connected client, its notification recorder, and the protocol it negotiated."""

    client: Client
    notifications: Notifications
    subscribed: list[str] = field(default_factory=list)

    @property
    def modern(self) -> bool:
        """True when the session speaks 2026-07-28 (listen streams) rather than the handshake protocol."""
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS


async def _listen(
    client: Client,
    recorder: Notifications,
    uris: Sequence[str],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with client.listen(tools_list_changed=True, resource_subscriptions=list(uris)) as subscription:
        task_status.started()
        async for event in subscription:
            recorder.on_event(event)


async def _subscribe(stack: AsyncExitStack, handle: McpTestClient, uris: Sequence[str]) -> None:
    """Open the change feed that fits the negotiated protocol."""
    client, recorder = handle.client, handle.notifications
    if handle.modern:
        tg = await stack.enter_async_context(anyio.create_task_group())
        # Cancel the listener before the client closes, so its end is not a lost subscription.
        stack.callback(tg.cancel_scope.cancel)
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            await tg.start(_listen, client, recorder, uris)
    else:
        # A raw request: Client/ClientSession.subscribe_resource emit MCPDeprecationWarning.
        for uri in uris:
            request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
            await client.session.send_request(request, types.EmptyResult, request_read_timeout_seconds=10)
    handle.subscribed.extend(uris)


def _client(server: object, mode: str, recorder: Notifications) -> Client:
    # cache=None: a cached read could hide the state a notification announced.
    return Client(
        server,  # type: ignore[arg-type]
        mode=mode,
        cache=None,
        message_handler=recorder.on_message,
        read_timeout_seconds=CONNECT_TIMEOUT_S,
    )


@asynccontextmanager
async def open_stdio_client(
    command: list[str],
    env: dict[str, str] | None = None,
    mode: str = "legacy",
    *,
    subscribe: Sequence[str] = (WINDOWS_URI,),
    cwd: str | None = None,
    errlog: TextIO | None = None,
) -> AsyncIterator[McpTestClient]:
    """Launch `command` as an MCP stdio server and connect to it in `mode` ("legacy", "auto", or a version).

    The child inherits this process's environment plus `env`. Its stderr goes to this process's
    unless `errlog` (a real file: the child writes to its descriptor) collects it.
    """
    recorder = Notifications()
    params = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, **(env or {})}, cwd=cwd)
    server: object = params if errlog is None else stdio_client(params, errlog=errlog)
    async with AsyncExitStack() as stack:
        # Bounded by read_timeout_seconds; a fail_after here would wrap the client's task group.
        client = await stack.enter_async_context(_client(server, mode, recorder))
        handle = McpTestClient(client, recorder)
        await _subscribe(stack, handle, subscribe)
        yield handle


@asynccontextmanager
async def open_http_client(
    url: str,
    token: str,
    mode: str = "legacy",
    *,
    subscribe: Sequence[str] = (WINDOWS_URI,),
) -> AsyncIterator[McpTestClient]:
    """Connect to a Streamable HTTP MCP endpoint with a bearer token in `mode`."""
    recorder = Notifications()
    standalone_open = anyio.Event()

    async def watch(response: httpx2.Response) -> None:
        if response.request.method == "GET" and response.status_code == 200:
            standalone_open.set()

    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"},
                # The SDK's defaults: long reads, because SSE streams stay open.
                timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [watch]},
            )
        )
        client = await stack.enter_async_context(_client(streamable_http_client(url, http_client=http), mode, recorder))
        handle = McpTestClient(client, recorder)
        await _subscribe(stack, handle, subscribe)
        if not handle.modern:
            # Handshake notifications ride the session's GET stream, which the client opens
            # asynchronously; anything sent before it is up is dropped (no event store).
            with anyio.fail_after(CONNECT_TIMEOUT_S):
                await standalone_open.wait()
        yield handle


_ANNOUNCED = re.compile(r"MCP at (http://\S+/mcp)")

ANY_PORT = "127.0.0.1:0"
"""`--http` for a test's bridge: the system chooses the port and the bridge says which (`announced_url`).
A port a test found free and handed over could be taken meanwhile by another test's server,
which then answered this test's client (a CI run: "Server returned an error response")."""


async def announced_url(stderr: Path, bridge: anyio.abc.Process) -> str:
    """The MCP URL a bridge started with `--http HOST:0` printed to `stderr` (a file), once it did.

    A bridge that exits first fails the wait at once.
    """
    with anyio.fail_after(30):
        while True:
            found = _ANNOUNCED.search(stderr.read_text(encoding="utf-8", errors="replace"))  # noqa: ASYNC240 (a small log)
            if found:
                return found.group(1)
            if bridge.returncode is not None:
                said = stderr.read_text(encoding="utf-8", errors="replace")[-2000:]  # noqa: ASYNC240 (a small log)
                raise AssertionError(f"the bridge exited with {bridge.returncode}: {said}")
            await anyio.sleep(0.05)


async def wait_listening(url: str, bridge: anyio.abc.Process) -> int:
    """Poll until the bridge's HTTP endpoint answers (uvicorn serves just after `announced_url`); its status.

    A bridge that exits first fails the wait at once.
    """
    with anyio.fail_after(30):
        while True:
            if bridge.returncode is not None:
                raise AssertionError(f"the bridge exited with {bridge.returncode}")
            try:
                async with httpx2.AsyncClient() as http:
                    return (await http.post(url, json={})).status_code
            except httpx2.TransportError:
                await anyio.sleep(0.1)
