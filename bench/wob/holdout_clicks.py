"""Hold-out MiniWoB++ policies (see holdout.py): buttons, links, options, tabs, dialogs, menus, trees."""

from __future__ import annotations

import asyncio
import re

from .adapters import Adapter, Item, Page, PolicyFailed, norm
from .policies import (
    PRESSABLE,
    _find_word_through,
    asked,
    checkboxes,
    policy,
    query_item,
    quoted,
    radios,
    submit,
    target,
    text_fields,
)

TASKS: list[str] = [
    "click-button", "click-button-sequence", "click-link", "click-option", "click-checkboxes",
    "click-checkboxes-large", "click-tab", "click-tab-2", "click-test-transfer", "click-collapsible",
    "click-dialog", "click-dialog-2", "click-menu", "navigate-tree", "click-scroll-list", "choose-list",
    "click-pie", "focus-text", "focus-text-2",
]  # fmt: skip


def _after_query(page: Page) -> list[Item]:
    return page.items[query_item(page).index + 1 :]


@policy("click-button")
async def click_button(a: Adapter) -> None:
    page = await a.look()
    name = quoted(page.query)[0]
    # A button of exactly that label (case counts: "Ok" and "ok" are different buttons here).
    pool = _after_query(page)
    exact = [i for i in pool if i.name == name and i.kind in PRESSABLE]
    if exact:
        await a.press(exact[0])
        return
    await a.press(target(page, name, after=query_item(page)))


