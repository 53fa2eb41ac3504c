"""What /proc says about browsers the tests started: their processes, and the ports they listen on."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

__all__ = ["browser_pids", "listening_sockets", "wait_until"]


def browser_pids(profile: Path) -> list[int]:
    """Pids of live processes whose command line names `profile` (the bridge's own excepted)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if str(profile).encode() in cmdline and b"-m\x00webmcp" not in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def listening_sockets(pids: list[int]) -> list[str]:
    """Local addresses of TCP sockets in LISTEN state that any of `pids` holds open."""
    listening: dict[str, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                listening[fields[9]] = fields[1]
    found = []
    for pid in pids:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue  # the process ended meanwhile
        found += [listening[link[8:-1]] for link in links if link.startswith("socket:[") and link[8:-1] in listening]
    return found


async def wait_until(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]  # noqa: ASYNC109
    """Poll `predicate` until it holds: process lifetimes in /proc give no event to wait on."""
    with anyio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.05)
