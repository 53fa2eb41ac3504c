"""The package as a user gets it: sdist and wheel built, the wheel installed alone, used from elsewhere.

The module builds the sdist and, from it, the wheel (`python -m build`, in a builder venv of
its own), installs the wheel into a fresh virtualenv under a temporary directory (no pip of
its own, nothing but the wheel and its dependencies), and runs
that virtualenv's `webmcp-bridge` with the current directory outside the checkout and no
PYTHONPATH, so nothing can come from the repository: the in-page scripts, the schema and
the sample site's pages must all be in the wheel. It needs PyPI (or the machine's package
index) for the build backend and the dependencies, and /usr/bin/chromium; no browser is
downloaded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DATA = ("cdp_bridge/js/", "webmcp/js/", "webmcp/schema/", "sample_site/static/")
INSTALL_TIMEOUT_S = 240.0  # two virtualenvs, a build and an install from the index: ~40 s on a quiet machine
STEP_TIMEOUT_S = 30.0

# The first test also builds and installs (the module fixture), hence a longer limit than the default.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(INSTALL_TIMEOUT_S + 60)]


@dataclass(frozen=True)
class Installed:
    """A virtualenv holding only the built wheel, and the directory commands run in."""

    venv: Path
    wheel: Path
    sdist: Path
    workdir: Path
    env: dict[str, str]

    def command(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=self.workdir, env=self.env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False
        )


def _clean_env() -> dict[str, str]:
    # PYTHONPATH (how the tests reach a worktree) or an active venv would let the checkout leak in.
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _sh(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def _tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30
    )
    return [name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("installed")
    assert not base.resolve().is_relative_to(ROOT), "the install must live outside the checkout"
    env = _clean_env()
    # A copy of the files git knows, so the build writes nothing into the checkout (egg-info, build/).
    source = base / "source"
    for name in _tracked_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    # Virtualenvs without their own pip (ensurepip costs seconds each): this interpreter's pip
    # installs into them with --python. The builder gets the build backend once and builds
    # without isolation, instead of two isolated environments.
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python"]
    builder = base / "builder"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(builder)], base, env)
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    _sh([*pip, str(builder / "bin/python"), "install", "-q", "build", *backend], base, env)
    # No --sdist/--wheel: build makes the sdist, then the wheel from the unpacked sdist, so a file
    # missing from the sdist is missing from the wheel too.
    build = [str(builder / "bin/python"), "-m", "build", "--no-isolation", "--outdir", str(base / "dist"), str(source)]
    _sh(build, base, env)
    (wheel,) = (base / "dist").glob("*.whl")
    (sdist,) = (base / "dist").glob("*.tar.gz")
    venv = base / "venv"
    _sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    _sh([*pip, str(venv / "bin/python"), "install", "-q", str(wheel)], base, env)
    workdir = base / "elsewhere"
    workdir.mkdir()
    yield Installed(venv=venv, wheel=wheel, sdist=sdist, workdir=workdir, env=env)


def test_wheel_carries_every_file_the_bridge_loads_at_run_time(installed: Installed) -> None:
    wanted = {name for name in _tracked_files() if name.startswith(PACKAGE_DATA)}
    assert any(name.endswith("index.html") for name in wanted) and any(name.endswith(".js") for name in wanted)
    with zipfile.ZipFile(installed.wheel) as wheel:
        carried = set(wheel.namelist())
    assert wanted <= carried, f"missing from the wheel: {sorted(wanted - carried)}"
    assert installed.sdist.name.startswith("webmcp_gui_bridge-")


def test_installed_command_answers_version_and_help_from_outside_the_checkout(installed: Installed) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for command in ("webmcp-bridge", "webmcp-gui-bridge"):
        done = installed.run(installed.command(command), "--version")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"webmcp-bridge {version}"
    done = installed.run(installed.command("webmcp-bridge"), "--help")
    assert done.returncode == 0, done.stderr
    for option in ("--demo", "--show-code", "--extension", "--http", "--cdp-url"):
        assert option in done.stdout
    # What runs is the installed copy, not the checkout.
    probe = "import webmcp, sample_site.server as s; print(webmcp.__file__, s.STATIC_DIR)"
    done = installed.run(installed.command("python"), "-c", probe)
    assert done.returncode == 0, done.stderr
    for path in done.stdout.split():
        assert Path(path).is_relative_to(installed.venv), path


@pytest.mark.anyio
async def test_installed_bridge_serves_a_session_on_the_packaged_sample_site(installed: Installed) -> None:
    site = await anyio.open_process(
        [installed.command("python"), "-m", "sample_site", "--port", "0"],
        cwd=installed.workdir,
        env=installed.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert site.stdout is not None
        with anyio.fail_after(STEP_TIMEOUT_S):
            first_line = (await site.stdout.receive()).decode()
        match = re.search(r"(http://127\.0\.0\.1:\d+)/", first_line)
        assert match, first_line
        params = StdioServerParameters(
            command=installed.command("webmcp-bridge"),
            args=["--headless", match.group(1) + "/"],
            env=installed.env,
            cwd=str(installed.workdir),
        )
        # "legacy": the 2025-11-25 handshake, so the session starts with initialize.
        async with Client(params, mode="legacy", read_timeout_seconds=STEP_TIMEOUT_S) as client:
            assert client.server_info is not None and client.server_info.name == "webmcp-bridge"
            # Answered before the browser is up, from the answers the package ships (server/early_answers.json).
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"app__open_tab"}, sorted(names)
            windows = await client.read_resource("app://windows")  # answered once the start page is up
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"app__open_tab", "tab-1__list_tickets"} <= names, sorted(names)
            with anyio.fail_after(STEP_TIMEOUT_S):
                result = await client.call_tool("tab-1__list_tickets", {"status": "open"})
            assert not result.is_error, result.content
            assert isinstance(result.structured_content, dict)
            tickets = result.structured_content["result"]["tickets"]
            assert tickets and all(ticket["status"] == "open" for ticket in tickets)
            windows = await client.read_resource("app://windows")
            content = windows.contents[0]
            assert isinstance(content, types.TextResourceContents) and "Harbor Help Desk" in content.text
    finally:
        site.terminate()
        with anyio.move_on_after(10):
            await site.wait()
        if site.returncode is None:
            site.kill()
            await site.wait()


def test_installed_demo_plays_its_session_without_the_repository(installed: Installed) -> None:
    done = subprocess.run(
        [installed.command("webmcp-bridge"), "--demo"],
        cwd=installed.workdir,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "open tickets:" in done.stdout and "the bridge and its browser have stopped" in done.stdout
