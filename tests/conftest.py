"""Shared fixtures: the sample site, a real Chromium, the bridge over a real MCP transport.

The browser is started by the test (with the project's launcher), so that Playwright,
acting as the user, and the bridge, serving the agent, drive the same Chromium: the
bridge attaches with `--cdp-url`, Playwright with `connect_over_cdp`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from playwright.async_api import Playwright

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import BrowserProcess, LaunchOptions, launch_browser
from tests.support.stage import NO_DNS_FOR_INVALID, Stage, open_stage, run_site, shared_playwright


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def site() -> Iterator[str]:
    """A fresh sample site (its own ticket data) on 127.0.0.1; yields the base URL."""
    with run_site() as url:
        yield url


@pytest.fixture(scope="session")
async def user_driver() -> AsyncIterator[Playwright]:
    """Playwright's driver, started once: the stages opened on `browser` connect through it."""
    async with shared_playwright() as pw:
        yield pw


@pytest.fixture
async def browser(user_driver: Playwright) -> AsyncIterator[BrowserProcess]:
    """A headless Chromium with WebMCP on, stopped after the test."""
    process = await launch_browser(LaunchOptions(headless=True, debugging="port", extra_args=[NO_DNS_FOR_INVALID]))
    try:
        yield process
    finally:
        await process.close()


@pytest.fixture
async def connection(browser: BrowserProcess) -> AsyncIterator[Connection]:
    """The bridge's own connection to `browser` (no desktop: for tests of its reads)."""
    async with Connection.connect(browser.ws_url) as conn:
        yield conn


@pytest.fixture
def mode() -> str:
    """The MCP protocol generation the client speaks: 2026-07-28 unless a test parametrizes
    `mode` itself (those that matter for both generations run with "legacy" and "auto")."""
    return "auto"


@pytest.fixture
async def stage(site: str, browser: BrowserProcess, mode: str) -> AsyncIterator[Stage]:
    """Bridge on stdio attached to `browser`, an MCP client in `mode`, Playwright as the user."""
    async with open_stage(site, browser, mode) as s:
        yield s


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-goldens`: rewrite tests/golden/*.json from the recorded AX trees (review the diff)."""
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="regenerate the snapshot golden files instead of comparing with them",
    )
