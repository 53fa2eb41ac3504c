"""Window actions on a tab: fill, press, hover, press_key and submit what the window shows
(issues 20 and 39; docs/protocols.md#window-actions).

`WindowActions` is the tab's part that acts on the page as a person would, by the labels
its blocks show: the view's `ActionTarget`s name the element (its backend node id, read
with the view; no URL or selector is ever guessed), `view.targets` decides what a label
means and what a value becomes. A press, a hover and a key are trusted input, as a
person's mouse and keyboard give it (pointer.py, keys.py): the element is scrolled into
view and hit-tested first, and one that something covers is not pressed. `fill` sets
values in the bridge's isolated world (`window_actions.js`: focus, input and change) and
reads back what the page then holds. Each action is a write through the tab's one
effects path (effects.py), as a page-tool call is: the write guard with a version check,
and the answer once its effect happened.
Values are never put in answers, errors or logs: a secret field's is masked on the way out
too (server/app.py `_leaving`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError, ProtocolError
from cdp_bridge.targets import PageTarget
from webmcp.desktop import pointer
from webmcp.desktop.effects import Act, Effects, TabFacts
from webmcp.desktop.keys import EXAMPLES, Chord, KeyRefused, key_events, parse_key
from webmcp.desktop.live_view import WORLD, PageRead
from webmcp.desktop.parts import Part
from webmcp.desktop.races import first_of
from webmcp.desktop.windows import VersionCheck
from webmcp.errors import ToolError
from webmcp.js import load
from webmcp.models import ToolResult
from webmcp.view.targets import (
    PRESSABLE,
    ActionTarget,
    Coerced,
    Refusal,
    Resolved,
    coerce,
    resolve,
    resolve_press,
)

__all__ = ["ActionHost", "FieldValue", "PersonFocus", "WindowActions"]

logger = logging.getLogger(__name__)

_ACTIONS_JS = load("window_actions.js")
# The focused element, followed into same-origin frames (an out-of-process frame's stays its <iframe>).
_ACTIVE = """(() => {
  let at = document.activeElement || document.body || document.documentElement;
  while (at && at.contentDocument && at.contentDocument.activeElement) at = at.contentDocument.activeElement;
  return at;
})()"""
_FILLABLE = frozenset({"field"})
_ANY = frozenset({"field", *PRESSABLE, "text"})
_REFUSED = {
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


class PersonFocus(Part):
    """The page has the focus a person's window gives it, launched or attached: `document.hasFocus()`
    is true and focus and blur handlers run, in a background tab too (Emulation.setFocusEmulationEnabled)."""

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        if not main:
            return []  # one per page: its frames share its focus
        return [
            SetUp(
                "Emulation.setFocusEmulationEnabled",
                {"enabled": True},
                optional="focus emulation refused: the page's focus handlers run only while its window has focus",
            )
        ]


@dataclass(frozen=True)
class FieldValue:
    label: str
    value: Any
    block_id: str | None = None


class ActionHost(TabFacts, Protocol):
    """What window actions need of their tab: facts, and whether the agent may submit forms."""

    @property
    def agent_may_submit(self) -> bool: ...


class PageChanges(Protocol):
    """When the page's own observer reported changes (refresher.py `LiveView`)."""

    async def reported_after(self, moment: float) -> None:
        """Until the page reports a change after `moment`; the caller bounds it."""

    async def quiet(self, period: float) -> None:
        """Until the page has reported no change for `period` seconds."""


HOVER_FIRST = 0.35
"""After the pointer moved onto an element, how long the page may take to begin what it shows (s)."""
HOVER_QUIET = 0.35
"""...and how long it must then stay still (jQuery UI opens a submenu 300 ms after the pointer came)."""
COVER_WAIT = 1.0
"""How long a press on a covered element waits for the page to change before it looks again (s)."""
COVER_QUIET = 0.1
"""...and how long the page must then be still."""
HOVER_MOST = 1.5
"""The longest a hover waits for its effect in all (a page that never stops changing)."""


@dataclass(frozen=True)
class _Many:
    """What a multiple select or listbox is to hold: these options, and no other."""

    options: tuple[str, ...]


