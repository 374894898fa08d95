"""A curve as files: ``curve.csv`` (fixed decimals, so equal curves give equal bytes; a rate too small for them,
its first three digits) and ``curve.png``.

``curve.csv`` columns: ``n_workers``; ``steps_per_s`` (mean over seeds) and ``samples_per_s`` (times the batch);
``steps_per_s_low``/``steps_per_s_high`` (lowest and highest over seeds); ``band_low``/``band_high`` (steps/s at
the two ends of what the link can do when only its bandwidth is known, empty when a link profile pins it: see
:mod:`tracegen.predict`); the link's and the PS's utilisations (fractions); ``bottleneck``; the staleness of the
parameter updates, pooled over seeds (``staleness_mean``, ``staleness_median``, ``staleness_p99``: updates to the
same parameter by other workers between a worker's read and its apply; empty when the step updates nothing it
reads). ``staleness.csv`` holds the whole histogram per N, ``staleness.png`` draws it. ``steps_per_s_ci95``: the
half-width of the 95 % confidence interval of the mean over seeds (Student's t; empty for one seed) — the
uncertainty of the simulation's own estimate, which the lowest and highest of a few seeds does not say.
"""

from __future__ import annotations

import io
import pathlib
from typing import Any

from parsers.trace import printable
from tracegen.band import band_edges
from tracegen.curve import Curve
from tracegen.curvetext import knee_mark
from tracegen.units import fixed
from tracegen.workercounts import format_workers

CSV_COLUMNS = ("n_workers", "steps_per_s", "samples_per_s", "steps_per_s_low", "steps_per_s_high", "band_low",
               "band_high", "pull_link_utilisation", "push_link_utilisation", "ps_cpu_utilisation", "bottleneck",
               "staleness_mean", "staleness_median", "staleness_p99", "steps_per_s_ci95")
STALENESS_COLUMNS = ("n_workers", "staleness", "updates", "fraction")


def plot_title(source: str) -> str:
    """A plot's title for a trace read from ``source``: its last two path parts, as the last alone often says
    nothing (``trace``, the folder of every configuration in ``data/``)."""
    return "/".join(pathlib.PurePath(source).parts[-2:]) or source


