"""``sweep``: simulate every point of a grid and stream the rows to a Parquet dataset that a rerun resumes.

Pipeline: the trace → :func:`tracegen.model.build_model` → the grid (:func:`build_inputs`: links, PS shards,
policies, worker speeds, seeds; :mod:`tracegen.sweepgrid`) → the points not yet in the dataset → chunks of points run by
a runner (:mod:`tracegen.sweeprunner`: local processes, or Ray tasks) → rows → part files of ``part_points``
rows (:mod:`parsers.sweepdata`: the layout and the columns).

One point is one :func:`~tracegen.simulate.simulate` run (:func:`run_point`): the grid's steps and warm-up
steps, one seed, no averaging; its row holds its parameters and what :mod:`tracegen.metrics` says of the run.
Links are built as ``predict`` builds them (:func:`tracegen.preparation.prepared`, its point prediction for a
rate alone; ``single-worker.json`` beside the trace applies to every link, tracing's cost undone included). A
worker speed other than 1 runs the traced worker ops that many times as fast, as ``plan`` moves a step onto a
faster worker type (:func:`tracegen.instance.on_instances`; the PS stays as traced). PS shards are placed as
``predict --ps-shards`` places them (:func:`tracegen.shards.placements`), each shard a PS like the traced one;
a row's utilisations are the shards' mean, and ``busiest_shard`` says which shard's resource is the busiest.

Resume and stopping, the dataset always consistent:
- before any work the directory is locked (one sweep writes into it at a time) and temporary files a killed
  run left are removed (:class:`tracegen.outputs.OutputDir`); the ids in the finished parts are read, and only
  the other points are simulated, once the dataset is found to be of this trace and settings, with no row of
  those points' parameters from other inputs (:func:`refuse_mixing`);
- the points to do are cut, in grid order, into parts of ``part_points``; a part is written atomically as soon as
  its points and those before it are finished, its rows in grid order, so an uninterrupted run writes the same
  bytes however many processes or Ray tasks ran it; on an error, Ctrl-C or SIGTERM the rows finished so far are
  written as a last part, then the runner stops its workers;
- a run killed outright (SIGKILL) loses only the rows not yet in a part; the next run computes them again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import pathlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from parsers.catalogue import Catalogue
from parsers.errors import quoted
from parsers.linkprofile import read_link_profile
from parsers.read import read_trace
from parsers.singleworker import SingleWorker
from parsers.sweepdata import COLUMNS, Contents, next_part_number, read_contents, write_part
from parsers.trace import Trace
from tracegen.bottleneck import bottleneck
from tracegen.config import MIN_PAYLOAD_FRACTION, PAYLOAD_FRACTION, PredictConfig
from tracegen.cost import busy_tasks, run_s
from tracegen.errors import ConfigError, TracegenError
from tracegen.estimate import run_engine
from tracegen.inputs import load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.instance import instance_links, on_instances
from tracegen.metrics import busiest_shard, link_utilisation, ps_cpu_utilisation, steps_per_s
from tracegen.model import StepModel
from tracegen.outputs import OutputDir
from tracegen.placement import PLACEMENTS
from tracegen.policy import check_order, parse_policy
from tracegen.preparation import prepared
from tracegen.selfreplay import step_model
from tracegen.shards import holding, placements
from tracegen.signals import held
from tracegen.simulate import simulate
from tracegen.sweepgrid import (
    SweepGrid,
    SweepInputs,
    SweepInstances,
    SweepLink,
    SweepPoint,
    SweepPolicy,
    SweepShards,
    file_sha256,
    trace_sha256,
    traced_shards,
)
from tracegen.untraced import untraced_model

PART_POINTS = 256
MIN_PART_POINTS, MAX_PART_POINTS = 1, 10**7
MAX_CHUNK_POINTS = 64
CHUNKS_PER_SLOT = 4

Row = dict[str, Any]


@runtime_checkable
class Runner(Protocol):
    """Runs chunks of points somewhere and hands back each chunk's rows as it finishes
    (:mod:`tracegen.sweeprunner`)."""

    slots: int

    def run(self, inputs: SweepInputs, chunks: Sequence[tuple[SweepPoint, ...]],
            on_rows: Callable[[list[Row]], None]) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepProgress:
    """Where a sweep is: ``done`` of the ``todo`` points this run computes; ``resumed`` were in the dataset;
    ``seconds_done`` of ``seconds_todo``: those points' runs as one core's seconds (:func:`run_seconds`), which is
    what the time a point takes grows with: points at N = 3000 take a thousand times those at N = 3 and more (a C
    core task instance costs more in a larger run), so the points alone read the time left of
    ``--workers 1-3000`` as a third of what it was."""

    done: int
    todo: int
    resumed: int
    parts_written: int
    seconds_done: float = 0.0
    seconds_todo: float = 0.0


RunnerFor = Callable[[SweepProgress], Runner]
"""The runner for the points a sweep has left, from its first progress (``done`` 0 of ``todo``, ``resumed`` found,
``seconds_todo`` of one core): called once, after the dataset is read and before any point runs."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepSummary:
    """What :func:`sweep` did: ``computed`` points now, ``resumed`` found finished, the parts it wrote."""

    n_points: int
    resumed: int
    computed: int
    parts: tuple[pathlib.Path, ...]


