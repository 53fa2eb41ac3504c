"""Waiting for what a tab's window shows: `wait_for`, which reads the window and changes nothing.

A wait answers as soon as the window shows a text (`text`), no longer shows one (`text_gone`),
or, with neither, once the page has settled: its load event fired, or it shows content and its
window has not changed for `SETTLE_QUIET`. The text is matched as the agent reads it: the
page's blocks (texts, labels, values, items, cells, alt texts), case-insensitive, with white
space folded, each block on its own; never the bridge's address bar or notices (a wait for a
page's "Loading…" to go must not be held by the bridge's own loading line), and masked with
every secret value the bridge knows, as `app://windows` is (a wait is no oracle for a password).

The window is judged fresh, as a read of `app://windows` is: with every change the page made
before now read (waiting at most `FRESH_LIMIT` for it). A wait holds no lock: the window's
other calls go on meanwhile. It wakes on the desktop's
changes (every change of the published state calls its listeners, after the state is
readable), never on a timer but for the quiet period it measures. It is refused as soon as
the window closes (`window_not_found`), its page crashes (`call_interrupted`) or a modal
window blocks it (`blocked_by_modal`): what it waited for can no longer come by itself. When
the time is up it says, as `action_timeout` with the window's `currentVersion`, that the text
did not come (or go, or the page did not settle): the window was read, only the wait ran out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from webmcp.desktop.refresher import FRESH_LIMIT
from webmcp.desktop.windows import WindowState, blocker_of
from webmcp.errors import ToolError
from webmcp.models import ToolResult
from webmcp.untrusted.schema_guard import cap_text
from webmcp.view.masking import mask_secrets
from webmcp.view.targets import folded

__all__ = ["SETTLE_QUIET", "WAIT_DEFAULT", "WAIT_LIMIT", "WaitDesk", "Wanted", "block_text", "wait_for"]

WAIT_DEFAULT = 5.0
"""How long a wait lasts when the agent does not say (s)."""
WAIT_LIMIT = 30.0
"""The longest wait an agent may ask for (s); the bridge's --tool-timeout bounds it too."""
SETTLE_QUIET = 1.0
"""With neither text: a page that shows content and whose window has not changed this long has settled (s)."""
_EXCERPT = 80
"""Characters shown on each side of a text found."""
_MAX_FOUND = 3
"""At most this many blocks are quoted where the text was found."""
_NOT_TEXT = frozenset(
    {"type", "id", "severity", "mimeType", "url", "heading", "offset", "total", "ordered", "sensitive", "required"}
)
"""Keys of a block's wire form that hold no text the agent reads as the page's."""


class WaitTab(Protocol):
    """What a wait reads of the tab it waits on."""

    @property
    def window(self) -> WindowState: ...
    @property
    def loading(self) -> bool: ...
    def page_blocks(self) -> list[dict[str, Any]]: ...
    def is_open(self) -> bool: ...
    def ended(self) -> str | None: ...
    def is_fresh(self) -> bool: ...
    async def fresh(self, budget: float) -> bool: ...


class _Timeouts(Protocol):
    @property
    def tool_call(self) -> float: ...


class WaitDesk(Protocol):
    """What a wait needs of the desktop: the windows, the secrets to mask with, its changes, its deadlines."""

    @property
    def timeouts(self) -> _Timeouts: ...
    def window_states(self) -> list[WindowState]: ...
    def window(self, window_id: str) -> Any: ...
    def known_secrets(self) -> frozenset[str]: ...
    def listening(self, listener: Callable[[], None]) -> AbstractContextManager[None]: ...


@dataclass(frozen=True)
class Wanted:
    """What the agent waits for: a text to be shown, one to be gone (both: both), or neither (settled)."""

    text: str | None = None
    text_gone: str | None = None

    def what(self) -> str:
        if self.text is not None and self.text_gone is not None:
            return f"{_quoted(self.text)} to show and {_quoted(self.text_gone)} to go"
        if self.text is not None:
            return f"{_quoted(self.text)} to show"
        if self.text_gone is not None:
            return f"{_quoted(self.text_gone)} to go"
        return "the page to settle"


def block_text(block: dict[str, Any]) -> str:
    """Everything of `block` the agent reads as text, in order, joined by spaces."""
    out: list[str] = []
    _texts(block, out)
    return " ".join(out)


