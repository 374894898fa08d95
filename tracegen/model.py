"""The step model: one training step of one worker as a dependency graph of timed tasks.

:func:`build_model` turns a :class:`parsers.Trace` (RunMetadata with partition graphs) into a frozen
:class:`StepModel`:

- every node of the worker's partition graph becomes a ``COMPUTE`` task (worker CPU), every node of the PS's
  partition graph a ``PS_OP`` task (PS CPU; apply ops and the global-step update are ``APPLY``), every
  rendezvous pair a ``PULL`` (PS → worker) or ``PUSH`` (worker → PS) task. ``_Send``/``_Recv`` nodes are folded
  into their transfer: the ``_Send``'s inputs become the transfer's predecessors, the ``_Recv``'s consumers its
  successors. Data and control dependencies are kept apart (``data_preds``, ``control_preds``); both order.
- Timings: one :class:`StepTiming` per *complete* traced step — a step in which every transfer of the
  partition graphs and every apply op has its record. TensorFlow's RunMetadata can lose PS-side records
  (DOMAIN.md); a step with a record missing is never replayed, and ``notes`` says which were left out. Within a
  step, a task's ``dur_ns`` and ``delay_ns`` come from that step, so that durations and gaps stay consistent with
  each other (per-task medians taken across steps add up to no real step); a task that did not run in it (a
  graph node that never executes) takes 0. The simulator draws one timing per simulated step.
- ``delay_ns`` is the gap the trace shows between a task's inputs being ready and the task starting (executor
  dispatch, RPC set-up; for a root task: its start after the step's start), never < 0.
- Transfer sizes are the median of the bytes TensorFlow reported; a transfer absent from every step takes the
  size of the variable it reads or updates (and ``notes`` says so).
- ``rank`` is the order in which tasks started (median over complete steps); a CPU with fewer free threads than
  ready tasks runs them in this order. ``first_need_ns`` of a transfer is when its first consumer started (the
  TicTac order). ``worker_threads`` / ``ps_threads``: the most ops the trace shows running at once, ≥ 1.

The link as the trace shows it (``StepModel.link``, a :class:`LinkEstimate`) comes from :mod:`tracegen.wire`.

A Chrome JSON timeline cannot be modelled: it lost tensor names, sizes and the send/recv pairing.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from parsers.errors import quoted
from parsers.trace import MAX_STEP_NS, PULL, PUSH, Trace, device_role, task_index
from parsers.traceviewer import clock_note
from tracegen.errors import ModelError
from tracegen.units import counted
from tracegen.wire import LinkEstimate, estimate_wire

SEND_OPS = frozenset({"_Send", "_HostSend"})
RECV_OPS = frozenset({"_Recv", "_HostRecv"})
APPLY_PREFIXES = ("ResourceApply", "Apply", "AssignAdd", "AssignSub", "ResourceSparseApply", "SparseApply",
                  "ResourceScatter", "ScatterSub", "ScatterAdd")  # AssignSub: TF2's plain SGD, var.assign_sub
# ops that read or update some rows of a variable: a tensor they send or take is not the variable's size
PART_OF_VARIABLE_OPS = ("ResourceGather", "Gather", "ResourceScatter", "Scatter", "ResourceSparseApply", "SparseApply")
MAX_TASK_NS = MAX_STEP_NS  # a day: no op or gap of a training step takes longer (the readers refuse a step that does)
MAX_TRANSFER_BYTES = 1 << 44  # 16 TiB: more than any tensor; keeps byte arithmetic exact in floats


class TaskKind(enum.IntEnum):
    """What a task is and which resource runs it."""

    COMPUTE = 0  # an op on the worker's CPU
    PULL = 1  # a parameter sent PS → worker (the PS link's outgoing direction)
    PUSH = 2  # a tensor sent worker → PS (the PS link's incoming direction): gradients, the learning rate
    APPLY = 3  # an update on the PS's CPU: apply ops, the global-step increment
    PS_OP = 4  # other work on the PS's CPU: variable reads and handles, constants


PS_KINDS = frozenset({TaskKind.APPLY, TaskKind.PS_OP})
TRANSFER_KINDS = frozenset({TaskKind.PULL, TaskKind.PUSH})
TIMINGS = ("steps", "representative", "median")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepTiming:
    """The timings of one traced step: per task id, its duration and dispatch gap; ``step_ns`` its length."""

    dur_ns: tuple[int, ...]
    delay_ns: tuple[int, ...]
    step_ns: int
    traced_step: int = -1


def scaled_timing(timing: StepTiming, kinds: Sequence[TaskKind], *, worker_speed: float = 1.0,
                  ps_speed: float = 1.0, ps_work: Callable[[int], int] | None = None) -> StepTiming:
    """``timing`` on other CPUs: a worker op (``COMPUTE``) and the dispatch gap before it divided by
    ``worker_speed``; a PS op's CPU work (``ps_work`` of its traced time, e.g. a quota undone) and its gap by
    ``ps_speed``; transfers and their gaps (round trips, not CPU) as traced. Speed 1 and no ``ps_work`` give
    ``timing`` itself."""
    if worker_speed == 1.0 and ps_speed == 1.0 and ps_work is None:
        return timing

    def scale(ns: int, speed: float) -> int:
        return ns if speed == 1.0 else round(ns / speed)

    work = ps_work or (lambda ns: ns)
    dur, delay = [], []
    for kind, d, g in zip(kinds, timing.dur_ns, timing.delay_ns, strict=True):
        if kind == TaskKind.COMPUTE:
            dur.append(scale(d, worker_speed))
            delay.append(scale(g, worker_speed))
        elif kind in PS_KINDS:
            dur.append(scale(work(d), ps_speed))
            delay.append(scale(g, ps_speed))
        else:
            dur.append(d)
            delay.append(g)
    return dataclasses.replace(timing, dur_ns=tuple(dur), delay_ns=tuple(delay))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepModel:
    """One worker's training step: tasks with integer ids ``0 .. n_tasks-1``, their dependencies, and one timing
    per complete traced step. Immutable; simulations keep their own state."""

    names: tuple[str, ...]
    kinds: tuple[TaskKind, ...]
    size_bytes: tuple[int, ...]
    data_preds: tuple[tuple[int, ...], ...]
    control_preds: tuple[tuple[int, ...], ...]
    rank: tuple[int, ...]
    first_need_ns: tuple[int, ...]
    timings: tuple[StepTiming, ...]
    link: LinkEstimate
    worker_threads: int = 1
    ps_threads: int = 1
    source: str = ""
    n_traced_steps: int = 1
    notes: tuple[str, ...] = ()
    # a trace of a job with several PS tasks: the PS task (0, 1, ...) of every PS op and transfer (0 for worker
    # ops), as tracegen.placement's shard_of_task; () for a one-PS job
    traced_ps_task: tuple[int, ...] = ()
    # the gap between a step's end and the next one's start that belongs to the job: a TF2 coordinator's dispatch
    # of the next function call to the worker (median over the profile's consecutive steps); 0 for TF1 traces,
    # whose steps were traced one run at a time
    step_gap_ns: int = 0

    def __post_init__(self) -> None:
        n = len(self.names)
        if n == 0:
            raise ModelError("a step model needs at least one task (got 0)")
        for field in ("kinds", "size_bytes", "data_preds", "control_preds", "rank", "first_need_ns"):
            if len(getattr(self, field)) != n:
                raise ModelError(f"StepModel.{field} has {len(getattr(self, field))} entries, expected {n}")
        if not self.timings:
            raise ModelError("a step model needs at least one step timing (got 0)")
        for i, timing in enumerate(self.timings):
            for field in ("dur_ns", "delay_ns"):
                values = getattr(timing, field)
                if len(values) != n:
                    raise ModelError(f"timing {i}: {field} has {len(values)} entries, expected {n}")
                bad = next((v for v in values if not 0 <= v <= MAX_TASK_NS), None)
                if bad is not None:
                    raise ModelError(f"timing {i}: {field} must be from 0 to {MAX_TASK_NS} ns (got {bad})")
        self._check_values(n)

    def _check_values(self, n: int) -> None:
        """The figures beyond the tables' lengths: PS tasks, sizes, predecessors, threads, rates, no cycle."""
        if self.traced_ps_task and (len(self.traced_ps_task) != n or min(self.traced_ps_task) < 0):
            raise ModelError(f"StepModel.traced_ps_task must name a PS task >= 0 for each of the {n} tasks")
        _check_names(self.names)
        bad_size = next((v for v in self.size_bytes if not 0 <= v <= MAX_TRANSFER_BYTES), None)
        if bad_size is not None:
            raise ModelError(f"StepModel.size_bytes must be from 0 to {MAX_TRANSFER_BYTES} (got {bad_size})")
        for t, preds in enumerate(self.data_preds):
            for p in (*preds, *self.control_preds[t]):
                if not 0 <= p < n or p == t:
                    raise ModelError(f"task {t} ({self.names[t]!r}) has predecessor {p}, not a task id != {t}")
        if not 1 <= self.worker_threads <= 4096 or not 1 <= self.ps_threads <= 4096:
            raise ModelError(f"thread counts must be from 1 to 4096 (got {self.worker_threads}, {self.ps_threads})")
        if self.link.pull_bandwidth_bytes_per_s < 1 or self.link.push_bandwidth_bytes_per_s < 1:
            raise ModelError(f"the link estimate's rates must be >= 1 byte/s (got {self.link})")
        if len(self.topo_order()) != n:
            indeg = _indegrees(self)
            stuck = next(t for t in range(n) if indeg[t] > 0)
            raise ModelError(f"the step's dependencies form a cycle (through task {stuck}: {self.names[stuck]!r})")

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.names)

    @property
    def measured_step_ns(self) -> int:
        """The median length of the traced steps the timings come from."""
        return round(statistics.median(t.step_ns for t in self.timings))

    def bytes_of(self, kind: TaskKind) -> int:
        """Bytes per step moved by tasks of ``kind`` (``PULL`` or ``PUSH``)."""
        return sum(s for s, k in zip(self.size_bytes, self.kinds, strict=True) if k == kind)

    def count(self, kind: TaskKind) -> int:
        """Number of tasks of ``kind``."""
        return sum(1 for k in self.kinds if k == kind)

    def mean_work_ns(self, kinds: Iterable[TaskKind], work: Callable[[int], int] | None = None) -> float:
        """The mean over timings of the summed durations of tasks of ``kinds`` (CPU time per step); ``work``,
        when given, turns each traced duration into CPU work first."""
        wanted = set(kinds)
        ids = [t for t in range(self.n_tasks) if self.kinds[t] in wanted]
        convert = work or (lambda ns: ns)
        return statistics.fmean(sum(convert(timing.dur_ns[t]) for t in ids) for timing in self.timings)

    def preds(self, task: int) -> tuple[int, ...]:
        """Data and control predecessors of ``task``."""
        return self.data_preds[task] + self.control_preds[task]

    def topo_order(self) -> list[int]:
        """Task ids in an order where every task comes after its predecessors (shorter on a cycle)."""
        indeg = [len(self.data_preds[t]) + len(self.control_preds[t]) for t in range(self.n_tasks)]
        succ: list[list[int]] = [[] for _ in range(self.n_tasks)]
        for t in range(self.n_tasks):
            for p in self.preds(t):
                succ[p].append(t)
        order = [t for t in range(self.n_tasks) if indeg[t] == 0]
        for t in order:
            for s in succ[t]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    order.append(s)
        return order


