"""Spans closed at both ends (parsers/spans.py): their union and where two unions overlap, worked by hand."""

from __future__ import annotations

from parsers.spans import intersection, union


def test_spans_that_overlap_or_touch_are_one_and_come_out_in_order() -> None:
    assert union([(5, 7), (0, 2), (2, 3), (6, 9), (11, 11)]) == [(0, 3), (5, 9), (11, 11)]
    assert union([]) == []


def test_spans_one_apart_stay_two() -> None:
    assert union([(0, 2), (3, 4)]) == [(0, 2), (3, 4)]


def test_two_unions_overlap_where_both_hold_a_shared_end_included() -> None:
    assert intersection([(0, 3), (5, 9)], [(2, 6), (9, 12)]) == [(2, 3), (5, 6), (9, 9)]
    assert intersection([(0, 1)], [(2, 3)]) == []
