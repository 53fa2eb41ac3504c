"""What runs an episode besides the server under test: the pages, the browser, the side connection.

* `serve(html_root)`: MiniWoB++'s `html/` as the web root on 127.0.0.1 (aiohttp, static files).
* `Chromium`: one headless Chromium with `--remote-debugging-port=0`; its CDP address is read from
  `DevToolsActivePort` in its profile. Both servers attach to it (one after the other).
* `Side`: a CDP connection to one page target that only does what MiniWoB's own environment does
  over WebDriver (`miniwob/selenium_instance.py`): stop any episode, seed, set the data mode, start
  (`core.startEpisodeReal()`, then `WOB_TASK_READY`), and read the reward globals. The bench also
  uses it to check what an answer claims (a field's value, the query) — never to act.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

__all__ = ["Chromium", "Side", "serve", "CDP_TIMEOUT"]

CDP_TIMEOUT = 10.0
"""Seconds any one side-connection command may take."""


@asynccontextmanager
async def serve(html_root: Path) -> AsyncIterator[str]:
    """Serve `html_root` at http://127.0.0.1:<port>; yields the origin."""
    app = web.Application()
    app.on_response_prepare.append(_utf8)
    app.router.add_static("/", html_root, show_index=False)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def _utf8(request: web.Request, response: web.StreamResponse) -> None:
    # The task pages carry no <meta charset>: unlabelled, Chromium would read unicode-test's
    # "ÖK" as windows-1252. MiniWoB's files are UTF-8.
    kind = response.headers.get("Content-Type", "")
    if kind.startswith(("text/", "application/javascript")) and "charset" not in kind:
        response.headers["Content-Type"] = kind + "; charset=utf-8"


