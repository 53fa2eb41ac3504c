"""End to end: every kind of action × every effect it can start, named by the answer and shown by the next read.

Issue 38 asks for one path for what an action did. This matrix holds every writer to it: a page
tool, a form tool that submits itself, a waiting form's `submit`, the window actions `fill`,
`press` and `submit`, a JavaScript dialog's `accept`, `navigate` and `app__open_tab`; and every
effect they can start: a new tab, a JavaScript dialog, an in-page `<dialog>`, a file chooser, an
HTTP sign-in prompt, a download, a cross-document navigation and a change of the page's text.

The sample site's effects lab (`/effects/lab.html?effect=…`) starts one effect from every trigger
an agent has. For each cell the answer must name the effect (the new window in
`openedWindowIds`, the download's file name, where the tab now is) and the very next read of
`app://windows` must show it. Cells that cannot occur are listed in `CANNOT_OCCUR` with the
reason; a test keeps that table the exact complement of the tested cells.

One Chromium and one bridge serve the whole module; each cell works in a tab of its own, closed
(with whatever the cell opened) before the next.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import BrowserProcess, LaunchOptions, launch_browser
from tests.support.mcp_harness import open_stdio_client
from tests.support.stage import Stage, address_of, run_site

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ACTIONS = ("page_tool", "form_tool", "form_submit", "fill", "press", "submit", "accept", "navigate", "open_tab")
EFFECTS = ("new_tab", "js_dialog", "modal", "file_chooser", "sign_in", "download", "navigation", "same_page")

# What each action is tested to start. Written out, not derived, so that the table below must
# account for every cell left out.
TESTED: dict[str, tuple[str, ...]] = {
    "page_tool": EFFECTS,
    "form_tool": EFFECTS,
    "form_submit": ("new_tab", "js_dialog", "modal", "sign_in", "download", "navigation", "same_page"),
    "fill": EFFECTS,
    "press": EFFECTS,
    "submit": EFFECTS,
    "accept": EFFECTS,
    "navigate": ("js_dialog", "modal", "sign_in", "download", "navigation", "same_page"),
    "open_tab": ("new_tab", "js_dialog", "modal", "sign_in", "download", "navigation"),
}

_NO_GESTURE = (
    "a file chooser opens only on a user activation (showPicker() throws NotAllowedError, input.click() is "
    "ignored without one)"
)
CANNOT_OCCUR: dict[tuple[str, str], str] = {
    (
        "form_submit",
        "file_chooser",
    ): f"the bridge submits a waiting form with requestSubmit() and no gesture: {_NO_GESTURE}",
    ("navigate", "file_chooser"): f"a page that loads has had no gesture: {_NO_GESTURE}",
    ("navigate", "new_tab"): "a tab a page opens as it loads comes with no click and outside any page-tool call: the "
    "bridge closes it as a popup blocker would (Tab._window_opened, docs/security.md) and says so in a notice",
    ("open_tab", "file_chooser"): f"a page that loads in a new tab has had no gesture: {_NO_GESTURE}",
    ("open_tab", "same_page"): "the tab is new: there is no page before it whose text could change; what it loads is "
    "the open_tab-navigation cell",
}

CELLS = [(action, effect) for action in ACTIONS for effect in TESTED[action]]
LAB = "/effects/lab.html"
# A call Chromium never answers fails at the bridge's --tool-timeout, not the client's 30 s: the
# matrix stays short when a cell hangs, and every effect here comes within a second or two.
TOOL_TIMEOUT_S = 8
CELL_WAIT = 45.0


def test_the_untested_cells_are_exactly_those_that_cannot_occur() -> None:
    every = {(action, effect) for action in ACTIONS for effect in EFFECTS}
    tested = set(CELLS)
    assert len(tested) == len(CELLS), "a cell is listed twice"
    assert not tested & set(CANNOT_OCCUR), f"tested and said impossible: {sorted(tested & set(CANNOT_OCCUR))}"
    assert tested | set(CANNOT_OCCUR) == every, (
        f"neither tested nor explained: {sorted(every - tested - set(CANNOT_OCCUR))}"
    )
    assert all(reason.strip() for reason in CANNOT_OCCUR.values())


# --- one browser and one bridge for the module ------------------------------------------------


@dataclass
class Lab:
    """The module's stage, the pages it keeps, and its own CDP connection to close what a cell opened."""

    stage: Stage
    kept_windows: list[str]
    kept_targets: set[str]
    cdp: Connection


@pytest.fixture(scope="module")
def lab_site() -> Iterator[str]:
    with run_site() as url:
        yield url


