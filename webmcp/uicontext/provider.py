"""The UI-context extension (UI context 0.2.0, docs/protocols.md#uic) as MCP resources.

`UIContext` is the `extra_resources` provider of `build_server`:

    ui://current        what the user has open and points at (`current`, UI context §4.1)
    ui://locate/{id}    where an element is on screen (`locate`, §4.2), a resource template
    ui://descriptor     the browser's name, bundle id and version, and the operations (§8)

The extension is declared as `EXTENSION_ID: {"protocol": "0.2.0"}` in
`capabilities.extensions` (2026-07-28 clients) and in `experimental` (handshake clients):
see `declare`.

Ids: a tab is named by its window id from `app://windows` (`tab-3`), a browser window
`win-<n>`, the app `app`; documents and elements carry a MAC (`webmcp.uicontext_ids`), so
`locate` refuses an id this run never issued without keeping a table of issued ids.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from cdp_bridge.errors import CDPError
from cdp_bridge.reads import document_key, window_bounds
from webmcp.desktop.registry import Desktop
from webmcp.desktop.secret_values import current_secrets
from webmcp.desktop.tab import Tab
from webmcp.uicontext.ids import IdMinter, doc_digest, tab_number
from webmcp.uicontext.locate import (
    Bounds,
    Location,
    Pointing,
    WindowInfo,
    browser_brands,
    collect_pointing,
    locate_node,
    locate_viewport,
    window_for_target,
)
from webmcp.uicontext.tree import TabFacts, assemble
from webmcp.view.masking import SECRET_SELECTOR, mask_secrets

__all__ = ["EXTENSION_ID", "PROTOCOL", "UIContext", "declare"]

PROTOCOL = "0.2.0"
EXTENSION_ID = "io.github.webmcp-bridge/ui-context"
CURRENT_URI = "ui://current"
DESCRIPTOR_URI = "ui://descriptor"
LOCATE_TEMPLATE = "ui://locate/{id}"
_LOCATE_PREFIX = "ui://locate/"
RESOURCE_NOT_FOUND = -32002
_BUNDLE_IDS = {
    "Chromium": "org.chromium.Chromium",
    "Google Chrome": "com.google.Chrome",
    "Microsoft Edge": "com.microsoft.edgemac",
    "Brave": "com.brave.Browser",
    "Opera": "com.operasoftware.Opera",
}
_WINDOW = re.compile(r"win-(\d+)")


def declare(server: Server[Any]) -> dict[str, dict[str, Any]]:
    """Declare the extension on `server` (2026 clients); returns `experimental` for handshake clients."""
    server.extensions[EXTENSION_ID] = {"protocol": PROTOCOL}
    return {EXTENSION_ID: {"protocol": PROTOCOL}}


class UIContext:
    """`current`, `locate` and the descriptor over one `Desktop`, for one run."""

    def __init__(self, desktop: Desktop, *, secret: bytes | None = None, tab_budget: float = 2.0) -> None:
        self.desktop = desktop
        self.tab_budget = tab_budget
        """How long one tab's page may take to answer `current` before it is listed without its document."""
        self.instance = secrets.token_urlsafe(12)
        self._ids = IdMinter(secret)
        self._seen_tabs: set[str] = set()
        self._seen_windows: set[int] = set()
        self._app_name = ""
        self._version: dict[str, Any] | None = None
        desktop.on_change(self._note_tabs)

    # --- the extra_resources protocol of build_server -------------------------------

    def resources(self) -> list[types.Resource]:
        """`ui://current` and `ui://descriptor`."""
        return [
            types.Resource(
                name="ui-current",
                title="What the user has open and points at",
                uri=CURRENT_URI,
                mime_type="application/json",
                description="UI context 0.2.0 `current`: windows, tabs, the shown documents with "
                "the focus path, the selection and the hovered element.",
            ),
            types.Resource(
                name="ui-descriptor",
                title="UI context descriptor",
                uri=DESCRIPTOR_URI,
                mime_type="application/json",
                description="The browser's name, bundle id and version, and the operations offered.",
            ),
        ]

    def templates(self) -> list[types.ResourceTemplate]:
        """`ui://locate/{id}`."""
        return [
            types.ResourceTemplate(
                name="ui-locate",
                title="Where an element is on screen",
                uri_template=LOCATE_TEMPLATE,
                mime_type="application/json",
                description="UI context 0.2.0 `locate`: {state, bounds?} for an id from ui://current "
                "(or a tab's window id from app://windows); screen coordinates in CSS px.",
            )
        ]

    async def read(self, uri: str) -> str | None:
        """The JSON text of a `ui://` resource, or None when `uri` is not one of ours.

        Raises:
            MCPError: `locate` of an id this run never issued (resource not found).
        """
        if uri == CURRENT_URI:
            answer = await self.current()
        elif uri == DESCRIPTOR_URI:
            answer = await self.descriptor()
        elif uri.startswith(_LOCATE_PREFIX):
            answer = await self.locate(uri[len(_LOCATE_PREFIX) :])
        else:
            return None
        return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))

    # --- operations ---------------------------------------------------------------

    async def descriptor(self) -> dict[str, Any]:
        """`{protocol, name, bundleId, version, operations}` (UI context §8 (docs/protocols.md#uic-8))."""
        version = await self._browser_version()
        tab = next(iter(self.desktop.tabs.values()), None)
        if not self._app_name and tab is not None and tab.dialog is None:
            try:
                brands = await browser_brands(tab.page.session, tab.page.target_id, self.desktop.timeouts.command)
            except CDPError:
                brands = []  # its tab is navigating or gone: the name comes from the user agent
            self._app_name = _brand_name(brands) if brands else ""
        name = self._app_name or _name_from_product(str(version.get("userAgent", "")))
        return {
            "protocol": PROTOCOL,
            "name": name,
            "bundleId": _BUNDLE_IDS.get(name, "org.chromium.Chromium"),
            "version": str(version.get("product", "")).partition("/")[2] or "unknown",
            "operations": ["current", "locate"],
        }

    async def current(self) -> dict[str, Any]:
        """`{protocol, instance, root}` (UI context §4.1 (docs/protocols.md#uic-4.1)), read from the browser now."""
        tabs = list(self.desktop.tabs.values())
        self._note_tabs()
        facts: list[TabFacts | None] = [None] * len(tabs)
        timeouts = self.desktop.timeouts
        with anyio.fail_after(timeouts.snapshot):
            async with anyio.create_task_group() as tg:
                for i, tab in enumerate(tabs):
                    tg.start_soon(self._read_tab, tab, i, facts)
        for fact in facts:
            if fact is not None and fact.pointing is not None and fact.pointing.brands and not self._app_name:
                self._app_name = _brand_name(fact.pointing.brands)
        root = assemble(self._app_name or "Chromium", [f for f in facts if f is not None])
        # Titles and values are the pages' text: masked with every secret value known, and those
        # each tab with secret fields holds right now (read alongside its pointing).
        live = [v for f in facts if f is not None for v in f.secrets]
        return {
            "protocol": PROTOCOL,
            "instance": self.instance,
            "root": _masked(root, self.desktop.known_secrets() | set(live)),
        }

    async def _read_tab(self, tab: Tab, index: int, out: list[TabFacts | None]) -> None:
        limit = self.desktop.timeouts.command
        number = tab_number(tab.id)
        window = await window_for_target(self.desktop.connection.browser, tab.page.target_id, limit)
        if window is not None:
            self._seen_windows.add(window.window_id)
        pointing, doc, found = None, "", frozenset[str]()
        # A page under a JavaScript dialog runs no script until it is answered; a page whose
        # renderer is busy (e.g. the bridge's own AX snapshot of a huge page, seconds long)
        # is listed without its document rather than holding up the whole answer.
        # A page the origin policy keeps from agents is listed without its document.
        budget = self.tab_budget if tab.dialog is None and tab.blocked() is None else 0
        with anyio.move_on_after(budget):
            try:
                pointing, doc, found = await self._read_page(tab, limit)
            except* CDPError:
                pointing = None  # closing or navigating right now: listed, without its document
        if pointing is None or not doc:
            pointing = None
        doc_id = self._ids.document(number, doc) if number is not None and pointing is not None else None

        def element_id(backend_node_id: int) -> str:
            assert number is not None
            return self._ids.element(number, doc, backend_node_id)

        out[index] = TabFacts(tab.id, tab.window.title, window, pointing, doc_id, element_id, found)

    @staticmethod
    async def _read_page(tab: Tab, limit: float) -> tuple[Pointing, str, frozenset[str]]:
        keys: list[str] = []
        found: list[frozenset[str]] = []

        async def read_key() -> None:
            keys.append(await document_key(tab.page.session, limit))

        async def read_secrets() -> None:
            found.append(await current_secrets(tab, timeout=limit))

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_key)
            if tab.has_secret_fields():
                tg.start_soon(read_secrets)
            pointing = await collect_pointing(tab.page.session, tab.page.target_id, SECRET_SELECTOR, limit)
        return pointing, doc_digest(keys[0]), found[0] if found else frozenset()

    async def locate(self, element_id: str) -> dict[str, Any]:
        """`{state, bounds?}` for an id this run issued (UI context §4.2 (docs/protocols.md#uic-4.2)).

        Raises:
            MCPError: the id was never issued by this run (forged, from another run, or unknown).
        """
        limit = self.desktop.timeouts.command
        self._note_tabs()
        try:
            with anyio.fail_after(self.desktop.timeouts.snapshot):
                return (await self._locate(element_id, limit)).to_json()
        except CDPError:
            return Location("gone").to_json()  # the tab closed while we looked

    async def _locate(self, element_id: str, limit: float) -> Location:
        browser = self.desktop.connection.browser
        if element_id == "app":
            return await self._locate_app(limit)
        window_match = _WINDOW.fullmatch(element_id)
        if window_match is not None:
            return await self._locate_window(int(window_match.group(1)), limit)
        if tab_number(element_id) is not None:
            tab = self.desktop.tabs.get(element_id)
            if tab is None:
                if element_id in self._seen_tabs:
                    return Location("gone")
                raise _unknown(element_id)
            window = await window_for_target(browser, tab.page.target_id, limit)
            return (
                Location("gone")
                if window is None
                else await locate_viewport(tab.page.session, tab.page.target_id, window, limit)
            )
        ref = self._ids.verify(element_id)
        if ref is None:
            raise _unknown(element_id)
        tab = self.desktop.tabs.get(ref.tab_id)
        if tab is None:
            return Location("gone")
        if doc_digest(await document_key(tab.page.session, limit)) != ref.doc:
            return Location("gone")  # the tab has loaded another document since
        window = await window_for_target(browser, tab.page.target_id, limit)
        if window is None:
            return Location("gone")
        if ref.backend_node_id is None:
            return await locate_viewport(tab.page.session, tab.page.target_id, window, limit)
        return await locate_node(tab.page.session, tab.page.target_id, ref.backend_node_id, window, limit)

    async def _locate_window(self, window_id: int, limit: float) -> Location:
        if window_id not in self._seen_windows:
            raise _unknown(f"win-{window_id}")
        raw = await window_bounds(self.desktop.browser, window_id, limit)
        if raw is None:
            return Location("gone")
        window = WindowInfo.of(raw)
        return Location("hidden" if window.state == "minimized" else "visible", window.bounds)

    async def _locate_app(self, limit: float) -> Location:
        windows: list[WindowInfo] = []
        for tab in list(self.desktop.tabs.values()):
            window = await window_for_target(self.desktop.connection.browser, tab.page.target_id, limit)
            if window is not None and all(w.window_id != window.window_id for w in windows):
                windows.append(window)
        if not windows:
            return Location("hidden")
        x1, y1 = min(w.bounds.x for w in windows), min(w.bounds.y for w in windows)
        x2 = max(w.bounds.x + w.bounds.width for w in windows)
        y2 = max(w.bounds.y + w.bounds.height for w in windows)
        return Location("visible", Bounds(x1, y1, x2 - x1, y2 - y1))

    # --- bookkeeping ----------------------------------------------------------------

    def _note_tabs(self) -> None:
        # Tab ids come from app://windows too, so every tab the bridge ever published is "issued".
        self._seen_tabs.update(self.desktop.tabs)

    async def _browser_version(self) -> dict[str, Any]:
        if self._version is None:
            self._version = await self.desktop.connection.browser.send(
                "Browser.getVersion", timeout=self.desktop.timeouts.command
            )
        return self._version


def _brand_name(brands: list[str]) -> str:
    """The browser's name from `navigator.userAgentData.brands` (Chromium lists only itself)."""
    for name in ("Google Chrome", "Microsoft Edge", "Brave", "Opera"):
        if name in brands:
            return name
    return "Chromium"


def _name_from_product(user_agent: str) -> str:
    return "Microsoft Edge" if " Edg/" in user_agent else "Chromium"


def _unknown(element_id: str) -> MCPError:
    return MCPError(
        RESOURCE_NOT_FOUND,
        f"Unknown element id {element_id!r}: this run of the bridge never issued it "
        f"(ids do not survive a restart); read ui://current for fresh ids.",
    )


def _masked(element: dict[str, Any], secrets: frozenset[str] | set[str]) -> dict[str, Any]:
    """`element` and its children with `title` and `value` masked (ids, roles and states are the bridge's)."""
    if not secrets:
        return element
    out = dict(element)
    for key in ("title", "value"):
        if key in out:
            out[key] = mask_secrets(out[key], secrets)
    if "children" in out:
        out["children"] = [_masked(c, secrets) for c in out["children"]]
    return out
