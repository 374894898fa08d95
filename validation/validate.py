"""``tracegen validate``: predict what was measured, from only what a user has before buying nodes, and score it.

Inputs, each reported in the printed summary and the report (never picked up silently):
- the measurements: a CSV (:mod:`validation.measured`) or a ``tracegen testbed`` folder holding ``measured.csv``;
- the single-worker trace: ``--trace``, else the testbed folder's ``trace/``;
- the link profile: ``--link-profile``, else ``link-profile.json`` in the trace's folder (measured by netbench
  between the PS and *one* client host — never by the N-worker cluster);
- the link's bandwidth: ``--bandwidth``, else the measurements' ``bandwidth_bits_per_s``;
- what one untraced worker did on the two hosts: ``--single-worker``, else ``single-worker.json`` in the
  trace's folder (the PS's CPU per step; a run of one worker, never of the N-worker cluster).

Predictors, each given the same inputs:
- with the link profile: ``simulator``, and the baselines ``roofline``, ``no_overlap``, ``ps_queue``, and
  ``roofline_cycle`` when the profile has ``cycle`` points (:func:`tracegen.baselines.cycle_rates`);
- with the bandwidth only: ``simulator_bw`` (its band: ``band_low``/``band_high``) and ``roofline_bw``,
  ``no_overlap_bw``, ``ps_queue_bw``.
A mismatch between the trace's capture settings (``meta.json``) and the measurements' (model, batch, widths)
is printed as a warning and written into the report.

Runs on several PS tasks (``ps_tasks`` > 1 in the measurements, testbed ``--ps K``) are predicted from a one-PS
trace (``--trace``: the single-worker trace of a one-PS run; its profile and single-worker measurement come
with it): the parameters placed on K shards as the runs' ``placement`` says (:mod:`tracegen.placement`), each
shard a PS like the traced one; the baselines see the busiest shard as the one PS
(:func:`tracegen.baselines.on_busiest_shard`). Runs whose workers had CPU caps of their own (``worker_caps``,
testbed ``--worker-caps``) are predicted with each worker's speed its cap over the traced worker's
(:func:`worker_speeds`). Runs whose workers had links of their own (``worker_links``, testbed
``--worker-links``) are predicted with each such worker's transfers limited to its link's payload rate
(:func:`worker_links`). The baselines see those workers with their own speeds and links
(:func:`tracegen.baselines.mixed`).

Writes into its output directory: ``report.md``, ``comparison.csv``, ``comparison.png`` and each simulator's
``prediction*/curve.csv``; when the measurements' folder holds a testbed ``staleness.csv``, also the real
staleness against the profile's prediction (:mod:`validation.staleness`: ``staleness.csv`` and a report
section); a ``staleness.csv`` tracegen wrote itself there (measurements kept in a prediction's folder) is left out
with a warning.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from parsers.errors import MAX_QUOTED_CHARS, quoted
from parsers.files import broken_link
from parsers.linkprofile import LinkProfile, read_link_profile
from parsers.read import meta_path, read_meta, read_trace
from parsers.singleworker import read_single_worker
from parsers.trace import Trace
from tracegen.band import band_curves, band_edges
from tracegen.baselines import (
    BASELINES,
    RateFn,
    StepCosts,
    Worker,
    cycle_rates,
    link_rates,
    mixed,
    no_overlap,
    on_busiest_shard,
    ps_queue,
    roofline,
    step_costs,
)
from tracegen.budget import budget
from tracegen.config import PredictConfig, check_config_order
from tracegen.curve import Curve, Simulations, scaling_curve, simulations
from tracegen.estimate import estimated_events, estimated_seconds
from tracegen.inputs import batch_size_of, profile_beside, single_worker_beside
from tracegen.link import LinkSpec
from tracegen.model import StepModel
from tracegen.outputs import OutputDir
from tracegen.placement import PLACEMENTS, Placement, creation_order, place, stored_bytes, traced_placement
from tracegen.plots import curve_csv
from tracegen.preparation import Prepared, prepared
from tracegen.processes import processes_for
from tracegen.selfreplay import step_model
from tracegen.sweepgrid import MAX_WORKER_SPEED, MIN_WORKER_SPEED
from tracegen.units import format_rate
from validation import Progress
from validation.compare import (
    Comparison,
    compare,
    comparison_csv,
    comparison_png,
    cpu_markdown,
    report_markdown,
)
from validation.errors import ConfigError
from validation.measured import RATE_COLUMN, read_measured, suspect_per_worker, suspect_repeats
from validation.staleness import (
    STALENESS_NAME,
    StalenessRow,
    compare_staleness,
    read_measured_staleness,
    staleness_csv,
    staleness_markdown,
    written_by_tracegen,
)

MEASURED_NAME = "measured.csv"
TRACE_DIR_NAME = "trace"
OUTPUT_FILES = ("report.md", "comparison.csv", "comparison.png", "prediction/curve.csv",
                "prediction_bw/curve.csv", "staleness.csv")
BASELINE_FUNCTIONS = {"roofline": roofline, "no_overlap": no_overlap, "ps_queue": ps_queue}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Inputs:
    """What a validation uses, and where each came from."""

    measured: pathlib.Path
    trace: pathlib.Path
    profile: pathlib.Path | None
    bandwidth_bytes_per_s: int | None
    bandwidth_from: str
    single_worker: pathlib.Path | None = None


def resolve_inputs(measured: str | os.PathLike[str], trace: str | os.PathLike[str] | None,
                   profile: str | os.PathLike[str] | None, bandwidth_bytes_per_s: int | None,
                   runs: pd.DataFrame | None = None, single_worker: str | os.PathLike[str] | None = None) -> Inputs:
    """The measurements CSV, the trace, the profile and the bandwidth: as given, else from a testbed folder."""
    path = pathlib.Path(measured)
    given = trace is not None
    if path.is_dir():
        if trace is None:
            trace = path / TRACE_DIR_NAME
        path = path / MEASURED_NAME
    if not path.exists():  # said first: without the file, asking for the trace beside it misleads
        raise ConfigError(_no_such(path, "measurements file"))
    if trace is None:
        raise ConfigError(f"{path}: give the single-worker trace with --trace (or a testbed folder holding "
                          f"{MEASURED_NAME} and {TRACE_DIR_NAME}/)")
    # said before anything beside it is read (its meta.json, its profile); a glob of step files is read_trace's
    if not pathlib.Path(trace).exists() and not glob.has_magic(os.fspath(trace)):
        raise ConfigError(_no_such(trace, "trace") + (" (--trace)" if given else
                                                      f"; a testbed folder holds {MEASURED_NAME} and "
                                                      f"{TRACE_DIR_NAME}/, or give --trace"))
    found = pathlib.Path(profile) if profile is not None else profile_beside(trace)
    bandwidth, source = bandwidth_bytes_per_s, "--bandwidth"
    if bandwidth is None and runs is not None and "bandwidth_bytes_per_s" in runs.columns:  # one rate: read_measured
        bandwidth = round(runs["bandwidth_bytes_per_s"].iloc[0])
        source = f"{path} ({runs.attrs.get(RATE_COLUMN, 'bandwidth_bits_per_s')})"
    single = pathlib.Path(single_worker) if single_worker is not None else single_worker_beside(trace)
    return Inputs(measured=path, trace=pathlib.Path(trace), profile=found, bandwidth_bytes_per_s=bandwidth,
                  bandwidth_from=source if bandwidth is not None else "none", single_worker=single)


def _no_such(path: str | os.PathLike[str], what: str) -> str:
    """``PATH: no such WHAT``, and what it is when it is a symbolic link that loops or leads nowhere."""
    why = broken_link(path)
    return f"{os.fspath(path)}: no such {what}" + (f": {why}" if why else "")


def input_files(measured: str | os.PathLike[str], *given: str | os.PathLike[str] | None) -> list[pathlib.Path]:
    """The files a validation reads that could stand where its report goes: the measurements CSV (a testbed
    folder's ``measured.csv``), the testbed's ``staleness.csv`` beside it, and the ``given`` ones (the trace, a link
    profile, a single-worker measurement, an order file); the report must never replace one
    (:class:`tracegen.outputs.OutputDir`)."""
    path = pathlib.Path(measured)
    csv = path / MEASURED_NAME if path.is_dir() else path
    return [csv, csv.parent / STALENESS_NAME, *(pathlib.Path(g) for g in given if g is not None)]


def _as_measured(config: PredictConfig, costs: StepCosts, model: StepModel, shards: Placement | None,
                 speeds: tuple[float, ...], links: tuple[int, ...],
                 report: Progress) -> tuple[PredictConfig, StepCosts, tuple[Worker, ...]]:
    """``config``, the baselines' ``costs`` and the baselines' workers for the cluster the runs had: its PS
    shards, worker speeds and workers' own links (no workers when all are like the traced one)."""
    config = config.on_traced_ps_tasks(model)
    if speeds:
        config = dataclasses.replace(config, worker_speed=speeds)
        report("workers at " + ", ".join(f"{s:g}" for s in speeds) + " of the traced worker's speed (their CPU caps)")
    if links:
        config = dataclasses.replace(config, worker_link_bits_per_s=links)
        report("workers' own links: " + ", ".join(f"{b / 1e6:g} Mbit/s" if b else "-" for b in links))
    cluster = tuple(Worker(speed=speeds[i] if i < len(speeds) else 1.0,
                           link_bytes_per_s=links[i] / 8 * config.payload_fraction if i < len(links) else 0.0)
                    for i in range(max(len(speeds), len(links))))
    if shards is not None:
        config = dataclasses.replace(config, ps_shard_of_task=shards.shard_of_task)
        per_shard = shards.bytes_per_shard(model)
        costs = on_busiest_shard(costs, max(per_shard) / max(1, sum(per_shard)))
        report(f"{shards.n_shards} PS tasks, {shards.how} placement: {'/'.join(str(b) for b in per_shard)} bytes "
               "pulled per step from each")
    return config, costs, cluster


def worker_links(inputs: Inputs, runs: pd.DataFrame) -> tuple[int, ...]:
    """With runs whose workers had links of their own (``worker_links``, testbed ``--worker-links``), each
    worker's link rate in bits/s (0: none of its own); () when no worker had one."""
    links = _per_worker(inputs, runs, "worker_links", "own links")
    return tuple(int(b) for b in links) if any(links) else ()


def _per_worker(inputs: Inputs, runs: pd.DataFrame, column: str, what: str) -> tuple[float, ...]:
    """The per-worker ``column`` of the runs (worker 0 first), the same in every run as far as it has workers;
    () when the runs do not have it."""
    if column not in runs.columns:
        return ()
    values = [tuple(v) for v in runs[column]]
    longest = max(values, key=len)
    if any(v != longest[:len(v)] for v in values):
        raise ConfigError(f"{inputs.measured}: runs differ in their workers' {what}; compare one setting at a time")
    return longest


def baseline(name: str, costs: StepCosts, workers: Sequence[int], rates: RateFn,
             cluster: Sequence[Worker]) -> list[float]:
    """The baseline ``name`` for each N, with workers of their own speeds or links when ``cluster`` names them
    (:func:`tracegen.baselines.mixed`)."""
    if not cluster:
        return BASELINE_FUNCTIONS[name](costs, workers, rates)
    return mixed(name, costs, workers, rates, cluster)


def worker_speeds(inputs: Inputs, runs: pd.DataFrame) -> tuple[float, ...]:
    """With runs whose workers had CPU caps of their own (``worker_caps``, testbed ``--worker-caps``), each
    worker's speed relative to the traced one: its cap over the traced worker's (``cpu_cap_worker`` in the
    trace's ``meta.json``); () when every worker had the traced worker's cap."""
    caps = _per_worker(inputs, runs, "worker_caps", "CPU caps")
    if not caps:
        return ()
    where, meta = meta_path(inputs.trace), read_meta(inputs.trace)
    if meta is None or "cpu_cap_worker" not in meta:
        raise ConfigError(f"{where}: {'no such file' if meta is None else 'no cpu_cap_worker'}: the traced worker's "
                          "CPU cap is needed for workers with caps of their own")
    traced = meta["cpu_cap_worker"]
    if isinstance(traced, bool) or not isinstance(traced, int | float) or not traced > 0:
        raise ConfigError(f"{where}: 'cpu_cap_worker' must be a number > 0 (got {quoted(traced)})")
    for line, run in zip(runs.index, runs["worker_caps"], strict=True):  # line numbers (validation.measured)
        for cap in run:
            if not MIN_WORKER_SPEED <= cap / traced <= MAX_WORKER_SPEED:
                raise ConfigError(f"{inputs.measured}:{line}: 'worker_caps' {cap:g} cores is {cap / traced:g} x the "
                                  f"traced worker's cap ({traced:g} cores, {where}); a worker's speed must be from "
                                  f"{MIN_WORKER_SPEED:g} to {MAX_WORKER_SPEED:g} x the traced one's")
    speeds = tuple(c / traced for c in caps)
    return () if all(abs(s - 1) < 1e-9 for s in speeds) else speeds


def ps_placement(measured: pathlib.Path, runs: pd.DataFrame, model: StepModel, trace: Trace) -> Placement | None:
    """With runs on several PS tasks (``ps_tasks`` > 1, testbed ``--ps K``), the parameters placed on them as
    the runs' ``placement`` says (:mod:`tracegen.placement`, from the trace's creation order), or, from a trace
    of the same K-PS job, as traced; None for one PS."""
    traced = max(model.traced_ps_task, default=0) + 1
    if "placement" in runs.columns:  # a value no placement has is a mistake, on one PS task too (where it is moot)
        for line, how in zip(runs.index, runs["placement"], strict=True):
            if how not in PLACEMENTS:
                raise ConfigError(f"{measured}:{line}: 'placement' must be one of {', '.join(PLACEMENTS)} "
                                  f"(got {how!r})")
    if "ps_tasks" not in runs.columns:
        if traced > 1:
            raise ConfigError(f"{measured}: the trace has {traced} PS tasks but the runs do not say how many they "
                              "had (no ps_tasks column)")
        return None
    counts = sorted({int(k) for k in runs["ps_tasks"]})
    if traced > 1:
        if counts != [traced]:
            raise ConfigError(f"{measured}: the trace has {traced} PS tasks, the runs {counts}; predict runs on "
                              "K PS tasks from a trace of one PS task or of the same K")
        return traced_placement(model)
    hows = sorted(set(runs["placement"])) if "placement" in runs.columns else ["round-robin"]
    if len(counts) > 1 or len(hows) > 1:
        raise ConfigError(f"{measured}: runs differ in their PS tasks ({counts}) or placement ({hows}); compare "
                          "one setting at a time")
    if counts[0] == 1:
        return None
    return place(model, counts[0], hows[0], creation_order(trace), stored_bytes(trace))


def mismatches(trace: pathlib.Path, runs: pd.DataFrame, source: str = "the measurements file") -> list[str]:
    """Where the trace's capture settings (its ``meta.json``) differ from the measurements' columns (``source``:
    the measurements file, named with its values: the warning said "the measurements have ['64']", naming neither
    file)."""
    meta = read_meta(trace)
    if meta is None:
        return [f"{meta_path(trace)}: no meta.json beside the trace; cannot check it matches the measurements"]
    found = []
    widths = meta.get("widths")
    wanted = {"model": meta.get("model"), "batch_size": meta.get("batch_size"),
              "widths": ";".join(str(w) for w in widths) if isinstance(widths, list) else None}
    for column, value in wanted.items():
        if column in runs.columns and value is not None:
            measured = sorted({str(v) for v in runs[column]})
            if measured != [str(value)]:
                # shortened: a meta.json of 20000 widths made a warning line of 109 kB, printed and in the report
                said = ", ".join(repr(m) if isinstance(value, str) else m for m in measured)
                said = said if len(said) <= MAX_QUOTED_CHARS else said[: MAX_QUOTED_CHARS - 3] + "..."
                found.append(f"{meta_path(trace)}: the trace was captured with {column} {quoted(value)}, {source} "
                             f"has {said}")
    return found


def _with_batch_size(config: PredictConfig, runs: pd.DataFrame, measured: pathlib.Path,
                     trace: pathlib.Path) -> PredictConfig:
    """``config`` with the runs' batch size, when they give one (all the same: samples/s of which job?), else the
    trace's (its ``meta.json``, as ``predict`` takes it; 1 without one)."""
    if "batch_size" not in runs.columns:
        return dataclasses.replace(config, batch_size=batch_size_of(str(trace), None))
    (first_line, first), *rest = zip(runs.index, runs["batch_size"], strict=True)
    for line, size in rest:
        if int(size) != int(first):
            raise ConfigError(f"{measured}:{line}: 'batch_size' is {int(size)}, not {int(first)} as on line "
                              f"{first_line}: runs of two settings would be averaged as repeats of one; compare one "
                              "setting at a time")
    return dataclasses.replace(config, batch_size=int(first))


def validate(measured: str | os.PathLike[str], trace: str | os.PathLike[str] | None, config: PredictConfig,
             out: OutputDir, *, profile: str | os.PathLike[str] | None = None,
             single_worker: str | os.PathLike[str] | None = None,
             progress: Progress | None = None) -> tuple[Comparison, Inputs, list[str]]:
    """Predict every measured N from the inputs (module docstring), compare, and write the report."""
    report = progress or (lambda _line: None)
    first = resolve_inputs(measured, trace, profile, config.bandwidth_bytes_per_s)
    runs = read_measured(first.measured)
    inputs = resolve_inputs(measured, trace, profile, config.bandwidth_bytes_per_s, runs, single_worker)
    # before mismatches: a refusal is its one message
    config = _with_batch_size(config, runs, inputs.measured, inputs.trace)
    warnings = [*suspect_repeats(runs, str(inputs.measured)), *suspect_per_worker(runs, str(inputs.measured)),
                *mismatches(inputs.trace, runs, str(inputs.measured))]
    for w in warnings:
        report(f"warning: {w}")
    config = dataclasses.replace(config, workers=tuple(sorted({int(n) for n in runs["n_workers"]})), emit_traces=())
    # every input file read before any work, so that a bad one is refused at once and before a line says it is used
    link_profile = None if inputs.profile is None else read_link_profile(inputs.profile)
    traced = read_trace(inputs.trace)
    model = step_model(traced, timing=config.timing)
    check_config_order(model, config)  # else the simulation refused it, naming no file
    single = None if inputs.single_worker is None else read_single_worker(inputs.single_worker)
    costs = step_costs(model, single)
    shards, speeds = ps_placement(inputs.measured, runs, model, traced), worker_speeds(inputs, runs)
    config, costs, cluster = _as_measured(config, costs, model, shards, speeds, worker_links(inputs, runs), report)
    config = dataclasses.replace(config, single_worker=single)
    by_profile, by_bandwidth, jobs = _prepared_within_budget(model, config, link_profile,
                                                             inputs.bandwidth_bytes_per_s, out, report)
    predictions: dict[str, Sequence[float]] = {}
    bands: dict[str, tuple[Sequence[float], Sequence[float]]] = {}
    link_notes: dict[str, str] = {}
    profile_curve = None
    with simulations(jobs) as processes:
        if by_profile is not None:
            report(f"simulating with the link profile {inputs.profile}{_in_processes(jobs)}")
            profile_curve, spec, notes = _with_profile(*by_profile, costs, cluster, predictions, out, processes)
            link_notes["profile"] = spec.description
            _warn("with the link profile", notes, warnings, report)
        if by_bandwidth is not None:
            report(f"simulating with the bandwidth only, and the two ends of its band{_in_processes(jobs)}")
            notes = _with_bandwidth(*by_bandwidth, costs, cluster, predictions, bands, out, processes)
            _warn("with the bandwidth only", notes, warnings, report)
    if not predictions:
        raise ConfigError(f"{inputs.measured}: no link profile and no bandwidth to predict with; give "
                          "--link-profile or --bandwidth")
    comparison = compare(runs, predictions, bands)
    if shards is not None:
        source = "the trace of the same job" if model.traced_ps_task else "predicted from the one-PS trace"
        link_notes["PS tasks"] = (f"{shards.n_shards}, {shards.how} placement, {source}: "
                                  + " / ".join(f"{b / 1e6:.2f} MB" for b in shards.bytes_per_shard(model))
                                  + " pulled per step from each; each a PS like the traced one")
    settings = _settings(inputs, model, config, link_notes)
    title = f"Predicted vs measured: {pathlib.Path(measured).name}"
    measured_staleness = pathlib.Path(inputs.measured).parent / STALENESS_NAME
    rows = _staleness_rows(measured_staleness, profile_curve, warnings, report)
    text = report_markdown(comparison, settings, title, warnings) + cpu_markdown(runs)
    if rows is not None:
        text += staleness_markdown(rows, measured_staleness)
        out.write("staleness.csv", staleness_csv(rows))
    out.write("report.md", text)
    out.write("comparison.csv", comparison_csv(comparison))
    out.write("comparison.png", comparison_png(comparison, title))
    return comparison, inputs, warnings


def _prepared_within_budget(model: StepModel, config: PredictConfig, link_profile: LinkProfile | None,
                            bandwidth_bytes_per_s: int | None, out: OutputDir, report: Progress,
                            ) -> tuple[tuple[Prepared, PredictConfig] | None, tuple[Prepared, PredictConfig] | None,
                                       int]:
    """The step and links each predictor simulates, with its config: with the link profile, with the bandwidth
    alone (None: not given), and the local processes to run their curves in: ``config``'s jobs where the curves
    would take long enough on one core to gain from them, else one (:func:`tracegen.processes.processes_for`, as
    predict's curves and plan's pairs). What their curves will cost is said, or refused, before any of them
    (:func:`tracegen.budget.budget`, as predict does): a typo of an N in the measurements is days of simulation."""
    by_profile = by_bandwidth = None
    if link_profile is not None:
        with_profile = dataclasses.replace(config, link_profile=link_profile)
        by_profile = (prepared(model, with_profile, report), with_profile)
    if bandwidth_bytes_per_s is not None:
        with_bandwidth = dataclasses.replace(config, link_profile=None, bandwidth_bytes_per_s=bandwidth_bytes_per_s)
        by_bandwidth = (prepared(model, with_bandwidth, report), with_bandwidth)
    # the bandwidth's curves are three: its point and the two ends of its band
    events = seconds = 0.0
    for curves, by in ((1, by_profile), (3, by_bandwidth)):
        if by is not None:
            events += curves * estimated_events(by[0].model, by[1], by[0].links["mid"])
            seconds += curves * estimated_seconds(by[0].model, by[1], by[0].links["mid"])
    for line in budget(model, config, out, events, seconds=(seconds, seconds)):
        report(line)
    return by_profile, by_bandwidth, processes_for(seconds, config.jobs)


def _in_processes(jobs: int) -> str:
    """What a line that says what is simulated adds about where: nothing for this process."""
    return f" in {jobs} processes" if jobs > 1 else ""


def _staleness_rows(path: pathlib.Path, curve: Curve | None, warnings: list[str],
                    report: Progress) -> list[StalenessRow] | None:
    """The testbed's measured staleness at ``path`` (beside the measurements) against the profile's ``curve``;
    None without either, or when ``path`` is a staleness table tracegen wrote or shares no N with ``curve`` (a
    warning says so)."""
    if curve is None or not path.is_file():
        return None
    if (what := written_by_tracegen(path)) is not None:
        warnings.append(f"{path}: {what}, not a testbed's measured staleness: none compared")
        report(f"warning: {warnings[-1]}")
        return None
    measured = read_measured_staleness(path)
    rows = compare_staleness(measured, curve)
    if not rows:  # a table of its header alone said nothing of why
        ns = sorted(measured)
        shown = ", ".join(map(str, ns[:5])) + (f" and {len(ns) - 5} more" if len(ns) > 5 else "")
        why = f"its N ({shown}) are none the prediction has" if measured else "it has no rows"
        warnings.append(f"{path}: {why}: no staleness compared")
        report(f"warning: {warnings[-1]}")
        return None
    return rows


def _warn(which: str, notes: Sequence[str], warnings: list[str], report: Progress) -> None:
    """What :func:`tracegen.preparation.prepared` found about the inputs ``which`` predictor used, among the report's
    warnings."""
    for note in notes:
        warnings.append(f"{which}: {note}")
        report(f"warning: {which}: {note}")


def _with_profile(prep: Prepared, config: PredictConfig, costs: StepCosts, cluster: Sequence[Worker],
                  predictions: dict[str, Sequence[float]], out: OutputDir,
                  processes: Simulations | None,
                  ) -> tuple[Curve, LinkSpec, tuple[str, ...]]:
    """The simulator and the baselines with ``config``'s link profile (``prep``: the step and links it prepared),
    into ``predictions``; the curve, the link it simulated and what the inputs left unsure."""
    spec, workers = prep.links["mid"], config.workers
    curve = scaling_curve(prep.model, config.sim_config(spec), workers, seeds=config.seeds, find_plateau=False,
                          processes=processes)
    out.write("prediction/curve.csv", curve_csv(curve, config.batch_size))
    predictions["simulator"] = [p.steps_per_s for p in curve.points]
    for name in BASELINES:
        predictions[name] = baseline(name, costs, workers, link_rates(prep.traced_links["mid"]), cluster)
    cycling = cycle_rates(config.link_profile) if config.link_profile is not None else None
    if cycling is not None:  # the profile's own answer for clients that alternate, as workers do
        predictions["roofline_cycle"] = baseline("roofline", costs, workers, cycling, cluster)
    return curve, spec, prep.notes


def _with_bandwidth(prep: Prepared, config: PredictConfig, costs: StepCosts, cluster: Sequence[Worker],
                    predictions: dict[str, Sequence[float]], bands: dict[str, tuple[Sequence[float], Sequence[float]]],
                    out: OutputDir,
                    processes: Simulations | None) -> tuple[str, ...]:
    """The simulator, its band and the baselines with ``config``'s bandwidth alone (``prep``: the step and links
    it prepared), into ``predictions`` and ``bands``; what the inputs left unsure."""
    workers = config.workers
    mid = scaling_curve(prep.model, config.sim_config(prep.links["mid"]), workers, seeds=config.seeds,
                        find_plateau=False, processes=processes)
    band = band_curves(prep, config, workers, find_plateau=False, processes=processes)
    out.write("prediction_bw/curve.csv", curve_csv(mid, config.batch_size, band))
    predictions["simulator_bw"] = [p.steps_per_s for p in mid.points]
    bands["simulator_bw"] = band_edges(mid, band)
    rates = link_rates(prep.traced_links["high"])  # the given rate each way, whatever the other direction does
    for name in BASELINES:
        predictions[f"{name}_bw"] = baseline(name, costs, workers, rates, cluster)
    return prep.notes


def single_worker_said(inputs: Inputs) -> str:
    """Where the single-worker input came from and what it set, for the report: from ``single-worker.json`` only,
    never from the measurements' N = 1 rows, so a user whose CSV lacks N = 1, or who has no such file, is told what
    stood in for it (a report that said 'none' left it to be guessed)."""
    if inputs.single_worker is not None:
        return (f"{inputs.single_worker} (one untraced worker's run: the rate a simulated worker is brought to where "
                "the traced replay is slower, so N = 1's error is then no prediction, and the PS's CPU per step where "
                "it gives one)")
    cpu = ("the PS's CPU per transfer request from the link profile's small requests, which underrate it"
           if inputs.profile else "no CPU per transfer request for the PS (the bandwidth only)")
    return ("none (no --single-worker, no single-worker.json beside the trace; the measurements' N = 1 rows are no "
            f"input): one worker replayed as traced, tracing's own cost included; {cpu}")


def _settings(inputs: Inputs, model: Any, config: PredictConfig, link_notes: Mapping[str, str]) -> dict[str, Any]:
    return {
        "measurements": str(inputs.measured), "trace": str(inputs.trace),
        "complete traced steps used": f"{len(model.timings)} of {model.n_traced_steps}",
        "link profile": str(inputs.profile) if inputs.profile else "none (no link-profile.json beside the trace)",
        "single worker": single_worker_said(inputs),
        "bandwidth": (f"{format_rate(inputs.bandwidth_bytes_per_s)} line rate from {inputs.bandwidth_from}, "
                      f"{config.payload_fraction:.4f} of it payload") if inputs.bandwidth_bytes_per_s else "none",
        **{f"link ({k})": v for k, v in link_notes.items()},
        "link model": config.link, "transfer order": config.policy,
        "simulated steps per worker": f"{config.warmup_steps} warm-up + {config.steps} measured",
        "seeds": config.seeds, "batch size": config.batch_size,
    }