def _texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_TEXT:
                _texts(item, out)
    elif isinstance(value, list):
        for item in value:
            _texts(item, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append(str(value))


class _Wake:
    """A listener of the desktop's changes that a waiter awaits: a change between two waits is not lost."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def __call__(self) -> None:
        self._event.set()

    async def wait(self, limit: float) -> None:
        """Until a change, or `limit` seconds."""
        with anyio.move_on_after(max(0.0, limit)):
            await self._event.wait()
        if self._event.is_set():
            self._event = anyio.Event()


async def wait_for(desk: WaitDesk, window_id: str, wanted: Wanted, timeout: float) -> ToolResult:
    """Wait, at most `timeout` seconds, until tab `window_id`'s window shows what `wanted` says.

    Raises:
        ToolError: window_not_found (it closed), call_interrupted (its page crashed), blocked_by_modal
            (a modal window opened over it), action_timeout (the time was up first; currentVersion).
    """
    tab: WaitTab = _tab_now(desk, window_id)
    timeout = min(timeout, desk.timeouts.tool_call)  # --tool-timeout bounds every call
    began = anyio.current_time()
    ends = began + timeout
    first_blocks = list(tab.window.blocks)
    wake = _Wake()
    version, still_since = tab.window.version, began
    with desk.listening(wake):
        while True:
            tab = _tab_now(desk, window_id)
            if not tab.is_fresh():
                # What the window says is judged once it has read what the page changed before now
                # (as a read of app://windows is): a text the page removed a moment ago is not "shown".
                await tab.fresh(max(0.0, min(FRESH_LIMIT, ends - anyio.current_time())))
                tab = _tab_now(desk, window_id)
            now = anyio.current_time()
            if tab.window.version != version:
                version, still_since = tab.window.version, now
            blocks = _masked(tab.page_blocks(), desk.known_secrets())
            if wanted.text is None and wanted.text_gone is None:
                if not tab.loading:
                    return _answer(tab, wanted, first_blocks, [], "it has loaded")
                if blocks and now - still_since >= SETTLE_QUIET:
                    return _answer(tab, wanted, first_blocks, [], f"its window has not changed for {SETTLE_QUIET:g} s")
                limit = still_since + SETTLE_QUIET - now if blocks else ends - now
            else:
                found = _containing(blocks, wanted.text) if wanted.text is not None else []
                gone = wanted.text_gone is None or not _containing(blocks, wanted.text_gone)
                if (wanted.text is None or found) and gone:
                    return _answer(tab, wanted, first_blocks, found, "")
                limit = ends - now
            if now >= ends:
                raise _timed_out(tab, wanted, timeout, first_blocks)
            await wake.wait(min(limit, ends - now))


def _tab_now(desk: WaitDesk, window_id: str) -> WaitTab:
    """The tab, if it can still show what a wait waits for; else the error that says why not."""
    states = desk.window_states()
    tab: WaitTab | None = desk.window(window_id) if any(w.id == window_id for w in states) else None
    if tab is None or not tab.is_open():
        raise ToolError("window_not_found", f"Window {window_id} closed while the wait was on.")
    if tab.ended() == "crashed":
        raise ToolError(
            "call_interrupted", f"The page of {window_id} crashed while the wait was on; reload the tab or close it."
        )
    blocker = blocker_of(states, window_id)
    if blocker is not None:
        raise ToolError(
            "blocked_by_modal",
            f"Window {window_id} is blocked by {blocker}, which opened while the wait was on; answer that window "
            "first.",
            blocking_window_id=blocker,
        )
    return tab


def _masked(blocks: list[dict[str, Any]], secrets: frozenset[str]) -> list[dict[str, Any]]:
    masked: list[dict[str, Any]] = mask_secrets(blocks, secrets) if secrets else blocks
    return masked


def _containing(blocks: list[dict[str, Any]], text: str) -> list[str]:
    """The excerpts of the blocks that show `text`, in the window's order."""
    needle = folded(text)
    found: list[str] = []
    for block in blocks:
        shown = " ".join(block_text(block).split())
        at = shown.casefold().find(needle)
        if at >= 0:
            found.append(_excerpt(shown, at, len(needle)))
    return found


def _excerpt(shown: str, at: int, length: int) -> str:
    start, end = max(0, at - _EXCERPT), min(len(shown), at + length + _EXCERPT)
    return ("\u2026" if start else "") + shown[start:end] + ("\u2026" if end < len(shown) else "")


def _changed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """How many blocks differ between two states of a window: those gone and those new."""
    old, new = Counter(_keys(before)), Counter(_keys(after))
    return sum((old - new).values()) + sum((new - old).values())


def _keys(blocks: list[dict[str, Any]]) -> Iterator[str]:
    for block in blocks:
        yield repr(block)


def _answer(tab: WaitTab, wanted: Wanted, first: list[dict[str, Any]], found: list[str], why: str) -> ToolResult:
    state = tab.window
    window_id = state.id
    if wanted.text is None and wanted.text_gone is None:
        message = f"{window_id} has settled: {why}."
    elif wanted.text is None:
        message = f"{window_id} no longer shows {_quoted(wanted.text_gone or '')}."
    else:
        message = f"{window_id} shows {_quoted(wanted.text)}" + (
            f" and no longer {_quoted(wanted.text_gone)}." if wanted.text_gone is not None else "."
        )
    result: dict[str, Any] = {"version": state.version, "changedBlocks": _changed(first, state.blocks)}
    if found:
        result["found"] = found[:_MAX_FOUND]
        if len(found) > _MAX_FOUND:
            result["foundIn"] = len(found)
    return ToolResult(message=message, result=result)


def _timed_out(tab: WaitTab, wanted: Wanted, timeout: float, first: list[dict[str, Any]]) -> ToolError:
    state = tab.window
    changed = _changed(first, state.blocks)
    if wanted.text is None and wanted.text_gone is None:
        what = (
            "it is still loading and nothing of it has rendered"
            if not tab.page_blocks()
            else "it is still loading and its window kept changing"
        )
        head = f"{state.id} did not settle within {timeout:g} s: {what}"
    else:
        head = f"Waited {timeout:g} s for {wanted.what()} in {state.id}; it did not happen"
    return ToolError(
        "action_timeout",
        f"{head} (version {state.version}, {changed} block(s) changed meanwhile). Nothing was done to the page; "
        "read app://windows, or wait again.",
        current_version=state.version,
    )


def _quoted(text: str) -> str:
    return f"\u201c{cap_text(text, 200)}\u201d"
