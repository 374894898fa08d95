"""The leave-one-step-out check on every trace in ``data/`` (a report, not a test): ``python benchmarks/leave_one_out.py``.

For each trace folder (``data/traces/*``, ``data/testbed/*/trace``, ``data/validation/*/*/trace``): the complete
traced steps, the step-to-step variability (coefficient of variation of their lengths: the floor below which no
prediction of a single step can go), and :func:`tracegen.replay.leave_one_out` — the mean absolute error of
predicting each held-out step from the others, and the error of the mean of those predictions.
"""

from __future__ import annotations

import pathlib
import statistics
import sys

from parsers import TraceError, read_trace
from tracegen.errors import TracegenError
from tracegen.replay import leave_one_out

ROOT = pathlib.Path(__file__).resolve().parent.parent


def trace_folders() -> list[pathlib.Path]:
    """Every trace folder bundled in ``data/``."""
    data = ROOT / "data"
    found = [*sorted((data / "traces").glob("*")), *sorted((data / "testbed").glob("*/trace")),
             *sorted((data / "validation").glob("*/*/trace"))]
    return [p for p in found if p.is_dir()]


def main() -> int:
    """Print one row per trace."""
    print("| trace | complete steps | step CV | held-out MAE | error of the mean |")
    print("|---|---|---|---|---|")
    worst = worst_mean = 0.0
    for folder in trace_folders():
        name = str(folder.relative_to(ROOT))
        try:
            result = leave_one_out(read_trace(folder))
        except (TraceError, TracegenError) as exc:
            print(f"| {name} | - | - | {exc} | |")
            continue
        lengths = [h.measured_ns for h in result.held_out]
        cv = statistics.pstdev(lengths) / statistics.fmean(lengths)
        worst = max(worst, result.mean_abs_error)
        worst_mean = max(worst_mean, abs(result.error_of_mean))
        print(f"| {name} | {len(lengths)} | {cv:.1%} | {result.mean_abs_error:.1%} | {result.error_of_mean:+.1%} |")
    print(f"largest held-out MAE: {worst:.1%}; largest error of the mean: {worst_mean:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
