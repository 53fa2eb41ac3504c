"""A long table or list read only in part (`cdp_bridge.ax.read_frame_tree` with `keep`), without a browser.

The recorded 3,000-row page is cut the way the partial read leaves it: rows and list items
past the first 20 of their run are bare nodes marked `UNREAD`, with nothing below them. The
window's state must be the same as from the whole tree, and the blocks must say how many
rows there are.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

from cdp_bridge.ax import UNREAD
from webmcp.view.build import BlockIds, FrameNodes, build_view, run_part
from webmcp.view.paging import block_page, rows_page, unread_in

DATA = Path(__file__).parent / "data" / "ax"
KEEP = 20


def _whole() -> list[FrameNodes]:
    doc = json.loads(gzip.decompress((DATA / "big.json.gz").read_bytes()))
    return [FrameNodes.from_json(f) for f in doc["frames"]]


def _cut_like_the_partial_read(frames: list[FrameNodes], keep: int = KEEP) -> list[FrameNodes]:
    out = []
    for frame in frames:
        frame = copy.deepcopy(frame)
        by_id = {n["nodeId"]: n for n in frame.nodes}
        runs: dict[str, list[dict[str, Any]]] = {}
        for node in frame.nodes:
            if node.get("role", {}).get("value") in ("row", "listitem") and node.get("childIds"):
                runs.setdefault(node.get("parentId", ""), []).append(node)
        dropped: set[str] = set()
        for run in runs.values():
            for node in run[keep:]:
                node[UNREAD] = True
                stack = list(node["childIds"])
                while stack:
                    child = stack.pop()
                    dropped.add(child)
                    stack.extend(by_id[child].get("childIds", ()) if child in by_id else ())
        frame.nodes = [n for n in frame.nodes if n["nodeId"] not in dropped]
        out.append(frame)
    return out


def test_the_state_of_a_partly_read_page_is_the_state_of_the_whole_page() -> None:
    whole = build_view(_whole(), BlockIds())
    part = build_view(_cut_like_the_partial_read(_whole()), BlockIds())
    assert part.blocks == whole.blocks
    assert part.title == whole.title and part.headings == whole.headings and part.notices == whole.notices
    assert len(part.full_blocks) == len(whole.full_blocks)


def test_a_partly_read_table_holds_its_first_rows_and_says_how_many_there_are() -> None:
    view = build_view(_cut_like_the_partial_read(_whole()), BlockIds())
    table = next(b for b in view.full_blocks if b["type"] == "table")
    whole_table = next(b for b in build_view(_whole(), BlockIds()).full_blocks if b["type"] == "table")
    assert table["rows"] == whole_table["rows"][:KEEP] and table["total"] == 3000 and table["offset"] == 0
    assert table["columns"] == ["ID", "Customer", "Amount", "Status"]
    customers = next(b for b in view.full_blocks if b["type"] == "list" and b.get("total") == 500)
    assert len(customers["items"]) == KEEP
    # Where the rest must be read from: the table's own element, in its frame.
    assert set(view.sources) == {table["id"], customers["id"]}
    frame_key, backend = view.sources[table["id"]][:2]
    assert frame_key == _whole()[0].key and isinstance(backend, int)


def test_paging_knows_which_rows_it_holds_and_which_must_be_read() -> None:
    view = build_view(_cut_like_the_partial_read(_whole()), BlockIds())
    table = next(b for b in view.full_blocks if b["type"] == "table")
    assert not unread_in(table, 0, KEEP) and unread_in(table, 0, KEEP + 1) and unread_in(table, 2990, 100)
    assert not unread_in(table, 3000, 10)  # past the end: nothing to read
    part = rows_page(view.full_blocks, table["id"], 10, 5)
    assert part is not None and part["total"] == 3000 and len(part["rows"]) == 5
    page = block_page(view.full_blocks, 0, 100)
    cut = next(b for b in page["blocks"] if b["type"] == "table")
    assert cut["total"] == 3000 and len(cut["rows"]) == KEEP


def test_rows_read_later_come_out_as_the_whole_tree_has_them() -> None:
    # A later read of rows 2,000-2,009: the table with its header row and those rows read, the others bare.
    whole = _whole()[0]
    by_id = {n["nodeId"]: n for n in whole.nodes}
    table = next(n for n in whole.nodes if n.get("role", {}).get("value") == "table")
    rows: list[dict[str, Any]] = []
    stack = [c for c in reversed(table["childIds"]) if c in by_id]
    while stack:
        node = by_id[stack.pop()]
        if node.get("role", {}).get("value") == "row":
            rows.append(node)
        else:
            stack.extend(c for c in reversed(node.get("childIds", ())) if c in by_id)
    wanted = {rows[0]["nodeId"], *(r["nodeId"] for r in rows[2001:2012])}
    keep: dict[str, dict[str, Any]] = {}
    stack = [table["nodeId"]]
    while stack:
        node = copy.deepcopy(by_id[stack.pop()])
        keep[node["nodeId"]] = node
        if node.get("role", {}).get("value") == "row" and node["nodeId"] not in wanted:
            node[UNREAD] = True
            continue
        stack.extend(c for c in node.get("childIds", ()) if c in by_id)
    top = keep[table["nodeId"]]
    top.pop("parentId", None)
    frame = FrameNodes(whole.key, [top, *(n for k, n in keep.items() if k != top["nodeId"])])
    got = run_part(frame, top["nodeId"], "table", 2000, 10)
    expected = next(b for b in build_view(_whole(), BlockIds()).full_blocks if b["type"] == "table")["rows"]
    assert got == expected[2000:2010]
    assert run_part(frame, top["nodeId"], "table", 2000, 10, secret_values={got[0][1]})[0][1] != got[0][1]
