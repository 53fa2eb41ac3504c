"""Guards of the Streamable HTTP transport: where it may listen, who may connect, what is logged.

* Bind: `--http` takes `HOST:PORT`, `[IPv6]:PORT` or `:PORT`. Loopback is the default; any
  other address is refused unless `--allow-remote` is given, and then the bridge says
  loudly that its bearer token crosses the network in plaintext.
* Host and Origin allow-lists stay on for every bind (the SDK switches DNS-rebinding
  protection on for loopback only): the bound host, loopback names, and `--allow-host`.
* Connections: a request's headers must arrive within `header_timeout` (slowloris held
  connections open without limit before), idle keep-alive connections close after
  `idle_timeout`, and at most `max_connections` are open at once; those over the cap are
  closed at once.
* Logs: no record carries a response or request body, at any level (sse_starlette logs
  every SSE chunk at DEBUG: 183 MB in 15 minutes, secrets included); any record is cut to
  `MAX_LOG_CHARS`, and repeats of one message are rate-limited.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cdp_bridge.errors import BridgeError

# The command line reads this module (options, bind check, log guards) before the bridge has
# imported the mcp SDK or uvicorn: the HTTP-only parts import them when first used.
if TYPE_CHECKING:
    import asyncio

    from mcp.server.transport_security import TransportSecuritySettings
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from webmcp.config import HttpConfig

__all__ = [
    "BODY_LOGGERS",
    "MAX_LOG_CHARS",
    "HttpGuard",
    "NoBodyFilter",
    "RateLimitFilter",
    "RemoteBindRefused",
    "add_http_guard_arguments",
    "guarded_protocol",
    "install_log_guards",
    "is_loopback",
    "parse_bind",
]

logger = logging.getLogger(__name__)

MAX_LOG_CHARS = 2000
BODY_LOGGERS: dict[str, tuple[str, ...]] = {
    # logger name → message prefixes whose arguments are payloads
    "sse_starlette": ("chunk:", "ping:"),
    "sse_starlette.sse": ("chunk:", "ping:"),
    "mcp.server.sse": ("Received JSON", "Validated client message"),
    "mcp.shared.jsonrpc_dispatcher": ("transport yielded exception",),
    "mcp.server.runner": ("dropped a frame",),
    "httpx": ("",),
    "httpx2": ("",),
    "httpcore": ("",),
    "httpcore2": ("",),
    "websockets": ("",),
    "websockets.client": ("",),
}
"""Loggers known to put message bodies in DEBUG records; "" drops all their DEBUG records."""
_LOOPBACK_NAMES = ("localhost",)


class RemoteBindRefused(BridgeError, ValueError):
    """A non-loopback `--http` address without `--allow-remote` (the CLI prints it and exits 1)."""


def parse_bind(value: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback) → (host, port).

    Raises:
        ValueError: the value is not one of those forms, or the port is out of range.
    """
    value = value.strip()
    if value.startswith("["):
        host, sep, port = value[1:].partition("]:")
        if not sep:
            raise ValueError(f"expected [IPv6]:PORT, got {value!r}")
        ipaddress.IPv6Address(host)
    else:
        host, sep, port = value.rpartition(":")
        if not sep:
            raise ValueError(f"expected HOST:PORT, got {value!r}")
        if ":" in host:
            raise ValueError(f"write an IPv6 address in brackets, like [::1]:{port}")
        host = host or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"not a port number: {port!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True)
