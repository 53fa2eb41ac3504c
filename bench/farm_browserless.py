#!/usr/bin/env python
"""The bridge on a browser farm: the open-source browserless server, run on this machine.

    python bench/farm_browserless.py                 # installs browserless once into ~/.cache
    python bench/farm_browserless.py --dir DIR       # or into DIR

browserless (`@browserless.io/browserless` 2.42 from npm, SSPL) is only a test tool here and is
never shipped. Its install is ~580 MB, so CI does not run this script; its last result is in
docs/deploy.md. What it does:

1. installs browserless with browser downloads off, and points PLAYWRIGHT_BROWSERS_PATH at a
   folder whose Playwright Chromium is a link to /usr/bin/chromium (browserless has no setting
   for the browser's path);
2. starts it with only its Chromium routes (scripts/browserless/start.mjs), behind a token;
3. serves the sample site and runs `webmcp-bridge --cdp-url 'ws://…/chromium?token=…&launch=…'`
   over stdio, the farm launching one browser per connection with `--enable-features=WebMCP`;
4. as an MCP client: waits for the sample site's window, calls its list_tickets tool, opens a
   tab, runs the confirm() flow (a page tool opens a dialog window; accepting it ends the call);
5. attaches once more with the token in `--cdp-header "Authorization: Bearer …"` instead of
   the query string;
6. attaches with `--cdp-reconnect` to a session the farm ends after 15 s (`timeout=15000`):
   the lost browser's windows must close, the new session's appear, and a tab open there;
7. attaches to the same farm without WebMCP in the launch options, which must end in one
   sentence on stderr and exit status 1;
8. tears everything down. Prints a JSON summary; exits 0 when every step passed.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
BROWSERLESS = "@browserless.io/browserless@2.42"
CHROMIUM = "/usr/bin/chromium"
STEP_TIMEOUT = 60.0


class FarmError(Exception):
    """A step failed; the message says which and why."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def install(folder: Path) -> None:
    """npm-install browserless into `folder` once, and link Playwright's Chromium to Debian's."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    if not (folder / "node_modules/@browserless.io/browserless/package.json").exists():
        print(f"installing {BROWSERLESS} into {folder} (~580 MB, once)", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", BROWSERLESS], cwd=folder, env=env, check=True)
    shutil.copy(ROOT / "scripts/browserless/start.mjs", folder / "start.mjs")
    browsers = folder / "pw-browsers"
    expected = subprocess.run(
        ["node", "-e", "import('playwright-core').then(p => console.log(p.chromium.executablePath()))"],
        cwd=folder,
        env={**env, "PLAYWRIGHT_BROWSERS_PATH": str(browsers)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    link = Path(expected)
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        link.symlink_to(CHROMIUM)


def farm_url(port: int, token: str | None, webmcp: bool, session_ms: int | None = None) -> str:
    args = ["--enable-features=WebMCP"] if webmcp else []
    query = {"launch": json.dumps({"args": args})}
    if token:
        query = {"token": token, **query}
    if session_ms:
        query["timeout"] = str(session_ms)  # browserless ends the session (and its browser) then
    return f"ws://127.0.0.1:{port}/chromium?{urllib.parse.urlencode(query)}"


def wait_http(url: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - our own loopback server
                return
        except urllib.error.HTTPError:
            return  # it answers (even 401): it is up
        except OSError:
            time.sleep(0.2)
    raise FarmError(f"{url} did not answer within {limit:g} s")


async def windows(client: Client) -> dict[str, Any]:
    return json.loads((await client.read_resource("app://windows")).contents[0].text)


async def until(what: str, probe: Any, limit: float = STEP_TIMEOUT) -> Any:
    """Re-run `probe()` until it returns something truthy (a script, not a test: polling is fine)."""
    with anyio.move_on_after(limit):
        while not (found := await probe()):  # noqa: ASYNC110
            await anyio.sleep(0.2)
        return found
    raise FarmError(f"timed out waiting for {what}")


async def sample_flow(command: list[str], site: str) -> dict[str, Any]:
    """Drive the sample site through the bridge on the farm; the measured steps."""
    figures: dict[str, Any] = {}
    started = time.monotonic()
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, read_timeout_seconds=STEP_TIMEOUT) as client:

        async def home_window() -> Any:
            doc = await windows(client)
            return next((w for w in doc["windows"] if "Ticket queue" in w["title"]), None)

        home = await until("the sample site's window", home_window)
        win = home["id"]
        figures["first_window_s"] = round(time.monotonic() - started, 2)

        async def has_tool() -> bool:
            return any(t.name == f"{win}__list_tickets" for t in (await client.list_tools()).tools)

        await until("the page's tools", has_tool)
        began = time.monotonic()
        listed = await client.call_tool(f"{win}__list_tickets", {})
        figures["list_tickets_ms"] = round((time.monotonic() - began) * 1000, 1)
        if listed.is_error or not listed.structured_content["result"]["tickets"]:
            raise FarmError(f"list_tickets failed: {listed.structured_content}")
        figures["tickets"] = len(listed.structured_content["result"]["tickets"])

        opened = await client.call_tool("app__open_tab", {"url": site + "/danger.html"})
        if opened.is_error:
            raise FarmError(f"app__open_tab failed: {opened.structured_content}")
        (tab,) = opened.structured_content["openedWindowIds"]

        async def has_purge() -> bool:
            return any(t.name == f"{tab}__purge_closed_tickets" for t in (await client.list_tools()).tools)

        await until("danger.html's tools", has_purge)
        purge = await client.call_tool(f"{tab}__purge_closed_tickets", {})
        (dialog,) = purge.structured_content["openedWindowIds"]
        await client.list_tools()  # the client checks results against the tools it last listed
        answer = await client.call_tool(f"{dialog}__accept", {})
        outcome = answer.structured_content["result"]["originalCall"]["result"]
        if not isinstance(outcome, dict) or "purged" not in outcome:  # 2 the first time, then 0
            raise FarmError(f"the confirm() flow ended with {outcome}")
        figures["confirm_flow"] = f"accepted, page answered {outcome}"
        await client.list_tools()
        closed = await client.call_tool(f"{tab}__close", {})
        if closed.is_error:
            raise FarmError(f"closing the tab failed: {closed.structured_content}")
    return figures


async def reconnect_flow(command: list[str], site: str) -> dict[str, Any]:
    """The farm ends the session: with --cdp-reconnect the bridge takes a new one and carries on."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, read_timeout_seconds=STEP_TIMEOUT) as client:

        async def some_windows() -> set[str]:
            return {w["id"] for w in (await windows(client))["windows"]}

        before = await until("the first session's windows", some_windows)
        dropped_at = time.monotonic()

        async def replaced() -> set[str]:
            now = await some_windows()
            return now if now and not now & before else set()

        after = await until("the new session's windows", replaced)
        opened = await client.call_tool("app__open_tab", {"url": site + "/"})
        if opened.is_error:
            raise FarmError(f"app__open_tab in the new session failed: {opened.structured_content}")
        return {
            "windows_before": sorted(before),
            "windows_after": sorted(after),
            "new_windows_after_s": round(time.monotonic() - dropped_at, 1),  # includes the 15 s session
            "open_tab_in_new_session": "ok",
        }


