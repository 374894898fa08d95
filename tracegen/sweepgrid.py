"""The grid of a sweep: its axes, its points, and the stable id of each point.

A grid is the product of its axes — worker counts, links (or a catalogue's worker type x PS type pairs, each pair's
PS link and instance speeds as ``plan`` has them), PS shards, transfer-order policies, worker compute speeds
(relative to the worker type, or to the traced worker) and seeds — at fixed simulation settings (steps, warm-up
steps, link model, batch size). Each point is one :func:`tracegen.simulate.simulate` run (:mod:`tracegen.sweep`).

A point's id (:meth:`SweepInputs.point_id`) is the sha256 of its parameters, of what each of them stands for
(a link's rate or the bytes of its profile file, an order file's tensor names) and of the trace's content
(:func:`trace_sha256`: the files the trace is read from and those beside it that change a prediction). The same command
on the same files gives the same ids, so a resumed sweep recognises the points it finished. The id covers the
simulator too, by :data:`MODEL_VERSION`: a tracegen whose simulation gives other results for the same inputs
does not take an older model's rows for its own (resuming into their dataset is refused:
:func:`tracegen.sweep.refuse_mixing`).

PS shards are an axis too (:class:`SweepShards`): by default the PS as traced (one task, or each parameter on
the PS task it ran on); with ``--ps-shards`` each K places the parameters on K shards by the sweep's placement
(:func:`tracegen.placement.place`), each shard a PS like the traced one with its own link. The arrangement enters
a point's id only when it is not the traced one, so the ids of datasets written before shards were an axis
stay valid.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import pathlib
import stat
from collections.abc import Iterator

from parsers.catalogue import Instance
from parsers.errors import TraceFormatError
from parsers.read import BESIDE, beside_dir, trace_inputs
from tracegen.config import MAX_BATCH_SIZE
from tracegen.errors import ConfigError
from tracegen.link import LinkSpec
from tracegen.model import StepModel
from tracegen.simulate import SimConfig

ID_FORMAT = 2  # bump when what a point id covers changes (2: every file under a trace directory, by its path)
# bump with every change that gives other simulation results for the same inputs (2: 2026-12-04, a policy orders
# the step-start requests, and the first transfer of a batch follows it; 3: 2026-12-05, a link direction is the
# bottleneck at 80 % of what it carries while the other is busy too, not of its peak; 4: 2026-12-07, on several
# shards the bottleneck is named from the shard busiest on that measure, not from the busiest against the peaks)
MODEL_VERSION = 4
MAX_POINTS = 10_000_000
MIN_WORKER_SPEED = 0.001  # as a worker class's speed (parsers.workerclasses): 1e-300 overflowed a duration
MAX_WORKER_SPEED = 1000.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepInstances:
    """The catalogue instances at a link's ends (:mod:`tracegen.instance`, as ``plan`` moves a step onto them):
    the worker type, the PS type, and the traced hosts' link (its CPU quota turns the traced PS ops into the CPU
    work a PS type's cores then do at its speed)."""

    worker: Instance
    ps: Instance
    traced: LinkSpec

    def usd_per_hour(self, n_workers: int, n_ps: int) -> float:
        """What ``n_workers`` workers and ``n_ps`` PS of these types cost per hour."""
        return n_workers * self.worker.usd_per_hour + n_ps * self.ps.usd_per_hour


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepLink:
    """One link of the grid. ``label``: as the user named it (a rate as written, a profile's path, ``trace``, or a
    catalogue pair ``WORKER+PS``); ``kind``: ``bandwidth`` | ``profile`` | ``trace`` | ``instances``; ``key``:
    what its simulation depends on, for the id; ``instances``: the catalogue pair, for kind ``instances``."""

    label: str
    kind: str
    key: str
    bandwidth_bytes_per_s: int | None
    spec: LinkSpec
    untraced_speed: float = 1.0  # tracing's cost undone on this link (tracegen.untraced); spec already has it
    instances: SweepInstances | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepPolicy:
    """One transfer-order policy of the grid: ``label`` as given (``tf``, ``tictac`` or an order file's path),
    ``policy`` and ``order`` as :class:`~tracegen.simulate.SimConfig` takes them."""

    label: str
    policy: str
    order: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """What the policy's simulation depends on: its name, and for an order file the tensor names."""
        if self.policy != "fixed":
            return self.policy
        return "fixed:" + hashlib.sha256("\n".join(self.order).encode()).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepShards:
    """One PS arrangement of the grid: ``n_shards`` PS tasks (its label on the axis), ``placement`` as the rows
    name it (``as traced``, ``round-robin``, ``greedy``, ``file PATH``), the shard of every task
    (:class:`~tracegen.simulate.SimConfig`'s ``ps_shard_of_task``; empty for one PS) and ``key``, what the
    arrangement adds to a point's id (empty for the traced one)."""

    n_shards: int
    placement: str
    shard_of_task: tuple[int, ...]
    key: str = ""


