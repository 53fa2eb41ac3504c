"""The block constructors build exactly what the wire models allow, in the form windows store."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from webmcp.models import (
    Block,
    address_block,
    field_item,
    fields_block,
    list_block,
    notice_block,
    table_block,
    text_block,
)

_BLOCK: TypeAdapter[Any] = TypeAdapter(Block)

_BUILT = {
    "a notice with an id": notice_block("refused", "warn", "The server asks again."),
    "a notice the view names later": notice_block(None, "error", "Email: required."),
    "fields with a masked value": fields_block(
        "values", [field_item("Name", "Ada"), field_item("Password", "••••", sensitive=True)]
    ),
    "fields the view names later": fields_block(None, [field_item("Total", "12")]),
    "a heading": text_block(None, "Checkout", heading=2),
    "a paragraph with an id": text_block("message", "Are you sure?"),
    "a list": list_block("files", ["a.pdf", "b.png"]),
    "a table": table_block("downloads", ["Download", "Bytes"], [["a.pdf", 12]]),
    "an address": address_block("http://127.0.0.1:8000/shop"),
}


@pytest.mark.parametrize("name", sorted(_BUILT))
def test_each_constructor_builds_a_block_the_wire_model_accepts_unchanged(name: str) -> None:
    built = _BUILT[name]
    model = _BLOCK.validate_python(built)
    assert model.model_dump(by_alias=True, exclude_none=True) == built


def test_blocks_keep_the_key_order_app_windows_has_always_shown() -> None:
    assert json.dumps(notice_block("loading", "info", "Loading.")) == (
        '{"type": "notice", "id": "loading", "severity": "info", "text": "Loading."}'
    )
    assert list(notice_block(None, "warn", "x")) == ["type", "severity", "text"]
    assert list(text_block(None, "Title", heading=1)) == ["type", "text", "heading"]


def test_the_address_block_is_the_one_tabs_have_always_shown() -> None:
    assert address_block("https://example.test/") == {
        "type": "fields",
        "id": "address",
        "items": [{"label": "Address", "value": "https://example.test/"}],
    }


def test_a_value_not_masked_carries_no_sensitive_key() -> None:
    assert field_item("Name", "Ada") == {"label": "Name", "value": "Ada"}
    assert field_item("Password", "", sensitive=True) == {"label": "Password", "value": "", "sensitive": True}
