"""Secrets in a tab's view: which inputs are secret, and masking their values wherever they echo.

Password, card and one-time-code inputs are found with `SECRET_SELECTOR` (the AX tree
cannot tell a card number field from any other textbox); their current values stay in
the bridge's memory only, so that text which repeats one of them (a page echoing what
was typed) is masked before it leaves the bridge.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from webmcp.view.secrets import SECRET_SELECTOR as _SECRETS_SELECTOR

__all__ = ["MASK", "SECRET_SELECTOR", "mask_secrets"]

MASK = "••••••"

# A CSS superset, case-insensitive (`webmcp.view.secrets`): the DOM query of a snapshot finds
# these; the element-level rule (labels, names) adds the rest.
SECRET_SELECTOR = _SECRETS_SELECTOR


def mask_secrets(value: Any, secrets: Collection[str]) -> Any:
    """`value` (any JSON value) with every occurrence of a secret string replaced by `MASK`.

    Used on whatever a page hands back (tool output, error messages), since a page may
    echo what the user typed into a password or card field.
    """
    needles = sorted((s for s in secrets if len(s) >= 3), key=len, reverse=True)
    if not needles:
        return value
    return _mask(value, needles)


def _mask(value: Any, needles: list[str]) -> Any:
    if isinstance(value, str):
        for needle in needles:
            if needle in value:
                value = value.replace(needle, MASK)
        return value
    if isinstance(value, dict):
        return {_mask(k, needles): _mask(v, needles) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, needles) for v in value]
    return value