@dataclass(frozen=True)
class _Element:
    """One element of the page resolved in the bridge's world of its frame."""

    frame: pointer.Frame
    context: int
    object_id: str
    backend_id: int | None


class WindowActions:
    """Fill, press, hover, press_key and submit on one tab (the caller holds the tab's op_lock)."""

    def __init__(
        self,
        host: ActionHost,
        effects: Effects,
        page: PageTarget,
        last_read: Callable[[], PageRead | None],
        changes: PageChanges,
    ) -> None:
        self._host = host
        self._changes = changes
        self._effects = effects
        self._page = page
        self._last_read = last_read
        self._last_filled: tuple[int, str, int] | None = None
        """(document, frame key, backend id) of the field the last fill set: the form submit means."""
        self._forms: tuple[object, bool] = (None, False)
        """(a view, whether its page shows a form): asked on every tools/list, found once a read."""

    def targets(self) -> list[ActionTarget]:
        read = self._last_read()
        return list(read.view.targets) if read is not None else []

    def offers(self, action: str) -> bool:
        """Whether the window shows something `action` can act on now."""
        targets = self.targets()
        if action in ("press", "hover", "press_key"):
            return bool(targets)  # everything shown takes a click, the pointer and keys
        if action == "fill":
            return any(t.kind == "field" and not t.disabled for t in targets)
        if action == "submit":
            return self._host.agent_may_submit and any(t.kind == "field" for t in targets) and self._shows_form()
        return False

    def why_not(self, action: str) -> str:
        """Why `action` is not offered now, in a sentence (for `action_not_available`)."""
        host = self._host.id
        if action == "submit" and not self._host.agent_may_submit:
            return "Only the person at the browser may submit forms here (--human-submit)."
        if action == "submit":
            return f"{host} shows no form to submit; press the control that sends it, or press_key Enter in its field."
        if action == "fill":
            return f"{host} shows no field that takes a value now; re-read app://windows."
        return f"{host} shows nothing {action} can act on now; re-read app://windows."

    def _shows_form(self) -> bool:
        read = self._last_read()
        if read is None:
            return False
        if self._forms[0] is read.view:
            return self._forms[1]
        if not read.sessions:
            return True  # its nodes were let go: the fields it shows may be a form's
        shows = any(
            (node.get("role") or {}).get("value") in ("form", "search") and not node.get("ignored")
            for _session, nodes in read.sessions
            for frame in nodes.frames
            for node in frame.nodes
        )
        self._forms = (read.view, shows)
        return shows

    async def _current(self) -> list[ActionTarget]:
        """The targets of the page as it is now (read after the last write)."""
        await self._effects.catch_up(self._host.timeouts.snapshot)
        return self.targets()

    # --- fill ------------------------------------------------------------------------

    async def fill(self, fields: Sequence[FieldValue], check: VersionCheck | None) -> ToolResult:
        """Set each field of `fields` by its label, in order; every label and value is checked before any is set.

        Raises:
            ToolError: validation_failed (unknown, ambiguous or refused; nothing set), stale_state.
        """
        targets = await self._current()
        plan: list[tuple[ActionTarget, Coerced | _Many]] = []
        problems: list[dict[str, Any]] = []
        for index, item in enumerate(fields):
            where = f"fields[{index}]"
            found = resolve(targets, item.label, item.block_id, _FILLABLE, "field")
            if isinstance(found, Refusal):
                problems.append(_problem(where, found))
                continue
            decided: tuple[ActionTarget, Coerced | _Many] | Refusal
            if isinstance(item.value, list):
                many = _many(found.target, item.value)
                decided = many if isinstance(many, Refusal) else (found.target, many)
            else:
                decided = coerce(targets, found, item.value)
            if isinstance(decided, Refusal):
                problems.append(_problem(where, decided))
                continue
            plan.append(decided)
        if problems:
            raise ToolError(
                "validation_failed",
                " ".join(p["error"] for p in problems) + " Nothing was filled.",
                fields=problems,
            )

        done: list[str] = []
        differs: list[str] = []

        async def work(act: Act) -> None:
            for target, value in plan:
                reply = await self._fill_one(target, value, act)
                if reply.get("error"):
                    why = _REFUSED.get(str(reply["error"]), str(reply["error"]))
                    said = f"Filled {', '.join(done)}; " if done else ""
                    raise ToolError(
                        "validation_failed",
                        f"{said}\u201c{target.label}\u201d refused the value: {why}.",
                        fields=[{"field": target.label, "error": why}],
                    )
                done.append(_shown_label(target))
                note = _read_back(target, value, reply.get("held"))
                if note:
                    differs.append(note)
                self._last_filled = (self._host.doc_seq, target.frame_key, target.backend_id)

        _, act = await self._acting(work, check)
        message = f"Filled {len(done)} field{'s' if len(done) != 1 else ''} of {self._host.id}: {', '.join(done)}."
        if differs:
            message = f"{message} {' '.join(differs)}"
        if len(done) < len(plan):
            # A dialog opened while a field was set (its change handler asked): the rest waits.
            left = len(plan) - len(done) - 1
            rest = f"; the {left} after it were not filled" if left else ""
            message = f"{message} {_shown_label(plan[len(done)][0])} was being set when the page opened a dialog{rest}."
        return act.answer(ToolResult(message=message))

    async def _fill_one(self, target: ActionTarget, value: Coerced | _Many, act: Act) -> dict[str, Any]:
        element = await self._element(target)
        if element is None:
            return {"error": "gone"}
        timeout = self._host.timeouts.tool_call
        if isinstance(value, Coerced):
            args = [value.kind, value.text or "", bool(value.checked)]
            return await _call(element.frame.send, element.object_id, "fill", args, timeout)
        wanted = list(value.options)
        reply = await _call(element.frame.send, element.object_id, "choose", [wanted], timeout)
        if reply.get("error") != "not-select":
            return reply
        # A listbox of the page's own: its options are clicked as a person clicks them.
        await act.release_guard()
        for toggle in await self._options_to_toggle(element, wanted):
            if isinstance(toggle, dict):
                return toggle
            await self._click(toggle, f"the option of \u201c{target.label}\u201d", modifiers=2)
        return await _call(element.frame.send, element.object_id, "held", [], timeout)

    async def _options_to_toggle(self, listbox: _Element, wanted: list[str]) -> list[_Element | dict[str, Any]]:
        send, limit = listbox.frame.send, self._host.timeouts.command
        reply = await send(
            "Runtime.callFunctionOn",
            {
                "objectId": listbox.object_id,
                "functionDeclaration": _ACTIONS_JS,
                "arguments": [{"value": "options"}, {"value": wanted}],
                "silent": True,
            },
            timeout=limit,
        )
        result = reply.get("result") or {}
        if result.get("subtype") != "array":
            return [{"error": "no-option"}]
        props = await send(
            "Runtime.getProperties", {"objectId": result["objectId"], "ownProperties": True}, timeout=limit
        )
        return [
            _Element(listbox.frame, listbox.context, prop["value"]["objectId"], None)
            for prop in props.get("result") or []
            if prop.get("name", "").isdigit() and (prop.get("value") or {}).get("objectId")
        ]

    # --- press and hover ---------------------------------------------------------------

    async def press(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        """Click what the window shows as `label` (in block `block_id`) with a trusted click.

        Raises:
            ToolError: validation_failed (unknown, ambiguous, disabled), action_not_available
                (covered by another element; a submit button under --human-submit), stale_state.
        """
        target = self._pick(await self._current(), label, block_id, press=True)
        may_submit = self._host.agent_may_submit
        how: list[str] = []

        async def work(act: Act) -> tuple[dict[str, Any], dict[str, Any]]:
            element = await self._element(target)
            if element is None:
                raise _gone(target)
            timeout = self._host.timeouts.tool_call
            probe = await _call(element.frame.send, element.object_id, "probe", [None, may_submit], timeout)
            _refuse_probe(target, probe)
            before = await _call(element.frame.send, element.object_id, "state", [], timeout)
            await act.release_guard()  # the input below is trusted: the guard would hold it as the person's
            clicked = await self._click(element, f"\u201c{target.label}\u201d")
            if not clicked:
                await _call(element.frame.send, element.object_id, "press", [may_submit], timeout)
                how.append("by script: it has no box on the screen to click")
            # A document the page is leaving may not answer (one whose next page asks for a sign-in).
            return before, {} if clicked == "left" else await _after(element, timeout)

        value, act = await self._acting(work, check)
        changed = _changed(*value) if value else ""
        said = f" ({how[0]})" if how else ""
        message = f"Pressed {_what(target)} in {self._host.id}{said}.{changed}"
        return act.answer(ToolResult(message=message))

    async def hover(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        """Move the pointer onto what the window shows as `label` (trusted mouseMoved).

        Raises:
            ToolError: validation_failed (unknown, ambiguous), action_not_available (covered), stale_state.
        """
        target = self._pick(await self._current(), label, block_id, press=False)

        async def work(act: Act) -> None:
            element = await self._element(target)
            if element is None:
                raise _gone(target)
            await act.release_guard()
            aimed = await self._aim(element, f"\u201c{target.label}\u201d")
            if aimed is None:
                raise ToolError(
                    "action_not_available",
                    f"\u201c{target.label}\u201d has no box on the screen to move the pointer onto.",
                )
            moved = anyio.current_time()
            await pointer.hover(element.frame, aimed, self._host.timeouts.command)
            # What a hover opens, the page opens by itself, maybe after a delay: answered once it is still.
            with anyio.move_on_after(HOVER_MOST):
                with anyio.move_on_after(HOVER_FIRST):
                    await self._changes.reported_after(moved)
                await self._changes.quiet(HOVER_QUIET)

        _, act = await self._acting(work, check)
        return act.answer(ToolResult(message=f"The pointer is on {_what(target)} in {self._host.id}."))

    # --- keys --------------------------------------------------------------------------

    async def press_key(
        self, key: str, label: str | None, block_id: str | None, check: VersionCheck | None
    ) -> ToolResult:
        """Press `key` (a name or chord) in what the window shows as `label`, else where the focus is.

        Raises:
            ToolError: validation_failed (unknown key or label; nothing sent), action_not_available
                (Enter would submit a form under --human-submit; covered), stale_state.
        """
        try:
            chord = parse_key(key)
        except KeyRefused as exc:
            raise ToolError(
                "validation_failed",
                f"{exc}: give a key name or chord such as {EXAMPLES}. Nothing was sent.",
                fields=[{"field": "key", "error": str(exc)}],
            ) from None
        target = self._pick(await self._current(), label, block_id, press=False) if label else None
        may_submit = self._host.agent_may_submit

        secret: list[bool] = []

        async def work(act: Act) -> None:
            timeout = self._host.timeouts.tool_call
            element = await self._element(target) if target is not None else await self._focused()
            if element is None:
                raise _gone(target) if target is not None else ToolError("action_not_available", "The page is gone.")
            probe = await _call(element.frame.send, element.object_id, "probe", [chord.key.key, may_submit], timeout)
            if target is not None or probe.get("error") == "human-submit":
                _refuse_probe(target, probe)
            secret.append(bool(probe.get("secret")))
            await act.release_guard()
            if target is not None:
                focused = await _call(element.frame.send, element.object_id, "focus", [], timeout)
                if not focused.get("focused"):
                    await self._click(element, f"\u201c{target.label}\u201d")
            left = anyio.Event()
            off = self._page.session.on("Page.frameRequestedNavigation", lambda _p: left.set())
            try:
                # As for a click: a key that sends a form to a page behind a sign-in may go unanswered.
                await first_of(partial(_keys, element.frame.send, chord, self._host.timeouts.command), left.wait)
            finally:
                off()

        _, act = await self._acting(work, check)
        where = f" in {_what(target)}" if target is not None else ""
        hidden = chord.key.text and (any(secret) or (target is not None and target.sensitive))
        # What is typed into a secret field is not said back: "Pressed a" would spell the password.
        name = "a key (sensitive: not shown)" if hidden else chord.name
        return act.answer(ToolResult(message=f"Pressed {name}{where} in {self._host.id}."))

    # --- submit ------------------------------------------------------------------------

    async def submit(self, form: str | None, check: VersionCheck | None) -> ToolResult:
        """Submit a form (its submit button, else `requestSubmit()`), the one named `form` or the one last filled.

        Raises:
            ToolError: validation_failed (no such form, several), stale_state.
        """
        if not self._host.agent_may_submit:
            raise ToolError("action_not_available", self.why_not("submit"))
        await self._current()
        hint = self._last_filled if self._last_filled and self._last_filled[0] == self._host.doc_seq else None

        async def work(_act: Act) -> dict[str, Any]:
            reply = await self._on_document(hint, form)
            if reply.get("error"):
                names = [n for n in reply.get("forms") or [] if n]
                listed = "; ".join(f"\u201c{n}\u201d" for n in names[:20]) or "none named"
                if reply["error"] == "no-form":
                    msg = f"{self._host.id} shows no form" + (f" named \u201c{form}\u201d" if form else "")
                else:
                    msg = f"{self._host.id} shows several forms; give `form`"
                raise ToolError(
                    "validation_failed", f"{msg}. Forms shown: {listed}.", fields=[{"field": "form", "error": msg}]
                )
            return reply

        value, act = await self._acting(work, check)
        reply = value or {}  # none when a dialog the submit opened stopped its script
        name = str(reply.get("form") or "")
        by = str(reply.get("submitter") or "")
        what = f"the form \u201c{name}\u201d" if name else "the form"
        how = f" with its \u201c{by}\u201d button" if by else ""
        return act.answer(ToolResult(message=f"Submitted {what}{how} in {self._host.id}."))

    # --- acting and settling ---------------------------------------------------------

    def _pick(self, targets: list[ActionTarget], label: str, block_id: str | None, *, press: bool) -> ActionTarget:
        """The one target `label` names: for press, as `resolve_press` says; else a field first, then as press."""
        found: Resolved | Refusal = resolve_press(targets, label, block_id)
        if not press:
            field = resolve(targets, label, block_id, _FILLABLE, "field")
            if isinstance(field, Resolved) or field.candidates:
                found = field
        elif isinstance(found, Refusal) and not found.candidates:
            # Any field takes a click too: a checkbox toggles, a text box takes the focus.
            field = resolve(targets, label, block_id, _FILLABLE, "field")
            if isinstance(field, Resolved):
                found = field
        if isinstance(found, Refusal):
            raise ToolError("validation_failed", found.message, fields=[_problem("label", found)])
        target = found.target
        if target.disabled and press:
            raise ToolError(
                "validation_failed",
                f"\u201c{target.label}\u201d is disabled: the page does not take it now.",
                fields=[{"field": "label", "error": "disabled"}],
            )
        return target

    async def _acting(self, work: Callable[[Act], Awaitable[Any]], check: VersionCheck | None) -> tuple[Any, Act]:
        """Run `work` in the page through the effects path: (its value, the settled write)."""
        timeouts = self._host.timeouts
        # The bridge acted in the page: what it changed is read whole.
        async with self._effects.write(check, read="whole") as act:
            try:
                finished, value = await self._effects.unless_dialog(lambda: work(act), timeouts.tool_call)
            except CDPError as exc:
                if not act.requested():
                    raise
                # The page navigated under the call (its context went with the old document): the effect happened.
                logger.debug("the action's script ended with its document: %s", exc)
                finished, value = True, None
            if not finished and self._effects.dialog is None:
                raise ToolError(
                    "action_timeout",
                    f"The page did not take the action within {timeouts.tool_call:g} s (its main thread is busy); "
                    "whether it happened is unknown: read the window.",
                    outcome="unknown",
                )
        return value, act

    async def _click(self, element: _Element, name: str, *, modifiers: int = 0) -> str:
        """A trusted click on `element`: "clicked", "left" (the page asked to leave its document), or ""
        when it has no box to click (nothing sent).

        Raises:
            ToolError: action_not_available when something covers it (nothing sent).
        """
        aimed = await self._aim(element, name)
        if aimed is None:
            return ""
        left = anyio.Event()
        off = self._page.session.on("Page.frameRequestedNavigation", lambda _p: left.set())
        try:
            await pointer.click(
                element.frame, aimed, self._host.timeouts.command, modifiers=modifiers, or_left=left.wait
            )
        finally:
            off()
        return "left" if left.is_set() else "clicked"

    async def _aim(self, element: _Element, name: str) -> pointer.Aimed | None:
        limit = self._host.timeouts.command
        node = (
            {"backendNodeId": element.backend_id} if element.backend_id is not None else {"objectId": element.object_id}
        )

        async def judge(hit: int) -> str | None:
            if element.backend_id is not None and hit == element.backend_id:
                return None
            try:
                resolved = await element.frame.send(
                    "DOM.resolveNode", {"backendNodeId": hit, "executionContextId": element.context}, timeout=limit
                )
            except ProtocolError:
                return "an element of another frame"
            extra = [{"objectId": resolved["object"]["objectId"]}]
            reply = await _call(element.frame.send, element.object_id, "hit", [], limit, extra=extra)
            return None if reply.get("ok") else str(reply.get("cover") or "another element")

        aimed = await pointer.aim(element.frame, node, judge, limit)
        if isinstance(aimed, pointer.Missed) and aimed.why == "covered":
            # What covers it may be on its way out (a menu or picker closing): as a person would,
            # wait for the page to change (and be still a moment), and look once more.
            seen = anyio.current_time()
            with anyio.move_on_after(COVER_WAIT):
                await self._changes.reported_after(seen)
                await self._changes.quiet(COVER_QUIET)
            aimed = await pointer.aim(element.frame, node, judge, limit)
        if isinstance(aimed, pointer.Missed) and aimed.why == "covered":
            raise ToolError(
                "action_not_available",
                f"{name} is covered by {aimed.cover} where a person would click it; nothing was done. "
                "Close or move what covers it first.",
            )
        return aimed if isinstance(aimed, pointer.Aimed) else None

    async def _element(self, target: ActionTarget) -> _Element | None:
        """`target`'s element in the bridge's world of its frame; None when it is gone."""
        read = self._last_read()
        reader = read.readers.get(target.frame_key) if read is not None else None
        if reader is None:
            return None
        # Each reader is its session's own `send` (read_page), which takes a timeout.
        send: Any = reader[0]
        frame_id = reader[1]
        frame = pointer.Frame(send, frame_id, self._page.session.send, send != self._page.session.send)
        limit = self._host.timeouts.command
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, timeout=limit)
        context = int(world["executionContextId"])
        try:
            resolved = await send(
                "DOM.resolveNode", {"backendNodeId": target.backend_id, "executionContextId": context}, timeout=limit
            )
        except ProtocolError:
            return None
        return _Element(frame, context, resolved["object"]["objectId"], target.backend_id)

    async def _focused(self) -> _Element | None:
        """The element that has the focus in the main document (its body when none has)."""
        send = self._page.session.send
        limit = self._host.timeouts.command
        frame = pointer.Frame(send, self._page.target_id, send, False)
        world = await send(
            "Page.createIsolatedWorld", {"frameId": self._page.target_id, "worldName": WORLD}, timeout=limit
        )
        context = int(world["executionContextId"])
        active = await send(
            "Runtime.evaluate",
            {"expression": _ACTIVE, "contextId": context},
            timeout=limit,
        )
        object_id = (active.get("result") or {}).get("objectId")
        return _Element(frame, context, object_id, None) if object_id else None

    async def _on_document(self, hint: tuple[int, str, int] | None, form: str | None) -> dict[str, Any]:
        """Run the submit op on the document of the frame last filled (else the main frame's)."""
        read = self._last_read()
        frame_key = hint[1] if hint is not None else None
        readers = read.readers if read is not None else {}
        reader = readers.get(frame_key) if frame_key else None
        if reader is None:
            page = self._page
            reader = (page.session.send, page.target_id)
            hint = None
        # Each reader is its session's own `send` (read_page), which takes a timeout.
        send: Any = reader[0]
        frame_id = reader[1]
        limit = self._host.timeouts.command
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, timeout=limit)
        context = world["executionContextId"]
        doc = await send("Runtime.evaluate", {"expression": "document", "contextId": context}, timeout=limit)
        hint_arg: dict[str, Any] = {"value": None}
        if hint is not None:
            try:
                node = await send(
                    "DOM.resolveNode", {"backendNodeId": hint[2], "executionContextId": context}, timeout=limit
                )
                hint_arg = {"objectId": node["object"]["objectId"]}
            except ProtocolError:
                pass  # the field is gone: the form is then found by name or as the only one
        return await _call(
            send, doc["result"]["objectId"], "submit", [form], self._host.timeouts.tool_call, extra=[hint_arg]
        )


