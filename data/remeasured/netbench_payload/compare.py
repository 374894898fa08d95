"""The figure written down in data/README.md ("remeasured/netbench_payload/") for each profile measured by run.sh,
beside the cluster's PS CPU per step at N = 5. Run from the repository root: python
data/remeasured/netbench_payload/compare.py [FOLDER] (FOLDER: another run of run.sh, laid out the same way, such as
data/remeasured/netbench_requests; default this one)"""

from __future__ import annotations

import pathlib
import sys

import pandas as pd

from parsers.linkprofile import read_link_profile
from parsers.read import read_trace
from tracegen.model import PS_KINDS, build_model

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parents[1]
CLUSTERS = {"deep_300mbit_q5_b16k_ps05": "fresh3", "wide_2000mbit_q5_b16k_ps03": "fresh3",
            "deep_500mbit_q100_b16k_ps03": "atcap", "resnet_200mbit_q20_b16k_ps03": "fresh2",
            "cnn_2000mbit_q100_b16k_ps05": "fresh3"}
WANTED_CLIENTS, AT_CAP, WITHIN = 4, 0.95, 0.15


def rows(profiles: pathlib.Path = HERE) -> list[dict[str, object]]:
    """Per configuration: ``name``, the cluster's PS CPU per step at N = 5 (``cluster_ms``), and, where a profile
    (``profiles``/NAME/trace/link-profile.json) has a ``cycle`` point with the PS at its cap, that point's
    ``clients``, ``cores`` and ``cap``, its CPU per MB moved (``ms_per_mb``), the figure (``figure_ms``), the same
    with the traced PS ops (``with_ops_ms``) and ``error``."""
    found: list[dict[str, object]] = []
    for name, campaign in CLUSTERS.items():
        folder = DATA / campaign / "test" / name
        runs = pd.read_csv(folder / "measured.csv")
        cap, step_bytes = float(runs["cpu_cap_ps"].iloc[0]), 2 * int(runs["ps_bytes"].iloc[0])
        five = runs[runs["n_workers"] == 5]
        row: dict[str, object] = {"name": name, "cap": cap,
                                  "cluster_ms": 1e3 * float((five["ps_cpu_cores"] / five["steps_per_s"]).mean())}
        profile_path = profiles / name / "trace" / "link-profile.json"
        at_cap = [p for p in read_link_profile(profile_path).of_mode("cycle")
                  if p.ps_cpu_cores is not None and p.ps_cpu_cores >= AT_CAP * cap] if profile_path.is_file() else []
        if at_cap:
            point = min(at_cap, key=lambda p: (abs(p.connections - WANTED_CLIENTS), p.connections))
            cores = float(point.ps_cpu_cores)  # type: ignore[arg-type]
            per_byte = cores / (point.pull_bytes_per_s + point.push_bytes_per_s)
            work_ms = build_model(read_trace(folder / "trace")).mean_work_ns(PS_KINDS) / 1e6
            figure = 1e3 * per_byte * step_bytes
            row |= {"clients": point.connections, "cores": cores, "ms_per_mb": 1e9 * per_byte, "figure_ms": figure,
                    "with_ops_ms": figure + work_ms, "error": figure / float(row["cluster_ms"]) - 1}  # type: ignore[arg-type]
        found.append(row)
    return found


def main(argv: list[str]) -> None:
    print("| configuration | cycle point (clients, PS cores of cap) | ms of PS CPU per MB moved | the figure, ms a "
          "step | with the traced PS ops | cluster at N = 5 | error |")
    print("|---|---|---|---|---|---|---|")
    found = rows(pathlib.Path(argv[0]) if argv else HERE)
    for r in found:
        if "figure_ms" not in r:
            print(f"| {r['name']} | none at its cap (no verdict) | | | | {r['cluster_ms']:.1f} | |")
            continue
        print(f"| {r['name']} | {r['clients']}, {r['cores']:.3f} of {r['cap']:g} | {r['ms_per_mb']:.2f} | "
              f"{r['figure_ms']:.1f} | {r['with_ops_ms']:.1f} | {r['cluster_ms']:.1f} | {r['error']:+.0%} |")
    verdicts = [r for r in found if "error" in r]
    held = sum(abs(float(r["error"])) <= WITHIN for r in verdicts)  # type: ignore[arg-type]
    print(f"within {WITHIN:.0%} on {held} of {len(verdicts)} with a verdict: the guess "
          f"{'holds' if held >= 4 else 'fails'} (it needs four)")


if __name__ == "__main__":
    main(sys.argv[1:])
