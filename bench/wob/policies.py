"""One scripted policy per MiniWoB++ task: read the page through the adapter, parse the query, act.

A policy sees only what the server's answers show (`Adapter.look()`: the items, in reading
order, with the names the server gives them) and acts on items it picked. It is written once;
the adapters translate (bench/wob/adapters.py). A policy that cannot go on raises PolicyFailed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from .adapters import ActionFailed, Adapter, Item, Page, PolicyFailed, norm

__all__ = ["DEV_SET", "POLICIES"]

DEV_SET = [
    "choose-date", "choose-date-easy", "choose-date-medium", "click-checkboxes-soft",
    "click-checkboxes-transfer", "click-collapsible-2", "click-menu-2", "click-tab-2-easy",
    "click-tab-2-medium", "click-tab-2-hard", "click-test", "click-test-2", "click-widget",
    "copy-paste", "copy-paste-2", "email-inbox", "email-inbox-delete", "email-inbox-forward",
    "email-inbox-reply", "email-inbox-star-reply", "enter-text-dynamic", "form-sequence",
    "form-sequence-2", "form-sequence-3", "multi-orderings", "number-checkboxes", "order-food",
    "phone-book", "read-table-2", "sign-agreement", "social-media", "social-media-some",
    "stock-market", "terminal", "text-editor", "unicode-test", "use-spinner", "buy-ticket",
]  # fmt: skip

Policy = Callable[[Adapter], Awaitable[None]]
POLICIES: dict[str, Policy] = {}

PRESSABLE = ("button", "link", "tab", "menuitem", "option", "treeitem", "gridcell", "checkbox", "radio")
"""Playwright's roles a click is meant for; the bridge shows its targets as text (kind text, item, cell)."""
TEXTBOX = ("field", "textbox", "searchbox", "spinbutton")


def policy(*names: str) -> Callable[[Policy], Policy]:
    def register(fn: Policy) -> Policy:
        for name in names:
            POLICIES[name] = fn
        return fn

    return register


def quoted(text: str) -> list[str]:
    return re.findall(r"\"([^\"]*)\"", text)


def target(page: Page, name: str, nth: int = 0, after: Item | None = None) -> Item:
    """The item shown as `name` a person would click: a control of that name first, else any item."""
    start = after.index + 1 if after is not None else 0
    pool = [i for i in page.find_all(name) if i.index >= start]
    controls = [i for i in pool if i.kind in PRESSABLE]
    chosen = controls or [i for i in pool if i.kind not in ("textbox", "spinbutton", "searchbox")] or pool
    if not chosen and page.loose:
        # The bridge's press takes the words a person reads; a row of buttons may show as one line
        # ("ONE TWO"), so a name inside a line is given as it is.
        words = re.compile(r"(^|\W)" + re.escape(norm(name)) + r"(\W|$)")
        inside = [i for i in page.items[start:] if words.search(i.name) and i.index != query_item(page).index]
        if inside:
            return Item(inside[0].index, "text", norm(name), group=inside[0].group, handle=(norm(name), ""))
    if len(chosen) <= nth:
        raise PolicyFailed(f"the page shows no {name!r} to press (#{nth + 1}) among {page.short(40)}")
    return chosen[nth]


async def press(a: Adapter, name: str, page: Page | None = None, nth: int = 0) -> None:
    page = page or await a.look()
    await a.press(target(page, name, nth))


def text_fields(page: Page) -> list[Item]:
    return [i for i in page.items if i.kind in TEXTBOX and not isinstance(i.value, bool)]


def asked(page: Page, pattern: str) -> re.Match[str]:
    """The query read by `pattern`; a query it does not read fails the policy, saying so."""
    m = re.search(pattern, page.query)
    if not m:
        raise PolicyFailed(f"query not understood: {page.query!r}")
    return m


def unnamed(item: Item) -> bool:
    """A field whose name says nothing a person reads (none, or only its role)."""
    return norm(item.name).lower() in (
        "", "textbox", "text box", "textarea", "text area", "combobox", "checkbox", "radio"
    )  # fmt: skip


@policy("click-test")
async def click_test(a: Adapter) -> None:
    page = await a.look()
    await a.press(target(page, "Click Me!"))