def run_seconds(inputs: SweepInputs) -> Callable[[int, int], float]:
    """(N, PS shards) → one core's seconds for the run of a point of the grid with them (:func:`tracegen.cost.run_s`
    of the step's busy tasks, as predict prices them: an op of no duration costs no event of its own), priced at its
    N on the engine its PS arrangement goes to (:func:`tracegen.estimate.run_engine`: not the C core on several
    shards)."""
    grid = inputs.grid
    first, steps = next(grid.points()), grid.steps + grid.warmup_steps
    engines = {s.n_shards: run_engine(grid.sim_config(dataclasses.replace(first, ps_shards=s.n_shards)))
               for s in grid.shards}
    tasks = busy_tasks(inputs.model)
    return lambda n_workers, ps_shards: run_s(tasks, n_workers, steps, engines[ps_shards])


def build_inputs(trace_path: str | os.PathLike[str], *, workers: Sequence[int],
                 bandwidths: Mapping[str, int] | None = None, link_profiles: Sequence[str] = (),
                 policies: Sequence[str] = ("tf",), seeds: Sequence[int] = (0,),
                 worker_speeds: Sequence[float] = (1.0,), steps: int = 10, warmup_steps: int = 2,
                 link_model: str = "conn", batch_size: int = 1,
                 payload_fraction: float = PAYLOAD_FRACTION, ps_shards: Sequence[int] = (),
                 placement: str = "round-robin", catalogue: Catalogue | None = None,
                 policy_option: str = "policy") -> SweepInputs:
    """Read the trace and build the grid. ``bandwidths``: label (as written) → line rate in bytes/s;
    ``link_profiles``: paths; neither: the profile beside the trace, else the link the trace shows.
    ``policies``: ``tf``, ``tictac`` or order files. ``ps_shards``: numbers of PS shards, placed by ``placement``
    (``round-robin``, ``greedy`` or a placement file); none: the PS as traced. ``catalogue``: instead of links,
    every worker type x PS type pair of it, as ``plan`` has them (:func:`catalogue_links`). ``policy_option``: what
    errors about an order file call the option (the CLI passes ``--policy``)."""
    if not MIN_PAYLOAD_FRACTION <= payload_fraction <= 1:
        raise ConfigError(f"'payload_fraction' must be from {MIN_PAYLOAD_FRACTION} to 1 (got {payload_fraction})")
    if catalogue is not None and (bandwidths or link_profiles):
        raise ConfigError("a catalogue gives each pair's PS link: leave out --bandwidth and --link-profile")
    if placement != "round-robin" and not ps_shards:
        raise ConfigError(f"'placement' {placement!r} places parameters on the shards of 'ps_shards'; give those too")
    trace = read_trace(trace_path)  # first: the reader refuses what is not a trace file (a FIFO)
    model = step_model(trace)
    sha = trace_sha256(trace_path)
    single = load_single_worker(single_worker_beside(trace_path))

    notes: list[str] = []
    links: list[SweepLink] = []

    def link(label: str, kind: str, key: str, rate: int | None = None, **given: Any) -> SweepLink:
        config = PredictConfig(workers=(1,), single_worker=single, payload_fraction=payload_fraction,
                               bandwidth_bytes_per_s=rate, **given)
        prep = prepared(model, config.on_traced_ps_tasks(model))  # tracing's cost undone on the traced PS tasks
        notes.extend(f"link {label}: {note}" for note in prep.notes)
        untraced = f":untraced{prep.speed!r}" if prep.speed != 1.0 else ""
        return SweepLink(label=label, kind=kind, key=key + untraced, bandwidth_bytes_per_s=rate,
                         spec=prep.links["mid"], untraced_speed=prep.speed)

    if catalogue is not None:
        hosts = link("traced", "trace", "", link_profile=load_profile(profile_beside(trace_path)))
        links = catalogue_links(model, catalogue, hosts, single, payload_fraction)
    links += [link(label, "bandwidth", f"bandwidth:{rate}:{payload_fraction!r}", rate)
             for label, rate in (bandwidths or {}).items()]
    profiles = list(link_profiles)
    if catalogue is None and not links and not profiles and (beside := profile_beside(trace_path)) is not None:
        profiles = [str(beside)]
    read = [(path, read_link_profile(path)) for path in profiles]  # read first: the reader refuses a FIFO
    links += [link(path, "profile", f"profile:{file_sha256(path)}", link_profile=profile) for path, profile in read]
    if not links:
        links = [link("trace", "trace", "trace")]
    pols = [SweepPolicy(label=text, policy=p, order=order) for text in policies
            for p, order in [parse_policy(text, policy_option)]]
    for pol in pols:
        if pol.order:
            check_order(model, pol.order, pol.label, policy_option)
    if ps_shards:
        ps_shards, left_out = holding(model, trace, ps_shards)
        notes.extend([left_out] if left_out is not None else [])
    shards = shard_axis(model, trace, ps_shards, placement) if ps_shards else [traced_shards(model)]
    grid = SweepGrid(workers=tuple(workers), links=tuple(links), policies=tuple(pols), shards=tuple(shards),
                     seeds=tuple(seeds),
                     worker_speeds=tuple(float(s) for s in worker_speeds), steps=steps, warmup_steps=warmup_steps,
                     link_model=link_model, batch_size=batch_size)
    return SweepInputs(model=model, trace_sha256=sha, grid=grid, notes=tuple(dict.fromkeys(notes)))