def _check_names(names: tuple[str, ...]) -> None:
    """ModelError at the first task name holding a lone surrogate: JSON writes it as ``\\ud800``, which no
    reader takes for text, so a trace emitted from the model could not be read back."""
    for t, name in enumerate(names):
        if name.isascii():
            continue
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ModelError(f"task {t}'s name {quoted(name)} holds a lone UTF-16 surrogate "
                             f"(U+{ord(name[exc.start]):04X} at character {exc.start}), which is not text") from None


def _indegrees(model: StepModel) -> list[int]:
    indeg = [len(model.data_preds[t]) + len(model.control_preds[t]) for t in range(model.n_tasks)]
    for t in model.topo_order():
        indeg[t] = 0
    return indeg


def _rows(rows: Iterable[Any]) -> Iterable[Any]:
    """Rows of a pandas iterator, typed loosely (pandas-stubs types cells as a union of everything)."""
    return rows


def _median_int(values: Iterable[float]) -> int:
    vals = list(values)
    return round(statistics.median(vals)) if vals else 0


def _concurrency(intervals: Sequence[tuple[int, int]]) -> int:
    events = sorted([(e, -1) for _, e in intervals] + [(s, 1) for s, _ in intervals])
    level = best = 0
    for _, d in events:
        level += d
        best = max(best, level)
    return best


