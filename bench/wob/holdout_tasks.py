"""Hold-out MiniWoB++ policies (see holdout.py)."""

from __future__ import annotations

from .policies import policy  # noqa: F401

TASKS: list[str] = []