def shard_axis(model: StepModel, trace: Trace, ps_shards: Sequence[int], placement: str) -> list[SweepShards]:
    """Each number of PS shards with its placement (as ``predict --ps-shards`` places them); one that is the
    traced PS again (K = 1 of a one-PS trace) keeps the traced PS's point ids."""
    traced = traced_shards(model)
    placed = placements(model, trace, ps_shards, placement)  # first: it names a bad placement file
    how = placement if placement in PLACEMENTS else f"file:{file_sha256(placement)}"
    shards = []
    for p in placed:
        of_task = p.shard_of_task if p.n_shards > 1 else ()
        same = of_task == traced.shard_of_task  # labelled as such too: a resumed dataset's rows read the same
        shards.append(SweepShards(n_shards=p.n_shards, placement=traced.placement if same else p.how,
                                  shard_of_task=of_task, key="" if same else f"{how}:{p.n_shards}"))
    return shards


def catalogue_links(model: StepModel, catalogue: Catalogue, traced: SweepLink, single: SingleWorker | None,
                    payload_fraction: float) -> list[SweepLink]:
    """Every worker type x PS type pair of ``catalogue`` as a link of the grid: the PS type's link as ``plan``
    builds it (:func:`tracegen.instance.instance_links`, its point prediction for a rate alone), on the traced
    hosts' link ``traced`` (tracing's cost undone as it says)."""
    measured_rpc = single is not None and single.ps_cpu_s_per_step is not None
    untraced = untraced_model(model, traced.untraced_speed)
    out = []
    for worker in catalogue.workers:
        for ps in catalogue.servers:
            spec = instance_links(untraced, traced.spec, worker=worker, ps=ps, measured_rpc=measured_rpc,
                                  payload_fraction=payload_fraction)["mid"]
            what = (worker.name, worker.usd_per_hour, worker.compute_speed, worker.link_bits_per_s, ps.name,
                    ps.usd_per_hour, ps.compute_speed, ps.cores, spec, traced.untraced_speed, traced.spec.ps_quota)
            out.append(SweepLink(label=f"{worker.name}+{ps.name}", kind="instances", spec=spec,
                                 key="instances:" + hashlib.sha256(repr(what).encode()).hexdigest(),
                                 bandwidth_bytes_per_s=None, untraced_speed=traced.untraced_speed,
                                 instances=SweepInstances(worker=worker, ps=ps, traced=traced.spec)))
    return out