def _kind_for(device: str, op_type: str, node_name: str) -> TaskKind:
    if device_role(device) == "worker":
        return TaskKind.COMPUTE
    if op_type.startswith(APPLY_PREFIXES) or node_name == "GradientDescent":
        return TaskKind.APPLY
    return TaskKind.PS_OP


@dataclasses.dataclass(slots=True)
class _Graph:
    """The tasks and edges of the partition graphs, before timings."""

    names: list[str]
    kinds: list[TaskKind]
    data: list[set[int]]
    control: list[set[int]]
    node_task: dict[tuple[str, str], int]
    tensor_task: dict[str, int]
    notes: list[str]
    ps_task: list[int]  # per task, the PS task it runs on or whose link it crosses (0 for worker ops)
    op_type: list[str]  # per task, its node's op type ("" for a transfer)

    def preds(self, t: int) -> set[int]:
        return self.data[t] | self.control[t]


def _graph(trace: Trace, keep: set[str]) -> _Graph:
    names: list[str] = []
    kinds: list[TaskKind] = []
    node_task: dict[tuple[str, str], int] = {}
    send_task: dict[tuple[str, str], int] = {}
    recv_task: dict[tuple[str, str], int] = {}
    tensor_task: dict[str, int] = {}
    ps_task: list[int] = []
    op_types: list[str] = []
    for row in _rows(trace.rendezvous.itertuples(index=False)):
        if row.direction not in (PULL, PUSH) or row.send_device not in keep or row.recv_device not in keep:
            continue
        t = len(names)
        ps_task.append(task_index(str(row.send_device if row.direction == PULL else row.recv_device)))
        names.append(str(row.tensor_name))
        kinds.append(TaskKind.PULL if row.direction == PULL else TaskKind.PUSH)
        op_types.append("")
        tensor_task[str(row.tensor_name)] = t
        send_task[(str(row.send_device), str(row.send_node))] = t
        recv_task[(str(row.recv_device), str(row.recv_node))] = t
    graph_nodes = trace.graph_nodes[trace.graph_nodes["device"].isin(keep)]
    op_rows = trace.ops[trace.ops["device"].isin(keep)]
    op_type_of = {(str(d), str(n)): str(o) for d, n, o in
                  zip(graph_nodes["device"], graph_nodes["node_name"], graph_nodes["op_type"], strict=True)}
    for d, n, o in zip(op_rows["device"], op_rows["node_name"], op_rows["op_type"], strict=True):
        op_type_of.setdefault((str(d), str(n)), "" if o is pd.NA else str(o))
    for (device, node), op_type in sorted(op_type_of.items()):
        if op_type in SEND_OPS or op_type in RECV_OPS:
            continue
        node_task[(device, node)] = len(names)
        ps_task.append(task_index(device) if device_role(device) == "ps" else 0)
        names.append(node if device_role(device) == "worker" else f"ps:{node}")
        kinds.append(_kind_for(device, op_type, node))
        op_types.append(op_type)
    n = len(names)
    data: list[set[int]] = [set() for _ in range(n)]
    control: list[set[int]] = [set() for _ in range(n)]
    skipped = 0
    for row in _rows(trace.graph_edges[trace.graph_edges["device"].isin(keep)].itertuples(index=False)):
        src_key, dst_key = (str(row.device), str(row.src_node)), (str(row.device), str(row.dst_node))
        src = recv_task.get(src_key, node_task.get(src_key))
        dst = send_task.get(dst_key, node_task.get(dst_key, recv_task.get(dst_key)))
        if src is None or dst is None or src == dst:
            skipped += 1
            continue
        (control if row.kind == "control" else data)[dst].add(src)
    for t in range(n):
        control[t] -= data[t]
    notes = [f"{skipped} graph edges touch no modelled task (other devices, unpaired send/recv)"] if skipped else []
    return _Graph(names, kinds, data, control, node_task, tensor_task, notes, ps_task, op_types)


