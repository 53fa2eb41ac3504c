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

from .connection import CDPSession
from .errors import CDPError

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
    for name, descriptors in PERMISSIONS.items():
        setting = "granted" if name in grants else "denied"
        for descriptor in descriptors:
            try:
                await browser.send(
                    "Browser.setPermission", {"permission": {"name": descriptor}, "setting": setting}, timeout=timeout
                )
            except CDPError as exc:
                logger.warning("could not set the %s permission to %s: %s", descriptor, setting, exc)
                return str(exc)
    return None
