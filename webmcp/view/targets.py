"""What a window's window actions can act on, found by the walk, and how a label or value is read. Pure.

The walk (walk.py) records an `ActionTarget` for every field, button and link it shows,
with the label the blocks show for it and the key of the block that shows it; build.py
turns that key into the block's id. A window action names a target by that label (and,
when several share it, by the block id): `resolve` picks it or says why it cannot, and
`coerce` turns the agent's value into what the field takes, or says why the field
refuses it. Nothing here touches the page: the desktop sets what these functions decide
(desktop/actions.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Literal

from .nodes import Node, prop, role_of, with_states
from .walk_roles import CHECK_ROLES, CHECKABLE, RADIO_ROLES

__all__ = [
    "ActionTarget",
    "folded",
    "target_of",
    "Coerced",
    "Refusal",
    "Resolved",
    "TargetKind",
    "coerce",
    "field_kind",
    "resolve",
    "resolve_press",
    "PRESSABLE",
    "STATE_WORDS",
    "as_listed",
    "with_states",
    "with_block_ids",
]

TargetKind = Literal["field", "button", "link", "control", "text"]
"""field: takes a value (`fill`); button, link: pressed; control: any other element a person
clicks (a tab, tree item, menu item, option, grid cell, disclosure, or an element that takes
clicks); text: a list item, cell, heading or run of text, pressed by its text as a last resort."""

PRESSABLE = frozenset({"button", "link", "control"})
"""Kinds `press` takes first (then a checkable field, then `text`: see `resolve_press`)."""

_TEXT_ROLES = frozenset({"textbox", "searchbox", "textfield", "combobox", "spinbutton"})
_TRUE = frozenset({"true", "yes", "on", "checked", "1"})
_FALSE = frozenset({"false", "no", "off", "unchecked", "0"})
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True, slots=True)
class ActionTarget:
    """One field, button or link the window shows, as the blocks name it."""

    kind: TargetKind
    label: str
    """As the blocks show it: a field's item label, a button's or link's text (or accessible name)."""
    role: str
    """Its accessibility role (textbox, combobox, checkbox, radio, Date, button, link, …)."""
    frame_key: str
    backend_id: int
    block_key: Any = None
    """The key of the block that shows it (the walk's); None when no block does."""
    block_id: str | None = None
    """The id of that block in the window (build.py fills it in)."""
    disabled: bool = False
    readonly: bool = False
    sensitive: bool = False
    """A secret field: its value is never shown."""
    options: tuple[str, ...] = ()
    """A select's or listbox's option texts, as shown."""
    disabled_options: tuple[str, ...] = ()
    group: str = ""
    """A radio's group (its radiogroup's name), so `{label: group, value: option}` picks one."""
    multiline: bool = False
    states: tuple[str, ...] = ()
    """What the window says of its state: expanded, collapsed, selected, checked, pressed, current."""
    multiselect: bool = False
    """A multiple select or multi-selectable listbox: `fill` takes an array of options."""
    selected: tuple[str, ...] = ()
    """The options it holds chosen (a select or listbox)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a label or value cannot be acted on: said to the agent as `validation_failed`."""

    message: str
    candidates: tuple[dict[str, Any], ...] = ()
    shown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Resolved:
    target: ActionTarget
    option: str | None = None
    """For a radio picked by its group's label, the option to pick."""


@dataclass(frozen=True, slots=True)
class Coerced:
    """What to set: `text` for text-like fields and selects, `checked` for checkboxes and radios."""

    kind: str
    text: str | None = None
    checked: bool | None = None