def _observations(trace: Trace, g: _Graph, keep: set[str]) -> tuple[list[dict[int, tuple[int, int]]],
                                                                   list[list[int]], dict[int, int]]:
    """Per task, per step: (start, end) relative to the step's start; per task the bytes recorded; per step its
    start."""
    step_start = dict(zip(trace.steps["step"].astype(int), trace.steps["start_ns"].astype(int), strict=True))
    n = len(g.names)
    obs: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]
    for row in _rows(trace.ops[trace.ops["device"].isin(keep)].itertuples(index=False)):
        found = g.node_task.get((str(row.device), str(row.node_name)))
        if found is not None:
            s = int(row.start_ns) - step_start[int(row.step)]
            prev = obs[found].get(int(row.step))
            if prev is None or s < prev[0]:
                obs[found][int(row.step)] = (s, s + int(row.dur_ns))
    sizes: list[list[int]] = [[] for _ in range(n)]
    for row in _rows(trace.transfers.itertuples(index=False)):
        if row.tensor_name is pd.NA or str(row.tensor_name) not in g.tensor_task:
            continue
        t = g.tensor_task[str(row.tensor_name)]
        s = int(row.start_ns) - step_start[int(row.step)]
        obs[t][int(row.step)] = (s, s + int(row.dur_ns))
        if row.size_bytes is not pd.NA:
            sizes[t].append(int(row.size_bytes))
    return obs, sizes, step_start


