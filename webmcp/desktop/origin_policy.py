"""Which URLs the agent may open: local schemes refused by default, origin allow/block globs. Pure.

A page can ask the agent to open `file:///etc/passwd` or `chrome://settings`; the bridge
decides from the URL alone, before the browser is asked (`navigate`, `app__open_tab`), and
the same decision tells the desktop to show a page that is already open (the user went
there, or a redirect did) as a blocked window: title and a notice, no content, no tools.

Rules, in order:
1. `about:blank` is always allowed (a new tab starts there).
2. Schemes: `http`/`https` are web schemes; `file`, `chrome`, `chrome-extension`,
   `chrome-untrusted`, `devtools`, `view-source`, `filesystem`, `blob` and other `about:`
   pages are local and allowed only with `allow_local` (`--allow-local-schemes`);
   `javascript:` and `data:` run or render attacker-chosen content in the tab's origin
   context and are never allowed; any other scheme is refused.
3. `--block-origin` globs refuse a matching origin (`https://*.example.com`, `*://ads.*`).
4. With `--allow-origin` globs, only matching origins are allowed; without them, all.
A block wins over an allow.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Decision", "OriginPolicy", "LOCAL_SCHEMES", "NEVER_SCHEMES", "WEB_SCHEMES"]

WEB_SCHEMES = frozenset({"http", "https"})
LOCAL_SCHEMES = frozenset(
    {"file", "chrome", "chrome-extension", "chrome-untrusted", "devtools", "view-source", "filesystem", "blob", "about"}
)
NEVER_SCHEMES = frozenset({"javascript", "data", "vbscript"})
_MAX_URL = 8192


@dataclass(frozen=True)
class Decision:
    """`allowed`, and in words why not (shown to the agent as the notice)."""

    allowed: bool
    reason: str = ""
    origin: str = ""


@dataclass(frozen=True)
class OriginPolicy:
    """The switches `--allow-local-schemes`, `--allow-origin GLOB…` and `--block-origin GLOB…`."""

    allow_local: bool = False
    allow: Sequence[str] = field(default=())
    block: Sequence[str] = field(default=())

    def check(self, url: str) -> Decision:
        """May the agent open `url`, or may a tab at `url` be shown with content and tools?"""
        if not isinstance(url, str) or not url.strip():
            return Decision(False, "The URL is empty.")
        if len(url) > _MAX_URL:
            return Decision(False, f"The URL is longer than {_MAX_URL} characters.")
        url = url.strip()
        if url == "about:blank":
            return Decision(True, origin="about:blank")
        try:
            parts = urlsplit(url)
        except ValueError:
            return Decision(False, "The URL cannot be parsed.")
        scheme = parts.scheme.lower()
        if scheme in NEVER_SCHEMES:
            return Decision(False, f"{scheme}: URLs are never opened by the bridge.")
        if scheme in LOCAL_SCHEMES:
            if not self.allow_local:
                return Decision(
                    False,
                    f"{scheme}: is a local scheme; the bridge opens it only when started with --allow-local-schemes.",
                    origin=f"{scheme}:",
                )
            origin = f"{scheme}://{parts.netloc.lower()}" if parts.netloc else f"{scheme}:"
        elif scheme in WEB_SCHEMES:
            if not parts.hostname:
                return Decision(False, "The URL has no host.")
            origin = f"{scheme}://{parts.netloc.rsplit('@', 1)[-1].lower()}"
        else:
            return Decision(False, f"The bridge opens only http(s) URLs, not {scheme or 'scheme-less'} ones.")
        for pattern in self.block:
            if _matches(pattern, origin):
                return Decision(False, f"The origin {origin} is blocked (--block-origin {pattern}).", origin)
        if self.allow and not any(_matches(p, origin) for p in self.allow):
            return Decision(False, f"The origin {origin} is not in --allow-origin.", origin)
        return Decision(True, origin=origin)


def _matches(pattern: str, origin: str) -> bool:
    """Glob over the origin; a pattern without a scheme matches any scheme, without a port any port."""
    pattern = pattern.strip().lower().rstrip("/")
    if "://" not in pattern and not pattern.endswith(":"):
        pattern = "*://" + pattern
    if fnmatch.fnmatchcase(origin, pattern):
        return True
    host_only = origin.rsplit(":", 1)[0] if origin.count(":") == 2 else origin
    return fnmatch.fnmatchcase(host_only, pattern)
