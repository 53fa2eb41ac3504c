"""Checking a call's arguments against a tool's input schema, every problem at once."""

from __future__ import annotations

from typing import Any

import jsonschema

from webmcp.errors import ToolError

__all__ = ["validate"]


def validate(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Check `arguments` against `schema`.

    Raises:
        ToolError: `validation_failed` with one `{field, error}` per problem.
    """
    try:
        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        errors = sorted(validator_cls(schema).iter_errors(arguments), key=lambda e: list(e.path))
    except jsonschema.SchemaError:
        return  # A page's malformed schema cannot be held against the agent; the page decides.
    if not errors:
        return
    fields: list[dict[str, str]] = []
    for error in errors:
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [r for r in error.validator_value if r not in error.instance]
            fields.extend({"field": name, "error": "Required"} for name in missing)
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            fields.extend(
                {"field": k, "error": "Not a parameter of this tool"} for k in error.instance if k not in allowed
            )
        else:
            fields.append({"field": ".".join(str(p) for p in error.path) or "(input)", "error": error.message})
    raise ToolError("validation_failed", f"Input rejected: {len(fields)} field(s) are invalid", fields=fields)
