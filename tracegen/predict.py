"""``predict``: from a trace to the scaling curve, its band, its plot, the gradients' staleness and synthetic
traces.

Pipeline: read the trace → :func:`tracegen.model.build_model` → the link (:func:`tracegen.preparation.resolve_links`) →
:func:`tracegen.curve.scaling_curve` → files (:mod:`tracegen.outputs`): ``curve.csv``, ``curve.png``,
``staleness.csv`` and ``staleness.png`` (when the step updates parameters it reads) and, when asked,
``traces/n{N}.json``; with ``ps_shards``, ``shards.csv`` (:mod:`tracegen.shards`: how many PS). The same trace,
config and seed give byte-identical files, in one process or several (``jobs``: a long curve's simulations run
side by side in local processes, :mod:`tracegen.processes`).

Which link, in order:
1. a link profile measured by ``tracegen netbench`` (``link_profile``, or ``link-profile.json`` beside the trace
   when no bandwidth is given): capacities per number of connections, the two-way loss and the queue delays,
   all measured — the plateau is pinned;
2. a bandwidth alone: the plateau is not pinned, because how much a link's two directions slow each other under
   load depends on queues, windows and CPUs no spec sheet gives. The curve is predicted twice more, at the two
   ends of what is physically possible, and written as ``band_low``/``band_high``: high, both directions at full
   payload rate whatever the other does (a perfect full-duplex link); low, the two directions together no faster
   than one (every request and acknowledgement of one direction waits behind the other's data: the link behaves
   half-duplex). The point prediction is the middle of the two (each direction at 3/4 of its rate while the other
   is busy). A link profile pins it. With a ``single-worker.json`` the band also holds the curve scaled to the
   measured untraced single-worker rate (:mod:`tracegen.band`);
3. neither: the link the trace shows (its per-direction rates, the same for any number of connections).

Whichever link: with a ``single-worker.json`` (``single_worker``, or beside the trace), the PS's CPU per
transfer request comes from what one untraced worker's run measured on the PS
(:func:`tracegen.linkspec.with_single_worker`), and when the replay of one worker is slower than that untraced
run, tracing's own cost is undone (:mod:`tracegen.untraced`, :func:`tracegen.preparation.prepared`).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Callable

from parsers.read import read_trace
from parsers.trace import Trace
from tracegen.band import band_curves
from tracegen.baselines import cycle_plateau
from tracegen.budget import planned
from tracegen.config import PredictConfig, check_config_order
from tracegen.curve import Curve, scaling_curve, simulations
from tracegen.linkspec import at_cap_plateau
from tracegen.model import StepModel
from tracegen.outputs import OutputDir
from tracegen.placement import Placement
from tracegen.plots import curve_csv, curve_png, plot_title, staleness_csv, staleness_png
from tracegen.preparation import prepared
from tracegen.selfreplay import step_model
from tracegen.shards import ShardRow, holding, placements, shard_table, shards_csv
from tracegen.synth import size_warning, write_synthetic_trace
from tracegen.units import counted


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """What :func:`predict` computed and wrote. ``band`` holds the low and high curves when the link was only a
    bandwidth (module docstring)."""

    model: StepModel
    curve: Curve
    link_source: str
    band: tuple[Curve, Curve] | None
    files: tuple[pathlib.Path, ...]
    shards: tuple[ShardRow, ...] = ()
    ps_at_cap_steps_per_s: float | None = None  # the plateau the PS's CPU allows at its cap (linkspec.at_cap_plateau)
    cycle_steps_per_s: float | None = None  # the link bound of the profile's cycle points at the last N (cycle_plateau)


def _placed(model: StepModel, trace: Trace, config: PredictConfig, report: Callable[[str], None]) -> list[Placement]:
    """The placements of ``--ps-shards``, as plan and sweep take them: a PS that would hold no variable is left
    out, and a note says so (it changes no rate, and only costs)."""
    if not config.ps_shards:
        return []
    kept, left_out = holding(model, trace, config.ps_shards)
    if left_out is not None:
        report(f"note: {left_out}")
    return placements(model, trace, kept, config.placement)


def predict(trace: Trace | str | os.PathLike[str], config: PredictConfig, out: OutputDir,
            progress: Callable[[str], None] | None = None) -> Prediction:
    """Run the pipeline of the module docstring and write its files into ``out``."""
    report = progress or (lambda _line: None)
    tr = trace if isinstance(trace, Trace) else read_trace(trace)
    traced = step_model(tr, timing=config.timing)
    check_config_order(traced, config)
    config = config.on_traced_ps_tasks(traced)
    if traced.traced_ps_task:
        report(f"the trace has {max(traced.traced_ps_task) + 1} PS tasks: each keeps its traced parameters, "
               "each a PS with the link given")
    prep = prepared(traced, config, report)
    for note in prep.notes:
        report(f"warning: {note}")
    model, links = prep.model, prep.links
    placed = _placed(model, tr, config, report)
    curves = len(links) + len(placed)
    jobs, progress_n = planned(model, config, links["mid"], curves, out, report)
    with simulations(jobs) as processes:
        curve = scaling_curve(model, config.sim_config(links["mid"]), config.workers, seeds=config.seeds,
                              progress=progress_n, processes=processes, stop_at_plateau=not config.every_n)
        simulated = tuple(p.n_workers for p in curve.points)
        band = None
        if "low" in links:
            report("simulating the two ends of the band")
            band = band_curves(prep, config, simulated, processes=processes)
        shards: list[ShardRow] = []
        if placed:
            report(f"simulating {counted(len(placed), 'number')} of PS shards ({config.placement} placement)")
            shards = shard_table(model, placed, config.sim_config(None), links["mid"], config.workers,
                                 seeds=config.seeds, processes=processes, stop_at_plateau=not config.every_n)
    title = plot_title(tr.source)
    files = [out.write("curve.csv", curve_csv(curve, config.batch_size, band)),
             out.write("curve.png", curve_png(curve, title=title, band=band))]
    if any(p.staleness is not None for p in curve.points):
        files += [out.write("staleness.csv", staleness_csv(curve)),
                  out.write("staleness.png", staleness_png(curve, title=f"Staleness: {title}"))]
    if placed:
        files.append(out.write("shards.csv", shards_csv(shards)))
    for n in sorted(set(config.emit_traces)):
        with out.open(f"traces/n{n}.json") as path:
            write_synthetic_trace(model, dataclasses.replace(config.sim_config(links["mid"]), n_workers=n), path)
            too_large = size_warning(path)
        files.append(out.path(f"traces/n{n}.json"))
        if too_large is not None:
            report(f"warning: {too_large}")
    at_cap = None if config.link_profile is None else at_cap_plateau(config.link_profile, traced, links["mid"])
    profile = config.link_profile
    one_ps = not placed and not traced.traced_ps_task
    cycling = cycle_plateau(profile, model, curve.points[-1].n_workers) if profile is not None and one_ps else None
    return Prediction(model=model, curve=curve, link_source=links["mid"].description, band=band, files=tuple(files),
                      shards=tuple(shards), ps_at_cap_steps_per_s=at_cap, cycle_steps_per_s=cycling)

