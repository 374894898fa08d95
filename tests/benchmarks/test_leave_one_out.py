"""The leave-one-step-out table docs/validation.md states, guarded: it lists every single-worker trace in ``data/``
(``benchmarks/leave_one_out.py``'s :func:`trace_folders`), and each trace's held-out MAE and error of the mean,
computed again, are no worse than it says (beyond a small tolerance for floating-point noise)."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable
from types import ModuleType

import pytest

from parsers import read_trace
from tracegen.replay import leave_one_out

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (data/\S+) \| (\d+) \| [\d.]+% \| ([\d.]+)% \| ([+-][\d.]+)% \|$")
TOLERANCE = 0.005


def stated() -> dict[str, tuple[int, float, float]]:
    """The table's rows: trace -> (complete steps, held-out MAE, error of the mean)."""
    section = (ROOT / "docs" / "validation.md").read_text().split("### Leave one step out", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        found = ROW.match(line)
        if found:
            rows[found[1]] = (int(found[2]), float(found[3]) / 100, float(found[4]) / 100)
    return rows


def test_the_table_lists_every_single_worker_trace(benchmark_module: Callable[[str], ModuleType]) -> None:
    folders = benchmark_module("leave_one_out").trace_folders()
    assert sorted(str(p.relative_to(ROOT)) for p in folders) == sorted(stated())


@pytest.mark.parametrize("trace", sorted(stated()))
def test_each_trace_is_predicted_no_worse_than_stated(trace: str) -> None:
    steps, mae, error_of_mean = stated()[trace]
    result = leave_one_out(read_trace(ROOT / trace))
    assert len(result.held_out) == steps
    assert result.mean_abs_error <= mae + TOLERANCE
    assert abs(result.error_of_mean) <= abs(error_of_mean) + TOLERANCE
