"""Page-supplied tool definitions made safe to publish and to validate against. Pure.

A WebMCP tool comes from a web page, so every part of it is hostile data: its name may
collide with a browser action or break the `{windowId}__{handle}` naming, its schema may be
`properties: null`, `type: "array"`, megabytes long, nested a thousand deep, or point at
`http://…` and `file://…` through `$ref`. `normalise_tool` turns any such definition into a
`NormalisedTool` that the MCP types accept, or into `Unusable` with a reason the bridge can
show as a notice.

Budget of a published name: model APIs cap tool names at 64 characters. A window id is at
most `WINDOW_ID_BUDGET` (12) characters (`tab-99999999`, `dlg-12345678`), the separator `__`
takes 2, so a handle is at most `MAX_HANDLE` = 50 characters, `[A-Za-z0-9_-]`, never with
`__` and never equal (case-insensitively) to a browser action. A page's own name is kept
when it meets all that; otherwise the handle is `page_<cleaned name>_<10 hex of its SHA-256>`,
the same for the same name in every run.

`validate` (in `webmcp.untrusted.schema_validate`) checks call arguments against the schema
that `normalise_tool` produced.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from .schema_validate import json_text, problem_of, schema_fingerprint, unsupported_patterns

__all__ = [
    "BROWSER_ACTIONS",
    "MAX_DESCRIPTION_BYTES",
    "MAX_HANDLE",
    "MAX_NAME_BYTES",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "WINDOW_ID_BUDGET",
    "WRAPPED_KEY",
    "NormalisedTool",
    "Unusable",
    "cap_text",
    "handle_for",
    "normalise_tool",
    "page_arguments",
    "schema_fingerprint",
]

WINDOW_ID_BUDGET = 12
"""Longest window id the naming budget allows for (`tab-` + 8 digits)."""
MAX_TOOL_NAME = 64
MAX_HANDLE = MAX_TOOL_NAME - WINDOW_ID_BUDGET - len("__")
MAX_NAME_BYTES = 128
"""The page's own name, as quoted in descriptions."""
MAX_DESCRIPTION_BYTES = 2048
MAX_SCHEMA_BYTES = 16 * 1024
"""Compact UTF-8 JSON of the input schema; a larger one makes the tool unusable."""
MAX_SCHEMA_DEPTH = 32
"""Nesting of JSON containers in the schema."""
WRAPPED_KEY = "input"
"""A tool whose input is not an object takes it under this one property."""

BROWSER_ACTIONS = frozenset(
    {
        "focus",
        "navigate",
        "back",
        "forward",
        "reload",
        "close",
        "read_content",
        "screenshot",
        "accept",
        "dismiss",
        "submit",
        "fill",
        "press",
        "hover",
        "press_key",
        "cancel",
        "open_tab",
        "stop_dialogs",
        "close_tab",
        "list_page_tools",
        "choose",
        "read_download",
        "call_page_tool",
        "wait_for",
    }
)
"""Every browser action's name (tools/records.py), and `back`, `forward` and `reload`, which were actions
before `navigate {go}` took them in (a page tool's handle stays as it was): a page tool never takes one
as its handle, in any case."""
_RESERVED_PARAMS = frozenset({"expectedVersion"})
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-]+")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9-]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
# Values of these keywords are instance data, not schemas: a `$ref` inside them is inert.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_ANNOTATIONS = ("readOnly", "untrustedContent", "consequential", "debugging", "autosubmit")
_CUT = "… [cut by the bridge]"


@dataclass(frozen=True)
class NormalisedTool:
    """A page tool the bridge can publish: every field is bounded and MCP-valid."""

    name: str
    """The page's exact name, for `WebMCP.invokeTool` only; never published raw."""
    display_name: str
    """The page's name, control characters removed and capped, for quoting in descriptions."""
    handle: str
    description: str
    """The page's description, capped; still the page's words (the caller attributes them)."""
    input_schema: dict[str, Any]
    annotations: dict[str, bool]
    wrapped: bool = False
    """The page's schema is not an object: the published one holds it under `WRAPPED_KEY`."""
    notices: tuple[str, ...] = ()
    fingerprint: str = ""
    """SHA-256 of the published schema; the key of the compiled-validator cache."""


@dataclass(frozen=True)
class Unusable:
    """A page tool that cannot be published; list it as a notice with `reason`."""

    name: str
    display_name: str
    handle: str
    reason: str
    notices: tuple[str, ...] = field(default=())


