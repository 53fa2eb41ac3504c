"""The page scripts of the agent side, one `.js` file each (see `cdp_bridge.js` for the rules).

`load` reads one from this package's data; `call` is `cdp_bridge.js.call`, the one way to
pass values to a script.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from cdp_bridge.js import Expression, call

__all__ = ["Expression", "call", "load"]


@cache
def load(name: str) -> str:
    """The source of the script `name` (for example `"observer.js"`) of this package, read once."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
