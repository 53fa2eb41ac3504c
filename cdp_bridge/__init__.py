"""The CDP side of webmcp-bridge: connection and its transports, launcher, targets, raw reads.

`Connection` and `CDPSession` load on first use: `webmcp-bridge` reads its command line and
starts the browser (`cdp_bridge.spawn`, standard library only) before it pays for the event
loop and the connection's parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    BridgeError,
    BrowserError,
    BrowserLaunchError,
    BrowserNotFound,
    CDPError,
    CommandTimeout,
    ConnectionClosed,
    ProtocolError,
    SessionClosed,
    WebMCPUnavailable,
)
from .timeouts import Timeouts

if TYPE_CHECKING:
    from .connection import CDPSession, Connection

__all__ = [
    "BridgeError",
    "BrowserError",
    "BrowserLaunchError",
    "BrowserNotFound",
    "CDPError",
    "CDPSession",
    "CommandTimeout",
    "Connection",
    "ConnectionClosed",
    "ProtocolError",
    "SessionClosed",
    "Timeouts",
    "WebMCPUnavailable",
]


def __getattr__(name: str) -> Any:
    if name in ("CDPSession", "Connection"):
        return getattr(importlib.import_module("cdp_bridge.connection"), name)
    raise AttributeError(f"module 'cdp_bridge' has no attribute {name!r}")
