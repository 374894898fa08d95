"""Spans ``(lo, hi)`` of integers, closed at both ends: their union and where two unions overlap.

One home for what the xplane reader's clock bounds (offsets a host's clock may read ahead), the link estimate's
time on the wire (:func:`tracegen.wire.busy_time`) and the testbed's phase tables (:mod:`validation.multiworker`)
each need: spans that overlap or touch are one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def union(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, those that overlap or touch made one: disjoint spans in order."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def intersection(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where two unions (:func:`union`: sorted, disjoint) overlap, as one such list; a shared end is a span of one
    point."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out
