"""The command line: checked options, clear messages, the token from the environment."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdp_bridge.relay import load_pairing_code, normalize_code, pairing_code_path
from webmcp.cli import build_parser, main
from webmcp.server.app import package_version


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("localhost:1", ("localhost", 1)),
        ("[::1]:8765", ("::1", 8765)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),  # the system chooses; the bridge prints the URL
    ],
)
def test_http_accepts_host_port_and_bracketed_ipv6(value: str, expected: tuple[str, int]) -> None:
    assert build_parser().parse_args(["--http", value]).http == expected


@pytest.mark.parametrize("value", ["8765", "127.0.0.1", "127.0.0.1:-1", "host:99999", ":8765", "[::1]"])
def test_http_refuses_what_is_not_host_port_with_a_sentence(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--http", value])
    assert exited.value.code == 2
    assert "is not HOST:PORT" in capsys.readouterr().err


ATTACHABLE = [
    "ws://127.0.0.1:9222/devtools/browser/abc",
    "http://127.0.0.1:9222",
    "https://farm.example",
    "http://[::1]:9222",
    "wss://farm.internal:3000/chromium?token=T&launch={}",
]


@pytest.mark.parametrize("value", ATTACHABLE)
def test_cdp_url_accepts_websocket_and_http_endpoints_as_given(value: str) -> None:
    assert build_parser().parse_args(["--cdp-url", value]).cdp_url == value


@pytest.mark.parametrize(
    "value", ["", " ", "9222", "localhost:9222", "http://", "ftp://host:9222", "http://host:port", "ws://host:0/x"]
)
def test_cdp_url_refuses_an_empty_or_malformed_value_with_what_a_valid_one_looks_like(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--cdp-url", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --cdp-url" in err
    assert "ws://127.0.0.1:9222/devtools/browser/ID" in err and "http://127.0.0.1:9222" in err


def test_a_refused_cdp_url_keeps_its_query_string_out_of_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--cdp-url", "farm.internal:3000/chromium?token=SECRET"])
    err = capsys.readouterr().err
    assert "farm.internal:3000/chromium?…" in err and "SECRET" not in err


def test_an_empty_cdp_url_stops_the_command_instead_of_launching_a_browser() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webmcp", "--cdp-url", ""],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == "", "stdout belongs to MCP"
    assert "an empty --cdp-url attaches to nothing" in done.stderr


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


def test_browser_arg_and_grant_are_repeatable_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["--browser-arg=--lang=de", "--browser-arg=--window-size=800,600"]
        + ["--grant", "geolocation", "--grant", "clipboard"]
    )
    assert args.browser_arg == ["--lang=de", "--window-size=800,600"]
    assert args.grant == ["geolocation", "clipboard"]
    for bad in (["--browser-arg=--remote-debugging-port=0"], ["--grant", "everything"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(bad)
    assert "invalid choice" in capsys.readouterr().err


def test_browser_arg_with_an_attached_browser_stops_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cdp-url", "http://127.0.0.1:9", "--browser-arg=--lang=de"]) == 2
    assert "applies to a browser the bridge launches" in capsys.readouterr().err


def test_show_code_prints_the_pairing_code_the_extension_bridge_will_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["--extension", "--show-code"]) == 0
    out, err = capsys.readouterr()
    code = out.strip()
    # The code alone on stdout, the same one --extension serves (it reads the same state file).
    assert code == load_pairing_code() and len(normalize_code(code)) == 12
    assert str(pairing_code_path()) in err and pairing_code_path().is_relative_to(tmp_path)
    assert main(["--extension", "--show-code"]) == 0
    assert capsys.readouterr().out.strip() == code, "showing the code does not renew it"


def test_show_code_without_extension_says_how_to_use_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["--show-code"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "webmcp-bridge --extension --show-code" in captured.err
    assert not pairing_code_path().exists(), "a refused command creates no code"


def _python(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter in the checkout (nothing imported before it)."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, check=False,
    )  # fmt: skip


def test_the_background_imports_leave_the_collector_on_and_their_objects_out_of_its_scans() -> None:
    code = """
