"""Checking call arguments against a page's schema without trusting the schema.

Three things a hostile schema could do to a plain `jsonschema` validator, and what stops
each here:

* fetch `http://…` or `file://…` through `$ref` (jsonschema's default registry retrieves
  with `urlopen`, on the caller's thread, without a timeout): every validator here gets an
  empty `referencing.Registry`, so an outside reference is answered as an error, never fetched;
* recurse without end (`{"$ref": "#"}`) or blow up exponentially through nested
  references: each validation may take at most `MAX_REF_STEPS` reference steps, and a
  RecursionError is caught; either way the answer is a structured error;
* backtrack catastrophically in `pattern` / `patternProperties`: patterns run on RE2
  (`google-re2`), which is linear in the input. A pattern RE2 cannot run (lookaround,
  backreferences) is not checked here; the page still receives and checks the input.
  Python's `re` in a worker thread would not do: it holds the GIL for the whole match, so
  the event loop stalls with it (measured in bench/bench_schema_guard.py).

`validate_async` runs `validate` in a worker thread with a deadline, so even a slow
validation never blocks the event loop or another window's call. Only a check that is
cheap by construction runs on the loop instead: a *linear* schema (no reference, no
branching keyword, no `uniqueItems`), whose cost is bounded by schema size × input size,
with that product at most `INLINE_WORK` (a few milliseconds at worst, microseconds for the
schemas pages write). The thread hand-off it saves was a fifth of the bridge's own time on
a page-tool call. Compiled validators are cached by schema fingerprint: compiled once per
tool version.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import jsonschema
import re2
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError

__all__ = [
    "INLINE_WORK",
    "MAX_ARGUMENT_BYTES",
    "MAX_REF_STEPS",
    "VALIDATE_DEADLINE_S",
    "FieldError",
    "compile_validator",
    "json_text",
    "problem_of",
    "schema_fingerprint",
    "unsupported_patterns",
    "validate",
    "validate_async",
]

logger = logging.getLogger(__name__)

FieldError = dict[str, str]
"""`{"field": "a.b" | "(input)" | "(schema)", "error": "…"}`, as `validation_failed` lists them."""

MAX_ARGUMENT_BYTES = 1024 * 1024
MAX_REF_STEPS = 10_000
MAX_ERRORS = 50
MAX_MESSAGE = 300
VALIDATE_DEADLINE_S = 2.0
INLINE_WORK = 1 << 16
"""Schema bytes × input bytes up to which `validate_async` checks a linear schema on the event loop."""
# Keywords that make a check branch, follow references or compare pairs: such a schema is
# always checked in the worker thread, whatever its size.
_NOT_LINEAR = frozenset(
    {"$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"}
    | {"contains", "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "uniqueItems"}
)
_CACHE_SIZE = 512
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print every rejected page pattern to stderr
_RE2_OPTIONS.max_mem = 8 << 20


@functools.lru_cache(maxsize=2048)
def _re2(pattern: str) -> Any | None:
    """The RE2 program for `pattern`, or None when RE2 cannot run it."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except (re2.error, TypeError, ValueError):
        return None


def _canonical(schema: Any) -> bytes:
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.encode("utf-8", "surrogatepass")


def schema_fingerprint(schema: Any) -> str:
    """SHA-256 of the canonical JSON of `schema` (stable across key order)."""
    return hashlib.sha256(_canonical(schema)).hexdigest()