def target_of(
    kind: TargetKind,
    node: Node,
    label: str,
    frame_key: str,
    block_key: Any,
    group: str = "",
    *,
    sensitive: bool = False,
    options: tuple[str, ...] = (),
    disabled_options: tuple[str, ...] = (),
    states: tuple[str, ...] = (),
    multiselect: bool = False,
    selected: tuple[str, ...] = (),
) -> ActionTarget:
    """The target for AX `node`, shown as `label` in the block keyed `block_key`."""
    return ActionTarget(
        kind=kind,
        label=label,
        role=role_of(node),
        frame_key=frame_key,
        backend_id=int(node["backendDOMNodeId"]),
        block_key=block_key,
        disabled=bool(prop(node, "disabled")),
        readonly=bool(prop(node, "readonly")),
        sensitive=sensitive,
        options=options,
        disabled_options=disabled_options,
        group=group,
        multiline=bool(prop(node, "multiline")),
        states=states,
        multiselect=multiselect,
        selected=selected,
    )


def with_block_ids(targets: Sequence[ActionTarget], ids: dict[Any, str]) -> list[ActionTarget]:
    """`targets` with the id of the block that shows each (by its walk key)."""
    # Field by field: `dataclasses.replace` costs several times as much, for each of hundreds.
    return [
        ActionTarget(
            t.kind,
            t.label,
            t.role,
            t.frame_key,
            t.backend_id,
            t.block_key,
            ids.get(t.block_key),
            t.disabled,
            t.readonly,
            t.sensitive,
            t.options,
            t.disabled_options,
            t.group,
            t.multiline,
            t.states,
            t.multiselect,
            t.selected,
        )
        for t in targets
    ]


def folded(text: str) -> str:
    """`text` as labels and waited-for texts are matched: white space folded to single spaces, case folded."""
    return " ".join(text.split()).casefold()


def _unmarked(text: str) -> str:
    """`text` without the pictures it begins with (an emoji, "☐", "★", "▸"), for a label given without them."""
    start = 0
    while start < len(text) and (text[start].isspace() or unicodedata.category(text[start])[0] == "S"):
        start += 1
    return text[start:]


def _spaced(text: str) -> str:
    return " ".join(text.split())


STATE_WORDS = frozenset(
    {"expanded", "collapsed", "selected", "checked", "mixed", "pressed", "unavailable", "read-only", "guessed"}
)
"""What a label's suffix may say of its target's state: "Section 2 (collapsed)", "Pay (unavailable)"."""
_SUFFIX = re.compile(r" \(([a-z-]+(?:, [a-z-]+)*)\)$")
_ORDINALS = (
    (re.compile(r"^(.*\S) #([1-9]\d{0,3})$"), "{} #{}"),
    (re.compile(r"^(.*\S) \(#([1-9]\d{0,3})\)$"), "{} (#{})"),
    (re.compile(r"^(.*\S) \[#([1-9]\d{0,3})\]$"), "{} [#{}]"),
)
"""How an ordinal is written: "Reply #2"; where the page shows that very label, "Reply (#2)"."""


def _plain(label: str) -> str:
    """A label as an agent may write it: "Pay (unavailable)" is the button "Pay", "Tab B (selected)" the tab."""
    found = _SUFFIX.search(label)
    if found is not None and all(w in STATE_WORDS for w in found.group(1).split(", ")):
        return label[: found.start()]
    return label


def _named(t: ActionTarget, wanted: str) -> bool:
    return folded(_plain(t.label)) == wanted or folded(t.label) == wanted


def _same_case(found: list[ActionTarget], label: str) -> list[ActionTarget]:
    """Of the targets named `label` (case aside), those whose case is the one given, when any is."""
    given = _spaced(label)
    exact = [t for t in found if _spaced(_plain(t.label)) == given or _spaced(t.label) == given]
    return exact or found


def _by_ordinal(pool: Sequence[ActionTarget], label: str) -> ActionTarget | None:
    """The target `label` names as "Reply #2": the second of the window's targets named "Reply"."""
    for pattern, _form in _ORDINALS:
        found = pattern.match(label.strip())
        if found is not None:
            base, n = found.group(1), int(found.group(2))
            same = _same_case([t for t in pool if _named(t, folded(base))], base)
            if n <= len(same):
                return same[n - 1]
    return None