def complete_steps(trace: Trace) -> tuple[list[int], dict[int, str]]:
    """The traced steps that hold every transfer and apply op of the partition graphs and at least one of the
    worker's ops, and why each other step is not complete."""
    g, obs, _, step_start = _prepare(trace)
    return _complete(g, obs, step_start)


def _complete(g: _Graph, obs: Sequence[Mapping[int, tuple[int, int]]], step_start: Mapping[int, int],
              ) -> tuple[list[int], dict[int, str]]:
    must = [t for t in range(len(g.names)) if g.kinds[t] in (TaskKind.PULL, TaskKind.PUSH, TaskKind.APPLY)
            and any(obs[t].values())]
    transfers = [t for t in range(len(g.names)) if g.kinds[t] in TRANSFER_KINDS]
    must = sorted(set(must) | set(transfers))
    computes = [t for t in range(len(g.names)) if g.kinds[t] == TaskKind.COMPUTE]
    complete, why = [], {}
    for step in sorted(step_start):
        missing = [t for t in must if step not in obs[t]]
        if computes and not any(step in obs[t] for t in computes):  # a table of ops cut to its header
            why[step] = f"none of the worker's {len(computes)} ops recorded"
        elif missing:
            pulls = sum(1 for t in missing if g.kinds[t] == TaskKind.PULL)
            pushes = sum(1 for t in missing if g.kinds[t] == TaskKind.PUSH)
            applies = len(missing) - pulls - pushes
            why[step] = (f"{counted(pulls, 'pull')}, {counted(pushes, 'push', 'pushes')} and "
                         f"{counted(applies, 'apply op')} unrecorded")
        else:
            complete.append(step)
    return complete, why


