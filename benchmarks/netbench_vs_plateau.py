"""Each configuration's netbench figures beside the plateau its cluster reached, and the link model's own check.

Run: ``python benchmarks/netbench_vs_plateau.py [DATA_DIR]`` (default ``data/validation``). For every
configuration folder holding ``measured.csv`` and ``trace/link-profile.json`` it prints, in MB/s of tensor
payload per direction:

- ``payload``: the tbf rate's payload share (1448 of every 1514 bytes);
- ``pull``/``push``: one direction alone, the most any number of connections moved;
- ``both``: each direction while the other is busy too (the smaller of the two, at the most connections);
- ``cycle4``: clients alternating pulls and pushes as workers do, four of them, measured — and ``model``, what
  the link model predicts for it from the other points (:func:`tracegen.linkspec.check_profile`);
- ``plateau``: the cluster's best measured steps/s times the bytes a step pulls, and that as a share of payload.

The plateau column is measured with N workers: it is shown here as the answer, never used by a prediction.
"""

from __future__ import annotations

import pathlib
import sys

import pandas as pd

from parsers.linkprofile import read_link_profile
from parsers.read import read_trace
from tracegen.config import PAYLOAD_FRACTION
from tracegen.linkspec import check_profile
from tracegen.model import TaskKind, build_model


def rows(root: pathlib.Path) -> list[dict[str, object]]:
    """One row per configuration under ``root`` (module docstring)."""
    out = []
    for folder in sorted(p.parent for p in root.glob("*/*/measured.csv")):
        profile_path = folder / "trace" / "link-profile.json"
        if not profile_path.is_file():
            continue
        profile = read_link_profile(profile_path)
        runs = pd.read_csv(folder / "measured.csv")
        payload = float(runs["bandwidth_bits_per_s"].iloc[0]) / 8 * PAYLOAD_FRACTION
        best = runs.groupby("n_workers")["steps_per_s"].mean().max()
        pull_bytes = build_model(read_trace(folder / "trace")).bytes_of(TaskKind.PULL)
        both = profile.of_mode("both")[-1]
        cycle = {c.connections: c for c in check_profile(profile)}.get(4)
        out.append({
            "configuration": f"{folder.parent.name}/{folder.name}",
            "payload": payload / 1e6,
            "pull": max(p.pull_bytes_per_s for p in profile.of_mode("pull")) / 1e6,
            "push": max(p.push_bytes_per_s for p in profile.of_mode("push")) / 1e6,
            "both": min(both.pull_bytes_per_s, both.push_bytes_per_s) / 1e6,
            "cycle4": cycle.measured_bytes_per_s / 1e6 if cycle else float("nan"),
            "model": cycle.predicted_bytes_per_s / 1e6 if cycle else float("nan"),
            "plateau": best * pull_bytes / 1e6,
            "plateau_share": best * pull_bytes / payload,
        })
    return out


def main(argv: list[str]) -> int:
    root = pathlib.Path(argv[0] if argv else "data/validation")
    table = rows(root)
    if not table:
        print(f"no configuration with measured.csv and trace/link-profile.json under {root}")
        return 1
    print("| configuration | payload | pull | push | both | cycle(4) | model's cycle(4) | best measured | share |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in table:
        print(f"| {r['configuration']} | {r['payload']:.1f} | {r['pull']:.1f} | {r['push']:.1f} | {r['both']:.1f} | "
              f"{r['cycle4']:.1f} | {r['model']:.1f} | {r['plateau']:.1f} | {r['plateau_share']:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