class Chromium:
    """One headless Chromium the servers attach to over CDP."""

    def __init__(self, executable: str = "/usr/bin/chromium") -> None:
        self.executable = executable
        self.profile = Path(tempfile.mkdtemp(prefix="wob-chromium-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.http = ""

    async def start(self, timeout: float = 30) -> str:
        """Launch; the CDP HTTP address (http://127.0.0.1:port)."""
        args = [
            self.executable,
            "--headless=new",
            "--no-sandbox",
            "--remote-debugging-port=0",
            "--enable-features=WebMCP",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--window-size=1280,900",
            "about:blank",
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC220 - returns at once
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                port = port_file.read_text().split()[0]
                self.http = f"http://127.0.0.1:{port}"
                return self.http
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            await asyncio.sleep(0.05)
        raise TimeoutError("chromium wrote no DevToolsActivePort")

    async def ws_url(self) -> str:
        """The browser-wide websocket address (what `--cdp-endpoint`/`--cdp-url` may take)."""
        return str((await self._get("/json/version"))["webSocketDebuggerUrl"])

    async def targets(self) -> list[dict[str, Any]]:
        return [t for t in await self._get("/json/list") if t.get("type") == "page"]

    async def _get(self, path: str) -> Any:
        timeout = aiohttp.ClientTimeout(total=CDP_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as http, http.get(self.http + path) as answer:
            return await answer.json(content_type=None)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)


class Side:
    """A CDP connection to the task's page target: starts episodes and reads the reward."""

    def __init__(self) -> None:
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._id = 0
        self.target = ""
        self._ws_port = ""

    async def attach(self, chromium: Chromium, url: str, timeout: float = CDP_TIMEOUT) -> None:
        """Attach to the page target showing `url` (the one the server navigated)."""
        await self.close()
        deadline = time.monotonic() + timeout
        while True:
            found = [t for t in await chromium.targets() if t.get("url", "").split("?")[0] == url]
            if found:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no page target shows {url}")
            await asyncio.sleep(0.05)
        self.target = found[0]["id"]
        self._ws_port = chromium.http.rsplit(":", 1)[1]
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(found[0]["webSocketDebuggerUrl"], max_msg_size=0)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        self._ws = self._http = None

    async def evaluate(self, expression: str, timeout: float = CDP_TIMEOUT) -> Any:
        """The value of `expression` in the page (returned by value); raises on an exception."""
        assert self._ws is not None
        self._id += 1
        ident = self._id
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        await self._ws.send_str(json.dumps({"id": ident, "method": "Runtime.evaluate", "params": params}))
        async with asyncio.timeout(timeout):
            while True:
                message = await self._ws.receive()
                if message.type != aiohttp.WSMsgType.TEXT:
                    raise ConnectionError(f"side connection: {message.type}")
                data = json.loads(message.data)
                if data.get("id") == ident:
                    break
        if "error" in data:
            raise RuntimeError(f"side evaluate: {data['error']}")
        result = data["result"]
        if "exceptionDetails" in result:
            raise RuntimeError(
                f"side evaluate threw: {result['exceptionDetails'].get('exception', {}).get('description')}"
            )
        return result["result"].get("value")

    async def start_episode(self, seed: int, max_time_ms: int, mode: str = "train") -> None:
        """As miniwob's `begin_task`: stop, seed, data mode, start, then wait for WOB_TASK_READY."""
        # The page's scripts may still be loading right after navigate answered.
        deadline = time.monotonic() + CDP_TIMEOUT
        while not await self._step(
            "core defined", "typeof core !== 'undefined' && typeof genProblem === 'function' && !!core.cover_div"
        ):
            if time.monotonic() > deadline:
                raise TimeoutError("the task page never defined core and genProblem")
            await asyncio.sleep(0.05)
        await self._step(
            "start",
            "core.endEpisode(0);"
            f"core.EPISODE_MAX_TIME = {int(max_time_ms)};"
            f"Math.seedrandom({json.dumps(seed)});"
            f"core.setDataMode({json.dumps(mode)});"
            "core.startEpisodeReal();",
        )
        for _ in range(40):
            if await self._step("WOB_TASK_READY", "WOB_TASK_READY"):
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("WOB_TASK_READY stayed false")

    async def _step(self, what: str, expression: str) -> Any:
        try:
            return await self.evaluate(expression)
        except TimeoutError:
            raise TimeoutError(
                f"{what}: the page did not answer Runtime.evaluate within {CDP_TIMEOUT:g} s; {await self._why()}"
            ) from None

    async def _why(self) -> str:
        """Why a page does not answer, asked over a second connection: is it paused in a debugger?"""
        if self._http is None or self._ws is None:
            return "no connection"
        url = f"http://127.0.0.1:{self._ws_port}/json/list"
        try:
            async with asyncio.timeout(8):
                target = next(t for t in await (await self._http.get(url)).json() if t["id"] == self.target)
                ws = await self._http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
                said: list[str] = []
                await ws.send_str(json.dumps({"id": 1, "method": "Debugger.enable", "params": {}}))
                await ws.send_str(json.dumps({"id": 2, "method": "Runtime.evaluate", "params": {"expression": "1"}}))
                try:
                    async with asyncio.timeout(4):
                        while len(said) < 6:
                            data = json.loads((await ws.receive()).data)
                            if data.get("method") == "Debugger.paused":
                                said.append(f"paused ({data['params'].get('reason')})")
                            elif data.get("id") == 2:
                                said.append("evaluate answered on a second connection")
                except TimeoutError:
                    said.append("nothing more within 4 s")
                await ws.close()
                return "; ".join(said) or "no answer"
        except Exception as exc:  # noqa: BLE001 - a diagnosis only
            return f"could not ask ({exc!r})"

    async def reward(self) -> dict[str, Any]:
        return dict(
            await self.evaluate(
                "({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL,"
                " reason: WOB_REWARD_REASON === null ? null : String(WOB_REWARD_REASON)})"
            )
        )

    async def query(self) -> str:
        return str(await self.evaluate("core.getUtterance()"))
