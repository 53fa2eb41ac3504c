"""Schema-driven fuzzing of the MCP surface: calls no model could get right, from the tools' own schemas.

`bad_calls` turns `tools/list` into an endless stream of tool calls that must each be
refused: every one carries at least one definite fault (a property of the wrong type,
a required one missing, an unknown one where the schema forbids extras, an
`expectedVersion` that is not an integer or is stale), decorated with huge strings, odd
Unicode and extra fields; plus calls to tool names that do not exist. Nothing it sends
may change the page's state. `bad_uris` and `junk_requests` cover resources and
malformed JSON-RPC. Shared by tests/e2e/test_fuzz_e2e.py (short) and bench/fuzz.py (long).
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["BadCall", "ODD_STRINGS", "bad_calls", "bad_uris", "junk_requests"]

ODD_STRINGS = (
    "",
    " ",
    "\u0000",
    "\ud7ff\ue000",
    "\u202e\u202dreversed",
    "e\u0301\u0301\u0301",
    "\U0001f9e8" * 50,
    "\ufeff\u200b\u2060",
    "../../../etc/passwd",
    "<script>alert(1)</script>",
    "${{7*7}}",
    "\\\\?\\C:\\",
    "tab-1__close",
    "x" * 100_000,
)
"""Strings a careless server mishandles: control and combining characters, huge, markup."""

_WRONG_FOR = {
    "string": [12345, True, None, ["list"], {"o": 1}],
    "integer": ["seven", 1.5, True, None, [], {}],
    "number": ["1e3", True, None, [1], {}],
    "boolean": ["true", 0, None, []],
    "array": ["a,b", 3, {"0": 1}, None],
    "object": ["{}", 3, [1], None],
}


@dataclass(frozen=True)
class BadCall:
    """One tool call that must be refused, and which fault makes it so."""

    name: str
    arguments: Any
    fault: str


def _odd_value(rng: random.Random) -> Any:
    return rng.choice(
        [
            rng.choice(ODD_STRINGS),
            rng.randint(-(2**63), 2**63),
            float(rng.choice(["inf", "-inf", "1e308"])),
            [rng.choice(ODD_STRINGS)] * rng.randint(0, 50),
            {rng.choice(ODD_STRINGS)[:20]: rng.choice(ODD_STRINGS)[:20]},
            None,
        ]
    )


def _valid_like(prop: dict[str, Any], rng: random.Random) -> Any:
    """A value of the right type (maybe odd): used beside the fault, never as the fault."""
    kind = prop.get("type")
    if "enum" in prop and prop["enum"]:
        return rng.choice(prop["enum"])
    if kind == "integer":
        return rng.choice([0, 1, 101, 2**31])
    if kind == "number":
        return rng.choice([0, 0.5, 3])
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return rng.choice(ODD_STRINGS)


def _faults(schema: dict[str, Any]) -> list[str]:
    props: dict[str, Any] = schema.get("properties", {})
    kinds = ["version_type", "version_stale"]
    if any(isinstance(p, dict) and p.get("type") in _WRONG_FOR for n, p in props.items() if n != "expectedVersion"):
        kinds.append("wrong_type")
    if [r for r in schema.get("required", ()) if r != "expectedVersion"]:
        kinds.append("missing_required")
    if schema.get("additionalProperties") is False:
        kinds.append("unknown_field")
    return kinds


def _one(name: str, schema: dict[str, Any], rng: random.Random) -> BadCall:
    props: dict[str, Any] = {k: v for k, v in schema.get("properties", {}).items() if k != "expectedVersion"}
    args: dict[str, Any] = {k: _valid_like(v, rng) for k, v in props.items() if isinstance(v, dict)}
    fault = rng.choice(_faults(schema))
    if fault == "wrong_type":
        typed = [k for k, p in props.items() if isinstance(p, dict) and p.get("type") in _WRONG_FOR]
        key = rng.choice(typed)
        args[key] = rng.choice(_WRONG_FOR[props[key]["type"]])
    elif fault == "missing_required":
        for key in schema.get("required", ()):
            args.pop(key, None)
    elif fault == "unknown_field":
        args[rng.choice(["zz_" + rng.choice(string.ascii_letters), "\u00e9t\u00e9", "__proto__"])] = _odd_value(rng)
    elif fault == "version_type":
        args["expectedVersion"] = rng.choice(["3", 1.5, True, None, [], {"v": 1}, "\U0001f9e8"])
    else:  # version_stale: otherwise valid, so the version check is what refuses it
        args["expectedVersion"] = rng.choice([-1, -(2**40), 2**53])
    if fault not in ("unknown_field",) and schema.get("additionalProperties") is not False and rng.random() < 0.3:
        args[rng.choice(ODD_STRINGS)[:30] or "extra"] = _odd_value(rng)
    return BadCall(name, args, fault)


def _odd_name(rng: random.Random, known: list[str]) -> str:
    base = rng.choice(known) if known else "tab-1__x"
    return rng.choice(
        [
            "",
            "__",
            "tab-1",
            "tab-999__navigate",
            "app__" + rng.choice(ODD_STRINGS)[:50],
            base + "\u0000",
            base.upper(),
            base.replace("__", "_"),
            rng.choice(ODD_STRINGS)[:200] + "__" + rng.choice(ODD_STRINGS)[:200],
            "dlg-1__accept",
        ]
    )


def bad_calls(tools: list[tuple[str, dict[str, Any]]], seed: int) -> Iterator[BadCall]:
    """An endless stream of tool calls that must all be refused, drawn from `tools` (name, inputSchema)."""
    rng = random.Random(seed)
    names = [name for name, _ in tools]
    while True:
        roll = rng.random()
        if roll < 0.15 or not tools:
            yield BadCall(_odd_name(rng, names), {}, "unknown_tool")
        elif roll < 0.2:
            name, _ = rng.choice(tools)
            yield BadCall(name, rng.choice([[1, 2], "args", 7, None]), "arguments_not_an_object")
        else:
            name, schema = rng.choice(tools)
            yield _one(name, schema, rng)


def bad_uris(seed: int) -> Iterator[str]:
    """Resource URIs that name nothing."""
    rng = random.Random(seed)
    while True:
        yield rng.choice(
            [
                "app://window",
                "app://windows/../secrets",
                "ui://locate/999999",
                "ui://locate/" + rng.choice(ODD_STRINGS)[:100],
                "file:///etc/passwd",
                "http://127.0.0.1:1/",
                "app://" + rng.choice(ODD_STRINGS)[:300],
            ]
        )


def junk_requests(seed: int) -> Iterator[bytes]:
    """Malformed JSON-RPC messages (each a single line)."""
    rng = random.Random(seed)
    while True:
        yield rng.choice(
            [
                b"not json at all",
                b"{",
                b"[]",
                b'{"jsonrpc": "1.0", "id": 9001, "method": "tools/list"}',
                b'{"jsonrpc": "2.0", "id": 9002}',
                b'{"jsonrpc": "2.0", "id": 9003, "method": "no/such/method", "params": {}}',
                b'{"jsonrpc": "2.0", "id": 9004, "method": "tools/call", "params": "x"}',
                b'{"jsonrpc": "2.0", "id": 9005, "method": "tools/call", "params": {"arguments": {}}}',
                b'{"jsonrpc": "2.0", "id": 9006, "method": "resources/read", "params": {}}',
                ('{"jsonrpc": "2.0", "id": 9007, "method": "' + "m" * 10_000 + '"}').encode(),
                b"\xff\xfe\x00garbage",
            ]
        )
