"""The WebMCP tool mirror of one tab: what its frames registered, and calling it.

Tools are keyed by (session, frame, name) as `WebMCP.toolsAdded` / `toolsRemoved` report
them, from the page's own session and from those of its out-of-process iframes. Each tool
gets a stable action handle: its WebMCP name where that is name-safe and free, otherwise
`page_<safe>` with a counter, so a page can never shadow a browser action.

`invoke` subscribes before it sends, and matches `toolResponded` by `invocationId` even
when the event overtakes the command's own answer (Chromium sends them in either order).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession, Reply
from cdp_bridge.errors import CDPError
from cdp_bridge.protocol import WebMCPToolResponded
from webmcp.desktop.parts import Commit, Part
from webmcp.js import call, load
from webmcp.untrusted.page_limits import cap_window_tools
from webmcp.untrusted.schema_guard import WRAPPED_KEY, Unusable, handle_for, normalise_tool

__all__ = [
    "NAVIGATION_ANSWER_GRACE",
    "Invocation",
    "Outcome",
    "PageTool",
    "Starting",
    "ToolMirror",
    "end_navigated_calls",
    "moved_without_answer",
]

logger = logging.getLogger(__name__)

_EARLY_KEEP = 256
GONE_FRAMES_KEEP = 256
"""Removed frames whose origin is still known (a late download or tool event may name one)."""
_PROBE_WORLD = "webmcp_bridge_tools"
_GET_TOOLS_JS = call(load("get_tools.js"))


@dataclass
class PageTool:
    """One tool a frame registered, as the bridge republishes it."""

    handle: str
    name: str
    frame_id: str
    session: CDPSession
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    backend_node_id: int | None
    """The `<form>` of a declarative tool; None for imperative ones."""
    display_name: str = ""
    """The page's name, cleaned and capped, for quoting."""
    wrapped: bool = False
    """The page's schema is not an object: the published one holds it under `input`."""
    notices: tuple[str, ...] = ()
    fingerprint: str = ""
    origin: str = ""
    """The origin of the frame that registered it."""

    @property
    def declarative(self) -> bool:
        return self.backend_node_id is not None

    @property
    def key(self) -> tuple[str | None, str, str]:
        return (self.session.session_id, self.frame_id, self.name)


@dataclass
class Outcome:
    """How an invocation ended: `status` is Completed, Error, Canceled or Interrupted."""

    status: str
    output: Any = None
    error_text: str = ""


def moved_without_answer(url: str | None) -> Outcome:
    """The outcome of a call whose tab loaded another document before the page answered it."""
    return Outcome(
        "Interrupted",
        error_text=f"The tab moved to {url} during the call and the page gave no answer; whether the call took "
        "effect is unknown: read the window before trying again.",
    )


@dataclass(eq=False)
class Invocation:
    """One call in flight; `done` is set once `outcome` is known."""

    tool: PageTool
    invocation_id: str | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: Outcome | None = None
    navigated_to: str | None = None
    """The address the tab moved to while the call ran (a form that submits, `location = …`)."""
    wakers: list[anyio.Event] = field(default_factory=list)
    """Set along with `done`: a waiter's one event that other things may set too."""
    cancel_reason: str | None = None
    """Why the bridge told the page to cancel the call (None: it did not); a `Canceled` answer is then its doing."""
    started: bool = False
    """The page began running the call (`WebMCP.toolInvoked`)."""
    start_wakers: list[anyio.Event] = field(default_factory=list)
    """Set when the page starts the call, when it settles, and when the tab commits another document."""

    def settle(self, outcome: Outcome) -> None:
        if not self.done.is_set():
            self.outcome = outcome
            self.done.set()
            for waker in (*self.wakers, *self.start_wakers):
                waker.set()

    def moved_on(self, url: str) -> None:
        """The tab committed another document (at `url`) while the call ran."""
        self.navigated_to = url
        for waker in self.start_wakers:
            waker.set()


@dataclass(eq=False)
class Starting:
    """An `invokeTool` written to the browser, the page's taking of it (its invocation id) to come."""

    invocation: Invocation
    reply: Reply


def _page_input(tool: PageTool, arguments: dict[str, Any]) -> Any:
    """What the page receives: the arguments, unwrapped when the page's schema was not an object."""
    return arguments.get(WRAPPED_KEY) if tool.wrapped else arguments


