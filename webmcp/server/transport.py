"""MCP transports for the bridge: stdio, Streamable HTTP, and change-notification fan-out.

One low-level `mcp.server.Server` serves two protocol generations at once:

* handshake clients (2025-11-25 and older) keep a session, subscribe with
  `resources/subscribe`, and receive change notifications on that session;
* 2026-07-28 clients only learn about changes through a `subscriptions/listen`
  stream, fed here from an `InMemorySubscriptionBus`.

`Broadcaster` is the single place that reaches both kinds of client.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import socket
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from webmcp.desktop.races import first_of
from webmcp.server.early import EarlyAnswers
from webmcp.server.serving import serve_connection
from webmcp.server.stdio import stdio_transport

from .http_guard import HttpGuard

logger = logging.getLogger(__name__)

SEND_TIMEOUT_S = 2.0
"""Upper bound for one notification to one client; a slower client never delays the others longer."""

_MAX_CONSECUTIVE_TIMEOUTS = 3
"""A handshake session that times out this many sends in a row is treated as gone."""

_GRACEFUL_SHUTDOWN_S = 2
"""uvicorn waits this long for open SSE streams before cancelling them."""

_SHUTDOWN_GRACE_S = _GRACEFUL_SHUTDOWN_S + 3.0
_STARTUP_TIMEOUT_S = 10.0


@dataclass(eq=False)
class _Peer:
    """One live handshake-era connection and the resource URIs it subscribed to."""

    session: ServerSession
    subscriptions: set[str] = field(default_factory=set)
    timeouts: int = 0
    read_at: dict[str, int] = field(default_factory=dict)
    """Per URI, how many changes (`Broadcaster.changed`) there had been when this session last read it."""


_SERVED_KEPT = 64
"""How many lists' tool sets a `Broadcaster` remembers (more lists than that in one moved set: told)."""


