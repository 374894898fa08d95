"""Discrete-event simulation of N asynchronous workers sharing one parameter server.

``simulate(model, config) -> SimResult`` is pure: no globals, no I/O, no clock; randomness only from
``numpy.random.default_rng(config.seed)``. One :class:`~tracegen.engine.Engine` runs it; the resources are
objects: one :class:`~tracegen.engine.CpuPool` per worker (its ``worker_threads``), the PS's CPU
(:class:`~tracegen.pscpu.PsCpu`: its cores, shared by all workers' PS ops and by its handling of every transfer
request) and the PS link (:class:`~tracegen.link.FlowLink`).

What runs:
- Every worker runs ``warmup_steps + steps`` steps back to back, never waiting for another worker (async SGD).
  Worker 0 starts at 0, the others at offsets drawn uniformly from ``[0, start_spread_ns)`` (default: one
  uncontended step), so that workers are not in lock-step.
- A step is the model's task graph with the timings of one traced step, drawn per step from the model's
  complete traced steps (seeded): durations and dispatch gaps stay consistent within a step, and the traced
  variability carries into the prediction. A task becomes ready ``delay_ns`` after its last predecessor
  finished, then waits for its resource: a worker thread (``COMPUTE``, queued in trace order), a PS thread
  (``APPLY``/``PS_OP``, in arrival order), or the link (``PULL``/``PUSH``).
- A pull is requested by the worker (the request crosses the push direction: :meth:`FlowLink.request_delay`),
  handled by the PS's CPU, then moves; a push was requested by the PS when the step began, moves as soon as the
  gradient exists, and is then handled by the PS's CPU. A request waits for a free handler, but not for its own
  handling: that time is already inside the traced transfer, whose duration sets the per-connection rate
  (:class:`~tracegen.model.LinkEstimate`); the handling still spends the PS's CPU, so under load requests queue
  for it and the PS's CPU bounds the rate. The pulls a worker requests at step start take the traced step's
  request moments in the policy's order, and transfers requested at the same nanosecond queue in their
  connection in that order (:mod:`tracegen.policy`).
- The step ends when all its tasks are done; the next starts ``step_gap_ns`` later (and the model's own
  ``step_gap_ns``: a TF2 coordinator's dispatch of the next call), plus the pull direction's
  queue delay if it is busy (the PS's reply that the step is over crosses it). With several PS shards, every
  shard that ran part of the step replies over its own link (TF1's master waits for each partition's
  ``RunGraph``), and the last reply ends the step.

- Staleness (:mod:`tracegen.variables`): the PS counts the updates applied to each parameter; a worker's first
  pull of a parameter in a step remembers the count, and when that step's gradient for it is applied the
  difference is its staleness (updates by other workers in between). Measured steps only, in apply order.
- PS shards: ``ps_shard_of_task`` (:mod:`tracegen.placement`) names the shard of every task; each shard is a
  PS like the traced one, with its own link (the same spec) and its own CPU. A step ends with the chief's (shard
  0's) reply.
- Uneven workers: ``worker_speed`` gives each worker a speed factor (its ops and the dispatch gaps before them
  take traced time / speed, as :func:`tracegen.model.scaled_timing` says for any faster CPU); workers
  beyond the tuple's length run at 1. ``worker_link_bytes_per_s`` gives workers a link of their own: each of
  their transfers moves at most at that rate (:class:`~tracegen.link.FlowLink`). Then every worker keeps
  training until the slowest has run its steps, as in a real job (with equal steps each, the fast ones would
  stop early and leave no common window).

Metrics are functions of the result, in :mod:`tracegen.metrics`.
"""

from __future__ import annotations

import array
import dataclasses
import gc
from collections.abc import Callable
from typing import Final

import numpy as np
from librt.vecs import vec
from mypy_extensions import i64, mypyc_attr

