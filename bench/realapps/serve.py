"""Serve every demo under `/demos/<name>/` on 127.0.0.1, as GitHub Pages serves them.

A demo with a build (`CACHE/builds.json`, written by build.py) is served from its build
output, the others from their own folder; `/demos/shared/` is the demos' shared scripts.
A path under a built demo that names no file gets its `index.html`, as the single-page apps'
routers expect. Runs in a thread of its own (ThreadingHTTPServer) so the driver's event loop
never serves files.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["demo_roots", "serve_demos"]


def demo_roots(demos: Path, cache: Path | None) -> tuple[dict[str, Path], set[str], dict[str, str]]:
    """(name → folder served, names served from a build, name → why it has no build)."""
    builds: dict[str, dict[str, str]] = {}
    if cache is not None and (cache / "builds.json").is_file():
        builds = json.loads((cache / "builds.json").read_text())
    roots: dict[str, Path] = {}
    built: set[str] = set()
    unbuilt: dict[str, str] = {}
    for folder in sorted(p for p in demos.iterdir() if p.is_dir()):
        name = folder.name
        if (folder / "package.json").is_file():
            record = builds.get(name, {})
            if "out" in record and Path(record["out"], "index.html").is_file():
                roots[name] = Path(record["out"])
                built.add(name)
            else:
                unbuilt[name] = record.get("error", "not built (run bench/realapps/build.py)")
        else:
            roots[name] = folder
    return roots, built, unbuilt


class _Handler(SimpleHTTPRequestHandler):
    roots: dict[str, Path] = {}
    spa: set[str] = set()

    def translate_path(self, path: str) -> str:
        parts = [p for p in unquote(urlsplit(path).path).split("/") if p]
        if len(parts) < 2 or parts[0] != "demos" or parts[1] not in self.roots or ".." in parts:
            return "/nonexistent"
        root = self.roots[parts[1]]
        target = root.joinpath(*parts[2:])
        if parts[1] in self.spa and not target.exists() and "." not in parts[-1]:
            target = root / "index.html"
        return str(target)

    def end_headers(self) -> None:
        # As a static host would: cacheable, so Back may restore from the back-forward cache.
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


@contextmanager
def serve_demos(roots: dict[str, Path], spa: set[str]) -> Iterator[str]:
    """Serve `roots` (name → folder) on a free loopback port; yields `http://127.0.0.1:PORT`."""
    handler = type("DemoHandler", (_Handler,), {"roots": roots, "spa": spa})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory="/"))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="demo-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