def point_model(inputs: SweepInputs, point: SweepPoint) -> StepModel:
    """The step model of ``point``: the traced one, tracing's cost undone as its link says
    (:mod:`tracegen.untraced`), its worker ops sped up by ``worker_speed``."""
    link = inputs.grid.link(point.link)
    model = untraced_model(inputs.model, link.untraced_speed)
    if (pair := link.instances) is not None:
        return on_instances(model, pair.traced, worker_speed=pair.worker.compute_speed * point.worker_speed,
                            ps_speed=pair.ps.compute_speed)
    if point.worker_speed == 1.0:
        return model
    # the PS stays as traced: without a quota on the link given here, on_instances leaves PS ops as they are
    traced = dataclasses.replace(link.spec, ps_quota=None)
    return on_instances(model, traced, worker_speed=point.worker_speed, ps_speed=1.0)


def run_point(inputs: SweepInputs, point: SweepPoint) -> Row:
    """Simulate ``point`` and return its row (the columns of :data:`parsers.sweepdata.COLUMNS`, in order)."""
    grid = inputs.grid
    link = grid.link(point.link)
    pair = link.instances
    try:
        model = point_model(inputs, point)
        result = simulate(model, grid.sim_config(point))
        rate = steps_per_s(result)
        use = (link_utilisation(result, "pull"), link_utilisation(result, "push"), ps_cpu_utilisation(result))
        busiest = busiest_shard(result)
    except TracegenError as exc:
        raise type(exc)(f"point n_workers={point.n_workers} link={point.link!r} ps_shards={point.ps_shards} "
                        f"policy={point.policy!r} worker_speed={point.worker_speed:g} seed={point.seed}: {exc}"
                        ) from exc
    row: Row = {
        "point_id": inputs.point_id(point), "trace_sha256": inputs.trace_sha256, "n_workers": point.n_workers,
        "link": link.label, "link_kind": link.kind, "bandwidth_bytes_per_s": link.bandwidth_bytes_per_s,
        "ps_shards": point.ps_shards, "placement": grid.shard(point.ps_shards).placement,
        "policy": point.policy, "seed": point.seed, "worker_speed": float(point.worker_speed),
        "worker_type": None if pair is None else pair.worker.name, "ps_type": None if pair is None else pair.ps.name,
        "steps": grid.steps,
        "warmup_steps": grid.warmup_steps, "link_model": grid.link_model, "batch_size": grid.batch_size,
        "steps_per_s": rate, "samples_per_s": rate * grid.batch_size, "pull_link_utilisation": use[0],
        "push_link_utilisation": use[1], "ps_cpu_utilisation": use[2],
        "bottleneck": bottleneck(result),
        "busiest_shard": busiest.shard, "busiest_shard_resource": busiest.busiest[0],
        "busiest_shard_utilisation": busiest.busiest[1],
        "usd_per_hour": None if pair is None else pair.usd_per_hour(point.n_workers, point.ps_shards),
        "n_events": result.n_events, "sim_end_ns": result.end_ns,
    }
    if list(row) != [name for name, _ in COLUMNS]:  # pragma: no cover - kept in step with the schema
        raise ConfigError(f"sweep row columns {list(row)} differ from parsers.sweepdata.COLUMNS")
    return row