from tracegen import fastcore
from tracegen.engine import ARRIVE, START, Client, CpuPool, Engine, Handler
from tracegen.errors import ConfigError
from tracegen.link import PULL, PUSH, FlowLink, LinkSpec, link_model, uniform_link
from tracegen.model import PS_KINDS, TRANSFER_KINDS, StepModel, TaskKind, scaled_timing
from tracegen.policy import FixedOrder, Policy, TfOrder, TicTac, check_order, issued_in_order
from tracegen.pscpu import PsCpu
from tracegen.variables import variable_map

MAX_WORKERS: Final = 100_000
MAX_STEPS: Final = 1_000_000
MAX_TASK_INSTANCES: Final = 2_000_000_000  # workers x steps x tasks: far beyond any useful run, far below int64


@mypyc_attr(native_class=False)  # a plain class when compiled: pickles as one
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimConfig:
    """How to simulate. ``None`` means "from the model" (the trace's estimate or observation)."""

    n_workers: int = 1
    steps: int = 10
    warmup_steps: int = 2
    seed: int = 0
    link_spec: LinkSpec | None = None
    link: str = "conn"
    policy: str = "tf"
    order: tuple[str, ...] = ()
    ps_threads: int | None = None
    worker_threads: int | None = None
    start_spread_ns: int | None = None
    step_gap_ns: int = 0
    record_tasks: bool = False
    worker_speed: tuple[float, ...] = ()
    ps_shard_of_task: tuple[int, ...] = ()  # several PS shards (tracegen.placement): the shard of every task
    worker_link_bytes_per_s: tuple[float, ...] = ()  # per worker, its own link's rate (0: none of its own)

    def __post_init__(self) -> None:
        limits = {"n_workers": (1, MAX_WORKERS), "steps": (1, MAX_STEPS), "warmup_steps": (0, MAX_STEPS),
                  "seed": (0, 2**63 - 1), "ps_threads": (1, 4096), "worker_threads": (1, 4096),
                  "start_spread_ns": (0, 10**15), "step_gap_ns": (0, 10**15)}
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not low <= value <= high):
                raise ConfigError(f"{name!r} must be an integer from {low} to {high} (got {value!r})")
        link_model(self.link)
        if any(not (isinstance(s, int) and 0 <= s < 64) for s in self.ps_shard_of_task):
            raise ConfigError("'ps_shard_of_task' must hold shard numbers from 0 to 63")
        if any(not (isinstance(f, int | float) and 1e-3 <= f <= 1e3) for f in self.worker_speed):
            raise ConfigError(f"'worker_speed' factors must be numbers from 0.001 to 1000 (got {self.worker_speed!r})")
        if any(not (isinstance(r, int | float) and (r == 0 or 1 <= r <= 1e15)) for r in self.worker_link_bytes_per_s):
            raise ConfigError("'worker_link_bytes_per_s' rates must be 0 (none) or from 1 to 1e15 bytes/s (got "
                              f"{self.worker_link_bytes_per_s!r})")
        if self.policy not in ("tf", "tictac", "fixed"):
            raise ConfigError(f"'policy' must be tf, tictac or fixed (got {self.policy!r})")
        if self.policy == "fixed" and not self.order:
            raise ConfigError("'policy' fixed needs a non-empty 'order' of tensor names")

    @property
    def total_steps(self) -> int:
        """Steps each worker runs: warm-up and measured."""
        return self.warmup_steps + self.steps

    @property
    def uneven(self) -> bool:
        """Whether workers differ (speeds or links of their own): then every worker trains until the slowest has
        run its steps, and some run more than ``total_steps``."""
        return bool(self.worker_speed or self.worker_link_bytes_per_s)


