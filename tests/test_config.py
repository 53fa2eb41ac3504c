"""The configuration: built once from the command line, every option in it, and frozen."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, cast

import anyio
import pytest

from cdp_bridge.connection import Connection
from webmcp.cli import build_parser
from webmcp.config import BridgeConfig, DesktopConfig, HttpConfig
from webmcp.desktop.origin_policy import OriginPolicy
from webmcp.desktop.registry import Desktop
from webmcp.server.http_guard import HttpGuard

_MODES = {"help", "version", "demo", "show_code"}
"""Options that run something else and exit (webmcp.cli reads them itself): no setting of a run."""


class _Watched(argparse.Namespace):
    """A namespace that notes which attributes are read."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        object.__setattr__(self, "_read", set())

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_"):
            object.__getattribute__(self, "_read").add(name)
        return object.__getattribute__(self, name)


def test_every_option_of_the_command_line_is_read_into_the_configuration() -> None:
    parser = build_parser()
    args = parser.parse_args(["--http", "127.0.0.1:1"], namespace=_Watched())  # its options are read with it
    cast(set[str], object.__getattribute__(args, "_read")).clear()  # argparse read them all to set defaults
    BridgeConfig.from_args(args)
    dests = {action.dest for action in parser._actions} - _MODES - {argparse.SUPPRESS}
    unread = dests - cast(set[str], object.__getattribute__(args, "_read"))
    assert not unread, f"options the configuration leaves out: {sorted(unread)}"


def test_the_configuration_holds_what_the_command_line_says() -> None:
    config = BridgeConfig.from_args(
        build_parser().parse_args(
            ["--http", "[::1]:8765", "--token", "t", "--allow-host", "box.lan", "--human-submit"]
            + ["--no-page-actions", "--allow-origin", "https://*.example", "--block-origin", "https://ads.example"]
            + ["--grant", "geolocation", "--download-limit", "2", "--tool-timeout", "7", "--snapshot-timeout", "3"]
            + ["--cdp-url", "ws://127.0.0.1:9/devtools/browser/x", "--cdp-header", "Authorization: Bearer s"]
            + ["http://a.example/", "http://b.example/"]
        )
    )
    assert config.http == HttpConfig(host="::1", port=8765, token="t", allow_hosts=("box.lan",))
    assert config.desktop == DesktopConfig(
        human_submit=True,
        page_actions=False,
        allow_origins=("https://*.example",),
        block_origins=("https://ads.example",),
        grants=frozenset({"geolocation"}),
        download_limit_mb=2.0,
    )
    assert (config.timeouts.tool_call, config.timeouts.snapshot) == (7.0, 3.0)
    assert config.browser.headers() == {"Authorization": "Bearer s"} and not config.browser.launched
    assert config.start_urls == ("http://a.example/", "http://b.example/")
    assert HttpGuard.from_config(config.http) == HttpGuard(allow_hosts=("box.lan",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.desktop.human_submit = False  # type: ignore[misc]


def test_without_options_the_configuration_is_the_defaults() -> None:
    config = BridgeConfig.from_args(build_parser().parse_args([]))
    assert config.http is None and config.browser.launched and config.start_urls == ()
    assert config.desktop == DesktopConfig()


def test_a_malformed_cdp_header_is_refused_when_the_configuration_is_built() -> None:
    with pytest.raises(ValueError, match="NAME:VALUE"):
        BridgeConfig.from_args(build_parser().parse_args(["--cdp-header", "no-colon"]))


@pytest.mark.anyio
async def test_the_desktop_takes_its_rules_when_it_is_built_and_they_stay() -> None:
    async with anyio.create_task_group() as tg:
        policy = OriginPolicy(block=("https://ads.example",))
        desktop = Desktop(cast(Connection, object()), tg, policy=policy, human_submit=True, page_actions=False)
        assert (desktop.policy, desktop.human_submit, desktop.page_actions) == (policy, True, False)
        for name in ("policy", "human_submit", "page_actions", "permissions", "uploads", "downloads"):
            with pytest.raises(AttributeError):
                setattr(desktop, name, None)
        tg.cancel_scope.cancel()
