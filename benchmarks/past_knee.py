"""Past the knee: how each predictor does where a measured curve has flattened (data/README.md, ``pastknee/``).

``python benchmarks/past_knee.py [REPORTS_DIR]`` (default ``data/pastknee/reports``) reads every
``REPORTS_DIR/<set>/<name>/comparison.csv`` that ``tracegen validate`` wrote and prints, per configuration:
the measured knee (the smallest N within 95 % of the largest measured mean, as every report scores it), how flat
the curve is past N = 5 (the largest mean at N > 5 over the largest at N <= 5), and every predictor's MAPE on the
points past the measured knee and on all points. The answer (the measured curve) is only compared with, never an
input: the predictions in the reports were made from the two-host inputs alone.
"""

from __future__ import annotations

import math
import pathlib
import sys

import pandas as pd

from validation.compare import knee_of
from validation.summary import PREDICTORS

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPORTS = ROOT / "data" / "pastknee" / "reports"
EARLY_N = 5  # every other campaign in data/ stops here


def past_knee(comparison: pd.DataFrame) -> dict[str, float]:
    """The figures of one configuration: ``knee``, ``flatness`` (largest mean past N = 5 over the largest up to
    it; NaN when no N past 5 was measured), ``n_past`` (points past the knee) and, per predictor present,
    ``<predictor>_past`` (MAPE past the measured knee; NaN when no point is past it) and ``<predictor>_all``."""
    table = comparison.sort_values("n_workers")
    workers, means = table["n_workers"].tolist(), table["measured_mean"].tolist()
    knee = knee_of(workers, means)
    early, late = table[table["n_workers"] <= EARLY_N], table[table["n_workers"] > EARLY_N]
    flat = late["measured_mean"].max() / early["measured_mean"].max() if len(late) and len(early) else float("nan")
    past = table["n_workers"] > knee
    out = {"knee": float(knee), "flatness": float(flat), "n_past": float(past.sum())}
    for name in PREDICTORS:
        column = f"{name}_error"
        if column in table:
            errors = table[column].abs()
            out[f"{name}_past"] = float(errors[past].mean()) if past.any() else float("nan")
            out[f"{name}_all"] = float(errors.mean())
    return out


def figures(reports: pathlib.Path) -> dict[str, dict[str, float]]:
    """``past_knee`` of every report under ``reports``, by ``<set>/<name>``."""
    return {f"{path.parent.parent.name}/{path.parent.name}": past_knee(pd.read_csv(path))
            for path in sorted(reports.glob("*/*/comparison.csv"))}


def percent(x: float) -> str:
    """``x`` as a percentage with one decimal, or a dash when there is nothing to show (NaN)."""
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


def main(argv: list[str]) -> int:
    reports = pathlib.Path(argv[0]) if argv else REPORTS
    rows = figures(reports)
    if not rows:
        print(f"no comparison.csv under {reports}/<set>/<name>/", file=sys.stderr)
        return 2
    names = [p for p in PREDICTORS if all(f"{p}_all" in r for r in rows.values())]
    print("| configuration | measured knee | largest past N=5 / largest up to it | "
          + " | ".join(f"{p}: past the knee / all" for p in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for key, r in rows.items():
        cells = " | ".join(f"{percent(r[f'{p}_past'])} / {percent(r[f'{p}_all'])}" for p in names)
        flat = "-" if math.isnan(r["flatness"]) else f"{r['flatness']:.3f}"
        print(f"| {key} | {r['knee']:.0f} ({r['n_past']:.0f} points past it) | {flat} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
