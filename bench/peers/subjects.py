"""The three MCP servers under test, each behind the same small interface.

* `Bridge`: `.venv/bin/webmcp-bridge --headless URL`, the way a user runs it. State is
  `resources/read app://windows`; a page tool is the MCP tool `{window}__{name}`.
* `PlaywrightMcp` (`@playwright/mcp`): the page's WebMCP tools appear as MCP tools
  `webmcp_{name}` once a snapshot has collected them (navigate takes one). State is
  `browser_snapshot`; a dialog is answered with `browser_handle_dialog`.
* `ChromeDevtoolsMcp` (`chrome-devtools-mcp`, `--categoryExperimentalWebmcp`): page tools are
  not MCP tools; `list_webmcp_tools` lists them and `execute_webmcp_tool` calls one. Every page
  tool needs `pageId` (from `list_pages`). State is `take_snapshot`; dialogs: `handle_dialog`.

For pages other than the sample site (`bench/real_pages.py`): `ready()` instead of `start()`,
`read_all()` for everything the server hands out of the page (the bridge: every page of
`read_content`; a peer: its snapshot, which is all of it), and `shown()` for the title, the
address and the plain text a state shows. Each takes a `browser` executable, so a wrapper
can add Chromium switches (the bridge has no flag for them).

Each method raises `StepFailed` (or times out) when the server cannot do the step.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from .mcp_subject import McpSubject, StepFailed

__all__ = ["Bridge", "ChromeDevtoolsMcp", "PlaywrightMcp", "Shown", "Subject", "CHROMIUM", "PEERS_DIR"]

ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = ROOT / "bench" / "peers" / "node_modules"
CHROMIUM = os.environ.get("WEBMCP_BRIDGE_BROWSER", "/usr/bin/chromium")
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Shown:
    """What one state says of the page it shows."""

    title: str
    url: str
    text: str
    """The words an agent reads, without the format's own syntax where it is JSON."""


class Subject(McpSubject):
    """A server under test. Subclasses say how each step is done with that server's own tools."""

    key = ""
    label = ""
    late_why = ""
    """Why this server cannot announce a late tool to an idle client, when it cannot (from its source)."""

    async def start(self, site: str, started: float) -> tuple[float, bool, float]:
        """After open(): (start → first tools/list answered, that list holds the page's tools,
        start → page tools callable), `started` being the perf_counter() before open()."""
        raise NotImplementedError

    async def start_state(self, url: str, tool: str, started: float) -> tuple[float, str]:
        """After open(), on a page the server was not started for (issue 22): seconds from
        `started` until both the page's state and its tool `tool` are in hand, and that state.
        The bridge has `url` on its command line; a peer navigates there, then snapshots."""
        raise NotImplementedError

    async def navigate(self, url: str, timeout: float = 60) -> str:
        """Open `url` in the tab; the answer. `timeout`: how long the client waits for it."""
        raise NotImplementedError

    async def state(self) -> str:
        raise NotImplementedError

    async def ready(self, timeout: float) -> None:
        """After open(), on any site: until the server can navigate (no page tools awaited)."""

    async def wait_text(self, text: str, timeout: float) -> str:
        """Wait with the server's own tool until the page shows `text`, at most `timeout` s; its answer."""
        raise NotImplementedError

    async def read_all(self, timeout: float) -> str:
        """Everything the server hands out of the page now: by default its state, all of it."""
        return await self.state()

    def shown(self, state: str) -> Shown:
        """The title and address a state() shows, and its plain() text."""
        raise NotImplementedError

    def plain(self, text: str) -> str:
        """The words of a state() or read_all() as an agent reads them (by default, as they come)."""
        return text

    async def page_tool(self, name: str, args: dict[str, Any], timeout: float = 15) -> str:
        raise NotImplementedError

    async def open_modal(self) -> str:
        """Open modal.html's <dialog> with its page tool `open_editor`; the state once it shows."""
        await self.page_tool("open_editor", {})
        return await self.state()

    async def close_modal(self) -> None:
        """Leave the <dialog> opened by open_modal() so the tab can navigate again (not timed)."""

    async def confirm(self) -> tuple[bool, str]:
        """Call danger.html's `purge_closed_tickets` (it opens confirm()) and accept the dialog.

        Returns whether the tool's own result reached the client, and a note."""
        raise NotImplementedError

    async def late_tool(self, url: str, tool: str, timeout: float) -> float:
        """Navigate to `url`, then stay idle: seconds until a tools/list_changed lists `tool`."""
        raise NotImplementedError

    async def _wait_late(self, holds: Callable[[], Awaitable[bool]], timeout: float) -> float:
        """Seconds until a tools/list_changed after which `holds()` is true; the client does nothing else."""
        started = time.perf_counter()
        deadline = started + timeout
        while True:
            seen = self.count("tools")
            left = deadline - time.perf_counter()
            if left <= 0 or not await self.next_notification("tools", seen, left):
                why = f" ({self.late_why})" if self.late_why else ""
                raise StepFailed(f"no tools/list_changed announcing it within {timeout:g} s, client idle{why}")
            if await holds():
                return time.perf_counter() - started

    async def _lists(self, tool: str) -> bool:
        return tool in await self.tool_names()


