"""Browser actions on a tab: focus, navigate, back, forward, reload, close, read, screenshot.

A navigation or close may make the page ask first (beforeunload), and a page may alert
while it loads: those actions return the dialog in `openedWindowIds` rather than wait on
it, because the page now waits for the agent.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio

from cdp_bridge.errors import CDPError
from webmcp.desktop.registry import Bridge, safe_send
from webmcp.desktop.tab import Tab
from webmcp.errors import ToolError

__all__ = ["browser_action", "check_url", "open_tab"]

_ALLOWED_SCHEMES = ("http://", "https://", "file://", "about:", "data:")


async def open_tab(bridge: Bridge, url: str) -> dict[str, Any]:
    """The app-level action: a new tab at `url`, answered in openedWindowIds."""
    check_url(url)
    try:
        page = await bridge.targets.create_page(url, bridge.timeouts.navigation)
    except CDPError as exc:
        raise ToolError("browser_error", f"The browser could not open a tab: {exc}") from exc
    tab = bridge.tab_for_target(page.target_id) if page is not None else None
    if tab is None:
        raise ToolError("action_timeout", "The new tab did not come up in time.")
    return {"message": f"Opened {tab.id} at {url}.", "openedWindowIds": [tab.id]}


def check_url(url: str) -> None:
    """Refuse URLs the bridge does not open (javascript:, chrome:, …) with validation_failed."""
    if not url.startswith(_ALLOWED_SCHEMES):
        raise ToolError(
            "validation_failed",
            f"Not a URL the bridge opens: {url!r}",
            fields=[{"field": "url", "error": "Must start with http://, https://, file://, about: or data:"}],
        )


async def browser_action(bridge: Bridge, tab: Tab, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """Carry out one of the tab's browser actions (the caller holds the tab's lock)."""
    session = tab.page.session
    timeouts = bridge.timeouts
    try:
        if action == "focus":
            await bridge.connection.browser.send("Target.activateTarget", {"targetId": tab.page.target_id})
            await safe_send(session, "Page.bringToFront", {}, timeouts.command)
            return {"message": f"{tab.id} is in front."}
        if action == "close":
            return await _close_tab(bridge, tab)
        if action == "screenshot":
            shot = await session.send("Page.captureScreenshot", {"format": "png"}, timeout=timeouts.navigation)
            return {
                "message": f"Screenshot of {tab.id}.",
                "result": {"mimeType": "image/png", "data": shot["data"]},
                "_image": base64.b64decode(shot["data"]),
            }
        if action == "read_content":
            return _read_content(tab, args)
        return await _navigation(bridge, tab, action, args)
    except CDPError as exc:
        raise ToolError("browser_error", f"The browser refused {action} on {tab.id}: {exc}", detail=str(exc)) from exc


def _dialog_answer(tab: Tab, what: str) -> dict[str, Any] | None:
    dialog = tab.dialog
    if dialog is None:
        return None
    return {
        "message": f"{what}: the page opened a {dialog.kind} dialog ({dialog.window.id}) and waits for it; "
        "answer it with its accept or dismiss tool.",
        "openedWindowIds": [dialog.window.id],
    }


async def _close_tab(bridge: Bridge, tab: Tab) -> dict[str, Any]:
    # Page.close runs the page's beforeunload handler, as a user's close would. Chromium may
    # also answer a close with success yet keep a tab that is mid-navigation: only the
    # target's destruction counts, with Target.closeTarget as the second try.
    await safe_send(tab.page.session, "Page.close", {}, bridge.timeouts.command)
    finished, _ = await bridge.unless_dialog(tab, tab.gone.wait, 2)
    if not finished and (answer := _dialog_answer(tab, f"{tab.id} did not close yet")) is not None:
        return answer
    if not tab.gone.is_set():
        await bridge.connection.browser.send("Target.closeTarget", {"targetId": tab.page.target_id})
        with anyio.move_on_after(bridge.timeouts.navigation):
            await tab.gone.wait()
    if not tab.gone.is_set():
        raise ToolError("browser_error", f"{tab.id} did not close; the page may be blocking it.")
    return {"message": f"Closed {tab.id}."}


class _LoadWatch:
    """Main-frame commits and load events of one tab, in the order the browser sent them.

    A navigation's own load is the first load after *its* commit: a load event still due
    from the page being left (say, a slow iframe) must not count as the new page's.
    """

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.changed = anyio.Event()

    def _add(self, kind: str, loader_id: str = "") -> None:
        self.events.append((kind, loader_id))
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def committed(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self._add("commit", str(frame.get("loaderId", "")))

    def loaded(self, _params: dict[str, Any]) -> None:
        self._add("load")

    def _done(self, loader_id: str | None) -> bool:
        seen_commit = False
        for kind, loader in self.events:
            if kind == "commit" and (loader_id is None or loader == loader_id):
                seen_commit = True
            elif kind == "load" and seen_commit:
                return True
        return False

    async def wait(self, loader_id: str | None) -> None:
        """Until the load that follows the commit of `loader_id` (any commit when None)."""
        while not self._done(loader_id):
            await self.changed.wait()


async def _navigation(bridge: Bridge, tab: Tab, action: str, args: dict[str, Any]) -> dict[str, Any]:
    session = tab.page.session
    timeouts = bridge.timeouts
    watch = _LoadWatch()
    unsubscribe = [session.on("Page.frameNavigated", watch.committed), session.on("Page.loadEventFired", watch.loaded)]
    try:

        async def start() -> dict[str, Any] | None:
            if action == "navigate":
                url = str(args["url"])
                check_url(url)
                reply = await session.send("Page.navigate", {"url": url}, timeout=timeouts.navigation)
                if reply.get("errorText"):
                    raise ToolError(
                        "browser_error",
                        f"Could not load {url}: {reply['errorText']}",
                        detail=reply["errorText"],
                    )
                if not reply.get("loaderId"):
                    return {"message": f"{tab.id} moved to {url} within the page."}
                return {"loaderId": str(reply["loaderId"])}
            if action == "reload":
                await session.send("Page.reload", {}, timeout=timeouts.navigation)
                return {}
            history = await session.send("Page.getNavigationHistory")
            index = history["currentIndex"] + (-1 if action == "back" else 1)
            entries = history["entries"]
            if not 0 <= index < len(entries):
                raise ToolError(
                    "action_not_available",
                    f"{tab.id} has no {'previous' if action == 'back' else 'next'} page in its history.",
                )
            await session.send(
                "Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]}, timeout=timeouts.navigation
            )
            return {}

        finished, started = await bridge.unless_dialog(tab, start, timeouts.navigation)
        if not finished:
            return _dialog_answer(tab, f"{action} waits") or {
                "message": f"{tab.id} is still loading after {timeouts.navigation:g} s."
            }
        if "message" in started:
            return dict(started)
        finished, _ = await bridge.unless_dialog(tab, lambda: watch.wait(started.get("loaderId")), timeouts.navigation)
        if not finished:
            return _dialog_answer(tab, f"{action} is under way") or {
                "message": f"{tab.id} is still loading after {timeouts.navigation:g} s."
            }
    finally:
        for off in unsubscribe:
            off()
    tab.mark_dirty()
    await tab.refresh()
    return {"message": f"{tab.id} now shows {tab.page.url or 'the page'} (version {tab.window.version})."}


_READ_ROWS = 100


def _read_content(tab: Tab, args: dict[str, Any]) -> dict[str, Any]:
    """The window's full content (seed 001 §9): blocks in pages, or one table's rows / list's items.

    In block pages a table or list longer than 100 rows is cut (`offset`/`total`) so a
    page stays readable; its rows come in pages with `blockId`. Blocks of an open in-page
    modal are readable by `blockId` too. Values are already masked in the view.
    """
    offset = max(0, int(args.get("offset", 0)))
    limit = min(1000, max(1, int(args.get("limit", 100))))
    view = tab.view
    full = view.full_blocks if view is not None else []
    block_id = args.get("blockId")
    if block_id is not None:
        modal_blocks = [b for m in view.modals for b in m.full_blocks] if view is not None else []
        block = next((b for b in [*full, *modal_blocks] if b["id"] == block_id), None)
        if block is None or block["type"] not in ("table", "list"):
            raise ToolError(
                "validation_failed",
                f"{block_id!r} is not a table or list block of {tab.id}; read app://windows for the current block ids.",
                fields=[{"field": "blockId", "error": "No such table or list block"}],
            )
        key = "rows" if block["type"] == "table" else "items"
        part = {k: v for k, v in block.items() if k != key}
        part[key] = block[key][offset : offset + limit]
        part.update(offset=offset, total=len(block[key]), version=tab.window.version)
        end = offset + len(part[key])
        return {
            "message": f"{key.capitalize()} {offset}\u2013{end} of {len(block[key])} of {block_id}.",
            "result": part,
        }
    page = [_cut_rows(b) for b in full[offset : offset + limit]]
    return {
        "message": f"Blocks {offset}\u2013{offset + len(page)} of {len(full)}.",
        "result": {"blocks": page, "offset": offset, "total": len(full), "version": tab.window.version},
    }


def _cut_rows(block: dict[str, Any]) -> dict[str, Any]:
    key = {"table": "rows", "list": "items"}.get(block["type"])
    if key is None or len(block[key]) <= _READ_ROWS:
        return block
    return {**block, key: block[key][:_READ_ROWS], "offset": 0, "total": len(block[key])}
