"""Real against simulated staleness, per number of workers.

The testbed's ``staleness.csv`` (``tracegen testbed --staleness``: every step inside the window, each worker's
global step read beside its parameters and after its own increment) is set beside the simulated distribution
of the same N (:mod:`tracegen.variables`: every parameter update in the steady window). Each step updates every
parameter once, so a step's staleness is that of each of its gradients, and the two distributions compare
directly. The distance is the Kolmogorov-Smirnov statistic: the largest gap between the two cumulative
distributions (0: the same; 1: no overlap).

``staleness.csv`` (:func:`validation.testbed_files.write_staleness`) has exactly the header
``n_workers,repeat,staleness,steps`` and a row per run and staleness value, each cell a whole number written as
one (``2``, not ``2.0``): ``n_workers`` from 1 to :data:`tracegen.simulate.MAX_WORKERS`, ``repeat`` from 0 to
:data:`MAX_REPEAT`, ``staleness`` from 0 and ``steps`` from 1 to :data:`MAX_WINDOW_STEPS`. Blank lines are skipped.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping, Sequence

from parsers.errors import quoted
from tracegen.curve import Curve
from tracegen.plots import STALENESS_COLUMNS
from tracegen.simulate import MAX_WORKERS
from validation.errors import ConfigError
from validation.measured import cell_number, csv_cells, read_csv_text

STALENESS_NAME = "staleness.csv"
HEADER = ("n_workers", "repeat", "staleness", "steps")
MAX_STALENESS_BYTES = 16 << 20  # a row per run and staleness value: a campaign's file is a few kB
# The steps one window could hold, all workers together: a window is at most minutes of steps that take
# milliseconds, tens of thousands at the most. A step cannot be staler than that, nor a row count more.
MAX_WINDOW_STEPS = 1_000_000
MAX_REPEAT = 1_000_000  # a label of the run, far beyond any campaign
_WINDOW = ", the steps a window could hold"
_RANGES = {"n_workers": (1, MAX_WORKERS, ""), "repeat": (0, MAX_REPEAT, ", far more runs than a campaign makes"),
           "staleness": (0, MAX_WINDOW_STEPS, _WINDOW), "steps": (1, MAX_WINDOW_STEPS, _WINDOW)}
COLUMNS = ("n_workers", "measured_steps", "measured_mean", "simulated_mean", "measured_p99", "simulated_p99",
           "ks_distance")


def written_by_tracegen(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when its header is that of a ``staleness.csv`` tracegen itself writes (``predict``'s
    histogram, ``validate``'s comparison: a prediction's folder holding measurements), None otherwise. A
    measurements CSV kept there has no testbed staleness beside it."""
    source = os.fspath(path)
    header = tuple(csv_cells(read_csv_text(source, MAX_STALENESS_BYTES), source).columns)
    return {STALENESS_COLUMNS: "tracegen predict's staleness histogram",
            COLUMNS: "tracegen validate's staleness comparison"}.get(header)


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
    """Per N, steps by staleness, pooled over repeats. Reads at most :data:`MAX_STALENESS_BYTES` of a regular file;
    every cell is a whole number in its range (module docstring) and each (n_workers, repeat, staleness) is on one
    row only; otherwise ConfigError naming the file, the line, the column and the value."""
    source = os.fspath(path)
    text = read_csv_text(source, MAX_STALENESS_BYTES)
    frame = csv_cells(text, source)
    if tuple(frame.columns) != HEADER:
        raise ConfigError(f"{source}: not a testbed staleness.csv: the header must be {','.join(HEADER)} (got "
                          f"{quoted(','.join(map(str, frame.columns)))})")
    out: dict[int, dict[int, int]] = {}
    first: dict[tuple[int, int, int], int] = {}
    for line, cells in zip(frame.index, frame.itertuples(index=False), strict=True):
        n, repeat, value, steps = (_whole(cell, column, source, line)
                                   for cell, column in zip(cells, HEADER, strict=True))
        if (seen := first.setdefault((n, repeat, value), line)) != line:
            raise ConfigError(f"{source}:{line}: n_workers {n}, repeat {repeat}, staleness {value} again (first on "
                              f"line {seen})")
        counts = out.setdefault(n, {})
        counts[value] = counts.get(value, 0) + steps
    return out


def _whole(text: str, column: str, source: str, line: int) -> int:
    """Cell ``text`` of ``column``: a whole number in the column's range (:data:`_RANGES`)."""
    low, high, why = _RANGES[column]
    value = int(cell_number(text, int, column, source, line, positive=low > 0))
    if value > high:
        raise ConfigError(f"{source}:{line}: {column!r} must be at most {high}{why} (got {quoted(text)})")
    return value


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