class Bridge(Subject):
    key = "bridge"
    label = "bridge"

    def __init__(self, workdir: Path, site: str, browser: str = CHROMIUM, url: str = "") -> None:
        bridge = str(Path(sys.executable).parent / "webmcp-bridge")
        # The SDK passes on only a few variables: PYTHONPATH makes it run this checkout's code.
        command = [bridge, "--headless", "--browser", browser, url or site + "/"]
        super().__init__(command, workdir, {"PYTHONPATH": str(ROOT)})
        self.win = ""

    async def start_state(self, url: str, tool: str, started: float) -> tuple[float, str]:
        # `url` is on the command line: list until the page's tool is there, then read the state.
        names = await self.wait_tools(lambda n: any(x.endswith(f"__{tool}") for x in n), START_TIMEOUT)
        self.win = next(n for n in names if n.endswith(f"__{tool}")).split("__")[0]
        text = await self.state()
        elapsed = time.perf_counter() - started
        await self.subscribe("app://windows")  # as in start(): an agent watching its windows
        return elapsed, text

    async def start(self, site: str, started: float) -> tuple[float, bool, float]:
        names = await self.tool_names()
        first = time.perf_counter() - started
        holds = any(n.endswith("__list_tickets") for n in names)
        names = await self.wait_tools(lambda n: any(x.endswith("__list_tickets") for x in n), START_TIMEOUT)
        ready = time.perf_counter() - started
        self.win = next(n for n in names if n.endswith("__list_tickets")).split("__")[0]
        await self.subscribe("app://windows")
        return first, holds, ready

    async def navigate(self, url: str, timeout: float = 60) -> str:
        return await self.call(f"{self.win}__navigate", {"url": url}, timeout=timeout)

    async def wait_text(self, text: str, timeout: float) -> str:
        return await self.call(f"{self.win}__wait_for", {"text": text, "timeout": timeout}, timeout=timeout + 5)

    async def state(self) -> str:
        return await self.read("app://windows")

    async def ready(self, timeout: float) -> None:
        with anyio.fail_after(timeout):
            while not self.win:
                tabs = [w["id"] for w in json.loads(await self.state())["windows"] if w["id"].startswith("tab-")]
                self.win = tabs[0] if tabs else ""
                await anyio.sleep(0 if tabs else 0.1)

    async def read_all(self, timeout: float) -> str:
        """Every block of `read_content`, page by page, and every row of a long table or list by its
        `blockId`: one JSON block a line."""
        with anyio.fail_after(timeout):
            return "\n".join([json.dumps(b, ensure_ascii=False) async for b in self._all_blocks()])

    async def _all_blocks(self) -> AsyncIterator[dict[str, Any]]:
        tool, offset, total = f"{self.win}__read_content", 0, 1
        while offset < total:
            page = _structured(await self.call(tool, {"offset": offset, "limit": 1000}))["result"]
            for block in page["blocks"]:
                yield block
                key = {"table": "rows", "list": "items"}.get(block["type"])
                held = len(block[key]) if key else 0
                while key and held < block.get("total", held):  # a long run is cut: its rest by blockId
                    part = _structured(await self.call(tool, {"blockId": block["id"], "offset": held, "limit": 1000}))
                    rows = part["result"][key]
                    yield {key: rows}
                    held = held + len(rows) if rows else block["total"]
            offset, total = offset + len(page["blocks"]), page["total"]
            if not page["blocks"]:
                break

    def shown(self, state: str) -> Shown:
        window: dict[str, Any] = next((w for w in json.loads(state)["windows"] if w["id"] == self.win), {})
        address = [i["value"] for b in window.get("blocks", []) if b.get("id") == "address" for i in b["items"]]
        return Shown(window.get("title", ""), address[0] if address else "", self.plain(state))

    def plain(self, text: str) -> str:
        """JSON decoded to its string values (no keys, no escapes): a state, or read_all()'s lines."""
        try:
            values = [json.loads(text)]
        except json.JSONDecodeError:
            values = [json.loads(line) for line in text.splitlines() if line.strip()]
        return "\n".join(_strings(values))

    async def page_tool(self, name: str, args: dict[str, Any], timeout: float = 15) -> str:
        tool = f"{self.win}__{name}"
        await self.ensure_tool(tool, timeout)
        return await self.call(tool, args, timeout)

    async def open_modal(self) -> str:
        await self.page_tool("open_editor", {})
        with anyio.fail_after(10):
            while True:
                seen = self.count("resource")
                text = await self.state()
                if any(w["modal"] for w in json.loads(text)["windows"]):
                    return text
                await self.next_notification("resource", seen, 0.25)

    async def close_modal(self) -> None:
        # An open in-page <dialog> is a modal window that blocks its tab until it is closed.
        for window in json.loads(await self.state())["windows"]:
            if window["modal"]:
                await self.call(f"{window['id']}__close", {})

    async def confirm(self) -> tuple[bool, str]:
        opened = json.loads((await self.page_tool("purge_closed_tickets", {})).splitlines()[-1])
        dialogs = opened.get("openedWindowIds") or []
        if not dialogs:
            raise StepFailed(f"the tool call did not report the dialog window: {opened}")
        answer = json.loads((await self.call(f"{dialogs[0]}__accept", {})).splitlines()[-1])
        original = (answer.get("result") or {}).get("originalCall") or {}
        delivered = "result" in original and "purged" in json.dumps(original["result"])
        return delivered, "tool result in accept's result.originalCall" if delivered else f"got {answer}"

    async def late_tool(self, url: str, tool: str, timeout: float) -> float:
        await self.navigate(url)
        return await self._wait_late(lambda: self._lists(f"{self.win}__{tool}"), timeout)