class HttpGuard:
    """The HTTP transport's limits; the defaults are what the bridge runs with."""

    allow_remote: bool = False
    allow_hosts: tuple[str, ...] = ()
    header_timeout: float = 10.0
    idle_timeout: float = 30.0
    max_connections: int = 64
    extra: dict[str, Any] = field(default_factory=dict)

    def check_bind(self, host: str) -> str | None:
        """None for loopback; the loud warning to print for an allowed remote bind.

        Raises:
            RemoteBindRefused: `host` is not loopback and `allow_remote` is off.
        """
        if is_loopback(host):
            return None
        if not self.allow_remote:
            raise RemoteBindRefused(
                f"--http {_host_for_url(host)}:… would expose the browser beyond this machine; "
                "bind to 127.0.0.1 or [::1], or pass --allow-remote if you mean it."
            )
        return (
            f"WARNING: serving MCP on {host}, reachable from other machines. The bearer token travels "
            "in plaintext (no TLS): anyone on the network path can read it and drive your browser."
        )

    def transport_security(self, host: str, port: int) -> TransportSecuritySettings:
        """Host/Origin allow-lists for the SDK app, kept on for every bind."""
        hosts = {"127.0.0.1", "localhost", "[::1]", _host_for_url(host), *self.allow_hosts}
        hosts.discard("0.0.0.0")  # noqa: S104 (a wildcard bind is not a name a client sends)
        hosts.discard("[::]")
        allowed_hosts = sorted({f"{h}:*" for h in hosts} | {f"{h}:{port}" for h in hosts})
        origins = sorted({f"http://{h}:*" for h in hosts} | {f"https://{h}:*" for h in hosts})
        from mcp.server.transport_security import TransportSecuritySettings

        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=origins
        )

    def uvicorn_options(self) -> dict[str, Any]:
        """Keyword arguments for `uvicorn.Config` (protocol class, idle timeout, concurrency)."""
        return {
            "http": guarded_protocol(self.header_timeout, self.max_connections),
            "timeout_keep_alive": self.idle_timeout,
            "limit_concurrency": self.max_connections * 4,
            "h11_max_incomplete_event_size": 64 * 1024,
            **self.extra,
        }

    @classmethod
    def from_config(cls, http: HttpConfig) -> HttpGuard:
        """The guard the command line asked for (`--allow-remote`, `--allow-host`), with the default limits."""
        return cls(allow_remote=http.allow_remote, allow_hosts=http.allow_hosts)


def add_http_guard_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--allow-remote` and `--allow-host` to the command line."""
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --http on a non-loopback address (the token then crosses the network in plaintext)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="also accept this Host/Origin name over --http (repeatable)",
    )


def guarded_protocol(header_timeout: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a header deadline per request and a cap on open connections."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _armed_cycle: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                _limited_warning("HTTP connection cap (%d) reached; closing new connections", max_connections)
                transport.close()
                return
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_header_timer()

        def _arm_header_timer(self) -> None:
            self._cancel_header_timer()
            self._armed_cycle = self.cycle
            self._header_timer = self.loop.call_later(header_timeout, self._header_deadline)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_deadline(self) -> None:
            self._header_timer = None
            # A new request started since the timer was armed: its headers arrived in time.
            if self.cycle is not self._armed_cycle or self.transport.is_closing():
                return
            _limited_warning("closing HTTP connections whose request headers did not arrive in %gs", header_timeout)
            self.transport.close()

    return GuardedH11Protocol


# ---- logging -------------------------------------------------------------------------------


class NoBodyFilter(logging.Filter):
    """Drops records that carry message bodies, and cuts any record to `MAX_LOG_CHARS`."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, prefixes in BODY_LOGGERS.items():
            if record.name == name or record.name.startswith(name + "."):
                if record.levelno <= logging.DEBUG and any(str(record.msg).startswith(p) for p in prefixes):
                    return False
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        if len(message) > MAX_LOG_CHARS:
            record.msg = message[:MAX_LOG_CHARS] + f"… [{len(message) - MAX_LOG_CHARS} characters cut]"
            record.args = None
        return True


class RateLimitFilter(logging.Filter):
    """At most `burst` records per message template per `period` seconds; then one summary."""

    def __init__(self, burst: int = 5, period: float = 10.0) -> None:
        super().__init__()
        self._burst = burst
        self._period = period
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, Any], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        now = time.monotonic()
        with self._lock:
            start, count = self._seen.get(key, (now, 0))
            if now - start >= self._period:
                suppressed = max(0, count - self._burst)
                start, count = now, 0
                if suppressed:
                    record.msg = f"{record.msg} [{suppressed} similar messages suppressed]"
            count += 1
            self._seen[key] = (start, count)
            if len(self._seen) > 4096:
                self._seen.clear()
        return count <= self._burst


_rate = RateLimitFilter()


def _limited_warning(message: str, *args: Any) -> None:
    record = logger.makeRecord(logger.name, logging.WARNING, __file__, 0, message, args, None)
    if logger.isEnabledFor(logging.WARNING) and _rate.filter(record):
        logger.handle(record)


def install_log_guards(root: logging.Logger | None = None) -> None:
    """Put both filters on every handler of `root` (the root logger by default); call after basicConfig.

    Handler filters see records of every logger that propagates to them, which logger
    filters would not. Body loggers are also held at INFO so their DEBUG records are
    never even built.
    """
    root = root or logging.getLogger()
    for handler in root.handlers:
        if not any(isinstance(f, NoBodyFilter) for f in handler.filters):
            handler.addFilter(NoBodyFilter())
            handler.addFilter(RateLimitFilter())
    for name in BODY_LOGGERS:
        named = logging.getLogger(name)
        if named.getEffectiveLevel() < logging.INFO:
            named.setLevel(logging.INFO)
