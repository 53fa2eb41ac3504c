"""Page-supplied tool definitions: normalising them, and validating calls against hostile schemas."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_types import _v2025_11_25 as wire_2025
from mcp_types import _v2026_07_28 as wire_2026

from tests.support.recorder import recording_server
from webmcp.untrusted import schema_validate
from webmcp.untrusted.schema_guard import (
    BROWSER_ACTIONS,
    MAX_DESCRIPTION_BYTES,
    MAX_HANDLE,
    MAX_SCHEMA_BYTES,
    WINDOW_ID_BUDGET,
    NormalisedTool,
    Unusable,
    cap_text,
    handle_for,
    normalise_tool,
    page_arguments,
)
from webmcp.untrusted.schema_validate import (
    MAX_REF_STEPS,
    compile_validator,
    schema_fingerprint,
    validate,
    validate_async,
)

CATASTROPHIC = "^(a+)+$"


def _ok(raw: dict[str, Any]) -> NormalisedTool:
    tool = normalise_tool(raw)
    assert isinstance(tool, NormalisedTool), tool
    return tool


def _publishable(tool: NormalisedTool, window_id: str = "tab-12345678") -> None:
    """What `tools/list` would carry for `tool` passes every generation's Tool model."""
    schema = {**tool.input_schema, "properties": {**tool.input_schema["properties"], "expectedVersion": {}}}
    wire = {"name": f"{window_id}__{tool.handle}", "description": tool.description, "inputSchema": schema}
    mcp_types.Tool.model_validate(wire)
    wire_2025.Tool.model_validate(wire)
    wire_2026.Tool.model_validate(wire)
    assert len(wire["name"]) <= 64


# ---- names and handles -------------------------------------------------------------------


def test_a_safe_free_name_is_kept_as_the_handle() -> None:
    assert handle_for("list_tickets") == "list_tickets"


@pytest.mark.parametrize("action", sorted(BROWSER_ACTIONS))
def test_a_page_can_never_take_a_browser_action_name(action: str) -> None:
    for name in (action, action.upper(), action.capitalize()):
        handle = handle_for(name)
        assert handle.casefold() not in BROWSER_ACTIONS
        assert handle.startswith("page_")


@pytest.mark.parametrize(
    "name",
    ["tab-4__tab-1__navigate", "a__b", "__", "x" * 64, "x" * 51, "ünïcødé tool", "a b/c", "page_x", "", "_", "-"],
)
def test_unsafe_names_get_a_bounded_name_safe_handle_without_double_underscore(name: str) -> None:
    handle = handle_for(name)
    assert len(handle) <= MAX_HANDLE
    assert "__" not in handle
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in handle)
    assert len(f"{'t' * WINDOW_ID_BUDGET}__{handle}") <= 64


def test_a_handle_is_stable_for_the_same_name_and_differs_between_names() -> None:
    assert handle_for("a__b") == handle_for("a__b")
    assert handle_for("a__b") != handle_for("a_b_")
    assert handle_for("x" * 64) != handle_for("x" * 65)


def test_the_same_name_in_another_frame_gets_its_own_handle_with_a_salt() -> None:
    assert handle_for("search", salt="FRAME1") != handle_for("search")
    assert handle_for("search", salt="FRAME1") == handle_for("search", salt="FRAME1")
    assert handle_for("search", salt="FRAME1") != handle_for("search", salt="FRAME2")


def test_a_64_character_name_becomes_a_full_tool_name_within_64() -> None:
    tool = _ok({"name": "n" * 64, "inputSchema": {"type": "object", "properties": {}}})
    assert tool.name == "n" * 64  # the exact name is still what the page is called with
    assert len(f"tab-99999999__{tool.handle}") <= 64
    assert any("Published as" in n for n in tool.notices)


def test_descriptions_and_names_are_capped_in_bytes_and_lose_control_characters() -> None:
    tool = _ok({"name": "a\u202eb", "description": "é" * 60_000 + "\x00"})
    assert len(tool.description.encode()) <= MAX_DESCRIPTION_BYTES
    assert tool.description.endswith("[cut by the bridge]")
    assert tool.display_name == "ab"
    assert cap_text("short\nline", 100) == "short\nline"


