"""Hold-out MiniWoB++ policies (see holdout.py)."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable

from .adapters import Adapter, Item, Page, PolicyFailed, norm  # noqa: F401
from .policies import (  # noqa: F401
    TEXTBOX,
    _icon,
    _open_email,
    _post_action,
    _post_of,
    asked,
    choose_date,
    email_inbox,
    field_for,
    pick_date,
    policy,
    press,
    query_item,
    submit,
    target,
    text_fields,
    unnamed,
)

TASKS: list[str] = [
    "use-slider",
    "book-flight",
    "email-inbox-important",
    "email-inbox-noscroll",
    "email-inbox-forward-nl",
    "email-inbox-nl-turk",
    "social-media-all",
    "multi-layouts",
    "odd-or-even",
    "generate-number",
    "tic-tac-toe",
]


def _slider(page: Page) -> tuple[Item, int]:
    """The slider a person drags and the number shown beside it (its value)."""
    after = page.items[query_item(page).index + 1 :]
    slider = next((i for i in after if i.kind == "slider" or "slider" in i.name.lower()), None)
    shown = next((i for i in after if re.fullmatch(r"-?\d+", i.name)), None)
    if shown is None and slider is not None and re.fullmatch(r"-?\d+", str(slider.value or "")):
        return slider, int(slider.value)
    if shown is None:
        raise PolicyFailed(f"the slider's value is not shown: {page.short(20)}")
    return slider or shown, int(shown.name)


@policy("use-slider")
async def use_slider(a: Adapter) -> None:
    page = await a.look()
    want = int(asked(page, r"Select (-?\d+) with the slider").group(1))
    handle, now = _slider(page)
    for _ in range(abs(want - now)):
        await a.key("ArrowRight" if want > now else "ArrowLeft", handle)
    page = await a.look()
    _, now = _slider(page)
    if now != want:
        raise PolicyFailed(f"the slider shows {now}, not {want}")
    await press(a, "Submit", page)


def _place_field(page: Page, word: str) -> Item:
    """The text box a person reads as `word` ("From:"): by its name or placeholder."""
    want = word.lower().rstrip(":")
    for f in text_fields(page):
        if norm(f.name).lower().rstrip(":") == want:
            return f
    return field_for(page, word)


async def _autocomplete(a: Adapter, label: str, said: str) -> None:
    """Type what the query says into the box and take the suggestion that is that place."""
    page = await a.look()
    box = _place_field(page, label)
    await a.fill(box, said)

    def fits(name: str) -> bool:
        m = re.fullmatch(r"(.+) \(([A-Z]{3})\)", norm(name))
        return m is not None and said in (m.group(1), m.group(2), m.group(1).split(",")[0])

    hits: list[Item] = []
    for _ in range(8):  # the list opens a moment after the typing stops, as a person sees
        await asyncio.sleep(0.25)
        page = await a.look()
        hits = [i for i in page.items if fits(i.name) and i.kind not in TEXTBOX]
        if hits:
            break
    if not hits:
        raise PolicyFailed(f"no suggestion for {said!r} after typing it: {page.short(40)}")
    await a.press(hits[0])


@policy("book-flight")
async def book_flight(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Book the (cheapest|shortest) one-way flight from: (.+?) to: (.+?) on (\d\d)/(\d\d)/(\d{4})")
    what, origin, dest = m.group(1), m.group(2).strip(), m.group(3).strip()
    await _autocomplete(a, "From:", origin)
    await _autocomplete(a, "To:", dest)
    page = await a.look()
    date = next((f for f in text_fields(page) if "date" in f.name.lower()), None) or field_for(page, "Departure Date")
    await pick_date(a, date, int(m.group(4)), int(m.group(5)))
    await press(a, "Search")
    page = await a.look()
    prices = [(int(x.group(1)), i) for i in page.items if (x := re.fullmatch(r"Book flight for \$(\d+)", i.name))]
    if not prices:
        raise PolicyFailed(f"no 'Book flight for $…' among {page.short(40)}")
    if what == "cheapest":
        best = min(prices, key=lambda p: p[0])[1]
    else:
        durations = []
        for i in page.items:
            d = re.fullmatch(r"(?:Duration:\s*)?(\d+)h (\d+)m", i.name)
            if d:
                durations.append((int(d.group(1)) * 60 + int(d.group(2)), i))
        if len(durations) != len(prices):
            raise PolicyFailed(f"{len(durations)} durations for {len(prices)} flights: {page.short(60)}")
        at = min(durations, key=lambda p: p[0])[1]
        best = page.after(at, lambda i: i.name.startswith("Book flight for"))
    await a.press(best)


# email-inbox-important, email-inbox-noscroll: the dev set's query, fewer emails (or one action).
policy("email-inbox-important", "email-inbox-noscroll")(email_inbox)


# The natural-language inbox tasks: who sent the email, who gets it, what to do, read as a person reads.
_UI_WORDS = {"Primary", "Search", "Results", "Reply", "Forward", "Sender"}
_NOT_NAMES = {"Email", "E-mail", "Primary", "Inbox", "Siri", "I"}
_NAME = r"[A-Z][a-zA-Z]*(?:-[A-Z][a-zA-Z]*)*"


def _said_name(name: str) -> str:
    """A regex of `name` as a sentence says it ("Anna", "Anna's", "Annas last", glued to a word)."""
    return re.escape(name) + r"(?:s(?= ))?(?![a-z])"


def _senders(page: Page) -> list[str]:
    """The names the inbox shows (a line that is one name, not the query nor a control's word)."""
    q = query_item(page)
    names = []
    for i in page.items:
        if i.index != q.index and re.fullmatch(_NAME + r"(?: " + _NAME + r")?", i.name) and i.name not in _UI_WORDS:
            if i.name not in names:
                names.append(i.name)
    return names


def _cues(q: str, n: str) -> tuple[int, int]:
    """How much the sentence `q` reads `n` as the email's sender, and as the one it goes to."""
    n = _said_name(n)
    sender = [
        rf"\b(?:from|by) {n}",
        rf"{n}'?s\b(?! inbox)",
        rf"{n} (?:sent|wrote|wants his|e-?mail|mail)\b",
    ]
    dest = [
        rf"\bto {n}",
        rf"\b(?:[Ss]end|[Ff]orward|[Gg]ive|[Ll]et|[Pp]ut|[Ss]ure|want) {n}",
        rf"^{n} (?:wants|must|is|needs)\b",
        rf"{n}'s inbox",
        rf"[Ee]-?mail {n} the\b",
        rf"e-?mail {n}\W*$",
    ]
    return sum(bool(re.search(c, q)) for c in sender), sum(bool(re.search(c, q)) for c in dest)


def _forward_roles(q: str, senders: list[str]) -> tuple[str, str]:
    shown = [n for n in senders if re.search(_said_name(n), q)]
    if not shown:
        raise PolicyFailed(f"no sender the inbox shows is named in {q!r}")
    sender = max(shown, key=lambda n: (_cues(q, n)[0] - _cues(q, n)[1], -q.index(n)))
    others = {t for t in re.findall(_NAME, q) if t not in (sender, sender + "s") and t not in _NOT_NAMES}
    others |= {n for n in shown if n != sender}
    dest = [(d - s, t) for t in others for s, d in [_cues(q, t)] if d > 0]
    if not dest:
        raise PolicyFailed(f"no one to forward to in {q!r}")
    return sender, max(dest)[1]


async def _forward(a: Adapter, page: Page, sender: str, dest: str) -> None:
    page = await _open_email(a, page, sender)
    await a.press(target(page, "Forward"))
    page = await a.look()
    await a.fill(text_fields(page)[0], dest)
    await a.press(_icon(await a.look(), "send", "send-forward"))


async def _reply(a: Adapter, page: Page, sender: str, text: str) -> None:
    page = await _open_email(a, page, sender)
    await a.press(target(page, "Reply"))
    page = await a.look()
    await a.fill(text_fields(page)[-1], text)
    await a.press(_icon(await a.look(), "send", "send-reply"))


@policy("email-inbox-forward-nl")
async def email_inbox_forward_nl(a: Adapter) -> None:
    page = await a.look()
    sender, dest = _forward_roles(page.query, _senders(page))
    await _forward(a, page, sender, dest)


@policy("email-inbox-nl-turk")
async def email_inbox_nl_turk(a: Adapter) -> None:
    page = await a.look()
    q = page.query
    senders = _senders(page)
    msg = [m.strip() for m in re.findall(r'"+([^"]+)"+', q) if m.strip()]
    if msg:
        outside = re.sub(r'"[^"]*"', " ", q)
        named = [n for n in senders if re.search(_said_name(n), outside)]
        if not named:
            raise PolicyFailed(f"no sender the inbox shows is named in {q!r}")
        await _reply(a, page, named[0], msg[0])
        return
    low = q.lower()
    if re.search(r"delet|trash|rid of|remove|throw away|out of my inbox|recycl|don't want", low):
        action = "delete"
    elif re.search(r"import|impro|star|flag|mark", low):
        action = "star"
    else:
        sender, dest = _forward_roles(q, senders)
        await _forward(a, page, sender, dest)
        return
    named = [n for n in senders if re.search(_said_name(n), q)]
    if not named:
        raise PolicyFailed(f"no sender the inbox shows is named in {q!r}")
    page = await _open_email(a, page, named[0])
    await a.press(_icon(page, "trash", "delete") if action == "delete" else _icon(page, "star", "important"))


@policy("social-media-all")
async def social_media_all(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Click the \"(.*)\" button on all posts by (@\S+?)\.? and then click Submit")
    action, user = m.group(1), m.group(2)
    count = len(_post_of(page, user))
    if not count:
        raise PolicyFailed(f"no post by {user} among {page.short(40)}")
    for k in range(count):
        await _post_action(a, await a.look() if k else page, user, action, k)
    await submit(a)


_MOVIE = {"genre": 0, "director": 1, "year": 2, "date": 2}


def _movie_slot(words: str) -> int | None:
    low = words.lower()
    return next((k for w, k in _MOVIE.items() if w in low), None)


@policy("multi-layouts")
async def multi_layouts(a: Adapter) -> None:
    page = await a.look()
    m = asked(page, r"Search for (.*) movies directed by (.*) from year (\d+)")
    values = [m.group(1), m.group(2), m.group(3)]
    fields = text_fields(page)
    named = {f.index: _movie_slot(f.name) for f in fields if not unnamed(f)}
    slots: dict[int, int | None]
    given = sorted(v for v in named.values() if v is not None)
    if len(fields) == 3 and len(set(given)) == len(given) >= 2:
        # The server names the boxes (one left unnamed takes what is left, as a person reads it).
        left = [k for k in (0, 1, 2) if k not in given]
        slots = {f.index: named.get(f.index) if named.get(f.index) is not None else left[0] for f in fields}
    else:
        # No names: a label is the words beside its box; which side, the page's order says
        # (labels first, or boxes first with the label under each).
        start = query_item(page).index + 1
        seq = [
            i for i in page.items[start:] if i in fields or (i.kind not in TEXTBOX and _movie_slot(i.name) is not None)
        ]
        boxes_first = bool(seq) and seq[0] in fields
        slots = {}
        for k, item in enumerate(seq):
            if item in fields:
                near = seq[k + 1] if boxes_first else seq[k - 1] if k else None
                if near is not None and near not in fields:
                    slots[item.index] = _movie_slot(near.name)
        if sorted(v for v in slots.values() if v is not None) != [0, 1, 2]:
            raise PolicyFailed(f"the boxes' labels are not read: {page.short(40)}")
    await a.fill_many([(f, values[slot]) for f in fields if (slot := slots.get(f.index)) is not None])
    page = await a.look()
    last = max(f.index for f in text_fields(page))
    button = next((i for i in page.items[last + 1 :] if norm(i.name) in ("Submit", "Search", "Go!")), None)
    if button is None:
        raise PolicyFailed(f"no button after the boxes: {page.short(40)}")
    await a.press(button)


def _numbers_before(page: Page, stop: str) -> list[Item]:
    """The numbers the page shows between the query and the first item shown as `stop`."""
    start = query_item(page).index + 1
    end = next((i.index for i in page.items[start:] if norm(i.name) == stop), len(page.items))
    return [i for i in page.items[start:end] if re.fullmatch(r"-?\d+", norm(i.name))]


@policy("odd-or-even")
async def odd_or_even(a: Adapter) -> None:
    page = await a.look()
    asked(page, r"Mark the numbers below as odd or even")
    numbers = _numbers_before(page, "Submit")
    if not numbers:
        raise PolicyFailed(f"no numbers shown: {page.short(40)}")
    for k, number in enumerate(numbers):
        word = "Odd" if int(number.name) % 2 else "Even"
        await a.press(target(page if k == 0 else await a.look(), word, nth=k))
    await submit(a)


@policy("generate-number")
async def generate_number(a: Adapter) -> None:
    page = await a.look()
    q = page.query
    wanted: Callable[[int], bool]
    if m := re.search(r"(less|greater) than (-?\d+)", q):
        limit, less = int(m.group(2)), m.group(1) == "less"
        wanted = lambda n: n < limit if less else n > limit  # noqa: E731
    elif "odd number" in q:
        wanted = lambda n: n % 2 == 1  # noqa: E731
    elif "even number" in q:
        wanted = lambda n: n % 2 == 0  # noqa: E731
    else:
        raise PolicyFailed(f"query not understood: {q!r}")
    for _ in range(30):  # as a person: generate until the number fits
        await a.press(target(page, "Generate"))
        page = await a.look()
        shown = _numbers_before(page, "Generate")
        if not shown:
            raise PolicyFailed(f"no number shown after Generate: {page.short(20)}")
        if wanted(int(shown[0].name)):
            await submit(a, page)
            return
    raise PolicyFailed("no fitting number in 30 tries")


_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _board(page: Page) -> list[Item]:
    """The 3 x 3 cells in reading order: an empty cell and a marked one (the server's words for them)."""
    start = query_item(page).index + 1
    cells = [i for i in page.items[start:] if norm(i.name).lower() in ("ttt", "mark", "mark x", "mark o", "x", "o")]
    if len(cells) != 9:
        raise PolicyFailed(f"the board's 9 cells are not shown: {page.short(40)}")
    return cells


def _won(side: frozenset[int]) -> bool:
    return any(set(line) <= side for line in _LINES)


def _threat(side: frozenset[int], free: list[int]) -> int | None:
    """The free cell that completes a line of `side`, if any."""
    for line in _LINES:
        if len(set(line) & side) == 2 and (left := set(line) - side) <= set(free):
            return left.pop()
    return None


@functools.cache
def _chance(mine: frozenset[int], theirs: frozenset[int]) -> float:
    """How likely a win is with the best move now, against an opponent who takes a win or blocks
    about half the time and otherwise plays anywhere (as a person expects a casual player)."""
    free = [k for k in range(9) if k not in mine | theirs]
    if not free:
        return 0.0
    return max(_after(mine | {k}, theirs) for k in free)


@functools.cache
def _after(mine: frozenset[int], theirs: frozenset[int]) -> float:
    if _won(mine):
        return 1.0
    free = [k for k in range(9) if k not in mine | theirs]
    if not free:
        return 0.0
    smart = _threat(theirs, free)
    smart = smart if smart is not None else _threat(mine, free)
    spread = sum(_chance(mine, theirs | {k}) if not _won(theirs | {k}) else -0.2 for k in free) / len(free)
    if smart is None:
        return spread
    aimed = _chance(mine, theirs | {smart}) if not _won(theirs | {smart}) else -0.2
    return 0.5 * spread + 0.5 * aimed


def _move(mine: set[int], theirs: set[int]) -> int:
    free = [k for k in range(9) if k not in mine | theirs]
    if not free:
        raise PolicyFailed("no free cell")
    m, t = frozenset(mine), frozenset(theirs)
    return max(free, key=lambda k: (_after(m | {k}, t), -free.index(k)))


@policy("tic-tac-toe")
async def tic_tac_toe(a: Adapter) -> None:
    page = await a.look()
    asked(page, r"Playing as 'X', win a game of tic-tac-toe")
    mine: set[int] = set()
    for _ in range(5):
        cells = _board(page)
        marked = {k for k, c in enumerate(cells) if norm(c.name).lower() != "ttt"}
        # Where the server tells X from O, read it; else an O is a mark this player did not make.
        said_o = {k for k in marked if norm(cells[k].name).lower() in ("o", "mark o")}
        theirs = said_o or (marked - mine)
        if any(set(line) <= theirs for line in _LINES) or len(marked) == 9:
            return  # lost or drawn: the game is over
        k = _move(mine, theirs)
        await a.press(cells[k])
        mine.add(k)
        if any(set(line) <= mine for line in _LINES) or len(marked) + 1 == 9:
            return  # won, or the board is full
        page = await a.look()
    raise PolicyFailed("the game did not end in 5 moves")
