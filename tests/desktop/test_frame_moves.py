"""`FrameMoves`: which frames an incremental read may not name elements of (a navigation is under way
or came since the take), from the session's events and the navigating commands the tab sends."""

from __future__ import annotations

import anyio
import pytest

from webmcp.desktop.observer_take import FrameMoves

pytestmark = pytest.mark.anyio


def test_a_frame_nobody_navigated_keeps_its_stamp() -> None:
    moves = FrameMoves()
    stamp = moves.stamp("F")
    assert stamp == 0
    assert moves.still("F", stamp)


def test_a_navigation_started_or_committed_since_the_stamp_is_seen() -> None:
    moves = FrameMoves()
    stamp = moves.stamp("F")
    moves.started({"frameId": "F", "navigationType": "differentDocument"})
    assert moves.stamp("F") is None, "while it navigates, no stamp"
    assert not moves.still("F", stamp)
    moves.committed({"frame": {"id": "F"}})
    assert moves.stamp("F") is not None
    assert not moves.still("F", stamp), "another document since"
    assert moves.still("G", moves.stamp("G")), "other frames are not concerned"


def test_an_aborted_navigation_leaves_the_document_as_it_was() -> None:
    moves = FrameMoves()
    moves.started({"frameId": "F", "navigationType": "differentDocument"})
    moves.stopped({"frameId": "F"})
    stamp = moves.stamp("F")
    assert stamp is not None
    assert moves.still("F", stamp)


def test_a_move_within_the_document_changes_nothing() -> None:
    moves = FrameMoves()
    stamp = moves.stamp("F")
    moves.started({"frameId": "F", "navigationType": "sameDocument"})
    assert moves.still("F", stamp)


async def test_a_navigating_command_in_flight_counts_before_the_browser_reports_it() -> None:
    # The browser holds the commands sent behind `Page.navigate` until the new document commits:
    # a take answered while it is in flight must not be read, even before `frameStartedNavigating`.
    moves = FrameMoves()
    stamp = moves.stamp("F")
    async with moves.sending("F"):
        assert moves.stamp("F") is None
        assert not moves.still("F", stamp)
    assert not moves.still("F", stamp), "what was taken before the command stays unread"
    fresh = moves.stamp("F")
    assert fresh is not None
    assert moves.still("F", fresh)


async def test_a_navigation_waits_for_the_reads_under_way_of_its_frame() -> None:
    # A queryAXTree unanswered when its document goes crashes the renderer: the navigation waits.
    moves = FrameMoves()
    order: list[str] = []

    async def read() -> None:
        with moves.reading("F"):
            await anyio.sleep(0.05)
            order.append("read answered")

    async def navigate() -> None:
        await anyio.sleep(0.01)
        async with moves.sending("F", budget=5):
            order.append("navigate sent")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(navigate)
    assert order == ["read answered", "navigate sent"]


async def test_a_navigation_waits_no_longer_than_its_budget() -> None:
    moves = FrameMoves()
    with moves.reading("F"):
        with anyio.fail_after(2):
            async with moves.sending("F", budget=0.05):
                pass
