"""How much of a validation figure is the simulation's own seed: the campaign scored again with other seeds.

``tracegen validate`` simulates every N with 3 seeds (0, 1, 2) and scores their mean. Those seeds are a sample:
a point's simulated rate depends on them (two workers started a little apart can settle into lock-step or into
turns, and stay there for a hundred steps), so the MAPE a report states is itself an estimate. This runs the same
validation — same inputs, same model, same protocol — with the seed blocks 0-2 (the stored reports'), 3-5, 6-8
and 9-11, and with all twelve seeds at once, and prints, per set, the simulator's MAPE with the link profile and
with the bandwidth only, for each block and for twelve seeds, and per configuration, the spread of its MAPE over
the blocks. Nothing here changes the model or the stored reports; it measures how far a 3-seed figure can move.

Run: ``python benchmarks/seed_noise.py [CAMPAIGN]`` (default ``validation``; about ten minutes on two cores).
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import tempfile

import pandas as pd

from tracegen.config import PredictConfig
from tracegen.outputs import OutputDir
from validation.validate import validate

ROOT = pathlib.Path(__file__).resolve().parents[1]
BLOCKS = ((0, 3), (3, 3), (6, 3), (9, 3), (0, 12))  # (first seed, seeds): four 3-seed protocols, then twelve
PREDICTORS = ("simulator", "simulator_bw")


def scores(folder: pathlib.Path, seed: int, seeds: int) -> dict[str, list[float]]:
    """Per predictor, its absolute error at every measured N, validated with seeds ``seed .. seed + seeds - 1``."""
    with tempfile.TemporaryDirectory() as tmp, OutputDir(tmp, []) as out:
        comparison, _, _ = validate(folder, folder / "trace", PredictConfig(seed=seed, seeds=seeds), out)
    return {p: list(comparison.table[f"{p}_error"]) for p in PREDICTORS}


def label(seed: int, seeds: int) -> str:
    return f"seeds {seed}-{seed + seeds - 1}"


def main() -> None:
    campaign = sys.argv[1] if len(sys.argv) > 1 else "validation"
    plan = pd.read_csv(ROOT / "data" / campaign / "campaign.csv")
    for group in ("dev", "test"):
        names = [n for n in plan[plan["set"] == group]["name"]
                 if (ROOT / "data" / campaign / group / n / "measured.csv").is_file()]
        errors = {block: {n: scores(ROOT / "data" / campaign / group / n, *block) for n in names} for block in BLOCKS}
        print(f"\n{campaign} {group} set, MAPE (all points of its {len(names)} configurations):")
        print("| predictor | " + " | ".join(label(*b) for b in BLOCKS) + " |")
        print("|---|" + "---|" * len(BLOCKS))
        for p in PREDICTORS:
            cells = [100 * statistics.fmean(e for n in names for e in errors[b][n][p]) for b in BLOCKS]
            print(f"| {p} | " + " | ".join(f"{c:.1f}%" for c in cells) + " |")
        print("\n| configuration | " + " | ".join(f"{p}: 3-seed blocks, min-max / twelve seeds" for p in PREDICTORS)
              + " |")
        print("|---|" + "---|" * len(PREDICTORS))
        for n in names:
            cells = []
            for p in PREDICTORS:
                blocks = [100 * statistics.fmean(errors[b][n][p]) for b in BLOCKS[:-1]]
                twelve = 100 * statistics.fmean(errors[BLOCKS[-1]][n][p])
                cells.append(f"{min(blocks):.1f}-{max(blocks):.1f} / {twelve:.1f}%")
            print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