def test_annotations_are_coerced_to_booleans() -> None:
    tool = _ok({"name": "t", "annotations": {"readOnly": "true", "consequential": 1, "untrustedContent": {}, "x": 1}})
    assert tool.annotations == {
        "readOnly": True,
        "untrustedContent": False,
        "consequential": True,
        "debugging": False,
        "autosubmit": False,
    }
    assert _ok({"name": "t", "annotations": "readOnly"}).annotations["readOnly"] is False


# ---- schemas -------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", [None, True, {}, {"properties": None}, {"type": "object", "properties": None}])
def test_missing_or_null_schemas_become_an_empty_object_schema(schema: Any) -> None:
    tool = _ok({"name": "t", "inputSchema": schema})
    assert tool.input_schema["type"] == "object"
    assert tool.input_schema["properties"] == {}
    _publishable(tool)


def test_properties_that_are_not_schemas_are_dropped_with_a_notice() -> None:
    tool = _ok({"name": "t", "inputSchema": {"type": "object", "properties": {"a": 3, "b": {"type": "string"}}}})
    assert tool.input_schema["properties"] == {"b": {"type": "string"}}
    assert any("malformed" in n for n in tool.notices)


def test_object_or_null_becomes_object() -> None:
    tool = _ok({"name": "t", "inputSchema": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}}})
    assert tool.input_schema["type"] == "object"
    assert not tool.wrapped
    _publishable(tool)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "string"},
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    ],
)
def test_non_object_input_cannot_be_passed_by_chromium_and_is_unusable(schema: dict[str, Any]) -> None:
    # WebMCP.invokeTool takes an object and answers -32602 to anything else.
    tool = normalise_tool({"name": "t", "inputSchema": schema})
    assert isinstance(tool, Unusable)
    assert "object" in tool.reason


def test_a_page_parameter_named_like_the_bridges_own_is_wrapped_under_one_parameter() -> None:
    tool = _ok({"name": "t", "inputSchema": {"type": "object", "properties": {"expectedVersion": {"type": "string"}}}})
    assert tool.wrapped
    assert tool.input_schema["required"] == ["input"]
    _publishable(tool)
    value = {"expectedVersion": "v"}
    assert page_arguments(tool, {"input": value, "expectedVersion": 3}) == value


def test_wrapping_keeps_internal_references_working() -> None:
    schema = {
        "type": "object",
        "properties": {
            "expectedVersion": {"type": "string"},
            "ids": {"type": "array", "items": {"$ref": "#/$defs/id"}},
        },
        "$defs": {"id": {"type": "integer"}},
    }
    tool = _ok({"name": "t", "inputSchema": schema})
    assert validate(tool.input_schema, {"input": {"ids": [1, 2]}}) == []
    assert validate(tool.input_schema, {"input": {"ids": [1, "x"]}}) == [
        {"field": "input.ids.1", "error": '"x" is not of type integer'}
    ]