@pytest.fixture(scope="module")
async def lab(anyio_backend: str, lab_site: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Lab]:
    downloads = tmp_path_factory.mktemp("effects-downloads")
    browser: BrowserProcess = await launch_browser(LaunchOptions(headless=True, debugging="port"))
    try:
        command = [sys.executable, "-m", "webmcp", "--cdp-url", browser.ws_url, "--download-dir", str(downloads)]
        command += ["--tool-timeout", str(TOOL_TIMEOUT_S)]
        async with (
            open_stdio_client([*command, f"{lab_site}{LAB}?effect=same_page"], mode="auto") as mcp,
            Connection.connect(browser.ws_url) as cdp,
        ):
            stage = Stage(lab_site, browser, mcp, None)  # type: ignore[arg-type]  # no Playwright user here
            await stage.tab_for(f"{LAB}?effect=same_page")
            kept = {t["targetId"] for t in (await cdp.browser.send("Target.getTargets"))["targetInfos"]}
            windows = [w["id"] for w in (await stage.windows())["windows"]]
            yield Lab(stage, windows, kept, cdp)
    finally:
        await browser.close()


async def _close_what_the_cell_opened(lab: Lab) -> None:
    """Close every page the cell opened, straight through CDP (a blocked tab cannot close itself).

    A window that outlives its closed page fails this cell, and is then kept: the next cells are
    measured against what is left, so one stuck window cannot fail every cell after it.
    """
    with anyio.fail_after(15):
        targets = (await lab.cdp.browser.send("Target.getTargets"))["targetInfos"]
        for target in targets:
            if target["type"] == "page" and target["targetId"] not in lab.kept_targets:
                await lab.cdp.browser.send("Target.closeTarget", {"targetId": target["targetId"]})
    try:
        await lab.stage.wait_windows(lambda d: [w["id"] for w in d["windows"]] == lab.kept_windows, timeout=15)
    except TimeoutError:
        left = [(w["id"], w["title"]) for w in (await lab.stage.windows())["windows"]]
        lab.kept_windows = [w_id for w_id, _ in left]
        lab.kept_targets = {t["targetId"] for t in (await lab.cdp.browser.send("Target.getTargets"))["targetInfos"]}
        raise AssertionError(f"windows outlived their closed pages: {left}") from None


# --- the actions ---------------------------------------------------------------------------------


@dataclass
class Acted:
    """What one action answered, and the tab its effect belongs to."""

    tab: str
    answer: dict[str, Any]
    before: dict[str, Any]  # the windows document read just before the action


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def _text(thing: Any) -> str:
    return json.dumps(thing, ensure_ascii=False)