@mypyc_attr(native_class=False)  # a plain class when compiled: pickles as one
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One task instance as it ran: ``slot`` is the CPU thread (-1 for transfers)."""

    worker: int
    step: int
    task: int
    ready_ns: int
    start_ns: int
    end_ns: int
    slot: int
    staleness: int = -1  # for a parameter's apply: updates to it by others since this worker read it


@mypyc_attr(native_class=False)  # a plain class when compiled: pickles as one
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimResult:
    """What a run produced."""

    config: SimConfig
    link_spec: LinkSpec
    ps_threads: int
    ps_cores: float
    worker_threads: int
    step_start_ns: tuple[tuple[int, ...], ...]  # [worker][step], warm-up steps included
    step_end_ns: tuple[tuple[int, ...], ...]
    end_ns: int
    n_events: int
    # at every step end, in time order: (time_ns, pull bytes moved, push bytes moved, PS busy core-ns)
    snapshots: tuple[tuple[int, float, float, float], ...] = ()
    tasks: tuple[TaskRecord, ...] = ()
    # every parameter update of a measured step, in apply order: (read_ns, apply_ns, staleness) as native int64
    # triples, packed (a 64-worker run has hundreds of thousands; :meth:`staleness_updates` reads them)
    staleness: bytes = b""
    n_shards: int = 1
    # with several shards, at every step end (as snapshots): per shard (pull bytes, push bytes, PS busy core-ns)
    shard_snapshots: tuple[tuple[tuple[float, float, float], ...], ...] = ()

    def staleness_updates(self) -> np.ndarray:
        """``staleness`` as an int64 array, one row per update: read_ns, apply_ns, staleness."""
        return np.frombuffer(self.staleness, dtype=np.int64).reshape(-1, 3)


def resolve_policy(model: StepModel, config: SimConfig) -> Policy:
    """The policy object a config names."""
    if config.policy == "tf":
        return TfOrder()
    if config.policy == "tictac":
        return TicTac()
    check_order(model, config.order)
    return FixedOrder(config.order)


def resolve_link(model: StepModel, config: SimConfig) -> LinkSpec:
    """The config's link, or the one the trace shows (its estimate, the same at any number of connections)."""
    if config.link_spec is not None:
        return config.link_spec
    est = model.link
    rates = (est.pull_bandwidth_bytes_per_s, est.push_bandwidth_bytes_per_s)
    return uniform_link(rates, latency_ns=est.latency_ns, description=f"estimated from the trace ({est.method})")


def start_offsets(rng: np.random.Generator, n_workers: int, spread_ns: int) -> list[int]:
    """When each worker starts its first step: the first at 0, the others drawn from ``[0, spread_ns)``, the run's
    first draws from its generator ``rng``."""
    return [0] + [int(x) for x in rng.integers(0, max(1, spread_ns), size=n_workers - 1)]


def critical_path_ns(model: StepModel, link: LinkSpec, variant: int = 0) -> int:
    """Length of one step of ``variant`` with no contention (every transfer alone on the link, free CPUs)."""
    timing = model.timings[variant]
    finish = [0] * model.n_tasks
    for t in model.topo_order():
        ready = max((finish[p] for p in model.preds(t)), default=0) + timing.delay_ns[t]
        kind = model.kinds[t]
        if kind in (TaskKind.PULL, TaskKind.PUSH):
            d = PULL if kind == TaskKind.PULL else PUSH
            rate = min(link.connection_bytes_per_s[d], link.capacity(d, 1, False))
            finish[t] = ready + link.latency_ns + round(model.size_bytes[t] * 1e9 / rate)
        else:
            finish[t] = ready + timing.dur_ns[t]
    return max(finish)


# where a task runs: a worker's CPU, the PS's CPU, the link's directions
_WORKER: Final = 0
_PS: Final = 1
_PULL: Final = 2
_PUSH: Final = 3
_WHERE = {TaskKind.COMPUTE: _WORKER, TaskKind.APPLY: _PS, TaskKind.PS_OP: _PS, TaskKind.PULL: _PULL,
          TaskKind.PUSH: _PUSH}

# what an event or a resource's call tells the run, in the low bits of its integer (the rest: worker and task)
_KIND_BITS: Final = 3
_KIND_MASK: Final = 7
_STEP: Final = 0  # a worker's step starts (the rest: the worker)
_READY: Final = 1  # a task is ready: it finishes at once or waits for its resource
_PULL_REQUESTED: Final = 2  # a pull's request has reached the PS
_PUSH_REQUESTED: Final = 3  # a push's data may move
_PULL_HANDLED: Final = 4  # the PS's CPU has taken a pull's request: the tensor moves
_PUSH_HANDLED: Final = 5  # the PS's CPU has taken a push it received: the push is done
_DONE: Final = 0  # a task's work is done (CPU, or a pull that arrived)
_PUSHED: Final = 1  # a push's data has arrived