def new_figure() -> tuple[Any, Any]:
    """A 6.4 x 4 inch figure (matplotlib's Agg backend, no display needed) and its one axes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    return fig, fig.add_subplot()


def finish_png(fig: Any, ax: Any, *, ylabel: str, title: str, legend: str) -> bytes:
    """Label the axes (workers on x), start y at 0, place the legend and return the PNG (no timestamp in it)."""
    ax.set_xlabel("workers (N)")
    ax.set_ylabel(ylabel)
    # a name is text: "$" in a path is no formula, and one that is not UTF-8 is shown escaped (the fonts take no
    # lone surrogate)
    ax.set_title(printable(title), parse_math=False)
    ax.set_ylim(bottom=0)
    ax.legend(loc=legend, fontsize="small")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def curve_csv(curve: Curve, batch_size: int, band: tuple[Curve, Curve] | None = None) -> str:
    """The curve as CSV (module docstring)."""
    lines = [",".join(CSV_COLUMNS)]
    edges = None if band is None else band_edges(curve, band)
    for i, p in enumerate(curve.points):
        low, high = ("", "") if edges is None else (fixed(edges[0][i], 4), fixed(edges[1][i], 4))
        lines.append(",".join([
            str(p.n_workers), fixed(p.steps_per_s, 4), fixed(p.steps_per_s * batch_size, 4),
            fixed(p.steps_per_s_low, 4), fixed(p.steps_per_s_high, 4), low, high, f"{p.pull_link_utilisation:.4f}",
            f"{p.push_link_utilisation:.4f}", f"{p.ps_cpu_utilisation:.4f}", p.bottleneck,
            *(("", "", "") if p.staleness is None else
              (f"{p.staleness.mean:.4f}", f"{p.staleness.median:.1f}", f"{p.staleness.p99:.0f}")),
            "" if p.steps_per_s_ci95 is None else fixed(p.steps_per_s_ci95, 4)]))
    return "\n".join(lines) + "\n"


def staleness_csv(curve: Curve) -> str:
    """Per N, every staleness value seen and how many updates had it (and their share of that N's updates)."""
    lines = [",".join(STALENESS_COLUMNS)]
    for p in curve.points:
        if p.staleness is not None:
            total = p.staleness.n_updates
            lines += [f"{p.n_workers},{value},{count},{count / total:.6f}" for value, count in p.staleness.histogram]
    return "\n".join(lines) + "\n"


def staleness_png(curve: Curve, *, title: str) -> bytes:
    """Staleness against N: mean, median and 99th percentile, over the histogram's spread."""
    fig, ax = new_figure()
    known = [p for p in curve.points if p.staleness is not None]
    ns = [p.n_workers for p in known]
    for p in known:
        assert p.staleness is not None  # noqa: S101 - filtered above
        total = p.staleness.n_updates
        ax.scatter([p.n_workers] * len(p.staleness.histogram), [v for v, _ in p.staleness.histogram],
                   s=[max(2.0, 200 * c / total) for _, c in p.staleness.histogram], color="tab:blue", alpha=0.25)
    ax.plot(ns, [p.staleness.mean for p in known if p.staleness], marker="o", label="mean")
    ax.plot(ns, [p.staleness.median for p in known if p.staleness], linestyle="--", label="median")
    ax.plot(ns, [p.staleness.p99 for p in known if p.staleness], linestyle=":", label="99th percentile")
    return finish_png(fig, ax, ylabel="staleness (updates between read and apply)", title=title, legend="upper left")


def curve_png(curve: Curve, *, title: str, band: tuple[Curve, Curve] | None = None) -> bytes:
    """Throughput against N: the prediction with its seed spread, the band when there is one, the knee and the
    bounds, over every N asked (:func:`curve_axes`)."""
    fig, ax = curve_axes(curve, band)
    return finish_png(fig, ax, ylabel="steps per second (all workers)", title=title, legend="lower right")


def curve_axes(curve: Curve, band: tuple[Curve, Curve] | None = None) -> tuple[Any, Any]:
    """:func:`curve_png`'s figure and axes, before labels. The asked N past a stalled curve, not simulated
    (``curve.unsimulated_workers``), are drawn as the plateau carried on to the largest of them, dotted: the
    axis spans what was asked, and the line says which N it did not simulate."""
    fig, ax = new_figure()
    ns = [p.n_workers for p in curve.points]
    if band is not None:
        ax.fill_between(ns, *band_edges(curve, band), color="tab:orange", alpha=0.2,
                        label="band: link two-way loss unknown")
    ax.fill_between(ns, [p.steps_per_s_low for p in curve.points], [p.steps_per_s_high for p in curve.points],
                    alpha=0.3, label="range over seeds")
    ax.plot(ns, [p.steps_per_s for p in curve.points], marker="o", label="predicted steps/s")
    if curve.unsimulated_workers:
        ax.plot([ns[-1], max(curve.unsimulated_workers)], [curve.points[-1].steps_per_s, curve.plateau_steps_per_s],
                linestyle=":", linewidth=2.5, color="tab:blue", zorder=3,
                label=f"N={format_workers(curve.unsimulated_workers)}: not simulated, stalled")
    if curve.knee_n_workers is not None:
        knee = next(p for p in curve.points if p.n_workers == curve.knee_n_workers)
        ax.axvline(knee.n_workers, color="grey", linestyle=":")
        # to the right of the knee, but to its left in the right half of the axis: a knee at the last N asked ran
        # off the figure, 'knee N=100' cut to 'knee N=10' (and the quick start's N=16 to N=1)
        right = max(ns[-1], *curve.unsimulated_workers) if curve.unsimulated_workers else ns[-1]
        left = knee.n_workers > (ns[0] + right) / 2
        ax.annotate(f"knee {knee_mark(curve)}", (knee.n_workers, knee.steps_per_s), textcoords="offset points",
                    xytext=(-6 if left else 6, -14), horizontalalignment="right" if left else "left")
    top = max(p.steps_per_s_high for p in curve.points)
    ax.axhline(curve.plateau_steps_per_s, color="grey", linestyle="--",
               label=f"plateau {'' if curve.plateau_reached else '>= '}{curve.plateau_steps_per_s:.3g} steps/s "
                     f"(N={curve.saturation_workers})")
    if curve.link_bound_steps_per_s < 3 * top:
        ax.axhline(curve.link_bound_steps_per_s, color="red", linestyle="--",
                   label=f"link bound {curve.link_bound_steps_per_s:.3g} steps/s")
    return fig, ax
