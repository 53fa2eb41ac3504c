"""Window actions' label resolution and value coercion (webmcp/view/targets.py): pure, no browser."""

from __future__ import annotations

from webmcp.view.targets import ActionTarget, Coerced, Refusal, Resolved, coerce, resolve, resolve_press

FIELD = frozenset({"field"})
PRESS = frozenset({"button", "link"})


def _t(label: str, role: str = "textbox", kind: str = "field", block: str = "b2", **facts: object) -> ActionTarget:
    return ActionTarget(
        kind=kind,
        label=label,
        role=role,
        frame_key="1",
        backend_id=hash(label) % 10_000,  # type: ignore[arg-type]
        block_id=block,
        **facts,
    )  # type: ignore[arg-type]


SHIPPING = [
    _t("Full name"),
    _t("Country", "combobox", options=("Choose a country", "Norway", "Antarctica"), disabled_options=("Antarctica",)),
    _t("Pickup point", disabled=True),
    _t("Standard (3–5 days), free", "radio", group="Delivery speed"),
    _t("Express (1–2 days), €12.00", "radio", group="Delivery speed"),
    _t("Same day (sold out)", "radio", group="Delivery speed", disabled=True),
    _t("Delivery date", "Date"),
    _t("Gift wrap (€4.00)", "checkbox"),
    _t("Card number", sensitive=True),
    _t("Continue", "button", kind="button", block="b3"),
    _t("Sign in", "link", kind="link", block="b1"),
    _t("Sign in", "button", kind="button", block="b4"),
]


def _decide(label: str, value: object) -> tuple[ActionTarget, Coerced] | Refusal:
    found = resolve(SHIPPING, label, None, FIELD, "field")
    assert isinstance(found, Resolved), found
    return coerce(SHIPPING, found, value)


def test_a_label_matches_whatever_its_spacing_and_case() -> None:
    found = resolve(SHIPPING, "  full   NAME ", None, FIELD, "field")
    assert isinstance(found, Resolved) and found.target.label == "Full name"


def test_the_first_words_of_a_label_pick_it_when_only_one_starts_so() -> None:
    found = resolve(SHIPPING, "Express", None, FIELD, "field")
    assert isinstance(found, Resolved) and found.target.label.startswith("Express")


def test_an_unknown_label_is_named_and_the_shown_labels_listed() -> None:
    refused = resolve(SHIPPING, "Nickname", None, FIELD, "field")
    assert isinstance(refused, Refusal) and "Nickname" in refused.message
    assert "Full name" in refused.shown and "Continue" not in refused.shown, "only fields, for fill"


def test_a_word_shown_only_inside_longer_text_is_refused_saying_where_it_is() -> None:
    # MiniWoB's click-collapsible-2: the link's word is also a plain word of the open section.
    shown = [
        _t("Section #1 (expanded)", "tab", kind="control", block="b1"),
        _t('Expand the sections below, to find and click on the link "ullamcorper".', "generic", kind="text"),
        _t("Est id arcu ullamcorper lacus, risus lectus laoreet pellentesque tortor orci.", "generic", kind="text"),
        _t("Section #2 (collapsed)", "tab", kind="control", block="b3"),
    ]
    refused = resolve_press(shown, "Ullamcorper", None)
    assert isinstance(refused, Refusal) and not refused.candidates
    assert "no button, link or control labelled \u201cUllamcorper\u201d" in refused.message
    assert "shown only inside longer text" in refused.message
    quoted = (
        '(\u201c\u2026find and click on the link "ullamcorper".\u201d; '
        "\u201cEst id arcu ullamcorper lacus, risus lectus laoreet\u2026\u201d)"
    )
    assert quoted in refused.message, refused.message
    assert refused.shown == ("Section #1 (expanded)", "Section #2 (collapsed)")
    # A word that is only part of a longer word is not said to be shown.
    plain = resolve_press(shown, "corper", None)
    assert isinstance(plain, Refusal) and "inside longer text" not in plain.message
    # The text's first words still press it.
    found = resolve_press(shown, "Est id arcu", None)
    assert isinstance(found, Resolved) and found.target is shown[2]


def test_an_ambiguous_label_lists_its_candidates_with_block_ids_and_block_id_settles_it() -> None:
    refused = resolve(SHIPPING, "Sign in", None, PRESS, "button or link")
    assert isinstance(refused, Refusal)
    assert [c["blockId"] for c in refused.candidates] == ["b1", "b4"]
    assert refused.message.startswith("2 buttons or links are labelled \u201cSign in\u201d"), refused.message
    assert "b1" not in refused.message, "the candidates are listed once, as `candidates`"
    found = resolve(SHIPPING, "Sign in", "b4", PRESS, "button or link")
    assert isinstance(found, Resolved) and found.target.kind == "button"


