"""The HTTP transport's guards: bind addresses, Host/Origin lists, slowloris, connection cap, log hygiene."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import uvicorn

from webmcp.server.http_guard import (
    HttpGuard,
    NoBodyFilter,
    RateLimitFilter,
    RemoteBindRefused,
    install_log_guards,
    is_loopback,
    parse_bind,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("[::1]:8765", ("::1", 8765)),
        (":8765", ("127.0.0.1", 8765)),
        ("localhost:0", ("localhost", 0)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[fe80::1]:9", ("fe80::1", 9)),
    ],
)
def test_bind_addresses_parse_ipv6_in_brackets_included(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


@pytest.mark.parametrize("value", ["8765", "::1:8765", "[::1]8765", "[nothost]:1", "host:port", "h:70000", "[::1]:"])
def test_malformed_bind_addresses_are_refused(value: str) -> None:
    with pytest.raises(ValueError):
        parse_bind(value)


def test_loopback_is_told_apart_from_everything_else() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "localhost", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.4", "example.com", "10.0.0.1"))


def test_a_remote_bind_needs_the_switch_and_then_warns_loudly() -> None:
    with pytest.raises(RemoteBindRefused, match="--allow-remote"):
        HttpGuard().check_bind("0.0.0.0")
    with pytest.raises(RemoteBindRefused):
        HttpGuard().check_bind("::")
    assert HttpGuard().check_bind("::1") is None
    warning = HttpGuard(allow_remote=True).check_bind("0.0.0.0")
    assert warning is not None and "plaintext" in warning


def test_host_and_origin_lists_stay_on_for_a_remote_bind() -> None:
    settings = HttpGuard(allow_remote=True, allow_hosts=("bridge.lan",)).transport_security("0.0.0.0", 8765)
    assert settings.enable_dns_rebinding_protection
    assert "bridge.lan:8765" in settings.allowed_hosts and "[::1]:*" in settings.allowed_hosts
    assert "http://bridge.lan:*" in settings.allowed_origins
    assert not any(h.startswith("0.0.0.0") for h in settings.allowed_hosts)
    assert not any("evil" in o for o in settings.allowed_origins)


# ---- connections, against a real uvicorn -----------------------------------------------------


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


@asynccontextmanager
async def _serve(guard: HttpGuard, host: str = "127.0.0.1") -> AsyncIterator[tuple[str, int]]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(128)
    sock.setblocking(False)
    config = uvicorn.Config(
        _hello, log_config=None, lifespan="off", timeout_graceful_shutdown=1, **guard.uvicorn_options()
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            yield host, sock.getsockname()[1]
        finally:
            server.should_exit = True
    sock.close()


async def _closed_by_server(stream: Any) -> bool:
    """Read until the server closes the connection; True if it did (bounded by the caller)."""
    try:
        while await stream.receive():
            pass
    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
        return True
    return True


async def _get(host: str, port: int) -> bytes:
    async with await anyio.connect_tcp(host, port) as stream:
        await stream.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        reply = b""
        try:
            while True:
                reply += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return reply


async def test_a_request_whose_headers_never_finish_is_closed() -> None:
    async with _serve(HttpGuard(header_timeout=0.3)) as (host, port):
        with anyio.fail_after(10):
            async with await anyio.connect_tcp(host, port) as stream:
                await stream.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                assert await _closed_by_server(stream)
            async with await anyio.connect_tcp(host, port) as silent:
                assert await _closed_by_server(silent)
            assert b"200 OK" in await _get(host, port)


async def test_connections_over_the_cap_are_closed_and_real_clients_get_through_once_slow_ones_go() -> None:
    async with _serve(HttpGuard(header_timeout=1.5, max_connections=3)) as (host, port):
        with anyio.fail_after(15):
            slow = [await anyio.connect_tcp(host, port) for _ in range(3)]
            for stream in slow:
                await stream.send(b"GET / HTTP/1.1\r\n")
            async with await anyio.connect_tcp(host, port) as over:
                assert await _closed_by_server(over)  # closed at once, while the three still hold
            for stream in slow:
                assert await _closed_by_server(stream)  # then the header deadline frees the slots
                await stream.aclose()
            assert b"200 OK" in await _get(host, port)


async def test_keep_alive_requests_stay_served_under_the_header_deadline() -> None:
    async with _serve(HttpGuard(header_timeout=5)) as (host, port):
        with anyio.fail_after(10):
            async with await anyio.connect_tcp(host, port) as stream:
                for _ in range(3):
                    await stream.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    reply = b""
                    while b"hello" not in reply:
                        reply += await stream.receive()
                    assert reply.startswith(b"HTTP/1.1 200")


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
async def test_ipv6_loopback_serves() -> None:
    host, _ = parse_bind("[::1]:0")
    async with _serve(HttpGuard(), host) as (bound, port):
        with anyio.fail_after(10):
            assert b"200 OK" in await _get(bound, port)


# ---- logs ---------------------------------------------------------------------------------------


def _record(name: str, level: int, msg: str, *args: Any) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_body_carrying_debug_records_are_dropped_and_long_ones_cut() -> None:
    guard = NoBodyFilter()
    assert not guard.filter(_record("sse_starlette.sse", logging.DEBUG, "chunk: %s", b'data: {"password":"x"}'))
    assert not guard.filter(_record("httpx2", logging.DEBUG, "response body %s", "secret"))
    kept = _record("webmcp.server", logging.WARNING, "big %s", "x" * 100_000)
    assert guard.filter(kept)
    assert len(kept.getMessage()) < 2100 and "characters cut" in kept.getMessage()
    assert guard.filter(_record("sse_starlette.sse", logging.WARNING, "chunk: %s", "not debug: kept, but cut"))


def test_repeats_of_one_message_are_rate_limited() -> None:
    limit = RateLimitFilter(burst=3, period=3600)
    passed = [
        limit.filter(_record("uvicorn.error", logging.WARNING, "Invalid HTTP request received.")) for _ in range(50)
    ]
    assert passed.count(True) == 3
    assert limit.filter(_record("uvicorn.error", logging.WARNING, "another message"))


def test_install_log_guards_filters_every_handler_and_holds_body_loggers_at_info() -> None:
    root = logging.getLogger("test-http-guard-root")
    handler = logging.Handler()
    root.addHandler(handler)
    before = logging.getLogger("sse_starlette").level
    try:
        install_log_guards(root)
        install_log_guards(root)  # idempotent
        assert sum(isinstance(f, NoBodyFilter) for f in handler.filters) == 1
        assert logging.getLogger("sse_starlette").getEffectiveLevel() >= logging.INFO
    finally:
        root.removeHandler(handler)
        logging.getLogger("sse_starlette").setLevel(before)
