"""The page scripts of the CDP side, one `.js` file each, and the one way to call them with values.

Each file holds a single JavaScript function expression (a `//` comment may precede it).
`load` reads one from the package data; `call` makes the `Runtime.evaluate` expression (or
the self-contained source of `Page.addScriptToEvaluateOnNewDocument`) that calls it. Values
reach a script only as JSON-encoded arguments, never spliced into its source, so no value
can change what the script does. `Runtime.callFunctionOn` takes a loaded function as
`functionDeclaration` and its values as `arguments`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["Expression", "call", "load"]


class Expression(str):
    """JavaScript source that `call` inserts as it is: another script's call, never a value."""

    __slots__ = ()


def call(function: str, *args: Any) -> Expression:
    """`(function)(args…)`: an expression calling the script `function` with `args`.

    Each argument is JSON-encoded, except an `Expression`, which is inserted as it is
    (the value of another script, such as a predicate made by one).
    """
    encoded = ", ".join(a if isinstance(a, Expression) else json.dumps(a) for a in args)
    return Expression(f"({function})({encoded})")


@cache
def load(name: str) -> str:
    """The source of the script `name` (for example `"runs.js"`) of this package, read once."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