def _invoke_params(tool: PageTool, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"frameId": tool.frame_id, "toolName": tool.name, "input": _page_input(tool, arguments)}


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _output_of(params: WebMCPToolResponded) -> Any:
    """The tool's return value from `toolResponded`.

    Chromium 156 sends the value's JSON text parsed, or the text itself when its parse
    fails; and its parse fails on text whose characters are all below U+0100 with some
    above U+007F (`{"a":"è"}`: Latin-1, held in 8 bits), while `{"a":"日本"}` parses. Such
    a text is parsed here as Chromium meant to (a string the page returned is sent as its
    own text, so `"café"`, which is no JSON, stays the string).
    """
    output = params.get("output")
    if isinstance(output, str) and output and max(output) <= "\xff" and any(c >= "\x80" for c in output):
        try:
            return json.loads(output, parse_constant=_refuse_constant)
        except ValueError:
            return output
    return output


def _error_message(params: WebMCPToolResponded) -> str:
    exception = params.get("exception") or {}
    description = str(exception.get("description") or "")
    # The description carries the JS stack after the first line; the agent needs the message.
    first_line = description.split("\n", 1)[0].strip()
    return first_line or str(params.get("errorText") or "") or "The page tool failed without a message"


NAVIGATION_ANSWER_GRACE = 2.0
"""After a call's tab has loaded another document, how long the call may still answer.

A form tool that submits to another page answers a few hundred ms after the new page
loads (its output read from that page); past this grace the outcome is unknown.
"""


async def end_navigated_calls(invocations: list[Invocation]) -> None:
    """Calls whose tab loaded another document get `NAVIGATION_ANSWER_GRACE` to answer, then end."""
    await anyio.sleep(NAVIGATION_ANSWER_GRACE)
    for invocation in invocations:
        invocation.settle(moved_without_answer(invocation.navigated_to))


def _no_answer_of_the_page(invocation: Invocation, outcome: Outcome) -> Outcome | None:
    """The outcome of a call whose `Completed` is Chromium's own, not the page's: None when it is the page's.

    When the document of a call still running is replaced, Chromium 156 answers the call
    itself once the new document has loaded: `Completed`, with the new document's JSON-LD as
    output, or `[]` when it has none. A form that submits to another page is answered so by
    design (its submit is its effect); a script tool answered `[]` after its document went
    (one that set `location` and never resolved) gave no answer, and what it did is unknown.
    A tool's own `[]`, returned as it set `location`, comes before the commit.
    """
    if (
        invocation.navigated_to is None
        or invocation.tool.declarative
        or outcome.status != "Completed"
        or outcome.output != []
    ):
        return None
    return moved_without_answer(invocation.navigated_to)