def test_a_block_that_shows_no_such_thing_is_refused_saying_which_blocks_do() -> None:
    refused = resolve(SHIPPING, "Continue", "b9", PRESS, "button or link")
    assert isinstance(refused, Refusal) and "b9" in refused.message and "b3" in refused.message


def test_a_select_takes_an_option_by_its_text_and_refuses_a_missing_or_disabled_one() -> None:
    assert _decide("Country", "norway") == (SHIPPING[1], Coerced("select", text="Norway"))
    missing = _decide("Country", "Atlantis")
    assert isinstance(missing, Refusal) and "no option" in missing.message and "Norway" in missing.message
    disabled = _decide("Country", "Antarctica")
    assert isinstance(disabled, Refusal) and "disabled" in disabled.message


def test_a_disabled_field_refuses_any_value() -> None:
    refused = _decide("Pickup point", "Oslo")
    assert isinstance(refused, Refusal) and "disabled" in refused.message


def test_a_radio_group_by_its_label_takes_the_option_as_value() -> None:
    decided = _decide("Delivery speed", "Express")
    assert isinstance(decided, tuple) and decided[0].label.startswith("Express")
    assert decided[1] == Coerced("radio", checked=True)
    sold_out = _decide("Delivery speed", "Same day")
    assert isinstance(sold_out, Refusal) and "disabled" in sold_out.message
    none = _decide("Delivery speed", "By drone")
    assert isinstance(none, Refusal) and "Standard" in none.message


def test_checkboxes_take_true_or_false_and_a_radio_cannot_be_cleared() -> None:
    assert _decide("Gift wrap", True)[1] == Coerced("checkbox", checked=True)  # type: ignore[index]
    assert _decide("Gift wrap", "false")[1] == Coerced("checkbox", checked=False)  # type: ignore[index]
    assert isinstance(_decide("Gift wrap", "maybe"), Refusal)
    assert isinstance(_decide("Express", False), Refusal)


def test_dates_take_iso_values_only() -> None:
    assert _decide("Delivery date", "2027-03-15")[1] == Coerced("text", text="2027-03-15")  # type: ignore[index]
    refused = _decide("Delivery date", "15/03/2027")
    assert isinstance(refused, Refusal) and "ISO" in refused.message


def test_times_numbers_and_datetimes_are_checked_by_kind() -> None:
    targets = [_t("At", "InputTime"), _t("Seats", "spinbutton"), _t("When", "DateTime")]

    def go(label: str, value: object) -> object:
        found = resolve(targets, label, None, FIELD, "field")
        assert isinstance(found, Resolved)
        return coerce(targets, found, value)

    assert go("At", "20:45") == (targets[0], Coerced("text", text="20:45"))
    assert go("Seats", 3) == (targets[1], Coerced("text", text="3"))
    assert isinstance(go("Seats", "three"), Refusal)
    assert go("When", "2026-12-03T20:45") == (targets[2], Coerced("text", text="2026-12-03T20:45"))
    assert isinstance(go("When", "2026-12-03T20:45+01:00"), Refusal), "datetime-local has no zone"


def test_a_refused_secret_value_is_never_quoted() -> None:
    targets = [_t("PIN", "spinbutton", sensitive=True)]
    found = resolve(targets, "PIN", None, FIELD, "field")
    assert isinstance(found, Resolved)
    refused = coerce(targets, found, "hunter2-secret")
    assert isinstance(refused, Refusal) and "hunter2-secret" not in refused.message


def test_a_slider_is_not_filled_and_the_refusal_says_how_to_move_it() -> None:
    targets = [_t("Volume", "slider")]
    found = resolve(targets, "Volume", None, FIELD, "field")
    assert isinstance(found, Resolved)
    refused = coerce(targets, found, 70)
    assert isinstance(refused, Refusal) and "press `key`" in refused.message and "ArrowRight" in refused.message


def test_same_text_in_two_places_is_listed_by_where_it_stands_not_by_a_block_id_the_window_hides() -> None:
    # MiniWoB click-pie: the query quotes the letter in bold, and the pie shows it alone. The
    # window shows no id on a block of text alone, so "b47" alone would tell an agent nothing.
    shown = [
        _t('Expand the pie menu and click on the item labeled "e".', "paragraph", "text", block="b47"),
        _t("e", "StaticText", "text", block="b47"),
        _t("e", "StaticText", "text", block="b48"),
    ]
    refused = resolve_press(shown, "e", None)
    assert isinstance(refused, Refusal)
    assert refused.candidates == (
        {"label": "e #1", "blockId": "b47", "in": '\u2026click on the item labeled "e".'},
        {"label": "e #2", "blockId": "b48"},
    ), "the words inside the query say where they stand; the one alone is a line of its own"
    assert "e #1" not in refused.message, "the candidates are listed once, as `candidates`"
