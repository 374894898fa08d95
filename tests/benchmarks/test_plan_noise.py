"""The margin ``tracegen plan`` names its rivals by (:data:`tracegen.plan.NOISE_MARGIN`) and where it came from
(``benchmarks/plan_noise.py``): two rows of the benchmark's table in docs/model.md are computed again by the
benchmark's own function, the mlp development trace's (the quickest) and the row whose largest difference sets the
margin (a change to ``plan`` or ``predict`` that moves it fails here, not only in the next run of the benchmark), and
the margin, and the figures its comment gives, are the docs' summary's."""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Callable
from types import ModuleType

import pytest

from parsers.catalogue import read_catalogue
from tracegen.plan import NOISE_MARGIN

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = "dev/mlp_500mbit_q100_b128k_ps03"  # the README's plan trace, the quickest to recompute (a few seconds)


def words(path: str) -> str:
    return " ".join((ROOT / path).read_text().split())


def docs_rows() -> dict[str, list[str]]:
    """The benchmark's table in docs/model.md: trace → its row's cells."""
    rows = {}
    for line in (ROOT / "docs" / "model.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 11 and re.fullmatch(r"(dev|test)/\w+", cells[0]):
            rows[cells[0]] = cells
    return rows


def margin_row() -> str:
    """The trace whose largest difference (the table's fourth column) is the largest of all: the one that sets
    :data:`NOISE_MARGIN`."""
    rows = docs_rows()
    assert len(rows) == 12, sorted(rows)
    return max(rows, key=lambda t: abs(float(rows[t][3].split("%")[0])))


@pytest.mark.parametrize("name", [MLP, "the margin's"])
def test_the_docs_row_is_what_the_benchmark_computes(name: str, benchmark_module: Callable[[str], ModuleType]
                                                     ) -> None:
    trace = MLP if name == MLP else margin_row()  # the margin's: two and a half minutes
    bench = benchmark_module("plan_noise")
    points = bench.trace_points(ROOT / "data" / "validation" / trace / "trace", read_catalogue(bench.CATALOGUE),
                                1, trace)
    assert len({(p.worker, p.ps) for p in points}) == 12  # every pair of the example catalogue
    assert len(bench.distinct(points)) < len(points)  # those of the spot workers counted once
    assert sum(p.chosen for p in points) == 1 and any(p.within_noise for p in points)
    docs = (ROOT / "docs" / "model.md").read_text()
    assert bench.HEADER in docs
    assert bench.row(trace, points) in docs.splitlines()


def test_the_margin_is_the_largest_difference_over_every_point_rounded_up_as_its_comment_says() -> None:
    summary = re.search(r"every point \((\d+)\): median ([\d.]+)%, 90th percentile ([\d.]+)%, largest ([\d.]+)%",
                        words("docs/model.md"))
    assert summary is not None
    points, median, tail, largest = summary.groups()
    assert math.ceil(float(largest)) / 100 == NOISE_MARGIN
    assert docs_rows()[margin_row()][3].lstrip("+-").startswith(f"{largest}%")  # the row recomputed above
    comment = " ".join(line.strip().lstrip("#").strip() for line in (ROOT / "tracegen" / "plan.py").read_text()
                       .splitlines())
    assert (f"every N plan simulated ({points} points): median {median} %, 90th percentile {tail} %, largest "
            f"{largest} %") in comment
    # and with that margin, predict's own cheapest option was plan's choice or named beside it on every trace
    assert re.search(r"Predict's cheapest option was plan's choice in (\d+) of (\d+) traces, one plan named within its "
                     r"noise in (\d+), neither in 0\b", words("docs/model.md"))