def _walk_schemas(schema: Any) -> Iterator[dict[str, Any]]:
    """Every dict in `schema` that sits where a schema may (instance data skipped)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(v for k, v in node.items() if k not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend(node)


def unsupported_patterns(schema: Any) -> list[str]:
    """The patterns of `schema` that RE2 cannot run (and `validate` therefore skips)."""
    found: list[str] = []
    for node in _walk_schemas(schema):
        pattern = node.get("pattern")
        if isinstance(pattern, str) and _re2(pattern) is None:
            found.append(pattern)
        props = node.get("patternProperties")
        if isinstance(props, dict):
            found.extend(p for p in props if _re2(p) is None)
    return found


class _BudgetExceeded(Exception):
    pass


_steps = threading.local()


def _counted(original: Callable[..., Iterator[ValidationError]]) -> Callable[..., Iterator[ValidationError]]:
    def keyword(validator: Any, ref: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        left = getattr(_steps, "left", None)
        if left is not None:
            if left <= 0:
                raise _BudgetExceeded
            _steps.left = left - 1
        yield from original(validator, ref, instance, schema)

    return keyword


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string"):
        program = _re2(pattern)
        if program is not None and program.search(instance) is None:
            yield ValidationError(f"{json_text(instance)} does not match the pattern {json_text(pattern)}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        program = _re2(pattern)
        if program is None:
            continue
        for key, value in instance.items():
            if program.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    programs = [p for p in map(_re2, patterns) if p is not None]
    if len(programs) < len(patterns):
        return  # Which keys an unsupported pattern would claim is unknown: leave it to the page.
    extras = [k for k in instance if k not in known and not any(p.search(k) is not None for p in programs)]
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif extra is False and extras:
        yield ValidationError(f"Not parameters of this tool: {', '.join(map(json_text, sorted(extras)))}")


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for name, subschema in properties.items():
        if name not in instance:
            continue
        if subschema is False:
            # jsonschema reports a false subschema without its path: the field would read "(input)".
            yield ValidationError(f"No value is allowed here (got {json_text(instance[name])})", path=[name])
        else:
            yield from validator.descend(instance[name], subschema, path=name, schema_path=name)


def _skip(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    return iter(())


_BASE = jsonschema.Draft202012Validator
_SAFE_KEYWORDS = {
    "$ref": _counted(_BASE.VALIDATORS["$ref"]),
    "$dynamicRef": _counted(_BASE.VALIDATORS["$dynamicRef"]),
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "properties": _properties,
}
_Safe = jsonschema.validators.extend(_BASE, _SAFE_KEYWORDS)
# jsonschema matches patternProperties with Python's re when it works out unevaluated keys;
# with both keywords present the bridge leaves unevaluatedProperties to the page.
_SafeNoUnevaluated = jsonschema.validators.extend(_BASE, {**_SAFE_KEYWORDS, "unevaluatedProperties": _skip})


@dataclass(frozen=True)
class _Compiled:
    validator: Any
    schema_bytes: int
    linear: bool
    """No reference, no branching, nothing quadratic: a check costs at most schema × input size."""


_cache: OrderedDict[str, _Compiled] = OrderedDict()
_cache_lock = threading.Lock()


def compile_validator(schema: Any, fingerprint: str | None = None) -> _Compiled:
    """The validator of `schema`, compiled once per distinct schema (LRU by fingerprint).

    `fingerprint`: `schema_fingerprint(schema)`, when the caller keeps it (a page tool's is
    worked out once, when the page registers it): then a schema already compiled is found
    without serialising and hashing it again, which took most of a quiet call's check.
    """
    if fingerprint is not None:
        with _cache_lock:
            hit = _cache.get(fingerprint)
            if hit is not None:
                _cache.move_to_end(fingerprint)
                return hit
    canonical = _canonical(schema)
    key = hashlib.sha256(canonical).hexdigest()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    nodes = list(_walk_schemas(schema))
    both = any("patternProperties" in n for n in nodes) and any("unevaluatedProperties" in n for n in nodes)
    cls = _SafeNoUnevaluated if both else _Safe
    linear = not any(_NOT_LINEAR.intersection(n) for n in nodes)
    # An empty registry: nothing outside the schema itself is ever looked up, let alone fetched.
    compiled = _Compiled(cls(schema, registry=referencing.Registry()), len(canonical), linear)
    with _cache_lock:
        _cache[key] = compiled
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def _cap(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def _schema_error(message: str) -> list[FieldError]:
    return [{"field": "(schema)", "error": message}]


def validate(schema: Any, arguments: Any) -> list[FieldError]:
    """Every problem of `arguments` against `schema`, as `{field, error}`; [] when valid. Never raises.

    Problems of the schema itself (an outside or dangling reference, endless recursion,
    too much work) come back as one error on the field "(schema)".
    """
    size, problem = _input_size(arguments)
    if problem:
        return problem
    return _check(schema, None, arguments)


def _input_size(arguments: Any) -> tuple[int, list[FieldError]]:
    """The size of `arguments` as JSON, and the problem if they are not plain JSON or too big."""
    try:
        size = len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return 0, [{"field": "(input)", "error": "The input is not plain JSON."}]
    if size > MAX_ARGUMENT_BYTES:
        return size, [
            {"field": "(input)", "error": f"The input is {size} bytes; at most {MAX_ARGUMENT_BYTES} are accepted."}
        ]
    return size, []


def _check(schema: Any, compiled: _Compiled | None, arguments: Any) -> list[FieldError]:
    _steps.left = MAX_REF_STEPS
    try:
        validator = (compiled or compile_validator(schema)).validator
        errors: list[ValidationError] = []
        for error in validator.iter_errors(arguments):
            errors.append(error)
            if len(errors) >= MAX_ERRORS:
                break
    except referencing.exceptions.Unresolvable as exc:
        return _schema_error(_cap(f"The tool's schema refers to something it does not contain ({exc})."))
    except RecursionError:
        return _schema_error("The tool's schema refers to itself without end; the page must fix its schema.")
    except _BudgetExceeded:
        return _schema_error(
            f"Checking the input took more than {MAX_REF_STEPS} reference steps; the tool's schema is too costly."
        )
    except jsonschema.exceptions.UnknownType as exc:
        return _schema_error(_cap(f"The tool's schema uses an unknown type {json_text(exc.type)}."))
    except jsonschema.SchemaError as exc:
        return _schema_error(_cap(f"The tool's schema is not valid JSON Schema: {exc.message}"))
    except Exception as exc:  # boundary: jsonschema assumes well-formed schemas; a page's may be anything
        logger.debug("a page schema broke the validator: %s", type(exc).__name__)
        return _schema_error(_cap(f"The tool's schema could not be applied: {type(exc).__name__}."))
    finally:
        _steps.left = None
    return _fields(errors)


def _fields(errors: list[ValidationError]) -> list[FieldError]:
    found: list[tuple[str, str, str]] = []  # (field, keyword, words) of each problem
    for error in sorted(errors, key=lambda e: [str(p) for p in e.path]):
        where = ".".join(str(p) for p in error.path)
        keyword = str(error.validator)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [r for r in error.validator_value if r not in error.instance]
            found.extend((str(name), keyword, "Required") for name in missing)
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            owner = error.schema if isinstance(error.schema, dict) else {}
            allowed = owner.get("properties", {})
            programs = [p for p in map(_re2, owner.get("patternProperties", {})) if p is not None]
            found.extend(
                (f"{where}.{k}" if where else str(k), keyword, "Not a parameter of this tool")
                for k in error.instance
                if k not in allowed and not any(p.search(k) is not None for p in programs)
            )
        else:
            found.append((where or "(input)", keyword, _cap(problem_of(error))))
    return _once(found)


def _once(found: list[tuple[str, str, str]]) -> list[FieldError]:
    """Each problem once per field; a field whose allowed values are named needs no type error besides.

    Chromium publishes a `<select>` as `enum` plus an `anyOf` of the same `const`s: for one
    wrong value both fail, in the same words (see `_branches`), and the field is reported once.
    """
    valued = {where for where, keyword, _ in found if keyword in _VALUE_KEYWORDS}
    seen: set[tuple[str, str]] = set()
    fields: list[FieldError] = []
    for where, keyword, words in found:
        if (where, words) in seen or (keyword == "type" and where in valued):
            continue
        seen.add((where, words))
        fields.append({"field": where, "error": words})
    return fields


_VALUE_KEYWORDS = frozenset({"enum", "const"})
_BOUNDS = {
    "minimum": "less than the minimum of",
    "maximum": "more than the maximum of",
    "exclusiveMinimum": "not more than",
    "exclusiveMaximum": "not less than",
}
_SHOWN_CHARS = 80
"""How much of a value a message quotes."""


def json_text(value: Any, max_chars: int = _SHOWN_CHARS) -> str:
    """`value` as JSON (null, true, "text", {"a": 1}), cut to `max_chars` with an ellipsis."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def _types(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(str(n) for n in names)


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _shape(schema: Any) -> str:
    """A few words for one branch of an `anyOf`/`oneOf`."""
    if not isinstance(schema, dict):
        return "anything" if schema is True else "nothing"
    if "const" in schema:
        return json_text(schema["const"])
    if isinstance(schema.get("enum"), list):
        return "one of " + json_text(schema["enum"])
    if "type" in schema:
        return _types(schema["type"])
    return "another shape"


