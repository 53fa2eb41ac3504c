"""Secrets in a tab's view: masking the values of secret fields wherever they echo.

Which fields are secret is `webmcp.view.secrets`' rule (the AX tree cannot tell a card
number field from any other textbox); their current values stay in the bridge's memory
only, so that text which repeats one of them (a page echoing what was typed, in a result,
an error, a title or a dialog) is masked before it leaves the bridge.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache
from typing import Any

from webmcp.view.secrets import SECRET_SELECTOR as _SECRETS_SELECTOR

__all__ = ["MASK", "SECRET_SELECTOR", "mask_secrets"]

MASK = "••••••"

# Type and autocomplete only, case-insensitive (`webmcp.view.secrets`): the DOM query of a
# snapshot finds these; the element-level rule (words of names and labels, CSS) adds the rest.
SECRET_SELECTOR = _SECRETS_SELECTOR


def mask_secrets(value: Any, secrets: Collection[str]) -> Any:
    """`value` (any JSON value) with every occurrence of a secret string replaced by `MASK`.

    Used on whatever leaves the bridge (tool output, error messages, titles, dialog
    messages), since a page may echo what the user typed into a password or card field.
    Values shorter than 3 characters are left alone (they would mask half of any text).
    """
    pattern = _pattern(frozenset(s for s in secrets if len(s) >= 3))
    if pattern is None:
        return value
    return _mask(value, pattern)


@lru_cache(maxsize=32)
def _pattern(needles: frozenset[str]) -> re.Pattern[str] | None:
    # One scan per string; the longest first, so a secret that contains another is masked whole.
    if not needles:
        return None
    return re.compile("|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True)))


def _mask(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(MASK, value) if pattern.search(value) else value
    if isinstance(value, dict):
        return {_mask(k, pattern): _mask(v, pattern) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, pattern) for v in value]
    return value