def test_page_arguments_drop_the_bridges_own_keys() -> None:
    tool = _ok({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}})
    assert page_arguments(tool, {"a": 1, "expectedVersion": 7}) == {"a": 1}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "objekt"}, "unknown type"),
        ({"type": ["object", 5]}, "unknown type"),
        ({"$ref": "http://127.0.0.1:1/x"}, "outside itself"),
        ({"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}, "outside itself"),
        ({"type": "object", "properties": {"a": {"$dynamicRef": "https://evil.example/s"}}}, "outside itself"),
        ({"type": "object", "properties": {"a": {"type": "strnig"}}}, "not valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"minLength": -1}}}, "not valid JSON Schema"),
        (False, "accepts no input"),
        ("{}", "not a JSON object"),
        ([], "not a JSON object"),
    ],
)
def test_schemas_that_cannot_be_published_make_the_tool_unusable_with_a_reason(schema: Any, reason: str) -> None:
    tool = normalise_tool({"name": "bad", "inputSchema": schema})
    assert isinstance(tool, Unusable)
    assert reason in tool.reason


def test_a_ref_inside_instance_data_is_inert() -> None:
    schema = {"type": "object", "properties": {"a": {"const": {"$ref": "http://x/"}, "default": {"$ref": "file:///"}}}}
    _publishable(_ok({"name": "t", "inputSchema": schema}))


def test_huge_and_deep_schemas_are_refused() -> None:
    huge = {
        "type": "object",
        "properties": {f"p{i}": {"description": "d" * 100} for i in range(MAX_SCHEMA_BYTES // 100)},
    }
    assert "bytes" in normalise_tool({"name": "t", "inputSchema": huge}).reason  # type: ignore[union-attr]
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(5000):  # deeper than Python's recursion limit: the check must be iterative
        deep = {"type": "object", "properties": {"a": deep}}
    assert "deeper" in normalise_tool({"name": "t", "inputSchema": deep}).reason  # type: ignore[union-attr]


def test_a_tool_without_a_name_is_unusable() -> None:
    assert isinstance(normalise_tool({"inputSchema": {}}), Unusable)
    assert isinstance(normalise_tool("not a dict"), Unusable)


def test_dialect_and_base_keywords_are_dropped() -> None:
    tool = _ok({"name": "t", "inputSchema": {"$schema": "http://evil/x", "$id": "http://evil/", "type": "object"}})
    assert "$schema" not in tool.input_schema and "$id" not in tool.input_schema


def test_patterns_re2_cannot_run_are_noted_and_skipped() -> None:
    schema = {"type": "object", "properties": {"pw": {"type": "string", "pattern": "^(?=.*\\d).{8,}$"}}}
    tool = _ok({"name": "t", "inputSchema": schema})
    assert any("linear-time" in n for n in tool.notices)
    assert validate(tool.input_schema, {"pw": "x"}) == []


def test_the_fingerprint_follows_the_schema_not_its_key_order() -> None:
    a = _ok({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}})
    b = _ok({"name": "t", "inputSchema": {"properties": {"b": {}, "a": {}}, "type": "object"}})
    c = _ok({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}})
    assert a.fingerprint == b.fingerprint != c.fingerprint


# ---- validation against hostile schemas ------------------------------------------------------


_HITS: list[str] = []


@pytest.fixture
def local_server() -> Iterator[str]:
    """A local HTTP server that records every request; yields its base URL (requests in `_HITS`)."""
    _HITS.clear()
    with recording_server(_HITS) as (url, _hits):
        yield url


def test_a_remote_ref_is_never_fetched(local_server: str) -> None:
    for schema in (
        {"$ref": f"{local_server}/root"},
        {"type": "object", "properties": {"a": {"$ref": f"{local_server}/a"}}},
        {"$id": f"{local_server}/base/", "type": "object", "properties": {"a": {"$ref": "other.json"}}},
    ):
        errors = validate(schema, {"a": 1})
        assert errors and errors[0]["field"] == "(schema)", errors
    assert _HITS == []


def test_a_file_ref_is_never_read() -> None:
    errors = validate({"type": "object", "properties": {"a": {"$ref": "file:///etc/hostname"}}}, {"a": 1})
    assert errors[0]["field"] == "(schema)"
    assert "does not contain" in errors[0]["error"]


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "object", "properties": {"a": {"type": "strnig"}}}, 'unknown type "strnig"'),
        ({"type": "object", "properties": {"a": {"minLength": "x"}}}, "could not be applied"),
        ({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}, "does not contain"),
        ({"type": "object", "properties": {"a": {"multipleOf": False}}}, "could not be applied"),
    ],
)
def test_broken_schemas_that_reach_validate_answer_a_schema_error(schema: dict[str, Any], words: str) -> None:
    errors = validate(schema, {"a": 0 if "multipleOf" in str(schema) else "x"})
    assert errors[0]["field"] == "(schema)" and words in errors[0]["error"], errors


def test_a_self_reference_is_a_structured_error_not_a_recursion_error() -> None:
    assert validate({"$ref": "#"}, {"a": 1})[0]["field"] == "(schema)"


def test_exponential_references_are_cut_off_by_the_step_budget() -> None:
    defs: dict[str, Any] = {"a0": {"type": "integer"}}
    for i in range(1, 40):
        defs[f"a{i}"] = {"allOf": [{"$ref": f"#/$defs/a{i - 1}"}, {"$ref": f"#/$defs/a{i - 1}"}]}
    errors = validate({"$defs": defs, "$ref": "#/$defs/a39"}, 5)
    assert errors == [
        {
            "field": "(schema)",
            "error": f"Checking the input took more than {MAX_REF_STEPS} reference steps; "
            "the tool's schema is too costly.",
        }
    ]


