"""A scripted agent session against webmcp-bridge, printed for a human.

    webmcp-bridge --demo                   # handshake-era MCP session (default)
    python -m webmcp.demo --mode auto      # let the client pick (2026-07-28 listen streams)

It needs only the installed package (the sample site's pages are package data) and a
Chromium with WebMCP. What happens: the "Harbor Help Desk" sample site is served on
127.0.0.1 (a free port); `webmcp-bridge --headless <site>/`, from this same environment, is
started as an MCP stdio server through the official `mcp` Client; the script then plays a
short agent session:

  1. read app://windows: every window (id, title, summary, a few blocks) and operableWindowIds
  2. list the tab's tools
  3. call a read-only page tool (list_tickets)
  4. call a page tool with bad input -> validation_failed, per field
  5. navigate to /danger.html and call purge_closed_tickets, which opens confirm():
     the dialog becomes a modal window owned by the tab, the tab's tools leave
     tools/list, the dialog is the operable window; accepting it returns the
     original call's outcome
  6. open a new tab with app__open_tab
  7. count the change notifications that arrived

Closing the client closes the bridge's stdin; the bridge then stops its browser.
Exit status 0 on success, 1 with a message on stderr otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sample_site import start_site

WINDOWS_URI = "app://windows"
STEP_TIMEOUT = 15.0  # any one step (a call, a wait for the page) gives up after this
TOTAL_TIMEOUT = 90.0  # the whole session, browser start included
WIDTH = 96


class DemoFailure(Exception):
    """Something the demo expected did not happen; the message says what."""


# ---------------------------------------------------------------------------------------------
# printing


def header(n: int | str, title: str) -> None:
    print()
    print(f"== {n}. {title} ".ljust(WIDTH, "="))


def say(text: str, indent: int = 2) -> None:
    pad = " " * indent
    for line in text.splitlines() or [""]:
        print(textwrap.fill(line, WIDTH, initial_indent=pad, subsequent_indent=pad + "  ") if line else "")


def short(value: Any, limit: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def describe_block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        prefix = f"h{block['heading']} " if "heading" in block else ""
        return f"{prefix}\u201c{short(block.get('text', ''))}\u201d"
    if kind == "fields":
        items = ", ".join(f"{i.get('label')}={short(i.get('value', ''), 40)!s}" for i in block.get("items", [])[:3])
        more = len(block.get("items", [])) - 3
        return items + (f", \u2026 (+{more})" if more > 0 else "")
    if kind == "table":
        rows = block.get("rows", [])
        total = block.get("total", len(rows))
        first = " | ".join(str(c) for c in rows[0]) if rows else ""
        return f"columns {block.get('columns')}, {total} row(s); first: {short(first, 50)}"
    if kind == "list":
        items = block.get("items", [])
        total = block.get("total", len(items))
        return f"{total} item(s); first: {short(items[0] if items else '', 50)}"
    if kind == "notice":
        return f"[{block.get('severity')}] {short(block.get('text', ''))}"
    if kind == "media":
        return f"{block.get('mimeType', '')} alt=\u201c{short(block.get('alt', ''), 50)}\u201d"
    return short({k: v for k, v in block.items() if k not in ("id", "type")})


def print_window(window: dict[str, Any], max_blocks: int = 6) -> None:
    flags = "modal, owner " + str(window["ownerId"]) if window["modal"] else "tab"
    say(f"[{window['id']}] \u201c{window['title']}\u201d  ({flags}, version {window['version']})")
    say(f"summary: {window['summary']}", indent=6)
    blocks = window.get("blocks", [])
    # A few blocks that show the range: the first of each kind, in reading order.
    seen: set[str] = set()
    shown: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type", "?")
        if kind not in seen and len(shown) < max_blocks:
            seen.add(kind)
            shown.append(block)
    for block in shown:
        say(f"- {block.get('type', '?'):7} {describe_block(block)}", indent=6)
    if len(blocks) > len(shown):
        say(f"  ({len(blocks)} blocks in all)", indent=6)


def print_result(result: types.CallToolResult, indent: int = 4) -> None:
    data = result.structured_content or {}
    status = "ERROR" if result.is_error else "ok"
    first = result.content[0] if result.content else None
    say(f"-> {status}: {first.text if isinstance(first, types.TextContent) else ''}", indent)
    for key, value in data.items():
        if key == "message":
            continue
        say(f"{key}: {short(value, 200)}", indent + 4)


# ---------------------------------------------------------------------------------------------
# the MCP side


def on_a_stream(message: Any) -> bool:
    """Whether `message` is a notification of a 2026-07-28 listen stream (the client hands each one
    over twice: to the message handler, and as the stream's event)."""
    if not isinstance(message, types.Notification) or message.params is None:
        return False
    meta = message.params.meta
    return isinstance(meta, dict) and SUBSCRIPTION_ID_META_KEY in meta


class Notifications:
    """Counts change notifications (both protocol generations) and wakes waiters."""

    def __init__(self) -> None:
        self.counts = {"resource_updated": 0, "tools_list_changed": 0}
        self._changed = anyio.Event()

    def record(self, kind: str) -> None:
        self.counts[kind] += 1
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def on_message(self, message: Any) -> None:
        if on_a_stream(message):
            return  # a listen stream's frame: counted as its event (`on_event`)
        if isinstance(message, types.ResourceUpdatedNotification):
            self.record("resource_updated")
        elif isinstance(message, types.ToolListChangedNotification):
            self.record("tools_list_changed")

    def on_event(self, event: ServerEvent) -> None:
        if isinstance(event, ResourceUpdated):
            self.record("resource_updated")
        elif isinstance(event, ToolsListChanged):
            self.record("tools_list_changed")

    async def next_change(self, limit: float) -> None:
        """Return at the next notification, or after `limit` seconds anyway."""
        changed = self._changed
        with anyio.move_on_after(limit):
            await changed.wait()


class Agent:
    """The scripted agent: one MCP client and a few helpers that wait on notifications."""

    def __init__(self, client: Client, notes: Notifications) -> None:
        self.client = client
        self.notes = notes

    async def windows(self) -> dict[str, Any]:
        result = await self.client.read_resource(WINDOWS_URI)
        content = result.contents[0]
        if not isinstance(content, types.TextResourceContents):
            raise DemoFailure(f"{WINDOWS_URI} answered something other than text")
        doc: dict[str, Any] = json.loads(content.text)
        return doc

    async def tools(self) -> list[types.Tool]:
        return list((await self.client.list_tools()).tools)

    async def until(self, what: str, probe: Callable[[], Any], check: Callable[[Any], Any]) -> Any:
        """Re-run `probe` after each notification (and every 0.5 s) until `check` holds."""
        with anyio.move_on_after(STEP_TIMEOUT) as scope:
            while True:
                value = await probe()
                if check(value):
                    return value
                await self.notes.next_change(0.5)
        if scope.cancelled_caught:
            raise DemoFailure(f"timed out after {STEP_TIMEOUT:g} s waiting for {what}")

    async def call(self, name: str, args: dict[str, Any] | None = None) -> types.CallToolResult:
        print()
        say(f"call {name}({json.dumps(args or {}, ensure_ascii=False)})")
        with anyio.fail_after(STEP_TIMEOUT):
            result = await self.client.call_tool(name, args or {})
        print_result(result)
        return result


async def _listen(
    client: Client,
    notes: Notifications,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with client.listen(tools_list_changed=True, resource_subscriptions=[WINDOWS_URI]) as stream:
        task_status.started()
        async for event in stream:
            notes.on_event(event)


async def subscribe(stack: AsyncExitStack, client: Client, notes: Notifications) -> None:
    """Subscribe to app://windows the way the negotiated protocol wants it."""
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)  # end the listen stream before the client closes
        with anyio.fail_after(STEP_TIMEOUT):
            await tg.start(_listen, client, notes)
    else:
        # A raw request: Client.subscribe_resource is deprecated in this SDK.
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=WINDOWS_URI))
        await client.session.send_request(request, types.EmptyResult, request_read_timeout_seconds=STEP_TIMEOUT)


