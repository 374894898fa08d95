"""Measured against predicted: compare measurements (:mod:`validation.measured`) with predictions, score and plot.

Scores per predictor: the absolute relative error per N (|predicted - mean| / mean), its mean over N (MAPE)
and maximum, and the knee (the smallest N reaching 95 % of the curve's maximum) beside the measured knee.
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tracegen.curvetext import range_score, scored_knee
from tracegen.plateau import KNEE_FRACTION
from tracegen.plots import finish_png, new_figure
from tracegen.workercounts import format_workers
from validation.errors import ConfigError
from validation.measured import CORE_COLUMNS

PER_STEP = {"ps_cpu_cores": ("PS CPU per step", 1e3, " ms"), "ps_wakeups_per_s": ("PS wake-ups per step", 1, ""),
            "ps_preemptions_per_s": ("PS preemptions per step", 1, "")}  # a column over steps/s: name, scale, unit


def measured_curve(measured: pd.DataFrame) -> pd.DataFrame:
    """Per N: repeats, mean, min, max and standard deviation of the measured steps per second; the deviation of one
    run is unknown (NaN, an empty cell in ``comparison.csv``), not 0: 0.0000 read as a run that repeats exactly."""
    grouped = measured.groupby("n_workers")["steps_per_s"]
    table = pd.DataFrame({
        "n_repeats": grouped.size(), "measured_mean": grouped.mean(), "measured_min": grouped.min(),
        "measured_max": grouped.max(), "measured_std": grouped.std(ddof=1),
    })
    return table.reset_index()


def knee_of(workers: Sequence[int], rates: Sequence[float], fraction: float = KNEE_FRACTION) -> int:
    """The smallest N whose rate reaches ``fraction`` of the largest *within the measured worker counts* (for the
    measurements and every predictor alike, so that knees compare like for like)."""
    best = max(rates)
    return min(n for n, r in zip(workers, rates, strict=True) if r >= fraction * best)


def knee_note(workers: Sequence[int]) -> str | None:
    """What the knee can say, given the N measured: nothing with one N (a knee is a point of a curve: the knee of
    one point was that point, for the measurements and every predictor alike), and, where some N from 1 to the
    largest were not measured, that a knee at one of those shows as the next N measured (the knee of N = 1, 2, 4, 8
    is 4 whether the curve flattened at 3 or at 4); None when every N from 1 up was measured."""
    ns = sorted({int(n) for n in workers})
    if len(ns) == 1:
        return f"one N measured ({ns[0]}): no knee, which needs a curve; the scores are that one point's errors"
    missing = sorted(set(range(1, ns[-1] + 1)) - set(ns))
    if not missing:
        return None
    return (f"the knee is the smallest N measured ({_listed(ns)}) within {KNEE_FRACTION:.0%} of the highest: a knee at "
            f"an N not measured ({_listed(missing)}) shows as the next N measured")


def _listed(workers: Sequence[int]) -> str:
    """``1-2, 4, 8``: worker counts in runs (:func:`tracegen.workercounts.format_workers`), readable in a sentence."""
    return format_workers(workers).replace(",", ", ")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """How one predictor did against the measured means."""

    mape: float
    max_error: float
    knee_n_workers: int
    inside_range: int | None  # measured ranges holding the prediction; None when every N ran once (no range)
    with_repeats: int  # the N run two or more times: those whose range inside_range counts in
    in_band: int | None = None  # measured means inside the predictor's band (when it has one)
    band_width: float | None = None  # median over N of (band_high - band_low) / measured mean


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """The per-N table (measured statistics, then ``<name>``, ``<name>_error`` per predictor, and
    ``<name>_band_low``/``_band_high`` for a predictor with a band) and scores."""

    table: pd.DataFrame
    scores: Mapping[str, Score]
    measured_knee_n_workers: int


def compare(measured: pd.DataFrame, predictions: Mapping[str, Sequence[float]],
            bands: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None) -> Comparison:
    """Score each predictor (its steps per second for every measured N, in ascending N) against the means;
    ``bands`` gives some of them a (low, high) band, scored by how many means lie inside and how wide it is."""
    table = measured_curve(measured)
    scores = {}
    bands = bands or {}
    repeated = table["n_repeats"] > 1
    with_repeats = int(repeated.sum())
    for name, values in predictions.items():
        if len(values) != len(table):
            raise ConfigError(f"prediction {name!r} has {len(values)} points for {len(table)} measured worker "
                              "counts")
        table[name] = list(values)
        table[f"{name}_error"] = (table[name] - table["measured_mean"]).abs() / table["measured_mean"]
        # an N run once has no range (min == max): only the N with repeats count, as range_score says
        inside = repeated & (table[name] >= table["measured_min"]) & (table[name] <= table["measured_max"])
        in_band = width = None
        if name in bands:
            low, high = bands[name]
            table[f"{name}_band_low"], table[f"{name}_band_high"] = list(low), list(high)
            mean = table["measured_mean"]
            in_band = int(((table[f"{name}_band_low"] <= mean) & (mean <= table[f"{name}_band_high"])).sum())
            width = float(((table[f"{name}_band_high"] - table[f"{name}_band_low"]) / mean).median())
        scores[name] = Score(mape=float(table[f"{name}_error"].mean()), max_error=float(table[f"{name}_error"].max()),
                             knee_n_workers=knee_of(list(table["n_workers"]), list(values)),
                             inside_range=int(inside.sum()) if with_repeats else None, with_repeats=with_repeats,
                             in_band=in_band, band_width=width)
    return Comparison(table=table, scores=scores,
                      measured_knee_n_workers=knee_of(list(table["n_workers"]), list(table["measured_mean"])))


def averaged(comparison: Comparison) -> str | None:
    """One line saying which measured means average several runs (None when every N had one): a file that holds
    the same N twice is read as repeats, which the summary should not keep quiet about."""
    table = comparison.table
    repeats = {int(n): int(k) for n, k in zip(table["n_workers"], table["n_repeats"], strict=True)}
    several = {n: k for n, k in repeats.items() if k > 1}
    if not several:
        return None
    if len(several) == len(repeats) and len(set(several.values())) == 1:
        return f"measured: {next(iter(several.values()))} runs averaged at every N"
    parts = [f"N={n}: {k} runs averaged" for n, k in several.items()]
    return "measured: " + "; ".join(parts[:8]) + (f"; and {len(parts) - 8} more N" if len(parts) > 8 else "")


def comparison_csv(comparison: Comparison) -> bytes:
    """The per-N table as CSV with fixed decimals (equal inputs, equal bytes)."""
    buf = io.StringIO()
    comparison.table.to_csv(buf, index=False, float_format="%.4f", lineterminator="\n")
    return buf.getvalue().encode()


def report_markdown(comparison: Comparison, settings: Mapping[str, Any], title: str,
                    warnings: Sequence[str] = ()) -> str:
    """``report.md``: settings, warnings, the per-N table and the scores of every predictor."""
    names = list(comparison.scores)
    lines = [f"# {title}", "", "## Settings", ""]
    lines += [f"- {k}: {v}" for k, v in settings.items()]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    banded = [n for n in names if f"{n}_band_low" in comparison.table.columns]
    lines += ["", "## Steps per second, measured and predicted", "",
              "| N | repeats | measured mean | measured range | " + " | ".join(f"{n} (error)" for n in names)
              + "".join(f" | {n} band" for n in banded) + " |",
              "|---|---|---|---|" + "---|" * (len(names) + len(banded))]
    for row in comparison.table.to_dict("records"):
        cells = [f"{row[n]:.3f} ({row[f'{n}_error']:.1%})" for n in names]
        cells += [f"{row[f'{n}_band_low']:.3f} to {row[f'{n}_band_high']:.3f}"
                  + ("" if row[f"{n}_band_low"] <= row["measured_mean"] <= row[f"{n}_band_high"] else " (mean outside)")
                  for n in banded]
        lines.append(f"| {row['n_workers']} | {row['n_repeats']} | {row['measured_mean']:.3f} | "
                     f"{row['measured_min']:.3f} to {row['measured_max']:.3f} | " + " | ".join(cells) + " |")
    n_points = len(comparison.table)
    lines += ["", "## Scores", "", "| predictor | MAPE | max error | knee (measured "
              f"{scored_knee(comparison.measured_knee_n_workers, n_points)}) | inside measured range | "
              "means inside band | band width |",
              "|---|---|---|---|---|---|---|"]
    for name, s in comparison.scores.items():
        band = (f"{s.in_band} of {n_points} | {s.band_width:.0%}" if s.in_band is not None and s.band_width is not None
                else "- | -")
        lines.append(f"| {name} | {s.mape:.1%} | {s.max_error:.1%} | {scored_knee(s.knee_n_workers, n_points)} | "
                     f"{range_score(s.inside_range, s.with_repeats)} | {band} |")
    if banded:
        lines += ["", f"Band ({', '.join(banded)}): where each N's rate can lie with only the link's rate known, from "
                  "its two directions no faster together than one to each at its full rate (docs/model.md); 'means "
                  "inside band' counts the N whose measured mean lies in it, 'band width' is its median width over "
                  "the mean."]
    if (note := knee_note(list(comparison.table["n_workers"]))) is not None:
        lines += ["", f"{note[0].upper()}{note[1:]}."]
    return "\n".join(lines) + "\n"


def cpu_markdown(measured: pd.DataFrame) -> str:
    """Where the measured windows' CPU went, per N (the mean over repeats, cores), with the PS's CPU per step: a
    section of ``report.md``, or "" when the measurements do not say (a run of a virtual machine whose
    hypervisor took CPU, or of a host short of it, describes another machine than its inputs did)."""
    present = [c for c in CORE_COLUMNS if c in measured.columns and measured[c].notna().any()]
    names = {"ps_cpu_cores": "PS", "worker_cpu_cores": "workers", "host_busy_cores": "host busy",
             "host_softirq_cores": "of it softirq", "host_steal_cores": "stolen by the hypervisor"}
    per_step = {c: shown for c, shown in PER_STEP.items() if c in measured.columns and measured[c].notna().any()}
    if not present and not per_step:
        return ""
    lines = ["", "## Where the measured windows' CPU went (cores, mean over repeats)", "",
             "| N | " + " | ".join([*(names[c] for c in present), *(name for name, _, _ in per_step.values())])
             + " |",
             "|---|" + "---|" * (len(present) + len(per_step))]
    for n, group in measured.groupby("n_workers", sort=True):
        cells = ["-" if math.isnan(v) else f"{v:.2f}" for v in (group[c].mean() for c in present)]
        for column, (_, scale, unit) in per_step.items():
            value = (group[column] / group["steps_per_s"]).mean()
            cells.append("-" if math.isnan(value) else f"{value * scale:.1f}{unit}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def comparison_png(comparison: Comparison, title: str) -> bytes:
    """Measured means with their range as error bars, and every predictor's curve."""
    table = comparison.table
    fig, ax = new_figure()
    mean = table["measured_mean"]
    ax.errorbar(table["n_workers"], mean, yerr=[mean - table["measured_min"], table["measured_max"] - mean],
                fmt="o", color="black", capsize=4, label="measured (mean, range)")
    shown = [n for n in ("simulator", "simulator_bw", "roofline", "roofline_bw", "roofline_cycle")
             if n in comparison.scores]
    for name in comparison.scores:
        if f"{name}_band_low" in table.columns:
            ax.fill_between(table["n_workers"], table[f"{name}_band_low"], table[f"{name}_band_high"], alpha=0.15,
                            label=f"{name} band")
    for name, style in zip(shown or list(comparison.scores), ("-", "--", ":", "-.", (0, (5, 1))), strict=False):
        ax.plot(table["n_workers"], table[name], linestyle=style, marker=".", label=name)
    return finish_png(fig, ax, ylabel="steps per second (all workers)", title=title, legend="lower right")


