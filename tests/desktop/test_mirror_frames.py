"""The tab's frame → origin map stays bounded however many iframes its pages had (issue 22 item 5)."""

from __future__ import annotations

from typing import cast

from cdp_bridge.connection import CDPSession
from tests.support.sessions import EventSession
from webmcp.desktop.mirror import GONE_FRAMES_KEEP, ToolMirror


def test_removed_iframes_are_forgotten_past_a_bound_and_live_ones_are_kept() -> None:
    session = EventSession()
    mirror = ToolMirror(set(), lambda: None)
    mirror.watch(cast(CDPSession, session))
    mirror.frames_show({"MAIN": "http://127.0.0.1:1"})
    documents = 3 * GONE_FRAMES_KEEP
    for number in range(documents):  # each document has one iframe, removed when the next comes
        frame = f"F{number}"
        mirror.frames_show({frame: "https://ads.example"})
        session.emit("Page.frameDetached", {"frameId": frame, "reason": "remove"})
    assert len(mirror.frame_origins) <= GONE_FRAMES_KEEP + 1
    assert mirror.origin_of("MAIN") == "http://127.0.0.1:1"
    # The most recently removed frame is still known (a late download event may name it).
    assert mirror.origin_of(f"F{documents - 1}") == "https://ads.example"
    assert mirror.origin_of("F0") == ""


def test_a_frame_that_moves_to_another_process_keeps_its_origin() -> None:
    session = EventSession()
    mirror = ToolMirror(set(), lambda: None)
    mirror.watch(cast(CDPSession, session))
    mirror.frames_show({"OOPIF": "https://maps.example"})
    for _ in range(2 * GONE_FRAMES_KEEP):
        session.emit("Page.frameDetached", {"frameId": "OOPIF", "reason": "swap"})
        mirror.frames_show({"other": "https://x.example"})
        session.emit("Page.frameDetached", {"frameId": "other", "reason": "remove"})
    assert mirror.origin_of("OOPIF") == "https://maps.example"


class _Session(EventSession):
    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.target_id = session_id


def test_an_iframe_that_moves_to_its_own_process_keeps_the_tools_its_new_process_announced() -> None:
    """The order the extension relay met (1 run in ~10 under load): the out-of-process iframe's
    session announces its new document's tool before the tab's session reports the frame's swap.
    The swap takes the tools the frame registered in the tab's process, not the new ones."""
    tab, child = _Session("tab"), _Session("child")
    mirror = ToolMirror(set(), lambda: None)
    mirror.watch(cast(CDPSession, tab), main=True)
    mirror.watch(cast(CDPSession, child))
    tool = {"description": "Search the knowledge base", "inputSchema": {"type": "object"}}
    tab.emit("WebMCP.toolsAdded", {"tools": [{**tool, "name": "old_search", "frameId": "KB"}]})
    child.emit("WebMCP.toolsAdded", {"tools": [{**tool, "name": "search_kb", "frameId": "KB"}]})
    tab.emit("Page.frameDetached", {"frameId": "KB", "reason": "swap"})
    assert [t.name for t in mirror.listed()[0]] == ["search_kb"]
    # Removed, the frame's tools go whichever session announced them.
    tab.emit("Page.frameDetached", {"frameId": "KB", "reason": "remove"})
    assert mirror.listed()[0] == []