@policy("click-button-sequence")
async def click_button_sequence(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click button (\w+), then click button (\w+)")
    await a.press(target(page, m.group(1), after=query_item(page)))
    page = await a.look()
    await a.press(target(page, m.group(2), after=query_item(page)))


@policy("click-test-transfer")
async def click_test_transfer(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click button (\w+)")
    await a.press(target(page, m.group(1), after=query_item(page)))


@policy("click-link")
async def click_link(a: Adapter) -> None:
    page = await a.look()
    word = quoted(page.query)[0]
    # The link's own words, as written (case counts: "eget" in the text is not the link "Eget").
    same = [i for i in _after_query(page) if norm(i.name) == word]
    links = [i for i in same if i.kind == "link"] or same
    if links:
        await a.press(links[0])
        return
    await a.press(target(page, word, after=query_item(page)))


@policy("click-option")
async def click_option(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.*) and click Submit")
    name = m.group(1)
    hit = next((r for r in radios(page) if norm(r.name) == name), None)
    if hit is None:
        raise PolicyFailed(f"no radio button named {name!r} among {page.short(40)}")
    await a.check(hit, True)
    await submit(a)


@policy("click-checkboxes", "click-checkboxes-large")
async def click_checkboxes(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.*) and click Submit")
    words = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    boxes = checkboxes(page)
    if not boxes:
        raise PolicyFailed(f"no checkboxes among {page.short(40)}")
    missing = [w for w in words if w not in [norm(b.name) for b in boxes]]
    if missing:
        raise PolicyFailed(f"no checkbox named {missing} among {[b.name for b in boxes]}")
    for box in boxes:
        await a.check(box, norm(box.name) in words)
    await submit(a)


@policy("click-tab")
async def click_tab(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click on (Tab #\d)")
    await a.press(target(page, m.group(1), after=query_item(page)))


@policy("click-tab-2")
async def click_tab_2(a: Adapter) -> None:
    page = await a.look()
    word = quoted(page.query)[0]
    await _find_word_through(a, word, ["Tab #1", "Tab #2", "Tab #3"])


@policy("click-collapsible")
async def click_collapsible(a: Adapter) -> None:
    page = await a.look()
    head = next((i for i in _after_query(page) if re.fullmatch(r"Section #\d+", norm(i.name))), None)
    if head is None:
        raise PolicyFailed(f"no section header among {page.short(30)}")
    await a.press(head)
    await submit(a)


@policy("click-dialog")
async def click_dialog(a: Adapter) -> None:
    page = await a.look()
    # The dialog's close button: jQuery UI names it "Close" (its icon shows an x).
    pool = _after_query(page)
    hit = next((i for i in pool if norm(i.name).lower() in ("x", "×", "close")), None)
    if hit is None:
        raise PolicyFailed(f"no close button among {page.short(30)}")
    await a.press(hit)


@policy("click-dialog-2")
async def click_dialog_2(a: Adapter) -> None:
    page = await a.look()
    want = quoted(page.query)[0]
    pool = _after_query(page)
    names = ("x", "×", "close") if want == "x" else (want.lower(),)
    hits = [i for i in pool if norm(i.name).lower() in names]
    controls = [i for i in hits if i.kind in PRESSABLE]
    if controls or hits:
        await a.press((controls or hits)[0])
        return
    # A row of buttons read as one line ("Cancel OK"): the name inside it.
    await a.press(target(page, "Close" if want == "x" else want, after=query_item(page)))


@policy("click-menu")
async def click_menu(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.+)$")
    path = [p.strip() for p in m.group(1).strip().split(">")]
    # As a person: hover each parent to open its submenu, then click the leaf.
    for step, shown in zip(path[:-1], path[1:], strict=True):
        await a.hover(target(page, step, after=query_item(page)))
        page = await a.look()
        for _ in range(6):  # a submenu opens after a short delay: a person waits a moment
            if any(norm(i.name) == shown for i in page.items[query_item(page).index + 1 :]):
                break
            await asyncio.sleep(0.25)
            page = await a.look()
    await a.press(target(page, path[-1], after=query_item(page)))


def _panel(page: Page) -> int:
    """Where MiniWoB's score panel ("Last reward: -") begins: what comes after it is not the task's."""
    return next((i.index for i in page.items if norm(i.name).startswith("Last reward")), len(page.items))


@policy("navigate-tree")
async def navigate_tree(a: Adapter) -> None:
    page = await a.look()
    name = quoted(page.query)[0]
    tried: list[str] = []
    for _ in range(12):
        shown = [i for i in page.items[query_item(page).index + 1 : _panel(page)] if i.name]
        hits = [i for i in shown if norm(i.name) == name]
        if hits:
            await a.press(hits[0])
            return
        if page.loose and any(re.search(r"(^|\s)" + re.escape(name) + r"(\s|$)", i.name) for i in shown):
            # The bridge's press takes a name inside an entry's text (an open folder's entry
            # reads "Cierra Dolores", its files run into it).
            await a.press(target(page, name, after=query_item(page)))
            return
        if any(norm(i.name) == "Time left: -" for i in page.items):
            raise PolicyFailed("the episode ended: an entry guessed as a folder was a file")
        # A person opens a folder (its icon says so) until the name shows. Where the server says
        # which entries are closed folders, open those; where it says nothing, an entry is a guess
        # (a file ends the episode).
        fresh = [
            i
            for i in shown
            if i.kind not in ("list", "listitem", "tree")
            # an opened folder's entry may read on with its files ("Cierra Dolores"): still opened
            and not any(norm(i.name) == t or norm(i.name).startswith(t + " ") for t in tried)
        ]
        closed = [i for i in fresh if "collapsed" in i.states or "expandable" in i.states]
        told = any(i.states & {"collapsed", "expanded", "expandable"} for i in shown)
        if told and not closed:
            raise PolicyFailed(f"{name!r} not shown and no closed folder left among {page.short(40)}")
        pick = next(iter(closed or fresh), None)
        if pick is None:
            raise PolicyFailed(f"{name!r} not shown and nothing left to open among {page.short(40)}")
        tried.append(norm(pick.name))
        await a.press(pick)
        page = await a.look()
    raise PolicyFailed(f"{name!r} never shown")


@policy("click-scroll-list")
async def click_scroll_list(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.*) from the scroll list and click Submit")
    values = [v.strip() for v in m.group(1).split(",")]
    box = next((i for i in page.items if i.kind in ("listbox", "combobox") or (i.kind == "field" and i.options)), None)
    if box is None:
        raise PolicyFailed(f"no list among {page.short(30)}")
    await a.select(box, values)
    await submit(a)


@policy("choose-list")
async def choose_list(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.*) from the list and click Submit")
    box = next((i for i in page.items if i.kind in ("listbox", "combobox") or (i.kind == "field" and i.options)), None)
    if box is None:
        raise PolicyFailed(f"no list among {page.short(30)}")
    await a.select(box, [m.group(1)])
    await submit(a)


@policy("click-pie")
async def click_pie(a: Adapter) -> None:
    page = await a.look()
    want = quoted(page.query)[0]
    pool = _after_query(page)
    # The collapsed wheel: its centre, shown as "+", expands it; then the item labelled so.
    spreader = next((i for i in pool if norm(i.name) == "+"), None)
    if spreader is not None:
        await a.press(spreader)
        page = await a.look()
    hits = [i for i in page.items[query_item(page).index + 1 :] if norm(i.name) == want]
    if not hits:
        raise PolicyFailed(f"the pie menu shows no {want!r}: {page.short(40)}")
    await a.press(hits[0])
    after = await a.look()
    if page.loose and _still(after) == _still(page):
        # Nothing happened: the bridge counted the query's own bold letter as "#1" and took it
        # (the window shows the letter once). As an agent would, give the next one it listed.
        await a.press(Item(hits[0].index, "text", want, group=hits[0].group, handle=(f"{want} #2", "")))


def _still(page: Page) -> list[str]:
    """What the page shows but its clock (the task's "Time left" ticks on its own)."""
    return [t for t in page.texts() if not t.startswith("Time left")]


@policy("focus-text")
async def focus_text(a: Adapter) -> None:
    page = await a.look()
    fields = text_fields(page)
    if not fields:
        raise PolicyFailed(f"no text box among {page.short(30)}")
    await a.press(fields[0])


@policy("focus-text-2")
async def focus_text_2(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Focus into the (1st|2nd|3rd) input textbox")
    fields = text_fields(page)
    k = {"1st": 0, "2nd": 1, "3rd": 2}[m.group(1)]
    if len(fields) <= k:
        raise PolicyFailed(f"fewer than {k + 1} text boxes among {page.short(30)}")
    await a.press(fields[k])
