"""Record the AX trees that `tests/cdp/test_ax_patch.py` splices (run by hand, review the diff):

    PYTHONPATH=$PWD python -m tests.support.record_ax_patch

For each case, on the sample site's queue page in headless Chromium: the frame's tree from
`getFullAXTree` before a change, the same after it, and the raw answers of
`getAXNodeAndAncestors` and `queryAXTree` for each element the change touched (the form
`cdp_bridge.ax_patch.read_subtrees` reads them in), into `tests/cdp/data/ax_patch.json.gz`.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import anyio

from cdp_bridge.connection import Connection
from cdp_bridge.launcher import LaunchOptions, launch_browser
from sample_site import start_site
from tests.support.tabs import new_tab

OUT = Path(__file__).resolve().parent.parent / "cdp" / "data" / "ax_patch.json.gz"

# name → (a script that changes the page and answers the changed elements, as an array)
CASES = {
    "rows_rerendered": """(() => {
        const body = document.querySelector('#tickets tbody');
        const row = body.rows[0].cloneNode(true);
        row.cells[1].textContent = 'A brand new subject';
        body.rows[1].remove();
        body.append(row);
        return [body];
    })()""",
    "text_and_hidden": """(() => {
        const item = document.querySelector('#activity');
        const li = document.createElement('li'); li.textContent = 'called list_tickets'; item.prepend(li);
        const intro = document.querySelector('main p');
        intro.hidden = true;
        return [item, intro.parentElement];
    })()""",
    "heading_from_contents": """(() => {
        const h = document.querySelector('h1');
        const span = document.createElement('span'); span.textContent = ' (3 open)'; h.append(span);
        return [h];
    })()""",
}


async def _record(send: Any, frame_id: str, script: str) -> dict[str, Any]:
    before = (await send("Accessibility.getFullAXTree", {"frameId": frame_id}))["nodes"]
    reply = await send("Runtime.evaluate", {"expression": script})
    props = await send("Runtime.getProperties", {"objectId": reply["result"]["objectId"], "ownProperties": True})
    objects = [p["value"]["objectId"] for p in props["result"] if p["name"].isdigit()]
    after = (await send("Accessibility.getFullAXTree", {"frameId": frame_id}))["nodes"]
    subtrees = []
    for obj in objects:
        ancestors = await send("Accessibility.getAXNodeAndAncestors", {"objectId": obj})
        below = await send("Accessibility.queryAXTree", {"objectId": obj})
        subtrees.append({"ancestors": ancestors["nodes"], "nodes": below["nodes"]})
    return {"before": before, "after": after, "subtrees": subtrees}


async def main() -> None:
    runner, base = await start_site()
    recorded: dict[str, Any] = {}
    try:
        async with (
            await launch_browser(LaunchOptions(headless=True, debugging="port")) as browser,
            Connection.connect(browser.ws_url) as connection,
        ):
            for name, script in CASES.items():
                session = await new_tab(connection, "Page", "Runtime", "Accessibility")
                await session.send("Page.navigate", {"url": f"{base}/?late=never"})
                with anyio.fail_after(15):
                    while True:
                        ready = await session.send(
                            "Runtime.evaluate",
                            {
                                "expression": "document.querySelectorAll('#tickets tbody tr').length",
                                "returnByValue": True,
                            },
                        )
                        if ready.get("result", {}).get("value"):
                            break
                        await anyio.sleep(0.1)
                await anyio.sleep(0.5)
                frame_id = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
                recorded[name] = await _record(session.send, frame_id, script)
    finally:
        await runner.cleanup()
    OUT.write_bytes(gzip.compress(json.dumps(recorded, separators=(",", ":"), sort_keys=True).encode(), mtime=0))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    anyio.run(main)
