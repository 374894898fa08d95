"""Real against simulated staleness, per number of workers.

The testbed's ``staleness.csv`` (``tracegen testbed --staleness``: every step inside the window, each worker's
global step read beside its parameters and after its own increment) is set beside the simulated distribution
of the same N (:mod:`tracegen.variables`: every parameter update in the steady window). Each step updates every
parameter once, so a step's staleness is that of each of its gradients, and the two distributions compare
directly. The distance is the Kolmogorov–Smirnov statistic: the largest gap between the two cumulative
distributions (0: the same; 1: no overlap).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping, Sequence

import pandas as pd

from tracegen.curve import Curve
from validation.errors import ConfigError

STALENESS_NAME = "staleness.csv"
COLUMNS = ("n_workers", "measured_steps", "measured_mean", "simulated_mean", "measured_p99", "simulated_p99",
           "ks_distance")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StalenessRow:
    """One N: the two distributions' means and 99th percentiles, and their distance."""

    n_workers: int
    measured_steps: int
    measured_mean: float
    simulated_mean: float
    measured_p99: int
    simulated_p99: int
    ks_distance: float


def read_measured_staleness(path: str | os.PathLike[str]) -> dict[int, dict[int, int]]:
    """Per N, steps by staleness, pooled over repeats; ConfigError naming the file when it is not the
    testbed's."""
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the measured staleness: {exc}") from None
    if list(table.columns) != ["n_workers", "repeat", "staleness", "steps"] or (table[["staleness", "steps"]] < 0).any(
            axis=None):
        raise ConfigError(f"{path}: not a testbed staleness.csv (columns n_workers,repeat,staleness,steps, >= 0)")
    out: dict[int, dict[int, int]] = {}
    for (n, value), steps in table.groupby(["n_workers", "staleness"])["steps"].sum().items():
        out.setdefault(int(n), {})[int(value)] = int(steps)
    return out


def ks_distance(a: Mapping[int, int], b: Mapping[int, int]) -> float:
    """The largest gap between the cumulative distributions of two histograms (value -> count). The gap changes
    only at values one of them has, so only those are visited, however large they are."""
    total_a, total_b = sum(a.values()), sum(b.values())
    if not total_a or not total_b:
        raise ConfigError("a staleness histogram is empty")
    acc_a = acc_b = 0
    gap = 0.0
    for v in sorted(a.keys() | b.keys()):
        acc_a += a.get(v, 0)
        acc_b += b.get(v, 0)
        gap = max(gap, abs(acc_a / total_a - acc_b / total_b))
    return gap


def _mean(counts: Mapping[int, int]) -> float:
    return sum(v * c for v, c in counts.items()) / sum(counts.values())


def _p99(counts: Mapping[int, int]) -> int:
    total, acc = sum(counts.values()), 0
    for v in sorted(counts):
        acc += counts[v]
        if acc >= 0.99 * total:
            return v
    return max(counts)


def compare_staleness(measured: Mapping[int, Mapping[int, int]], curve: Curve) -> list[StalenessRow]:
    """A row per N that both the measurement and the curve have."""
    rows = []
    for p in curve.points:
        real = measured.get(p.n_workers)
        if not real or p.staleness is None:
            continue
        sim = dict(p.staleness.histogram)
        rows.append(StalenessRow(n_workers=p.n_workers, measured_steps=sum(real.values()),
                                 measured_mean=_mean(real), simulated_mean=_mean(sim), measured_p99=_p99(real),
                                 simulated_p99=_p99(sim), ks_distance=ks_distance(real, sim)))
    return rows


def staleness_csv(rows: Sequence[StalenessRow]) -> bytes:
    """The rows as CSV."""
    lines = [",".join(COLUMNS)] + [
        f"{r.n_workers},{r.measured_steps},{r.measured_mean:.4f},{r.simulated_mean:.4f},{r.measured_p99},"
        f"{r.simulated_p99},{r.ks_distance:.4f}" for r in rows]
    return ("\n".join(lines) + "\n").encode()


def staleness_markdown(rows: Sequence[StalenessRow], source: str | pathlib.Path) -> str:
    """A report section: per N, measured and simulated mean and p99, and the KS distance."""
    lines = ["", "## Staleness, measured against simulated", "",
             f"Measured: `{source}` (every step in the window, all workers). Simulated: the profile's prediction "
             "(every parameter update in the steady window). KS: the largest gap between the two cumulative "
             "distributions.", "",
             "| N | measured steps | measured mean | simulated mean | measured p99 | simulated p99 | KS |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.n_workers} | {r.measured_steps} | {r.measured_mean:.2f} | {r.simulated_mean:.2f} | "
              f"{r.measured_p99} | {r.simulated_p99} | {r.ks_distance:.3f} |" for r in rows]
    return "\n".join(lines) + "\n"
