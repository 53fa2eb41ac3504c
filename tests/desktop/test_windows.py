"""The window model on its own: operable set, modal chains, app-level modals, ids."""

from __future__ import annotations

from webmcp.desktop.windows import IdMint, WindowState, blocker_of, operable_ids, top_of_chain


def _w(window_id: str, modal: bool = False, owner: str | None = None) -> WindowState:
    return WindowState(id=window_id, title=window_id, modal=modal, owner_id=owner)


def test_unblocked_top_level_windows_are_all_operable() -> None:
    assert operable_ids([_w("A"), _w("C")]) == ["A", "C"]


def test_a_modal_chain_leaves_only_its_top_operable() -> None:
    windows = [_w("A"), _w("B"), _w("D1", True, "B"), _w("C"), _w("D2", True, "D1")]
    assert operable_ids(windows) == ["A", "C", "D2"]
    assert blocker_of(windows, "B") == "D2"
    assert blocker_of(windows, "D1") == "D2"
    assert blocker_of(windows, "D2") is None
    assert blocker_of(windows, "nope") is None


def test_closing_the_top_modal_hands_control_back_down_the_chain() -> None:
    windows = [_w("B"), _w("D1", True, "B"), _w("D2", True, "D1")]
    assert operable_ids(windows[:2]) == ["D1"]
    assert operable_ids(windows[:1]) == ["B"]


def test_an_app_level_modal_collapses_the_operable_set_to_its_chain_top() -> None:
    windows = [_w("A"), _w("B"), _w("D1", True, "B"), _w("APP", True, None)]
    assert operable_ids(windows) == ["APP"]
    assert blocker_of(windows, "A") == "APP"
    nested = [*windows, _w("APP2", True, "APP")]
    assert operable_ids(nested) == ["APP2"]
    assert blocker_of(nested, "D1") == "APP2"


def test_nested_app_level_modals_leave_the_newest_on_top() -> None:
    windows = [_w("A"), _w("APP1", True, None), _w("APP2", True, None)]
    assert operable_ids(windows) == ["APP2"]


def test_no_windows_means_nothing_operable() -> None:
    assert operable_ids([]) == []
    assert operable_ids([_w("APP", True, None)]) == ["APP"]


def test_a_new_modal_is_owned_by_the_top_of_its_tabs_chain() -> None:
    windows = [_w("tab-1"), _w("dlg-1", True, "tab-1"), _w("tab-2")]
    assert top_of_chain(windows, "tab-1") == "dlg-1"
    assert top_of_chain(windows, "tab-2") == "tab-2"


def test_ids_are_name_safe_and_never_reused() -> None:
    mint = IdMint()
    ids = [mint.mint("tab") for _ in range(3)] + [mint.mint("dlg")]
    assert ids == ["tab-1", "tab-2", "tab-3", "dlg-1"]
    assert all(c.isalnum() or c in "-_" for i in ids for c in i)


def test_window_json_has_exactly_the_seed_fields() -> None:
    state = WindowState(
        id="tab-1", title="T", version=7, summary="S", blocks=[{"type": "text", "id": "b1", "text": "x"}]
    )
    assert state.to_json() == {
        "id": "tab-1",
        "title": "T",
        "modal": False,
        "ownerId": None,
        "version": 7,
        "summary": "S",
        "blocks": [{"type": "text", "id": "b1", "text": "x"}],
    }
