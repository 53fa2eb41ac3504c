"""Window actions on a tab: fill, press (a click or a key), hover and submit what the window shows
(issues 20 and 39; docs/protocols.md#window-actions).

`WindowActions` is the tab's part that acts on the page as a person would, by the labels
its blocks show: the view's `ActionTarget`s name the element (its backend node id, read
with the view; no URL or selector is ever guessed), `view.targets` decides what a label
means and what a value becomes (what the answers say: action_words.py). A press, a hover
and a key are trusted input, as a person's mouse and keyboard give it (pointer.py, keys.py,
on elements page_elements.py resolves): the element is scrolled into
view and hit-tested first, and one that something covers is not pressed. `fill` sets
values in the bridge's isolated world (`window_actions.js`: focus, input and change) and
reads back what the page then holds. Each action is a write through the tab's one
effects path (effects.py), as a page-tool call is: the write guard with a version check,
and the answer once its effect happened.
Values are never put in answers, errors or logs: a secret field's is masked on the way out
too (server/app.py `_leaving`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import anyio

from cdp_bridge import reads
from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError, ProtocolError
from cdp_bridge.targets import PageTarget
from webmcp.desktop import pointer
from webmcp.desktop.action_words import (
    REFUSED,
    Many,
    changed_states,
    filled_labels,
    gone,
    many_options,
    named,
    only_values_changed,
    problem,
    read_back,
    refuse_probe,
    shown_label,
)
from webmcp.desktop.effects import Act, Effects, TabFacts
from webmcp.desktop.keys import EXAMPLES, Chord, KeyRefused, key_events, parse_key
from webmcp.desktop.live_view import PageRead
from webmcp.desktop.page_elements import ACTIONS_JS, Element, call, element_of, focused_element, world_of
from webmcp.desktop.parts import Part
from webmcp.desktop.races import first_of
from webmcp.desktop.windows import VersionCheck, WindowState
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.view.targets import (
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

_FILLABLE = frozenset({"field"})


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

    @property
    def window(self) -> WindowState:
        """The tab's window as `app://windows` shows it."""


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
STILL_WAIT = 1.5
"""The longest a press waits for what it presses to stop moving (a panel sliding in); then it
clicks where the element is (a marquee never stops)."""
PERSON_GAP = 0.15
"""The least time from one window action's answer to the next action on the tab (s), as between a
person's moves: a page may take in an input in a timer (Quill 1.1 reads its selection 100 ms after a
key or a click), and a press that came sooner met the page before it had (calls sent back to back)."""


@dataclass(frozen=True)
class _Shown:
    """A window as a write found it; its blocks are copied, so that what the answer claims never rests on
    no later code changing a published block in place."""

    version: int
    title: str
    summary: str
    blocks: list[dict[str, Any]]

    @classmethod
    def of(cls, window: WindowState) -> _Shown:
        return cls(window.version, window.title, window.summary, json.loads(json.dumps(window.blocks)))

    def only_filled(self, now: WindowState, filled: Sequence[ActionTarget], act: Act) -> bool:
        """Whether `now` is this window but for the values of the fields `filled`, in the same document,
        with nothing else the write started (a dialog, a tab, a download)."""
        if act.moved or act.dialog is not None or act.prompt is not None or act.opened or act.downloads:
            return False
        return (
            now.version != self.version
            and (now.title, now.summary) == (self.title, self.summary)
            and only_values_changed(self.blocks, now.blocks, {t.label for t in filled})
        )


