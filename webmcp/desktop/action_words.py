"""What window actions say (actions.py): what a list of options means for a field, what a field
holds after a fill, which states a press changed, how a target is named, and the refusals. Pure.

An answer never says a field holds what it does not: `read_back` compares what the page holds
(read in the page after the fill) with what was set, and says what it holds instead; a secret
field's value is never quoted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webmcp.errors import ToolError
from webmcp.view.targets import ActionTarget, Coerced, Refusal

__all__ = [
    "REFUSED",
    "Many",
    "changed_states",
    "filled_labels",
    "gone",
    "many_options",
    "named",
    "only_values_changed",
    "problem",
    "read_back",
    "refuse_probe",
    "shown_label",
]

REFUSED = {
    "gone": "it is no longer in the page (the page changed); re-read the window",
    "disabled": "it is disabled",
    "readonly": "it is read-only",
    "no-option": "it has no such option",
    "option-disabled": "that option is disabled",
    "refused": "the field did not take it (not a value it can hold)",
    "not-fillable": "it is not a field the bridge can fill",
    "single": "it takes one option, not a list",
}
_ROLE_WORDS = {
    "button": "button",
    "link": "link",
    "tab": "tab",
    "treeitem": "tree item",
    "menuitem": "menu item",
    "menuitemcheckbox": "menu item",
    "menuitemradio": "menu item",
    "option": "option",
    "checkbox": "checkbox",
    "radio": "radio button",
    "switch": "switch",
    "gridcell": "cell",
    "cell": "cell",
    "listitem": "list item",
}
_STATE_WORDS = {
    "expanded": ("expanded", "collapsed"),
    "checked": ("checked", "unchecked"),
    "selected": ("selected", ""),
}


@dataclass(frozen=True)
class Many:
    """What a multiple select or listbox is to hold: these options, and no other."""

    options: tuple[str, ...]


def refuse_probe(target: ActionTarget | None, probe: dict[str, Any]) -> None:
    name = f"\u201c{target.label}\u201d" if target is not None else "The focused field"
    if probe.get("error") == "human-submit":
        raise ToolError(
            "action_not_available",
            f"{name} submits a form, and only the person at the browser may submit forms here (--human-submit).",
        )
    if probe.get("error"):
        why = REFUSED.get(str(probe["error"]), str(probe["error"]))
        raise ToolError("validation_failed", f"{name} cannot be pressed: {why}.")


def gone(target: ActionTarget | None) -> ToolError:
    label = target.label if target is not None else "it"
    return ToolError("validation_failed", f"\u201c{label}\u201d is no longer shown; re-read the window.")


def many_options(target: ActionTarget, value: list[Any]) -> Many | Refusal:
    """The options a list of values means for `target`, or why it takes no list."""
    name = f"\u201c{target.label}\u201d"
    if not target.multiselect and target.role != "listbox":
        return Refusal(f"{name} takes one value, not a list; give a string.")
    if not all(isinstance(v, str) for v in value):
        return Refusal(f"{name} takes its options' texts, as strings.")
    if target.disabled:
        return Refusal(f"The field {name} is disabled: the page does not take a value there now.")
    chosen: list[str] = []
    for wanted in value:
        match = [o for o in target.options if _norm(o) == _norm(wanted)]
        if target.options and not match:
            listed = "; ".join(f"\u201c{o}\u201d" for o in target.options[:40])
            return Refusal(f"{name} has no option \u201c{wanted}\u201d; its options: {listed}.")
        option = match[0] if match else wanted
        if option in target.disabled_options:
            return Refusal(f"The option \u201c{option}\u201d of {name} is disabled.")
        chosen.append(option)
    return Many(tuple(chosen))


def read_back(target: ActionTarget, value: Coerced | Many, held: Any) -> str:
    """A sentence when the page holds other than what was set (its handler changed it), else ""."""
    if held is None:
        return ""
    if isinstance(value, Many):
        same = sorted(map(_norm, value.options)) == sorted(map(_norm, held or []))
        shown = "; ".join(f"\u201c{h}\u201d" for h in held) or "nothing"
        return "" if same else f"\u201c{target.label}\u201d holds {shown}, not what was given."
    if value.kind in ("checkbox", "radio"):
        if bool(held) == bool(value.checked):
            return ""
        return f"\u201c{target.label}\u201d stayed {'checked' if held else 'unchecked'} (the page undid it)."
    if isinstance(held, list):
        same = [_norm(h) for h in held] == [_norm(value.text or "")]
        shown = "; ".join(f"\u201c{h}\u201d" for h in held) or "nothing"
    else:
        # A textarea holds its line breaks as "\n", whatever was typed.
        same = str(held) == (value.text or "").replace("\r\n", "\n")
        shown = f"\u201c{held}\u201d"
    if same:
        return ""
    if target.sensitive:
        return f"\u201c{target.label}\u201d holds another value than the one given (the page changed it)."
    return f"\u201c{target.label}\u201d holds {shown} (the page changed the value given)."


def changed_states(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The sentence that says each state the press changed ("It is now expanded."), or ""."""
    words: list[str] = []
    for state, (yes, no) in _STATE_WORDS.items():
        old, new = before.get(state), after.get(state)
        if new in ("true", "false") and new != old:
            word = yes if new == "true" else no
            if word:
                words.append(word)
    return f" It is now {' and '.join(words)}." if words else ""


def named(target: ActionTarget) -> str:
    word = _ROLE_WORDS.get(target.role) if target.kind != "text" else None
    return f"the {word} \u201c{target.label}\u201d" if word else f"\u201c{target.label}\u201d"


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def problem(where: str, refusal: Refusal) -> dict[str, Any]:
    problem: dict[str, Any] = {"field": where, "error": refusal.message}
    if refusal.candidates:
        problem["candidates"] = list(refusal.candidates)
    if refusal.shown:
        problem["shown"] = list(refusal.shown[:60])
    return problem


def filled_labels(targets: Sequence[ActionTarget]) -> str:
    """The fields a fill set, as its answer names them: each label, a secret field's said once for all."""
    if len(targets) > 1 and all(t.sensitive for t in targets):
        return ", ".join(f"\u201c{t.label}\u201d" for t in targets) + " (sensitive: their values are not shown)"
    return ", ".join(shown_label(t) for t in targets)


def only_values_changed(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], labels: set[str]) -> bool:
    """Whether the blocks `after` are `before` but for the values of field items labelled one of `labels`.

    Anything else that differs (a block, a field's other keys or another field's value, a
    suggestion list the fill opened, a field's error) makes it False.
    """
    if len(before) != len(after):
        return False
    for old, new in zip(before, after, strict=True):
        if old == new:
            continue
        if old.get("type") != "fields" or _without(old, "items") != _without(new, "items"):
            return False
        olds, news = old.get("items", []), new.get("items", [])
        if len(olds) != len(news):
            return False
        for was, now in zip(olds, news, strict=True):
            if was != now and (was.get("label") not in labels or _without(was, "value") != _without(now, "value")):
                return False
    return True


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def shown_label(target: ActionTarget) -> str:
    label = f"\u201c{target.label}\u201d"
    return f"{label} (sensitive: its value is not shown)" if target.sensitive else label
