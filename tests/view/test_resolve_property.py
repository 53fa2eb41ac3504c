"""Every candidate a refusal lists resolves, given back as listed, to a target of its own (issue 39)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from webmcp.view.targets import PRESSABLE, ActionTarget, Refusal, Resolved, resolve, resolve_press

_LABELS = [
    "Reply",
    "reply",
    "REPLY",
    "Reply #2",
    "Reply (#2)",
    "Yes",
    "yes",
    "Section 2 (collapsed)",
    "Section 2",
    "Re",
    "Phone",
    "Phone (unavailable)",
]
_KINDS = ["field", "button", "link", "control", "text"]


@st.composite
def _targets(draw: st.DrawFn) -> list[ActionTarget]:
    count = draw(st.integers(min_value=1, max_value=12))
    return [
        ActionTarget(
            kind=draw(st.sampled_from(_KINDS)),
            label=draw(st.sampled_from(_LABELS)),
            role="textbox",
            frame_key="1",
            backend_id=i,
            block_id=draw(st.sampled_from(["b1", "b2", "b3"])),
        )
        for i in range(count)
    ]


_QUERIES = st.sampled_from([*_LABELS, "Reply #1", "Reply #3", "Sec", "R", "re", "PHONE", "Phone #2", "nothing"])


@settings(max_examples=1500, deadline=None)
@given(_targets(), _QUERIES, st.sampled_from([None, "b1", "b2"]))
def test_every_listed_candidate_resolves_to_its_own_target(
    targets: list[ActionTarget], label: str, block_id: str | None
) -> None:
    # One kind of target: a listed label alone names its target too (ordinals count over the window).
    # `press` tries controls, then fields, then text: there the block listed with it settles it.
    for decide, alone in (
        (lambda lab, blk: resolve(targets, lab, blk, frozenset({"field"}), "field"), True),
        (lambda lab, blk: resolve(targets, lab, blk, PRESSABLE, "button, link or control"), True),
        (lambda lab, blk: resolve_press(targets, lab, blk), False),
    ):
        found = decide(label, block_id)
        if not isinstance(found, Refusal) or not found.candidates:
            continue
        picked: list[int] = []
        for candidate in found.candidates:
            for given_block in (candidate["blockId"], None) if alone else (candidate["blockId"],):
                again = decide(str(candidate["label"]), given_block)
                assert isinstance(again, Resolved), (candidate, again)
                if given_block is not None:
                    picked.append(again.target.backend_id)
        assert len(set(picked)) == len(picked), "each candidate names a target of its own"


def test_an_exact_case_wins_and_a_state_suffix_is_optional() -> None:
    targets = [
        ActionTarget("button", "yes", "button", "1", 1, block_id="b1"),
        ActionTarget("button", "Yes", "button", "1", 2, block_id="b1"),
        ActionTarget("control", "Section 2 (collapsed)", "tab", "1", 3, block_id="b2"),
    ]
    for label, backend in (("yes", 1), ("Yes", 2), ("Section 2", 3), ("section 2 (COLLAPSED)", 3)):
        found = resolve_press(targets, label, None)
        assert isinstance(found, Resolved) and found.target.backend_id == backend, label
    refused = resolve_press(targets, "YES", None)
    assert isinstance(refused, Refusal) and [c["label"] for c in refused.candidates] == ["yes", "Yes"]