def run_chunk(inputs: SweepInputs, points: Sequence[SweepPoint]) -> list[Row]:
    """The rows of ``points``, in order (what one worker process or Ray task runs)."""
    return [run_point(inputs, p) for p in points]


def chunks_of(points: Sequence[SweepPoint], slots: int) -> list[tuple[SweepPoint, ...]]:
    """``points`` cut into consecutive chunks: about :data:`CHUNKS_PER_SLOT` per slot, at most
    :data:`MAX_CHUNK_POINTS` points each (few points lost to a kill, a steady progress line)."""
    size = max(1, min(MAX_CHUNK_POINTS, math.ceil(len(points) / (max(1, slots) * CHUNKS_PER_SLOT))))
    return [tuple(points[i:i + size]) for i in range(0, len(points), size)]


def pending_points(inputs: SweepInputs, finished: Collection[str]) -> Iterator[tuple[str, SweepPoint]]:
    """The grid's points whose id is not in ``finished``, with their ids."""
    return ((i, p) for p in inputs.grid.points() if (i := inputs.point_id(p)) not in finished)


# a dataset's settings, by the option that sets them
SETTING_OPTIONS = {"trace_sha256": "trace", "steps": "--steps", "warmup_steps": "--warmup-steps",
                   "link_model": "--link", "batch_size": "--batch-size"}


def refuse_mixing(inputs: SweepInputs, dataset: Contents, todo: Sequence[SweepPoint]) -> None:
    """ConfigError where the points ``todo`` would join the rows of another sweep in ``dataset``: rows of
    another trace or at other settings (:data:`SETTING_OPTIONS`), or a row with the parameters of a point of
    ``todo`` (whose id is not in the dataset: the row was computed from inputs its columns do not show). Either
    way a reader would get two answers to one question, or one grid's points mixed with another's."""
    grid = inputs.grid
    ours: dict[str, Any] = {"trace_sha256": inputs.trace_sha256, "steps": grid.steps,
                            "warmup_steps": grid.warmup_steps, "link_model": grid.link_model,
                            "batch_size": grid.batch_size}
    keys = [{"n_workers": p.n_workers, "link": p.link, "ps_shards": p.ps_shards, "policy": p.policy,
             "placement": grid.shard(p.ps_shards).placement, "worker_speed": float(p.worker_speed), "seed": p.seed}
            for p in todo]
    found = dataset.other_row(ours, keys)
    if found is None:
        return
    part, row = found
    new = "sweep into a new directory"
    for name, option in SETTING_OPTIONS.items():
        if row[name] != ours[name] and name == "trace_sha256":
            raise ConfigError(f"{part}: rows of another trace (its files or those beside it differ: sha256 "
                              f"{row[name][:12]}..., this one's {ours[name][:12]}...; before 2026-12-06 every file "
                              f"in a trace's folder was hashed); {new}")
        if row[name] != ours[name]:
            raise ConfigError(f"{part}: rows at {option} {row[name]}, not {ours[name]}; rerun with {option} "
                              f"{row[name]}, or {new}")
    point = " ".join(f"{k}={quoted(row[k], 60)}" for k in ("n_workers", "link", "ps_shards", "policy",
                                                          "worker_speed", "seed"))
    raise ConfigError(f"{part}: holds the point {point} from other inputs (a changed profile, order, placement or "
                      f"catalogue file, --payload-fraction, or tracegen's simulator); {new}")


