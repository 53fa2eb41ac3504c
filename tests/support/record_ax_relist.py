"""Record the AX trees that `tests/cdp/test_ax_relist.py` relists (run by hand, review the diff):

    PYTHONPATH=$PWD python -m tests.support.record_ax_relist

For each case, on a small board page in headless Chromium: the frame's tree from `getFullAXTree`
before a change of child lists, the same after it, and for each element whose child list changed
the raw answers `cdp_bridge.ax_relist.read_relisted` reads (its `getAXNodeAndAncestors`, and
`queryAXTree` of each child it gained), into `tests/cdp/data/ax_relist.json.gz`.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import LaunchOptions, launch_browser
from tests.support.tabs import new_tab

OUT = Path(__file__).resolve().parent.parent / "cdp" / "data" / "ax_relist.json.gz"

_CARD = (
    '<article id="{id}"><div class="meta">{id}: 3 pts</div><strong>Task {id}</strong><button>Edit</button></article>'
)
_PAGE = (
    "<!doctype html><title>Board</title><main>"
    '<section aria-label="To do"><div class="cards" id="todo">{todo}</div></section>'
    '<section aria-label="Done"><div class="cards" id="done">{done}</div></section>'
    '<ul id="list"><li>one</li><li>two</li><li>three</li></ul>'
    '<div id="mixed">Before <article id="m1">first</article> between <article id="m2">second</article></div>'
    "</main>"
)
PAGE = _PAGE.format(
    todo="".join(_CARD.format(id=f"T-{i}") for i in range(1, 5)),
    done="".join(_CARD.format(id=f"D-{i}") for i in range(1, 3)),
)
# name → a script that changes child lists and answers [[element, ...the children it gained], ...]
CASES = {
    "card_moved": """(() => {
        const card = document.getElementById('T-2');
        document.getElementById('done').appendChild(card);
        return [[document.getElementById('todo')], [document.getElementById('done'), card]];
    })()""",
    "card_added_and_removed": """(() => {
        const todo = document.getElementById('todo');
        document.getElementById('T-4').remove();
        const card = document.getElementById('T-1').cloneNode(true);
        card.id = 'T-9'; card.querySelector('strong').textContent = 'Task T-9';
        todo.prepend(card);
        return [[todo, card]];
    })()""",
    "list_item_added": """(() => {
        const list = document.getElementById('list');
        const item = document.createElement('li'); item.textContent = 'zero';
        list.prepend(item);
        return [[list, item]];
    })()""",
    "text_among_children": """(() => {
        const mixed = document.getElementById('mixed');
        const card = document.createElement('article'); card.textContent = 'third';
        mixed.appendChild(card);
        return [[mixed, card]];
    })()""",
}


async def _record(send: Any, frame_id: str, script: str) -> dict[str, Any]:
    before = (await send("Accessibility.getFullAXTree", {"frameId": frame_id}))["nodes"]
    reply = await send("Runtime.evaluate", {"expression": script})
    relisted = []
    for group in await _elements(send, reply["result"]["objectId"]):
        objects = await _elements(send, group)
        ancestors = await send("Accessibility.getAXNodeAndAncestors", {"objectId": objects[0]})
        added = [(await send("Accessibility.queryAXTree", {"objectId": o}))["nodes"] for o in objects[1:]]
        relisted.append({"ancestors": ancestors["nodes"], "added": added})
    after = (await send("Accessibility.getFullAXTree", {"frameId": frame_id}))["nodes"]
    return {"before": before, "after": after, "relisted": relisted}


async def _elements(send: Any, object_id: str) -> list[str]:
    props = await send("Runtime.getProperties", {"objectId": object_id, "ownProperties": True})
    return [p["value"]["objectId"] for p in props["result"] if p["name"].isdigit()]


async def main() -> None:
    recorded: dict[str, Any] = {}
    async with (
        await launch_browser(LaunchOptions(headless=True, debugging="port")) as browser,
        Connection.connect(browser.ws_url) as connection,
    ):
        for name, script in CASES.items():
            session = await new_tab(connection, "Page", "Runtime", "Accessibility")
            await session.send("Page.navigate", {"url": "data:text/html," + quote(PAGE)})
            with anyio.fail_after(15):
                while True:
                    ready = await session.send(
                        "Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True}
                    )
                    if ready.get("result", {}).get("value") == "complete":
                        break
                    await anyio.sleep(0.1)
            frame_id = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            recorded[name] = await _record(session.send, frame_id, script)
    OUT.write_bytes(gzip.compress(json.dumps(recorded, separators=(",", ":"), sort_keys=True).encode(), mtime=0))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    anyio.run(main)
