"""Default deadlines, in seconds, for every wait on the browser or a client."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Timeouts"]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """One place for the bridge's deadlines; override per run or per call.

    Every await that depends on the browser or on a client is bounded by one of these.
    """

    command: float = 10.0
    """A single CDP command, from write to answer."""
    launch: float = 20.0
    """From starting the browser process to its DevTools endpoint answering."""
    tool_call: float = 30.0
    """A page tool invocation, from invokeTool to toolResponded."""
    dialog_grace: float = 2.0
    """After a dialog opens during a tool call, how long to wait for the call to finish anyway."""
    navigation: float = 15.0
    """Navigate/back/forward/reload until the new document is committed."""
    snapshot: float = 15.0
    """Building one tab's semantic view (Chromium alone needs 1.5-5 s for a 40,000-node AX tree)."""
    shutdown: float = 5.0
    """Closing the browser before it is killed."""
    notify: float = 2.0
    """Delivering one notification to one client."""
    human: float = 600.0
    """How long a form filled for an agent's call waits for someone to submit it."""
