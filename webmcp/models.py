"""Wire models: what the bridge publishes, as pydantic models with their JSON Schemas.

These are the contract of docs/protocols.md: the `app://windows` document (GUI bridge
§4.2), its seven block types (§4.4), a tool's success result and error (§5.4, §7.4), and
the UI-context answers (UI context §4, §6). The tools' `outputSchema` and the shipped
`webmcp/schema/current-0.2.0.json` are generated from them (`python -m webmcp.models`
rewrites the file; a test checks it matches).

A window's blocks are built with the typed constructors below (`notice_block`,
`fields_block`, `field_item`, `text_block`, `list_block`, `table_block`, `address_block`), never as dict
literals. They return the block in its wire form, a plain dict: that is what a window
stores and compares to know whether it changed (`blocks != window.blocks`), and the view
builds hundreds of blocks on every page change, where a model instance costs 15 to 50
times a dict. tests/test_models.py validates each constructor's output against the model
of its type, and the other tests validate what is published, so the two cannot drift apart.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_serializer, field_validator

__all__ = [
    "Block",
    "Bounds",
    "CurrentAnswer",
    "ErrorCode",
    "Location",
    "LocationState",
    "Severity",
    "ToolErrorBody",
    "ToolResult",
    "Window",
    "WindowsDocument",
    "address_block",
    "current_schema",
    "field_item",
    "fields_block",
    "input_schema_of",
    "list_block",
    "notice_block",
    "table_block",
    "text_block",
    "tool_output_schema",
]

ErrorCode = Literal[
    # The GUI bridge protocol's own codes (GUI bridge §7.4 (docs/protocols.md#gui-7.4)).
    "stale_state",
    "validation_failed",
    "blocked_by_modal",
    "window_not_found",
    "action_not_available",
    "action_timeout",
    # Codes this bridge adds (docs/protocols.md#map-errors).
    "page_error",
    "call_interrupted",
    "browser_error",
    "state_unverified",
    "internal_error",
]
"""Every `code` a tool error may carry: a closed set."""


class _Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# --- blocks (GUI bridge §4.4) -----------------------------------------------------------------


class _BlockBase(_Wire):
    id: str | None = None


class TextBlock(_BlockBase):
    type: Literal["text"]
    text: str
    heading: int | None = Field(default=None, ge=1, le=6, description="Heading level, when the text is a heading.")


class FieldItem(_Wire):
    label: str
    value: Any
    sensitive: bool | None = Field(default=None, description="True when the value is masked (a secret input).")
    required: bool | None = None
    invalid: bool | None = None
    readonly: bool | None = Field(default=None, description="True when the page takes no typing there.")
    disabled: bool | None = Field(default=None, description="True when the page takes no value there now.")
    options: list[str] | None = Field(default=None, description="A select's or listbox's options (the first ones).")
    optionCount: int | None = Field(default=None, ge=0, description="How many options, when not all are shown.")
    kind: Literal["radio"] | None = Field(
        default=None, description="radio: a radio button (its value says whether it is the one chosen)."
    )


class FieldsBlock(_BlockBase):
    type: Literal["fields"]
    items: list[FieldItem]


class TableBlock(_BlockBase):
    type: Literal["table"]
    columns: list[str]
    rows: list[list[Any]]
    offset: int | None = Field(default=None, ge=0)
    total: int | None = Field(default=None, ge=0, description="Row count when the rows shown are cut.")


class ListBlock(_BlockBase):
    type: Literal["list"]
    items: list[Any]
    ordered: bool | None = None
    offset: int | None = Field(default=None, ge=0)
    total: int | None = Field(default=None, ge=0)


Severity = Literal["info", "warn", "error", "success"]
"""How a notice block reads: a fact, a warning, a failure, a success."""


class NoticeBlock(_BlockBase):
    type: Literal["notice"]
    severity: Severity
    text: str


class MediaBlock(_BlockBase):
    type: Literal["media"]
    mime_type: str = Field(alias="mimeType")
    url: str
    alt: str | None = None


class CustomBlock(_BlockBase):
    type: Literal["custom"]
    payload: Any


Block = Annotated[
    TextBlock | FieldsBlock | TableBlock | ListBlock | NoticeBlock | MediaBlock | CustomBlock,
    Field(discriminator="type"),
]


# --- building blocks: typed, in their wire form --------------------------------------------------
# The key order is the one app://windows has always shown (type, id, then the block's own keys).


def notice_block(block_id: str | None, severity: Severity, text: str) -> dict[str, Any]:
    """A notice (`block_id` None: the view gives it its id where a tool names it)."""
    if block_id is None:
        return {"type": "notice", "severity": severity, "text": text}
    return {"type": "notice", "id": block_id, "severity": severity, "text": text}


def field_item(label: str, value: Any, *, sensitive: bool = False) -> dict[str, Any]:
    """One label and value of a fields block (`sensitive`: the value is masked, a secret input's)."""
    if sensitive:
        return {"label": label, "value": value, "sensitive": True}
    return {"label": label, "value": value}


def fields_block(block_id: str | None, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Labels and values, as `field_item` makes them (the list is kept, not copied)."""
    if block_id is None:
        return {"type": "fields", "items": items}
    return {"type": "fields", "id": block_id, "items": items}


def text_block(block_id: str | None, text: str, *, heading: int | None = None) -> dict[str, Any]:
    """A paragraph, or a heading of `heading` level (1 to 6)."""
    if block_id is None:
        block: dict[str, Any] = {"type": "text", "text": text}
    else:
        block = {"type": "text", "id": block_id, "text": text}
    if heading is not None:
        block["heading"] = heading
    return block


def table_block(block_id: str | None, columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """A table of `rows` under `columns` (the lists are kept, not copied)."""
    if block_id is None:
        return {"type": "table", "columns": columns, "rows": rows}
    return {"type": "table", "id": block_id, "columns": columns, "rows": rows}


def list_block(block_id: str | None, items: list[Any]) -> dict[str, Any]:
    """A list of items (the list is kept, not copied)."""
    if block_id is None:
        return {"type": "list", "items": items}
    return {"type": "list", "id": block_id, "items": items}


def address_block(url: str) -> dict[str, Any]:
    """A tab's address, as its window shows it first (or alone, when its content may not be shown)."""
    return fields_block("address", [field_item("Address", url)])


# --- windows (GUI bridge §4.2) ----------------------------------------------------------------

_NAME_SAFE = r"^[A-Za-z0-9_-]+$"


class Window(_Wire):
    id: str = Field(pattern=_NAME_SAFE)
    title: str
    modal: bool
    owner_id: str | None = Field(alias="ownerId", pattern=_NAME_SAFE)
    version: int = Field(ge=0, le=2**63 - 1)
    summary: str
    blocks: list[Block]


class WindowsDocument(_Wire):
    """The single resource `app://windows`."""

    operable_window_ids: list[str] = Field(alias="operableWindowIds")
    windows: list[Window]


# --- tool results (GUI bridge §5.4, §7.4) ---------------------------------------------------


class ToolResult(_Wire):
    """A successful call: no `ok` flag, the return itself means success."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", serialize_by_alias=True)

    message: str | None = None
    opened_window_ids: list[str] | None = Field(default=None, alias="openedWindowIds")
    result: dict[str, Any] | None = None
    untrusted_content: bool | None = Field(
        default=None,
        alias="untrustedContent",
        description="True when `result` came from a page tool that marks its output as untrusted.",
    )
    _masked_with: frozenset[str] | None = PrivateAttr(default=None)

    def wire(self) -> dict[str, Any]:
        """The `structuredContent` of the result: `model_dump(by_alias=True, exclude_none=True)`,
        but for `result`, which is handed on as it is rather than copied value by value (a page's
        answer can hold thousands; the SDK copies it again on its way out)."""
        wire: dict[str, Any] = {}
        if self.message is not None:
            wire["message"] = self.message
        if self.opened_window_ids is not None:
            wire["openedWindowIds"] = list(self.opened_window_ids)
        if self.result is not None:
            wire["result"] = self.result
        if self.untrusted_content is not None:
            wire["untrustedContent"] = self.untrusted_content
        return wire

    def masked(self, secrets: frozenset[str]) -> ToolResult:
        """Note that the result was masked with `secrets`, read after the page answered; returns self."""
        self._masked_with = secrets
        return self

    @property
    def masked_with(self) -> frozenset[str] | None:
        """The secret values (those the page held after it answered) the result was masked with, if it was."""
        return self._masked_with


class FieldError(_Wire):
    field: str
    error: str
    candidates: list[dict[str, Any]] | None = None
    """For a window action's label that several things show: each one's label and blockId."""
    shown: list[str] | None = None
    """For a window action's unknown label: the labels the window shows."""


class ToolErrorBody(_Wire):
    """A failed call's `structuredContent` (with `isError: true`): every field an error may carry.

    A field is on the wire only when the error has it (`wire()` leaves out the unset ones),
    and in this order: `code`, `message`, then the others as declared.
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid", serialize_by_alias=True)

    code: ErrorCode
    message: str
    current_version: int | None = Field(default=None, alias="currentVersion")
    fields: list[FieldError] | None = None
    blocking_window_id: str | None = Field(default=None, alias="blockingWindowId")
    page_message: str | None = Field(default=None, alias="pageMessage")
    detail: str | None = None
    cancelled: bool | None = None
    outcome: Literal["unknown"] | None = None
    page_told: bool | None = Field(default=None, alias="pageTold")

    def wire(self) -> dict[str, Any]:
        """The `structuredContent` of the error result."""
        return self.model_dump(by_alias=True, exclude_none=True)


_SCHEMA_ERROR_FIELDS = ("code", "message", "currentVersion", "fields")
"""The error fields `tool_output_schema` describes (the others are allowed, not described):
what `tools/list` has always published."""


@functools.cache
def _input_schema(model: type[BaseModel]) -> str:
    return json.dumps(_inline_defs(_drop_nulls(model.model_json_schema(by_alias=True))))


def _inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `{"$ref": "#/$defs/X"}` replaced by X itself and `$defs` gone: shorter for
    a model used once, and readable by clients that do not follow references. A model that refers to
    itself, or a reference with more than words beside it, keeps the schema as it was."""
    defs = schema.get("$defs")
    if not defs:
        return schema

    def inline(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.removeprefix("#/$defs/")
                rest = {k: v for k, v in node.items() if k != "$ref"}
                # Beside a reference, only words about it (a field's description) are merged in.
                if name == ref or name in seen or name not in defs or not set(rest) <= _ANNOTATIONS:
                    raise _Recursive
                return {**inline(defs[name], seen | {name}), **rest}
            return {k: inline(v, seen) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, seen) for v in node]
        return node

    try:
        return inline({k: v for k, v in schema.items() if k != "$defs"}, frozenset())
    except _Recursive:
        return schema


_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated"})


class _Recursive(Exception):
    """A model's schema refers to itself, or a reference cannot be written inline: its references stay."""


def input_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A tool's `inputSchema` from its input model: no titles, optional fields simply optional."""
    schema: dict[str, Any] = json.loads(_input_schema(model))
    schema.setdefault("properties", {})
    return schema


def tool_output_schema() -> dict[str, Any]:
    """The `outputSchema` every window tool declares (GUI bridge §12.3).

    One object schema for both outcomes: clients such as the TypeScript SDK validate
    `structuredContent` against it even when `isError` is true, so the error fields
    (`code`, `message`, `currentVersion`, `fields`, …) are in it too, and further fields an
    error may carry (`blockingWindowId`, `outcome`, …) are allowed.
    """
    properties: dict[str, Any] = {}
    for model in (ToolResult, ToolErrorBody):
        for name, prop in model.model_json_schema(by_alias=True)["properties"].items():
            if model is ToolErrorBody and name not in _SCHEMA_ERROR_FIELDS:
                continue
            prop = _drop_nulls(prop)
            prop.pop("default", None)
            properties.setdefault(name, prop)
    properties["message"] = {"type": "string"}
    field_error = FieldError.model_json_schema()
    field_error.pop("title", None)
    for prop in field_error["properties"].values():
        prop.pop("title", None)
    properties["fields"] = {"type": "array", "items": field_error}
    return {
        "type": "object",
        "description": "A ToolResult ({message, openedWindowIds, result}) or, with isError, a tool error "
        "({code, message, …}).",
        "properties": properties,
        "additionalProperties": True,
    }


# --- UI context (docs/protocols.md#uic) -----------------------------------------------------------------

_ROLE = r"^[A-Z][A-Za-z0-9]*$"
State = Literal["selected", "focused", "hovered", "checked", "expanded"]


class _Element(_Wire):
    id: str = Field(pattern=_NAME_SAFE)
    role: str = Field(pattern=_ROLE)
    title: str
    value: str | None = None
    states: list[State] | None = Field(default=None, json_schema_extra={"uniqueItems": True})


def _content_role(schema: dict[str, Any]) -> None:
    schema["properties"]["role"]["not"] = {"enum": ["Application", "Window", "Tab", "Document"]}


class ContentElement(_Element):
    children: list[ContentElement] | None = None

    @field_validator("role")
    @classmethod
    def _not_a_frame_role(cls, role: str) -> str:
        if role in ("Application", "Window", "Tab", "Document"):
            raise ValueError(f"{role} is reserved for the frame of the tree")
        return role

    model_config = ConfigDict(populate_by_name=True, extra="forbid", json_schema_extra=_content_role)


class DocumentElement(_Element):
    role: Literal["Document"]
    children: list[ContentElement] | None = None


class TabElement(_Element):
    role: Literal["Tab"]
    children: list[DocumentElement] | None = Field(default=None, max_length=1)


class WindowElement(_Element):
    role: Literal["Window"]
    children: list[TabElement] | None = None


class ApplicationElement(_Element):
    role: Literal["Application"]
    children: list[WindowElement] | None = None


class CurrentAnswer(_Wire):
    """The answer of `current` (UI context §2.4.1)."""

    protocol: Literal["0.2.0"]
    instance: str = Field(min_length=1)
    root: ApplicationElement


class Bounds(_Wire):
    """A rectangle in screen coordinates, CSS pixels at 1:1 zoom."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    x: float
    y: float
    width: float
    height: float

    def __init__(self, x: float, y: float, width: float, height: float) -> None:
        super().__init__(**{"x": x, "y": y, "width": width, "height": height})

    @field_serializer("x", "y", "width", "height")
    def _rounded(self, value: float) -> float:
        return round(value, 2)  # 1/100 px is finer than any screen


LocationState = Literal["visible", "offscreen", "hidden", "gone"]


class Location(_Wire):
    """The answer of `locate` (UI context §2.6): `{state, bounds?}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: LocationState
    bounds: Bounds | None = None

    def __init__(self, state: LocationState, bounds: Bounds | None = None) -> None:
        super().__init__(**{"state": state, "bounds": bounds})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


def current_schema() -> dict[str, Any]:
    """The JSON Schema of the `current` answer, as shipped in webmcp/schema/current-0.2.0.json."""
    schema = CurrentAnswer.model_json_schema(by_alias=True, mode="serialization")
    schema = _drop_nulls(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/webmcp-bridge/schema/current-0.2.0.json",
        "title": "UI context 0.2.0: the answer of current",
        "description": (
            "What the user has open and points at. Unique ids, the focus path and the single hovered "
            "element are rules of section 5 that a schema cannot state."
        ),
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }


def _drop_nulls(node: Any) -> Any:
    """Optional fields are omitted, never null, in what the provider sends: say so in the schema."""
    if isinstance(node, dict):
        if "anyOf" in node and any(k == {"type": "null"} for k in node["anyOf"]):
            kept = [k for k in node["anyOf"] if k != {"type": "null"}]
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            node = {**(kept[0] if len(kept) == 1 else {"anyOf": kept}), **rest}
        return {
            k: ({name: _drop_nulls(p) for name, p in v.items()} if k in ("properties", "$defs") else _drop_nulls(v))
            for k, v in node.items()
            if k != "title"  # a schema's title, not a property named "title" (handled above)
        }
    if isinstance(node, list):
        return [_drop_nulls(v) for v in node]
    return node


SCHEMA_FILE = Path(__file__).resolve().parent / "schema" / "current-0.2.0.json"


def render_current_schema() -> str:
    """The text of the shipped schema file."""
    return json.dumps(current_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # `python -m webmcp.models` regenerates the shipped schema
    SCHEMA_FILE.write_text(render_current_schema(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_FILE}\n")