def _branches(value: Any) -> str:
    shapes = [_shape(s) for s in value] if isinstance(value, list) else []
    if shapes and all(isinstance(s, dict) and "const" in s for s in value):
        # Every branch is one value: the same words as `enum` (see _once).
        return "is not one of " + json_text([s["const"] for s in value], 200)
    return "matches none of: " + "; ".join(shapes)


def problem_of(error: ValidationError) -> str:
    """One validation error in the words of JSON, not of Python (null, true, "text", not None, True, 'text')."""
    keyword, value, instance = error.validator, error.validator_value, error.instance
    shown = json_text(instance)
    if isinstance(error.schema, dict) and error.schema.get("writeOnly") is True:
        shown = "the value given"  # a password: never quoted back, not even when it is the wrong type
    if "propertyNames" in error.absolute_schema_path:
        shown = f"the parameter name {shown}"
    match keyword:
        case "type":
            return f"{shown} is not of type {_types(value)}"
        case "enum":
            return f"{shown} is not one of {json_text(value, 200)}"
        case "const":
            return f"{shown} is not the allowed value {json_text(value)}"
        case "anyOf":
            return f"{shown} {_branches(value)}"
        case "oneOf" if not error.context:
            return f"{shown} matches more than one of: " + "; ".join(_shape(s) for s in value)
        case "oneOf":
            return f"{shown} {_branches(value)}"
        case "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum":
            return f"{shown} is {_BOUNDS[keyword]} {json_text(value)}"
        case "multipleOf":
            return f"{shown} is not a multiple of {json_text(value)}"
        case "minLength" | "maxLength":
            short = keyword == "minLength"
            bound = "short (at least" if short else "long (at most"
            return f"{shown} is too {bound} {_plural(value, 'character')})"
        case "minItems" | "maxItems":
            bound = "at least" if keyword == "minItems" else "at most"
            return f"{shown} has {_plural(len(instance), 'item')}; {bound} {value} allowed"
        case "minProperties" | "maxProperties":
            bound = "at least" if keyword == "minProperties" else "at most"
            return f"{shown} has {_plural(len(instance), 'property')}; {bound} {value} allowed"
        case "uniqueItems":
            return f"{shown} has repeated items"
        case "contains" | "minContains" | "maxContains":
            return f"{shown} does not hold the items the tool asks for ({keyword})"
        case "dependentRequired" if isinstance(value, dict) and isinstance(instance, dict):
            needs = [
                f"{json_text(k)} needs {', '.join(json_text(d) for d in v if d not in instance)}"
                for k, v in value.items()
                if k in instance and isinstance(v, list) and any(d not in instance for d in v)
            ]
            return "; ".join(needs) or error.message
        case "not":
            return f"{shown} is a value the tool excludes"
        case "format":
            return f"{shown} is not a valid {value}"
        case "unevaluatedProperties" | "unevaluatedItems":
            return f"{shown} holds entries the tool does not accept"
        case None if error.schema is False:
            return f"No value is allowed here (got {shown})"
    # Another keyword (or our own, already in JSON words): its message, with Python's
    # spelling of the value replaced by JSON's.
    return error.message.replace(repr(instance), shown)


