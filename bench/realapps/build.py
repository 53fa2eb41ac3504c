"""Build the webmcp-tools demos that need a build, outside the demos' own folder.

    .venv/bin/python -m bench.realapps.build --demos /tmp/demos/demos --cache /tmp/realapps-cache

`--demos` is the `demos/` folder of GoogleChromeLabs/webmcp-tools (as `git archive` gives it).
A demo with a `package.json` is copied to `CACHE/build/<name>/` (sources only), installed with
`npm ci` (npm's cache in `CACHE/npm`) and built with `npm run build`, on Node 22 from npm
(`npx node@22`: the Angular demos need it, the Vite ones are happy with it). The Angular demos
get `--base-href /demos/<name>/` so that one server can serve every demo under `/demos/`.
Two things this offline machine needs, done in the copy only: the Angular demos' production
build inlines Google Fonts' CSS, fetched from the internet, so `optimization.fonts` is switched
off; and the React demos depend on `use-webmcp-tool` 0.2.0, which the npm registry here does
not serve (404), so `--use-webmcp-tool DIR` points that dependency at a local copy of the
package (GoogleChromeLabs/use-webmcp-tool's `useWebMCP.js` with a package.json), installed with
`npm install`. A demo already built from the same sources is skipped. Prints one line per demo and writes
`CACHE/builds.json` (demo → output folder, or the error), which `run.py` reads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["BUILT_DIRS", "build_all", "node22_bin"]

# Where each kind of build puts its site, relative to the demo's folder.
BUILT_DIRS = ("dist/{name}/browser", "dist/browser", "dist")
_SKIP = {"node_modules", "dist", ".angular"}
_STEP_TIMEOUT_S = 1800


def _digest(folder: Path) -> str:
    """A hash of the demo's sources (names and bytes), to know when a build is current."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not _SKIP.intersection(path.relative_to(folder).parts):
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def node22_bin(cache: Path) -> Path:
    """The folder holding Node 22's `node`, fetched from npm once into `cache/npm`."""
    out = subprocess.run(
        ["npx", "-y", "--cache", str(cache / "npm"), "node@22", "-e", "console.log(process.execPath)"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return Path(out.stdout.strip().splitlines()[-1]).parent


def _run(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        subprocess.run(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=_STEP_TIMEOUT_S, check=True
        )


def _output_dir(work: Path, name: str) -> Path | None:
    for pattern in BUILT_DIRS:
        candidate = work / pattern.format(name=name)
        if (candidate / "index.html").is_file():
            return candidate
    return None


def _no_font_inlining(work: Path) -> None:
    config_path = work / "angular.json"
    config = json.loads(config_path.read_text())
    for project in config["projects"].values():
        production = project["architect"]["build"].setdefault("configurations", {}).setdefault("production", {})
        production["optimization"] = {
            "scripts": True,
            "styles": {"minify": True, "inlineCritical": True},
            "fonts": False,
        }
    config_path.write_text(json.dumps(config, indent=2))


def _local_hook(work: Path, hook: Path | None) -> bool:
    """Point `use-webmcp-tool` at `hook`; True when the demo depends on it (then `npm install`)."""
    manifest_path = work / "package.json"
    manifest = json.loads(manifest_path.read_text())
    deps = manifest.get("dependencies", {})
    if "use-webmcp-tool" not in deps or hook is None:
        return False
    deps["use-webmcp-tool"] = f"file:{hook}"
    manifest_path.write_text(json.dumps(manifest, indent=2))
    lock_path = work / "package-lock.json"
    if lock_path.is_file():
        # Everything else stays as locked; only the hook's entry is dropped, or npm fetches it.
        lock = json.loads(lock_path.read_text())
        lock["packages"].pop("node_modules/use-webmcp-tool", None)
        lock["packages"][""].setdefault("dependencies", {})["use-webmcp-tool"] = f"file:{hook}"
        lock_path.write_text(json.dumps(lock, indent=2))
    return True


def build_one(source: Path, cache: Path, env: dict[str, str], hook: Path | None = None) -> dict[str, str]:
    """Build one demo; {"out": folder} or {"error": what failed, "log": path}."""
    name = source.name
    work = cache / "build" / name
    log = cache / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    digest = _digest(source) + (f":{_digest(hook)}" if hook else "")
    stamp = work / ".built-from"
    out = _output_dir(work, name)
    if out is not None and stamp.is_file() and stamp.read_text() == digest:
        return {"out": str(out), "log": str(log), "cached": "yes"}
    log.write_text("")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work, ignore=shutil.ignore_patterns(*_SKIP))
    locked = (work / "package-lock.json").is_file() and not _local_hook(work, hook)
    # --install-links copies the local package in, so the bundler finds its react in the demo.
    install = ["npm", "ci"] if locked else ["npm", "install", "--install-links"]
    build = ["npm", "run", "build"]
    if (work / "angular.json").is_file():
        _no_font_inlining(work)
        build += ["--", "--base-href", f"/demos/{name}/"]
    try:
        _run([*install, "--no-audit", "--no-fund", "--cache", str(cache / "npm")], work, env, log)
        _run(build, work, env, log)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return {"error": f"{' '.join(map(str, exc.cmd))} failed: {' | '.join(tail)}"[:400], "log": str(log)}
    out = _output_dir(work, name)
    if out is None:
        return {"error": "the build wrote no index.html", "log": str(log)}
    stamp.write_text(digest)
    return {"out": str(out), "log": str(log), "cached": "no"}


def build_all(
    demos: Path, cache: Path, only: set[str] | None = None, hook: Path | None = None
) -> dict[str, dict[str, str]]:
    """Build every demo of `demos` that has a package.json; the record written to CACHE/builds.json."""
    cache.mkdir(parents=True, exist_ok=True)
    node = node22_bin(cache)
    env = {**os.environ, "PATH": f"{node}{os.pathsep}{os.environ['PATH']}", "CI": "1", "NG_CLI_ANALYTICS": "false"}
    # Some builds import `../shared/…` (the sport shop's polyfill): keep it beside the copies.
    if (demos / "shared").is_dir():
        shutil.copytree(demos / "shared", cache / "build" / "shared", dirs_exist_ok=True)
    record_path = cache / "builds.json"
    record: dict[str, dict[str, str]] = json.loads(record_path.read_text()) if record_path.is_file() else {}
    for source in sorted(p for p in demos.iterdir() if (p / "package.json").is_file()):
        if only and source.name not in only:
            continue
        started = time.perf_counter()
        result = build_one(source, cache, env, hook)
        result["seconds"] = f"{time.perf_counter() - started:.0f}"
        record[source.name] = result
        print(f"{source.name}: {result.get('out') or result['error']} ({result['seconds']} s)", flush=True)
        record_path.write_text(json.dumps(record, indent=2))
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demos", type=Path, required=True, help="the demos/ folder of webmcp-tools")
    parser.add_argument("--cache", type=Path, required=True, help="where builds, logs and npm's cache go")
    parser.add_argument("--only", default="", help="comma-separated demo names")
    parser.add_argument("--use-webmcp-tool", type=Path, help="a local use-webmcp-tool package folder")
    args = parser.parse_args()
    only = {n for n in args.only.split(",") if n} or None
    hook = args.use_webmcp_tool.resolve() if args.use_webmcp_tool else None
    record = build_all(args.demos.resolve(), args.cache.resolve(), only, hook)
    sys.exit(1 if any("error" in r for r in record.values()) else 0)


if __name__ == "__main__":
    main()
