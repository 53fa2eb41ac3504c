"""Names for downloaded files: the page's suggestion made safe to be a file in the download folder.

A page names its download (`Content-Disposition`, `<a download>`); Chromium cleans the name
a little, the bridge cleans it again by its own rules, pure and tested without a browser:
no path separators or `..` (a name is one file, in the folder), no control or bidirectional
override characters, none of the characters Windows refuses, no reserved device names (CON,
NUL, COM1…), no leading dots (a hidden file), at most `MAX_NAME_BYTES` of UTF-8 with the
extension kept, and never empty.
"""

from __future__ import annotations

import re

__all__ = ["MAX_NAME_BYTES", "sanitise_name", "unique_name"]

MAX_NAME_BYTES = 120
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_FALLBACK = "download"


def sanitise_name(suggested: str) -> str:
    """A safe file name for `suggested` (the page's or Chromium's), as described above."""
    name = _INVISIBLE.sub("", suggested)
    name = _UNSAFE.sub("_", name)
    name = re.sub(r"\.{2,}", ".", name)  # no `..` left anywhere
    name = name.strip(" .")
    if _RESERVED.match(name):
        name = f"_{name}"
    if not name.strip("_"):
        name = _FALLBACK
    return _fit(name)


def _fit(name: str) -> str:
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or len(ext) > 16:
        stem, ext = name, ""
    suffix = f".{ext}" if ext else ""
    room = MAX_NAME_BYTES - len(suffix.encode("utf-8"))
    return stem.encode("utf-8")[:room].decode("utf-8", "ignore").rstrip(" .") + suffix


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, or `name (2).ext`, `name (3).ext`… the first not in `taken` (compared case-blind)."""
    lowered = {t.lower() for t in taken}
    if name.lower() not in lowered:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    suffix = f".{ext}" if ext else ""
    n = 2
    while True:
        candidate = _fit(f"{stem} ({n}){suffix}")
        if candidate.lower() not in lowered:
            return candidate
        n += 1