def as_listed(pool: Sequence[ActionTarget], target: ActionTarget) -> str:
    """How a refusal lists `target` so that it names it alone: its label, or "Reply #2" when the
    window shows that label (case and all) more than once."""
    plain = _spaced(_plain(target.label))
    same = [t for t in pool if _spaced(_plain(t.label)) == plain]
    if len(same) < 2:
        return target.label
    n = next(i for i, t in enumerate(same, 1) if t is target)
    for _pattern, form in _ORDINALS:
        listed = form.format(plain, n)
        if not any(_named(t, folded(listed)) for t in pool):  # no label of the page's reads so
            return listed
    return listed


def resolve(
    targets: Sequence[ActionTarget], label: str, block_id: str | None, kinds: frozenset[str], what: str
) -> Resolved | Refusal:
    """The one target of `kinds` the window shows as `label` (in block `block_id`, if given).

    A label matches with spaces, case and a state suffix ("(collapsed)") aside; of several, the
    one whose case is the one given wins. "Reply #2" names the second of the window's targets
    labelled "Reply" (counted over the whole window, `block_id` or not). An exact match wins over
    a label that only starts with the words given. `what` names the kind in messages ("field",
    "button or link"). Every candidate a refusal lists resolves, given back as listed.
    """
    everywhere = [t for t in targets if t.kind in kinds]
    pool = everywhere
    if block_id is not None:
        in_block = [t for t in pool if t.block_id == block_id]
        if not in_block:
            shown_blocks = sorted({t.block_id for t in pool if t.block_id})
            return Refusal(
                f"Block {block_id} shows no {what}; blocks with one: {', '.join(shown_blocks) or 'none'}.",
                shown=tuple(_shown(pool)),
            )
        pool = in_block
    wanted = folded(label)
    exact = _same_case([t for t in pool if _named(t, wanted)], label)
    found: list[Resolved] = [Resolved(t) for t in exact]
    if not found and (numbered := _by_ordinal(everywhere, label)) is not None:
        if block_id is None or numbered.block_id == block_id:
            return Resolved(numbered)
    if not found and kinds & {"field"}:
        # A radio group by its own name, the option given as the value.
        groups = [t for t in pool if t.role in RADIO_ROLES and t.group and folded(t.group) == wanted]
        if groups:
            return Resolved(groups[0], option="")
    if not found and wanted:
        # "Reports" for the item a file tree shows as "📁 Reports": the picture CSS or an emoji puts
        # before the words is not what a person calls it.
        found = [Resolved(t) for t in pool if _unmarked(folded(_plain(t.label))) == wanted]
    if not found:
        found = [
            Resolved(t)
            for t in pool
            if wanted and (folded(t.label).startswith(wanted) or _unmarked(folded(t.label)).startswith(wanted))
        ]
    if len(found) == 1:
        return found[0]
    if not found:
        shown = _shown(pool)
        where = f" in block {block_id}" if block_id else ""
        return Refusal(
            f"The window shows no {what} labelled \u201c{_cap(label)}\u201d{where}"
            + (f"; `shown` lists the {_plural(what)} it shows." if shown else f"; it shows no {what}."),
            shown=tuple(shown),
        )
    return Refusal(
        f"{len(found)} {_plural(what)} are labelled \u201c{_cap(label)}\u201d; give one of `candidates` as listed.",
        candidates=tuple(_candidate(everywhere, r.target) for r in found[:20]),
    )


def _plural(what: str) -> str:
    """ "button, link or control" → "buttons, links or controls"."""
    return re.sub(r"\b(?!or\b)(\w+)\b", r"\1s", what)


def _candidate(pool: Sequence[ActionTarget], target: ActionTarget) -> dict[str, Any]:
    """One of an ambiguous label's candidates: the label that names it alone, its block's id, and
    for words inside a longer text, that text around them (`in`)."""
    candidate: dict[str, Any] = {"label": as_listed(pool, target), "blockId": target.block_id}
    if around := _around_in(pool, target):
        candidate["in"] = around
    return candidate


