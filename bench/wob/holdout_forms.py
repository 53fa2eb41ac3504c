"""Hold-out MiniWoB++ policies (see holdout.py): text fields, logins, date and time boxes, reading
the page (words, tables, sums), autocomplete, search results, scrolling, guessing."""

from __future__ import annotations

import asyncio
import re

from .adapters import Adapter, Item, Page, PolicyFailed, norm
from .policies import (
    ORDINALS,
    TEXTBOX,
    asked,
    field_for,
    policy,
    query_item,
    quoted,
    submit,
    target,
    text_fields,
)

TASKS: list[str] = [
    "enter-text", "enter-text-2", "enter-password", "login-user", "login-user-popup", "enter-date",
    "enter-time", "find-word", "read-table", "use-autocomplete", "search-engine", "scroll-text",
    "scroll-text-2", "guess-number", "simple-arithmetic", "simple-algebra",
]  # fmt: skip


def _after_query(page: Page) -> list[Item]:
    return page.items[query_item(page).index + 1 :]


def _first_field(page: Page) -> Item:
    fields = text_fields(page)
    if not fields:
        raise PolicyFailed(f"no text field among {page.short(30)}")
    return fields[0]


def _ordinal(word: str) -> int:
    """'1st', '2nd', '3rd', '12th' → 0-based index."""
    return ORDINALS.get(word, int(re.sub(r"\D", "", word)) - 1)


# ---------------------------------------------------------------------------------------------
# Text fields


@policy("enter-text")
async def enter_text(a: Adapter) -> None:
    page = await a.look()
    await a.fill(_first_field(page), quoted(page.query)[0])
    await submit(a)


@policy("enter-text-2")
async def enter_text_2(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Type \"(.*)\" in all (upper|lower) case letters")
    value = m.group(1).upper() if m.group(2) == "upper" else m.group(1).lower()
    await a.fill(_first_field(page), value)
    await submit(a)


@policy("enter-password")
async def enter_password(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Enter the password \"(.*)\" into both text fields")
    fields = text_fields(page)
    if len(fields) < 2:
        raise PolicyFailed(f"expected two password fields among {page.short(30)}")
    await a.fill_many([(fields[0], m.group(1)), (fields[1], m.group(1))])
    await submit(a)


@policy("login-user")
async def login_user(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"username \"(.*)\" and the password \"(.*)\"")
    await a.fill_many([(field_for(page, "Username"), m.group(1)), (field_for(page, "Password"), m.group(2))])
    await submit(a, None, "Login")


def _popup(page: Page) -> bool:
    return any("Exit to home page?" in i.name for i in page.items)


@policy("login-user-popup")
async def login_user_popup(a: Adapter) -> None:
    """A pop-up may come up as a field is focused ("Exit to home page?" OK / Cancel): a person
    cancels it and goes on (its OK ends the episode); the form's own button is also "OK"."""
    page = await a.look()
    m = asked(page, r"username \"(.*)\" and the password \"(.*)\"")
    for label, value in (("Username", m.group(1)), ("Password", m.group(2))):
        for _ in range(2):
            await a.fill(field_for(page, label), value)
            page = await a.look()
            if not _popup(page):
                break
            await a.press(target(page, "Cancel"))
            page = await a.look()
            if norm(str(field_for(page, label).value or "")) == value:
                break
    page = await a.look()
    if _popup(page):
        raise PolicyFailed("the pop-up is still shown")
    # The form's button ("OK" or "Login"): the last of those names on the page.
    buttons = [i for i in _after_query(page) if norm(i.name) in ("OK", "Login", "Submit")]
    if not buttons:
        raise PolicyFailed(f"no login button among {page.short(30)}")
    await a.press(target(page, buttons[-1].name))


# ---------------------------------------------------------------------------------------------
# Date and time boxes


@policy("enter-date")
async def enter_date(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"(\d\d)/(\d\d)/(\d{4})")
    box = next((i for i in page.items if i.kind in (*TEXTBOX, "field") and not isinstance(i.value, bool)), None)
    if box is None:
        raise PolicyFailed(f"no date box among {page.short(30)}")
    # A date box's value is written YYYY-MM-DD (what the page reads back).
    await a.fill(box, f"{m.group(3)}-{m.group(1)}-{m.group(2)}")
    await submit(a)


