"""``report.html``: a prediction or a validation as one self-contained page a person reads in a browser.

Functions take plain data and return the page's bytes: :func:`prediction_html` (a :class:`~tracegen.curve.Curve`,
its band, the inputs), :func:`comparison_html` (anything shaped like :class:`validation.compare.Comparison`: this
package may not import ``validation``). The pieces — :func:`tracegen.htmlpage.table`, ``section``,
``definitions`` and :func:`tracegen.svgchart.render` — are there for other reports (``plan``'s table).

The page shows, against N: throughput with the seeds' spread, the band when only a bandwidth was known, the knee
and the plateau; the pull, push and PS-CPU utilisations and the bottleneck; when validating, the measured means
and ranges over every predictor, with the error table. Hovering a chart shows the values at that N; the legend
hides and shows series; ``report.html#n=4`` opens with N=4's values shown. The inputs are printed.

Why hand-written SVG and not a plotting library (measured): plotly 7.1's ``to_html(include_plotlyjs=True)``, the
only way it opens offline, writes 4,823,124 bytes for a one-line figure (4,823,902 for three traces: plotly.js
is inlined whole), needs a 64 MB package (and narwhals), and gives its ``<div>`` a random uuid unless ``div_id``
is passed (``include_plotlyjs="cdn"`` is 7 kB but needs the network). This module writes 14 kB for a 4-point
prediction, 27 kB for 16 points with a band and 17 kB for a validation of 8 predictors at 5 N
(``tests/tracegen/test_html_report.py`` keeps a page under 100 kB), adds no dependency, and is byte-identical
for equal inputs by construction: no ids but its own, no timestamps, coordinates rounded to 0.1. Hover values
and hiding series are what a reader needs from these small charts; zoom and pan are not worth 4.8 MB a report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import pandas as pd

from tracegen.band import band_edges
from tracegen.bottleneck import BUSY_THRESHOLD, EFFICIENT
from tracegen.curve import Curve
from tracegen.curvetext import (
    knee_mark,
    knee_text,
    plateau_text,
    range_score,
    scored_knee,
    stall_consequence,
    unsimulated_text,
)
from tracegen.htmlpage import Html, definitions, page, paragraph, section, table
from tracegen.svgchart import Area, Chart, Rule, Series, render
from tracegen.units import counted, fixed, percent

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
BAND_COLOR, SPREAD_COLOR = "#ff7f0e", "#1f77b4"


class ScoreLike(Protocol):
    """What a predictor's score offers (:class:`validation.compare.Score`)."""

    @property
    def mape(self) -> float: ...
    @property
    def max_error(self) -> float: ...
    @property
    def knee_n_workers(self) -> int: ...
    @property
    def inside_range(self) -> int | None: ...
    @property
    def with_repeats(self) -> int: ...
    @property
    def in_band(self) -> int | None: ...
    @property
    def band_width(self) -> float | None: ...


class ComparisonLike(Protocol):
    """What a comparison offers (:class:`validation.compare.Comparison`): the per-N table with
    ``measured_mean``/``_min``/``_max``, ``n_repeats``, ``<name>``, ``<name>_error`` and optional
    ``<name>_band_low``/``_band_high`` columns, the scores per predictor, the measured knee."""

    @property
    def table(self) -> pd.DataFrame: ...
    @property
    def scores(self) -> Mapping[str, ScoreLike]: ...
    @property
    def measured_knee_n_workers(self) -> int: ...


