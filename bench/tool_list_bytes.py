#!/usr/bin/env python
"""What `tools/list` costs an agent (issue 40 item 1): its bytes, per window and per tool, and its churn.

    .venv/bin/python bench/tool_list_bytes.py [--code PATH]

A real bridge over stdio (`--headless`, the sample site on 127.0.0.1), driven as an agent
would: it lists the tools after every `tools/list_changed`, as clients do. Measured:
* the bytes of each tool of the start tab's list (compact JSON, as on the wire), and of the
  tab's browser and window actions together (the page's own tools apart);
* `tools/list_changed` per step of a walk through pages without WebMCP tools (`/plain/`):
  navigate to each page, fill the search field, press a link, go back; and the bytes of the
  lists a client reads because of them;
* whether the same set of tools came back in the same order (a list's order for its set).
`--code PATH` measures another checkout's bridge (its `webmcp`), for a before/after.
Prints Markdown; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers.subjects import Bridge  # noqa: E402
from sample_site import serve_in_thread  # noqa: E402


def _page_overhead(tool: Any) -> int:
    """The bytes the bridge adds to a page tool: all of it but the page's schema and quoted words."""
    schema = json.loads(json.dumps(tool.input_schema))
    schema.get("properties", {}).pop("expectedVersion", None)
    description = tool.description or ""
    words = description.split("\u201c", 1)[1].rsplit("\u201d", 1)[0] if "\u201c" in description else ""
    own = len(json.dumps(schema, separators=(",", ":"))) + len(words.encode())
    return _size(tool) - own


def _size(tool: Any) -> int:
    return len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")))


async def _listing(bridge: Bridge) -> tuple[list[Any], int]:
    assert bridge.client is not None
    with anyio.fail_after(15):
        listed = await bridge.client.list_tools()
    return list(listed.tools), sum(_size(t) for t in listed.tools)


async def run(code: Path) -> None:
    with serve_in_thread() as site, tempfile.TemporaryDirectory() as work:
        bridge = Bridge(Path(work), site, url=site + "/plain/")
        bridge.env["PYTHONPATH"] = str(code)
        await bridge.open()
        try:
            await bridge.ready(30)
            win = bridge.win
            tools, total = await _listing(bridge)
            own = [t for t in tools if t.name.startswith(f"{win}__")]
            print(f"## tools/list on `/plain/` ({len(tools)} tools, {total:,} B)\n")
            print("| tool | bytes |\n|---|---:|")
            for t in tools:
                print(f"| `{t.name}` | {_size(t):,} |")
            print(f"\n{win}'s browser and window actions together: **{sum(_size(t) for t in own):,} B**\n")

            pages = ("search.html", "guide.html", "account.html", "cart.html", "index.html")
            await bridge.call(f"{win}__navigate", {"url": site + "/"}, timeout=30)
            names = await bridge.wait_tools(lambda n: any(x.endswith("__list_tickets") for x in n), 30)
            tools, _ = await _listing(bridge)
            page_tools = [
                t for t in tools if t.name.startswith(f"{win}__") and t.description.startswith(("The page", "A tool"))
            ]
            over = sorted(_page_overhead(t) for t in page_tools)
            print(
                f"Page tools on the sample site's `/` ({len(page_tools)} of {len(names)} tools): the bridge adds "
                f"{over[0]}–{over[-1]} B to each (median {over[len(over) // 2]} B)\n"
            )
            await bridge.call(f"{win}__navigate", {"url": site + "/plain/"}, timeout=30)
            await anyio.sleep(0.5)

            steps: list[tuple[str, str, dict[str, Any]]] = [
                (f"navigate {page}", "navigate", {"url": f"{site}/plain/{page}"}) for page in pages
            ]
            steps += [
                ("navigate search.html", "navigate", {"url": f"{site}/plain/search.html"}),
                ("back", "navigate", {"go": "back"}),
                ("forward", "navigate", {"go": "forward"}),
            ]
            orders: dict[frozenset[str], list[str]] = {}
            print("| step | tools/list_changed | lists read | bytes of lists |\n|---|---:|---:|---:|")
            sum_changes = sum_bytes = 0
            for label, action, args in steps:
                before = bridge.count("tools")
                try:
                    await bridge.call(f"{win}__{action}", args, timeout=30)
                except Exception as exc:  # a step that fails is reported, not fatal
                    print(f"| {label} | failed: {exc} | | |")
                    continue
                await anyio.sleep(0.5)  # late notifications of the step
                changes = bridge.count("tools") - before
                read = 0
                for _ in range(changes):
                    tools, size = await _listing(bridge)
                    read += size
                    names = [t.name for t in tools]
                    known = orders.setdefault(frozenset(names), names)
                    if known != names:
                        print(f"| (order differs for the same set after {label}) | | | |")
                sum_changes += changes
                sum_bytes += read
                print(f"| {label} | {changes} | {changes} | {read:,} |")
            print(f"| **all** | **{sum_changes}** | | **{sum_bytes:,}** |")
        finally:
            await bridge.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose bridge to run")
    args = parser.parse_args()
    anyio.run(run, args.code.resolve())


if __name__ == "__main__":
    main()