@policy("enter-time")
async def enter_time(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Enter (\d{1,2}):(\d\d)\s*([AP]M)?")
    hour, minute = int(m.group(1)), int(m.group(2))
    if m.group(3) == "PM" and hour != 12:
        hour += 12
    elif m.group(3) == "AM" and hour == 12:
        hour = 0
    box = next((i for i in page.items if i.kind in (*TEXTBOX, "field") and not isinstance(i.value, bool)), None)
    if box is None:
        raise PolicyFailed(f"no time box among {page.short(30)}")
    # A time box's value is written HH:MM, 24 hours.
    await a.fill(box, f"{hour:02d}:{minute:02d}")
    await submit(a)


# ---------------------------------------------------------------------------------------------
# Reading the page


def _between_query_and_field(page: Page) -> str:
    """The text a person reads between the instruction and the first text field."""
    field = _first_field(page)
    return " ".join(
        i.name for i in page.items[query_item(page).index + 1 : field.index] if i.name and i.kind not in TEXTBOX
    )


@policy("find-word")
async def find_word(a: Adapter) -> None:
    page = await a.look()
    k = _ordinal(asked(page, r"Find the (\d+(?:st|nd|rd|th)) word").group(1))
    words = [re.sub(r"[^a-zA-Z]", "", w) for w in _between_query_and_field(page).split()]
    words = [w for w in words if w]
    if len(words) <= k:
        raise PolicyFailed(f"the paragraph has {len(words)} words, not {k + 1}: {words}")
    await a.fill(_first_field(page), words[k])
    await submit(a)


def _table(page: Page) -> dict[str, str]:
    cells = [i for i in page.items if i.kind in ("cell", "gridcell")]
    return {norm(cells[k].name): norm(cells[k + 1].name) for k in range(0, len(cells) - 1, 2)}


@policy("read-table")
async def read_table(a: Adapter) -> None:
    page = await a.look()
    key = asked(page, r"Enter the value of (.*) into the text field").group(1).strip()
    table = _table(page)
    if key not in table:
        raise PolicyFailed(f"no {key!r} in the table {table}")
    await a.fill(_first_field(page), table[key])
    await submit(a)


def _solve(expr: str) -> int:
    """'3 + 4 =' / '7 x 2 =' / 'x - 3 = 45' / '3 - x = 45' → the answer."""
    e = expr.replace("×", "x").replace("−", "-")
    if m := re.search(r"(-?\d+)\s*([-+x*])\s*(-?\d+)\s*=\s*$", e.strip()):
        x, op, y = int(m.group(1)), m.group(2), int(m.group(3))
        return x + y if op == "+" else x - y if op == "-" else x * y
    if m := re.search(r"\bx\s*([-+])\s*(\d+)\s*=\s*(-?\d+)", e):
        op, d, r = m.group(1), int(m.group(2)), int(m.group(3))
        return r - d if op == "+" else r + d
    if m := re.search(r"(\d+)\s*([-+])\s*x\s*=\s*(-?\d+)", e):
        d, op, r = int(m.group(1)), m.group(2), int(m.group(3))
        return r - d if op == "+" else d - r
    raise PolicyFailed(f"no sum read in {expr!r}")


def _problem(page: Page) -> str:
    """The sum a person reads below the instruction: a line of text, or the words that name the
    answer's box (a server may read "7 x 6 =" right before the box as its label)."""
    for i in _after_query(page):
        if "=" in i.name and re.search(r"\d", i.name):
            return i.name
    raise PolicyFailed(f"no math problem shown among {page.short(30)}")


@policy("simple-arithmetic", "simple-algebra")
async def simple_math(a: Adapter) -> None:
    page = await a.look()
    answer = _solve(_problem(page))
    await a.fill(_first_field(page), str(answer))
    await submit(a)


# ---------------------------------------------------------------------------------------------
# Autocomplete, search, scrolling, guessing


@policy("use-autocomplete")
async def use_autocomplete(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"starts with \"([^\"]*)\"(?: and ends with \"([^\"]*)\")?")
    start, end = m.group(1), m.group(2) or ""
    box = _first_field(page)
    # As a person: type the start, read the suggestions that come up, take one that fits.
    await a.fill(box, start)
    for _ in range(8):
        await asyncio.sleep(0.3)
        page = await a.look()
        field = _first_field(page)
        shown = [
            i
            for i in page.items
            if i.index != query_item(page).index
            and i.index != field.index
            and norm(i.name).startswith(start)
            and norm(i.name).endswith(end)
            and norm(i.name) != start
        ]
        if shown:
            await a.press(shown[0])
            page = await a.look()
            value = norm(str(_first_field(page).value or ""))
            if not (value.startswith(start) and value.endswith(end)):
                raise PolicyFailed(f"the suggestion {shown[0].name!r} was pressed, the box holds {value!r}")
            await submit(a, page)
            return
    raise PolicyFailed(f"no suggestion that starts with {start!r} and ends with {end!r}: {page.short(40)}")


URL = re.compile(r"^https?://\S+$")


def _results(page: Page) -> list[Item]:
    """Each search result's title: the item right before a line that is its address."""
    items = page.items
    titles = []
    for i in items:
        if URL.match(norm(i.name)):
            before = next((b for b in reversed(items[: i.index]) if b.name), None)
            if before is not None:
                titles.append(before)
    return titles


@policy("search-engine")
async def search_engine(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"enter \"(.*)\" and press \"Search\", then find and click the (\d+(?:st|nd|rd|th)) search result")
    k = _ordinal(m.group(2))
    await a.fill(_first_field(page), m.group(1))
    await submit(a, None, "Search")
    page = await a.look()
    per_page = len(_results(page))
    if not per_page:
        raise PolicyFailed(f"no search results shown: {page.short(40)}")
    want_page, nth = k // per_page + 1, k % per_page
    if want_page > 1:
        await a.press(target(page, str(want_page), after=_results(page)[-1]))
        page = await a.look()
    results = _results(page)
    if len(results) <= nth:
        raise PolicyFailed(f"page {want_page} shows {len(results)} results, not {nth + 1}")
    await a.press(results[nth])


@policy("scroll-text")
async def scroll_text(a: Adapter) -> None:
    page = await a.look()
    fields = text_fields(page)
    full = [f for f in fields if f.value]
    empty = [f for f in fields if not f.value]
    if not full or not empty:
        raise PolicyFailed(f"no text area with text or no answer field: {page.short(20)}")
    words = [re.sub(r"[^a-zA-Z0-9]", "", w) for w in str(full[0].value).split()]
    words = [w for w in words if w]
    if not words:
        raise PolicyFailed("the text area shows no words")
    await a.fill(empty[0], words[-1])
    await submit(a)


@policy("scroll-text-2")
async def scroll_text_2(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Scroll the textarea to the (top|bottom)")
    area = _first_field(page)
    down = m.group(1) == "bottom"
    try:
        await a.wheel(area, 10_000 if down else -10_000)
    except PolicyFailed:
        # No wheel: the keyboard, as a person in the text area does.
        await a.key("Control+End" if down else "Control+Home", area)
    await submit(a)


@policy("guess-number")
async def guess_number(a: Adapter) -> None:
    page = await a.look()
    lo, hi = asked(page, r"between (\d+)-(\d+)").groups()
    low, high = int(lo), int(hi)
    for _ in range(6):
        guess = (low + high) // 2
        await a.fill(_first_field(page), str(guess))
        await submit(a)
        page = await a.look()
        said = " ".join(i.name for i in _after_query(page))
        if "Correct" in said:
            return
        if mm := re.search(r"lower than (\d+)", said):
            high = int(mm.group(1)) - 1
        elif mm := re.search(r"higher than (\d+)", said):
            low = int(mm.group(1)) + 1
        else:
            # The episode may be over (a right guess ends it before the page is read again).
            return
        if low > high:
            raise PolicyFailed(f"the feedback contradicts itself: {said!r}")
    raise PolicyFailed("no right guess in 6 tries")
