"""End to end: every read of a page that changed only where its observer saw it is read again only
there (`live_view.read_changes`), and gives the very view a whole read gives.

The bridge runs with `WEBMCP_VERIFY_INCREMENTAL=1`: each incremental read is followed by a
whole read with the block ids as they were, and any difference is logged and counted; the
counts go to a file (`WEBMCP_VERIFY_INCREMENTAL_COUNTS`) that the test reads.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from cdp_bridge.launcher import BrowserProcess
from tests.support.stage import Stage, open_stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _counts(path: Path) -> dict[str, int]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


async def test_smoke(site: str, browser: BrowserProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = Path(tempfile.mkdtemp()) / "counts.json"
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL", "1")
    monkeypatch.setenv("WEBMCP_VERIFY_INCREMENTAL_COUNTS", str(counts))
    with open("/tmp/h-incr/errlog.txt", "w") as errlog:
        async with open_stage(site, browser, "auto", errlog=errlog) as stage:
            names = await stage.wait_tools(lambda n: any(x.endswith("__list_tickets") for x in n))
            win = next(x for x in names if x.endswith("__list_tickets")).split("__")[0]
            for tool, args in [
                ("list_tickets", {"status": "all"}),
                ("close_ticket", {"id": 101, "resolution": "done"}),
                ("add_note", {"id": 102, "text": "hello"}),
                ("list_tickets", {"status": "open"}),
            ]:
                result = await stage.call(f"{win}__{tool}", args)
                print(tool, result.is_error)
            await anyio.sleep(1)
    print(_counts(counts))
