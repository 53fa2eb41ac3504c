"""The CDP side of webmcp-bridge: connection and its transports, launcher, targets, raw reads."""

from .connection import CDPSession, Connection
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
