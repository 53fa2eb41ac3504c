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