class ToolMirror(Part):
    """The page tools of one tab, kept in step with WebMCP events (a part of the tab: parts.py)."""

    def __init__(
        self,
        reserved: set[str],
        on_change: Callable[[], None],
        on_form_call: Callable[[], None] = lambda: None,
        follow: Callable[..., None] = lambda *_a: None,
        ended: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._reserved = reserved
        self._on_change = on_change
        self._follow = follow
        self._ended = ended
        """ "crashed" or "closed" once the tab can no longer answer (`TabLife.ended`)."""
        """Runs a task past the current event, supervised (`Tab.spawn_follower`)."""
        self._main: tuple[CDPSession | None, str] = (None, "")
        """The page's own session and its main frame (the tools listed first)."""
        self._on_form_call = on_form_call
        """Called when the page takes a call of a declarative tool, and when it answers it: while the
        call runs, Chromium matches the form with `:tool-form-active` and its submit button with
        `:tool-submit-active`, set and cleared with no mutation an observer sees (a page that
        styles them changes the button's name)."""
        self._tools: dict[tuple[str | None, str, str], PageTool] = {}
        self._revision = 0
        """Moves whenever `_tools` changes (what is derived from the tools is kept until it does)."""
        self._listed: tuple[int, list[PageTool], list[PageTool], str | None] = (-1, [], [], None)
        """(revision, every tool in the page's order, those listed within the caps, the notice)."""
        self._handles: dict[tuple[str | None, str, str], str] = {}
        self._pending: dict[str, Invocation] = {}
        self._early: dict[str, WebMCPToolResponded] = {}
        self._early_started: dict[str, None] = {}
        """Calls the page reported started before `invokeTool`'s answer named them."""
        self._in_flight: set[Invocation] = set()
        self._unusable: dict[tuple[str | None, str, str], Unusable] = {}
        """Tools a page registered that cannot be published, with the reason."""
        self._frame_origins: dict[str, str] = {}
        """Frame id → the origin of the document it shows (fed by the tab's navigation events)."""
        self._gone_frames: dict[str, None] = {}
        """Frames removed from the page, oldest first: forgotten past GONE_FRAMES_KEEP."""
        self._incoming: set[tuple[str | None, str, str]] | None = None
        """Tools announced since the main frame began a cross-document navigation."""

    # --- what others read ---------------------------------------------------------------

    @property
    def revision(self) -> int:
        """Moves whenever the set of tools changes."""
        return self._revision

    @property
    def in_flight(self) -> frozenset[Invocation]:
        """The calls under way."""
        return frozenset(self._in_flight)

    @property
    def unusable(self) -> dict[tuple[str | None, str, str], Unusable]:
        """Tools a page registered that cannot be published, with the reason (a copy)."""
        return dict(self._unusable)

    @property
    def frame_origins(self) -> dict[str, str]:
        """Frame id → the origin of the document it shows (a copy)."""
        return dict(self._frame_origins)

    def current(self, key: tuple[str | None, str, str]) -> PageTool | None:
        """The tool the page offers now under `key` (a new document registers new objects)."""
        return self._tools.get(key)

    def has_frame(self, frame_id: str) -> bool:
        """Whether a frame of the tab showed a document with this id (a removed one, for a while)."""
        return frame_id in self._frame_origins

    def listed(self) -> tuple[list[PageTool], list[PageTool], str | None]:
        """(every tool in the page's order, those listed within the per-window caps, the notice when
        some were left out). The page's order: as registered (WebMCP announces each registration live,
        in order; on attaching to a loaded page Chromium replays them by name), the main frame's first."""
        # Every call and every tools/list asks; the caps are worked out once per tool set.
        if self._listed[0] != self._revision:
            main, main_frame = self._main
            ordered = sorted(self._tools.values(), key=lambda t: not (t.session is main and t.frame_id == main_frame))
            self._listed = (self._revision, ordered, *cap_window_tools(ordered))
        return list(self._listed[1]), list(self._listed[2]), self._listed[3]

    # --- the tab's lifecycle (parts.py) ------------------------------------------------

    def watch(self, session: CDPSession, main: bool = False) -> list[SetUp]:
        """Follow the WebMCP events of `session` (the page's or an OOPIF's); nothing to send."""
        session.on("WebMCP.toolsAdded", lambda p: self._added(session, p))
        session.on("WebMCP.toolsRemoved", lambda p: self._removed(session, p))
        session.on("WebMCP.toolResponded", lambda p: self._responded(cast(WebMCPToolResponded, p)))
        session.on("WebMCP.toolInvoked", self._invoked)
        session.on("Page.frameDetached", self._frame_detached)
        session.on("Page.frameDetached", lambda p: self._detached(session, p))
        session.on("Page.frameNavigated", self._frame_navigated)
        session.on("Page.loadEventFired", lambda _p: self._grace())
        if main:
            # A page target's id is its main frame's id; the commits tell if that ever differs.
            self._main = (session, self._main[1] or session.target_id or "")
            session.on("Page.frameStartedNavigating", lambda p: self._starting(session, p))
        return []

    def _detached(self, session: CDPSession, params: dict[str, Any]) -> None:
        """A frame left `session`: removed, its tools go; moved to another process ("swap"), only
        those it registered through `session`. Its new process's session may have announced
        the new document's tools first: the two processes' events come in no set order (the
        extension relay met it, 1 run in ~10 under load)."""
        frame_id = str(params.get("frameId", ""))
        if params.get("reason") == "swap":
            self.drop_frames(
                lambda t: t.frame_id != frame_id or t.session is not session, "it moved to another process"
            )
        else:
            self.drop_frames(lambda t: t.frame_id != frame_id, "it was removed")

    def _frame_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        self.frames_show({frame.get("id", ""): str(frame.get("securityOrigin", ""))})

    def _starting(self, session: CDPSession, params: dict[str, Any]) -> None:
        same_document = str(params.get("navigationType", "")).startswith(("sameDocument", "historySameDocument"))
        if params.get("frameId") == session.target_id and not same_document:
            self.document_starting()

    def committed(self, doc: Commit) -> None:
        self._main = (doc.session, doc.frame_id)
        self.navigated(doc.url)
        self.document_committed(doc.session, doc.restored)
        if doc.restored:
            self._grace()  # a page restored whole fires no load event

    def _grace(self) -> None:
        """The page the tab moved to has loaded: calls still waiting get their grace, then end."""
        waiting = [i for i in self._in_flight if i.navigated_to is not None and not i.done.is_set()]
        if waiting:
            self._follow(end_navigated_calls, waiting)

    def frame_left(self, frame_id: str) -> None:
        self.interrupt_all(
            "The frame that holds the tool navigated while it was running.",
            only=lambda inv: inv.tool.frame_id == frame_id,
        )
        self.drop_frames(lambda t: t.frame_id != frame_id, "it navigated")

    def crashed(self) -> None:
        self.interrupt_all("The tab crashed while the tool was running; whether the call took effect is unknown.")
        self.drop_frames(lambda _t: False, "the tab crashed")

    def closing(self) -> None:
        what = self._ended() or "closed"
        self.interrupt_all(f"The tab {what} while the tool was running; whether the call took effect is unknown.")

    def _frame_detached(self, params: dict[str, Any]) -> None:
        # Every iframe of every page the tab showed stayed here. A removed frame never comes back,
        # but a late event may still name it (a download its document began): the last
        # GONE_FRAMES_KEEP removed are kept. A "swap" (the frame moved to another process) is no removal.
        frame_id = str(params.get("frameId", ""))
        if params.get("reason") != "remove" or frame_id not in self._frame_origins:
            return
        self._gone_frames[frame_id] = None
        if len(self._gone_frames) > GONE_FRAMES_KEEP:
            oldest = next(iter(self._gone_frames))
            del self._gone_frames[oldest]
            self._frame_origins.pop(oldest, None)

    def frames_show(self, origins: dict[str, str]) -> None:
        """Frame id → the origin of the document it now shows (from the tab's navigation events)."""
        self._frame_origins.update(origins)

    def origin_of(self, frame_id: str) -> str:
        """The origin of the document `frame_id` shows, as far as the tab has seen."""
        return self._frame_origins.get(frame_id, "")

    def by_handle(self, handle: str) -> PageTool | None:
        """The live tool published as `handle`, if any."""
        return next((t for t in self._tools.values() if t.handle == handle), None)

    def _handle_for(self, key: tuple[str | None, str, str], handle: str) -> str:
        """`handle` (name-safe, from normalise_tool) unless another tool of this tab holds it."""
        known = self._handles.get(key)
        if known is not None:
            return known
        taken = {t.handle for k, t in self._tools.items() if k != key} | self._reserved
        if handle in taken:
            handle = handle_for(key[2], salt=f"{key[0]}/{key[1]}")  # stable per frame, hashed
        self._handles[key] = handle
        return handle

    def _added(self, session: CDPSession, params: dict[str, Any]) -> None:
        tools = params.get("tools")
        for raw in tools if isinstance(tools, list) else ():
            if not isinstance(raw, dict):
                continue
            normal = normalise_tool(raw)
            key = (session.session_id, str(raw.get("frameId", "")), normal.name)
            if self._incoming is not None:
                self._incoming.add(key)
            if isinstance(normal, Unusable):
                # Listed as a notice in the window, never as a tool (docs/security.md).
                self._unusable[key] = normal
                self._tools.pop(key, None)
                continue
            self._unusable.pop(key, None)
            backend = raw.get("backendNodeId")
            self._tools[key] = PageTool(
                handle=self._handle_for(key, normal.handle),
                name=normal.name,
                frame_id=key[1],
                session=session,
                description=normal.description,
                input_schema=normal.input_schema,
                annotations=dict(normal.annotations),
                backend_node_id=backend if isinstance(backend, int) else None,
                display_name=normal.display_name,
                wrapped=normal.wrapped,
                notices=normal.notices,
                fingerprint=normal.fingerprint,
                origin=self.origin_of(key[1]),
            )
        logger.debug("tools added: %s", [(t.get("name"), str(t.get("frameId"))[:8]) for t in params.get("tools", ())])
        self._revision += 1
        self._on_change()

    async def recover_child_frames(self, session: CDPSession) -> None:
        """Read the tools of child frames that registered before `WebMCP.enable`.

        Chromium's enable replays only the main frame's tools, so on a page that was loaded
        before the bridge attached (`--cdp-url`), a same-process iframe's tools would stay
        unknown until it registered again. The page API's getTools() still lists them; each
        frame's own are those whose `window` is that frame's. Annotations are not exposed
        there, so recovered tools carry none.
        """
        tree = await session.send("Page.getFrameTree")
        pending = list(tree["frameTree"].get("childFrames", ()))
        while pending:
            node = pending.pop(0)
            pending.extend(node.get("childFrames", ()))
            frame_id = str(node["frame"]["id"])
            try:
                world = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": _PROBE_WORLD})
                reply = await session.send(
                    "Runtime.evaluate",
                    {
                        "expression": _GET_TOOLS_JS,
                        "contextId": world["executionContextId"],
                        "awaitPromise": True,
                        "returnByValue": True,
                    },
                )
            except CDPError as exc:
                logger.debug("could not read the tools of frame %s: %s", frame_id[:8], exc)
                continue
            found = reply.get("result", {}).get("value") or []
            known = {(key[0], key[1], key[2]) for key in self._tools}
            fresh = [
                {**tool, "frameId": frame_id}
                for tool in found
                if isinstance(tool, dict) and (session.session_id, frame_id, tool.get("name")) not in known
            ]
            if fresh:
                self._added(session, {"tools": fresh})

    def _removed(self, session: CDPSession, params: dict[str, Any]) -> None:
        for raw in params.get("tools", ()):
            key = (session.session_id, str(raw.get("frameId", "")), str(raw.get("name", "")))
            self._tools.pop(key, None)
            self._unusable.pop(key, None)
        logger.debug("tools removed: %s", [(t.get("name"), str(t.get("frameId"))[:8]) for t in params.get("tools", ())])
        self._revision += 1
        self._on_change()

    def document_starting(self) -> None:
        """The main frame began loading another document: note which tools it announces."""
        self._incoming = set()

    def document_committed(self, session: CDPSession, restored: bool) -> None:
        """The main frame of `session` now shows another document: drop the old one's tools.

        Navigation sends no toolsRemoved. A page restored from the back-forward cache
        announces its tools between the start of the navigation and its commit (and fires
        no load): those are kept; a new document's tools all come after the commit.
        """
        incoming, self._incoming = self._incoming, None
        self._unusable = {
            k: u for k, u in self._unusable.items() if k[0] != session.session_id or k in (incoming or ())
        }
        if restored and incoming is not None:
            self.drop_frames(lambda t: t.session is not session or t.key in incoming, "the tab restored a page")
        else:
            self.drop_frames(lambda t: t.session is not session, "the tab navigated")

    def drop_frames(self, keep: Callable[[PageTool], bool], why: str) -> None:
        """Forget tools for which `keep` is false (their frame navigated or detached: `why`, logged)."""
        gone = [k for k, t in self._tools.items() if not keep(t)]
        for key in gone:
            del self._tools[key]
        frames = {k[:2] for k in gone}
        for key in [k for k in self._unusable if k[:2] in frames]:
            del self._unusable[key]
        logger.debug("tools dropped with their frame (%s): %s", why, [k[2] for k in gone])
        if gone:
            self._revision += 1
            self._on_change()

    def _responded(self, params: WebMCPToolResponded) -> None:
        invocation_id = str(params.get("invocationId", ""))
        outcome = Outcome(
            status=str(params.get("status", "Error")),
            output=_output_of(params),
            error_text=_error_message(params) if params.get("status") != "Completed" else "",
        )
        pending = self._pending.pop(invocation_id, None)
        if pending is not None:
            if pending.tool.declarative:
                self._on_form_call()
            pending.settle(_no_answer_of_the_page(pending, outcome) or outcome)
            return
        # Chromium may send toolResponded before the invokeTool answer names the id.
        self._early[invocation_id] = params
        while len(self._early) > _EARLY_KEEP:
            self._early.pop(next(iter(self._early)))

    def _invoked(self, params: dict[str, Any]) -> None:
        invocation_id = str(params.get("invocationId", ""))
        pending = self._pending.get(invocation_id)
        if pending is None:
            self._early_started[invocation_id] = None
            while len(self._early_started) > _EARLY_KEEP:
                self._early_started.pop(next(iter(self._early_started)))
            return
        pending.started = True
        for waker in pending.start_wakers:
            waker.set()

    async def start(
        self,
        tool: PageTool,
        arguments: dict[str, Any],
        timeout: float,
        preceded_by: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> Invocation:
        """Send `invokeTool`; the returned invocation settles when the page answers.

        `preceded_by`: commands for the tool's session written just before it (see `CDPSession.send`).

        Raises:
            ProtocolError: the browser refused the call (e.g. -32602 "Tool not found").
            CDPError: the session or connection failed.
        """
        invocation = Invocation(tool)
        # Tracked before the command is sent: the page may navigate before its answer arrives.
        self._in_flight.add(invocation)
        try:
            reply = await tool.session.send(
                "WebMCP.invokeTool", _invoke_params(tool, arguments), timeout=timeout, preceded_by=preceded_by
            )
        except BaseException:
            self._in_flight.discard(invocation)
            raise
        return self._taken(invocation, reply)

    def begin(
        self, tool: PageTool, arguments: dict[str, Any], preceded_by: Sequence[tuple[str, Mapping[str, Any]]] = ()
    ) -> Starting | None:
        """Write `invokeTool` now, without yielding (`CDPSession.send_now`); None when the channel
        cannot take it at once (nothing was sent: `start` it instead). `taken` then gives the invocation.

        Raises:
            CDPError: the session or connection is gone.
        """
        invocation = Invocation(tool)
        self._in_flight.add(invocation)
        try:
            reply = tool.session.send_now("WebMCP.invokeTool", _invoke_params(tool, arguments), preceded_by=preceded_by)
        except BaseException:
            self._in_flight.discard(invocation)
            raise
        if reply is None:
            self._in_flight.discard(invocation)
            return None
        return Starting(invocation, reply)

    async def taken(self, starting: Starting, timeout: float) -> Invocation:
        """The invocation `begin` wrote, once the browser answered it (at most `timeout` seconds);
        it settles when the page answers.

        Raises:
            ProtocolError: the browser refused the call.
            CDPError: no answer in time (`CommandTimeout`), or the session or connection failed.
        """
        try:
            reply = starting.reply.result() if starting.reply.answered else await starting.reply.wait(timeout)
        except BaseException:
            self._in_flight.discard(starting.invocation)
            raise
        return self._taken(starting.invocation, reply)

    def _taken(self, invocation: Invocation, reply: dict[str, Any]) -> Invocation:
        invocation.invocation_id = str(reply["invocationId"])
        self._pending[invocation.invocation_id] = invocation
        if invocation.invocation_id in self._early_started:
            del self._early_started[invocation.invocation_id]
            invocation.started = True
        if invocation.tool.declarative:
            self._on_form_call()
        early = self._early.pop(invocation.invocation_id, None)
        if early is not None:
            self._responded(early)
        return invocation

    def finish(self, invocation: Invocation) -> None:
        """Stop tracking `invocation` (it settled, or the caller gave up)."""
        self._in_flight.discard(invocation)
        if invocation.invocation_id is not None:
            self._pending.pop(invocation.invocation_id, None)

    def navigated(self, url: str) -> None:
        """The tab committed another document: calls in flight go on (a form's answer comes later)."""
        for invocation in self._in_flight:
            invocation.moved_on(url)

    def interrupt_all(self, reason: str, only: Callable[[Invocation], bool] = lambda _i: True) -> None:
        """Settle in-flight calls as Interrupted (tab closed, crashed or navigated)."""
        for invocation in list(self._in_flight):
            if only(invocation):
                invocation.settle(Outcome("Interrupted", error_text=reason))

    @staticmethod
    async def cancel(invocation: Invocation, timeout: float, reason: str) -> bool:
        """Tell the page to cancel `invocation`; shielded, bounded, best effort.

        `reason` (why, in words for the agent) is kept on the invocation: `cancelInvocation`
        carries none, so the page's signal aborts with the default AbortError whatever it is.
        Returns True when the browser confirmed the cancel within `timeout`; a page whose
        main thread is busy confirms nothing until it is free.
        """
        if invocation.invocation_id is None:
            return False
        if invocation.cancel_reason is None:
            invocation.cancel_reason = reason
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout):
            try:
                await invocation.tool.session.send(
                    "WebMCP.cancelInvocation", {"invocationId": invocation.invocation_id}, timeout=timeout
                )
            except CDPError as exc:
                logger.debug("cancelInvocation failed: %s", exc)
                return False
            return True
        return False
