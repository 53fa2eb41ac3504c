"""The demo tells what happened: its tool list split as the bridge made it, each notification counted once."""

from __future__ import annotations

import re
import subprocess
import sys

import mcp_types as types
import pytest
from mcp.client.subscriptions import ToolsListChanged

from webmcp.demo import Notifications


@pytest.mark.anyio
async def test_a_listen_stream_s_frame_is_counted_once_as_its_event() -> None:
    notes = Notifications()
    frame = types.ToolListChangedNotification(
        params=types.NotificationParams(_meta={"io.modelcontextprotocol/subscriptionId": "listen-1"})
    )
    # The client hands a stream's frame to the message handler and to the stream, as its event.
    await notes.on_message(frame)
    notes.on_event(ToolsListChanged())
    assert notes.counts["tools_list_changed"] == 1
    # A handshake session's notification has no stream: the message handler is where it is counted.
    await notes.on_message(types.ToolListChangedNotification())
    assert notes.counts["tools_list_changed"] == 2


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_demo_shows_the_tab_s_browser_actions_apart_from_its_page_tools(mode: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webmcp.demo", "--mode", mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    section = done.stdout.split("== 2.", 1)[1].split("== 3.", 1)[0]
    actions, page_tools = section.split("page tools (WebMCP):", 1)
    assert "tab-1__navigate" in actions and "tab-1__fill" in actions, section
    assert "tab-1__navigate" not in page_tools and "tab-1__list_tickets" in page_tools, section
    changed = re.search(r"notifications/tools/list_changed:\s+(\d+)", done.stdout)
    assert changed is not None and int(changed[1]) >= 1, done.stdout[-2000:]