class _Worker:
    """One worker: its CPU, its step in progress (what each task still waits for, the step's timings, its transfer
    order, the parameter versions it read) and its steps' start and end times. One object, so that a task's
    handling reads one worker's state from one place (compiled: native attributes, not a list per field). Its
    integer arrays, like the run's per-task tables, are ``vec[i64]`` (librt, mypyc's runtime): compiled, each a C
    array of int64, so a read touches no int object; a list holds a pointer to one per item, and among a thousand
    workers those reads missed the cache (the 1000-worker point 10 % faster, docs/model.md, "The compiled engine")."""

    __slots__ = ("cpu", "delay", "done_count", "dur", "ends", "index", "prio", "read_ns", "read_version",
                 "ready_at", "remaining", "starts", "step", "timings")

    def __init__(self, index: int, cpu: CpuPool, timings: tuple[tuple[vec[i64], vec[i64]], ...], n_tasks: int,
                 n_variables: int, record: bool) -> None:
        self.index = index
        self.cpu = cpu
        self.timings = timings  # (durations, delays) per traced step (variant), at this worker's speed
        self.remaining: vec[i64] = vec[i64]()  # per task, the predecessors it still waits for
        self.done_count = 0  # tasks of the step done
        self.step = 0  # steps begun before this one
        self.dur: vec[i64] = vec[i64]()  # the durations and delays of the step's tasks
        self.delay: vec[i64] = vec[i64]()
        self.prio: vec[i64] = vec[i64]()  # the step's transfer order (policy): per transfer, in task order
        self.ready_at = [0] * n_tasks if record else []
        # per parameter, the version its first pull read (-1: none yet), and when
        self.read_version = vec[i64]([-1] * n_variables)
        self.read_ns = vec[i64]([0] * n_variables)
        self.starts: list[int] = []
        self.ends: list[int] = []


