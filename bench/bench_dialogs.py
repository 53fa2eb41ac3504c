"""End-to-end times of the dialog flows (issue 3), each from the agent's first call to the
state it waits for, through a real MCP client, the bridge on stdio, and headless Chromium.

    .venv/bin/python bench/bench_dialogs.py [-n 10]

Prints a markdown table of medians and maxima; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # `python bench/x.py` from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdp_bridge.launcher import LaunchOptions, launch_browser  # noqa: E402
from tests.support.stage import Stage, open_stage, run_site  # noqa: E402


def _dialogs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"]]


async def _goto(stage: Stage, win: str, path: str, tool: str) -> None:
    await stage.call(f"{win}__navigate", {"url": stage.site + path})
    await stage.wait_tools(lambda names: f"{win}__{tool}" in names)


async def confirm_from_tool(stage: Stage, win: str) -> None:
    """Tool opens confirm() → dialog window → accept → original result delivered."""
    opened = await stage.call(f"{win}__purge_closed_tickets")
    (dlg,) = opened.structured_content["openedWindowIds"]
    answer = await stage.call(f"{dlg}__accept")
    assert "result" in answer.structured_content["result"]["originalCall"]


async def prompt_from_tool(stage: Stage, win: str) -> None:
    opened = await stage.call(f"{win}__rename_queue")
    (dlg,) = opened.structured_content["openedWindowIds"]
    answer = await stage.call(f"{dlg}__accept", {"text": "Tier 2"})
    assert answer.structured_content["result"]["originalCall"]["result"] == {"name": "Tier 2"}


async def alert_from_tool(stage: Stage, win: str) -> None:
    opened = await stage.call(f"{win}__notify_agent", {"message": "hello"})
    (dlg,) = opened.structured_content["openedWindowIds"]
    await stage.call(f"{dlg}__dismiss")


async def confirm_by_user_answered_by_hand(stage: Stage, win: str) -> None:
    """The user clicks a button that confirms; the window appears; the user dismisses it."""
    page = await stage.user_page("/danger.html")
    got = anyio.Event()
    holder: list[Any] = []
    page.once("dialog", lambda d: (holder.append(d), got.set()))
    async with anyio.create_task_group() as tg:
        tg.start_soon(page.click, "#purge-button")
        await stage.wait_windows(lambda d: _dialogs(d))
        await got.wait()
        await holder[0].dismiss()
    await stage.wait_windows(lambda d: not _dialogs(d) and win in d["operableWindowIds"])


async def beforeunload_on_navigate(stage: Stage, win: str) -> None:
    page = await stage.user_page("/danger.html")
    await page.click("#unsaved")
    leave = await stage.call(f"{win}__navigate", {"url": stage.site + "/danger.html?again"})
    (dlg,) = leave.structured_content["openedWindowIds"]
    await stage.call(f"{dlg}__dismiss")
    await stage.wait_windows(lambda d: not _dialogs(d))
    await page.click("#unsaved")  # disarm, so the next navigation leaves freely


async def in_page_modal(stage: Stage, win: str) -> None:
    await stage.call(f"{win}__open_editor")
    doc = await stage.wait_windows(lambda d: _dialogs(d))
    (modal,) = _dialogs(doc)
    await stage.wait_tools(lambda n: f"{modal['id']}__save_edit" in n)
    await stage.call(f"{modal['id']}__save_edit", {"name": "Tier 3", "sla": 8})
    await stage.wait_windows(lambda d: not _dialogs(d))


FLOWS: list[tuple[str, str, str, Callable[[Stage, str], Awaitable[None]]]] = [
    (
        "confirm() from a page tool, accepted, original result delivered",
        "/danger.html",
        "purge_closed_tickets",
        confirm_from_tool,
    ),
    ("prompt() from a page tool, answered with text", "/danger.html", "rename_queue", prompt_from_tool),
    ("alert() from a page tool, dismissed", "/danger.html", "notify_agent", alert_from_tool),
    (
        "confirm() opened by the user, answered by hand, tab operable again",
        "/danger.html",
        "purge_closed_tickets",
        confirm_by_user_answered_by_hand,
    ),
    ("beforeunload on navigate, dismissed (stay)", "/danger.html", "purge_closed_tickets", beforeunload_on_navigate),
    ("in-page <dialog> modal: open, save through its form tool, closed", "/modal.html", "open_editor", in_page_modal),
]


async def main(runs: int) -> None:
    rows = []
    with run_site() as site:
        browser = await launch_browser(LaunchOptions(headless=True, debugging="port"))
        try:
            async with open_stage(site, browser, "auto") as stage:
                doc = await stage.wait_windows(lambda d: any(not w["modal"] for w in d["windows"]))
                win = next(w["id"] for w in doc["windows"] if not w["modal"])
                for label, path, tool, flow in FLOWS:
                    await _goto(stage, win, path, tool)
                    times = []
                    for _ in range(runs):
                        started = time.perf_counter()
                        await flow(stage, win)
                        times.append((time.perf_counter() - started) * 1000)
                        await stage.wait_tools(lambda names, t=tool: f"{win}__{t}" in names)
                    rows.append((label, statistics.median(times), max(times)))
        finally:
            await browser.close()
    print(f"| dialog flow (runs={runs}) | median ms | max ms |\n|---|---:|---:|")
    for label, median, worst in rows:
        print(f"| {label} | {median:.0f} | {worst:.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=10)
    anyio.run(main, parser.parse_args().runs)