@pytest.mark.parametrize("length", [27, 40, 5000])
def test_a_catastrophic_pattern_answers_like_any_mismatch(length: int) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": CATASTROPHIC}}}
    [error] = validate(schema, {"s": "a" * length + "!"})
    assert error["field"] == "s" and error["error"].endswith(f"does not match the pattern {json.dumps(CATASTROPHIC)}")
    assert validate(schema, {"s": "a" * length}) == []


def test_catastrophic_pattern_properties_and_additional_properties_use_re2() -> None:
    schema = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
    }
    key = "a" * 40 + "!"
    assert validate(schema, {key: 1}) == [{"field": key, "error": "Not a parameter of this tool"}]
    assert validate(schema, {"a" * 40: "x"})[0]["field"] == "a" * 40
    schema["unevaluatedProperties"] = False
    assert validate(schema, {"aaa": 1}) == []


def test_errors_name_fields_like_validation_failed_does() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "note": {"type": "string", "minLength": 1}},
        "required": ["id", "note"],
        "additionalProperties": False,
    }
    assert validate(schema, {"id": 1, "note": "x"}) == []
    errors = validate(schema, {"id": "x", "extra": 1})
    assert {"field": "note", "error": "Required"} in errors
    assert {"field": "extra", "error": "Not a parameter of this tool"} in errors
    assert {"field": "id", "error": '"x" is not of type integer'} in errors


def test_oversized_or_non_json_input_is_refused_before_validation() -> None:
    assert validate({"type": "object"}, {"a": "x" * (2 * 1024 * 1024)})[0]["field"] == "(input)"
    assert validate({"type": "object"}, {"a": object()})[0]["field"] == "(input)"


def test_a_schema_is_compiled_once() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert compile_validator(schema) is compile_validator(json.loads(json.dumps(schema)))
    assert compile_validator(schema) is not compile_validator({"type": "object"})


def test_a_schema_compiled_before_is_found_by_its_fingerprint_without_hashing_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}}}
    compiled = compile_validator(schema)
    fingerprint = schema_fingerprint(json.loads(json.dumps(schema)))  # what a page tool keeps

    def no_hashing(_schema: object) -> bytes:
        raise AssertionError("the schema was serialised again")

    monkeypatch.setattr(schema_validate, "_canonical", no_hashing)
    assert compile_validator(schema, fingerprint) is compiled
    monkeypatch.undo()
    # A fingerprint nothing was compiled under (a page tool's, before its first call): compiled as ever.
    other = {"type": "object", "properties": {"c": {"type": "string"}}}
    assert compile_validator(other, "0" * 64) is compile_validator(other)