class _Run(Handler, Client):
    """The state of one simulation: workers' steps in progress, the resources, what was recorded. It is the
    handler of its own events and the client of its resources: the integer they carry is ``(worker * n_tasks +
    task) << 3 | what`` (a step's start: ``worker << 3``)."""

    def __init__(self, model: StepModel, config: SimConfig,  # noqa: PLR0915 - the run's state, declared in one place
                 on_task: Callable[[TaskRecord], None] | None) -> None:  # (where mypyc and a reader look for it)
        n_tasks = model.n_tasks
        if config.n_workers * config.total_steps * n_tasks > MAX_TASK_INSTANCES:
            raise ConfigError(f"{config.n_workers} workers x {config.total_steps} steps x {n_tasks} tasks is more "
                              f"than the {MAX_TASK_INSTANCES} task instances one simulation may run")
        self.model, self.config, self.on_task = model, config, on_task
        self.rng = np.random.default_rng(config.seed)
        self.policy = resolve_policy(model, config)
        # the transfers, and each task's place among them (-1: not a transfer): only their priorities are read
        self.transfers = np.array([t for t in range(n_tasks) if model.kinds[t] in TRANSFER_KINDS], dtype=np.intp)
        transfer_of = [-1] * n_tasks
        for i, t in enumerate(self.transfers.tolist()):
            transfer_of[t] = i
        self.transfer_of = vec[i64](transfer_of)
        # an order that draws nothing is the same every step: computed once
        every = None if self.policy.random else list(self.policy.priorities(model, self.rng))
        self.fixed_prio = None if every is None else vec[i64]([every[t] for t in self.transfers.tolist()])
        self.engine = Engine()
        self.link_spec = resolve_link(model, config)
        if config.ps_shard_of_task and len(config.ps_shard_of_task) != n_tasks:
            raise ConfigError(f"'ps_shard_of_task' names {len(config.ps_shard_of_task)} tasks, the model has {n_tasks}")
        self.shard = vec[i64](list(config.ps_shard_of_task) or [0] * n_tasks)
        self.n_shards = max(self.shard) + 1
        self.links = [FlowLink(self.engine, self.link_spec, link_model(config.link), config.worker_link_bytes_per_s)
                      for _ in range(self.n_shards)]
        self.link = self.links[0]  # the chief PS's
        # the PS shards that run part of a step: each one's "done" ends it (the chief's always)
        self.step_links = [self.links[k] for k in sorted({0, *(self.shard[t] for t in range(n_tasks)
                                                                 if model.kinds[t] in PS_KINDS | TRANSFER_KINDS)})]
        self.ps_threads = config.ps_threads or model.ps_threads
        self.worker_threads = config.worker_threads or model.worker_threads
        spec = self.link_spec
        self.ps_cores = spec.ps_cores if spec.ps_cores is not None else float(self.ps_threads)
        self.pss = [PsCpu(self.engine, cores=self.ps_cores, threads=self.ps_threads, quota=spec.ps_quota)
                    for _ in range(self.n_shards)]
        self.shard_snapshots: list[tuple[tuple[float, float, float], ...]] = []
        self.rpc_cpu_ns = tuple(round(c) for c in spec.rpc_cpu_ns)
        # per worker, its timings: PS ops as CPU work (a quota undone), its ops and their gaps at its speed;
        # one table per distinct speed, computed once
        # an order of its own (not tf's traced one) also decides which pull takes which traced request moment
        base = model.timings if every is None else issued_in_order(model, every)
        tables: dict[float, tuple[tuple[vec[i64], vec[i64]], ...]] = {}
        variables = variable_map(model)
        self.var_of = vec[i64](variables.of_task)
        self.version = vec[i64]([0] * variables.n_variables)  # updates applied to each parameter so far
        self.none_read = vec[i64]([-1] * variables.n_variables)  # a step's read versions before its first pull
        self.record = config.record_tasks or on_task is not None
        self.workers: list[_Worker] = []
        for w in range(config.n_workers):
            speed = float(config.worker_speed[w]) if w < len(config.worker_speed) else 1.0
            if speed not in tables:
                tables[speed] = tuple((vec[i64](s.dur_ns), vec[i64](s.delay_ns)) for s in (
                    scaled_timing(t, model.kinds, worker_speed=speed, ps_work=spec.ps_work_ns) for t in base))
            self.workers.append(_Worker(w, CpuPool(self.engine, self.worker_threads), tables[speed], n_tasks,
                                        variables.n_variables, self.record))
        self.staleness = array.array("q")  # (read_ns, apply_ns, staleness) triples, as SimResult packs them
        self.n_finished = 0  # workers that have run all their steps
        self.n_tasks = n_tasks
        self.rank = vec[i64](model.rank)
        self.size_bytes = vec[i64](model.size_bytes)
        # per task: where it runs, and the parameter an apply updates (-1: not an apply of one)
        self.where = vec[i64]([_WHERE[TaskKind(k)] for k in model.kinds])
        self.apply_var = vec[i64]([v if model.kinds[t] == TaskKind.APPLY else -1 for t, v in enumerate(self.var_of)])
        succ: list[list[int]] = [[] for _ in range(n_tasks)]
        indeg = [0] * n_tasks
        for t in range(n_tasks):
            for p in model.preds(t):
                succ[p].append(t)
                indeg[t] += 1
        self.indeg = vec[i64](indeg)
        for successors in succ:  # made ready together, they are requested in rank order
            successors.sort(key=lambda s: (model.rank[s], s))
        # each task's successors, one after another: task t's at succ_at[t] .. succ_at[t + 1] - 1
        self.succ = vec[i64]([s for successors in succ for s in successors])
        self.succ_at = vec[i64]([0] * (n_tasks + 1))
        for t in range(n_tasks):
            self.succ_at[t + 1] = self.succ_at[t] + len(succ[t])
        self.roots = [t for t in range(n_tasks) if self.indeg[t] == 0]
        self.records: list[TaskRecord] = []
        self.snapshots: list[tuple[int, float, float, float]] = []
        self.ps_seq = 0
        self.push_start: dict[int, int] = {}  # pushes that arrived and wait for the PS's CPU: when each began
        # what every step reads of the config and the model (compiled, attributes of this object are read directly)
        self.warmup_steps, self.total_steps, self.uneven = config.warmup_steps, config.total_steps, config.uneven
        self.gap_ns = config.step_gap_ns + model.step_gap_ns
        self.n_variants = len(model.timings)

    def run(self) -> SimResult:
        config = self.config
        spread = config.start_spread_ns
        if spread is None:
            spread = critical_path_ns(self.model, self.link_spec)
        for w, offset in enumerate(start_offsets(self.rng, config.n_workers, spread)):
            self.engine.at(offset, START, self, w << _KIND_BITS | _STEP)
        self.engine.run()
        return SimResult(
            config=config, link_spec=self.link_spec, ps_threads=self.ps_threads, ps_cores=self.ps_cores,
            worker_threads=self.worker_threads,
            step_start_ns=tuple(tuple(wk.starts) for wk in self.workers),
            step_end_ns=tuple(tuple(wk.ends) for wk in self.workers),
            end_ns=self.engine.now, n_events=self.engine.n_events, snapshots=tuple(self.snapshots),
            tasks=tuple(self.records), staleness=self.staleness.tobytes(), n_shards=self.n_shards,
            shard_snapshots=tuple(self.shard_snapshots))

    def fire(self, argument: int) -> None:
        """One of the run's events (class docstring)."""
        what = argument & _KIND_MASK
        if what == _STEP:
            self.start_step(self.workers[argument >> _KIND_BITS])
            return
        token = argument >> _KIND_BITS
        w = token // self.n_tasks
        t = token - w * self.n_tasks
        wk = self.workers[w]
        if what == _READY:
            self.ready(wk, t, self.engine.now)
        elif what == _PULL_REQUESTED:
            self._pull_requested(wk, t)
        elif what == _PUSH_REQUESTED:
            self._push_requested(wk, t)
        elif what == _PULL_HANDLED:
            self._send_pull(wk, t)
        else:
            start = self.push_start[token]
            del self.push_start[token]  # (not pop: compiled, these are dict operations, pop a method call)
            self.finish(wk, t, start, -1)

    def done(self, token: int, start_ns: int, slot: int) -> None:
        """A resource has done a task's work (class docstring)."""
        task = token >> _KIND_BITS
        w = task // self.n_tasks
        t = task - w * self.n_tasks
        if token & _KIND_MASK == _PUSHED:
            self._pushed(self.workers[w], t, start_ns)
        else:
            self.finish(self.workers[w], t, start_ns, slot)

    def _token(self, w: int, t: int, what: int) -> int:
        return (w * self.n_tasks + t) << _KIND_BITS | what

    def start_step(self, wk: _Worker) -> None:
        now = self.engine.now
        wk.remaining = self.indeg[:]
        wk.done_count = 0
        wk.starts.append(now)
        n_variants = self.n_variants
        variant = int(self.rng.integers(n_variants)) if n_variants > 1 else 0
        fixed = self.fixed_prio
        wk.prio = fixed if fixed is not None else vec[i64](self.policy.priorities_of(self.model, self.rng,
                                                                                 self.transfers))
        wk.read_version = self.none_read[:]
        wk.dur, delay = wk.timings[variant]
        wk.delay = delay
        for t in self.roots:
            self.ready(wk, t, now + delay[t])

    def ready(self, wk: _Worker, t: int, at: int) -> None:
        if at > self.engine.now:
            self.engine.at(at, ARRIVE, self, self._token(wk.index, t, _READY))
        elif self._instant(wk, t):
            self.finish(wk, t, self.engine.now, -1)
        else:
            self.dispatch(wk, t)

    def _instant(self, wk: _Worker, t: int) -> bool:
        """Whether ``t`` is CPU work of no duration that its idle CPU finishes the moment it is ready (graph
        nodes that did not run, most of them)."""
        where = self.where[t]
        if where >= _PULL or wk.dur[t]:
            return False
        if self.record:
            wk.ready_at[t] = self.engine.now
        if where == _PS:  # (two statements, not one expression of either type: compiled, each call is direct)
            return self.pss[self.shard[t]].idle()
        return wk.cpu.idle()

    def dispatch(self, wk: _Worker, t: int) -> None:
        now = self.engine.now
        if self.record:
            wk.ready_at[t] = now
        where = self.where[t]
        w = wk.index
        if where == _WORKER:
            wk.cpu.request(self.rank[t], wk.dur[t], self, self._token(w, t, _DONE))
        elif where == _PS:
            self.ps_seq += 1
            self.pss[self.shard[t]].request(self.ps_seq, wk.dur[t], self, self._token(w, t, _DONE))
        elif where == _PULL:  # the worker's request crosses the push direction
            v = self.var_of[t]
            if v >= 0 and wk.read_version[v] < 0:  # the PS has read the parameter: remember its version
                wk.read_version[v] = self.version[v]
                wk.read_ns[v] = now
            self.engine.at(now + self.links[self.shard[t]].request_delay(PUSH), ARRIVE, self,
                           self._token(w, t, _PULL_REQUESTED))
        else:  # a push: the PS asked for it when the step began, no request to wait for
            self.engine.at(now + self.links[self.shard[t]].request_delay(None), ARRIVE, self,
                           self._token(w, t, _PUSH_REQUESTED))

    def _pull_requested(self, wk: _Worker, t: int) -> None:
        """The PS has the request: it handles it (CPU; nothing waits for the handling's end, the module
        docstring says why), then the tensor moves."""
        if self.rpc_cpu_ns[PULL]:
            self.pss[self.shard[t]].handle(self.rpc_cpu_ns[PULL], self._token(wk.index, t, _PULL_HANDLED),
                                           on_start=self)
        else:
            self._send_pull(wk, t)

    def _send_pull(self, wk: _Worker, t: int) -> None:
        """The tensor moves."""
        w = wk.index
        self.links[self.shard[t]].start(PULL, w, self.size_bytes[t], wk.prio[self.transfer_of[t]], self,
                                        self._token(w, t, _DONE))

    def _push_requested(self, wk: _Worker, t: int) -> None:
        """The gradient moves, then the PS handles what it received (CPU)."""
        w = wk.index
        self.links[self.shard[t]].start(PUSH, w, self.size_bytes[t], wk.prio[self.transfer_of[t]], self,
                                        self._token(w, t, _PUSHED))

    def _pushed(self, wk: _Worker, t: int, start: int) -> None:
        """The gradient has arrived: the PS handles it (CPU); the push began to move at ``start``."""
        if self.rpc_cpu_ns[PUSH]:
            token = self._token(wk.index, t, _PUSH_HANDLED)
            self.push_start[token >> _KIND_BITS] = start
            self.pss[self.shard[t]].handle(self.rpc_cpu_ns[PUSH], token, on_start=self)
        else:
            self.finish(wk, t, start, -1)

    def finish(self, wk: _Worker, t: int, start: int, slot: int) -> None:  # noqa: PLR0912 - one loop, no helper calls
        """``t`` is done: record it, make its successors ready. Successors that finish the instant they are
        ready (:meth:`_instant`) are finished here, from a work list: chains of them must not recurse."""
        engine = self.engine
        now = engine.now
        rem, succ, succ_at, applies, record = wk.remaining, self.succ, self.succ_at, self.apply_var, self.record
        delay = wk.delay
        w = wk.index
        # successors that finished the instant they were ready: they began now, on no thread (made when there is
        # one: most tasks have none, and an empty list per finished task was an allocation each)
        work: list[int] | None = None
        task, begun, thread = t, start, slot
        n_done = 0
        while True:
            stale = -1 if applies[task] < 0 else self._applied(wk, applies[task])
            if record:
                rec = TaskRecord(worker=w, step=wk.step, task=task, ready_ns=wk.ready_at[task],
                                 start_ns=begun, end_ns=now, slot=thread, staleness=stale)
                if self.config.record_tasks:
                    self.records.append(rec)
                if self.on_task is not None:
                    self.on_task(rec)
            for i in range(succ_at[task], succ_at[task + 1]):
                s = succ[i]
                left = rem[s] - 1
                rem[s] = left
                if left == 0:
                    at = now + delay[s]
                    if at > now:
                        engine.at(at, ARRIVE, self, self._token(w, s, _READY))
                    elif self._instant(wk, s):
                        if work is None:
                            work = [s]
                        else:
                            work.append(s)
                    else:
                        self.dispatch(wk, s)
            n_done += 1
            if not work:  # (None or empty)
                break
            task, begun, thread = work.pop(), now, -1
        wk.done_count += n_done
        if wk.done_count == self.n_tasks:
            self.end_step(wk)

    def _applied(self, wk: _Worker, v: int) -> int:
        """The worker's gradient for parameter ``v`` is applied: its staleness (-1 if it never read ``v``)."""
        read = wk.read_version[v]
        stale = self.version[v] - read if read >= 0 else -1
        self.version[v] += 1
        if stale >= 0 and wk.step >= self.warmup_steps:
            self.staleness.extend((wk.read_ns[v], self.engine.now, stale))
        return stale

    def end_step(self, wk: _Worker) -> None:
        now = self.engine.now
        wk.ends.append(now)
        per_shard = tuple((link.moved_bytes(PULL), link.moved_bytes(PUSH), ps.busy_ns())
                          for link, ps in zip(self.links, self.pss, strict=True))
        self.snapshots.append((now, sum(p[0] for p in per_shard), sum(p[1] for p in per_shard),
                               sum(p[2] for p in per_shard)))
        if self.n_shards > 1:
            self.shard_snapshots.append(per_shard)
        wk.step += 1
        if wk.step == self.total_steps:
            self.n_finished += 1
        if wk.step < self.total_steps or (self.uneven and self.n_finished < len(self.workers)):
            # every PS's "done" crosses its link's pull direction first; the last to arrive ends the step
            done = max(link.crossing_delay(PULL) for link in self.step_links)
            self.engine.at(now + self.gap_ns + done, START, self, wk.index << _KIND_BITS | _STEP)