def cap_text(text: str, max_bytes: int) -> str:
    """`text` without control characters, at most `max_bytes` of UTF-8 (a cut says so)."""
    text = _CONTROL.sub("", text)
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    keep = max(0, max_bytes - len(_CUT.encode("utf-8")))
    return raw[:keep].decode("utf-8", "ignore") + _CUT


def handle_for(name: str, salt: str = "") -> str:
    """The stable, name-safe handle of a page tool called `name`.

    `salt` (a frame id, say) separates two tools of the same name in one tab: pass it when
    the plain handle is already taken by another frame's tool; the handle is then hashed.
    """
    if (
        not salt
        and len(name) <= MAX_HANDLE
        and _SAFE_NAME.fullmatch(name)
        and "__" not in name
        and not name.startswith("page_")
        and name.casefold() not in BROWSER_ACTIONS
    ):
        return name
    digest = hashlib.sha256(f"{salt}\x00{name}".encode("utf-8", "surrogatepass")).hexdigest()[:10]
    # Runs of anything else (underscores included) become one underscore, so no `__` can form.
    cleaned = _UNSAFE_RUN.sub("_", name).strip("_-")[: MAX_HANDLE - len("page__") - len(digest)]
    cleaned = cleaned.rstrip("_")
    return f"page_{cleaned}_{digest}" if cleaned else f"page_{digest}"


def page_arguments(tool: NormalisedTool, arguments: Mapping[str, Any]) -> Any:
    """What the page receives for `arguments` of a call: the bridge's own keys removed, unwrapped."""
    own = {k: v for k, v in arguments.items() if k not in _RESERVED_PARAMS}
    if tool.wrapped:
        return own.get(WRAPPED_KEY)
    return own


def normalise_tool(raw: Any) -> NormalisedTool | Unusable:
    """Make one `WebMCP.toolsAdded` entry publishable, or say why it cannot be. Never raises."""
    raw = raw if isinstance(raw, Mapping) else {}
    name = raw.get("name")
    name = name if isinstance(name, str) else ("" if name is None else str(name))
    display_name = cap_text(name, MAX_NAME_BYTES) or "(unnamed)"
    handle = handle_for(name)
    if not name:
        return Unusable(name, display_name, handle, "The page registered a tool without a name.")
    description = raw.get("description")
    description = cap_text(description if isinstance(description, str) else "", MAX_DESCRIPTION_BYTES)
    notices: list[str] = []
    if handle != name:
        notices.append(f"Published as {handle}: the page's name is not a safe, free tool name.")
    try:
        schema, wrapped = _normalise_schema(raw.get("inputSchema"), notices)
    except _Refused as exc:
        return Unusable(name, display_name, handle, str(exc), tuple(notices))
    return NormalisedTool(
        name=name,
        display_name=display_name,
        handle=handle,
        description=description,
        input_schema=schema,
        annotations=_annotations(raw.get("annotations")),
        wrapped=wrapped,
        notices=tuple(notices),
        fingerprint=schema_fingerprint(schema),
    )


class _Refused(Exception):
    """The schema cannot be published; the message says why, in words for the agent."""


def _annotations(raw: Any) -> dict[str, bool]:
    source = raw if isinstance(raw, Mapping) else {}
    return {key: _truthy(source.get(key)) for key in _ANNOTATIONS}


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, int | float):
        return value != 0
    return False


def _normalise_schema(raw: Any, notices: list[str]) -> tuple[dict[str, Any], bool]:
    if raw is None or raw is True:
        return {"type": "object", "properties": {}}, False
    if raw is False:
        raise _Refused("Its input schema accepts no input at all (false).")
    if not isinstance(raw, Mapping):
        raise _Refused(f"Its input schema is {_json_kind(raw)}, not a JSON object.")
    _check_shape(raw)
    schema: dict[str, Any] = copy.deepcopy(dict(raw))
    # The bridge validates with one dialect and resolves nothing outside the schema.
    dropped = [key for key in ("$schema", "$id") if schema.pop(key, None) is not None]
    notices.extend(f"The schema's {key} was dropped." for key in dropped)
    declared = schema.get("type")
    types = declared if isinstance(declared, list) else [declared]
    unknown = [t for t in types if t is not None and not (isinstance(t, str) and t in _JSON_TYPES)]
    if unknown:
        raise _Refused(f"Its input schema has an unknown type {cap_text(json_text(unknown[0]), 80)}.")
    if isinstance(declared, list) and "object" in declared:
        schema["type"] = "object"
        notices.append("The schema allowed non-object input too; calls always send an object.")
    elif declared is None and ("properties" in schema or not _has_other_shape(schema)):
        schema["type"] = "object"
    if schema.get("type") is None:
        raise _Refused("Its input schema does not say that its input is an object.")
    if schema.get("type") != "object":
        # WebMCP.invokeTool takes an object as input and answers -32602 to anything else.
        raise _Refused(
            f"Its input schema wants {cap_text(json_text(schema.get('type')), 40)} input, and Chromium passes a page "
            "tool only an object."
        )
    if _RESERVED_PARAMS & set(_props(schema)):
        _fix_object(schema, notices)
        return _wrap(schema, notices), True
    _fix_object(schema, notices)
    _check_meta(schema)
    _note_patterns(schema, notices)
    return schema, False


