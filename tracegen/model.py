"""The step model: one training step of one worker as a dependency graph of timed tasks.

:func:`build_model` turns a :class:`parsers.Trace` (RunMetadata with partition graphs) into a frozen
:class:`StepModel`:

- every node of the worker's partition graph becomes a ``COMPUTE`` task (worker CPU), every node of the PS's
  partition graph a ``PS_OP`` task (PS CPU; apply ops and the global-step update are ``APPLY``), every
  rendezvous pair a ``PULL`` (PS → worker) or ``PUSH`` (worker → PS) task. ``_Send``/``_Recv`` nodes are folded
  into their transfer: the ``_Send``'s inputs become the transfer's predecessors, the ``_Recv``'s consumers its
  successors. Data and control dependencies are kept apart (``data_preds``, ``control_preds``); both order.
- Timings replay one real step: the *representative* step, the traced step of median duration. A task's
  duration and ``delay_ns`` come from that step, so that durations and gaps stay consistent with each other;
  a task absent from it takes its median duration and smallest gap over the other steps (0 for nodes that
  never ran, such as graph nodes that a step skipped). Transfer sizes are the median of the bytes TensorFlow
  reported. A push
  missing from every traced step (DOMAIN.md: PS-side ``RecvTensor`` records can be lost) is reconstructed
  from the rendezvous with the size of the variable its apply op updates, and ``notes`` says so.
- ``delay_ns`` is the gap the trace shows between a task's inputs being ready and the task starting (executor
  dispatch, RPC set-up; for a root task: its start after the step's start), never < 0. Per-task medians or
  minima taken from different steps do not add up to any real step (medians of gaps summed along the
  critical path exceeded the median step; minima fell up to 16 % short of it); one step replayed whole
  does.
- ``rank`` is the order in which tasks started in the trace (median start); a CPU with fewer free threads
  than ready tasks runs them in this order. ``first_need_ns`` of a transfer is when its first consumer
  started in the trace (the TicTac order).
- ``worker_threads`` / ``ps_threads``: the most ops the trace shows running at once on each device, ≥ 1.

The link estimator (:func:`estimate_link`, per direction; pulls and pushes separately) assumes the link is
work-conserving and that each transfer also pays one fixed latency:
- ``latency_ns`` = the median over steps of the shortest transfer's duration (a transfer of a few bytes is all
  latency), the smaller of the two directions;
- ``bandwidth`` = bytes moved in the representative step (see below) / (time with at least one transfer of
  that direction on the wire, minus one latency per busy period). A transfer counts as on the wire from the
  later of its record's start and its inputs' readiness: a push's record starts when the PS asks for the
  gradient, often long before the worker has produced it.
So it is an *effective* rate: on localhost it measures gRPC's serialisation and copies, not a wire.

A Chrome JSON timeline cannot be modelled: it lost tensor names, sizes and the send/recv pairing
(:class:`ModelError` says so). :func:`synthetic_model` builds layered models of any size for tests and
benchmarks.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from parsers.trace import PULL, PUSH, Trace, device_role
from tracegen.errors import ModelError

SEND_OPS = frozenset({"_Send", "_HostSend"})
RECV_OPS = frozenset({"_Recv", "_HostRecv"})
LARGE_TRANSFER_BYTES = 64 * 1024  # above this a transfer's duration is mostly bytes / bandwidth
APPLY_PREFIXES = ("ResourceApply", "Apply", "AssignAdd", "ResourceSparseApply", "SparseApply")


class TaskKind(enum.IntEnum):
    """What a task is and which resource runs it."""

    COMPUTE = 0  # an op on the worker's CPU
    PULL = 1  # a parameter sent PS → worker (the PS link's outgoing direction)
    PUSH = 2  # a tensor sent worker → PS (the PS link's incoming direction): gradients, the learning rate
    APPLY = 3  # an update on the PS's CPU: apply ops, the global-step increment
    PS_OP = 4  # other work on the PS's CPU: variable reads and handles, constants


PS_KINDS = frozenset({TaskKind.APPLY, TaskKind.PS_OP})
TRANSFER_KINDS = frozenset({TaskKind.PULL, TaskKind.PUSH})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkEstimate:
    """The PS link as the trace shows it. ``bandwidth_*`` in bytes per second, ``latency_ns`` per transfer."""

    pull_bandwidth_bytes_per_s: int
    push_bandwidth_bytes_per_s: int
    latency_ns: int
    method: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepModel:
    """One worker's training step: tasks with integer ids ``0 .. n_tasks-1`` and their dependencies.

    All per-task fields are tuples indexed by task id. The model is immutable; simulations copy what they need.
    """

    names: tuple[str, ...]
    kinds: tuple[TaskKind, ...]
    dur_ns: tuple[int, ...]
    size_bytes: tuple[int, ...]
    delay_ns: tuple[int, ...]
    data_preds: tuple[tuple[int, ...], ...]
    control_preds: tuple[tuple[int, ...], ...]
    rank: tuple[int, ...]
    first_need_ns: tuple[int, ...]
    link: LinkEstimate
    measured_step_ns: int
    worker_threads: int = 1
    ps_threads: int = 1
    source: str = ""
    n_traced_steps: int = 1
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.names)
        for field in ("kinds", "dur_ns", "size_bytes", "delay_ns", "data_preds", "control_preds", "rank",
                      "first_need_ns"):
            if len(getattr(self, field)) != n:
                raise ModelError(f"StepModel.{field} has {len(getattr(self, field))} entries, expected {n}")
        if n == 0:
            raise ModelError("a step model needs at least one task (got 0)")
        for field in ("dur_ns", "size_bytes", "delay_ns"):
            bad = next((v for v in getattr(self, field) if v < 0), None)
            if bad is not None:
                raise ModelError(f"StepModel.{field} must be >= 0 (got {bad})")
        for t, preds in enumerate(self.data_preds):
            for p in (*preds, *self.control_preds[t]):
                if not 0 <= p < n or p == t:
                    raise ModelError(f"task {t} ({self.names[t]!r}) has predecessor {p}, not a task id != {t}")
        if self.worker_threads < 1 or self.ps_threads < 1:
            raise ModelError(f"thread counts must be >= 1 (got {self.worker_threads}, {self.ps_threads})")
        _check_acyclic(self.names, self.data_preds, self.control_preds)

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.names)

    def bytes_of(self, kind: TaskKind) -> int:
        """Bytes per step moved by tasks of ``kind`` (``PULL`` or ``PUSH``)."""
        return sum(s for s, k in zip(self.size_bytes, self.kinds, strict=True) if k == kind)

    def count(self, kind: TaskKind) -> int:
        """Number of tasks of ``kind``."""
        return sum(1 for k in self.kinds if k == kind)

    def preds(self, task: int) -> tuple[int, ...]:
        """Data and control predecessors of ``task``."""
        return self.data_preds[task] + self.control_preds[task]


def _rows(rows: Iterable[Any]) -> Iterable[Any]:
    """Rows of a pandas iterator, typed loosely (pandas-stubs types cells as a union of everything)."""
    return rows


def _check_acyclic(names: Sequence[str], data: Sequence[Sequence[int]], control: Sequence[Sequence[int]]) -> None:
    n = len(names)
    indeg = [len(data[t]) + len(control[t]) for t in range(n)]
    succ: list[list[int]] = [[] for _ in range(n)]
    for t in range(n):
        for p in (*data[t], *control[t]):
            succ[p].append(t)
    stack = [t for t in range(n) if indeg[t] == 0]
    seen = 0
    while stack:
        t = stack.pop()
        seen += 1
        for s in succ[t]:
            indeg[s] -= 1
            if indeg[s] == 0:
                stack.append(s)
    if seen != n:
        stuck = next(t for t in range(n) if indeg[t] > 0)
        raise ModelError(f"the step's dependencies form a cycle (through task {stuck}: {names[stuck]!r})")


# ------------------------------------------------------------------------------------------------ building


def _median_int(values: Iterable[float]) -> int:
    vals = list(values)
    return round(statistics.median(vals)) if vals else 0


def _concurrency(starts: Sequence[int], ends: Sequence[int]) -> int:
    events = sorted([(e, -1) for e in ends] + [(s, 1) for s in starts])
    level = best = 0
    for _, d in events:
        level += d
        best = max(best, level)
    return best


def _busy(intervals: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(total time covered, number of disjoint periods) of a set of intervals."""
    total = periods = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e, periods = s, e, periods + 1
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total, periods


