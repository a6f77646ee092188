"""The pure rules of a lead's split and merge (annotator/domain/units.py)."""

import pytest

from annotator.domain.units import SegmentationError, Unit, changed_units, merge_with_next, snap_to_gap, split_unit

RESPONSE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show. Done."


def units_of(response, spans):
    return [Unit(i, start, end, response[start:end]) for i, (start, end) in enumerate(spans)]


DONE = RESPONSE.index("Done.")
TWO_IN_ONE = units_of(RESPONSE, [(0, DONE - 1), (DONE, len(RESPONSE))])


def test_a_split_between_the_two_sentences_gives_two_units_and_renumbers_the_rest():
    cut = RESPONSE.index(" The red")
    after = split_unit(TWO_IN_ONE, RESPONSE, 0, cut)
    assert [u.text for u in after] == ["The lighthouse was automated in 1984.",
                                       "The red and white bands were chosen because they show.", "Done."]
    assert [u.index for u in after] == [0, 1, 2]
    assert all(RESPONSE[u.start:u.end] == u.text for u in after)


@pytest.mark.parametrize("offset", [RESPONSE.index("1984.") + 2, RESPONSE.index(" The red") + 1])
def test_a_split_point_inside_a_word_snaps_to_the_nearest_gap(offset):
    # Inside "1984." the nearest gap is before it; just after the space, the space itself.
    after = split_unit(TWO_IN_ONE, RESPONSE, 0, offset)
    assert after[0].text in ("The lighthouse was automated in", "The lighthouse was automated in 1984.")
    assert after[0].text + RESPONSE[after[0].end:after[1].start] + after[1].text == TWO_IN_ONE[0].text
    assert not after[0].text.endswith(" ") and not after[1].text.startswith(" ")


def test_snapping_prefers_the_gap_the_offset_is_in_then_the_nearer_one():
    assert snap_to_gap("ab cd  ef", 6) == (5, 7)
    assert snap_to_gap("ab cd  ef", 4) == (2, 3)  # "c|d": 1 from either gap, the earlier wins
    assert snap_to_gap("abc defgh ij", 8) == (9, 10)  # "defg|h": 1 from the second gap, 4 from the first
    assert snap_to_gap("ab cd  ef", 0) == (2, 3)
    assert snap_to_gap("ab cd  ef", 9) == (5, 7)


@pytest.mark.parametrize("text, offset, message", [
    ("Word.", 2, "no space between words"),
    ("Two words", -1, "outside the unit"),
    ("Two words", 10, "outside the unit"),
])
def test_a_split_that_would_leave_a_part_empty_or_cut_outside_is_refused(text, offset, message):
    with pytest.raises(SegmentationError, match=message):
        split_unit([Unit(0, 0, len(text), text)], text, 0, offset)


def test_a_split_of_a_unit_that_does_not_exist_is_refused():
    with pytest.raises(SegmentationError, match="no unit 6 "):  # index 5: the sixth unit, as a person counts
        split_unit(TWO_IN_ONE, RESPONSE, 5, 3)


def test_a_merge_joins_a_unit_with_the_next_one_with_the_whitespace_between():
    units = split_unit(TWO_IN_ONE, RESPONSE, 0, RESPONSE.index(" The red"))
    merged = merge_with_next(units, RESPONSE, 1)
    assert [u.text for u in merged] == ["The lighthouse was automated in 1984.",
                                        "The red and white bands were chosen because they show. Done."]
    assert merge_with_next(merged, RESPONSE, 0) == [Unit(0, 0, len(RESPONSE), RESPONSE)]


def test_the_last_unit_has_nothing_to_merge_with_and_text_between_units_blocks_a_merge():
    with pytest.raises(SegmentationError, match="no next unit"):
        merge_with_next(TWO_IN_ONE, RESPONSE, 1)
    gapped = units_of(RESPONSE, [(0, 37), (DONE, len(RESPONSE))])  # "The red and white…" belongs to no unit
    with pytest.raises(SegmentationError, match="not next to each other"):
        merge_with_next(gapped, RESPONSE, 0)


def test_units_that_do_not_match_the_response_are_refused():
    with pytest.raises(SegmentationError, match="do not match"):
        split_unit([Unit(0, 0, 5, "other text")], RESPONSE, 0, 2)
    with pytest.raises(SegmentationError, match="not numbered in order"):
        merge_with_next([TWO_IN_ONE[1], TWO_IN_ONE[0]], RESPONSE, 0)


def test_changed_units_names_what_went_and_what_came():
    after = split_unit(TWO_IN_ONE, RESPONSE, 0, RESPONSE.index(" The red"))
    gone, new = changed_units(TWO_IN_ONE, after)
    assert [u.text for u in gone] == [TWO_IN_ONE[0].text]
    assert [u.text for u in new] == [after[0].text, after[1].text]