class Broadcaster:
    """Tells every connected client that something changed, whatever its protocol generation.

    Wire it into the server with `Server(..., **broadcaster.handlers())` and let
    `serve_stdio` / `serve_http` (or `attach`) install its session-tracking middleware.
    """

    def __init__(self, *, send_timeout: float = SEND_TIMEOUT_S) -> None:
        self._send_timeout = send_timeout
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        # Keyed by the SDK `Connection`: `ctx.session` is a fresh proxy per request,
        # the connection is what lives as long as the client's session does.
        self._peers: dict[Connection, _Peer] = {}
        self.lists_served = 0
        """`tools/list` answers given so far (`listed`): a client that read the list while it
        moved holds what it read, and is told when it moves back (`run_notifier`)."""
        self._served: deque[Any] = deque(maxlen=_SERVED_KEPT)
        """The tool-set key of the last lists answered (`listed`), newest last."""
        self._changes = 0

    def listed(self, key: Any = None) -> None:
        """A `tools/list` was answered, of the tool set whose key (`catalog.tool_set_key`) is `key`."""
        self.lists_served += 1
        self._served.append(key)

    def listed_other_than(self, since: int, key: Any) -> bool:
        """Whether a list answered after the first `since` was of another tool set than `key`'s.

        True when that is not known (more lists than are kept), so that a client is told too often
        rather than never."""
        count = self.lists_served - since
        if count <= 0:
            return False
        if count > len(self._served):
            return True
        return any(served != key for served in list(self._served)[-count:])

    def changed(self) -> None:
        """What the resources show changed (the desktop's change listener)."""
        self._changes += 1

    def read_by(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        """The session behind `ctx` read `uri` as it is now (call it right as the answer is built, with
        no await between): no `resources/updated` tells it of the changes it read. A client that
        re-reads on every notification would otherwise read the same document twice."""
        peer = self._peer_for(ctx)
        if peer is not None:
            peer.read_at[uri] = self._changes

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        """The `Server` constructor keywords this broadcaster serves."""
        return {
            "on_subscribe_resource": self._on_subscribe,
            "on_unsubscribe_resource": self._on_unsubscribe,
            "on_subscriptions_listen": self._listen,
        }

    def attach(self, server: Server[Any]) -> None:
        """Install the middleware that registers handshake sessions (idempotent), outermost: the server's
        own may answer a request without calling on (`app.build_server`'s `tools/call`)."""
        if self._track not in server.middleware:
            server.middleware.insert(0, self._track)

    @property
    def session_count(self) -> int:
        """How many handshake-era sessions are currently registered."""
        return len(self._peers)

    async def resource_updated(self, uri: str) -> None:
        """Send `notifications/resources/updated` for `uri` to subscribed sessions and listeners,
        save sessions that read it after the last change (`read_by`)."""
        peers = [
            peer
            for peer in self._peers.values()
            if uri in peer.subscriptions and peer.read_at.get(uri) != self._changes
        ]
        await self._fan_out(peers, lambda s: s.send_resource_updated(uri), ResourceUpdated(uri=uri))

    async def tools_list_changed(self) -> None:
        """Send `notifications/tools/list_changed` to every session and listener."""
        await self._fan_out(list(self._peers.values()), lambda s: s.send_tool_list_changed(), ToolsListChanged())

    def close_listeners(self) -> None:
        """End every open `subscriptions/listen` stream gracefully (used at shutdown)."""
        self._listen.close()

    async def _fan_out(
        self, peers: list[_Peer], send: Callable[[ServerSession], Awaitable[None]], event: ServerEvent
    ) -> None:
        async with anyio.create_task_group() as tg:
            for peer in peers:
                tg.start_soon(self._send_one, peer, send)
            tg.start_soon(self._publish, event)

    async def _send_one(self, peer: _Peer, send: Callable[[ServerSession], Awaitable[None]]) -> None:
        try:
            with anyio.move_on_after(self._send_timeout) as scope:
                await send(peer.session)
        except Exception:  # boundary: one broken client must not fail the broadcast
            logger.exception("dropping MCP session after a failed notification")
            self._drop(peer)
            return
        if not scope.cancelled_caught:
            peer.timeouts = 0
            return
        peer.timeouts += 1
        logger.warning("MCP notification timed out (%d in a row)", peer.timeouts)
        if peer.timeouts >= _MAX_CONSECUTIVE_TIMEOUTS:
            self._drop(peer)

    async def _publish(self, event: ServerEvent) -> None:
        try:
            with anyio.move_on_after(self._send_timeout):
                await self._bus.publish(event)
        except Exception:  # boundary: the bus isolates listeners, but never let it fail the caller
            logger.exception("publishing %r on the subscription bus failed", event)

    def _drop(self, peer: _Peer) -> None:
        for connection, known in list(self._peers.items()):
            if known is peer:
                del self._peers[connection]

    def _peer_for(self, ctx: ServerRequestContext[Any, Any]) -> _Peer | None:
        """Find or register the handshake connection behind `ctx`; None for 2026-era requests."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None  # a fresh per-request connection; listen streams reach these clients
        # The SDK exposes the connection only privately on the per-request proxy (2.3.0).
        connection = getattr(ctx.session, "_connection", None)
        if not isinstance(connection, Connection) or not connection.has_standalone_channel:
            return None
        peer = self._peers.get(connection)
        if peer is None:
            peer = self._peers[connection] = _Peer(ctx.session)
            # Unwound by the SDK when the connection closes (stdio EOF, HTTP DELETE or idle reap).
            connection.exit_stack.callback(self._peers.pop, connection, None)
        return peer

    async def _track(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        self._peer_for(ctx)
        return await call_next(ctx)

    async def _on_subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        peer = self._peer_for(ctx)
        if peer is not None:
            peer.subscriptions.add(str(params.uri))
        return EmptyResult()

    async def _on_unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        peer = self._peer_for(ctx)
        if peer is not None:
            peer.subscriptions.discard(str(params.uri))
        return EmptyResult()


def initialization_options(
    server: Server[Any], experimental: dict[str, dict[str, Any]] | None = None
) -> InitializationOptions:
    """Handshake-era `InitializeResult` payload declaring subscribe and every listChanged flag.

    2026-07-28 clients derive the same flags from the registered listen handler and
    see `server.extensions` instead of `experimental`.
    """
    return server.create_initialization_options(
        NotificationOptions(prompts_changed=False, resources_changed=True, tools_changed=True),
        experimental,
    )


def _pin_initialization_options(server: Server[Any], experimental: dict[str, dict[str, Any]] | None) -> None:
    """Make the argument-less `create_initialization_options()` call of the HTTP manager declare our flags."""
    options = initialization_options(server, experimental)

    def create(*_args: Any, **_kwargs: Any) -> InitializationOptions:
        return options.model_copy(deep=True)

    server.create_initialization_options = create  # type: ignore[method-assign]


async def serve_stdio(
    server: Server[Any],
    broadcaster: Broadcaster,
    *,
    experimental: dict[str, dict[str, Any]] | None = None,
    early: EarlyAnswers | None = None,
) -> None:
    """Serve MCP on stdin/stdout; returns once the client closes stdin.

    `early` (started by webmcp.cli on the same stdin) hands over what it read and answered.

    Raises:
        TimeoutError: `early` could not stop (the client does not read its stdout).
    """
    broadcaster.attach(server)
    options = initialization_options(server, experimental)
    handover = await anyio.to_thread.run_sync(early.stop) if early is not None else None
    try:
        async with stdio_transport(sys.stdin.fileno(), handover) as (read_stream, write_stream):
            await serve_connection(server, read_stream, write_stream, options)
    finally:
        broadcaster.close_listeners()


_HOW_TO_AUTHENTICATE = (
    "Send the header `Authorization: Bearer <token>` with every request; the token is the bridge's --token, "
    "else $WEBMCP_BRIDGE_TOKEN, else the one it printed on stderr at start. A client that cannot send headers "
    "(the MCP Inspector CLI, for one) can start the bridge over stdio instead: "
    "npx @modelcontextprotocol/inspector --cli webmcp-bridge --method resources/read --uri app://windows"
)


class _BearerGate:
    """ASGI wrapper answering 401 to any HTTP request without `Authorization: Bearer <token>`.

    The answer says what was wrong and how to pass the token (never echoing what was sent).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("an HTTP bearer token is required")
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                problem, challenge = refusal
                body = json.dumps({"error": "unauthorized", "message": f"{problem} {_HOW_TO_AUTHENTICATE}"})
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", challenge)],
                    }
                )
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self._app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[str, bytes] | None:
        """Why the request is refused and its WWW-Authenticate challenge (RFC 6750), or None to let it in."""
        header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        scheme, _, credentials = header.partition(b" ")
        if not header:
            return "This MCP endpoint needs the bridge's bearer token.", b'Bearer realm="webmcp-bridge"'
        if scheme.lower() != b"bearer":
            return "Authorization must use the Bearer scheme.", b'Bearer realm="webmcp-bridge"'
        if not hmac.compare_digest(credentials.strip(), self._token):
            return "That bearer token is not this bridge's.", b'Bearer realm="webmcp-bridge", error="invalid_token"'
        return None


