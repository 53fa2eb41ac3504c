"""wait_for's rules without a browser: what it matches, what it masks, when it is refused (desktop/waiting.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from webmcp.desktop.waiting import Wanted, block_text, wait_for
from webmcp.desktop.windows import WindowState
from webmcp.errors import ToolError
from webmcp.models import field_item, fields_block, list_block, notice_block, table_block, text_block

pytestmark = pytest.mark.anyio


@dataclass
class FakeTab:
    window: WindowState
    blocks: list[dict[str, Any]] = field(default_factory=list)
    loading: bool = False
    open: bool = True

    def page_blocks(self) -> list[dict[str, Any]]:
        return self.blocks

    def is_open(self) -> bool:
        return self.open

    def ended(self) -> str | None:
        return None if self.open else "closed"

    def is_fresh(self) -> bool:
        return True

    async def fresh(self, budget: float) -> bool:
        return True

    def show(self, blocks: list[dict[str, Any]]) -> None:
        self.blocks = blocks
        self.window.blocks = blocks
        self.window.version += 1


@dataclass
class FakeTimeouts:
    tool_call: float = 30.0


@dataclass
class FakeDesk:
    tabs: dict[str, FakeTab]
    secrets: frozenset[str] = frozenset()
    modals: list[WindowState] = field(default_factory=list)
    timeouts: FakeTimeouts = field(default_factory=FakeTimeouts)
    listeners: list[Callable[[], None]] = field(default_factory=list)

    def window_states(self) -> list[WindowState]:
        return [t.window for t in self.tabs.values()] + self.modals

    def window(self, window_id: str) -> FakeTab | None:
        return self.tabs.get(window_id)

    def known_secrets(self) -> frozenset[str]:
        return self.secrets

    @contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        self.listeners.append(listener)
        try:
            yield
        finally:
            self.listeners.remove(listener)

    def changed(self) -> None:
        for listener in list(self.listeners):
            listener()


def _desk(blocks: list[dict[str, Any]], **kw: Any) -> tuple[FakeDesk, FakeTab]:
    tab = FakeTab(WindowState(id="tab-1", title="Queue", blocks=list(blocks)), list(blocks))
    return FakeDesk({"tab-1": tab}, **kw), tab


def test_a_block_reads_as_its_labels_values_items_and_cells_not_its_keys() -> None:
    assert block_text(fields_block("f1", [field_item("Name", "Ada"), field_item("Age", 37)])) == "Name Ada Age 37"
    assert block_text(table_block(None, ["Item", "Qty"], [["Rope", 2]])) == "Item Qty Rope 2"
    assert block_text(list_block("b2", ["one", "two"])) == "one two"
    assert block_text(notice_block("n", "error", "Card declined")) == "Card declined"


async def test_text_already_shown_answers_at_once_with_its_excerpt() -> None:
    desk, _ = _desk([text_block(None, "Your order   SHIPPED on Friday.")])
    answer = await wait_for(desk, "tab-1", Wanted(text="order shipped"), 1)
    assert answer.message == "tab-1 shows \u201corder shipped\u201d."
    assert answer.result == {"version": 1, "changedBlocks": 0, "found": ["Your order SHIPPED on Friday."]}
    assert desk.listeners == [], "the wait stopped listening"


async def test_a_secret_value_on_the_page_is_never_matched() -> None:
    desk, _ = _desk([text_block(None, "Your password is hunter2")], secrets=frozenset({"hunter2"}))
    with pytest.raises(ToolError) as caught:
        await wait_for(desk, "tab-1", Wanted(text="hunter2"), 0.05)
    assert caught.value.code == "action_timeout"
    assert "hunter2" not in caught.value.message.replace("\u201chunter2\u201d", "")


async def test_text_that_comes_wakes_the_wait_on_the_change() -> None:
    desk, tab = _desk([text_block(None, "Placing your order")])
    answers: list[Any] = []

    async def wait() -> None:
        answers.append(await wait_for(desk, "tab-1", Wanted(text="Order placed", text_gone="Placing"), 10))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert not answers
            tab.show([text_block(None, "Order placed"), text_block(None, "Thank you")])
            desk.changed()
    assert answers[0].result["version"] == 2
    assert answers[0].result["changedBlocks"] == 3  # one gone, two new


async def test_a_modal_that_opens_or_a_tab_that_closes_ends_the_wait() -> None:
    desk, tab = _desk([text_block(None, "Queue")])
    errors: list[ToolError] = []

    async def wait() -> None:
        with pytest.raises(ToolError) as caught:
            await wait_for(desk, "tab-1", Wanted(text="never"), 10)
        errors.append(caught.value)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            desk.modals.append(WindowState(id="dlg-2", title="Alert", modal=True, owner_id="tab-1"))
            desk.changed()
        assert errors[-1].code == "blocked_by_modal" and errors[-1].body.blocking_window_id == "dlg-2"
        desk.modals.clear()
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            tab.open = False
            desk.changed()
        assert errors[-1].code == "window_not_found"


async def test_a_page_still_loading_that_shows_nothing_does_not_settle() -> None:
    desk, tab = _desk([])
    tab.loading = True
    with pytest.raises(ToolError) as caught:
        await wait_for(desk, "tab-1", Wanted(), 0.2)
    assert caught.value.code == "action_timeout"
    assert "nothing of it has rendered" in caught.value.message
