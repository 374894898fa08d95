"""A record, not a predictor: the simulator's curve capped at ``roofline_cycle`` where it names the link.

At each N where the simulator's own curve names a link direction the bottleneck (``link-pull``/``link-push`` in
the prediction's ``curve.csv``), the capped value is ``min(simulator, roofline_cycle)``; elsewhere it is the
simulator's. The idea: once the link binds, workers can move no more than clients alternating pulls and pushes
moved on the two hosts (the profile's ``cycle`` points), which the simulator's link model does not reproduce
(docs/validation.md, "Why the model's cycle(4) is low"). Written down before the third fresh holdout ran
(data/README.md, ``fresh3/``), with the rule that the tool takes it if it scores lower than the simulator there.
It did not (2026-12-06: 14.9 % against 13.6 %; the campaign's development set 6.5 against 5.8 %), so the tool
does not do this; the figures are kept as evidence for a later decision.

Prints, per stored report folder and set: MAPE of the simulator, of ``roofline_cycle`` and of the capped curve.

Run: ``python benchmarks/link_cap.py`` (from the stored reports; seconds).
"""

from __future__ import annotations

import pathlib

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
# (campaign folder, reports folder), every campaign whose reports have roofline_cycle
REPORTS = (("validation", "reports"), ("validation", "reports_single_worker_x3"), ("shards", "reports"),
           ("shards", "reports_own"), ("tf2", "reports"), ("fresh", "reports"), ("fresh2", "reports"),
           ("atcap", "reports_alone"), ("fresh3", "reports"))


def capped_errors(folder: pathlib.Path) -> pd.DataFrame:
    """Per N of one validated configuration: the absolute errors of the simulator, roofline_cycle and the cap."""
    table = pd.read_csv(folder / "comparison.csv")
    curve = pd.read_csv(folder / "prediction" / "curve.csv").set_index("n_workers")
    linked = table["n_workers"].map(curve["bottleneck"]).str.startswith("link")
    capped = table["simulator"].where(~linked, table[["simulator", "roofline_cycle"]].min(axis=1))
    measured = table["measured_mean"]
    return pd.DataFrame({"simulator": (table["simulator"] / measured - 1).abs(),
                         "roofline_cycle": (table["roofline_cycle"] / measured - 1).abs(),
                         "capped": (capped / measured - 1).abs()})


def main() -> None:
    print("| campaign | reports | set | configurations | simulator | roofline_cycle | capped at it where link-bound |")
    print("|---|---|---|---|---|---|---|")
    for campaign, reports in REPORTS:
        base = ROOT / "data" / campaign
        if not (base / "campaign.csv").is_file():
            continue
        plan = pd.read_csv(base / "campaign.csv")
        for group in ("dev", "test"):
            folders = [f for name in plan[plan["set"] == group]["name"]
                       if (f := base / reports / group / name / "comparison.csv").is_file()]
            if not folders:
                continue
            errors = pd.concat([capped_errors(f.parent) for f in folders])
            cells = " | ".join(f"{100 * errors[c].mean():.1f} %" for c in ("simulator", "roofline_cycle", "capped"))
            print(f"| {campaign} | {reports} | {group} | {len(folders)} | {cells} |")


if __name__ == "__main__":
    main()