class PlaywrightMcp(Subject):
    key = "playwright"
    label = "Playwright MCP"
    late_why = "it collects page tools only while taking a snapshot for a tool call"

    def __init__(self, workdir: Path, site: str, browser: str = CHROMIUM) -> None:
        config = workdir / "playwright-mcp.json"
        # No CLI flag passes browser switches; the config file's launchOptions.args does.
        config.write_text(json.dumps({"browser": {"launchOptions": {"args": ["--enable-features=WebMCP"]}}}))
        command = [
            "node",
            str(PEERS_DIR / "@playwright" / "mcp" / "cli.js"),
            "--executable-path",
            browser,
            "--headless",
            "--isolated",
            "--no-sandbox",
            "--config",
            str(config),
        ]
        # The snapshot files it writes land in the workspace root: our cwd, the work dir.
        super().__init__(command, workdir, {"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
        self.site = site

    async def start(self, site: str, started: float) -> tuple[float, bool, float]:
        names = await self.tool_names()
        first = time.perf_counter() - started
        holds = "webmcp_list_tickets" in names
        # It takes no start URL and launches the browser at the first tool call.
        await self.navigate(site + "/")
        await self.wait_tools(lambda n: "webmcp_list_tickets" in n, START_TIMEOUT)
        return first, holds, time.perf_counter() - started

    async def start_state(self, url: str, tool: str, started: float) -> tuple[float, str]:
        await self.tool_names()
        await self.navigate(url)
        text = await self.state()
        await self.ensure_tool(f"webmcp_{tool}", START_TIMEOUT)  # collected by those snapshots
        return time.perf_counter() - started, text

    async def navigate(self, url: str, timeout: float = 60) -> str:
        return await self.call("browser_navigate", {"url": url}, timeout=timeout)

    async def wait_text(self, text: str, timeout: float) -> str:
        # Its wait has no timeout of its own: the call's deadline bounds it.
        return await self.call("browser_wait_for", {"text": text}, timeout=timeout)

    async def state(self) -> str:
        return await self.call("browser_snapshot", {}, timeout=60)

    def shown(self, state: str) -> Shown:
        title = re.search(r"^- Page Title: (.*)$", state, re.MULTILINE)
        url = re.search(r"^- Page URL: (.*)$", state, re.MULTILINE)
        return Shown(title.group(1).strip() if title else "", url.group(1).strip() if url else "", state)

    async def page_tool(self, name: str, args: dict[str, Any], timeout: float = 15) -> str:
        tool = f"webmcp_{name}"
        await self.ensure_tool(tool, timeout)
        return await self.call(tool, args, timeout)

    async def confirm(self) -> tuple[bool, str]:
        said: list[str] = []
        try:
            said.append(await self.page_tool("purge_closed_tickets", {}, timeout=20))
        except StepFailed as exc:
            said.append(str(exc))
        said.append(await self.call("browser_handle_dialog", {"accept": True}, timeout=20))
        delivered = any('"purged"' in s for s in said)
        return delivered, " | ".join(" ".join(s.split())[:400] for s in said)

    async def late_tool(self, url: str, tool: str, timeout: float) -> float:
        await self.navigate(url)
        return await self._wait_late(lambda: self._lists(f"webmcp_{tool}"), timeout)


class ChromeDevtoolsMcp(Subject):
    key = "devtools"
    label = "chrome-devtools-mcp"
    late_why = "page tools are not MCP tools; list_webmcp_tools must be asked again"

    def __init__(self, workdir: Path, site: str, browser: str = CHROMIUM) -> None:
        command = [
            "node",
            str(PEERS_DIR / "chrome-devtools-mcp" / "build" / "src" / "bin" / "chrome-devtools-mcp.js"),
            "--executablePath",
            browser,
            "--headless",
            "--isolated",
            "--chromeArg=--no-sandbox",
            "--chromeArg=--enable-features=WebMCP",
            "--categoryExperimentalWebmcp",
            # The viewport the bridge and Playwright MCP give pages (Chromium's own headless window
            # leaves 780 x 437): a page's work after a change grows with it.
            "--viewport",
            "1280x720",
            "--no-usage-statistics",
            "--no-performance-crux",
        ]
        env = {"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1", "PUPPETEER_SKIP_DOWNLOAD": "1"}
        super().__init__(command, workdir, env)
        self.page_id = 1

    async def start(self, site: str, started: float) -> tuple[float, bool, float]:
        names = await self.tool_names()
        first = time.perf_counter() - started
        # Its page tools are never MCP tools, so no first list can hold them.
        await self.ready(START_TIMEOUT)
        await self.navigate(site + "/")
        await self._wait_page_tool("list_tickets", START_TIMEOUT)
        return first, "list_tickets" in names, time.perf_counter() - started

    async def start_state(self, url: str, tool: str, started: float) -> tuple[float, str]:
        await self.tool_names()
        await self.ready(START_TIMEOUT)
        await self.navigate(url)
        text = await self.state()
        await self._wait_page_tool(tool, START_TIMEOUT)
        return time.perf_counter() - started, text

    async def ready(self, timeout: float) -> None:
        pages = await self.call("list_pages", {}, timeout=timeout)  # launches the browser
        found = re.search(r"^(\d+): .*\[selected\]", pages, re.MULTILINE)
        self.page_id = int(found.group(1)) if found else 1

    def shown(self, state: str) -> Shown:
        # Its first line: `uid=1_0 RootWebArea ["<title>"] [busy] url="<address>"` (no title while blank).
        root = re.search(r'RootWebArea(?: "((?:[^"\\]|\\.)*)")?.*? url="([^"]*)"', state)
        return Shown(_unquote(root.group(1) or "") if root else "", root.group(2) if root else "", state)

    async def _wait_page_tool(self, name: str, timeout: float) -> None:
        # Its page tools come with no notification of any kind: asking again is the only way.
        with anyio.fail_after(timeout):
            while f'name="{name}"' not in await self.call("list_webmcp_tools", {"pageId": self.page_id}):  # noqa: ASYNC110
                await anyio.sleep(0.1)

    async def navigate(self, url: str, timeout: float = 60) -> str:
        return await self.call("navigate_page", {"pageId": self.page_id, "type": "url", "url": url}, timeout=timeout)

    async def wait_text(self, text: str, timeout: float) -> str:
        args = {"pageId": self.page_id, "text": [text], "timeout": int(timeout * 1000)}
        return await self.call("wait_for", args, timeout=timeout + 5)

    async def state(self) -> str:
        return await self.call("take_snapshot", {"pageId": self.page_id}, timeout=60)

    async def page_tool(self, name: str, args: dict[str, Any], timeout: float = 15) -> str:
        text = await self.call(
            "execute_webmcp_tool",
            {"pageId": self.page_id, "toolName": name, "input": json.dumps(args)},
            timeout,
        )
        if '"status": "Completed"' not in text:
            raise StepFailed(f"execute_webmcp_tool {name}: {text[:160]}")
        return text

    async def confirm(self) -> tuple[bool, str]:
        said: list[str] = []

        async def run_tool() -> None:
            said.append(await self.page_tool("purge_closed_tickets", {}, timeout=12))

        async def answer() -> None:
            while True:  # the dialog may not be open yet: "No open dialog found"
                try:
                    said.append(await self.call("handle_dialog", {"pageId": self.page_id, "action": "accept"}, 12))
                    return
                except StepFailed as exc:
                    if "No open dialog" not in str(exc):
                        raise
                await anyio.sleep(0.05)

        try:
            with anyio.fail_after(12):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run_tool)
                    tg.start_soon(answer)
        except TimeoutError:
            raise StepFailed(
                "deadlock: execute_webmcp_tool waits for the page while confirm() is open, and "
                "handle_dialog waits behind it (12 s)"
            ) from None
        delivered = any('"purged"' in s for s in said)
        return delivered, "tool result in execute_webmcp_tool's answer" if delivered else "result lost"

    async def late_tool(self, url: str, tool: str, timeout: float) -> float:
        await self.navigate(url)

        async def listed() -> bool:  # its page tools are listed by a tool, never in tools/list
            return f'name="{tool}"' in await self.call("list_webmcp_tools", {"pageId": self.page_id})

        return await self._wait_late(listed, timeout)


def _structured(text: str) -> Any:
    """A bridge tool result's structured content: the last line of `result_text`."""
    return json.loads(text.splitlines()[-1])


def _strings(value: Any) -> Iterator[str]:
    """Every string value in decoded JSON (no keys): what its reader sees of a JSON state."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _unquote(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except json.JSONDecodeError:
        return text