@policy("click-test-2")
async def click_test_2(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click button (\w+)")
    await a.press(target(page, m.group(1)))


@policy("unicode-test")
async def unicode_test(a: Adapter) -> None:
    page = await a.look()
    await a.press(target(page, quoted(page.query)[0]))


@policy("enter-text-dynamic")
async def enter_text_dynamic(a: Adapter) -> None:
    page = await a.look()
    value = quoted(page.query)[0]
    await a.fill(text_fields(page)[0], value)
    await press(a, "Submit", page)


@policy("click-widget")
async def click_widget(a: Adapter) -> None:
    page = await a.look()
    kind = quoted(page.query)[0]
    after = page.find(lambda n: norm(n) == page.query)
    pool = page.items[after.index + 1 :]
    if kind == "button":
        hits = [i for i in pool if i.kind == "button"]
    elif kind in ("checkbox", "radio"):
        hits = [i for i in pool if i.kind == kind or (i.kind == "field" and isinstance(i.value, bool))]
        # Where the server tells a radio button from a check box (the bridge: kind "radio"), use it.
        told = [i for i in hits if (i.kind == "radio" or "radio" in i.states) == (kind == "radio")]
        hits = told if any(i.kind == "radio" or "radio" in i.states for i in hits) else hits
    else:
        hits = [i for i in pool if i.kind in TEXTBOX and not isinstance(i.value, bool)]
        # Where the server tells a text area from a one-line box (the bridge: "text area";
        # chrome-devtools-mcp: a `multiline` textbox), use it.
        areas = [i for i in hits if norm(i.name).lower() == "text area" or "multiline" in i.states]
        hits = (areas or hits) if kind == "textarea" else ([i for i in hits if i not in areas] or hits)
    if not hits:
        raise PolicyFailed(f"no {kind} widget among {page.short(40)}")
    await a.press(hits[0])


@policy("sign-agreement")
async def sign_agreement(a: Adapter) -> None:
    page = await a.look()
    q = page.query
    if "cancel button" in q:
        await press(a, "Cancel", page)
        return
    # Enabled only once the text area is scrolled to its bottom, as a person's wheel does.
    name, button = quoted(q)[0], quoted(q)[1]
    area = next((i for i in page.items if i.kind in TEXTBOX and unnamed(i)), None)
    if area is None:
        raise PolicyFailed(f"no text area among {page.short(40)}")
    await a.wheel(area, 10_000)
    page = await a.look()
    await a.fill(page.find("Name", TEXTBOX), name)
    await press(a, button)


@policy("use-spinner")
async def use_spinner(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (-?\d+)")
    await a.fill(text_fields(page)[0], m.group(1))
    await press(a, "Submit")


ORDINALS = {"1st": 0, "2nd": 1, "3rd": 2, "4th": 3, "5th": 4}


def checkboxes(page: Page, after: Item | None = None) -> list[Item]:
    start = after.index + 1 if after is not None else 0
    return [i for i in page.items[start:] if i.kind == "checkbox" or (i.kind == "field" and isinstance(i.value, bool))]


def radios(page: Page) -> list[Item]:
    found = [i for i in page.items if i.kind == "radio"]
    return found or [i for i in page.items if i.kind == "field" and isinstance(i.value, bool)]


def field_for(page: Page, label: str) -> Item:
    """The text field a person reads as `label`: one named so, else the first after that text."""
    want = norm(label).lower().rstrip(":")
    named = [i for i in text_fields(page) if not unnamed(i) and norm(i.name).lower().rstrip(":") == want]
    if named:
        return named[0]
    for anchor in page.items:
        if norm(anchor.name).lower().rstrip(":") == want and anchor.kind not in TEXTBOX:
            return page.after(anchor, lambda i: i.kind in TEXTBOX and not isinstance(i.value, bool))
    raise PolicyFailed(f"no field reads as {label!r} among {page.short(40)}")


def query_item(page: Page) -> Item:
    return next(i for i in page.items if i.name)


async def submit(a: Adapter, page: Page | None = None, name: str = "Submit") -> None:
    page = page or await a.look()
    await a.press(target(page, name))


SYNONYMS = [
    ["big", "large", "huge", "enormous", "gigantic"], ["small", "tiny", "little", "mini", "petite"],
    ["red", "scarlet", "crimson", "vermillion"], ["happy", "cheerful", "joyful", "gleeful", "delighted"],
    ["sad", "unhappy", "sorrowful", "miserable", "tragic"], ["angry", "mad", "furious", "irritated"],
    ["evil", "wicked", "immoral", "sinful", "corrupt", "depraved"], ["wrong", "incorrect", "mistaken", "erroneous"],
    ["real", "genuine", "actual"], ["strange", "odd", "peculiar", "unusual", "weird"],
    ["stop", "cease", "halt", "end", "finish"], ["scared", "terrified", "panicked", "fearful", "frightened", "afraid"],
    ["quiet", "calm", "peaceful", "serene", "mild"], ["old", "aged", "archaic"], ["love", "like", "adore", "favor"],
    ["kill", "murder", "assassinate"], ["keep", "retain", "preserve", "sustain", "maintain"],
    ["hide", "conceal", "camouflage"], ["hate", "despise", "loathe", "detest", "dislike"],
    ["funny", "humorous", "amusing", "comical", "laughable"], ["fat", "fleshy", "plump", "chubby"],
    ["stupid", "dumb", "dull", "unwise"], ["delicious", "savory", "delectable", "appetizing"],
    ["cut", "slice", "carve", "chop"], ["brave", "courageous", "fearless"], ["begin", "start", "initiate", "launch"],
    ["answer", "reply", "response"], ["television", "televisions", "TV", "TVs"], ["house", "home", "houses", "homes"],
    ["fire", "flame", "fires", "flames"], ["pig", "pork", "swine", "pig"], ["rabbit", "rabbits", "bunny", "bunnies"],
    ["car", "cars", "automobile", "automobiles", "vehicle", "vehicles"], ["water"],
]  # fmt: skip
"""What a reader of English knows (the same groups the task draws its words from)."""


def _similar(a: str, b: str) -> bool:
    return a == b or any(a in g and b in g for g in SYNONYMS)


async def _set_boxes(a: Adapter, page: Page, want: Callable[[str], bool]) -> None:
    boxes = checkboxes(page)
    if not boxes:
        raise PolicyFailed(f"no checkboxes among {page.short(40)}")
    for box in boxes:
        await a.check(box, want(box.name))
    await submit(a)


@policy("click-checkboxes-soft")
async def click_checkboxes_soft(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"similar to (.*) and click Submit")
    words = [w.strip() for w in m.group(1).split(",") if w.strip()]
    await _set_boxes(a, page, lambda name: any(_similar(name, w) for w in words))


@policy("click-checkboxes-transfer")
async def click_checkboxes_transfer(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (.*) and click Submit")
    words = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    await _set_boxes(a, page, lambda name: name in words)


async def _find_word_through(a: Adapter, word: str, openers: list[str]) -> None:
    """Open each section or tab in turn until an item shown as `word` can be pressed."""
    page = await a.look()
    for opener in [None, *openers]:
        if opener is not None:
            await a.press(target(page, opener))
            page = await a.look()
        hits = [i for i in page.find_all(lambda n: n == word) if i.index != query_item(page).index]
        if hits:
            await a.press(hits[0])
            return
        if page.loose and any(
            re.search(r"(^|\W)" + re.escape(word) + r"(\W|$)", i.name) for i in page.items[query_item(page).index + 1 :]
        ):
            try:
                await a.press(target(page, word))
                return
            except ActionFailed as exc:
                if "only inside longer text" not in str(exc):
                    raise
                # Told the word is plain text here, as a person sees it is not a link: look on.
    raise PolicyFailed(f"no item shown as {word!r} in any of {openers}")


@policy("click-collapsible-2")
async def click_collapsible_2(a: Adapter) -> None:
    page = await a.look()
    word = quoted(page.query)[0]
    await _find_word_through(a, word, [f"Section #{k}" for k in (1, 2, 3)])


@policy("click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard")
async def click_tab_2(a: Adapter) -> None:
    page = await a.look()
    word = quoted(page.query)[0]
    # The tabs' labels ("Tab #1", or "1", "2" …), before the page's score panel ("-", "0").
    panel = next((i.index for i in page.items if i.name in ("-", "Last reward: -")), len(page.items))
    tabs = [i.name for i in page.items[:panel] if re.fullmatch(r"Tab #\d|[1-9]", i.name)]
    if not tabs and page.loose:  # a row of tabs read as one line: "1 (selected) 2 3"
        for line in page.items[query_item(page).index + 1 : panel]:
            bare = re.sub(r" \((?:selected|expanded|collapsed)(?:, \w+)*\)", "", line.name)
            if re.fullmatch(r"(?:(?:Tab #)?[1-9] ?)+", bare):
                tabs = re.findall(r"Tab #\d|[1-9]", bare)
                break
    seen: list[str] = []
    for name in tabs:
        if name not in seen:
            seen.append(name)
    try:
        await _find_word_through(a, word, seen)
    except PolicyFailed:
        if len(seen) >= 2 and "Tab #2" in seen:  # medium: a link that is nowhere means "click tab 2"
            await a.press(target(await a.look(), "Tab #2"))
            return
        raise


ICONS = {"disk": "Save", "seek-start": "Prev", "stop": "Stop", "play": "Play", "seek-end": "Next",
         "zoomin": "Zoom In", "zoomout": "Zoom Out"}  # fmt: skip


@policy("click-menu-2")
async def click_menu_2(a: Adapter) -> None:
    page = await a.look()
    labels = quoted(page.query)
    if len(labels) >= 2:
        label = labels[1]
    else:  # the item with an icon: only a server that names the icon says which
        said = page.query.lower()
        label = next((v for k, v in ICONS.items() if k.replace("-", " ") in said or k in said), "")
        if not label:
            raise PolicyFailed(f"the query's icon is not named: {page.query!r}")
    await a.press(target(page, "Menu"))
    page = await a.look()
    if not page.has(label) and label in ("Prev", "Stop", "Play", "Next"):
        await a.hover(target(page, "Playback"))
        page = await a.look()
    await a.press(target(page, label))


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]  # fmt: skip


async def pick_date(a: Adapter, field: Item, month: int, day: int) -> None:
    """Open the date picker of `field`, page to `month` (1–12) with Prev and Next, press `day`."""
    await a.press(field)
    for _ in range(13):
        page = await a.look()
        shown = [k for k, name in enumerate(MONTHS, 1) if any(name in i.name for i in page.items)]
        if not shown:
            raise PolicyFailed(f"the date picker shows no month: {page.short(20)}")
        if shown[0] == month:
            break
        await a.press(target(page, "Prev" if shown[0] > month else "Next"))
    else:
        raise PolicyFailed("the month was never shown")
    await a.press(target(page, str(day)))


@policy("choose-date", "choose-date-easy", "choose-date-medium")
async def choose_date(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"(\d\d)/(\d\d)/(\d{4})")
    await pick_date(a, field_for(page, "Date"), int(m.group(1)), int(m.group(2)))
    await submit(a)


async def _copy(a: Adapter, source: Item, to: Item) -> None:
    """As a person copies: select all in the source, copy, paste into the target. Where the page
    then holds nothing, or not what the source showed, type what the source showed instead."""
    shown = str(source.value)
    try:
        await a.key("Control+A", source)
        await a.key("Control+C", source)
        await a.key("Control+V", to)
        page = await a.look()
        after = next((f for f in text_fields(page) if f.index == to.index), None)
        if after is not None and after.value and norm(after.value) == norm(shown):
            return
        to = after or to
    except Exception:  # noqa: BLE001 - no keys, or no clipboard: type it
        pass
    await a.fill(to, shown)


@policy("copy-paste")
async def copy_paste(a: Adapter) -> None:
    page = await a.look()
    fields = text_fields(page)
    full = [f for f in fields if f.value]
    empty = [f for f in fields if not f.value]
    if not full or not empty:
        raise PolicyFailed(f"no text to copy or nowhere to paste: {page.short(20)}")
    await _copy(a, full[0], empty[0])
    await submit(a)


@policy("copy-paste-2")
async def copy_paste_2(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"(1st|2nd|3rd) text area")
    fields = text_fields(page)
    if len(fields) < 4:
        raise PolicyFailed(f"expected 3 text areas and a text input: {page.short(20)}")
    await _copy(a, fields[ORDINALS[m.group(1)]], fields[3])
    await submit(a)


@policy("form-sequence")
async def form_sequence(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Select (-?\d+) with the slider, click the (1st|2nd|3rd) checkbox")
    want = int(m.group(1))
    after_query = page.items[query_item(page).index + 1 :]
    slider = next((i for i in after_query if i.kind == "slider" or "slider" in i.name.lower()), None)
    shown = next((i for i in page.items if re.fullmatch(r"-?\d+", i.name) and i.index > query_item(page).index), None)
    if shown is None:
        raise PolicyFailed(f"the slider's value is not shown: {page.short(20)}")
    now = int(shown.name)
    handle = slider or shown
    for _ in range(abs(want - now)):
        await a.key("ArrowRight" if want > now else "ArrowLeft", handle)
    page = await a.look()
    boxes = checkboxes(page)
    await a.check(boxes[ORDINALS[m.group(2)]], True)
    await submit(a)


@policy("form-sequence-2")
async def form_sequence_2(a: Adapter) -> None:
    page = await a.look()
    m = re.search(
        r"Check the (1st|2nd|3rd) radio button and enter the number \"(-?\d+)\" into the (1st|2nd|3rd) textbox",
        page.query,
    )
    if not m:
        raise PolicyFailed(f"query not understood: {page.query!r}")
    await a.check(radios(page)[ORDINALS[m.group(1)]], True)
    page = await a.look()
    await a.fill(text_fields(page)[ORDINALS[m.group(3)]], m.group(2))
    await submit(a)


@policy("form-sequence-3")
async def form_sequence_3(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Choose (.*) from the dropdown, then click the button labeled \"(.*)\"")
    select = next(
        (i for i in page.items if i.kind in ("combobox", "listbox") or (i.kind == "field" and i.options)), None
    )
    if select is None:
        select = next((i for i in page.items if i.kind == "field"), None)
    if select is None:
        raise PolicyFailed(f"no dropdown among {page.short(30)}")
    await a.select(select, [m.group(1)])
    await a.press(target(await a.look(), m.group(2)))


@policy("multi-orderings")
async def multi_orderings(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Search for (.*) movies directed by (.*) from year (\d+)")
    pairs = [
        (field_for(page, "Genre"), m.group(1)),
        (field_for(page, "Director"), m.group(2)),
        (field_for(page, "Year"), m.group(3)),
    ]
    await a.fill_many(pairs)
    await submit(a)


DIGITS = {
    0: "0110 1001 1001 1001 1001 1001 0110",
    1: "0010 0110 0010 0010 0010 0010 0010",
    2: "0110 1001 1001 0010 0100 1000 1111",
    3: "0110 1001 0001 0110 0001 1001 0110",
    4: "1000 1010 1010 1111 0010 0010 0010",
    5: "1111 1000 1000 1110 0001 1001 0110",
    6: "0110 1001 1000 1110 1001 1001 0110",
    7: "1111 1001 0001 0010 0010 0100 0100",
    8: "0110 1001 1001 0110 1001 1001 0110",
    9: "0110 1001 1001 0111 0001 1001 0110",
}
"""The example a person sees on the right, as its 7 rows of 4 boxes (the image has no text)."""


@policy("number-checkboxes")
async def number_checkboxes(a: Adapter) -> None:
    page = await a.look()
    n = int(quoted(page.query)[0])
    boxes = checkboxes(page)
    if len(boxes) < 28:
        raise PolicyFailed(f"expected 28 checkboxes, the page shows {len(boxes)}")
    pattern = DIGITS[n].replace(" ", "")
    pairs = [(box, bit == "1") for box, bit in zip(boxes[:28], pattern, strict=True) if bool(box.value) != (bit == "1")]
    for box, on in pairs:
        await a.check(box, on)
    await submit(a)


@policy("read-table-2")
async def read_table_2(a: Adapter) -> None:
    page = await a.look()
    cells = [i for i in page.items if i.kind in ("cell", "gridcell")]
    table = {cells[k].name: cells[k + 1].name for k in range(0, len(cells) - 1, 2)}
    fields = text_fields(page)
    pairs = []
    for f in fields:
        label = "" if unnamed(f) else f.name.rstrip(":")
        if not label:  # the label is the text right before it
            before = [i for i in page.items[: f.index] if i.name and i.kind not in TEXTBOX]
            label = before[-1].name.rstrip(":") if before else ""
        if label not in table:
            raise PolicyFailed(f"no value for {label!r} in the table {table}")
        pairs.append((f, table[label]))
    await a.fill_many(pairs)
    await submit(a)


@policy("stock-market")
async def stock_market(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"less than \$(\d+(?:\.\d+)?)")
    limit = float(m.group(1))
    for _ in range(120):  # a person watching the price: a look every 0.25 s, for half a minute
        prices = [
            float(x)
            for i in page.items
            for x in re.findall(r"\$(\d+(?:\.\d+)?)", i.name)
            if i.index != query_item(page).index
        ]
        if prices and prices[0] < limit:
            await a.press(target(page, "Buy"))
            return
        await asyncio.sleep(0.25)
        page = await a.look()
    raise PolicyFailed("the price never went below the limit (or is not shown)")


async def _type(a: Adapter, item: Item, text: str) -> None:
    """Type as keys (the page listens to keydown): one key at a time, then Enter."""
    await a.type_keys(item, text)


@policy("terminal")
async def terminal(a: Adapter) -> None:
    page = await a.look()
    ext = re.search(r"extension \.(\S+)$", page.query.strip())
    box = text_fields(page)[0]
    await a.type_keys(box, "ls")
    page = await a.look()
    listing = " ".join(i.name for i in page.items)
    names = re.findall(r"[\w\-.]+", listing.split("user$ ls", 1)[-1].split("user$")[0])
    if ext:
        want = [n for n in names if n.endswith("." + ext.group(1).rstrip("."))]
    else:
        want = [n for n in names if "." not in n and n not in ("ls",)]
    if not want:
        raise PolicyFailed(f"no file to delete among {names}")
    await a.type_keys(text_fields(page)[0], f"rm {want[0]}")


@policy("phone-book")
async def phone_book(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Find (.*) in the contact book and click on their (\w+)")
    person, what = m.group(1), m.group(2).lower()
    for _ in range(12):
        if page.has(person) and query_item(page).name != person:
            anchor = next(i for i in page.find_all(person) if i.index != query_item(page).index)
            label = page.after(anchor, lambda i: norm(i.name).lower().startswith(what))
            value = label if norm(label.name).lower() != what + ":" else page.after(label, lambda i: bool(i.name))
            said = norm(value.name)
            if page.loose and said.lower().startswith(what + ":") and said.lower() != what + ":":
                # "Address: 4341 Tucker Avenue" is one line; what a person clicks is the address.
                part = said.split(":", 1)[1].strip()
                value = Item(value.index, "text", part, group=value.group, handle=(part, ""))
            await a.press(value)
            return
        await a.press(target(page, ">"))
        page = await a.look()
    raise PolicyFailed(f"{person} is on no page")


FOOD_TYPES = ("dairy", "gluten-free", "meat", "peanuts", "vegan")


def _plus_after(page: Page, dish: Item) -> Item:
    """The '+' that adds one of `dish`: the first item shown as '+' after its name."""
    plus = next((i for i in page.items[dish.index + 1 :] if norm(i.name) == "+"), None)
    if plus is None:
        shown = [i.name for i in page.items[dish.index : dish.index + 6]]
        raise PolicyFailed(f"no '+' shown apart after {dish.name!r} (shown: {shown})")
    return plus


@policy("order-food")
async def order_food(a: Adapter) -> None:
    page = await a.look()
    q = page.query
    if m := re.search(r"Order one of each item: (.*)", q):
        names = [n.strip() for n in re.split(r", ", m.group(1))]
        for name in names:
            page = await a.look()
            await a.press(_plus_after(page, page.find(lambda n, name=name: norm(n) == name)))  # type: ignore[misc]
    elif m := re.search(r"Order (\d+) items that are (\S+)", q):
        count, kind = int(m.group(1)), m.group(2)
        icon = next(
            (i for i in page.items if norm(i.name).lower() == kind and i.kind in ("img", "media", "image")), None
        )
        if icon is None:
            raise PolicyFailed(f"no dish is shown as {kind}")
        dish = next(
            i
            for i in reversed(page.items[: icon.index])
            if i.name and i.kind not in ("img", "media", "image") and norm(i.name).lower() not in FOOD_TYPES
        )
        for _ in range(count):
            page = await a.look()
            await a.press(_plus_after(page, page.find(lambda n: norm(n) == dish.name)))
    else:
        raise PolicyFailed(f"query not understood: {q!r}")
    await submit(a, None, "Order!")


@policy("buy-ticket")
async def buy_ticket(a: Adapter) -> None:
    page = await a.look()
    cheapest = "cheapest" in page.query
    shortest = "shortest" in page.query
    if "cost" in page.query:
        offers = [(int(re.sub(r"\D", "", i.name)), i) for i in page.items if re.fullmatch(r"Book for \$\d+", i.name)]
        if not offers:
            raise PolicyFailed(f"no 'Book for $…' among {page.short(30)}")
        _, best = (min if cheapest else max)(offers, key=lambda o: o[0])
    else:
        durations = []
        for i in page.items:
            d = re.fullmatch(r"(?:Duration:\s*)?(\d+)h (\d+)m", i.name)
            if d:
                durations.append((int(d.group(1)) * 60 + int(d.group(2)), i))
        if not durations:
            raise PolicyFailed(f"no durations among {page.short(30)}")
        _, at = (min if shortest else max)(durations, key=lambda o: o[0])
        best = page.after(at, lambda i: i.name.startswith("Book for"))
    await a.press(best)


def _post_of(page: Page, user: str) -> list[tuple[Item, list[Item]]]:
    """Each post whose header names `user`: its header item and the items up to the next post."""
    # A post's header is a line of text; its menu's items ("Block @user") name the user too.
    heads = [
        i
        for i in page.items
        if i.kind not in ("item", "listitem") and re.search(r"@[\w.\-]+", i.name) and i.index != query_item(page).index
    ]
    posts = []
    for k, head in enumerate(heads):
        stop = heads[k + 1].index if k + 1 < len(heads) else len(page.items)
        if user in re.findall(r"@[\w.\-]+", head.name):
            posts.append((head, page.items[head.index + 1 : stop]))
    return posts


def _control(items: list[Item], word: str) -> Item | None:
    word = word.lower()
    exact = [i for i in items if norm(i.name).lower() == word]
    return (
        (exact or [i for i in items if word in norm(i.name).lower().split()])[0]
        if (exact or [i for i in items if word in norm(i.name).lower().split()])
        else None
    )


async def _post_action(a: Adapter, page: Page, user: str, action: str, nth: int = 0) -> None:
    posts = _post_of(page, user)
    if len(posts) <= nth:
        raise PolicyFailed(f"no post #{nth + 1} by {user}")
    head, items = posts[nth]
    direct = {"Reply": "reply", "Retweet": "retweet", "Like": "like", "Share": "share"}
    if action in direct:
        hit = _control(items, direct[action])
        if hit is None:
            raise PolicyFailed(f"the post by {user} shows no {action!r} control: {[i.name for i in items][:12]}")
        await a.press(hit)
        return
    more = _control(items, "more")
    if more is None:
        raise PolicyFailed(f"the post by {user} shows no 'more' control: {[i.name for i in items][:12]}")
    await a.press(more)
    page = await a.look()
    posts = _post_of(page, user)
    head, items = posts[nth]
    # The menu reads "Block @user" where the page's own markup holds the name beside the word.
    hit = next((i for i in items if norm(i.name) == action), None) or next(
        (i for i in items if norm(i.name).startswith(action + " ")), None
    )
    if hit is None:
        raise PolicyFailed(f"the menu of the post by {user} shows no {action!r}")
    await a.press(hit)


@policy("social-media")
async def social_media(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"For the user (@\S+), click on the \"(.*)\" button")
    await _post_action(a, page, m.group(1), m.group(2))


@policy("social-media-some")
async def social_media_some(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click the \"(.*)\" button on (\d+) posts? by (@\S+) and then click Submit")
    action, count, user = m.group(1), int(m.group(2)), m.group(3)
    for k in range(count):
        await _post_action(a, await a.look() if k else page, user, action, k)
    await submit(a)


async def _open_email(a: Adapter, page: Page, sender: str) -> Page:
    hits = [i for i in page.find_all(sender) if i.index != query_item(page).index]
    if not hits:
        raise PolicyFailed(f"no email by {sender} in {page.short(30)}")
    await a.press(hits[0])
    after = await a.look()
    if page.loose and after.texts() == page.texts():
        # Nothing opened: the bridge counted the query's own bold "Audrey" as "Audrey #1" and took it.
        # As an agent would, give the next one it listed.
        await a.press(Item(hits[0].index, "text", sender, group=hits[0].group, handle=(f"{sender} #2", "")))
        after = await a.look()
    return after


def _icon(page: Page, *words: str) -> Item:
    for word in words:
        hit = _control([i for i in page.items if i.index != query_item(page).index], word)
        if hit is not None:
            return hit
    raise PolicyFailed(f"no control shown as {'/'.join(words)} among {page.short(40)}")


@policy("email-inbox", "email-inbox-delete", "email-inbox-forward", "email-inbox-reply", "email-inbox-star-reply")
async def email_inbox(a: Adapter) -> None:
    page = await a.look()
    q = page.query
    if m := re.search(r"Find the email by (.*) and reply to them with the text \"(.*)\"", q):
        page = await _open_email(a, page, m.group(1))
        await a.press(target(page, "Reply"))
        page = await a.look()
        await a.fill(text_fields(page)[-1], m.group(2))
        await a.press(_icon(await a.look(), "send", "send-reply"))
    elif m := re.search(r"Find the email by (.*) and forward that email to (.*)\.", q):
        page = await _open_email(a, page, m.group(1))
        await a.press(target(page, "Forward"))
        page = await a.look()
        await a.fill(text_fields(page)[0], m.group(2))
        await a.press(_icon(await a.look(), "send", "send-forward"))
    elif m := re.search(r"Find the email by (.*) and click the trash icon to (delete|archive) it", q):
        page = await _open_email(a, page, m.group(1))
        await a.press(_icon(page, "trash", "delete"))
    elif m := re.search(r"Find the email by (.*) and click the star icon to mark it as important", q):
        page = await _open_email(a, page, m.group(1))
        await a.press(_icon(page, "star", "important"))
    elif m := re.search(r"Find the email by (.*)", q):
        raise PolicyFailed(f"query not understood: {q!r}")
    else:
        raise PolicyFailed(f"query not understood: {q!r}")


STYLE_ICONS = {"bold": "bold", "italics": "italic", "underlined": "underline"}


@policy("text-editor")
async def text_editor(a: Adapter) -> None:
    # As a person with a keyboard: select all, or go to the word with Control+ArrowRight and
    # select it with Control+Shift+ArrowRight; then the toolbar's style button (an icon).
    page = await a.look()
    q = page.query
    m = re.search(r"(?:give|make) (?:the text (.+?)|everything) the (style|color) (\w+)", q)
    if not m:
        raise PolicyFailed(f"query not understood: {q!r}")
    word, kind, style = m.group(1), m.group(2), m.group(3)
    if kind == "color":
        raise PolicyFailed("the colour picker's swatches are named by neither server")
    editor = next((i for i in page.items if i.kind in TEXTBOX and i.index != query_item(page).index), None)
    if editor is None:
        raise PolicyFailed(f"no editor among {page.short(40)}")
    if word is None:
        await a.key("Control+a", editor)
    else:
        text = norm(str(editor.value or "")) or norm(editor.name)
        words = text.split(" ")
        if word not in words:
            raise PolicyFailed(f"{word!r} is not among the editor's words {words}")
        # Control+ArrowRight stops after each run of letters and each run of punctuation.
        stops = lambda text: len(re.findall(r"\w+|[^\w\s]+", text))  # noqa: E731
        await a.key("Control+Home", editor)
        for _ in range(stops(" ".join(words[: words.index(word)]))):
            await a.key("Control+ArrowRight")
        for _ in range(stops(word)):
            await a.key("Control+Shift+ArrowRight")
    await a.press(_icon(await a.look(), STYLE_ICONS[style]))
    await press(a, "Submit")
