"""One table over several validation reports: ``python -m validation.summary DIR [DIR ...]``.

Each DIR is an output folder of ``tracegen validate`` (its ``comparison.csv``); the table has one row per
folder and, per predictor, MAPE, max error and knee beside the measured knee. Written to stdout as Markdown.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Sequence

import pandas as pd

from validation.compare import knee_of

PREDICTORS = ("simulator", "simulator_nominal", "no_overlap", "ps_queue")


def summary_table(folders: Sequence[pathlib.Path]) -> str:
    """The Markdown table of the module docstring."""
    head = "| configuration | measured knee | " + " | ".join(
        f"{p}: MAPE / max / knee" for p in PREDICTORS) + " |"
    lines = [head, "|---|---|" + "---|" * len(PREDICTORS)]
    for folder in folders:
        table = pd.read_csv(folder / "comparison.csv")
        ns = list(table["n_workers"])
        cells = []
        for name in PREDICTORS:
            errors = table[f"{name}_error"]
            cells.append(f"{errors.mean():.1%} / {errors.max():.1%} / {knee_of(ns, list(table[name]))}")
        lines.append(f"| {folder.name} | {knee_of(ns, list(table['measured_mean']))} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    """Print the table for the folders in ``argv``."""
    print(summary_table([pathlib.Path(a) for a in argv]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