def traced_shards(model: StepModel) -> SweepShards:
    """The PS as the trace shows it: one task, or each parameter on the PS task it ran on."""
    n = max(model.traced_ps_task) + 1 if model.traced_ps_task else 1
    return SweepShards(n_shards=n, placement="as traced", shard_of_task=model.traced_ps_task)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint:
    """One grid point: one simulation. ``link`` and ``policy`` are labels of the grid's links and policies."""

    n_workers: int
    link: str
    policy: str
    worker_speed: float
    seed: int
    ps_shards: int = 1


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepGrid:
    """The axes and the fixed settings of a sweep (module docstring)."""

    workers: tuple[int, ...]
    links: tuple[SweepLink, ...]
    policies: tuple[SweepPolicy, ...]
    shards: tuple[SweepShards, ...] = (SweepShards(n_shards=1, placement="as traced", shard_of_task=()),)
    seeds: tuple[int, ...] = (0,)
    worker_speeds: tuple[float, ...] = (1.0,)
    steps: int = 10
    warmup_steps: int = 2
    link_model: str = "conn"
    batch_size: int = 1

    def __post_init__(self) -> None:
        self._check_axes()
        bad = [s for s in self.worker_speeds if not (math.isfinite(s) and MIN_WORKER_SPEED <= s <= MAX_WORKER_SPEED)]
        if bad:
            raise ConfigError(f"'worker_speed' must be from {MIN_WORKER_SPEED:g} to {MAX_WORKER_SPEED:g} "
                              f"(got {bad[0]!r})")
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(f"'batch_size' must be from 1 to 10^9 (got {self.batch_size})")
        if self.warmup_steps < 1:  # each point's utilisations and bottleneck are measured from a warm-up's end
            raise ConfigError(f"'warmup_steps' must be at least 1 (got {self.warmup_steps})")
        if self.n_points > MAX_POINTS:
            raise ConfigError(f"the grid has {self.n_points} points, more than the {MAX_POINTS} allowed; "
                              "split it into several sweeps")
        for n in (min(self.workers), max(self.workers)):  # checks the counts, steps, seeds, link model, policies
            for seed in (min(self.seeds), max(self.seeds)):
                for p in self.policies:
                    self.sim_config(SweepPoint(n_workers=n, link=self.links[0].label, policy=p.label,
                                               worker_speed=1.0, seed=seed, ps_shards=self.shards[0].n_shards))

    def _check_axes(self) -> None:
        """Every axis has values, each value once, and no two links or policies simulate the same thing."""
        for name in ("workers", "links", "shards", "policies", "seeds", "worker_speeds"):
            if not getattr(self, name):
                raise ConfigError(f"{name!r}: the grid needs at least one value (got none)")
        for name, items in (("links", self.links), ("policies", self.policies)):
            labels = [item.label for item in items]
            if len(set(labels)) != len(labels):
                raise ConfigError(f"{name!r}: each must be named once (got {labels!r})")
            seen: dict[str, str] = {}
            for item in items:
                if item.key in seen:
                    raise ConfigError(f"{name!r}: {seen[item.key]!r} and {item.label!r} are the same; give it once")
                seen[item.key] = item.label
        for name, values in (("workers", self.workers), ("seeds", self.seeds), ("worker_speeds", self.worker_speeds),
                             ("ps_shards", tuple(s.n_shards for s in self.shards))):
            if len(set(values)) != len(values):
                raise ConfigError(f"{name!r}: each value must be given once (got {values!r})")

    @property
    def n_points(self) -> int:
        """How many points the grid has."""
        return (len(self.workers) * len(self.links) * len(self.shards) * len(self.policies)
                * len(self.worker_speeds) * len(self.seeds))

    def link(self, label: str) -> SweepLink:
        """The link labelled ``label``."""
        return next(x for x in self.links if x.label == label)

    def shard(self, n_shards: int) -> SweepShards:
        """The PS arrangement of ``n_shards`` shards."""
        return next(s for s in self.shards if s.n_shards == n_shards)

    def policy(self, label: str) -> SweepPolicy:
        """The policy labelled ``label``."""
        return next(p for p in self.policies if p.label == label)

    def points(self) -> Iterator[SweepPoint]:
        """Every point, N outermost (neighbouring points cost about the same to simulate)."""
        for n, link, ps, pol, speed, seed in itertools.product(self.workers, self.links, self.shards, self.policies,
                                                               self.worker_speeds, self.seeds):
            yield SweepPoint(n_workers=n, link=link.label, policy=pol.label, worker_speed=speed, seed=seed,
                             ps_shards=ps.n_shards)

    def sim_config(self, point: SweepPoint) -> SimConfig:
        """The simulation of ``point``."""
        pol = self.policy(point.policy)
        return SimConfig(n_workers=point.n_workers, steps=self.steps, warmup_steps=self.warmup_steps,
                         seed=point.seed, link_spec=self.link(point.link).spec, link=self.link_model,
                         policy=pol.policy, order=pol.order, ps_shard_of_task=self.shard(point.ps_shards).shard_of_task)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SweepInputs:
    """Everything a point's simulation needs, shipped once to every worker process or Ray task."""

    model: StepModel
    trace_sha256: str
    grid: SweepGrid
    notes: tuple[str, ...] = ()  # what the inputs left unsure, per link (tracegen.preparation.Prepared.notes)

    def point_id(self, point: SweepPoint) -> str:
        """The stable id of ``point`` (module docstring)."""
        grid = self.grid
        doc = {"format": ID_FORMAT, "model": MODEL_VERSION, "trace": self.trace_sha256, "n_workers": point.n_workers,
               "link": grid.link(point.link).key, "policy": grid.policy(point.policy).key,
               "worker_speed": repr(float(point.worker_speed)), "seed": point.seed, "steps": grid.steps,
               "warmup_steps": grid.warmup_steps, "link_model": grid.link_model, "batch_size": grid.batch_size}
        if key := grid.shard(point.ps_shards).key:  # the traced PS adds nothing: older datasets' ids stay valid
            doc["ps_shards"] = key
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of a regular file's bytes (ConfigError for anything else: a FIFO would never end)."""
    try:
        mode = pathlib.Path(path).stat().st_mode
    except OSError as exc:
        raise ConfigError(f"{os.fspath(path)}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{os.fspath(path)}: not a regular file")
    digest = hashlib.sha256()
    with pathlib.Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def trace_files(trace_path: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files a trace is read from (:func:`parsers.read.trace_inputs`: a directory's steps, a TF2 logdir's
    newest profile in ``plugins/profile/RUN/``, a table directory's tables, a glob's or a file's) and
    ``link-profile.json``, ``single-worker.json`` and ``meta.json`` beside them (a TF2 profile's run directory: in
    its logdir, :func:`parsers.read.beside_dir`), sorted. Not the other files of a trace's folder: a prediction's
    ``curve.csv`` written there, or a sweep's parts, changed every point's id, and a resumed sweep computed every
    point again."""
    try:
        named = trace_inputs(trace_path)
    except TraceFormatError as exc:  # read_trace has read it by now: a folder changed meanwhile
        raise ConfigError(str(exc)) from None
    folders = {beside_dir(p) for p in named}
    beside = {f / name for f in folders for name in BESIDE if (f / name).is_file()}
    return sorted({*named, *beside})


def trace_sha256(trace_path: str | os.PathLike[str]) -> str:
    """sha256 (hex) over the names and bytes of :func:`trace_files` (ConfigError when there are none)."""
    files = trace_files(trace_path)
    if not files:
        raise ConfigError(f"trace {os.fspath(trace_path)!r}: no such file, directory or matching files")
    root = pathlib.Path(trace_path) if pathlib.Path(trace_path).is_dir() else None
    digest = hashlib.sha256()
    for p in files:
        name = p.relative_to(root).as_posix() if root is not None and p.is_relative_to(root) else p.name
        digest.update(f"{name}\0{file_sha256(p)}\0".encode())
    return digest.hexdigest()