@pytest.mark.anyio
async def test_validate_async_answers_within_its_deadline_and_the_loop_keeps_running() -> None:
    release = threading.Event()
    ticks = 0

    def slow(*_args: Any) -> list[Any]:
        release.wait(10)
        return []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    import webmcp.untrusted.schema_validate as module

    original = module.validate
    module.validate = slow  # type: ignore[assignment]
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            with anyio.fail_after(5):
                errors = await validate_async({"anyOf": [{"type": "object"}]}, {}, deadline=0.2)
            tg.cancel_scope.cancel()
    finally:
        module.validate = original  # type: ignore[assignment]
        release.set()
    assert errors[0]["field"] == "(schema)" and "longer than" in errors[0]["error"]
    assert ticks > 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        ({"type": "object", "properties": {"s": {"pattern": CATASTROPHIC}}}, {"s": "a" * 30 + "!"}),
        ({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n", "m"]}, {"n": "1"}),
        ({"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"enum": ["x"]}]}}}, {"n": "y"}),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}}, {"a": 1}),
        ({"type": "object", "additionalProperties": False}, {"a": "x" * 10_000}),
        ({"type": "object"}, {"a": object()}),
    ],
)
async def test_validate_async_gives_the_same_answer_as_validate(schema: dict[str, Any], arguments: Any) -> None:
    with anyio.fail_after(5):
        assert await validate_async(schema, arguments) == validate(schema, arguments)


@pytest.mark.anyio
async def test_a_small_linear_schema_is_checked_on_the_loop_and_anything_else_in_the_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import webmcp.untrusted.schema_validate as module

    handed_off: list[Any] = []

    async def run_sync(func: Any, *args: Any, **_kwargs: Any) -> Any:
        handed_off.append(args[0])
        return func(*args)

    monkeypatch.setattr(module.anyio.to_thread, "run_sync", run_sync)
    linear = {"type": "object", "properties": {"status": {"type": "string", "enum": ["open", "all"]}}}
    branching = {"type": "object", "properties": {"status": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    unique = {"type": "object", "properties": {"ids": {"type": "array", "uniqueItems": True}}}
    with anyio.fail_after(5):
        assert await validate_async(linear, {"status": "all"}) == []
        assert await validate_async(linear, {"status": "none"}) != []
        assert handed_off == []
        assert await validate_async(branching, {"status": "all"}) == []
        assert await validate_async(unique, {"ids": [1, 2]}) == []
        assert await validate_async(linear, {"status": "all", "pad": "x" * module.INLINE_WORK}) == []
    assert handed_off == [branching, unique, linear]


# ---- fuzz -------------------------------------------------------------------------------------

_json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_keywords = st.sampled_from(
    ["type", "properties", "required", "items", "$ref", "$defs", "anyOf", "pattern", "enum", "minLength",
     "additionalProperties", "patternProperties", "$id", "$schema", "const", "not"]
)  # fmt: skip
_types = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null", "objekt"])
_schema = st.recursive(
    st.none() | st.booleans() | st.fixed_dictionaries({"type": _types | st.lists(_types, max_size=3)}),
    lambda inner: st.dictionaries(_keywords, inner | _json | st.dictionaries(st.text(max_size=6), inner), max_size=5),
    max_leaves=15,
)
_names = st.text(max_size=80) | st.sampled_from(sorted(BROWSER_ACTIONS)) | st.just("tab-1__navigate")
_tool = st.fixed_dictionaries(
    {"name": _names},
    optional={
        "description": st.text(max_size=300) | _json,
        "inputSchema": _schema | _json,
        "annotations": st.dictionaries(st.sampled_from(["readOnly", "consequential", "untrustedContent"]), _json)
        | _json,
        "frameId": st.text(max_size=5),
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_tool, arguments=st.dictionaries(st.text(max_size=6), _json, max_size=4))
def test_fuzz_normalise_never_raises_and_its_output_is_a_valid_mcp_tool(raw: dict[str, Any], arguments: Any) -> None:
    started = time.monotonic()
    tool = normalise_tool(raw)
    if isinstance(tool, Unusable):
        assert tool.reason
        assert "__" not in tool.handle and len(tool.handle) <= MAX_HANDLE
        return
    _publishable(tool)
    assert "__" not in tool.handle and tool.handle.casefold() not in BROWSER_ACTIONS
    errors = validate(tool.input_schema, arguments)
    assert all(set(e) == {"field", "error"} for e in errors)
    assert time.monotonic() - started < 30  # a hang, not a speed claim


_raw_keywords = st.sampled_from(
    ["multipleOf", "minLength", "maxItems", "items", "prefixItems", "contains", "minContains", "dependentRequired",
     "dependentSchemas", "propertyNames", "if", "then", "else", "uniqueItems", "format", "$defs", "$anchor",
     "$dynamicRef", "$dynamicAnchor", "unevaluatedItems", "unevaluatedProperties", "patternProperties",
     "additionalProperties", "required", "enum", "const", "type", "$ref", "allOf", "not", "pattern"]
)  # fmt: skip
_raw_schema = st.recursive(
    _json_leaf | st.lists(st.integers(), max_size=3),
    lambda inner: st.dictionaries(_raw_keywords, inner, max_size=4) | st.lists(inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_raw_schema, arguments=_json)
def test_fuzz_validate_never_raises_on_schemas_nobody_normalised(schema: Any, arguments: Any) -> None:
    errors = validate(schema, arguments)
    assert all(set(e) == {"field", "error"} and isinstance(e["error"], str) for e in errors)