def _prepare(trace: Trace) -> tuple[_Graph, list[dict[int, tuple[int, int]]], list[list[int]], dict[int, int]]:
    if trace.rendezvous.empty and trace.transfers.empty and not any(device_role(d) == "ps" for d in trace.devices):
        devices = trace.devices
        shown = ", ".join(devices[:2]) + (f" and {len(devices) - 2} more" if len(devices) > 2 else "")
        raise ModelError(f"{trace.source}: no PS and no transfer in the trace (devices: {shown}); a step model needs "
                         "a job whose variables live on a PS task")
    if not trace.has_graph or trace.rendezvous.empty:
        how = ("a TF2 profile has them only when it holds the step function's first call, whose registration "
               "lists its graphs: start profiling before the first step" if trace.source_format in TF2_FORMATS
               else "a step model needs RunMetadata traced with output_partition_graphs=True")
        raise ModelError(f"{trace.source}: the trace has no partition graphs with _Send/_Recv pairs "
                         f"(format {trace.source_format!r}); {how}")
    workers = sorted({d for d in trace.devices if device_role(d) == "worker"})
    if len(workers) != 1:
        raise ModelError(f"{trace.source}: expected the trace of exactly one worker device, got {workers}")
    keep = {workers[0]} | {d for d in trace.devices if device_role(d) == "ps"}
    g = _graph(trace, keep)
    obs, sizes, step_start = _observations(trace, g, keep)
    return g, obs, sizes, step_start


