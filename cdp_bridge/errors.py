"""Every error the CDP side raises, in one hierarchy.

    BridgeError
    ├── BrowserError                  the browser process itself
    │   ├── BrowserNotFound           no executable found; says what to install
    │   ├── BrowserLaunchError        it started but never offered a DevTools endpoint
    │   └── WebMCPUnavailable         it runs, but without the WebMCP feature
    └── CDPError                      talking to the browser over DevTools
        ├── ProtocolError             the browser answered a command with an error
        ├── CommandTimeout            no answer within the deadline
        ├── ConnectionClosed          the websocket (or the whole browser) went away
        └── SessionClosed             one target's session detached (tab closed, crashed)

Callers on the agent side catch `CDPError` at their boundary and turn it into a
structured tool error; nothing here knows about MCP.
"""

from __future__ import annotations

__all__ = [
    "BridgeError",
    "BrowserError",
    "BrowserLaunchError",
    "BrowserNotFound",
    "CDPError",
    "CommandTimeout",
    "ConnectionClosed",
    "ProtocolError",
    "SessionClosed",
    "WebMCPUnavailable",
]


class BridgeError(Exception):
    """Base of everything webmcp-bridge raises on purpose."""


class BrowserError(BridgeError):
    """The browser could not be found, started or used."""


class BrowserNotFound(BrowserError):
    """No Chromium-family browser executable was found."""


class BrowserLaunchError(BrowserError):
    """The browser started but did not offer a DevTools endpoint in time, or exited."""


class WebMCPUnavailable(BrowserError):
    """The browser runs without the WebMCP feature (`document.modelContext` is missing)."""


class CDPError(BridgeError):
    """A DevTools Protocol exchange failed."""


class ProtocolError(CDPError):
    """The browser answered a command with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: object = None) -> None:
        self.method = method
        self.code = code
        self.message = message
        self.data = data
        super().__init__(f"{method} failed: {message} (code {code})")

    @property
    def went_while_running(self) -> bool:
        """The command (a script awaiting its promise) had run when its document went: Chromium's
        answer then. One sent after the document went is "Cannot find context with specified id"."""
        return self.message == "Inspected target navigated or closed"


class CommandTimeout(CDPError):
    """A command got no answer before its deadline."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} got no answer within {timeout:g} s")


class ConnectionClosed(CDPError):
    """The DevTools websocket closed; every pending command fails with this."""


class SessionClosed(CDPError):
    """The target's session detached (its tab closed, crashed or was replaced)."""