def prediction_html(curve: Curve, *, title: str, inputs: Sequence[tuple[str, str]], batch_size: int = 1,
                    band: tuple[Curve, Curve] | None = None) -> bytes:
    """The page of one prediction: summary, throughput, utilisation and bottleneck, the table, the inputs."""
    points, ns = curve.points, tuple(p.n_workers for p in curve.points)
    edges = band_edges(curve, band) if band is not None else None
    lead = (f"Plateau {plateau_text(curve)}, {fixed(curve.plateau_steps_per_s * batch_size, 1)} samples/s; "
            f"knee (95 % of the plateau): {knee_text(curve)}; "
            f"link bound {_rate(curve.link_bound_steps_per_s)}, PS CPU bound {_rate(curve.ps_bound_steps_per_s)}; "
            f"bottleneck at N={ns[-1]}: {points[-1].bottleneck}.")
    parts = [paragraph(lead, "lead")]
    if curve.unsimulated_workers:
        parts.append(paragraph(f"{unsimulated_text(curve)} at a saturated resource, {stall_consequence(curve)} "
                               "('tracegen predict --every-n' simulates them)."))
    if edges is not None:
        parts.append(paragraph("Only the link's bandwidth is known, so the plateau is not pinned: the orange band "
                               "runs from a half-duplex link (low) to a full-duplex one (high). A link profile "
                               "('tracegen netbench') pins it.", "warn"))
    tips = []
    for i, p in enumerate(points):
        lines = [f"N={p.n_workers}", f"steps/s {fixed(p.steps_per_s, 2)} (seeds {fixed(p.steps_per_s_low, 2)} to "
                 f"{fixed(p.steps_per_s_high, 2)})", f"samples/s {fixed(p.steps_per_s * batch_size, 1)}"]
        if edges is not None:
            lines.append(f"band {fixed(edges[0][i], 2)} to {fixed(edges[1][i], 2)} steps/s")
        lines += [f"pull {percent(p.pull_link_utilisation)}, push {percent(p.push_link_utilisation)}, "
                  f"PS CPU {percent(p.ps_cpu_utilisation)}", f"bottleneck {p.bottleneck}"]
        tips.append("\n".join(lines))
    areas = [Area(name="band: the link's two-way loss unknown", low=edges[0], high=edges[1], color=BAND_COLOR,
                  opacity=0.18)] if edges is not None else []
    areas.append(Area(name="range over seeds", low=tuple(p.steps_per_s_low for p in points),
                      high=tuple(p.steps_per_s_high for p in points), color=SPREAD_COLOR, opacity=0.25))
    rules = [Rule(label=f"plateau {curve.plateau_steps_per_s:.3g} steps/s", y=curve.plateau_steps_per_s)]
    if curve.knee_n_workers is not None:
        rules.append(Rule(label=f"knee {knee_mark(curve)}", x=curve.knee_n_workers))
    top = max(p.steps_per_s_high for p in points)
    if math.isfinite(curve.link_bound_steps_per_s) and curve.link_bound_steps_per_s < 1.5 * top:
        rules.append(Rule(label=f"link bound {curve.link_bound_steps_per_s:.3g}", y=curve.link_bound_steps_per_s,
                          color="#d62728"))
    throughput = Chart(chart_id="throughput", title="Throughput against workers", xs=ns, x_label="workers (N)",
                       y_label="steps per second (all workers)", tips=tuple(tips), areas=tuple(areas),
                       series=(Series(name="predicted steps/s", values=tuple(p.steps_per_s for p in points),
                                      color=SPREAD_COLOR),), rules=tuple(rules),
                       y_scale=float(batch_size) if batch_size > 1 else None, y_scale_label="samples per second")
    uses = (("pull (PS link, PS to workers)", "pull_link_utilisation", COLORS[0]),
            ("push (PS link, workers to PS)", "push_link_utilisation", COLORS[1]),
            ("PS CPU", "ps_cpu_utilisation", COLORS[2]))
    utilisation = Chart(chart_id="utilisation", title="Utilisation per resource", xs=ns, x_label="workers (N)",
                        y_label="busy (% of capacity)", tips=tuple(tips), y_top=100.0, y_percent=True,
                        series=tuple(Series(name=name, values=tuple(100 * getattr(p, attr) for p in points),
                                            color=color) for name, attr, color in uses),
                        rules=(Rule(label="80 % busy", y=80.0),))
    header = ["N", "steps/s", "samples/s", "seeds low", "seeds high"]
    header += ["band low", "band high"] if edges is not None else []
    header += ["pull", "push", "PS CPU", "bottleneck"]
    rows = []
    for i, p in enumerate(points):
        cells = [str(p.n_workers), fixed(p.steps_per_s, 2), fixed(p.steps_per_s * batch_size, 1),
                 fixed(p.steps_per_s_low, 2), fixed(p.steps_per_s_high, 2)]
        cells += [fixed(edges[0][i], 2), fixed(edges[1][i], 2)] if edges is not None else []
        cells += [percent(p.pull_link_utilisation), percent(p.push_link_utilisation),
                  percent(p.ps_cpu_utilisation), p.bottleneck]
        rows.append(cells)
    parts += [section("Throughput", render(throughput)),
              section("Utilisation and bottleneck", render(utilisation), paragraph(
                  f"A resource busy {BUSY_THRESHOLD:.0%} or more of what it can carry is the bottleneck (a link "
                  "direction: of what it carries while the other direction is busy too, as both are at a link-bound "
                  f"plateau); below that, 'workers' (adding workers helps) while each worker steps at {EFFICIENT:.0%} "
                  "of the smallest N's rate per worker or more, and 'contention' once it does not (workers wait on "
                  "each other, no resource full).")),
              section("Per N", table(header, rows, table_id="points")),
              section("Inputs", definitions(inputs))]
    return page(title, parts)


