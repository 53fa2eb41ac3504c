"""Self-verifying UI-context ids: tell "issued here, now gone" from "never issued" without a table.

An element id carries what is needed to find the element again and a MAC over it:

    e-<tab>-<doc>-<node>-<mac>      an element: tab number, document key, backend node id
    d-<tab>-<doc>-<mac>             a tab's document

`<doc>` is a short digest of the main frame's loader id, so a node number that a new
document (or a new renderer process) reuses is never mistaken for the old element.
`<mac>` is the first 10 characters of base32(HMAC-SHA256(secret, payload)), with a
secret drawn at random when the provider starts: an id from an earlier run, or one
assembled by hand, fails verification and is refused, while an id this run issued always
verifies and is then answered `gone` if its element left. Nothing is stored per id.

Tab ids are the bridge's window ids (`tab-3`), windows are `win-<browser window id>`;
those are checked against what the provider has seen instead (a handful per run).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

__all__ = ["ElementRef", "IdMinter", "doc_digest"]

_MAC_CHARS = 10
_ELEMENT = re.compile(r"^e-(\d+)-([a-z2-7]{8})-(\d+)-([a-z2-7]{10})$")
_DOCUMENT = re.compile(r"^d-(\d+)-([a-z2-7]{8})-([a-z2-7]{10})$")


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def doc_digest(document_key: str) -> str:
    """An 8-character, name-safe digest of a document key (the main frame's loader id)."""
    return _b32(hashlib.sha256(document_key.encode()).digest())[:8]


@dataclass(frozen=True, slots=True)
class ElementRef:
    """What a verified id names: a document of a tab, and maybe one node in it."""

    tab_number: int
    doc: str
    backend_node_id: int | None
    """None for a document id."""

    @property
    def tab_id(self) -> str:
        """The bridge's window id of the tab (`tab-3`)."""
        return f"tab-{self.tab_number}"


class IdMinter:
    """Mints and verifies element and document ids for one run of the provider."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)

    def _mac(self, payload: str) -> str:
        return _b32(hmac.new(self._secret, payload.encode(), hashlib.sha256).digest())[:_MAC_CHARS]

    def element(self, tab_number: int, doc: str, backend_node_id: int) -> str:
        """The id of node `backend_node_id` in document `doc` (a `doc_digest`) of tab `tab_number`."""
        payload = f"e|{tab_number}|{doc}|{backend_node_id}"
        return f"e-{tab_number}-{doc}-{backend_node_id}-{self._mac(payload)}"

    def document(self, tab_number: int, doc: str) -> str:
        """The id of document `doc` of tab `tab_number`."""
        return f"d-{tab_number}-{doc}-{self._mac(f'd|{tab_number}|{doc}')}"

    def verify(self, element_id: str) -> ElementRef | None:
        """What `element_id` names if this run issued it, else None (forged, foreign, or malformed)."""
        match = _ELEMENT.match(element_id)
        if match is not None:
            tab, doc, node, mac = match.groups()
            expected = self._mac(f"e|{int(tab)}|{doc}|{int(node)}")
            # Compare the canonical form too, so "e-03-…" cannot pass as "e-3-…".
            if hmac.compare_digest(mac, expected) and element_id == self.element(int(tab), doc, int(node)):
                return ElementRef(int(tab), doc, int(node))
            return None
        match = _DOCUMENT.match(element_id)
        if match is not None:
            tab, doc, mac = match.groups()
            if hmac.compare_digest(mac, self._mac(f"d|{int(tab)}|{doc}")) and element_id == self.document(
                int(tab), doc
            ):
                return ElementRef(int(tab), doc, None)
        return None


def tab_number(tab_id: str) -> int | None:
    """3 for `tab-3`; None for anything that is not a tab window id."""
    match = re.fullmatch(r"tab-(\d+)", tab_id)
    return int(match.group(1)) if match else None