def estimate_link(trace: Trace) -> LinkEstimate:
    """Effective per-direction bandwidth and per-transfer latency of the PS link (module docstring): the
    estimate :func:`build_model` makes."""
    return build_model(trace).link


def _latency_ns(trace: Trace) -> int:
    """The median over steps of the shortest sized transfer's duration, the smaller of the two directions."""
    tr = trace.transfers[trace.transfers["size_bytes"].notna() & trace.transfers["direction"].isin([PULL, PUSH])]
    shortest = tr.groupby(["direction", "step"])["dur_ns"].min()
    per_direction = [int(g.median()) for _, g in shortest.groupby(level=0)]
    return min(per_direction, default=0)


def _replay_link(source: str, step: int, obs: Sequence[Mapping[int, tuple[int, int]]],
                 preds: Sequence[set[int]], kinds: Sequence[TaskKind], size: Sequence[int],
                 latency_ns: int) -> LinkEstimate:
    """Per direction: bytes moved in ``step`` / the time the network carried them there. A transfer's record
    starts when its receiver asked for it, which for a push can be long before the worker produced the
    gradient: each record is counted from the later of its start and its inputs' readiness."""
    rates = {}
    for kind in (TaskKind.PULL, TaskKind.PUSH):
        spans, n_bytes = [], 0
        sized = [t for t in range(len(kinds)) if kinds[t] == kind and step in obs[t] and size[t] > 0]
        large = [t for t in sized if size[t] >= LARGE_TRANSFER_BYTES]
        if sum(size[t] for t in large) >= 0.9 * sum(size[t] for t in sized):
            sized = large  # small transfers' records measure latency and CPU scheduling, not the wire
        for t in sized:
            start, end = obs[t][step]
            ready = max((obs[p][step][1] for p in preds[t] if step in obs[p]), default=start)
            spans.append((min(max(start, ready), end), end))
            n_bytes += size[t]
        if not n_bytes:
            raise ModelError(f"{source}: no sized {kind.name.lower()} transfers in traced step {step} to estimate "
                             "the link from")
        busy_ns, periods = _busy(spans)
        rates[kind] = n_bytes / max(busy_ns - periods * latency_ns, busy_ns // 10, 1) * 1e9
    return LinkEstimate(pull_bandwidth_bytes_per_s=max(1, round(rates[TaskKind.PULL])),
                        push_bandwidth_bytes_per_s=max(1, round(rates[TaskKind.PUSH])), latency_ns=latency_ns,
                        method="bytes / time on the wire per direction in the representative (median) step")


def representative_step(trace: Trace) -> int:
    """The traced step whose duration is the median (the lower one of an even count)."""
    steps = trace.steps.assign(dur_ns=trace.steps["end_ns"] - trace.steps["start_ns"])
    ordered = steps.sort_values(["dur_ns", "step"], kind="stable")
    return int(ordered["step"].iloc[(len(ordered) - 1) // 2])


def _kind_for(device: str, op_type: str, node_name: str) -> TaskKind:
    if device_role(device) == "worker":
        return TaskKind.COMPUTE
    if op_type.startswith(APPLY_PREFIXES) or node_name == "GradientDescent":
        return TaskKind.APPLY
    return TaskKind.PS_OP


TIMINGS = ("representative", "median")


def build_model(trace: Trace, *, timing: str = "representative") -> StepModel:  # noqa: PLR0912, PLR0915
    """The step model of ``trace`` (one worker, one or more PS tasks, several traced steps merged).

    ``timing``: ``representative`` replays the traced step of median length (module docstring); ``median``
    takes each task's median duration and smallest gap over all traced steps (per-task statistics, which
    need not add up to any real step).
    """
    if timing not in TIMINGS:
        raise ModelError(f"'timing' must be one of {', '.join(TIMINGS)} (got {timing!r})")
    if not trace.has_graph or trace.rendezvous.empty:
        raise ModelError(f"{trace.source}: the trace has no partition graphs with _Send/_Recv pairs "
                         f"(format {trace.source_format!r}); a step model needs RunMetadata traced with "
                         "output_partition_graphs=True")
    workers = sorted({d for d in trace.devices if device_role(d) == "worker"})
    if len(workers) != 1:
        raise ModelError(f"{trace.source}: expected the trace of exactly one worker device, got {workers}")
    keep = {workers[0]} | {d for d in trace.devices if device_role(d) == "ps"}
    notes: list[str] = []

    # nodes -> task ids
    names: list[str] = []
    kinds: list[TaskKind] = []
    node_task: dict[tuple[str, str], int] = {}
    send_task: dict[tuple[str, str], int] = {}
    recv_task: dict[tuple[str, str], int] = {}
    tensor_task: dict[str, int] = {}
    for row in _rows(trace.rendezvous.itertuples(index=False)):
        if row.direction not in (PULL, PUSH) or row.send_device not in keep or row.recv_device not in keep:
            continue
        t = len(names)
        names.append(str(row.tensor_name))
        kinds.append(TaskKind.PULL if row.direction == PULL else TaskKind.PUSH)
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
        names.append(f"{node}" if device_role(device) == "worker" else f"ps:{node}")
        kinds.append(_kind_for(device, op_type, node))

    # edges
    n = len(names)
    data: list[set[int]] = [set() for _ in range(n)]
    control: list[set[int]] = [set() for _ in range(n)]
    skipped_edges = 0
    for row in _rows(trace.graph_edges[trace.graph_edges["device"].isin(keep)].itertuples(index=False)):
        src_key, dst_key = (str(row.device), str(row.src_node)), (str(row.device), str(row.dst_node))
        src = recv_task.get(src_key, node_task.get(src_key))
        dst = send_task.get(dst_key, node_task.get(dst_key, recv_task.get(dst_key)))
        if src is None or dst is None or src == dst:
            skipped_edges += 1
            continue
        (control if row.kind == "control" else data)[dst].add(src)
    for t in range(n):
        control[t] -= data[t]
    if skipped_edges:
        notes.append(f"{skipped_edges} graph edges touch no modelled task (other devices, unpaired send/recv)")

    # timing per step, relative to each step's start
    step_start = dict(zip(trace.steps["step"].astype(int), trace.steps["start_ns"].astype(int), strict=True))
    obs: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]  # task -> step -> (start, end) rel
    for row in _rows(op_rows.itertuples(index=False)):
        found = node_task.get((str(row.device), str(row.node_name)))
        if found is not None:
            s = int(row.start_ns) - step_start[int(row.step)]
            prev = obs[found].get(int(row.step))
            if prev is None or s < prev[0]:
                obs[found][int(row.step)] = (s, s + int(row.dur_ns))
    sizes: list[list[int]] = [[] for _ in range(n)]
    for row in _rows(trace.transfers.itertuples(index=False)):
        if row.tensor_name is pd.NA or str(row.tensor_name) not in tensor_task:
            continue
        t = tensor_task[str(row.tensor_name)]
        s = int(row.start_ns) - step_start[int(row.step)]
        obs[t][int(row.step)] = (s, s + int(row.dur_ns))
        if row.size_bytes is not pd.NA:
            sizes[t].append(int(row.size_bytes))
    dur = [0] * n
    delay = [0] * n
    start_med = [0] * n
    rep = representative_step(trace) if timing == "representative" else -1
    for t in range(n):
        preds = data[t] | control[t]
        if not obs[t]:
            continue
        start_med[t] = _median_int(s for s, _ in obs[t].values())
        gaps = {}
        for step, (s, _e) in obs[t].items():
            ready = max((obs[p][step][1] for p in preds if step in obs[p]), default=0)
            gaps[step] = max(0, s - ready)
        if rep in obs[t]:  # replay the representative step as it ran
            dur[t] = obs[t][rep][1] - obs[t][rep][0]
            delay[t] = gaps[rep]
        else:
            dur[t] = _median_int(e - s for s, e in obs[t].values())
            delay[t] = min(gaps.values())
    # tasks that never ran start when their inputs are ready
    order = sorted(range(n), key=lambda t: (start_med[t], t))
    rank = [0] * n
    for r, t in enumerate(order):
        rank[t] = r

    # transfer sizes, reconstructing lost pushes from the variables
    var_bytes = {(str(d), str(v)): int(b) for d, v, b in
                 zip(trace.variables["device"], trace.variables["name"], trace.variables["size_bytes"], strict=True)}
    size = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for t in range(n):
        for p in data[t] | control[t]:
            succ[p].append(t)
    reconstructed = []
    for tensor, t in tensor_task.items():
        if sizes[t]:
            size[t] = _median_int(sizes[t])
            continue
        size[t] = _variable_size(t, kinds, data, succ, names, node_task, var_bytes)
        reconstructed.append(tensor)
    if reconstructed:
        notes.append(f"{len(reconstructed)} transfers absent from every traced step were reconstructed from the "
                     f"rendezvous (size from the variable): {', '.join(sorted(reconstructed)[:5])}"
                     + (" ..." if len(reconstructed) > 5 else ""))
    missing_steps = sum(1 for t in tensor_task.values() if 0 < len(obs[t]) < len(step_start))
    if missing_steps:
        notes.append(f"{missing_steps} transfers missing from some traced steps: timings from the others")
    first_need = list(start_med)
    for t in tensor_task.values():
        consumers = [start_med[c] for c in succ[t] if obs[c]]
        first_need[t] = min(consumers) if consumers else start_med[t]

    worker_conc, ps_conc = [1], [1]
    for step in step_start:
        for target, want in ((worker_conc, TaskKind.COMPUTE), (ps_conc, None)):
            ivs = [obs[t][step] for t in range(n) if step in obs[t]
                   and (kinds[t] == want if want is not None else kinds[t] in PS_KINDS)]
            if ivs:
                target.append(_concurrency([s for s, _ in ivs], [e for _, e in ivs]))
    steps_ns = (trace.steps["end_ns"] - trace.steps["start_ns"]).astype(int)
    return StepModel(
        names=tuple(names), kinds=tuple(kinds), dur_ns=tuple(dur), size_bytes=tuple(size),
        delay_ns=tuple(delay), data_preds=tuple(tuple(sorted(s)) for s in data),
        control_preds=tuple(tuple(sorted(s)) for s in control), rank=tuple(rank), first_need_ns=tuple(first_need),
        link=_replay_link(trace.source, representative_step(trace), obs,
                          [data[t] | control[t] for t in range(n)], kinds, size, _latency_ns(trace)),
        measured_step_ns=_median_int(steps_ns), worker_threads=max(worker_conc),
        ps_threads=max(ps_conc), source=trace.source, n_traced_steps=len(step_start), notes=tuple(notes),
    )


def _variable_size(t: int, kinds: Sequence[TaskKind], data: Sequence[set[int]], succ: Sequence[Sequence[int]],
                   names: Sequence[str], node_task: Mapping[tuple[str, str], int],
                   var_bytes: Mapping[tuple[str, str], int]) -> int:
    """Bytes of the variable a transfer carries: the variable read (pull) or updated (push) next to it."""
    by_task = {task: key for key, task in node_task.items()}
    near = list(data[t]) if kinds[t] == TaskKind.PULL else [c for c in succ[t] if kinds[c] == TaskKind.APPLY]
    for task in near:
        for p in [*sorted(data[task]), task]:
            key = by_task.get(p)
            if key is not None and key in var_bytes:
                return var_bytes[key]
    del names
    return 0


# ----------------------------------------------------------------------------------------------- synthetic


def synthetic_model(*, n_params: int = 4, n_layers_ops: int = 4, param_bytes: int = 1 << 20,
                    op_dur_ns: int = 100_000, apply_dur_ns: int = 10_000, seed: int = 0,
                    bandwidth_bytes_per_s: int = 125_000_000, latency_ns: int = 0) -> StepModel:
    """A layered model like a deep network's step: per parameter a pull, a forward chain of
    ``n_layers_ops`` ops reading it, a backward chain producing its gradient, a push and an apply.

    Sizes and durations vary ±50 % around the given values (seeded); used by tests and benchmarks.
    """
    if n_params < 1 or n_layers_ops < 1:
        raise ModelError(f"synthetic_model needs n_params >= 1 and n_layers_ops >= 1 (got {n_params}, "
                         f"{n_layers_ops})")
    rng = np.random.default_rng(seed)
    names: list[str] = []
    kinds: list[TaskKind] = []
    dur: list[int] = []
    size: list[int] = []
    data: list[tuple[int, ...]] = []

    def add(name: str, kind: TaskKind, d: int, s: int, preds: tuple[int, ...]) -> int:
        names.append(name)
        kinds.append(kind)
        dur.append(d)
        size.append(s)
        data.append(preds)
        return len(names) - 1

    def vary(x: int) -> int:
        return int(x * rng.uniform(0.5, 1.5))

    prev: tuple[int, ...] = ()
    pulls, forward_last = [], []
    for p in range(n_params):
        read = add(f"ps:layer{p}/read", TaskKind.PS_OP, 1_000, 0, ())
        pull = add(f"edge_{p}_layer{p}/read", TaskKind.PULL, 0, vary(param_bytes), (read,))
        pulls.append(pull)
        for i in range(n_layers_ops):
            prev = (add(f"layer{p}/fwd{i}", TaskKind.COMPUTE, vary(op_dur_ns), 0,
                        prev + ((pull,) if i == 0 else ())),)
        forward_last.append(prev[0])
    applies = []
    for p in reversed(range(n_params)):
        for i in range(n_layers_ops):
            prev = (add(f"gradients/layer{p}/bwd{i}", TaskKind.COMPUTE, vary(op_dur_ns), 0, prev),)
        push = add(f"edge_g{p}_gradients/layer{p}", TaskKind.PUSH, 0, size[pulls[p]], prev)
        applies.append(add(f"ps:update_layer{p}", TaskKind.APPLY, vary(apply_dur_ns), 0, (push,)))
    gstep = add("ps:GradientDescent", TaskKind.APPLY, 2_000, 0, ())
    n = len(names)
    control: list[tuple[int, ...]] = [() for _ in range(n)]
    control[gstep] = tuple(applies)
    start = list(range(n))
    return StepModel(
        names=tuple(names), kinds=tuple(kinds), dur_ns=tuple(dur), size_bytes=tuple(size), delay_ns=(0,) * n,
        data_preds=tuple(data), control_preds=tuple(control), rank=tuple(start), first_need_ns=tuple(start),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                          push_bandwidth_bytes_per_s=bandwidth_bytes_per_s, latency_ns=latency_ns,
                          method="given"),
        measured_step_ns=0, source=f"synthetic(n_params={n_params}, n_layers_ops={n_layers_ops}, seed={seed})",
    )
