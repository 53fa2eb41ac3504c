"""Validation messages speak JSON, the language the agent wrote its arguments in, and say each problem once."""

from __future__ import annotations

from typing import Any

import pytest

from webmcp.untrusted.schema_guard import normalise_tool
from webmcp.untrusted.schema_validate import validate

# What Chromium 156 publishes for `<select name=priority>` (sample_site/README.md).
SELECT = {
    "type": "string",
    "enum": ["low", "normal", "high"],
    "anyOf": [{"type": "string", "const": v, "title": v} for v in ("low", "normal", "high")],
}


def _one(schema: dict[str, Any], value: Any) -> list[dict[str, str]]:
    return validate({"type": "object", "properties": {"v": schema}}, {"v": value})


@pytest.mark.parametrize(
    ("schema", "value", "words"),
    [
        ({"type": "integer"}, None, "null is not of type integer"),
        ({"type": "integer"}, True, "true is not of type integer"),
        ({"type": "string"}, False, "false is not of type string"),
        ({"type": "integer"}, {"a": None}, '{"a": null} is not of type integer'),
        ({"type": "integer"}, [1, None], "[1, null] is not of type integer"),
        ({"type": ["integer", "null"]}, "x", '"x" is not of type integer or null'),
        ({"enum": ["a", None, True]}, "z", '"z" is not one of ["a", null, true]'),
        ({"const": {"a": None}}, 1, '1 is not the allowed value {"a": null}'),
        ({"type": "string", "maxLength": 2}, "abc", '"abc" is too long (at most 2 characters)'),
        ({"type": "string", "pattern": "^a"}, "b", '"b" does not match the pattern "^a"'),
        ({"type": "integer", "minimum": 3}, 1, "1 is less than the minimum of 3"),
        ({"type": "array", "minItems": 2}, [None], "[null] has 1 item; at least 2 allowed"),
        (
            {"anyOf": [{"type": "integer"}, {"enum": ["x", "y"]}]},
            None,
            'null matches none of: integer; one of ["x", "y"]',
        ),
        (False, 1, "No value is allowed here (got 1)"),
    ],
)
def test_a_validation_message_names_values_as_json(schema: Any, value: Any, words: str) -> None:
    assert _one(schema, value) == [{"field": "v", "error": words}]


def test_no_message_spells_a_value_the_python_way() -> None:
    schemas: list[Any] = [
        {"type": "integer"},
        {"enum": [1, 2]},
        {"const": 0},
        {"type": "object", "additionalProperties": False},
        {"type": "object", "dependentRequired": {"a": ["b"]}},
        {"type": "array", "uniqueItems": True},
        {"not": {"type": "object"}},
        {"oneOf": [{"type": "object"}, {"type": "object"}]},
        SELECT,
    ]
    for schema in schemas:
        for value in (None, True, False, {"a": None, "x": True}, [None, None]):
            for problem in _one(schema, value):
                for python in ("None", "True", "False", "'"):
                    assert python not in problem["error"], (schema, value, problem)


@pytest.mark.parametrize("value", ["urgent", None, 3])
def test_a_select_field_with_a_wrong_value_is_reported_once(value: Any) -> None:
    [problem] = _one(SELECT, value)
    assert problem["error"].endswith('is not one of ["low", "normal", "high"]')


def test_a_value_that_fits_no_branch_of_any_of_consts_reads_like_an_enum() -> None:
    only_consts = {"anyOf": [{"const": 1}, {"const": "one"}]}
    assert _one(only_consts, 2) == [{"field": "v", "error": '2 is not one of [1, "one"]'}]


def test_two_different_problems_of_one_field_are_both_reported() -> None:
    problems = _one({"type": "string", "maxLength": 2, "pattern": "^a"}, "bcd")
    assert [p["error"] for p in problems] == [
        '"bcd" is too long (at most 2 characters)',
        '"bcd" does not match the pattern "^a"',
    ]


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ("object", "Its input schema is a string, not a JSON object."),
        ([1], "Its input schema is an array, not a JSON object."),
        ({"type": "strnig"}, 'Its input schema has an unknown type "strnig".'),
        ({"type": "array"}, 'Its input schema wants "array" input'),
        ({"type": "object", "properties": {"a": {"minLength": None}}}, "minLength: null is not of type integer"),
    ],
)
def test_why_a_tool_cannot_be_offered_is_said_in_json_words(schema: Any, words: str) -> None:
    refused = normalise_tool({"name": "t", "inputSchema": schema})
    assert words in getattr(refused, "reason", ""), refused