def points_left(inputs: SweepInputs, directory: pathlib.Path) -> list[tuple[str, SweepPoint]]:
    """The grid's points not in the dataset in ``directory`` yet, with their ids, in grid order, once they are
    found not to mix with another sweep's rows (:func:`refuse_mixing`). Each part is read once; what was read of
    them is let go on return, before any point runs."""
    dataset = read_contents(directory)
    pending = list(pending_points(inputs, dataset.point_ids))
    if dataset.point_ids and pending:
        refuse_mixing(inputs, dataset, [p for _, p in pending])
    return pending


def sweep(inputs: SweepInputs, out: str | os.PathLike[str] | OutputDir, runner: Runner | RunnerFor, *,
          part_points: int = PART_POINTS, progress: Callable[[SweepProgress], None] | None = None) -> SweepSummary:
    """Simulate the grid's points that ``out`` does not hold yet and add their rows to it (module docstring).
    ``out``: the dataset's directory, or an :class:`~tracegen.outputs.OutputDir` of it the caller has entered
    (``OutputDir(out, [])``), as the CLI does before it reads the trace: an unusable ``out`` is then refused
    before any work, and before anything is said of the grid. ``runner``: a :class:`Runner`, or a function that
    gives one for the points left (:data:`RunnerFor`), as the CLI picks local processes only for points left that
    take long enough to gain from them: a resumed grid's few points left run in this process."""
    if not MIN_PART_POINTS <= part_points <= MAX_PART_POINTS:
        raise ConfigError(f"'part_points' must be from {MIN_PART_POINTS} to 10^7 (got {part_points})")
    if isinstance(out, OutputDir):
        return _sweep(inputs, out, runner, part_points, progress)
    with OutputDir(out, []) as target:
        return _sweep(inputs, target, runner, part_points, progress)


def _sweep(inputs: SweepInputs, target: OutputDir, runner: Runner | RunnerFor, part_points: int,
           progress: Callable[[SweepProgress], None] | None) -> SweepSummary:
    report = progress or (lambda _p: None)
    pending = points_left(inputs, target.root)
    todo = [p for _, p in pending]
    resumed = inputs.grid.n_points - len(todo)
    number = next_part_number(target.root)
    position = {point_id: i for i, (point_id, _) in enumerate(pending)}
    early: dict[int, Row] = {}  # finished before a point ahead of them in the grid: not their turn yet
    buffer: list[Row] = []  # in grid order, for the next part
    parts: list[pathlib.Path] = []
    done = 0
    turn = 0  # the grid position of the next row to go into a part
    price = run_seconds(inputs)
    seconds = [price(p.n_workers, p.ps_shards) for p in todo]
    seconds_todo, seconds_done = sum(seconds), 0.0

    def flush(size: int) -> None:
        nonlocal number
        rows, number = buffer[:size], number + 1
        del buffer[:size]  # rows leave the buffer first: a part that fails to be written is never written twice
        with held():  # a stop that lands mid-write waits until the part is in place: else its rows were lost
            parts.append(write_part(target.root, number - 1, rows))

    def on_rows(rows: list[Row]) -> None:
        nonlocal done, turn, seconds_done
        for row in rows:
            early[position[row["point_id"]]] = row
            seconds_done += seconds[position[row["point_id"]]]
        done += len(rows)
        while turn in early:
            buffer.append(early.pop(turn))
            turn += 1
        while len(buffer) >= part_points:
            flush(part_points)
        if done == len(todo) and buffer:
            flush(len(buffer))
        report(SweepProgress(done=done, todo=len(todo), resumed=resumed, parts_written=len(parts),
                             seconds_done=seconds_done, seconds_todo=seconds_todo))

    start = SweepProgress(done=0, todo=len(todo), resumed=resumed, parts_written=0, seconds_todo=seconds_todo)
    run = runner if isinstance(runner, Runner) else runner(start)
    report(start)
    try:
        if todo:
            run.run(inputs, chunks_of(todo, run.slots), on_rows)
    finally:
        buffer.extend(early.pop(k) for k in sorted(early))
        if buffer:  # what finished before an error or a signal: kept, so that a rerun does not redo it
            flush(len(buffer))
    return SweepSummary(n_points=inputs.grid.n_points, resumed=resumed, computed=done, parts=tuple(parts))