class _EmbeddedUvicorn(uvicorn.Server):
    """uvicorn that leaves process signals to the host and reports when it is listening."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = anyio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The host (CLI) owns SIGINT/SIGTERM; shutdown is driven by cancellation instead.
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.listening.set()


def _bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket up front so a busy port raises OSError here, not sys.exit in uvicorn."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _http_server(
    server: Server[Any],
    broadcaster: Broadcaster,
    host: str,
    port: int,
    token: str,
    experimental: dict[str, dict[str, Any]] | None,
    guard: HttpGuard,
) -> _EmbeddedUvicorn:
    """uvicorn serving `server` at `/mcp` on `host:port`, behind the bearer token and the guard's limits."""
    broadcaster.attach(server)
    _pin_initialization_options(server, experimental)
    # Host/Origin allow-lists on for every bind (the SDK's default covers loopback only).
    app = _BearerGate(
        server.streamable_http_app(
            streamable_http_path="/mcp", host=host, transport_security=guard.transport_security(host, port)
        ),
        token,
    )
    config = uvicorn.Config(
        app,
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_S,
        access_log=False,
        **guard.uvicorn_options(),
    )
    return _EmbeddedUvicorn(config)


async def serve_http(
    server: Server[Any],
    broadcaster: Broadcaster,
    *,
    host: str = "127.0.0.1",
    port: int,
    token: str,
    experimental: dict[str, dict[str, Any]] | None = None,
    ready: anyio.Event | None = None,
    guard: HttpGuard | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve Streamable HTTP at `/mcp` behind a bearer token until cancelled.

    `port` 0 lets the system choose a free one; `announce` is given the endpoint's URL, with the
    port bound, before anything is served.

    Raises:
        RemoteBindRefused: `host` is not loopback and `guard.allow_remote` is off.
    """
    guard = guard or HttpGuard()
    warning = guard.check_bind(host)
    if warning is not None:
        logger.warning("%s", warning)
    sock = _bind(host, port)
    try:
        port = sock.getsockname()[1]  # the one the system chose, for port 0
        uv = _http_server(server, broadcaster, host, port, token, experimental, guard)
        if announce is not None:
            announce(f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp")
    except BaseException:
        sock.close()
        raise
    finished = anyio.Event()
    # Shielded so outside cancellation becomes a graceful uvicorn shutdown (which also
    # exits the session manager's lifespan) instead of tearing its tasks mid-flight.
    serve_scope = anyio.CancelScope(shield=True)

    async def run() -> None:
        try:
            with serve_scope:
                await uv.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn exits the process on a failed startup
            raise RuntimeError(f"HTTP server failed to start (exit {exc.code})") from None
        finally:
            sock.close()  # uvicorn closes it on a normal shutdown only
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            started = await first_of(uv.listening.wait, finished.wait, timeout=_STARTUP_TIMEOUT_S)
            if started.timed_out:
                raise TimeoutError(f"the HTTP server did not start listening within {_STARTUP_TIMEOUT_S:g} s")
            if ready is not None and uv.listening.is_set():
                ready.set()
            await finished.wait()
        finally:
            uv.should_exit = True
            broadcaster.close_listeners()
            with anyio.move_on_after(_SHUTDOWN_GRACE_S, shield=True):
                await finished.wait()
            serve_scope.cancel()
