"""The leave-one-step-out check on every trace in ``data/`` (a report, not a test):
``python benchmarks/leave_one_out.py``.

For each single-worker trace in ``data/`` (:func:`trace_folders`): the complete
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
    """Every single-worker trace bundled in ``data/``: the folders under ``data/traces/`` and every folder named
    ``trace`` (a campaign's input) that holds traced steps (``data/validation/single_worker_x3/`` holds only
    single-worker measurements). The per-worker traces of multi-worker runs (``data/testbed/*/workers/``) are
    measurements of N workers, not single-worker traces, and are left out."""
    data = ROOT / "data"
    found = [*sorted((data / "traces").glob("*")), *sorted(data.rglob("trace"))]
    return [p for p in found if p.is_dir() and (any(p.glob("step_*")) or (p / "plugins").is_dir())]


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
