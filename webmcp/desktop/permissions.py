"""What pages asked permission for, and what the browser answered: a notice in the tab's window.

The browser's settings are made once at start (`cdp_bridge.permissions.apply_permissions`):
every permission the bridge knows is denied for every origin unless `--grant` names it.
A page's request is seen by a small probe in its main world (webmcp/js/permission_probe.js),
which takes its binding off the global object before any page script runs: the page can
neither fake a report nor learn of the probe through it. The report says only which
permission was asked for; what the notice says it got is the bridge's own setting, so no page
can make the window claim a grant. A page that hides a request (it calls an API the probe does
not wrap) is refused all the same: the setting is the browser's, the notice is what may be missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.permissions import PERMISSIONS
from webmcp.desktop.parts import Commit, Part
from webmcp.js import call, load
from webmcp.models import notice_block

__all__ = ["PERMISSION_BINDING", "PermissionPolicy", "PermissionRequests"]

PERMISSION_BINDING = "__webmcpPermissionAsked"
"""The main-world binding the probe takes for itself before the page's scripts run."""


@dataclass(frozen=True)
class PermissionPolicy:
    """The browser's permission settings as the bridge made them."""

    granted: frozenset[str] = frozenset()
    not_set: str | None = None
    """Why the browser did not take the settings (then the browser decides, as it would for a person)."""

    def answer(self, name: str) -> str:
        """What a request for `name` got, in words."""
        if self.not_set is not None:
            return (
                "the bridge could not set this browser's permissions, so the browser's own settings decide (a "
                "prompt there waits for the person at the browser)"
            )
        if name in self.granted:
            return f"granted for every site (--grant {name})"
        return f"denied by the bridge; start it with --grant {name} to allow it for every site"


@dataclass
class PermissionRequests(Part):
    """One tab's record of the permissions its document asked for, in the order first asked (a part: parts.py)."""

    policy: PermissionPolicy
    on_asked: Callable[[], None] = lambda: None
    """Called after each new request (the window changes)."""
    _asked: dict[str, int] = field(default_factory=dict)
    _doc_seq: int = -1

    def watch(self, session: CDPSession, main: bool = False) -> list[SetUp]:
        """The set-up that installs the probe on `session` (page or OOPIF)."""

        def reported(params: dict[str, Any]) -> None:
            if params.get("name") == PERMISSION_BINDING and self.asked(str(params.get("payload", ""))):
                self.on_asked()

        session.on("Runtime.bindingCalled", reported)
        source = call(load("permission_probe.js"), PERMISSION_BINDING)
        return [
            SetUp("Runtime.addBinding", {"name": PERMISSION_BINDING}),
            SetUp("Page.addScriptToEvaluateOnNewDocument", {"source": source, "runImmediately": True}),
        ]

    def committed(self, doc: Commit) -> None:
        """A new document commits in the main frame: its requests start afresh."""
        if doc.seq != self._doc_seq:
            self._doc_seq = doc.seq
            self._asked = {}

    def asked(self, name: str) -> bool:
        """The probe reported a request for `name`; True when the window must change."""
        if name not in PERMISSIONS:
            return False  # only the names the probe sends; anything else is not a request
        self._asked[name] = self._asked.get(name, 0) + 1
        return True

    def notices(self) -> list[dict[str, Any]]:
        """One notice per permission the document asked for (never silent about a denial)."""
        blocks = []
        for name, times in self._asked.items():
            how_often = "" if times == 1 else f" ({times} times)"
            refused = self.policy.not_set is None and name not in self.policy.granted
            text = f"The page asked for {name}{how_often}: {self.policy.answer(name)}."
            blocks.append(notice_block(f"permission-{name}", "warn" if refused else "info", text))
        return blocks
