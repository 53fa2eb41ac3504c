"""A tab as a window: its page, its tool mirror, its dialog, and its semantic view.

A `Tab` turns CDP events of one page into window state. Content changes are noticed by a
MutationObserver that runs in an isolated world (the page can neither see nor call it),
plus navigation and load events; each marks the tab dirty, and a refresher task rebuilds
the view at a bounded rate, raising `version` only when the summary or blocks differ.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.snapshot import BlockIds, View, build_view
from cdp_bridge.targets import PageTarget
from cdp_bridge.timeouts import Timeouts

from .mirror import Invocation, ToolMirror
from .windows import WindowState

__all__ = ["Tab", "JsDialog", "BROWSER_ACTIONS", "install_observer", "SECRET_SELECTOR"]

logger = logging.getLogger(__name__)

BROWSER_ACTIONS = frozenset(
    {"focus", "navigate", "back", "forward", "reload", "close", "read_content", "screenshot", "accept", "dismiss"}
)
WORLD = "webmcp_bridge"
BINDING = "__webmcpBridgeDirty"
SECRET_SELECTOR = (
    'input[type=password], input[autocomplete~="cc-number"], input[autocomplete~="cc-csc"], '
    'input[autocomplete~="one-time-code"], input[autocomplete~="current-password"], '
    'input[autocomplete~="new-password"], input[autocomplete~="cc-exp"]'
)
# Runs in an isolated world in every frame: the page cannot see it, call the binding, or fake a change.
_OBSERVER_JS = f"""(() => {{
  if (globalThis.__webmcpBridgeObserving) return; globalThis.__webmcpBridgeObserving = true;
  let timer = 0;
  const ping = () => {{ if (timer) return; timer = setTimeout(() => {{ timer = 0; {BINDING}(''); }}, 15); }};
  new MutationObserver(ping).observe(document, {{subtree: true, childList: true, characterData: true,
    attributes: true}});
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin'])
    document.addEventListener(type, ping, true);
  ping();
}})();"""

_REFRESH_MIN_INTERVAL = 0.05


async def install_observer(session: CDPSession) -> None:
    """Enable the domains a tab needs and the change observer, on a page or OOPIF session."""
    await session.send("Page.enable")
    # Runtime.bindingCalled is only reported while the Runtime domain is enabled.
    await session.send("Runtime.enable")
    await session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument", {"source": _OBSERVER_JS, "worldName": WORLD, "runImmediately": True}
    )
    await session.send("WebMCP.enable")


@dataclass
class JsDialog:
    """An open alert/confirm/prompt/beforeunload, as a modal window owned by its tab."""

    window: WindowState
    kind: str
    message: str
    default_prompt: str
    session: CDPSession
    opened_by_call: Invocation | None = None
    call_done: anyio.Event = field(default_factory=anyio.Event)
    call_outcome: dict[str, Any] | None = None


def _summary_for_tab(title: str, url: str, view: View | None, tool_count: int, loading: bool) -> str:
    if view is None:
        return f"Loading {url or 'a new tab'}." if loading else f"An empty tab at {url or 'about:blank'}."
    heading = view.headings[0] if view.headings else (title or url)
    parts = [f"Shows \u201c{heading}\u201d"]
    errors = [n["text"] for n in view.notices if n.get("severity") == "error"]
    others = [n["text"] for n in view.notices if n.get("severity") != "error"]
    if errors:
        parts.append(f"needs attention: \u201c{errors[0][:120]}\u201d")
    elif others:
        parts.append(f"says \u201c{others[0][:120]}\u201d")
    if view.field_count:
        parts.append(f"{view.field_count} form field{'s' if view.field_count != 1 else ''}")
    parts.append(f"{tool_count} page tool{'s' if tool_count != 1 else ''}" if tool_count else "no page tools")
    return "; ".join(parts) + "."


class Tab:
    """One page target, published as the window `window.id`."""

    def __init__(self, window_id: str, page: PageTarget, timeouts: Timeouts, on_change: Callable[[], None]) -> None:
        self.page = page
        self.timeouts = timeouts
        self._on_change = on_change
        self.window = WindowState(id=window_id, title=page.title or page.url or "New tab")
        self.mirror = ToolMirror(set(BROWSER_ACTIONS), self._tools_changed)
        self.dialog: JsDialog | None = None
        self.op_lock = anyio.Lock()
        self._snapshot_lock = anyio.Lock()
        self._dirty = anyio.Event()
        self._doc_seq = 0
        self.ids = BlockIds()
        self.view: View | None = None
        self.loading = True
        self.closed = False
        self.gone = anyio.Event()
        self.window_opens = 0
        """How many times the page called window.open (or the like); tabs it opens arrive later."""

    @property
    def id(self) -> str:
        return self.window.id

    def watch(self, session: CDPSession) -> None:
        """Follow `session` (the page's own, or an OOPIF's) for tools, changes and navigation."""
        self.mirror.watch(session)
        session.on("Runtime.bindingCalled", lambda p: self.mark_dirty() if p.get("name") == BINDING else None)
        session.on("Page.frameNavigated", lambda p: self._navigated(session, p))
        session.on("Page.frameDetached", lambda p: self.mirror.drop_frames(lambda t: t.frame_id != p["frameId"]))
        session.on("Page.loadEventFired", lambda _p: self._loaded())
        session.on("Page.domContentEventFired", lambda _p: self.mark_dirty())
        session.on("Page.windowOpen", lambda _p: self._window_opened())

    def _window_opened(self) -> None:
        self.window_opens += 1

    def _tools_changed(self) -> None:
        self.mark_dirty()
        self._on_change()

    def _loaded(self) -> None:
        self.loading = False
        self.mark_dirty()

    def _navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = frame.get("id", "")
        if session is self.page.session and not frame.get("parentId"):
            self._doc_seq += 1
            self.loading = True
            self.mirror.interrupt_all("The tab navigated away while the tool was running.")
            self.mirror.drop_frames(lambda t: t.session is not session)
        else:
            self.mirror.interrupt_all(
                "The frame that holds the tool navigated while it was running.",
                only=lambda inv: inv.tool.frame_id == frame_id,
            )
            self.mirror.drop_frames(lambda t: t.frame_id != frame_id)
        self.mark_dirty()

    def mark_dirty(self) -> None:
        """Note that the page may have changed; the refresher rebuilds the view soon."""
        self._dirty.set()

    def title_changed(self) -> None:
        """The target's title or URL changed."""
        new_title = (self.view.title if self.view is not None else "") or self.page.title or self.page.url or "New tab"
        if new_title != self.window.title:
            self.window.title = new_title
            self._on_change()
        self.mark_dirty()

    async def run_refresher(self) -> None:
        """Rebuild the view whenever the page changed, at most every 50 ms, until the tab closes."""
        while not self.closed:
            await self._dirty.wait()
            if self.closed:
                return
            await self.refresh()
            await anyio.sleep(_REFRESH_MIN_INTERVAL)

    async def refresh(self) -> None:
        """Rebuild the view now (if anything changed since the last build)."""
        async with self._snapshot_lock:
            if not self._dirty.is_set():
                return
            self._dirty = anyio.Event()
            try:
                with anyio.fail_after(self.timeouts.snapshot):
                    view = await self._build_view()
            except (CDPError, TimeoutError) as exc:
                logger.debug("snapshot of %s failed: %s", self.id, exc)
                if not self.closed and not self.page.session.closed and not isinstance(exc, TimeoutError):
                    # A navigation tore the document down under us; the next event retries.
                    return
                return
            self._apply(view)

    async def _build_view(self) -> View:
        session = self.page.session
        tree = await session.send("Page.getFrameTree")
        frames: list[tuple[str, list[dict[str, Any]]]] = []
        pending = [tree["frameTree"]]
        while pending:
            node = pending.pop(0)
            frame = node["frame"]
            try:
                reply = await session.send("Accessibility.getFullAXTree", {"frameId": frame["id"]})
            except CDPError:
                continue
            frames.append((f"{self._doc_seq}:{frame.get('loaderId', frame['id'])}", reply.get("nodes", [])))
            pending.extend(node.get("childFrames", ()))
        for frame_session in list(self.page.frame_sessions.values()):
            try:
                reply = await frame_session.send("Accessibility.getFullAXTree")
            except CDPError:
                continue
            frames.append((f"oopif:{frame_session.session_id}", reply.get("nodes", [])))
        secrets = await self._secret_backend_ids(session)
        return build_view(frames, self.ids, secrets)

    @staticmethod
    async def _secret_backend_ids(session: CDPSession) -> list[int]:
        try:
            doc = await session.send("DOM.getDocument", {"depth": 0})
            found = await session.send(
                "DOM.querySelectorAll", {"nodeId": doc["root"]["nodeId"], "selector": SECRET_SELECTOR}
            )
            ids: list[int] = []
            for node_id in found.get("nodeIds", ()):
                described = await session.send("DOM.describeNode", {"nodeId": node_id})
                ids.append(int(described["node"]["backendNodeId"]))
            return ids
        except CDPError:
            return []

    def _apply(self, view: View) -> None:
        if view.title and view.title != self.window.title:
            self.window.title = view.title
            self._on_change()
        summary = _summary_for_tab(self.window.title, self.page.url, view, len(self.mirror.tools), self.loading)
        self.view = view
        # Like a browser's address bar: the agent always knows where the tab is.
        blocks = [{"type": "fields", "id": "address", "items": [{"label": "Address", "value": self.page.url}]},
                  *view.blocks]
        if summary != self.window.summary or blocks != self.window.blocks:
            self.window.summary = summary
            self.window.blocks = blocks
            self.window.version += 1
            self._on_change()

    def close(self) -> None:
        """The target went away: end the refresher and every call in flight."""
        self.closed = True
        self.gone.set()
        self._dirty.set()
        self.mirror.interrupt_all("The tab closed while the tool was running.")