import gc, anyio
from webmcp.runner import _BackgroundImports
imports = _BackgroundImports()
anyio.run(imports.run)
print(imports.desktop.is_set(), imports.server.is_set(), gc.isenabled(), gc.get_freeze_count() > 50_000)
"""
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True", "True"]


_HEAVY = (
    "asyncio",
    "pydantic",
    "pydantic_core",
    "cdp_bridge.connection",
    "mcp.types",
    "mcp.server.lowlevel",
    "webmcp.runner",
)


def test_the_command_line_is_read_and_the_browser_started_before_the_event_loop_is_imported() -> None:
    # webmcp.cli spawns Chromium first (cdp_bridge.spawn), so its ~300 ms start-up runs beside the
    # bridge's imports: nothing the launch does not need may be imported before it.
    code = """
import sys
from webmcp.cli import build_parser, launch_options
from webmcp.config import BridgeConfig
from cdp_bridge.spawn import build_args
args = build_parser().parse_args(["--headless", "--browser-arg=--lang=de", "http://127.0.0.1:1/"])
build_args(launch_options(BridgeConfig.from_args(args).browser), "/usr/bin/chromium", "/p")
print(" ".join(m for m in HEAVY if m in sys.modules) or "none")
""".replace("HEAVY", repr(_HEAVY))
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "none"


def test_a_browser_started_for_a_bridge_that_cannot_go_on_is_stopped_and_its_files_removed(tmp_path: Path) -> None:
    # The browser is started before the rest of the bridge is imported: when that fails, the
    # command must not leave the browser running, nor its temporary profile behind.
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nsleep 600\n")  # the shell stays: its command line names it
    fake.chmod(0o755)
    code = f"""
import sys, tempfile
tempfile.tempdir = {str(tmp_path / "tmp")!r}
sys.modules["webmcp.runner"] = None  # the import after the launch fails
from webmcp.cli import main
try:
    main(["--headless", "--browser", {str(fake)!r}, "http://127.0.0.1:1/"])
except ImportError:
    print("import failed")
"""
    (tmp_path / "tmp").mkdir()
    result = _python(code, timeout=60)
    assert result.stdout.strip() == "import failed", result.stderr
    assert not _running(str(fake)), "the browser was left running"
    assert list((tmp_path / "tmp").iterdir()) == [], "its temporary profile was left behind"


def _running(command: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds `command`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if command.encode() in (entry / "cmdline").read_bytes():
                if (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
                    found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_a_sigterm_while_the_bridge_imports_waits_for_it_and_stops_the_browser_cleanly(tmp_path: Path) -> None:
    # Between the spawn and the bridge's own signal handling (webmcp.runner) lie its imports: a stop
    # signal then waits (raised mid-import it broke the import: exit 1, or a pyo3 panic), and the
    # browser it spawned starts with no signal blocked.
    fake = tmp_path / "chromium"
    # `exec`: the shell becomes the sleep, so its mask is the one the bridge gave it (forking a child,
    # dash blocks every signal for a moment: read then, the test failed under load).
    fake.write_text(f'#!/bin/sh\necho $$ > "{tmp_path}/started"\nexec sleep 600\n')
    fake.chmod(0o755)
    code = f"""
import importlib.abc, sys, tempfile, time
tempfile.tempdir = {str(tmp_path / "tmp")!r}
class SlowRunner(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "webmcp.runner":
            time.sleep(1.5)  # the imports after the spawn, drawn out
        return None
sys.meta_path.insert(0, SlowRunner())
from webmcp.cli import main
sys.exit(main(["--headless", "--browser", {str(fake)!r}, "http://127.0.0.1:1/"]))
"""
    (tmp_path / "tmp").mkdir()
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    try:
        started, deadline = tmp_path / "started", time.monotonic() + 30
        while not (started.exists() and started.read_text().strip()):
            assert time.monotonic() < deadline and child.poll() is None, "the browser never started"
            time.sleep(0.02)
        browser = int((tmp_path / "started").read_text())
        blocked = next(
            line for line in Path(f"/proc/{browser}/status").read_text().splitlines() if line.startswith("SigBlk")
        )
        assert int(blocked.split()[1], 16) == 0, blocked
        child.send_signal(signal.SIGTERM)
        assert child.wait(20) in (0, 130), child.stderr.read().decode() if child.stderr else ""
    finally:
        child.kill()
        child.wait(10)
        assert child.stderr is not None
        child.stderr.close()
    assert not _running(str(fake)), "the browser was left running"
    assert list((tmp_path / "tmp").iterdir()) == [], "its temporary profile was left behind"
