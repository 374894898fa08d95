"""Each campaign's accuracy without its N = 1 points, which are not predictions.

``single-worker.json``, an input of every predictor, is the campaign's own N = 1 run (one PS and one worker: two
hosts). The simulator is brought to that rate when its replay of one worker is slower (tracing's cost undone,
:mod:`tracegen.untraced`), so its N = 1 point then equals the measurement by construction. This prints, per
campaign, set and predictor, the mean absolute percentage error over N >= 2 only, from the stored reports.

Run: ``python benchmarks/accuracy_beyond_n1.py`` (after ``bash data/validation/run_validation.sh`` and
``bash data/shards/run_validation.sh``).
"""

from __future__ import annotations

import pathlib

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
CAMPAIGNS = ("validation", "shards")
PREDICTORS = ("simulator", "roofline", "no_overlap", "ps_queue", "roofline_cycle", "simulator_bw")


def main() -> None:
    print("| campaign | set | configurations | " + " | ".join(f"{p}: all N / N >= 2" for p in PREDICTORS) + " |")
    print("|---|---|---|" + "---|" * len(PREDICTORS))
    for campaign in CAMPAIGNS:
        plan = pd.read_csv(ROOT / "data" / campaign / "campaign.csv")
        for group in ("dev", "test"):
            tables = [pd.read_csv(path) for name in plan[plan["set"] == group]["name"]
                      if (path := ROOT / "data" / campaign / "reports" / group / name / "comparison.csv").is_file()]
            if not tables:
                continue
            cells = []
            for p in PREDICTORS:
                every = pd.concat([t[f"{p}_error"] for t in tables])
                beyond = pd.concat([t[t["n_workers"] >= 2][f"{p}_error"] for t in tables])
                cells.append(f"{100 * every.mean():.1f} / {100 * beyond.mean():.1f} %")
            print(f"| {campaign} | {group} | {len(tables)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
