"""``parsers.hostclocks``: the least offsets that put several hosts' clocks onto one, worked by hand, and the words
for a clock's range and for bounds that contradict each other (the bundled profile with skewed hosts is
``test_xplane_skew.py``'s)."""

from __future__ import annotations

import pytest

from parsers import TraceContentError, hostclocks


def test_least_offsets_by_hand() -> None:
    """Bounds (a, b): b's clock reads at most so far ahead of a's. A reads 2 to 5 ns ahead of the reference R: it
    moves the least, 2; B reads within 1 ns of A, so 1 to 3 ahead of R once A is fixed: 1; C, joined to none, stays."""
    bounds = {("R", "A"): 5, ("A", "R"): -2, ("A", "B"): 1, ("B", "A"): 1}
    assert hostclocks.least_offsets(["A", "B", "C", "R"], "R", bounds, {}) == {"A": (2, 2, 5), "B": (1, 1, 3)}
    # Around a cycle of three hosts each reads a nanosecond behind the one before: no pair contradicts itself, the
    # cycle does.
    cycle = {("A", "B"): -1, ("B", "C"): -1, ("C", "A"): -1}
    with pytest.raises(TraceContentError, match=r"^a\.pb, b\.pb, c\.pb: no offsets between these hosts' clocks"):
        hostclocks.least_offsets(["A", "B", "C"], "A", cycle, {"A": "a.pb", "B": "b.pb", "C": "c.pb"})


def test_a_clocks_range_in_words() -> None:
    assert hostclocks.span(693_000, 1_202_000) == "0.693 to 1.202 ms ahead of"
    assert hostclocks.span(-2_500_000, -1_000_000) == "1.000 to 2.500 ms behind"
    assert hostclocks.span(-100_000, 115_000) == "from 0.100 ms behind to 0.115 ms ahead of"


def test_two_hosts_bounds_that_contradict_name_both_files_and_both_bounds() -> None:
    """b reads at most 4.885 ms behind a by one bound, at least 0.104 ms ahead... by the other: no offset."""
    bounds = {("a", "b"): (-4_885_000, "transfers"), ("b", "a"): (104_000, "transfers")}
    said = hostclocks.contradiction("a", "b", bounds, {"a": "run/a.xplane.pb", "b": "run/b.xplane.pb"})
    assert said == ("run/a.xplane.pb and b.xplane.pb: no clock offset has every tensor received after it was sent: "
                    "their transfers put the second's clock at least 4.885 ms behind the first's and at most 0.104 "
                    "ms behind")
