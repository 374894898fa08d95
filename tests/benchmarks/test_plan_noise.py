"""The margin ``tracegen plan`` names its rivals by (:data:`tracegen.plan.NOISE_MARGIN`) and where it came from
(``benchmarks/plan_noise.py``): the mlp development trace's row of the benchmark's table in docs/model.md is computed
again by the benchmark's own function, and the margin, and the figures its comment gives, are the docs' summary's."""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Callable
from types import ModuleType

from parsers.catalogue import read_catalogue
from tracegen.plan import NOISE_MARGIN

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = "dev/mlp_500mbit_q100_b128k_ps03"  # the README's plan trace, the quickest to recompute (a few seconds)


def words(path: str) -> str:
    return " ".join((ROOT / path).read_text().split())


def test_the_docs_row_of_the_mlp_trace_is_what_the_benchmark_computes(
        benchmark_module: Callable[[str], ModuleType]) -> None:
    bench = benchmark_module("plan_noise")
    points = bench.trace_points(ROOT / "data" / "validation" / MLP / "trace", read_catalogue(bench.CATALOGUE), 1,
                                MLP)
    assert len({(p.worker, p.ps) for p in points}) == 12  # every pair of the example catalogue
    assert len(bench.distinct(points)) < len(points)  # those of the spot workers counted once
    assert sum(p.chosen for p in points) == 1 and any(p.within_noise for p in points)
    docs = (ROOT / "docs" / "model.md").read_text()
    assert bench.HEADER in docs
    assert bench.row(MLP, points) in docs.splitlines()


def test_the_margin_is_the_largest_difference_over_every_point_rounded_up_as_its_comment_says() -> None:
    summary = re.search(r"every point \((\d+)\): median ([\d.]+)%, 90th percentile ([\d.]+)%, largest ([\d.]+)%",
                        words("docs/model.md"))
    assert summary is not None
    points, median, tail, largest = summary.groups()
    assert math.ceil(float(largest)) / 100 == NOISE_MARGIN
    comment = " ".join(line.strip().lstrip("#").strip() for line in (ROOT / "tracegen" / "plan.py").read_text()
                       .splitlines())
    assert (f"every N plan simulated ({points} points): median {median} %, 90th percentile {tail} %, largest "
            f"{largest} %") in comment
    # and with that margin, predict's own cheapest option was plan's choice or named beside it on every trace
    assert re.search(r"Predict's cheapest option was plan's choice in (\d+) of (\d+) traces, one plan named within its "
                     r"noise in (\d+), neither in 0\b", words("docs/model.md"))
