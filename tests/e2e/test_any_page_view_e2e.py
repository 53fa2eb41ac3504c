"""End to end: what a window shows of pages without tools, named as a person reads them (issue 39).

The `/patterns/` widget pages (sample_site/README.md) run real widget code: an accordion, a tree,
a menu opened on hover, an autocomplete, fields labelled by nearby text, duplicates, multiple
selects, clickable divs and icon buttons, a date picker behind a read-only box, tabs. The bridge
runs as `python -m webmcp --cdp-url …` over stdio and over Streamable HTTP; what the page holds
is read back from the page (its result line, through the window) or from Playwright, never taken
from the bridge's word.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.bridge_http import http_bridge
from tests.support.mcp_harness import open_http_client, open_stdio_client
from tests.support.stage import Stage, user_navigates

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PAGES = [
    "accordion",
    "tree",
    "menu",
    "autocomplete",
    "nearby-labels",
    "duplicates",
    "multiselect",
    "clickable",
    "datepicker",
    "tabs",
]


@asynccontextmanager
async def _bridge(site: str, browser: BrowserProcess, transport: str, *paths: str) -> AsyncIterator[Stage]:
    """The bridge attached to `browser` with a tab on each of `paths`, a client over `transport`."""
    urls = [site + p for p in paths]
    command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url]
    if transport == "stdio":
        async with open_stdio_client([*command, *urls], mode="auto") as mcp:
            yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]  # no Playwright user here
        return
    async with http_bridge(browser, *urls) as (url, token), open_http_client(url, token, "auto") as mcp:
        yield Stage(site, browser, mcp, None)  # type: ignore[arg-type]


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _text(window: dict[str, Any]) -> str:
    """Every text and list line the window shows, one per line."""
    lines: list[str] = []
    for block in window["blocks"]:
        if block["type"] in ("text", "notice"):
            lines.extend(block["text"].split("\n"))
        elif block["type"] == "list":
            lines.extend(str(i) for i in block["items"])
    return "\n".join(lines)


def _fields(window: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for b in window["blocks"] if b["type"] == "fields" and b.get("id") != "address" for i in b["items"]]


def _field(window: dict[str, Any], label: str) -> dict[str, Any]:
    return next(i for i in _fields(window) if i["label"] == label)


async def _ok(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert not result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


async def _error(stage: Stage, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await stage.call(name, args)
    assert result.is_error, result.structured_content
    out: dict[str, Any] = result.structured_content
    return out


async def test_every_widget_page_reads_as_a_person_sees_it(site: str, browser: BrowserProcess, transport: str) -> None:
    async with _bridge(site, browser, transport, *(f"/patterns/{p}.html" for p in PAGES)) as stage:
        tab = {p: await stage.tab_for(f"/patterns/{p}.html") for p in PAGES}

        accordion = _text(tab["accordion"])
        assert "Section 1 (expanded)" in accordion and "Section 2 (collapsed)" in accordion
        assert "Tickets are answered within one working day." in accordion
        assert "Refunds go back" not in accordion, "a closed panel is not shown"

        assert "Billing (collapsed)" in _text(tab["tree"]) and "Refunds" not in _text(tab["tree"])
        menu = _text(tab["menu"])
        assert "File (collapsed)" in menu and "View (collapsed)" in menu and "Help" in menu
        assert "Export" not in menu, "a submenu that opens on hover is closed until then"
        assert "Profile (selected)" in _text(tab["tabs"]) and "Alerts" in _text(tab["tabs"])

        labels = [i["label"] for i in _fields(tab["nearby-labels"])]
        assert labels == [
            "Username",
            "Password",
            "Desk",
            "Shift",
            "Team",
            "Note for the lead",
            "textbox",
            "text area",
            "Stay signed in",
            "Remember this desk",
            "Floor",
            "Room",
            "textbox",
        ]
        assert "Clear" in _text(tab["nearby-labels"]), "a button beside a field stays a button"
        assert [i["label"] for i in _fields(tab["duplicates"])] == ["Phone", "Phone"]

        choices = tab["multiselect"]
        assert _field(choices, "Queues")["value"] == ["Hardware"]
        assert _field(choices, "Queues")["options"] == ["Billing", "Hardware", "Network", "Accounts", "Printing"]
        assert _field(choices, "Tags")["value"] == ["vip"]
        country = _field(choices, "Country")
        assert len(country["options"]) == 10 and country["optionCount"] == 17

        assert _field(tab["datepicker"], "Callback date")["readonly"] is True
        icons = _text(tab["clickable"])
        for guessed in (
            "reply (guessed)",
            "trash (guessed)",
            "star (guessed)",
            "Forward",
            "pin (guessed)",
            "send note (guessed)",
            "Draft to Rui trash can (guessed) Send draft (guessed)",
        ):
            assert guessed in icons, guessed
        assert not any("\ue000" <= c <= "\uf8ff" for c in icons), "an icon font's glyphs say nothing"
        assert "Open the weekly report" in icons and "Search" in icons
        for unseen in ("deferrable", "city", "adslot"):  # empty boxes: no size, or too large for an icon
            assert unseen not in icons, unseen


async def test_fields_and_buttons_are_acted_on_by_the_names_a_person_reads(
    site: str, browser: BrowserProcess, transport: str
) -> None:
    pages = ("/patterns/nearby-labels.html", "/patterns/duplicates.html", "/patterns/clickable.html")
    async with _bridge(site, browser, transport, *pages) as stage:
        signin = (await stage.tab_for(pages[0]))["id"]
        await _ok(
            stage,
            f"{signin}__fill",
            {
                "fields": [
                    {"label": "Username", "value": "ann"},
                    {"label": "Desk", "value": "4"},
                    {"label": "Team", "value": "Harbor"},
                    {"label": "Note for the lead", "value": "late"},
                    {"label": "Stay signed in", "value": True},
                    {"label": "Remember this desk", "value": True},
                    {"label": "Floor", "value": "3"},
                    {"label": "Room", "value": "301"},
                ]
            },
        )
        await _ok(stage, f"{signin}__press", {"label": "Sign in"})
        done = await stage.wait_windows(
            lambda d: any("ann at desk 4" in b.get("text", "") for w in d["windows"] for b in w["blocks"])
        )
        said = [b.get("text", "") for w in done["windows"] for b in w["blocks"]]
        assert any("team Harbor, note late, staying, desk remembered, floor 3 room 301" in t for t in said), said

        inbox = (await stage.tab_for(pages[1]))["id"]
        refused = await _error(stage, f"{inbox}__fill", {"fields": [{"label": "Phone", "value": "555"}]})
        listed = refused["fields"][0]["candidates"]
        assert [c["label"] for c in listed] == ["Phone #1", "Phone #2"]
        await _ok(stage, f"{inbox}__fill", {"fields": [{"label": listed[1]["label"], "value": "555"}]})
        window = await stage.tab_for(pages[1])
        assert [i["value"] for i in _fields(window)] == ["", "555"], "the second Phone, as the page holds it"
        await _ok(stage, f"{inbox}__press", {"label": "Yes"})
        await stage.wait_windows(lambda d: "Pressed: Yes" in _text(_tab(d, inbox)))
        await _ok(stage, f"{inbox}__press", {"label": "yes"})
        await stage.wait_windows(lambda d: "Pressed: yes" in _text(_tab(d, inbox)))
        await _ok(stage, f"{inbox}__press", {"label": "Reply #2"})
        await stage.wait_windows(lambda d: "Replying to Bob" in _text(_tab(d, inbox)))

        mail = (await stage.tab_for(pages[2]))["id"]
        await _ok(stage, f"{mail}__press", {"label": "trash"})
        await stage.wait_windows(lambda d: "Deleted" in _text(_tab(d, mail)))


def _tab(doc: dict[str, Any], window_id: str) -> dict[str, Any]:
    return next(w for w in doc["windows"] if w["id"] == window_id)


async def test_what_a_person_opens_shows_in_the_window_with_its_state(stage: Stage) -> None:
    """The user hovers the menu, opens a tree item and types into the autocomplete (Playwright);
    each read of the window shows what opened, marked."""
    paths = ("/patterns/menu.html", "/patterns/tree.html", "/patterns/autocomplete.html")
    context = stage.user.contexts[0]
    for path in paths:
        await user_navigates(await context.new_page(), stage.site + path)
        await stage.tab_for(path)
    hovered = await stage.user_page(paths[0])
    await hovered.hover("#m-file")
    doc = await stage.wait_windows(lambda d: "File (expanded)" in _text(_tab_at(stage, d, paths[0])))
    assert "New ticket" in _text(_tab_at(stage, doc, paths[0]))
    tree = await stage.user_page(paths[1])
    await tree.click("text=Billing")
    doc = await stage.wait_windows(lambda d: "Billing (expanded)" in _text(_tab_at(stage, d, paths[1])))
    assert "Refunds" in _text(_tab_at(stage, doc, paths[1]))
    typing = await stage.user_page(paths[2])
    await typing.type("#city", "Pa")
    doc = await stage.wait_windows(
        lambda d: any(b.get("items") == ["Paris", "Parma"] for b in _tab_at(stage, d, paths[2])["blocks"])
    )
    assert _field(_tab_at(stage, doc, paths[2]), "City")["value"] == "Pa"


def _tab_at(stage: Stage, doc: dict[str, Any], path: str) -> dict[str, Any]:
    for window in doc["windows"]:
        for block in window["blocks"]:
            if block["type"] == "fields" and block.get("id") == "address":
                if str(block["items"][0]["value"]).startswith(stage.site + path):
                    return window
    return {"blocks": []}


async def test_an_icon_button_the_page_adds_later_is_named_too(stage: Stage) -> None:
    """A nameless icon button the page adds after it loaded is named as one there from the start is,
    whether the bridge reads the page again whole or splices the changed nodes in."""
    path = "/patterns/clickable.html"
    page = await stage.user.contexts[0].new_page()
    await user_navigates(page, stage.site + path)
    await stage.wait_windows(lambda d: "trash (guessed)" in _text(_tab_at(stage, d, path)))
    await page.evaluate("""() => {
      const b = document.createElement('button');
      b.className = 'icon archive';
      b.addEventListener('click', () => { document.getElementById('result').textContent = 'Archived'; });
      document.querySelector('.mail').append(b);
    }""")
    doc = await stage.wait_windows(lambda d: "archive (guessed)" in _text(_tab_at(stage, d, path)))
    assert "Forward archive (guessed)" in _text(_tab_at(stage, doc, path))
