"""Checking a call's arguments against a tool's input schema, every problem at once.

Page schemas are hostile data: the checks run through `webmcp.untrusted.schema_validate`
(no reference outside the schema is resolved, patterns run on RE2, a step budget), and
`check_input` runs them off the event loop with a deadline.
"""

from __future__ import annotations

from typing import Any

from webmcp.errors import ToolError
from webmcp.untrusted import schema_validate

__all__ = ["check_input", "validate"]


def _raise(fields: list[dict[str, str]]) -> None:
    if fields:
        raise ToolError("validation_failed", f"Input rejected: {len(fields)} field(s) are invalid", fields=fields)


def validate(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Check `arguments` against `schema` on the calling thread (for the bridge's own schemas).

    Raises:
        ToolError: `validation_failed` with one `{field, error}` per problem.
    """
    _raise(schema_validate.validate(schema, arguments))


async def check_input(schema: dict[str, Any], arguments: dict[str, Any], fingerprint: str | None = None) -> None:
    """Check `arguments` against a page's `schema` in a worker thread, within a deadline.

    `fingerprint`: `schema_fingerprint(schema)`, which a page tool keeps (saves hashing the
    schema on every call).

    Raises:
        ToolError: `validation_failed` with one `{field, error}` per problem; a problem of
            the schema itself (outside reference, endless recursion, too costly) is the
            field "(schema)".
    """
    _raise(await schema_validate.validate_async(schema, arguments, fingerprint=fingerprint))