def build_model(trace: Trace, *, timing: str = "steps", use_steps: Sequence[int] | None = None) -> StepModel:
    """The step model of ``trace`` (one worker, one or more PS tasks, several traced steps merged).

    ``timing``: ``steps`` keeps one timing per complete traced step (module docstring); ``representative``
    only the complete step of median length; ``median`` one timing of per-task medians and smallest gaps over
    the complete steps (statistics that need not add up to any real step). ``use_steps`` limits the timings to
    those traced steps (the leave-one-step-out check).
    """
    if timing not in TIMINGS:
        raise ModelError(f"'timing' must be one of {', '.join(TIMINGS)} (got {timing!r})")
    g, obs, sizes, step_start = _prepare(trace)
    notes = [*g.notes, *(n for n in (clock_note(trace.lost),) if n is not None)]
    complete, why = _complete(g, obs, step_start)
    for step, reason in why.items():
        notes.append(f"traced step {step} left out: {reason}")
    if use_steps is not None:
        complete = [s for s in complete if s in set(use_steps)]
    if not complete:
        none = ("the 1 traced step is not complete" if len(step_start) == 1 else
                f"none of the {len(step_start)} traced steps is complete")
        raise ModelError(f"{trace.source}: {none} ("
                         + "; ".join(f"step {s}: {r}" for s, r in sorted(why.items())[:3])
                         + "); trace more steps (tracegen profile --steps 10)")
    n = len(g.names)
    step_len = {int(s): int(e) - int(b) for s, b, e in
                zip(trace.steps["step"], trace.steps["start_ns"], trace.steps["end_ns"], strict=True)}
    order = _topological(g, trace.source)
    timings = [_timing(g, obs, step, step_len[step], order) for step in complete]
    if timing == "representative":
        ordered = sorted(timings, key=lambda t: (t.step_ns, t.traced_step))
        timings = [ordered[(len(ordered) - 1) // 2]]
    elif timing == "median":
        timings = [StepTiming(
            dur_ns=tuple(_median_int(t.dur_ns[i] for t in timings) for i in range(n)),
            delay_ns=tuple(min(t.delay_ns[i] for t in timings) for i in range(n)),
            step_ns=_median_int(t.step_ns for t in timings))]
    start_med = [_median_int(obs[t][s][0] for s in complete if s in obs[t]) for t in range(n)]
    rank = [0] * n
    for r, t in enumerate(sorted(range(n), key=lambda t: (start_med[t], t))):
        rank[t] = r
    size = _sizes(trace, g, sizes, notes, recorded=obs)
    succ: list[list[int]] = [[] for _ in range(n)]
    for t in range(n):
        for p in g.preds(t):
            succ[p].append(t)
    first_need = list(start_med)
    for t in g.tensor_task.values():
        consumers = [start_med[c] for c in succ[t] if obs[c]]
        first_need[t] = min(consumers) if consumers else start_med[t]
    traced_ps_task = _traced_ps_tasks(g)
    if traced_ps_task:
        notes.append(f"traced with {max(traced_ps_task) + 1} PS tasks: predictions keep each parameter on its "
                     "traced PS task unless told to re-place them")
    worker_conc, ps_conc = [1], [1]
    for step in complete:
        worker_conc.append(_concurrency([obs[t][step] for t in range(n)
                                         if step in obs[t] and g.kinds[t] == TaskKind.COMPUTE]))
        ps_conc.append(_concurrency([obs[t][step] for t in range(n) if step in obs[t] and g.kinds[t] in PS_KINDS]))
    return StepModel(
        names=tuple(g.names), kinds=tuple(g.kinds), size_bytes=tuple(size),
        data_preds=tuple(tuple(sorted(s)) for s in g.data), control_preds=tuple(tuple(sorted(s)) for s in g.control),
        rank=tuple(rank), first_need_ns=tuple(first_need), timings=tuple(timings),
        link=_link_of(trace, g, obs, size, complete, traced_ps_task), worker_threads=max(worker_conc),
        ps_threads=max(ps_conc), source=trace.source, n_traced_steps=len(step_start), notes=tuple(notes),
        traced_ps_task=traced_ps_task, step_gap_ns=_dispatch_gap_ns(trace, complete))


TF2_FORMATS = ("xplane", "trace-viewer")


def _dispatch_gap_ns(trace: Trace, complete: Sequence[int]) -> int:
    """For a TF2 profile (consecutive steps the coordinator scheduled on one worker), the median gap between a
    complete step's end and the next step's start: the dispatch of the next call. 0 for other traces."""
    if trace.source_format not in TF2_FORMATS:
        return 0
    by_step = {int(s): (int(b), int(e)) for s, b, e in
               zip(trace.steps["step"], trace.steps["start_ns"], trace.steps["end_ns"], strict=True)}
    gaps = [by_step[s + 1][0] - by_step[s][1] for s in complete if s + 1 in by_step]
    return max(0, _median_int(gaps)) if gaps else 0

def _traced_ps_tasks(g: _Graph) -> tuple[int, ...]:
    """The PS task of every PS op and transfer, numbered 0, 1, ... in the order of the traced task numbers (worker
    ops 0); () when the job had one PS task."""
    used = sorted({g.ps_task[t] for t in range(len(g.names)) if g.kinds[t] != TaskKind.COMPUTE})
    if len(used) < 2:
        return ()
    number = {task: i for i, task in enumerate(used)}
    return tuple(0 if g.kinds[t] == TaskKind.COMPUTE else number[g.ps_task[t]] for t in range(len(g.names)))


def _timing(g: _Graph, obs: Sequence[Mapping[int, tuple[int, int]]], step: int, step_ns: int,
            order: Sequence[int]) -> StepTiming:
    """One step's durations and gaps. A task with no record in the step (a node that did not run, or, in a TF2
    profile, one the profiler does not show: constants, reshapes) takes no time, so its successors are ready
    when its own inputs were (``order``: the tasks in topological order)."""
    n = len(g.names)
    dur, delay = [0] * n, [0] * n
    finish = [0] * n
    for t in order:
        ready = max((finish[p] for p in g.preds(t)), default=0)
        if step not in obs[t]:
            finish[t] = ready
            continue
        s, e = obs[t][step]
        dur[t] = e - s
        delay[t] = max(0, s - ready)
        finish[t] = e
    return StepTiming(dur_ns=tuple(dur), delay_ns=tuple(delay), step_ns=step_ns, traced_step=step)


def _topological(g: _Graph, source: str) -> list[int]:
    """The tasks, each after all its predecessors (ModelError naming trace ``source`` and the tasks of a cycle)."""
    n = len(g.names)
    indeg = [len(g.preds(t)) for t in range(n)]
    succ: list[list[int]] = [[] for _ in range(n)]
    for t in range(n):
        for p in g.preds(t):
            succ[p].append(t)
    order = [t for t in range(n) if not indeg[t]]
    for t in order:
        for c in succ[t]:
            indeg[c] -= 1
            if not indeg[c]:
                order.append(c)
    if len(order) < n:
        raise ModelError(f"{source}: the partition graphs have a cycle: {_cycle_text(g, indeg)}; a step's ops cannot "
                         "wait for each other")
    return order


def _cycle_text(g: _Graph, indeg: Sequence[int]) -> str:
    """A cycle among the tasks left with predecessors (``indeg``), in the order its edges run: ``'a' -> 'b' ->
    'a'``. The first task left need not be on one (it may wait behind one): every task left has a predecessor
    left, so following them from it comes back round to one that is."""
    left = {t for t in range(len(g.names)) if indeg[t]}
    walked: dict[int, int] = {}
    t = min(left)
    while t not in walked:
        walked[t] = len(walked)
        t = min(p for p in g.preds(t) if p in left)
    cycle = [*reversed(list(walked)[walked[t]:])]
    shown = [quoted(g.names[c], 80) for c in cycle[:4]] + (["..."] if len(cycle) > 4 else [])
    return " -> ".join([*shown, quoted(g.names[cycle[0]], 80)])


def _sizes(trace: Trace, g: _Graph, sizes: Sequence[Sequence[int]], notes: list[str], *,
           recorded: Sequence[Mapping[int, object]]) -> list[int]:
    """Median recorded bytes per transfer; a transfer never recorded with a size takes its variable's size, or
    0 bytes where no variable is near it (a control edge) or where the op beside it reads or updates only some
    rows of its variable (a gather's rows, a sparse update's indices and values: no part of a variable's size says
    how many). ``recorded``: per task, the steps it was traced in (only for the note, which named a TF2 profile's
    control edge, traced in every step without a size and left at 0 bytes, 'absent from every traced step ...
    (size from the variable)')."""
    var_bytes = {(str(d), str(v)): int(b) for d, v, b in
                 zip(trace.variables["device"], trace.variables["name"], trace.variables["size_bytes"], strict=True)}
    by_task = {task: key for key, task in g.node_task.items()}
    size = [0] * len(g.names)
    reconstructed: dict[tuple[bool, str], list[str]] = {}  # (traced without a size, how it was sized) -> names
    for tensor, t in g.tensor_task.items():
        if sizes[t]:
            size[t] = _median_int(sizes[t])
            continue
        near = (list(g.data[t]) if g.kinds[t] == TaskKind.PULL
                else [c for c in range(len(g.names)) if t in g.data[c] and g.kinds[c] == TaskKind.APPLY])
        how = "no variable near, 0 bytes"
        for task in near:
            found = next((var_bytes[by_task[p]] for p in [*sorted(g.data[task]), task]
                          if p in by_task and by_task[p] in var_bytes), None)
            if found is not None and g.op_type[task].startswith(PART_OF_VARIABLE_OPS):
                how = f"beside a {g.op_type[task]}, some rows of a variable: size unknown, 0 bytes"
                break
            if found is not None:
                size[t], how = found, "size from the variable"
                break
        reconstructed.setdefault((bool(recorded[t]), how), []).append(tensor)
    for (traced, how), names in sorted(reconstructed.items()):
        where = ("traced but never with a size" if traced else "absent from every traced step "
                 f"{'was' if len(names) == 1 else 'were'} reconstructed from the rendezvous")
        notes.append(f"{counted(len(names), 'transfer')} {where} ({how}): {', '.join(sorted(names)[:5])}"
                     + (" ..." if len(names) > 5 else ""))
    return size


def _link_of(trace: Trace, g: _Graph, obs: Sequence[Mapping[int, tuple[int, int]]], size: Sequence[int],
             complete: Sequence[int], ps_task: Sequence[int]) -> LinkEstimate:
    """The link estimate (:func:`tracegen.wire.estimate_wire`); with several PS tasks (``ps_task``), of one PS
    task's link: the one whose transfers carry the most bytes."""
    tasks: Sequence[int] = range(len(g.names))
    if ps_task:
        per_task = [0] * (max(ps_task) + 1)
        for t in tasks:
            if g.kinds[t] in TRANSFER_KINDS:
                per_task[ps_task[t]] += size[t]
        busiest = per_task.index(max(per_task))
        tasks = [t for t in tasks if ps_task[t] == busiest]
    by_direction = {d: [t for t in tasks if g.kinds[t] == kind] for d, kind in ((PULL, TaskKind.PULL),
                                                                               (PUSH, TaskKind.PUSH))}
    return estimate_wire(trace, by_direction, g.preds, obs, size, complete)