def _json_kind(value: Any) -> str:
    """What `value` is, in JSON's words ("an array", not "a list")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    return "not JSON"


def _props(schema: Mapping[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _has_other_shape(schema: Mapping[str, Any]) -> bool:
    return any(k in schema for k in ("anyOf", "oneOf", "allOf", "not", "$ref", "enum", "const", "items", "if"))


def _fix_object(schema: dict[str, Any], notices: list[str]) -> None:
    if schema.get("type") != "object":
        return
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        notices.append("The schema's properties were not an object and were dropped.")
        props = {}
    bad = [k for k, v in props.items() if not isinstance(v, dict | bool)]
    if bad:
        notices.append(f"{len(bad)} malformed propert{'y was' if len(bad) == 1 else 'ies were'} dropped.")
    schema["properties"] = {str(k): v for k, v in props.items() if isinstance(v, dict | bool)}
    required = schema.get("required")
    if required is not None:
        kept = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        if kept != required:
            notices.append("The schema's required list was malformed and was cleaned.")
        schema["required"] = kept
        if not kept:
            del schema["required"]


def _wrap(schema: dict[str, Any], notices: list[str]) -> dict[str, Any]:
    _check_meta(schema)
    _note_patterns(schema, notices)
    notices.append(f"The page's input is passed as the parameter {json_text(WRAPPED_KEY)}.")
    _rebase_refs(schema, f"#/properties/{WRAPPED_KEY}")
    return {"type": "object", "properties": {WRAPPED_KEY: schema}, "required": [WRAPPED_KEY]}


def _rebase_refs(schema: dict[str, Any], base: str) -> None:
    """Point the schema's `#`, `#/…` references at its new place under the wrapper."""
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, data = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if (
                    not data
                    and key in _REF_KEYS
                    and isinstance(value, str)
                    and (value == "#" or value.startswith("#/"))
                ):
                    node[key] = base + value[1:]
                else:
                    stack.append((value, data or key in _DATA_KEYWORDS))
        elif isinstance(node, list):
            stack.extend((item, data) for item in node)


def _check_shape(raw: Mapping[str, Any]) -> None:
    """Refuse a schema too deep, too big, or pointing outside itself; iterative, so never recursion."""
    stack: list[tuple[Any, int, bool]] = [(raw, 1, False)]
    while stack:
        node, depth, data = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise _Refused(f"Its input schema is nested deeper than {MAX_SCHEMA_DEPTH} levels.")
        if isinstance(node, Mapping):
            for key, value in node.items():
                if not data and key in _REF_KEYS and isinstance(value, str) and not value.startswith("#"):
                    raise _Refused(
                        f"Its input schema refers to {cap_text(json_text(value, 120), 120)} outside itself; "
                        "the bridge resolves no external references."
                    )
                stack.append((value, depth + 1, data or key in _DATA_KEYWORDS))
        elif isinstance(node, list):
            stack.extend((item, depth + 1, data) for item in node)
    try:
        size = len(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError) as exc:
        raise _Refused("Its input schema is not plain JSON.") from exc
    if size > MAX_SCHEMA_BYTES:
        raise _Refused(f"Its input schema is {size} bytes; the bridge publishes at most {MAX_SCHEMA_BYTES}.")


_META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def _check_meta(schema: dict[str, Any]) -> None:
    # No format checker: `format: regex` would compile ECMAScript patterns with Python's re.
    error = jsonschema.exceptions.best_match(_META.iter_errors(schema))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise _Refused(f"Its input schema is not valid JSON Schema at {where}: {cap_text(problem_of(error), 200)}")


def _note_patterns(schema: dict[str, Any], notices: list[str]) -> None:
    skipped = unsupported_patterns(schema)
    if skipped:
        notices.append(
            f"{len(skipped)} pattern(s) use features the bridge's linear-time regex engine lacks "
            "(lookaround, backreferences); the page alone checks them."
        )
