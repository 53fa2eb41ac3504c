"""A fake CDP session for unit tests of what listens to a session's events."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any


class EventSession:
    """What a listener uses of a session: `on`; and `emit`, which plays an event to it."""

    def __init__(self) -> None:
        self.handlers: dict[str, list[Callable[[dict[str, Any]], None]]] = defaultdict(list)

    def on(self, method: str, handler: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        self.handlers[method].append(handler)
        return lambda: None

    def emit(self, method: str, params: dict[str, Any]) -> None:
        for handler in self.handlers[method]:
            handler(params)