def bridge_command(site: str, browser: str | None = None) -> list[str]:
    """`webmcp-bridge --headless <site>/` run by this interpreter, so from the same installation.

    (pipx and uv put only the interpreter's own environment on its path; `-m webmcp` finds
    the package there whatever PATH holds.)
    """
    return [sys.executable, "-m", "webmcp", "--headless", *(["--browser", browser] if browser else []), site + "/"]


def expect(condition: Any, what: str) -> None:
    if not condition:
        raise DemoFailure(what)


def window_of(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def address(window: dict[str, Any]) -> str:
    for block in window.get("blocks", []):
        if block.get("type") == "fields" and block.get("id") == "address":
            return str(block["items"][0].get("value", ""))
    return ""


# ---------------------------------------------------------------------------------------------
# the session


async def session(agent: Agent, site: str) -> None:
    client = agent.client
    info = client.server_info
    server = f"{info.name} {info.version}" if info else "a server that gave no name"
    print(f"Connected: {server}, MCP protocol {client.protocol_version}")

    # 1 -----------------------------------------------------------------------------------------
    header(1, "Read app://windows")
    # Page tools arrive as the page registers them; the iframe's search_kb comes last.
    tools = await agent.until(
        "the home page's tools",
        agent.tools,
        lambda ts: {"list_tickets", "search_kb"} <= {t.name.split("__", 1)[1] for t in ts},
    )
    tab = next(t.name for t in tools if t.name.endswith("__list_tickets")).split("__")[0]
    doc = await agent.until(
        "the home tab's ticket table",
        agent.windows,
        lambda d: (
            (w := window_of(d, tab)) is not None
            and any(b["type"] == "table" and len(b["rows"]) > 1 for b in w["blocks"])
        ),
    )
    for window in doc["windows"]:
        print_window(window)
    say(f"operableWindowIds: {doc['operableWindowIds']}")

    # 2 -----------------------------------------------------------------------------------------
    header(2, f"tools/list for window {tab}")
    page_tools = [t for t in tools if t.name.startswith(tab + "__")]
    from webmcp.tools.records import records_for  # noqa: PLC0415 - the bridge's own actions, only here

    actions = {r.action for r in records_for("tab")}
    browser_actions = [t for t in page_tools if t.name.split("__", 1)[1] in actions]
    say(f"browser actions: {', '.join(t.name for t in browser_actions)}")
    say("page tools (WebMCP):")
    for t in page_tools:
        if t in browser_actions:
            continue
        hints = t.annotations
        marks = [
            m
            for m, on in (
                ("read-only", hints and hints.read_only_hint),
                ("destructive", hints and hints.destructive_hint),
            )
            if on
        ]
        say(f"{t.name:30} {short(t.description or '', 46):46} {', '.join(marks)}", 4)
    others = [t.name for t in tools if not t.name.startswith(tab + "__")]
    say(f"app-level: {', '.join(others)}")

    # 3 -----------------------------------------------------------------------------------------
    header(3, "Call a read-only page tool")
    result = await agent.call(f"{tab}__list_tickets", {"status": "open"})
    expect(not result.is_error, f"list_tickets failed: {result.structured_content}")
    tickets = result.structured_content["result"]["tickets"]
    say(f"{len(tickets)} open tickets:", 4)
    for ticket in tickets:
        say(f"#{ticket['id']}  {ticket['priority']:6}  {ticket['subject']}  ({ticket['customer']})", 6)

    # 4 -----------------------------------------------------------------------------------------
    header(4, "Call a page tool with bad input")
    result = await agent.call(f"{tab}__close_ticket", {"id": "one-oh-one"})
    expect(
        result.is_error and result.structured_content.get("code") == "validation_failed",
        f"expected validation_failed, got {result.structured_content}",
    )
    say("The bridge checked the input against the tool's inputSchema; the page was never called.", 4)

    # 5 -----------------------------------------------------------------------------------------
    header(5, "A tool that opens a confirm() dialog")
    result = await agent.call(f"{tab}__navigate", {"url": site + "/danger.html"})
    expect(not result.is_error, f"navigate failed: {result.structured_content}")
    purge = f"{tab}__purge_closed_tickets"
    await agent.until("purge_closed_tickets on /danger.html", agent.tools, lambda ts: any(t.name == purge for t in ts))
    result = await agent.call(purge)
    expect(not result.is_error, f"purge_closed_tickets failed: {result.structured_content}")
    opened = result.structured_content.get("openedWindowIds") or []
    expect(opened, "the call did not report the dialog it opened")
    dialog = opened[0]
    doc = await agent.until(
        f"dialog {dialog} in app://windows",
        agent.windows,
        lambda d: window_of(d, dialog) is not None and dialog in d["operableWindowIds"],
    )
    print()
    say("app://windows now:")
    for window in doc["windows"]:
        print_window(window, max_blocks=3)
    modal = window_of(doc, dialog)
    assert modal is not None
    expect(modal["modal"] is True and modal["ownerId"] == tab, f"dialog window is not a modal of {tab}: {modal}")
    say(f"operableWindowIds: {doc['operableWindowIds']}   ({tab} is blocked by {dialog})")
    names = [t.name for t in await agent.tools()]
    tab_left = [n for n in names if n.startswith(tab + "__")]
    say(f"tools/list: {', '.join(names)}")
    say(f"tools of {tab} listed now: {len(tab_left)} (it had {len(page_tools)} on the home page)")
    expect(not tab_left, f"the blocked tab still lists tools: {tab_left}")
    result = await agent.call(f"{dialog}__accept")
    expect(not result.is_error, f"accept failed: {result.structured_content}")
    original = (result.structured_content.get("result") or {}).get("originalCall")
    if original is None:
        raise DemoFailure("the accept answer carries no originalCall")
    outcome = original.get("result", original.get("error"))
    say(f"=> the original {original.get('tool')} call finished with: {json.dumps(outcome)}", 4)
    names = await agent.until(f"{tab}'s tools to return", agent.tools, lambda ts: any(t.name == purge for t in ts))
    doc = await agent.windows()
    say(
        f"after the dialog: operableWindowIds {doc['operableWindowIds']}, "
        f"{sum(t.name.startswith(tab + '__') for t in names)} tools of {tab} listed again"
    )

    # 6 -----------------------------------------------------------------------------------------
    header(6, "Open a new tab")
    url = site + "/ticket.html?id=101"
    result = await agent.call("app__open_tab", {"url": url})
    expect(not result.is_error, f"app__open_tab failed: {result.structured_content}")
    new_tab = (result.structured_content.get("openedWindowIds") or [None])[0]
    expect(new_tab, "app__open_tab answered no window id")
    await agent.until(
        f"{new_tab}'s page tool",
        agent.tools,
        lambda ts: any(t.name == f"{new_tab}__ticket_details" for t in ts),
    )
    doc = await agent.until(
        f"{new_tab}'s page",
        agent.windows,
        lambda d: (w := window_of(d, new_tab)) is not None and address(w).startswith(url) and "#101" in w["summary"],
    )
    print()
    window = window_of(doc, new_tab)
    assert window is not None
    print_window(window, max_blocks=4)
    say(f"operableWindowIds: {doc['operableWindowIds']}")

    # 7 -----------------------------------------------------------------------------------------
    header(7, "Change notifications received")
    say(f"notifications/resources/updated (app://windows): {agent.notes.counts['resource_updated']}")
    say(f"notifications/tools/list_changed:                {agent.notes.counts['tools_list_changed']}")
    expect(agent.notes.counts["resource_updated"] > 0, "no resources/updated notification arrived")
    expect(agent.notes.counts["tools_list_changed"] > 0, "no tools/list_changed notification arrived")


async def run(mode: str, browser: str | None = None) -> None:
    """Serve the sample site, start the bridge on it and play the session; raises DemoFailure."""
    started = time.monotonic()
    runner, site = await start_site("127.0.0.1", 0)
    try:
        command = bridge_command(site, browser)
        print(f"Sample site: {site}/")
        print(f"Bridge:      {' '.join(command)}")
        notes = Notifications()
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        with anyio.fail_after(TOTAL_TIMEOUT):
            async with AsyncExitStack() as stack:
                # cache=None: a cached read could hide the state a notification announced.
                client = await stack.enter_async_context(
                    Client(
                        params,
                        mode=mode,
                        cache=None,
                        message_handler=notes.on_message,
                        read_timeout_seconds=STEP_TIMEOUT,
                    )
                )
                await subscribe(stack, client, notes)
                await session(Agent(client, notes), site)
        print()
        print(f"Done in {time.monotonic() - started:.1f} s; the bridge and its browser have stopped.")
    finally:
        with anyio.CancelScope(shield=True):
            await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    """`python -m webmcp.demo [--mode MODE] [--browser PATH]`; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m webmcp.demo", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--mode",
        default="legacy",
        help='MCP connect mode: "legacy" (handshake, default), "auto", or a protocol version',
    )
    parser.add_argument("--browser", metavar="PATH", help="the browser the bridge launches")
    args = parser.parse_args(argv)
    return play(args.mode, args.browser)


def play(mode: str = "legacy", browser: str | None = None) -> int:
    """Run the demo (`webmcp-bridge --demo`); 0 when every step did what it should, else 1."""
    try:
        anyio.run(run, mode, browser, backend="asyncio")
    except KeyboardInterrupt:
        return 130
    except DemoFailure as exc:
        print(f"\ndemo failed: {exc}", file=sys.stderr)
        return 1
    except TimeoutError:
        print(f"\ndemo failed: the session did not finish within {TOTAL_TIMEOUT:g} s", file=sys.stderr)
        return 1
    except BaseException as exc:  # noqa: BLE001 - report anything else plainly
        cause = exc
        while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
            cause = cause.exceptions[0]
        if isinstance(cause, DemoFailure):
            print(f"\ndemo failed: {cause}", file=sys.stderr)
        elif "Connection closed" in str(cause):
            print(
                "\ndemo failed: the bridge closed the MCP connection (its own message, if any, is above)",
                file=sys.stderr,
            )
        else:
            print(f"\ndemo failed: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