def resolve_press(targets: Sequence[ActionTarget], label: str, block_id: str | None) -> Resolved | Refusal:
    """What `press` means by `label`: a button, link or control; else a checkable or read-only field, or
    a combobox whose options it does not hold; else shown text."""
    found = resolve(targets, label, block_id, PRESSABLE, "button, link or control")
    if isinstance(found, Resolved) or found.candidates:
        return found
    # A check box a person ticks, a read-only box a person clicks to open its picker, a combobox
    # whose options are not in it (Select2's `<span role=combobox>`: its list opens on a click).
    clicked = [
        t
        for t in targets
        if t.kind == "field" and (t.role in CHECKABLE or t.readonly or (t.role == "combobox" and not t.options))
    ]
    if clicked:
        ticked = resolve(clicked, label, block_id, frozenset({"field"}), "field")
        if isinstance(ticked, Resolved) and ticked.option is None:
            return ticked
    if any(t.kind == "text" for t in targets):
        shown = resolve(targets, label, block_id, frozenset({"text"}), "text")
        if isinstance(shown, Resolved) or shown.candidates:
            return shown
        if inside := _inside_text(targets, label, block_id):
            return Refusal(f"{found.message} {inside}", shown=found.shown)
    return found


def _around_in(pool: Sequence[ActionTarget], target: ActionTarget) -> str:
    """The longer text of its block a text target is words of, around them ("…the item labeled "e"."),
    or "" (a line of its own, or not a text): the window shows no id for a block of text alone."""
    if target.kind != "text":
        return ""
    words = _spaced(target.label)
    pattern = re.compile(r"(?<!\w)" + re.escape(words) + r"(?!\w)")
    for t in pool:
        if t is target or t.kind != "text" or t.block_id != target.block_id or len(t.label) <= len(words):
            continue
        if (hit := pattern.search(t.label)) is not None:
            return _around(t.label, hit)
    return ""


def _around(text: str, hit: re.Match[str]) -> str:
    """`text` within 30 characters of `hit`, cut at whole words, "…" where it is cut."""
    start, end = max(0, hit.start() - 30), min(len(text), hit.end() + 30)
    if start:
        start = next((i + 1 for i in range(start, hit.start()) if text[i].isspace()), hit.start())
    if end < len(text):
        end = next((i for i in range(end, hit.end(), -1) if text[i].isspace()), hit.end())
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _inside_text(targets: Sequence[ActionTarget], label: str, block_id: str | None) -> str:
    """Where the window shows `label` only as words inside longer text (the agent may have read it
    there): a sentence quoting up to three such runs, or "" when it shows it nowhere."""
    words = _spaced(label)
    if not words:
        return ""
    pattern = re.compile(r"(?<!\w)" + re.escape(words).replace(r"\ ", r"\s+") + r"(?!\w)", re.IGNORECASE)
    quoted: list[str] = []
    for t in targets:
        if t.kind != "text" or (block_id is not None and t.block_id != block_id):
            continue
        hit = pattern.search(t.label)
        if hit is None:
            continue
        quoted.append(_around(t.label, hit))
        if len(quoted) == 3:
            break
    if not quoted:
        return ""
    listed = "; ".join(f"\u201c{q}\u201d" for q in quoted)
    return (
        f"\u201c{_cap(words)}\u201d is shown only inside longer text ({listed}): nothing pressable there has "
        "that name (press takes a text by its first words)."
    )


def _shown(pool: Sequence[ActionTarget]) -> list[str]:
    seen: list[str] = []
    for t in pool:
        if t.label not in seen:
            seen.append(t.label)
    return seen