class WindowActions:
    """Fill, press (a click or a key), hover and submit on one tab (the caller holds the tab's op_lock)."""

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
        self._sent = False
        """The write under way sent its input (the button went down, the key, the pointer moved)."""
        self._ended = -float("inf")
        """When the last action ended (`anyio.current_time()`): the next waits for `PERSON_GAP`."""
        self._forms: tuple[object, bool] = (None, False)
        """(a view, whether its page shows a form): asked on every tools/list, found once a read."""

    def targets(self) -> list[ActionTarget]:
        read = self._last_read()
        return list(read.view.targets) if read is not None else []

    def offers(self, action: str) -> bool:
        """Whether the tab lists `action`: every window action always, but submit under --human-submit.

        What a window shows comes and goes with every page; the actions do not (each change of
        the list costs the agent a tools/list_changed and a list): called where nothing matches,
        an action says what the window shows instead.
        """
        if action == "submit":
            return self._host.agent_may_submit
        return action in ("fill", "press", "hover")

    def why_not(self, action: str) -> str:
        """Why `action` is not offered now, in a sentence (for `action_not_available`)."""
        host = self._host.id
        if action == "submit" and not self._host.agent_may_submit:
            return "Only the person at the browser may submit forms here (--human-submit)."
        if action == "submit":
            return (
                f"{host} shows no form to submit; press the control that sends it, or press `key` Enter in its field."
            )
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
        plan: list[tuple[ActionTarget, Coerced | Many]] = []
        problems: list[dict[str, Any]] = []
        for index, item in enumerate(fields):
            where = f"fields[{index}]"
            found = resolve(targets, item.label, item.block_id, _FILLABLE, "field")
            if isinstance(found, Refusal):
                problems.append(problem(where, found))
                continue
            decided: tuple[ActionTarget, Coerced | Many] | Refusal
            if isinstance(item.value, list):
                many = many_options(found.target, item.value)
                decided = many if isinstance(many, Refusal) else (found.target, many)
            else:
                decided = coerce(targets, found, item.value)
            if isinstance(decided, Refusal):
                problems.append(problem(where, decided))
                continue
            plan.append(decided)
        if problems:
            raise ToolError(
                "validation_failed",
                " ".join(p["error"] for p in problems) + " Nothing was filled.",
                fields=problems,
            )

        done: list[ActionTarget] = []
        differs: list[str] = []
        before = _Shown.of(self._host.window)

        async def work(act: Act) -> str:
            """Each field in turn; why the rest were left: "" (none was), "prompt" (a sign-in waits on
            the tab) or "left" (the document went, a field's change handler navigated)."""
            for target, value in plan:
                if self._effects.prompt_open():
                    return "prompt"
                if act.moved:  # the last field's change handler navigated: its fields went with it
                    return "left"
                try:
                    reply = await self._fill_one(target, value, act)
                except CDPError as exc:
                    # Went while running: the script set the field (its synchronous part runs before
                    # any commit) and waited a task for what the change started. Else, with a
                    # navigation asked for, the document had gone before the script could run.
                    ran = isinstance(exc, ProtocolError) and exc.went_while_running
                    if not ran and not act.requested():
                        raise
                    if ran:
                        done.append(target)
                    return "left"
                if reply.get("error") == "gone" and (act.moved or act.requested()):
                    return "left"  # with its document, not from it
                if reply.get("error"):
                    why = REFUSED.get(str(reply["error"]), str(reply["error"]))
                    said = f"Filled {filled_labels(done)}; " if done else ""
                    raise ToolError(
                        "validation_failed",
                        f"{said}\u201c{target.label}\u201d refused the value: {why}.",
                        fields=[{"field": target.label, "error": why}],
                    )
                done.append(target)
                note = read_back(target, value, reply.get("held"))
                if note:
                    differs.append(note)
                self._last_filled = (self._host.doc_seq, target.frame_key, target.backend_id)
            return ""

        # A sign-in prompt (a field's change handler fetched a page behind one) blocks no script: the
        # field being set is set, and its answer is on its way; only the fields after it wait.
        # A JavaScript dialog does block it: the field is then "being set".
        left_why, act = await self._acting(work, check, prompts=False)
        # The tab is the tool's own, and its version follows (effects): each thing said once.
        # "nothing else changed since version N": an agent that read N knows the window without reading it.
        alone = len(done) == len(plan) and not differs and before.only_filled(self._host.window, done, act)
        end = f"; nothing else changed since version {before.version}." if alone else "."
        said = [f"Filled {filled_labels(done)}{end}"] if done else []
        said.extend(differs)
        if len(done) < len(plan):
            left = len(plan) - len(done) - 1
            first = shown_label(plan[len(done)][0])
            which = f"{first} and the {left} after it were" if left else f"{first} was"
            if left_why == "prompt":  # a prompt waited before the next field was set
                said.append(f"{which} not filled: the page asks for a sign-in first.")
            elif left_why == "left":
                said.append(f"{which} not filled: the page left the document first.")
            else:  # a dialog opened while a field was set (its change handler asked): the rest waits
                rest = f"; the {left} after it were not filled" if left else ""
                said.append(f"{first} was being set when the page opened a dialog{rest}.")
        return act.answer(ToolResult(message=" ".join(said)))

    async def _fill_one(self, target: ActionTarget, value: Coerced | Many, act: Act) -> dict[str, Any]:
        element = await self._element(target)
        if element is None:
            return {"error": "gone"}
        timeout = self._host.timeouts.tool_call
        if isinstance(value, Coerced):
            args = [value.kind, value.text or "", bool(value.checked)]
            return await call(element.frame.send, element.object_id, "fill", args, timeout)
        wanted = list(value.options)
        reply = await call(element.frame.send, element.object_id, "choose", [wanted], timeout)
        if reply.get("error") != "not-select":
            return reply
        # A listbox of the page's own: its options are clicked as a person clicks them.
        await act.release_guard()
        for toggle in await self._options_to_toggle(element, wanted):
            if isinstance(toggle, dict):
                return toggle
            await self._click(toggle, f"the option of \u201c{target.label}\u201d", modifiers=2)
        return await call(element.frame.send, element.object_id, "held", [], timeout)

    async def _options_to_toggle(self, listbox: Element, wanted: list[str]) -> list[Element | dict[str, Any]]:
        send, limit = listbox.frame.send, self._host.timeouts.command
        reply = await send(
            "Runtime.callFunctionOn",
            {
                "objectId": listbox.object_id,
                "functionDeclaration": ACTIONS_JS,
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
            Element(listbox.frame, listbox.context, prop["value"]["objectId"], None)
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
                raise gone(target)
            timeout = self._host.timeouts.tool_call
            probe = await call(element.frame.send, element.object_id, "probe", [None, may_submit], timeout)
            refuse_probe(target, probe)
            before = await call(element.frame.send, element.object_id, "state", [], timeout)
            await act.release_guard()  # the input below is trusted: the guard would hold it as the person's
            # A document the page is leaving may not answer (one whose next page asks for a sign-in):
            # its state is not asked once the page asked to leave it, even when the browser answered
            # the click before it told of that request (seen once in the effects matrix: 8 s).
            with self._leaving() as left:
                clicked = await self._click(element, f"\u201c{target.label}\u201d")
                if not clicked:
                    self._sent = True
                    await call(element.frame.send, element.object_id, "press", [may_submit], timeout)
                    how.append("by script: it has no box on the screen to click")
                if left.is_set():  # also when the click itself saw the page ask to leave ("left")
                    return before, {}
                after = await first_of(partial(_after, element, timeout), left.wait)
                return before, after.value if after.index == 0 else {}

        value, act = await self._acting(work, check, not_done=f"{named(target)} was not pressed")
        changed = changed_states(*value) if value else ""
        said = f" ({how[0]})" if how else ""
        message = f"Pressed {named(target)}{said}.{changed}"
        return act.answer(ToolResult(message=message))

    async def hover(
        self, label: str, block_id: str | None, check: VersionCheck | None, wheel: int | None = None
    ) -> ToolResult:
        """Move the pointer onto what the window shows as `label` (trusted mouseMoved), then turn the
        wheel there by `wheel` pixels if given (what it scrolled is said).

        Raises:
            ToolError: validation_failed (unknown, ambiguous), action_not_available (covered), stale_state.
        """
        target = self._pick(await self._current(), label, block_id, press=False)
        scrolled: list[int] = []

        async def work(act: Act) -> None:
            element = await self._element(target)
            if element is None:
                raise gone(target)
            await act.release_guard()
            aimed = await self._aim(element, f"\u201c{target.label}\u201d")
            if aimed is None:
                raise ToolError(
                    "action_not_available",
                    f"\u201c{target.label}\u201d has no box on the screen to move the pointer onto.",
                )
            moved = anyio.current_time()
            self._sent = True
            await pointer.hover(element.frame, aimed, self._host.timeouts.command)
            if wheel:
                scrolled.append(await _turn_wheel(element, aimed, wheel, self._host.timeouts.command))
            # What a hover opens, the page opens by itself, maybe after a delay: answered once it is still.
            with anyio.move_on_after(HOVER_MOST):
                with anyio.move_on_after(HOVER_FIRST):
                    await self._changes.reported_after(moved)
                await self._changes.quiet(HOVER_QUIET)

        _, act = await self._acting(work, check, not_done=f"The pointer was not moved onto {named(target)}")
        message = f"The pointer is on {named(target)}."
        if scrolled:
            way = "down" if (wheel or 0) > 0 else "up"
            end = "end" if way == "down" else "top"
            message += (
                f" The wheel scrolled what is there {scrolled[0]} px {way}."
                if scrolled[0]
                else f" The wheel scrolled nothing: what is there is at its {end} or does not scroll."
            )
        return act.answer(ToolResult(message=message))

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
            element = (
                await self._element(target)
                if target is not None
                else await focused_element(self._page, self._host.timeouts.command)
            )
            if element is None:
                raise gone(target) if target is not None else ToolError("action_not_available", "The page is gone.")
            probe = await call(element.frame.send, element.object_id, "probe", [chord.key.key, may_submit], timeout)
            if target is not None or probe.get("error") == "human-submit":
                refuse_probe(target, probe)
            secret.append(bool(probe.get("secret")))
            await act.release_guard()
            if target is not None:
                focused = await call(element.frame.send, element.object_id, "focus", [], timeout)
                if not focused.get("focused"):
                    await self._click(element, f"\u201c{target.label}\u201d")
                    self._sent = False  # what counts is the key: a dialog the click opened stops it first
            with self._leaving() as left:
                # As for a click: a key that sends a form to a page behind a sign-in may go unanswered.
                self._sent = True
                await first_of(partial(_keys, element.frame.send, chord, self._host.timeouts.command), left.wait)
            if not left.is_set():
                # What the key queued (a selectionchange, the timers an editor runs on it) runs
                # before the answer, as it would before a person's next move.
                await _next_frame(element, self._host.timeouts.command)

        _, act = await self._acting(work, check, not_done=f"{chord.name} was not pressed")
        where = f" in {named(target)}" if target is not None else ""
        hidden = chord.key.text and (any(secret) or (target is not None and target.sensitive))
        # What is typed into a secret field is not said back: "Pressed a" would spell the password.
        name = "a key (sensitive: not shown)" if hidden else chord.name
        return act.answer(ToolResult(message=f"Pressed {name}{where}."))

    # --- submit ------------------------------------------------------------------------

    async def submit(self, form: str | None, check: VersionCheck | None) -> ToolResult:
        """Submit a form (its submit button, else `requestSubmit()`), the one named `form` or the one last filled.

        Raises:
            ToolError: validation_failed (no such form, several), stale_state.
        """
        if not self._host.agent_may_submit:
            raise ToolError("action_not_available", self.why_not("submit"))
        await self._current()
        if form is None and not self._shows_form():
            # A "form" of <div>s is sent by its own control: say so rather than look for a <form>.
            reason = self.why_not("submit")
            raise ToolError("validation_failed", reason, fields=[{"field": "form", "error": reason}])
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
        return act.answer(ToolResult(message=f"Submitted {what}{how}."))

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
            raise ToolError("validation_failed", found.message, fields=[problem("label", found)])
        target = found.target
        if target.disabled and press:
            raise ToolError(
                "validation_failed",
                f"\u201c{target.label}\u201d is disabled: the page does not take it now.",
                fields=[{"field": "label", "error": "disabled"}],
            )
        return target

    async def _acting(
        self,
        work: Callable[[Act], Awaitable[Any]],
        check: VersionCheck | None,
        *,
        not_done: str = "",
        prompts: bool = True,
    ) -> tuple[Any, Act]:
        """Run `work` in the page through the effects path: (its value, the settled write).

        `not_done` ("“Send” was not pressed"): the work sends a person's input and sets `_sent` as
        it does; a dialog or prompt that stopped it before is then no effect of it, and is said so.
        Without `prompts`, a browser prompt does not stop the work (it blocks none of its scripts).

        Raises:
            ToolError: action_timeout (the work ran past its time), blocked_by_modal (a dialog or a
                prompt stopped a `not_done` work before its input), what the work raised.
        """
        timeouts = self._host.timeouts
        self._sent = False
        # Before the write takes its marks: what the page does meanwhile is not this action's doing.
        await anyio.sleep(max(0.0, self._ended + PERSON_GAP - anyio.current_time()))
        try:
            # The bridge acted in the page: what it changed is read whole.
            async with self._effects.write(check, read="whole") as act:
                try:
                    finished, value = await self._effects.unless_dialog(
                        lambda: work(act), timeouts.tool_call, prompts=prompts
                    )
                except CDPError as exc:
                    if not act.requested():
                        raise
                    # The page navigated under the call (its context went with the old document): the effect happened.
                    logger.debug("the action's script ended with its document: %s", exc)
                    finished, value = True, None
                if not finished:
                    self._stopped(not_done)
        finally:
            self._ended = anyio.current_time()
        return value, act

    def _stopped(self, not_done: str) -> None:
        """A work that did not finish: it stands when a dialog or a prompt stopped it after its input
        went out (what the input did); else the error says what happened."""
        stopped = self._effects.stopped_by(not_done[:1].upper() + not_done[1:])
        if stopped is None:
            timeout = self._host.timeouts.tool_call
            raise ToolError(
                "action_timeout",
                f"The page did not take the action within {timeout:g} s (its main thread is busy); "
                "whether it happened is unknown: read the window.",
                outcome="unknown",
            )
        # A dialog or a prompt that opened once the input went out is what the action did (a link to a
        # page behind a sign-in: its prompt may come before the page drew the click). One that opened
        # before (a scroll into view that the page answers with an alert) was no doing of the input.
        if not_done and not self._sent:
            blocker = next(iter(stopped.opened_window_ids or []), None)
            raise ToolError("blocked_by_modal", f"{stopped.message} Then try again.", blocking_window_id=blocker)

    def _pressing(self) -> None:
        """The click's button goes down: the press's input is out."""
        self._sent = True

    @contextlib.contextmanager
    def _leaving(self) -> Iterator[anyio.Event]:
        """An event set when the page asks to leave its document within the block: the browser may
        answer an input that started that only once the navigation is (a page behind a sign-in
        prompt: never, until someone signs in), and the document left may answer nothing more."""
        left = anyio.Event()
        off = self._page.session.on("Page.frameRequestedNavigation", lambda _p: left.set())
        try:
            yield left
        finally:
            off()

    async def _click(self, element: Element, name: str, *, modifiers: int = 0) -> str:
        """A trusted click on `element`: "clicked", "left" (the page asked to leave its document), or ""
        when it has no box to click (nothing sent).

        Raises:
            ToolError: action_not_available when something covers it (nothing sent).
        """
        aimed = await self._aim(element, name)
        if aimed is None:
            return ""
        # The pointer comes first, and what it changes is drawn before the button goes down, as for
        # a person: a picture that `:hover` swaps (MiniWoB's "more" icons) has no box until it loads,
        # and a press at once fell on what was behind it. Then look again where it now is.
        # A page that took no move in time draws no frames now (a tab behind another): nothing the
        # pointer changes is drawn before the press, which delivers the move first.
        drawing = await pointer.hover(element.frame, aimed, self._host.timeouts.command)
        if drawing:
            aimed = await self._still(element, name, aimed)
        with self._leaving() as left:
            await pointer.click(
                element.frame,
                aimed,
                self._host.timeouts.command,
                modifiers=modifiers,
                or_left=left.wait,
                drawing=drawing,
                pressing=self._pressing,
            )
        if left.is_set():
            return "left"
        if drawing:
            # What the click starts in the page's next frames (an accordion's animation shows its
            # panel; a framework renders what it batched) is what a person sees of it: answered after.
            await _next_frame(element, self._host.timeouts.command)
        return "clicked"

    async def _still(self, element: Element, name: str, aimed: pointer.Aimed) -> pointer.Aimed:
        """Where `element` is once the page drew what the pointer changed and the element stopped
        moving: aimed again after each two frames until two aims agree (a panel sliding in moves
        what is in it, and a click aimed at it mid-way lands where it was), at most `STILL_WAIT`."""
        with anyio.move_on_after(STILL_WAIT):
            while True:
                await _next_frame(element, self._host.timeouts.command)
                try:
                    again = await self._aim(element, name)
                except ToolError:
                    return aimed  # covered now by what the pointer opened: click where it was
                if again is None or again == aimed:
                    return aimed
                aimed = again
        return aimed

    async def _aim(self, element: Element, name: str) -> pointer.Aimed | None:
        limit = self._host.timeouts.command
        node = (
            {"backendNodeId": element.backend_id} if element.backend_id is not None else {"objectId": element.object_id}
        )

        async def judge(hit: int) -> str | None:
            if element.backend_id is not None and hit == element.backend_id:
                return None
            covering = await reads.node_object(element.frame.send, hit, limit, element.context)
            if covering is None:
                return "an element of another frame"
            extra = [{"objectId": covering}]
            reply = await call(element.frame.send, element.object_id, "hit", [], limit, extra=extra)
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

    async def _element(self, target: ActionTarget) -> Element | None:
        return await element_of(self._last_read(), self._page, target, self._host.timeouts.command)

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
        context = await world_of(send, frame_id, limit)
        doc = await send("Runtime.evaluate", {"expression": "document", "contextId": context}, timeout=limit)
        hint_arg: dict[str, Any] = {"value": None}
        if hint is not None:
            field = await reads.node_object(send, hint[2], limit, context)
            # A field that is gone: the form is then found by name or as the only one.
            hint_arg = {"objectId": field} if field else hint_arg
        return await call(
            send, doc["result"]["objectId"], "submit", [form], self._host.timeouts.tool_call, extra=[hint_arg]
        )


async def _keys(send: Any, chord: Chord, timeout: float) -> None:
    for event in key_events(chord):
        await send("Input.dispatchKeyEvent", event, timeout=timeout)


async def _after(element: Element, timeout: float) -> dict[str, Any]:
    """The element's state after a press; {} when the press took the document away."""
    try:
        return await call(element.frame.send, element.object_id, "state", [], timeout)
    except CDPError:
        return {}


_WHEEL_SETTLE = 1.0
"""The longest a wheel's scrolling may take to come to rest (a smooth scroll animates) (s)."""


async def _turn_wheel(element: Element, aimed: pointer.Aimed, delta: int, limit: float) -> int:
    """Turn the wheel at `aimed`; answers how far (px) the element and what holds it scrolled."""

    async def offsets() -> list[float]:
        at = (await call(element.frame.send, element.object_id, "scrolls", [], limit)).get("at")
        return [float(v) for v in at] if isinstance(at, list) else []

    before = await offsets()
    await pointer.wheel(element.frame, aimed, delta, limit)
    now, last = await offsets(), None
    with anyio.move_on_after(_WHEEL_SETTLE):
        while now != last:  # until two reads a frame apart agree: the scroll is at rest
            await _next_frame(element, limit)
            last, now = now, await offsets()
    return round(sum(abs(a - b) for a, b in zip(before, now, strict=False)))


_FRAME_WAIT = 0.1
"""At most this long for the page to draw what the pointer changed (s): two animation frames, or
this in a hidden page, where animation frames do not come."""


async def _next_frame(element: Element, limit: float) -> None:
    """Until the element's page has drawn twice (or `_FRAME_WAIT` passed)."""
    ms = int(_FRAME_WAIT * 1000)
    expression = f"new Promise(r => {{ requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, {ms}); }})"
    # Bounded here too: a background tab's timers are throttled to one a second.
    with contextlib.suppress(CDPError), anyio.move_on_after(_FRAME_WAIT + 0.05):
        await element.frame.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "contextId": element.context},
            timeout=limit,
        )