async def main_async(folder: Path) -> dict[str, Any]:
    await anyio.to_thread.run_sync(install, folder)
    port, token = _free_port(), secrets.token_urlsafe(16)
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "TOKEN": token,
           "PLAYWRIGHT_BROWSERS_PATH": str(folder / "pw-browsers"), "DEBUG": "-*"}  # fmt: skip
    summary: dict[str, Any] = {"browserless": BROWSERLESS, "chromium": CHROMIUM}
    log = (folder / "browserless.log").open("wb")
    farm = subprocess.Popen(["node", "start.mjs"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: ASYNC220
    site_process = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "sample_site", "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        await anyio.to_thread.run_sync(wait_http, f"http://127.0.0.1:{port}/json/version", STEP_TIMEOUT)
        assert site_process.stdout is not None
        site = site_process.stdout.readline().split(" listening on ", 1)[1].split()[0].rstrip("/")
        bridge = [sys.executable, "-m", "cdp_bridge"]

        with anyio.fail_after(STEP_TIMEOUT * 4):
            query_token = [*bridge, "--cdp-url", farm_url(port, token, True), site + "/"]
            summary["query_token"] = await sample_flow(query_token, site)
            summary["header_token"] = await sample_flow(
                [*bridge, "--cdp-url", farm_url(port, None, True),
                 "--cdp-header", f"Authorization: Bearer {token}", site + "/"],
                site,
            )  # fmt: skip
            dropped = [*bridge, "--cdp-url", farm_url(port, token, True, session_ms=15_000), "--cdp-reconnect"]
            summary["session_dropped"] = await reconnect_flow(dropped, site)
        refused = await anyio.run_process(
            [*bridge, "--cdp-url", farm_url(port, token, False)], check=False, stdin=subprocess.DEVNULL
        )
        sentence = refused.stderr.decode().strip()
        if refused.returncode != 1 or "WebMCP" not in sentence or len(sentence.splitlines()) != 1:
            raise FarmError(f"a farm browser without WebMCP gave exit {refused.returncode}: {sentence!r}")
        summary["without_webmcp"] = sentence
        summary["result"] = "passed"
        return summary
    finally:
        for process in (farm, site_process):
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "webmcp-bridge" / "browserless"
    parser.add_argument(
        "--dir", type=Path, default=default, help="where browserless is installed (default: %(default)s)"
    )
    args = parser.parse_args()
    try:
        summary = anyio.run(main_async, args.dir.resolve())
    except (FarmError, OSError, subprocess.CalledProcessError, ExceptionGroup) as exc:
        leaves = exc.exceptions if isinstance(exc, ExceptionGroup) else (exc,)
        while any(isinstance(e, ExceptionGroup) for e in leaves):
            leaves = tuple(x for e in leaves for x in (e.exceptions if isinstance(e, ExceptionGroup) else (e,)))
        print(json.dumps({"result": "failed", "why": [str(e) for e in leaves]}, indent=2))
        return 1
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