def _cap(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def field_kind(target: ActionTarget) -> str:
    """How a field takes a value: text, select, checkbox, radio, date, time, datetime, number, or none."""
    role = target.role
    if role in CHECK_ROLES:
        return "checkbox"
    if role in RADIO_ROLES:
        return "radio"
    if role == "Date":
        return "date"
    if role == "InputTime":
        return "time"
    if role == "DateTime":
        return "datetime"
    if role == "spinbutton":
        return "number"
    if role in ("combobox", "listbox") and target.options:
        return "select"
    if role in _TEXT_ROLES:
        return "text"
    return "none"


def coerce(targets: Sequence[ActionTarget], resolved: Resolved, value: Any) -> tuple[ActionTarget, Coerced] | Refusal:
    """The field to set and what to set it to, from the agent's `value`, or why the field refuses it.

    A radio group named by its label takes the option's label as `value` (the field is that
    option). Never quotes the value of a secret field.
    """
    target = resolved.target
    if resolved.option is not None:
        group = [t for t in targets if t.group == target.group and t.role == target.role and t.kind == "field"]
        picked = resolve(group, str(value), None, frozenset({"field"}), "option")
        if isinstance(picked, Refusal):
            listed = "; ".join(f"\u201c{t.label}\u201d" for t in group)
            return Refusal(
                f"The group \u201c{_cap(target.group)}\u201d has no one option \u201c{_cap(str(value))}\u201d; "
                f"its options: {listed}.",
                candidates=picked.candidates,
                shown=tuple(t.label for t in group),
            )
        return _coerced(picked.target, True)
    return _coerced(target, value)


def _coerced(target: ActionTarget, value: Any) -> tuple[ActionTarget, Coerced] | Refusal:
    found = _coerce_one(target, value)
    return found if isinstance(found, Refusal) else (target, found)


def _coerce_one(target: ActionTarget, value: Any) -> Coerced | Refusal:
    name = f"\u201c{_cap(target.label)}\u201d"
    if target.disabled:
        return Refusal(f"The field {name} is disabled: the page does not take a value there now.")
    if target.readonly:
        return Refusal(f"The field {name} is read-only.")
    kind = field_kind(target)
    shown_value = "the value given" if target.sensitive else f"\u201c{_cap(str(value))}\u201d"
    if kind in ("checkbox", "radio"):
        checked = _truth(value)
        if checked is None:
            return Refusal(f"{name} is a {kind}: give true or false (not {shown_value}).")
        if kind == "radio" and not checked:
            return Refusal(f"{name} is a radio button: pick another option of its group to clear it.")
        return Coerced(kind, checked=checked)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return Refusal(f"{name} takes text; give a string.")
    text = str(value)
    if kind == "select":
        match = [o for o in target.options if folded(o) == folded(text)]
        if not match:
            listed = "; ".join(f"\u201c{o}\u201d" for o in target.options[:40])
            return Refusal(f"{name} has no option {shown_value}; its options: {listed}.")
        if match[0] in target.disabled_options:
            return Refusal(
                f"The option \u201c{_cap(match[0])}\u201d of {name} is disabled: the page does not offer it now."
            )
        return Coerced("select", text=match[0])
    if kind == "number":
        if not _NUMBER.match(text.strip()):
            return Refusal(f"{name} takes a number, not {shown_value}.")
        return Coerced("text", text=text.strip())
    if kind in ("date", "time", "datetime"):
        iso = _iso(kind, text.strip())
        if iso is None:
            example = {"date": "2026-12-03", "time": "20:45", "datetime": "2026-12-03T20:45"}[kind]
            return Refusal(f"{name} takes an ISO {kind} such as {example}, not {shown_value}.")
        return Coerced("text", text=iso)
    if kind == "none" and target.role == "slider":
        # A person drags it or moves it with keys; its value is not text to set.
        keys = "ArrowRight, ArrowLeft, PageUp, Home, End"
        return Refusal(f"{name} is a slider: move it with press `key` in it ({keys}).")
    if kind == "none":
        return Refusal(f"{name} is a {target.role} the bridge cannot fill.")
    return Coerced("text", text=text)


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().casefold()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return None


def _iso(kind: str, text: str) -> str | None:
    """The value an `<input type=date|time|datetime-local>` holds for ISO `text`, or None."""
    try:
        if kind == "date":
            return date.fromisoformat(text).isoformat()
        if kind == "time":
            parsed = time.fromisoformat(text)
            return parsed.isoformat(timespec="seconds" if parsed.second else "minutes")
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is not None:
            return None  # datetime-local has no zone
        return moment.isoformat(timespec="seconds" if moment.second else "minutes")
    except ValueError:
        return None
