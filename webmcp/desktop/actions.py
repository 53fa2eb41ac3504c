"""Window actions on a tab: fill, press and submit what the window shows (issue 20; docs/protocols.md#window-actions).

`WindowActions` is the tab's part that acts on the page as a person would, by the labels
its blocks show: the view's `ActionTarget`s name the element (its backend node id, read
with the view; no URL or selector is ever guessed), `view.targets.resolve`/`coerce` decide
what to set, and `window_actions.js` sets it in the bridge's isolated world (focus, the
pointer and input events, change). Each action is a write through the tab's one effects
path (effects.py), as a page-tool call is: the write guard with a version check, and the
answer once its effect happened (a navigation until the page is usable; a dialog, new tab,
`<dialog>`, file chooser or sign-in prompt in `openedWindowIds`; a download in the
message; a same-page change readable in `app://windows`).
Values are never put in answers, errors or logs: a secret field's is masked on the way out
too (server/app.py `_leaving`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cdp_bridge.errors import CDPError, ProtocolError
from cdp_bridge.targets import PageTarget
from webmcp.desktop.effects import Act, Effects, TabFacts
from webmcp.desktop.live_view import WORLD, PageRead
from webmcp.desktop.windows import VersionCheck
from webmcp.errors import ToolError
from webmcp.js import load
from webmcp.models import ToolResult
from webmcp.view.targets import ActionTarget, Coerced, Refusal, coerce, resolve

__all__ = ["ActionHost", "FieldValue", "WindowActions"]

logger = logging.getLogger(__name__)

_ACTIONS_JS = load("window_actions.js")
_PRESSABLE = frozenset({"button", "link"})
_FILLABLE = frozenset({"field"})
_REFUSED = {
    "gone": "it is no longer in the page (the page changed); re-read the window",
    "disabled": "it is disabled",
    "readonly": "it is read-only",
    "no-option": "it has no such option",
    "option-disabled": "that option is disabled",
    "refused": "the field did not take it (not a value it can hold)",
    "not-fillable": "it is not a field the bridge can fill",
}


@dataclass(frozen=True)
class FieldValue:
    label: str
    value: Any
    block_id: str | None = None


class ActionHost(TabFacts, Protocol):
    """What window actions need of their tab: facts, and whether the agent may submit forms."""

    @property
    def agent_may_submit(self) -> bool: ...


class WindowActions:
    """Fill, press and submit on one tab (the caller holds the tab's op_lock)."""

    def __init__(
        self, host: ActionHost, effects: Effects, page: PageTarget, last_read: Callable[[], PageRead | None]
    ) -> None:
        self._host = host
        self._effects = effects
        self._page = page
        self._last_read = last_read
        self._last_filled: tuple[int, str, int] | None = None
        """(document, frame key, backend id) of the field the last fill set: the form submit means."""

    def targets(self) -> list[ActionTarget]:
        read = self._last_read()
        return list(read.view.targets) if read is not None else []

    def offers(self, action: str) -> bool:
        """Whether the window shows something `action` can act on now."""
        targets = self.targets()
        if action == "press":
            return any(t.kind in _PRESSABLE for t in targets)
        if action == "fill":
            return any(t.kind == "field" and not t.disabled for t in targets)
        if action == "submit":
            return self._host.agent_may_submit and any(t.kind == "field" for t in targets)
        return False

    async def _current(self) -> list[ActionTarget]:
        """The targets of the page as it is now (read after the last write)."""
        await self._effects.catch_up(self._host.timeouts.snapshot)
        return self.targets()

    # --- the operations ------------------------------------------------------------

    async def fill(self, fields: Sequence[FieldValue], check: VersionCheck | None) -> ToolResult:
        """Set each field of `fields` by its label, in order; every label and value is checked before any is set.

        Raises:
            ToolError: validation_failed (unknown, ambiguous or refused; nothing set), stale_state.
        """
        targets = await self._current()
        plan: list[tuple[ActionTarget, Coerced]] = []
        problems: list[dict[str, Any]] = []
        for index, item in enumerate(fields):
            where = f"fields[{index}]"
            found = resolve(targets, item.label, item.block_id, _FILLABLE, "field")
            if isinstance(found, Refusal):
                problems.append(_problem(where, found))
                continue
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

        async def work() -> None:
            for target, value in plan:
                reply = await self._on(target, "fill", value.kind, value.text or "", bool(value.checked))
                if reply.get("error"):
                    why = _REFUSED.get(str(reply["error"]), str(reply["error"]))
                    said = f"Filled {', '.join(done)}; " if done else ""
                    raise ToolError(
                        "validation_failed",
                        f"{said}\u201c{target.label}\u201d refused the value: {why}.",
                        fields=[{"field": target.label, "error": why}],
                    )
                done.append(_shown_label(target))
                self._last_filled = (self._host.doc_seq, target.frame_key, target.backend_id)

        _, act = await self._acting(work, check)
        message = f"Filled {len(done)} field{'s' if len(done) != 1 else ''} of {self._host.id}: {', '.join(done)}."
        if len(done) < len(plan):
            # A dialog opened while a field was set (its change handler asked): the rest waits.
            left = len(plan) - len(done) - 1
            rest = f"; the {left} after it were not filled" if left else ""
            message = f"{message} {_shown_label(plan[len(done)][0])} was being set when the page opened a dialog{rest}."
        return act.answer(ToolResult(message=message))

    async def press(self, label: str, block_id: str | None, check: VersionCheck | None) -> ToolResult:
        """Activate the button or link shown as `label` (in block `block_id`).

        Raises:
            ToolError: validation_failed (unknown, ambiguous, disabled), action_not_available
                (a submit button under --human-submit), stale_state.
        """
        targets = await self._current()
        found = resolve(targets, label, block_id, _PRESSABLE, "button or link")
        if isinstance(found, Refusal):
            raise ToolError("validation_failed", found.message, fields=[_problem("label", found)])
        target = found.target
        if target.disabled:
            raise ToolError(
                "validation_failed",
                f"\u201c{target.label}\u201d is disabled: the page does not take it now.",
                fields=[{"field": "label", "error": "disabled"}],
            )
        what = "link" if target.kind == "link" else "button"

        async def work() -> dict[str, Any]:
            reply = await self._on(target, "press", self._host.agent_may_submit)
            if reply.get("error") == "human-submit":
                raise ToolError(
                    "action_not_available",
                    f"\u201c{target.label}\u201d submits a form, and only the person at the browser may submit forms "
                    "here (--human-submit).",
                )
            if reply.get("error"):
                why = _REFUSED.get(str(reply["error"]), str(reply["error"]))
                raise ToolError("validation_failed", f"\u201c{target.label}\u201d cannot be pressed: {why}.")
            return reply

        _, act = await self._acting(work, check)
        return act.answer(ToolResult(message=f"Pressed the {what} \u201c{target.label}\u201d in {self._host.id}."))

    async def submit(self, form: str | None, check: VersionCheck | None) -> ToolResult:
        """Submit a form (its submit button, else `requestSubmit()`), the one named `form` or the one last filled.

        Raises:
            ToolError: validation_failed (no such form, several), stale_state.
        """
        if not self._host.agent_may_submit:
            raise ToolError(
                "action_not_available", "Only the person at the browser may submit forms here (--human-submit)."
            )
        await self._current()
        hint = self._last_filled if self._last_filled and self._last_filled[0] == self._host.doc_seq else None

        async def work() -> dict[str, Any]:
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

    async def _acting(self, work: Callable[[], Awaitable[Any]], check: VersionCheck | None) -> tuple[Any, Act]:
        """Run `work` in the page through the effects path: (its value, the settled write)."""
        timeouts = self._host.timeouts
        # The bridge's own script acted in the page: what it changed is read whole.
        async with self._effects.write(check, read="whole") as act:
            try:
                finished, value = await self._effects.unless_dialog(work, timeouts.tool_call)
            except CDPError as exc:
                if not act.requested():
                    raise
                # The page navigated under the call (its context went with the old document): the effect happened.
                logger.debug("the action's script ended with its document: %s", exc)
                finished, value = True, {}
            if not finished and self._effects.dialog is None:
                raise ToolError(
                    "action_timeout",
                    f"The page did not take the action within {timeouts.tool_call:g} s (its main thread is busy); "
                    "whether it happened is unknown: read the window.",
                    outcome="unknown",
                )
        return value, act

    async def _on(self, target: ActionTarget, op: str, *args: Any) -> dict[str, Any]:
        """Run `op` of window_actions.js on `target`'s element, in the bridge's world of its frame."""
        read = self._last_read()
        reader = read.readers.get(target.frame_key) if read is not None else None
        if reader is None:
            raise ToolError("validation_failed", f"\u201c{target.label}\u201d is no longer shown; re-read the window.")
        # Each reader is its session's own `send` (read_page), which takes a timeout.
        send: Any = reader[0]
        frame_id = reader[1]
        limit = self._host.timeouts.command
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, timeout=limit)
        try:
            resolved = await send(
                "DOM.resolveNode",
                {"backendNodeId": target.backend_id, "executionContextId": world["executionContextId"]},
                timeout=limit,
            )
        except ProtocolError:
            return {"error": "gone"}
        return await _call(send, resolved["object"]["objectId"], op, list(args), self._host.timeouts.tool_call)

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
