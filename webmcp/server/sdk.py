"""The `mcp` SDK's server pieces, imported without the SDK's own package `__init__`s.

`import mcp.server.lowlevel.server` runs `mcp/__init__.py` and `mcp/server/__init__.py` first,
and those import the whole SDK: the client (`httpx2`), the high-level `MCPServer`, its
resource and prompt managers — some 120 modules the bridge never uses, and a tenth of a second
on the way to the first answer (issue 22). `defer_package_inits` puts those two packages in
`sys.modules` so that their submodules import on their own, and a package's `__init__` runs
the first time a name is asked of it that it does not have yet: `from mcp import Client`
still works, it only pays then. The bridge's modules therefore import what they use from the
submodules (`mcp.server.lowlevel.server`, `mcp.server.context`, …), never from the packages.

`mcp_types` also defines the wire shapes of each protocol generation, some 390 pydantic models
whose validators pydantic builds as each class is made: about a third of the MCP side's imports,
for models of which a session uses a handful. `defer_package_inits` also has them built on
first use (`defer_build`, set on their base class `WireModel` before any of them is made): the
same validators, made when a message of that shape first comes or goes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
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


_WIRE_BASE = "mcp_types._wire_base"


class _WireModelsOnFirstUse(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `mcp_types._wire_base` as usual, then makes its `WireModel`'s subclasses build on first use."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _WIRE_BASE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        self._inner = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        assert isinstance(self._inner, importlib.abc.Loader)
        self._inner.exec_module(module)
        base = getattr(module, "WireModel", None)
        if base is not None and isinstance(getattr(base, "model_config", None), dict):
            # Pydantic merges each base class's config into a new subclass's: set before any is made.
            base.model_config["defer_build"] = True


def defer_package_inits() -> None:
    """Let `mcp`'s submodules be imported without the packages' `__init__`, and the wire models build on
    first use (a no-op once `mcp` is imported)."""
    with _lock:
        if _WIRE_BASE not in sys.modules and not any(isinstance(f, _WireModelsOnFirstUse) for f in sys.meta_path):
            sys.meta_path.insert(0, _WireModelsOnFirstUse())
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
