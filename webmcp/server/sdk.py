"""The `mcp` SDK's server pieces, imported without the SDK's own package `__init__`s.

`import mcp.server.lowlevel.server` runs `mcp/__init__.py` and `mcp/server/__init__.py` first,
and those import the whole SDK: the client (`httpx2`), the high-level `MCPServer`, its
resource and prompt managers — some 120 modules the bridge never uses, and a tenth of a second
on the way to the first answer (issue 22). `defer_package_inits` puts those two packages in
`sys.modules` so that their submodules import on their own, and a package's `__init__` runs
the first time a name is asked of it that it does not have yet: `from mcp import Client`
still works, it only pays then. The bridge's modules therefore import what they use from the
submodules (`mcp.server.lowlevel.server`, `mcp.server.context`, …), never from the packages.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from typing import Any

__all__ = ["defer_package_inits"]

_PACKAGES = ("mcp", "mcp.server")
_lock = threading.RLock()


class _DeferredPackage(types.ModuleType):
    """A package whose `__init__` has not run: it runs on the first name the package lacks."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":  # `from mcp import *` reads __all__
            raise AttributeError(name)
        with _lock:
            if self.__dict__.get("_init_ran"):
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
            if importlib.util.find_spec(f"{self.__name__}.{name}") is not None:
                # A submodule (`from mcp import types`): the import system imports it alone.
                raise AttributeError(name)
            self.__dict__["_init_ran"] = True
            spec = self.__spec__
            assert spec is not None and spec.loader is not None
            spec.loader.exec_module(self)
        return self.__dict__[name] if name in self.__dict__ else super().__getattribute__(name)


def defer_package_inits() -> None:
    """Let `mcp`'s submodules be imported without the packages' `__init__` (a no-op once `mcp` is imported)."""
    with _lock:
        for name in _PACKAGES:
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None or spec.submodule_search_locations is None:
                return  # not a package as expected: import it the ordinary way
            module = importlib.util.module_from_spec(spec)
            module.__class__ = _DeferredPackage
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)
