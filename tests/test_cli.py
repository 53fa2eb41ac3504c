"""The command line: checked options, clear messages, the token from the environment."""

from __future__ import annotations

import subprocess
import sys

import pytest

from webmcp.cli import build_parser
from webmcp.server.app import package_version


@pytest.mark.parametrize(
    ("value", "expected"),
    [("127.0.0.1:8765", ("127.0.0.1", 8765)), ("localhost:1", ("localhost", 1)), ("[::1]:8765", ("::1", 8765))],
)
def test_http_accepts_host_port_and_bracketed_ipv6(value: str, expected: tuple[str, int]) -> None:
    assert build_parser().parse_args(["--http", value]).http == expected


@pytest.mark.parametrize("value", ["8765", "127.0.0.1", "127.0.0.1:0", "host:99999", ":8765", "[::1]"])
def test_http_refuses_what_is_not_host_port_with_a_sentence(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--http", value])
    assert exited.value.code == 2
    assert "is not HOST:PORT" in capsys.readouterr().err


def test_log_level_is_checked_and_case_insensitive(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["--log-level", "debug"]).log_level == "DEBUG"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--log-level", "chatty"])
    assert "is not a log level" in capsys.readouterr().err


def test_the_token_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBMCP_BRIDGE_TOKEN", "from-env")
    assert build_parser().parse_args([]).token == "from-env"
    assert build_parser().parse_args(["--token", "explicit"]).token == "explicit"


def test_python_dash_m_webmcp_reports_the_installed_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webmcp", "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == f"webmcp-bridge {package_version()}"
    assert package_version() != "0+unknown"
