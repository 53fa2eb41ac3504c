"""The data requests a page sends as it loads (fetch, XMLHttpRequest), while they are unanswered.

A page that renders its data once it has fetched it (a single-page app; the sample site's
ticket page) fires its load event before that data arrives, so a navigation that answered at
load showed the page without its data ("…" where the customer's name goes). The navigator
waits, bounded, for the requests the new document sent to its own site to be answered and
rendered (`Navigator`). Requests to other sites (analytics, ads, trackers) are not waited for:
on a filtering network they may never be answered, and the page does not show them. On an IP
address or localhost, another port is another site (the bench's "CDN" and tag vendor).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio

from cdp_bridge.batch import SetUp
from cdp_bridge.connection import CDPSession
from webmcp.desktop.parts import Commit, Part

__all__ = ["DataRequests", "same_site"]

_DATA_TYPES = frozenset({"XHR", "Fetch"})
_MAX_OPEN = 256
"""Open requests remembered at most (a page that floods requests is simply not waited for beyond these)."""


def _site(host: str) -> str:
    """The last two labels of `host` (roughly its registrable domain; an IP address or a name as it is)."""
    labels = host.rstrip(".").split(".")
    if len(labels) <= 2 or all(label.isdigit() for label in labels):
        return host
    return ".".join(labels[-2:])


def _local(host: str) -> bool:
    """An IP address or localhost: one machine, where each port is a server of its own."""
    if host == "localhost" or host.endswith(".localhost") or ":" in host:  # ":": an IPv6 address
        return True
    return all(part.isdigit() for part in host.split("."))


def same_site(url: str, document_url: str) -> bool:
    """Whether `url` goes to the site of `document_url`: the same registrable domain, or on an
    IP address or localhost the same host and port (another port there is another server: a
    CDN or a vendor, as another domain would be on the web)."""
    try:
        target, document = urlsplit(url), urlsplit(document_url)
        if not target.hostname or not document.hostname:
            return False
        if _local(document.hostname) or _local(target.hostname):
            return (target.hostname, target.port) == (document.hostname, document.port)
    except ValueError:
        return False
    return _site(target.hostname) == _site(document.hostname)


class DataRequests(Part):
    """The page's own fetch/XHR requests of the document shown, sent and not yet answered (a part: parts.py)."""

    def __init__(self) -> None:
        self._open: set[str] = set()
        self._document_url = ""
        self._changed = anyio.Event()
        self._last_answered = -float("inf")

    @property
    def open(self) -> int:
        return len(self._open)

    def watch(self, session: CDPSession, main: bool) -> list[SetUp]:
        """Follow the main page's fetch and XHR requests, so a navigation waits for its data."""
        if not main:
            return []
        session.on("Network.requestWillBeSent", self.sent)
        session.on("Network.loadingFinished", self.ended)
        session.on("Network.loadingFailed", self.ended)
        # No response body is kept for the bridge: it never reads one.
        params = {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}
        return [SetUp("Network.enable", params, optional="a navigation will not wait for the page's data requests")]

    def committed(self, doc: Commit) -> None:
        self.document(doc.url)

    def document(self, url: str) -> None:
        """The main frame committed the document at `url`: the last one's requests are its own."""
        self._document_url = url
        self._open.clear()
        self._step()

    def sent(self, params: dict[str, Any]) -> None:
        """`Network.requestWillBeSent`."""
        request = params.get("request", {})
        if params.get("type") not in _DATA_TYPES or not isinstance(request, dict):
            return
        if len(self._open) >= _MAX_OPEN or not same_site(str(request.get("url", "")), self._document_url):
            return
        self._open.add(str(params.get("requestId", "")))

    def ended(self, params: dict[str, Any]) -> None:
        """`Network.loadingFinished` or `Network.loadingFailed`."""
        request_id = str(params.get("requestId", ""))
        if request_id in self._open:
            self._open.discard(request_id)
            self._last_answered = anyio.current_time()
            self._step()

    def _step(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def answered(self) -> float | None:
        """Until no request is open; when the last one was answered, or None if none was open."""
        if not self._open:
            return None
        while self._open:
            await self._changed.wait()
        return self._last_answered
