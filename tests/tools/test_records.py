"""Tool records, the catalogue and the generated wire schemas."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import BaseModel, Field

from webmcp.desktop.tab import TAB_OPERATIONS
from webmcp.models import SCHEMA_FILE, ToolResult, input_schema_of, render_current_schema, tool_output_schema
from webmcp.tools.catalog import RESULT_SCHEMA, action_schema
from webmcp.tools.records import RECORDS, record_for
from webmcp.tools.specs import listed_schema


def test_every_browser_action_name_is_reserved_from_page_tools() -> None:
    # A sign-in prompt never holds page tools, so its `sign_in` leaves a page's own `sign_in` tool its name.
    assert {r.action for r in RECORDS if r.applies_to != "sign_in"} <= TAB_OPERATIONS
    assert "sign_in" not in TAB_OPERATIONS, "login forms named sign_in keep their handle"


def test_each_window_kind_has_each_action_once() -> None:
    keys = [(r.applies_to, r.action) for r in RECORDS]
    assert len(keys) == len(set(keys))
    assert record_for("modal", "close") is not record_for("tab", "close")


def test_record_input_schemas_refuse_unknown_arguments_and_accept_expected_version() -> None:
    for record in RECORDS:
        schema = action_schema(record.input_schema)
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        assert not validator.is_valid({"no_such_argument": 1}), record.action
        # A sample will do for every required argument: fill's list of fields, a list for other arrays.
        samples: dict[str, object] = {"fields": [{"label": "Email", "value": "a@example.com"}]}
        properties = schema.get("properties", {})
        required = {
            name: samples.get(name, ["x"] if properties.get(name, {}).get("type") == "array" else "x")
            for name in schema.get("required", ())
        }
        assert validator.is_valid({**required, "expectedVersion": 2}), record.action


def test_record_input_schemas_carry_no_references_and_fill_refuses_an_unknown_key_in_a_field() -> None:
    # Written inline: fewer bytes in every tools/list, and clients that follow no $ref read them whole.
    for record in RECORDS:
        text = json.dumps(record.input_schema)
        assert "$ref" not in text and "$defs" not in text, record.action
    fill = jsonschema.Draft202012Validator(action_schema(record_for("tab", "fill").input_schema))
    assert fill.is_valid({"fields": [{"label": "Email", "value": "a@example.com", "blockId": "b2"}]})
    assert not fill.is_valid({"fields": [{"label": "Email", "value": "a@example.com", "colour": "red"}]})
    assert not fill.is_valid({"fields": [{"value": "a@example.com"}]})


def test_a_described_nested_model_is_written_inline_with_its_description() -> None:
    class Inner(BaseModel):
        label: str

    class Outer(BaseModel):
        inner: Inner = Field(description="The inner one.")

    schema = input_schema_of(Outer)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema, schema
    assert schema["properties"]["inner"]["description"] == "The inner one."
    assert schema["properties"]["inner"]["properties"]["label"]["type"] == "string"
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"inner": {"label": "a"}}) and not validator.is_valid({"inner": {"label": 1}})


def test_a_model_that_refers_to_itself_keeps_its_references() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    schema = input_schema_of(Node)
    assert "$defs" in schema or "$ref" in json.dumps(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.Draft202012Validator(schema).is_valid({"name": "a", "children": [{"name": "b"}]})


def test_the_shipped_current_schema_is_the_one_the_models_generate() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_current_schema(), "run: python -m webmcp.models"


@pytest.mark.parametrize(
    "result",
    [
        ToolResult(
            message="m", opened_window_ids=["dlg-1"], result={"a": None, "b": [1, {"c": None}]}, untrusted_content=True
        ),
        ToolResult(message="m"),
        ToolResult(result={}),
        ToolResult(),
    ],
)
def test_a_results_wire_form_is_its_dump_without_nones(result: ToolResult) -> None:
    assert list(ToolResult.model_fields) == ["message", "opened_window_ids", "result", "untrusted_content"], (
        "ToolResult.wire() writes each field by hand: a new field must be added there"
    )
    wire = result.wire()
    assert wire == result.model_dump(by_alias=True, exclude_none=True)
    assert list(wire) == list(result.model_dump(by_alias=True, exclude_none=True)), "in the same order"


def test_tool_results_match_the_declared_output_schema() -> None:
    validator = jsonschema.Draft202012Validator(tool_output_schema())
    result = ToolResult(message="m", opened_window_ids=["dlg-1"], result={"a": 1}, untrusted_content=True).wire()
    assert result == {"message": "m", "openedWindowIds": ["dlg-1"], "result": {"a": 1}, "untrustedContent": True}
    assert validator.is_valid(result)
    # Clients validate error results against it too (the TypeScript SDK does): every error fits.
    error = {"code": "validation_failed", "message": "m", "fields": [{"field": "id", "error": "Required"}]}
    assert validator.is_valid(error)
    assert validator.is_valid({"code": "blocked_by_modal", "message": "m", "blockingWindowId": "dlg-1"})
    assert not validator.is_valid({"code": "no_such_code", "message": "m"})
    assert not validator.is_valid({"message": 3})
    # What tools/list declares is the seed's short form: every result and error fits it too.
    declared = jsonschema.Draft202012Validator(RESULT_SCHEMA)
    assert declared.is_valid(result) and declared.is_valid(error)
    assert declared.is_valid({"code": "stale_state", "message": "m", "currentVersion": 4})
    assert not declared.is_valid({"result": 3}), "a page's answer is an object"
    assert len(json.dumps(RESULT_SCHEMA, separators=(",", ":"))) < 80


def test_the_listed_schema_leaves_out_guards_but_never_touches_names_or_values() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "pattern": r"\S"},
            "n": {"type": "integer", "minimum": 0, "maximum": 9, "default": {"maxLength": 3}},
            "kind": {"enum": [{"minItems": 1}], "const": {"pattern": "x"}},
        },
        "required": ["pattern"],
    }
    assert listed_schema(schema) == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "n": {"type": "integer", "maximum": 9, "default": {"maxLength": 3}},
            "kind": {"enum": [{"minItems": 1}], "const": {"pattern": "x"}},
        },
        "required": ["pattern"],
    }
    assert schema["additionalProperties"] is False, "the checked schema is left as it was"