async def _call(
    send: Any, object_id: str, op: str, args: list[Any], timeout: float, extra: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    reply = await send(
        "Runtime.callFunctionOn",
        {
            "objectId": object_id,
            "functionDeclaration": _ACTIONS_JS,
            "arguments": [{"value": op}, *({"value": a} for a in args), *(extra or [])],
            "returnByValue": True,
            "awaitPromise": True,
            "userGesture": True,
            "silent": True,
        },
        timeout=timeout,
    )
    if "exceptionDetails" in reply:
        return {"error": "the page's handler threw"}
    value = reply.get("result", {}).get("value")
    return value if isinstance(value, dict) else {"error": "no answer"}


async def _keys(send: Any, chord: Chord, timeout: float) -> None:
    for event in key_events(chord):
        await send("Input.dispatchKeyEvent", event, timeout=timeout)


async def _after(element: _Element, timeout: float) -> dict[str, Any]:
    """The element's state after a press; {} when the press took the document away."""
    try:
        return await _call(element.frame.send, element.object_id, "state", [], timeout)
    except CDPError:
        return {}


def _refuse_probe(target: ActionTarget | None, probe: dict[str, Any]) -> None:
    name = f"\u201c{target.label}\u201d" if target is not None else "The focused field"
    if probe.get("error") == "human-submit":
        raise ToolError(
            "action_not_available",
            f"{name} submits a form, and only the person at the browser may submit forms here (--human-submit).",
        )
    if probe.get("error"):
        why = _REFUSED.get(str(probe["error"]), str(probe["error"]))
        raise ToolError("validation_failed", f"{name} cannot be pressed: {why}.")


def _gone(target: ActionTarget | None) -> ToolError:
    label = target.label if target is not None else "it"
    return ToolError("validation_failed", f"\u201c{label}\u201d is no longer shown; re-read the window.")


def _many(target: ActionTarget, value: list[Any]) -> _Many | Refusal:
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
    return _Many(tuple(chosen))


def _read_back(target: ActionTarget, value: Coerced | _Many, held: Any) -> str:
    """A sentence when the page holds other than what was set (its handler changed it), else ""."""
    if held is None:
        return ""
    if isinstance(value, _Many):
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


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The sentence that says each state the press changed ("It is now expanded."), or ""."""
    words: list[str] = []
    for state, (yes, no) in _STATE_WORDS.items():
        old, new = before.get(state), after.get(state)
        if new in ("true", "false") and new != old:
            word = yes if new == "true" else no
            if word:
                words.append(word)
    return f" It is now {' and '.join(words)}." if words else ""


def _what(target: ActionTarget) -> str:
    word = _ROLE_WORDS.get(target.role) if target.kind != "text" else None
    return f"the {word} \u201c{target.label}\u201d" if word else f"\u201c{target.label}\u201d"


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _problem(where: str, refusal: Refusal) -> dict[str, Any]:
    problem: dict[str, Any] = {"field": where, "error": refusal.message}
    if refusal.candidates:
        problem["candidates"] = list(refusal.candidates)
    if refusal.shown:
        problem["shown"] = list(refusal.shown[:60])
    return problem


def _shown_label(target: ActionTarget) -> str:
    label = f"\u201c{target.label}\u201d"
    return f"{label} (sensitive: its value is not shown)" if target.sensitive else label
