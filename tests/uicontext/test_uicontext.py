"""The UI-context extension (UI context 0.2.0): `ui://current`, `ui://locate/{id}`, `ui://descriptor`.

End to end against real Chromium with Playwright as the user; the id minting and the
tree assembly are also tested as pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import anyio
import jsonschema
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.stage import WAIT, Stage, open_stage, user_navigates
from webmcp.uicontext.ids import IdMinter, doc_digest
from webmcp.uicontext.locate import FOCUS, HOVER, SECRET, Pointed, Pointing
from webmcp.uicontext.provider import EXTENSION_ID
from webmcp.uicontext.tree import TabFacts, assemble, pascal_role

SCHEMA = json.loads(resources.files("webmcp").joinpath("schema/current-0.2.0.json").read_text())


@pytest.fixture
def mode() -> str:
    """Most tests speak 2026-07-28 only; the declaration test covers both generations."""
    return "auto"


# --- helpers -------------------------------------------------------------------------


async def current(stage: Stage) -> dict[str, Any]:
    answer = json.loads((await stage.client.read_resource("ui://current")).contents[0].text)
    jsonschema.validate(answer, SCHEMA)
    _check_rules(answer)
    return answer


async def wait_current(stage: Stage, predicate: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """Re-read `ui://current` after each change notification until `predicate(answer)` holds.

    A tab whose renderer is busy (the bridge snapshotting a big page) is listed without
    its document for a moment; its content follows once the page answers again.
    """
    with anyio.fail_after(WAIT):
        while True:
            seen = stage.mcp.notifications.count("resource_updated")
            answer = await current(stage)
            if predicate(answer):
                return answer
            with anyio.move_on_after(0.5):
                await stage.mcp.notifications.wait_for("resource_updated", after=seen, timeout=WAIT)


async def locate(stage: Stage, element_id: str) -> dict[str, Any]:
    return json.loads((await stage.client.read_resource(f"ui://locate/{element_id}")).contents[0].text)


def walk(element: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield element
    for child in element.get("children", ()):
        yield from walk(child)


def find(answer: dict[str, Any], **match: Any) -> dict[str, Any] | None:
    return next((e for e in walk(answer["root"]) if all(e.get(k) == v for k, v in match.items())), None)


def with_state(answer: dict[str, Any], state: str) -> list[dict[str, Any]]:
    return [e for e in walk(answer["root"]) if state in e.get("states", ())]


def _check_rules(answer: dict[str, Any]) -> None:
    """Seed 000 §5 rules a schema cannot state: unique ids, one hovered, one focus chain."""
    ids = [e["id"] for e in walk(answer["root"])]
    assert len(ids) == len(set(ids))
    assert len(with_state(answer, "hovered")) <= 1
    focused = with_state(answer, "focused")
    for element in focused:
        below = [c for c in element.get("children", ()) if "focused" in c.get("states", ())]
        assert len(below) <= 1, "the focus path is a single chain"
    if focused:
        assert focused[0]["role"] == "Window"


def focus_end(answer: dict[str, Any]) -> dict[str, Any]:
    return with_state(answer, "focused")[-1]


async def shown_page(stage: Stage, path: str) -> Any:
    """The start tab, sent to `path` by the user, once the bridge has it."""
    page = await stage.user_page("/")
    if page.url != stage.site + path:
        # (Sent to the address it shows, the page would reload: waiting for "load" on that URL is
        # met by the document being left, and the test would meet the reload half done.)
        await user_navigates(page, stage.site + path)
    await page.bring_to_front()
    await stage.tab_for(path.split("?")[0])
    return page


# --- end to end ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_extension_is_declared_to_both_client_generations(stage: Stage, mode: str) -> None:
    caps = stage.client.server_capabilities
    declared = caps.experimental if mode == "legacy" else caps.extensions
    assert declared is not None and declared[EXTENSION_ID] == {"protocol": "0.2.0"}
    uris = {str(r.uri) for r in (await stage.client.list_resources()).resources}
    assert {"ui://current", "ui://descriptor"} <= uris
    templates = (await stage.client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["ui://locate/{id}"]
    descriptor = json.loads((await stage.client.read_resource("ui://descriptor")).contents[0].text)
    assert descriptor == {
        "protocol": "0.2.0",
        "name": "Chromium",
        "bundleId": "org.chromium.Chromium",
        "version": descriptor["version"],
        "operations": ["current", "locate"],
    }
    assert descriptor["version"][:1].isdigit()


@pytest.mark.anyio
@pytest.mark.e2e
async def test_current_matches_the_schema_on_every_kind_of_page(stage: Stage) -> None:
    page = await shown_page(stage, "/")
    answer = await current(stage)
    assert set(answer) == {"protocol", "instance", "root"} and answer["protocol"] == "0.2.0"
    assert answer["root"]["role"] == "Application" and answer["root"]["title"] == "Chromium"
    assert find(answer, role="Heading", title="Harbor Help Desk") is not None
    assert find(answer, role="Navigation", title="Main") is not None
    for path in ("/login.html", "/big.html?rows=3000", "/modal.html"):
        await user_navigates(page, stage.site + path)
        await stage.tab_for(path.split("?")[0])
        await current(stage)
    await page.click("#open-editor")
    await page.focus("#queue-name")
    answer = await current(stage)
    end = focus_end(answer)
    assert end["role"] == "TextField" and end["title"] == "Queue name" and end["value"] == "Tier 1"
    assert any(e["role"] == "Dialog" and "focused" in e.get("states", ()) for e in walk(answer["root"]))


@pytest.mark.anyio
@pytest.mark.e2e
async def test_focus_path_runs_from_the_window_to_the_field_the_user_focused(stage: Stage) -> None:
    page = await shown_page(stage, "/login.html")
    await page.fill("#password", "harbor")
    await page.focus("#password")
    answer = await current(stage)
    roles = [e["role"] for e in with_state(answer, "focused")]
    assert roles[:3] == ["Window", "Tab", "Document"] and "Form" in roles
    end = focus_end(answer)
    assert (end["role"], end["title"]) == ("TextField", "Password")
    assert end["value"] == "••••••", "a password never leaves the bridge"
    assert "harbor" not in json.dumps(answer)


@pytest.mark.anyio
@pytest.mark.e2e
async def test_hovered_is_the_deepest_element_under_the_pointer(stage: Stage) -> None:
    page = await shown_page(stage, "/login.html")
    await page.hover("button[type=submit]")
    hovered = with_state(await current(stage), "hovered")
    assert [(e["role"], e["title"]) for e in hovered] == [("Button", "Sign in")]
    await page.hover("h1")
    hovered = with_state(await current(stage), "hovered")
    assert [(e["role"], e["title"]) for e in hovered] == [("Heading", "Agent sign-in")]


@pytest.mark.anyio
@pytest.mark.e2e
async def test_selected_marks_the_active_tab_and_the_chosen_option(stage: Stage) -> None:
    page = await shown_page(stage, "/")
    answer = await current(stage)
    assert find(answer, role="Option", title="normal")["states"] == ["selected"]
    await page.select_option("#priority", "high")
    answer = await current(stage)
    assert "selected" in find(answer, role="Option", title="high")["states"]
    assert find(answer, role="Option", title="normal") is None
    tab = find(answer, role="Tab", title=await page.title())
    assert "selected" in tab["states"] and tab["children"][0]["role"] == "Document"
    await page.evaluate("getSelection().selectAllChildren(document.querySelector('main p.lead'))")
    selected = [e for e in with_state(await current(stage), "selected") if e["role"] == "Paragraph"]
    assert selected and selected[0]["title"].startswith("Welcome back")


@pytest.mark.anyio
@pytest.mark.e2e
async def test_tab_ids_are_the_window_ids_of_app_windows(stage: Stage) -> None:
    await shown_page(stage, "/login.html")
    windows = await stage.windows()
    tab_ids = {e["id"] for e in walk((await current(stage))["root"]) if e["role"] == "Tab"}
    assert tab_ids == {w["id"] for w in windows["windows"] if not w["modal"]}


@pytest.mark.anyio
@pytest.mark.e2e
async def test_locate_bounds_land_on_the_element_when_the_user_clicks_there(stage: Stage) -> None:
    page = await shown_page(stage, "/login.html")
    await page.evaluate(
        "window.__hits = []; document.addEventListener('click', "
        "(e) => { e.preventDefault(); __hits.push(e.target.id || e.target.textContent); }, true)"
    )
    for selector, expected in (
        ("#remember", "remember"),
        ("button[type=submit]", "Sign in"),
        ("#otp", "otp"),
    ):
        await page.focus(selector)
        answer = await current(stage)
        target = focus_end(answer)
        # The tab that holds the focus path; its viewport maps screen to page coordinates.
        tab = next(e for e in with_state(answer, "focused") if e["role"] == "Tab")
        viewport = await locate(stage, tab["id"])
        assert viewport["state"] == "visible"
        assert await locate(stage, tab["children"][0]["id"]) == viewport
        where = await locate(stage, target["id"])
        assert where["state"] == "visible"
        b, v = where["bounds"], viewport["bounds"]
        x, y = b["x"] + b["width"] / 2 - v["x"], b["y"] + b["height"] / 2 - v["y"]
        await page.evaluate("document.activeElement.blur()")
        await page.mouse.click(x, y)
        assert (await page.evaluate("__hits.at(-1)")) == expected


@pytest.mark.anyio
@pytest.mark.e2e
async def test_scrolled_out_element_is_offscreen_and_a_removed_one_is_gone(stage: Stage) -> None:
    page = await shown_page(stage, "/big.html?rows=300")
    await page.hover("#orders tbody tr:first-child td:first-child")
    cell = with_state(await wait_current(stage, lambda a: with_state(a, "hovered")), "hovered")[0]
    assert cell["title"] == "10001"
    assert (await locate(stage, cell["id"]))["state"] == "visible"
    await page.mouse.move(0, 0)
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    moved = await locate(stage, cell["id"])
    assert moved["state"] == "offscreen" and moved["bounds"]["y"] < 0
    await page.evaluate("document.querySelector('#orders tbody tr').style.display = 'none'")
    assert (await locate(stage, cell["id"])) == {"state": "hidden"}
    await page.evaluate("document.querySelector('#orders tbody tr').remove()")
    assert await locate(stage, cell["id"]) == {"state": "gone"}
    heading = find(await current(stage), role="Heading")
    await user_navigates(page, stage.site + "/login.html")
    await stage.tab_for("/login.html")
    assert await locate(stage, heading["id"]) == {"state": "gone"}, "a new document retires the old ids"


@pytest.mark.anyio
@pytest.mark.e2e
async def test_ids_never_issued_forged_or_from_an_earlier_run_are_refused(
    stage: Stage, site: str, browser: Any
) -> None:
    await shown_page(stage, "/login.html")
    heading = find(await current(stage), role="Heading", title="Agent sign-in")
    number, doc, node, mac = heading["id"].split("-")[1:]
    forged = [
        f"e-{number}-{doc}-{int(node) + 1}-{mac}",
        f"e-{number}-{doc}-{node}-{'a' * 10}",
        f"e-0{number}-{doc}-{node}-{mac}",
        "tab-999",
        "win-1",
        "nonsense",
        "e-1-2-3-4",
    ]
    for bad in forged:
        with pytest.raises(MCPError):
            await locate(stage, bad)
    async with open_stage(site, browser, "auto") as second:
        again = find(await current(second), role="Heading", title="Agent sign-in")
        assert again["id"] != heading["id"]
        with pytest.raises(MCPError):
            await locate(second, heading["id"])
        assert (await locate(second, again["id"]))["state"] == "visible"


# --- pure parts ----------------------------------------------------------------------


def test_minted_ids_verify_in_their_run_only() -> None:
    minter, other = IdMinter(b"k" * 32), IdMinter()
    doc = doc_digest("LOADER1")
    element = minter.element(3, doc, 57)
    assert element.startswith(f"e-3-{doc}-57-") and element.replace("-", "").isalnum()
    ref = minter.verify(element)
    assert ref is not None and (ref.tab_id, ref.doc, ref.backend_node_id) == ("tab-3", doc, 57)
    assert IdMinter(b"k" * 32).verify(element) == ref, "same secret, same answer: nothing is stored per id"
    assert other.verify(element) is None
    assert minter.verify(element[:-1] + ("a" if element[-1] != "a" else "b")) is None
    assert minter.verify(element.replace("-57-", "-58-")) is None
    document = minter.document(3, doc)
    assert minter.verify(document) == type(ref)(3, doc, None)
    assert doc_digest("LOADER2") != doc and len(doc) == 8


def test_roles_are_pascal_case_and_never_collide_with_the_protocols_own() -> None:
    assert [pascal_role(r) for r in ("textbox", "button", "heading", "columnheader", "tab", "document")] == [
        "TextField",
        "Button",
        "Heading",
        "ColumnHeader",
        "TabItem",
        "DocumentRegion",
    ]


def _ax(role: str, name: str = "", **extra: Any) -> dict[str, Any]:
    return {"role": {"value": role}, "name": {"value": name}, **extra}


def test_assemble_marks_focus_path_hover_and_masks_secrets() -> None:
    elements = [
        Pointed(-1, 0, 10, _ax("main")),
        Pointed(0, 0, 11, _ax("generic")),
        Pointed(1, FOCUS | SECRET, 12, _ax("textbox", "PIN", value={"value": "1234"})),
        Pointed(0, HOVER, 13, _ax("button", "Go")),
    ]
    pointing = Pointing(True, True, 800, 600, "Bank", "http://x/", ["Chromium"], elements)
    facts = [
        TabFacts("tab-1", "Bank", None, pointing, "d-1-x", lambda n: f"e-{n}"),
        TabFacts("tab-2", "Other", None, None, None, lambda n: f"e-{n}"),
    ]
    root = assemble("Chromium", facts)
    answer = {"protocol": "0.2.0", "instance": "i", "root": root}
    jsonschema.validate(answer, SCHEMA)
    _check_rules(answer)
    main = find(answer, role="Main")
    assert [c["id"] for c in main["children"]] == ["e-12", "e-13"], "generic ancestors are skipped"
    assert find(answer, id="e-12") == {
        "id": "e-12",
        "role": "TextField",
        "title": "PIN",
        "value": "••••••",
        "states": ["focused"],
    }
    assert [e["id"] for e in with_state(answer, "focused")] == ["win-0", "tab-1", "d-1-x", "e-10", "e-12"]
    assert [e["id"] for e in with_state(answer, "hovered")] == ["e-13"]
    assert find(answer, id="tab-2") == {"id": "tab-2", "role": "Tab", "title": "Other"}


def test_a_title_is_the_text_as_shown_where_the_accessible_name_only_spaces_it_out() -> None:
    # Chromium names "harbor<wbr>.example<wbr>/ferries" "harbor .example /ferries"; the page shows no spaces.
    elements = [
        Pointed(
            -1, 0, 10, _ax("heading", "Sources at harbor .example /ferries"), text="Sources at harbor.example/ferries"
        ),
        Pointed(-1, HOVER, 11, _ax("button", "Close dialog"), text="\u00d7"),
    ]
    pointing = Pointing(True, True, 800, 600, "Gazette", "http://x/", ["Chromium"], elements)
    root = assemble("Chromium", [TabFacts("tab-1", "Gazette", None, pointing, "d-1-x", lambda n: f"e-{n}")])
    answer = {"protocol": "0.2.0", "instance": "i", "root": root}
    jsonschema.validate(answer, SCHEMA)
    assert find(answer, id="e-10") == {"id": "e-10", "role": "Heading", "title": "Sources at harbor.example/ferries"}
    assert find(answer, id="e-11") == {"id": "e-11", "role": "Button", "title": "Close dialog", "states": ["hovered"]}