def simulate(model: StepModel, config: SimConfig, *, on_task: Callable[[TaskRecord], None] | None = None,
             core: bool = True) -> SimResult:
    """Simulate ``config.n_workers`` workers running ``config.total_steps`` steps each (module docstring).

    ``on_task``, when given, is called with every finished task (in completion order) so that callers can
    stream them; ``config.record_tasks`` keeps them in the result instead. The cycle collector is off while the
    run lasts (a run makes no reference cycles, ``tests/tracegen/test_native.py``), ``on_task`` included.
    The runs it can take go to the C core (:mod:`tracegen.fastcore`), with the same result; ``core=False`` keeps
    every run on this module's own event loop, the reference.
    """
    collecting = gc.isenabled()
    gc.disable()  # a run allocates millions of short-lived tuples and makes no garbage cycles worth collecting
    try:
        if core and on_task is None:
            fast = fastcore.simulate(model, config)
            if fast is not None:  # the same run in C
                settings, (starts, ends, end_ns, n_events, snapshots, staleness) = fast
                return SimResult(config=config, link_spec=settings.link_spec, ps_threads=settings.ps_threads,
                                 ps_cores=settings.ps_cores, worker_threads=settings.worker_threads,
                                 step_start_ns=starts, step_end_ns=ends, end_ns=end_ns, n_events=n_events,
                                 snapshots=snapshots, staleness=staleness)
        return _Run(model, config, on_task).run()
    finally:
        if collecting:
            gc.enable()