_limiter: anyio.CapacityLimiter | None = None


async def validate_async(
    schema: Any, arguments: Any, *, deadline: float = VALIDATE_DEADLINE_S, fingerprint: str | None = None
) -> list[FieldError]:
    """`validate` in a worker thread, answered within `deadline` seconds; never blocks the event loop.

    A linear schema over a small input (schema × input bytes ≤ `INLINE_WORK`) is checked
    on the loop: it costs less than the hand-off to a thread. `fingerprint`: the schema's,
    if known (see `compile_validator`).
    """
    size, problem = _input_size(arguments)
    if problem:
        return problem
    try:
        compiled: _Compiled | None = compile_validator(schema, fingerprint)
    except Exception:  # boundary: a schema that breaks compiling is answered by validate, in the thread
        compiled = None
    if compiled is not None and compiled.linear and compiled.schema_bytes * max(size, 1) <= INLINE_WORK:
        return _check(schema, compiled, arguments)
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(4)
    result: list[FieldError] | None = None
    with anyio.move_on_after(deadline):
        result = await anyio.to_thread.run_sync(validate, schema, arguments, abandon_on_cancel=True, limiter=_limiter)
    if result is None:
        return _schema_error(f"Checking the input took longer than {deadline:g} s; the tool's schema is too costly.")
    return result
