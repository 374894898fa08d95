"""Each campaign's accuracy without its N = 1 points, which are not predictions.

``single-worker.json``, an input of every predictor, is the campaign's own N = 1 run (one PS and one worker: two
hosts). The simulator is brought to that rate when its replay of one worker is slower (tracing's cost undone,
:mod:`tracegen.untraced`), so its N = 1 point then equals the measurement by construction. This prints, per
campaign, set and predictor, the mean absolute percentage error over every N and over N >= 2 only, from the stored
reports: each configuration's error at each N from its predicted and measured steps/s (not the ``*_error`` column,
kept to 4 decimals), their mean per configuration, and the mean over the set's configurations (the summary's
definition), rounded once, to the 0.1 % the README quotes. The summary's own all-N figure is the mean of
``scores.csv``'s per-configuration MAPEs, each kept to 4 decimals, so the two may differ in the last digit where the
figure sits on a rounding edge (the main campaign's test-set roofline: 17.45 %).

Run: ``python benchmarks/accuracy_beyond_n1.py`` (after ``bash data/validation/run_validation.sh`` and
``bash data/shards/run_validation.sh``).
"""

from __future__ import annotations

import pathlib

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
CAMPAIGNS = ("validation", "shards")
PREDICTORS = ("simulator", "roofline", "no_overlap", "ps_queue", "roofline_cycle", "simulator_bw")


def errors(table: pd.DataFrame, predictor: str) -> pd.Series:
    """A report's ``comparison.csv``: the predictor's absolute error at each N, a fraction of the measured mean."""
    return (table[predictor] - table["measured_mean"]).abs() / table["measured_mean"]


def mape(campaign: str) -> pd.DataFrame:
    """One row per set and predictor of ``data/<campaign>``: ``configurations`` (those with a stored report), and
    ``all_n`` and ``beyond_n1``, the MAPE over every N and over N >= 2, as unrounded fractions."""
    plan = pd.read_csv(ROOT / "data" / campaign / "campaign.csv")
    rows = []
    for group in ("dev", "test"):
        tables = [pd.read_csv(path) for name in plan[plan["set"] == group]["name"]
                  if (path := ROOT / "data" / campaign / "reports" / group / name / "comparison.csv").is_file()]
        for p in PREDICTORS if tables else ():
            rows.append({"set": group, "configurations": len(tables), "predictor": p,
                         "all_n": sum(errors(t, p).mean() for t in tables) / len(tables),
                         "beyond_n1": sum(errors(t[t["n_workers"] >= 2], p).mean() for t in tables) / len(tables)})
    return pd.DataFrame(rows, columns=["set", "configurations", "predictor", "all_n", "beyond_n1"])


def percent(fraction: float) -> str:
    """A MAPE as the README quotes it: per cent, to 0.1."""
    return f"{100 * fraction:.1f}"


def main() -> None:
    print("| campaign | set | configurations | " + " | ".join(f"{p}: all N / N >= 2" for p in PREDICTORS) + " |")
    print("|---|---|---|" + "---|" * len(PREDICTORS))
    for campaign in CAMPAIGNS:
        table = mape(campaign)
        for group, rows in table.groupby("set", sort=False):
            by = rows.set_index("predictor")
            cells = [f"{percent(by.loc[p, 'all_n'])} / {percent(by.loc[p, 'beyond_n1'])} %" for p in PREDICTORS]
            print(f"| {campaign} | {group} | {by['configurations'].iloc[0]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