async def _ok(stage: Stage, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await stage.call(tool, args or {})
    assert not result.is_error, f"{tool} failed: {result.structured_content}"
    body: dict[str, Any] = result.structured_content
    return body


async def _lab_tab(stage: Stage, effect: str, more: str = "") -> str:
    """A new tab on the lab page for `effect` (and the query's `more`), shown with its page tools."""
    opened = await _ok(stage, "app__open_tab", {"url": f"{stage.site}{LAB}?effect={effect}{more}"})
    tab = str(opened["openedWindowIds"][0])
    await stage.wait_tools(lambda names: f"{tab}__start_effect" in names and f"{tab}__start_effect_later" in names)
    return tab


async def _act(stage: Stage, action: str, effect: str) -> Acted:
    """Set up the cell's tab, then do `action` once; the answer of the action under test."""
    site = stage.site
    if action == "open_tab":
        before = await stage.windows()
        targets = {
            "js_dialog": f"{site}{LAB}?effect=js_dialog&auto=open_tab",
            "modal": f"{site}{LAB}?effect=modal&auto=open_tab",
            "new_tab": f"{site}/effects/popup.html?via=open_tab",
            "sign_in": f"{site}/private/?via=open_tab",
            "download": f"{site}/effects/download?via=open_tab",
            "navigation": f"{site}/effects/landed.html?via=open_tab",
        }
        answer = await _ok(stage, "app__open_tab", {"url": targets[effect]})
        opened = answer.get("openedWindowIds") or []
        assert opened, f"app__open_tab named no window: {answer}"
        # The tab it opens is the new tab of open_tab-new_tab; for the other effects, their owner.
        return Acted("" if effect == "new_tab" else str(opened[0]), answer, before)
    tab = await _lab_tab(stage, effect)
    before = await stage.windows()
    if action == "page_tool":
        answer = await _ok(stage, f"{tab}__start_effect")
    elif action == "form_tool":
        answer = await _ok(stage, f"{tab}__start_effect_form", {"note": "from the matrix"})
    elif action == "form_submit":
        waiting = await _ok(stage, f"{tab}__start_effect_later", {"note": "from the matrix"})
        (form,) = waiting["openedWindowIds"]
        answer = await _ok(stage, f"{form}__submit")
    elif action == "fill":
        answer = await _ok(stage, f"{tab}__fill", {"fields": [{"label": "Effect word", "value": "go"}]})
        # Its change handler starts the effect: an alert stops the fill before the field counts as filled.
        done = (
            "\u201cEffect word\u201d was being set when" if effect == "js_dialog" else "Filled \u201cEffect word\u201d."
        )
        assert str(answer["message"]).startswith(done), answer
        # Each effect changes more than the field: a fill never says nothing else changed.
        assert "nothing else changed" not in str(answer["message"]), answer
    elif action == "press":
        answer = await _ok(stage, f"{tab}__press", {"label": "Start the effect"})
    elif action == "submit":
        answer = await _ok(stage, f"{tab}__submit", {"form": "Plain effect form"})
    elif action == "accept":
        asked = await _ok(stage, f"{tab}__press", {"label": "Start after confirming"})
        (confirm,) = asked["openedWindowIds"]
        answer = await _ok(stage, f"{confirm}__accept")
        answer["_confirm"] = confirm
    else:
        assert action == "navigate"
        targets = {
            "js_dialog": f"{site}{LAB}?effect=js_dialog&auto=navigate",
            "modal": f"{site}{LAB}?effect=modal&auto=navigate",
            "new_tab": f"{site}{LAB}?effect=new_tab&auto=navigate",
            "sign_in": f"{site}/private/?via=navigate",
            "download": f"{site}/effects/download?via=navigate",
            "navigation": f"{site}/effects/landed.html?via=navigate",
            "same_page": f"{site}{LAB}?effect=same_page#navigate",
        }
        answer = await _ok(stage, f"{tab}__navigate", {"url": targets[effect]})
    return Acted(tab, answer, before)


# --- the effects ---------------------------------------------------------------------------------


def _opened(acted: Acted) -> list[str]:
    return [str(i) for i in acted.answer.get("openedWindowIds") or []]


def _new_in_answer(acted: Acted, doc: dict[str, Any], *, modal: bool) -> list[dict[str, Any]]:
    """The windows the answer names as opened that the read shows, of the given kind, other than the tab."""
    named = [_window(doc, i) for i in _opened(acted) if i != acted.tab]
    return [w for w in named if w is not None and w["modal"] is modal]


def _owned_by(doc: dict[str, Any], window: dict[str, Any], tab: str) -> bool:
    """`window` is owned by `tab`, directly or through a chain of modals (a prompt over a waiting form)."""
    owner = window["ownerId"]
    while owner is not None and owner != tab:
        above = _window(doc, owner)
        owner = above["ownerId"] if above is not None else None
    return owner == tab


def _owned_modal(acted: Acted, doc: dict[str, Any], what: str) -> dict[str, Any]:
    modals = [w for w in _new_in_answer(acted, doc, modal=True) if _owned_by(doc, w, acted.tab)]
    assert modals, (
        f"the answer names no {what} window of {acted.tab}: openedWindowIds={_opened(acted)}, "
        f"message={acted.answer.get('message')!r}; the read shows "
        f"{[(w['id'], w['title'], w['ownerId']) for w in doc['windows'] if w['modal']]}"
    )
    return modals[-1]


async def _check(stage: Stage, action: str, effect: str, acted: Acted) -> None:
    """The answer names the effect, and the next read shows it."""
    doc = await stage.windows()  # the next read, at once: read after write
    answer = acted.answer
    via = action
    if effect == "new_tab":
        tabs = _new_in_answer(acted, doc, modal=False)
        assert tabs, (
            f"the answer names no new tab: openedWindowIds={_opened(acted)}, message={answer.get('message')!r}; "
            f"the read shows tabs {[(w['id'], address_of(w)) for w in doc['windows'] if not w['modal']]}"
        )
        popup = tabs[-1]["id"]
        wanted = f"{stage.site}/effects/popup.html?via={via}"
        await stage.wait_windows(lambda d: address_of(_window(d, popup) or {"blocks": []}).startswith(wanted))
    elif effect == "js_dialog":
        dialog = _owned_modal(acted, doc, "JavaScript dialog")
        assert dialog["id"] != answer.get("_confirm"), "the confirm answered is not the dialog it led to"
        assert f"Effect started by {via}." in _text(dialog), dialog
    elif effect == "modal":
        modal = _owned_modal(acted, doc, "<dialog>")
        assert f"Opened by {via}." in _text(modal), modal
    elif effect == "file_chooser":
        chooser = _owned_modal(acted, doc, "file chooser")
        assert chooser["title"].startswith("Choose"), chooser["title"]
    elif effect == "sign_in":
        prompt = _owned_modal(acted, doc, "sign-in prompt")
        assert prompt["title"].startswith("Sign in to "), prompt["title"]
        # Said, not only listed: the page waits for it (a press once read the page it was leaving
        # instead, which answered nothing until the read gave up: 17 s, and no word of the prompt).
        said = str(answer.get("message"))
        assert f"asks for a sign-in ({prompt['id']})" in said, said
    elif effect == "download":
        name = f"{via}-download.txt"
        said = _text({"message": answer.get("message"), "result": answer.get("result")})
        assert name in said, f"the answer does not name the download {name}: {answer}"
        tab = _window(doc, acted.tab)
        assert tab is not None, f"{acted.tab} is gone from the read"
        rows = [r[0] for b in tab["blocks"] if b["type"] == "table" and b.get("id") == "downloads" for r in b["rows"]]
        assert name in rows, f"{acted.tab}'s window lists downloads {rows}, not {name}"
    elif effect == "navigation":
        wanted = f"{stage.site}/effects/landed.html?via={via}"
        path = wanted.removeprefix(stage.site)
        said = _text({"message": answer.get("message"), "result": answer.get("result")})
        assert path in said, f"the answer does not say the tab is at {path}: {answer}"
        tab = _window(doc, acted.tab)
        assert tab is not None and address_of(tab).startswith(wanted), (tab and address_of(tab), wanted)
        assert f"Arrived by {via}." in _text(tab["blocks"]), tab["blocks"]
    else:
        assert effect == "same_page"
        assert not _opened(acted), f"a change of text opened no window: {answer}"
        message = str(answer.get("message"))
        assert "now shows" not in message, f"a change of text is no new document: {message}"
        tab = _window(doc, acted.tab)
        assert tab is not None and address_of(tab).startswith(f"{stage.site}{LAB}?effect=same_page"), tab
        assert f"Changed by {via}." in _text(tab["blocks"]), tab["blocks"]
        before = _window(acted.before, acted.tab)
        assert before is not None and tab["version"] > before["version"], "the version rose with the change"


@pytest.mark.parametrize(("action", "effect"), CELLS, ids=[f"{a}-{e}" for a, e in CELLS])
async def test_the_answer_names_the_effect_and_the_next_read_shows_it(lab: Lab, action: str, effect: str) -> None:
    try:
        with anyio.fail_after(CELL_WAIT):
            acted = await _act(lab.stage, action, effect)
            await _check(lab.stage, action, effect, acted)
    finally:
        await _close_what_the_cell_opened(lab)


BUSY_MS = 400


@pytest.mark.parametrize("effect", ["sign_in", "navigation", "same_page"])
async def test_a_press_whose_page_draws_late_names_the_effect(lab: Lab, effect: str) -> None:
    """The click on "Start the effect" also holds the page's next frame 400 ms: what the click started
    (a sign-in prompt over the tab) comes while the press still waits for the page to draw. The CI met
    this on the plain link (`press-sign_in`, 2 runs in 5): a prompt that opened then was answered
    as an `action_timeout`, after no wait at all."""
    stage = lab.stage
    try:
        with anyio.fail_after(CELL_WAIT):
            tab = await _lab_tab(stage, effect, f"&busy={BUSY_MS}")
            before = await stage.windows()
            answer = await _ok(stage, f"{tab}__press", {"label": "Start the effect"})
            await _check(stage, "press", effect, Acted(tab, answer, before))
    finally:
        await _close_what_the_cell_opened(lab)


HOLD_MS = 1500


@pytest.mark.parametrize("hold_in", ["task", "change"])
async def test_a_fill_whose_field_leaves_the_document_says_which_fields_it_set(lab: Lab, hold_in: str) -> None:
    """The field's change handler navigates, then the page works on 1.5 s. In a task of its own
    (`task`), the new document commits before the fill's script answers, and Chromium answers it
    "Inspected target navigated or closed"; in the handler (`change`), the script answers, and the
    next field is gone with its document. The CI met the first on `fill-navigation` (1 run in 6),
    answered as "was being set when the page opened a dialog", with no dialog anywhere; the
    second was an internal error. The field was set (its change is what navigated); the field
    after it never was."""
    stage = lab.stage
    try:
        with anyio.fail_after(CELL_WAIT):
            tab = await _lab_tab(stage, "navigation", f"&hold={HOLD_MS}&hold_in={hold_in}")
            before = await stage.windows()
            fields = [{"label": "Effect word", "value": "go"}, {"label": "Note", "value": "later"}]
            answer = await _ok(stage, f"{tab}__fill", {"fields": fields})
            said = str(answer["message"])
            assert said.startswith("Filled \u201cEffect word\u201d. \u201cNote\u201d was not filled: "), answer
            assert "the page left the document first." in said and "dialog" not in said, answer
            await _check(stage, "fill", "navigation", Acted(tab, answer, before))
    finally:
        await _close_what_the_cell_opened(lab)