def comparison_html(comparison: ComparisonLike, *, title: str, inputs: Sequence[tuple[str, str]],
                    warnings: Sequence[str] = (), notes: Sequence[str] = ()) -> bytes:
    """The page of one validation: measured means and ranges over every predictor, the errors, the scores; ``notes``
    (what the scores can say: a knee among N with gaps) under the lead. With one N measured there is no knee (a
    point of a curve): none is shown."""
    t, names = comparison.table, list(comparison.scores)
    ns = tuple(int(n) for n in t["n_workers"])
    mean, lows, highs = (tuple(float(v) for v in t[c]) for c in ("measured_mean", "measured_min", "measured_max"))
    best = min(names, key=lambda n: comparison.scores[n].mape)
    one = len(ns) == 1
    measured_knee = scored_knee(comparison.measured_knee_n_workers, len(ns))
    parts = [paragraph(("One N measured, no knee" if one else f"Measured knee N={measured_knee}")
                       + f"; lowest mean error: {best} (MAPE {comparison.scores[best].mape:.1%}).", "lead")]
    parts += [paragraph(note) for note in notes]
    parts += [paragraph(f"Warning: {w}", "warn") for w in warnings]
    tips = []
    for i, n in enumerate(ns):
        lines = [f"N={n} ({counted(int(t['n_repeats'].iloc[i]), 'run')})",
                 f"measured {mean[i]:.3f} (range {lows[i]:.3f} to {highs[i]:.3f})"]
        lines += [f"{name} {float(t[name].iloc[i]):.3f} (error {float(t[f'{name}_error'].iloc[i]):.1%})"
                  for name in names]
        tips.append("\n".join(lines))
    areas = tuple(Area(name=f"{name} band", low=tuple(float(v) for v in t[f"{name}_band_low"]),
                       high=tuple(float(v) for v in t[f"{name}_band_high"]), color=BAND_COLOR)
                  for name in names if f"{name}_band_low" in t.columns)
    series = [Series(name=name, values=tuple(float(v) for v in t[name]), color=COLORS[k % len(COLORS)],
                     dash="" if name.startswith("simulator") else "6 4") for k, name in enumerate(names)]
    series.append(Series(name="measured (mean, range)", values=mean, low=lows, high=highs, color="#000",
                         line=False))
    chart = Chart(chart_id="comparison", title="Measured and predicted throughput", xs=ns, x_label="workers (N)",
                  y_label="steps per second (all workers)", tips=tuple(tips), areas=areas, series=tuple(series),
                  rules=() if one else (Rule(label=f"measured knee N={measured_knee}",
                                             x=comparison.measured_knee_n_workers),))
    banded = [name for name in names if f"{name}_band_low" in t.columns]  # each N's band, as report.md shows it
    header = ["N", "repeats", "measured mean", "measured range", *(f"{name} (error)" for name in names),
              *(f"{name} band" for name in banded)]
    rows = [[str(n), str(int(t["n_repeats"].iloc[i])), f"{mean[i]:.3f}", f"{lows[i]:.3f} to {highs[i]:.3f}",
             *(f"{float(t[name].iloc[i]):.3f} ({float(t[f'{name}_error'].iloc[i]):.1%})" for name in names),
             *(_band_cell(float(t[f"{name}_band_low"].iloc[i]), float(t[f"{name}_band_high"].iloc[i]), mean[i])
               for name in banded)]
            for i, n in enumerate(ns)]
    score_rows = []
    for name, s in comparison.scores.items():
        band = [f"{s.in_band} of {len(ns)}", f"{s.band_width:.0%}"] if (
            s.in_band is not None and s.band_width is not None) else ["-", "-"]
        score_rows.append([name, f"{s.mape:.1%}", f"{s.max_error:.1%}", scored_knee(s.knee_n_workers, len(ns)),
                           range_score(s.inside_range, s.with_repeats), *band])
    parts += [section("Steps per second, measured and predicted", render(chart)),
              section("Errors per N", table(header, rows, table_id="errors")),
              section("Scores", table(["predictor", "MAPE", "max error",
                                       f"knee (measured {measured_knee})",
                                       "inside measured range", "means inside band", "band width"], score_rows,
                                      table_id="scores")),
              section("Inputs", definitions(inputs))]
    return page(title, parts)


def _band_cell(low: float, high: float, mean: float) -> str:
    """One N's band in the errors table, marked where the measured mean lies outside it."""
    return f"{low:.3f} to {high:.3f}" + ("" if low <= mean <= high else " (mean outside)")


def _rate(steps_per_s: float) -> str:
    return f"{fixed(steps_per_s, 2)} steps/s" if math.isfinite(steps_per_s) else "none"


def report_inputs(items: Mapping[str, object]) -> list[tuple[str, str]]:
    """Inputs as printable pairs (None becomes 'none')."""
    return [(k, "none" if v is None else str(v)) for k, v in items.items()]


__all__ = ["ComparisonLike", "Html", "ScoreLike", "comparison_html", "prediction_html",
           "report_inputs"]
