"""Page-tool calls over the browser's debugging pipe, as `webmcp-bridge URL` runs them (issue 22).

Most end-to-end tests attach the bridge to a shared browser over its websocket (`--cdp-url`),
where a call's command is sent by a task of its own and a reader task reads the socket. A
browser the bridge launches is driven over its pipe instead: `invokeTool` is written by the
call's own task, the pipe's messages are handed over by the loop's reader callback, and the
bridge reads its stdin the same way. What a call guarantees must hold there too: its answer,
its deadline and the page's confirmation of the cancel, the client giving up, a dialog the
tool opens, the user activation it acts with.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.mcp_harness import McpTestClient, open_stdio_client
from tests.support.stage import Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@asynccontextmanager
async def launched(site: str, path: str, *extra: str) -> AsyncIterator[Stage]:
    """The bridge with a browser of its own on its pipe, its start page `path`; a Stage without a user."""
    command = [sys.executable, "-m", "webmcp", "--headless", *extra, site + path]
    async with open_stdio_client(command, mode="legacy") as mcp:
        yield Stage(site, None, mcp, None)  # type: ignore[arg-type]  # no shared browser, no Playwright


async def _tab(stage: Stage, tool: str) -> str:
    names = await stage.wait_tools(lambda n: any(x.endswith(f"__{tool}") for x in n))
    return next(x for x in names if x.endswith(f"__{tool}")).split("__")[0]


def _body(result: Any) -> dict[str, Any]:
    body: dict[str, Any] = result.structured_content
    return body


async def test_over_the_pipe_a_quiet_call_answers_and_a_slow_one_is_cancelled_at_its_deadline(site: str) -> None:
    async with launched(site, "/", "--tool-timeout", "2") as stage:
        win = await _tab(stage, "get_queue_summary")
        first = await stage.call(f"{win}__get_queue_summary")
        again = await stage.call(f"{win}__get_queue_summary")
        assert not first.is_error and "byStatus" in _body(first)["result"]
        assert _body(again) == _body(first), "the same answer to the same call"
        slow = await stage.call(f"{win}__slow_report", {"seconds": 30})
        assert slow.is_error and _body(slow)["code"] == "action_timeout", _body(slow)
        assert _body(slow)["pageTold"] is True and "confirmed" in _body(slow)["message"]
        await stage.wait_windows(lambda d: "Report cancelled" in str(d))
        refused = await stage.call(f"{win}__slow_report", {"seconds": "soon"})
        assert refused.is_error and _body(refused)["code"] == "validation_failed"


async def test_over_the_pipe_a_call_its_client_gives_up_is_cancelled_in_the_page(site: str) -> None:
    async with launched(site, "/") as stage:
        win = await _tab(stage, "slow_report")
        answered: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                answered.append(await stage.call(f"{win}__slow_report", {"seconds": 30}))

            tg.start_soon(call)
            await stage.wait_windows(lambda d: "Building report" in str(d))
            tg.cancel_scope.cancel()  # notifications/cancelled
        assert answered == []
        await stage.wait_windows(lambda d: "Report cancelled" in str(d))
        still = await stage.call(f"{win}__get_queue_summary")
        assert not still.is_error, "the bridge serves on"


async def test_over_the_pipe_a_busy_page_past_the_deadline_and_a_dialog_a_tool_opens(site: str) -> None:
    async with launched(site, "/danger.html", "--tool-timeout", "2") as stage:
        win = await _tab(stage, "freeze_page")
        frozen = await stage.call(f"{win}__freeze_page", {"seconds": 4})
        assert frozen.is_error and _body(frozen)["code"] == "action_timeout", _body(frozen)
        assert _body(frozen)["pageTold"] is False, "a page whose main thread is busy cannot confirm a cancel"
        purge = await _when_free(stage.mcp, f"{win}__purge_closed_tickets")
        (dialog,) = _body(purge)["openedWindowIds"]
        assert dialog.startswith("dlg-")
        accepted = await stage.call(f"{dialog}__accept")
        assert not accepted.is_error
        assert "purged" in str(_body(accepted)), "the dialog's answer carries the call's outcome"


async def _when_free(mcp: McpTestClient, name: str) -> Any:
    """Call `name` until the page has come back from its freeze (the calls before are refused by the deadline)."""
    with anyio.fail_after(30):
        while True:
            result = await mcp.client.call_tool(name, {})
            if not result.is_error:
                return result
            assert result.structured_content["code"] == "action_timeout", result.structured_content


async def test_over_the_pipe_a_tool_acts_with_the_users_activation_and_its_chooser_opens(
    site: str, tmp_path: Path
) -> None:
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "resume.txt").write_text("Ada Lovelace\n")
    async with launched(site, "/files/upload.html", "--upload-dir", str(uploads)) as stage:
        win = await _tab(stage, "attach_resume")
        # The input's click() opens a chooser only with the activation written with invokeTool.
        opened = await stage.call(f"{win}__attach_resume")
        assert not opened.is_error, _body(opened)
        (chooser,) = _body(opened)["openedWindowIds"]
        chosen = await stage.call(f"{chooser}__choose", {"paths": ["resume.txt"]})
        assert not chosen.is_error, _body(chosen)
