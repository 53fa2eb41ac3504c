"""The browser's permission settings for what pages may ask: denied unless the bridge was told to grant.

A page that asks for geolocation, notifications, the camera, the microphone or the clipboard
gets the browser's answer at once, with no prompt that nobody would see: `apply_permissions`
sets each of them for every origin (`Browser.setPermission` without an origin), "granted"
for those named by `--grant` and "denied" for the rest. The settings are DevTools overrides:
the browser drops them when the bridge's connection ends, so a browser the bridge attached to
gets its own settings back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import CDPError

if TYPE_CHECKING:  # the command line reads PERMISSIONS before the connection's imports are made
    from .connection import CDPSession

__all__ = ["PERMISSIONS", "apply_permissions"]

logger = logging.getLogger(__name__)

PERMISSIONS: dict[str, tuple[str, ...]] = {
    "geolocation": ("geolocation",),
    "notifications": ("notifications",),
    "camera": ("camera",),
    "microphone": ("microphone",),
    "clipboard": ("clipboard-read", "clipboard-write"),
}
"""What `--grant` names → the Permissions API descriptors (`Browser.setPermission`) each one covers."""


async def apply_permissions(browser: CDPSession, granted: Iterable[str], timeout: float) -> str | None:
    """Grant `granted` (names of `PERMISSIONS`) and deny the others, for every origin.

    Returns None when the browser took every setting, else the browser's reason (a browser
    reached through the extension, or one that refuses overrides): the caller must then
    not claim the pages' requests are denied.

    Raises:
        KeyError: a name that is not in `PERMISSIONS` (the command line checks them first).
    """
    grants = set(granted)
    for name in grants:
        PERMISSIONS[name]  # noqa: B018 - a wrong name is a caller's bug, raised before anything is set
    settings = [
        (descriptor, "granted" if name in grants else "denied")
        for name, descriptors in PERMISSIONS.items()
        for descriptor in descriptors
    ]
    commands = [("Browser.setPermission", {"permission": {"name": d}, "setting": s}) for d, s in settings]
    # Written together, answered together: a browser still busy starting answers the six in the time
    # of one (each took 5-50 ms, one by one, up to ~300 ms on a loaded machine).
    try:
        answers: list[object] = list(await browser.send_all(commands, timeout=timeout))
    except CDPError as exc:  # the browser went away: nothing is known to be set
        answers = [exc]
    first, refusal = next(((i, a) for i, a in enumerate(answers) if isinstance(a, CDPError)), (0, None))
    if refusal is None:
        return None
    descriptor, setting = settings[first]
    logger.warning("could not set the %s permission to %s: %s", descriptor, setting, refusal)
    return str(refusal)
