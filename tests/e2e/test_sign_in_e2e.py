"""End to end: an HTTP sign-in (401 Basic or Digest, a proxy's 407) is a modal window, answered once,
and its password never shown: not in an answer, a window, nor the bridge's log at its most verbose."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from sample_site.auth import STAFF_PASSWORD, STAFF_REALM, STAFF_USER
from tests.support.mcp_harness import open_stdio_client
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

WRONG_PASSWORD = "not-the-password"
PROXY_USER = "relay"
PROXY_PASSWORD = "relay-pass-7f3q"
PROXY_REALM = "Harbor relay"


def _log_never_shows_passwords(log: Path) -> None:
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "DEBUG" in text, "the bridge logged at its most verbose level (else this check proves nothing)"
    for secret in (STAFF_PASSWORD, WRONG_PASSWORD, PROXY_PASSWORD):
        assert secret not in text, f"a password is in the bridge's stderr log ({log})"


@pytest.fixture
async def stage(site: str, browser: BrowserProcess, mode: str, tmp_path: Path) -> AsyncIterator[Stage]:
    """The usual stage, with the bridge logging at DEBUG into a file this test reads afterwards."""
    log = tmp_path / "bridge-stderr.log"
    with log.open("w", encoding="utf-8") as errlog:
        async with open_stage(site, browser, mode, "--log-level", "DEBUG", errlog=errlog) as s:
            yield s
    _log_never_shows_passwords(log)


def _window(doc: dict[str, Any], window_id: str) -> dict[str, Any] | None:
    return next((w for w in doc["windows"] if w["id"] == window_id), None)


def _prompts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in doc["windows"] if w["modal"] and w["title"].startswith("Sign in to ")]


async def _start_tab(stage: Stage) -> str:
    return str((await stage.tab_for("/"))["id"])


def _never_shows_password(*texts: Any) -> None:
    for text in texts:
        dumped = text if isinstance(text, str) else json.dumps(text, default=str)
        assert STAFF_PASSWORD not in dumped and PROXY_PASSWORD not in dumped


async def _navigate_to_prompt(stage: Stage, path: str) -> tuple[str, Any, dict[str, Any]]:
    """Send a fresh tab to `path` on the site: (its id, the navigate answer, the sign-in window it opened)."""
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + path})
    assert not opened.is_error, opened.structured_content
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    prompt = _window(await stage.windows(), prompt_id)
    assert prompt is not None and prompt["modal"] and prompt["ownerId"] == win
    assert prompt["title"].startswith("Sign in to 127.0.0.1:")
    assert f"\u201c{STAFF_REALM}\u201d" in json.dumps(prompt["blocks"], ensure_ascii=False), "realm quoted as page text"
    return win, opened, prompt


async def test_navigate_to_a_basic_auth_folder_answers_with_the_sign_in_window_that_blocks_the_tab(
    stage: Stage,
) -> None:
    win, opened, prompt = await _navigate_to_prompt(stage, "/private/")
    prompt_id = prompt["id"]
    assert "sign_in or cancel" in opened.structured_content["message"]
    doc = await stage.windows()
    assert "basic" in prompt["summary"]
    assert win not in doc["operableWindowIds"] and prompt_id in doc["operableWindowIds"]
    names = await stage.wait_tools(lambda n: f"{prompt_id}__sign_in" in n)
    assert f"{prompt_id}__cancel" in names and not any(n.startswith(f"{win}__") for n in names)
    blocked = await stage.call(f"{win}__navigate", {"go": "reload"})
    assert blocked.structured_content["code"] == "blocked_by_modal"
    assert blocked.structured_content["blockingWindowId"] == prompt_id

    # Wrong password: the server asks again, in a new window that says the last try was refused.
    wrong = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": WRONG_PASSWORD})
    assert not wrong.is_error, wrong.structured_content
    (again_id,) = wrong.structured_content["openedWindowIds"]
    assert again_id != prompt_id and "asks again" in wrong.structured_content["message"]
    doc = await stage.windows()
    assert _window(doc, prompt_id) is None
    again = _window(doc, again_id)
    assert again is not None and any(b.get("id") == "refused" for b in again["blocks"])
    gone = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert gone.structured_content["code"] == "window_not_found"

    signed = await stage.call(f"{again_id}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert not signed.is_error, signed.structured_content
    assert "did not ask again" in signed.structured_content["message"]
    assert "/private/" in signed.structured_content["message"]
    doc = await stage.wait_windows(lambda d: not _prompts(d) and "Staff area" in (_window(d, win) or {})["title"])
    assert "Signed in as staff" in json.dumps(_window(doc, win))
    _never_shows_password(opened.structured_content, wrong.structured_content, signed.structured_content, doc)

    # A careless server that prints the password: masked in the window, as the tab's secret.
    echoed = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/echo"})
    assert not echoed.is_error, echoed.structured_content
    doc = await stage.wait_windows(lambda d: "Staff echo" in (_window(d, win) or {})["title"])
    assert "\u2022\u2022\u2022\u2022\u2022\u2022" in json.dumps(_window(doc, win), ensure_ascii=False)
    _never_shows_password(echoed.structured_content, doc)
    current = await stage.client.read_resource("ui://current")
    _never_shows_password(current.contents[0].text)


async def test_cancel_shows_the_servers_refusal_and_a_tool_that_navigates_names_the_prompt(stage: Stage) -> None:
    win = await _start_tab(stage)
    await stage.call(f"{win}__navigate", {"url": stage.site + "/staff.html"})
    await stage.wait_tools(lambda n: f"{win}__open_staff_area" in n)
    called = await stage.call(f"{win}__open_staff_area")
    assert not called.is_error, called.structured_content
    (prompt_id,) = called.structured_content["openedWindowIds"]
    cancelled = await stage.call(f"{prompt_id}__cancel")
    assert not cancelled.is_error, cancelled.structured_content
    assert "Cancelled the sign-in" in cancelled.structured_content["message"]
    doc = await stage.wait_windows(lambda d: "Sign-in required" in (_window(d, win) or {})["title"])
    assert not _prompts(doc) and win in doc["operableWindowIds"]


async def test_a_sign_in_the_person_started_closes_by_itself_when_its_tab_goes(stage: Stage) -> None:
    opened = await stage.call("app__open_tab", {"url": stage.site + "/staff.html"})
    (win,) = opened.structured_content["openedWindowIds"]
    page = await stage.user_page("/staff.html")
    # The person clicks the link (a script click: Playwright's own waits for the navigation to end).
    await page.evaluate("document.getElementById('staff-link').click()")
    doc = await stage.wait_windows(lambda d: _prompts(d))
    (prompt,) = _prompts(doc)
    assert prompt["ownerId"] == win and win not in doc["operableWindowIds"]
    await page.close()
    doc = await stage.wait_windows(lambda d: not _prompts(d) and _window(d, win) is None)
    late = await stage.call(f"{prompt['id']}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert late.is_error and late.structured_content["code"] == "window_not_found"
    _never_shows_password(late.structured_content)


async def test_two_racing_answers_reach_the_browser_once(stage: Stage) -> None:
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/"})
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    answers: list[Any] = []

    async def answer(name: str, args: dict[str, Any]) -> None:
        answers.append(await stage.call(f"{prompt_id}__{name}", args))

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer, "sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
        tg.start_soon(answer, "cancel", {})
    codes = sorted(a.structured_content.get("code", "ok") for a in answers)
    assert codes == ["ok", "window_not_found"], [a.structured_content for a in answers]
    winner = next(a for a in answers if not a.is_error)
    expected = "Staff area" if "Sent the sign-in" in winner.structured_content["message"] else "Sign-in required"
    await stage.wait_windows(lambda d: expected in (_window(d, win) or {})["title"])


async def test_a_wrongly_typed_password_is_refused_without_quoting_it(stage: Stage) -> None:
    win = await _start_tab(stage)
    opened = await stage.call(f"{win}__navigate", {"url": stage.site + "/private/"})
    (prompt_id,) = opened.structured_content["openedWindowIds"]
    refused = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": [STAFF_PASSWORD]})
    assert refused.is_error and refused.structured_content["code"] == "validation_failed"
    _never_shows_password(refused.structured_content, [c.model_dump() for c in refused.content])
    doc = await stage.windows()
    assert _window(doc, prompt_id) is not None, "a refused call changes nothing"


async def test_a_digest_folder_signs_in_through_the_same_window_and_the_window_names_the_scheme(
    stage: Stage,
) -> None:
    win, opened, prompt = await _navigate_to_prompt(stage, "/private-digest/")
    prompt_id = prompt["id"]
    assert "(proxy)" not in prompt["title"]
    assert "digest" in prompt["summary"].lower() and "basic" not in prompt["summary"].lower()
    scheme = next(i["value"] for b in prompt["blocks"] if b["type"] == "fields" for i in b["items"]
                  if i["label"] == "Scheme")  # fmt: skip
    assert scheme.lower() == "digest"

    # Wrong password: Chromium's digest does not match; the server asks again with a fresh nonce.
    wrong = await stage.call(f"{prompt_id}__sign_in", {"username": STAFF_USER, "password": WRONG_PASSWORD})
    assert not wrong.is_error, wrong.structured_content
    (again_id,) = wrong.structured_content["openedWindowIds"]
    assert again_id != prompt_id and "asks again" in wrong.structured_content["message"]

    signed = await stage.call(f"{again_id}__sign_in", {"username": STAFF_USER, "password": STAFF_PASSWORD})
    assert not signed.is_error, signed.structured_content
    assert "did not ask again" in signed.structured_content["message"]
    doc = await stage.wait_windows(lambda d: not _prompts(d) and "Staff area" in (_window(d, win) or {})["title"])
    assert "Signed in as staff (Digest)" in json.dumps(_window(doc, win))
    _never_shows_password(opened.structured_content, wrong.structured_content, signed.structured_content, doc)


@dataclass
class _Proxy:
    """A forward HTTP proxy on 127.0.0.1 that asks for Basic credentials (407) before it forwards a GET."""

    port: int = 0
    asked: int = 0
    forwarded: list[str] = field(default_factory=list)
    authorization = "Basic " + base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()).decode()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with anyio.fail_after(15):
                await self._one(reader, writer)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            pass  # the browser hung up or went away: nothing to answer
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        request_line, *lines = head.split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        if headers.get("proxy-authorization") != self.authorization:
            self.asked += 1
            body = b"Proxy sign-in required"
            writer.write(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                + f'Proxy-Authenticate: Basic realm="{PROXY_REALM}"\r\n'.encode()
                + f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
            return
        url = urlsplit(target)
        if method != "GET" or url.scheme != "http" or not url.hostname:
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return
        self.forwarded.append(target)
        up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
        try:
            path = url.path or "/"
            keep = [f"{k}: {v}" for k, v in headers.items() if not k.startswith("proxy-") and k != "connection"]
            up_writer.write(f"GET {path}{'?' + url.query if url.query else ''} HTTP/1.1\r\n".encode("latin-1")
                            + "\r\n".join([*keep, "Connection: close", "", ""]).encode("latin-1"))  # fmt: skip
            await up_writer.drain()
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        finally:
            up_writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[_Proxy]:
    state = _Proxy()
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        server.close()
        with anyio.move_on_after(5):
            await server.wait_closed()


async def test_a_proxy_that_asks_is_a_sign_in_window_and_the_page_then_loads_through_it(
    site: str, proxy: _Proxy, tmp_path: Path
) -> None:
    log = tmp_path / "bridge-stderr.log"
    command = [
        sys.executable, "-m", "webmcp", "--headless", "--user-data-dir", str(tmp_path / "profile"),
        "--log-level", "DEBUG",
        f"--browser-arg=--proxy-server=http://127.0.0.1:{proxy.port}",
        "--browser-arg=--proxy-bypass-list=<-loopback>",  # Chromium bypasses loopback unless told not to
    ]  # fmt: skip
    with log.open("w", encoding="utf-8") as errlog:
        async with open_stdio_client(command, mode="auto", errlog=errlog) as mcp:
            client = mcp.client

            async def windows() -> dict[str, Any]:
                return dict(json.loads((await client.read_resource("app://windows")).contents[0].text))

            (tab,) = [w for w in (await windows())["windows"] if not w["modal"]]
            opened = await client.call_tool(f"{tab['id']}__navigate", {"url": site + "/staff.html"})
            assert not opened.is_error, opened.structured_content
            (prompt_id,) = opened.structured_content["openedWindowIds"]
            prompt = _window(await windows(), prompt_id)
            assert prompt is not None and prompt["modal"] and prompt["ownerId"] == tab["id"]
            assert prompt["title"] == f"Sign in to 127.0.0.1:{proxy.port} (proxy)"
            assert "The proxy" in prompt["summary"] and "basic" in prompt["summary"].lower()
            assert f"\u201c{PROXY_REALM}\u201d" in json.dumps(prompt["blocks"], ensure_ascii=False)
            assert proxy.asked >= 1 and not proxy.forwarded

            signed = await client.call_tool(
                f"{prompt_id}__sign_in", {"username": PROXY_USER, "password": PROXY_PASSWORD}
            )
            assert not signed.is_error, signed.structured_content
            assert "did not ask again" in signed.structured_content["message"]
            assert "/staff.html" in signed.structured_content["message"]
            with anyio.fail_after(15):
                while True:
                    seen = mcp.notifications.count("resource_updated")
                    doc = await windows()
                    if "Staff entrance" in (_window(doc, tab["id"]) or {}).get("title", ""):
                        break
                    with anyio.move_on_after(0.5):
                        await mcp.notifications.wait_for("resource_updated", after=seen, timeout=15)
            assert not _prompts(doc)
            assert site + "/staff.html" in proxy.forwarded, "the page came through the proxy"
            _never_shows_password(opened.structured_content, signed.structured_content, doc)
    _log_never_shows_passwords(log)
