"""Discrete-event simulation of N asynchronous workers sharing one parameter server.

``simulate(model, config) -> SimResult`` is pure: no globals, no I/O, no clock; randomness only from
``numpy.random.default_rng(config.seed)``. Events sit in a heap keyed ``(time_ns, priority, seq)``.

What runs (assumptions, each a knob in :class:`SimConfig`):
- Every worker runs ``steps`` steps back to back (async SGD: it never waits for another worker). Worker 0
  starts at 0, the others at offsets drawn uniformly from ``[0, start_spread_ns)`` (default: one uncontended
  step), so that workers are not in lock-step.
- A step is the model's task graph. A task becomes ready ``delay_ns`` after its last predecessor finished
  (the dispatch gap the trace showed), then waits for its resource: ``COMPUTE`` for one of the worker's
  ``worker_threads`` CPU threads, ``APPLY``/``PS_OP`` for one of the PS's ``ps_threads`` threads shared by all
  workers, ``PULL``/``PUSH`` for the PS link's outgoing/incoming direction (:mod:`tracegen.link`; each transfer
  first pays ``latency_ns``). With ``ps_transfer_bytes_per_s`` set, the PS moves at most that many bytes per
  second in and out together: while both directions carry data they share that rate max-min fairly (a
  direction never exceeds its link; the other gets the rest). What sets it is measured, not assumed (the
  testbed's ``--transfer-bench``): the PS's CPU (gRPC's serialisation and copies), or a duplex link whose
  directions slow each other (each direction's TCP acknowledgements queue behind the other's data). Queued CPU
  work runs in trace order (``rank``) on a worker and in arrival order on the PS; queued transfers in the
  policy's order (:mod:`tracegen.policy`).
- The step ends when all its tasks are done (the last apply and the global-step update included); the next
  starts ``step_gap_ns`` later.

Metrics are functions of the result: :func:`steps_per_s`, :func:`link_utilisation`, :func:`ps_cpu_utilisation`,
:func:`ps_transfer_utilisation`.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from tracegen.errors import ConfigError
from tracegen.link import LinkModel, link_model
from tracegen.model import PS_KINDS, StepModel, TaskKind
from tracegen.policy import FixedOrder, Policy, TfOrder, TicTac, check_order

PULL_DIR, PUSH_DIR = 0, 1
DIRECTIONS = ("pull", "push")
# event kinds, also the tie-break priority at equal times: finishing work before starting new work
_CPU_DONE, _LINK, _READY, _STEP = 0, 1, 2, 3
_EPS_BYTES = 1e-3


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimConfig:
    """How to simulate. ``None`` means "from the model" (the trace's estimate or observation)."""

    n_workers: int = 1
    steps: int = 10
    seed: int = 0
    pull_bandwidth_bytes_per_s: int | None = None
    push_bandwidth_bytes_per_s: int | None = None
    latency_ns: int | None = None
    link: str = "fifo"
    policy: str = "tf"
    order: tuple[str, ...] = ()
    ps_threads: int | None = None
    ps_transfer_bytes_per_s: int | None = None
    worker_threads: int | None = None
    start_spread_ns: int | None = None
    step_gap_ns: int = 0
    record_tasks: bool = False

    def __post_init__(self) -> None:
        for name in ("n_workers", "steps", "ps_threads", "worker_threads", "pull_bandwidth_bytes_per_s",
                     "push_bandwidth_bytes_per_s", "ps_transfer_bytes_per_s"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name!r} must be an integer >= 1 (got {value!r})")
        for name in ("latency_ns", "start_spread_ns", "step_gap_ns", "seed"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ConfigError(f"{name!r} must be an integer >= 0 (got {value!r})")
        link_model(self.link)
        if self.policy not in ("tf", "tictac", "fixed"):
            raise ConfigError(f"'policy' must be tf, tictac or fixed (got {self.policy!r})")
        if self.policy == "fixed" and not self.order:
            raise ConfigError("'policy' fixed needs a non-empty 'order' of tensor names")


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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimResult:
    """What a run produced. Rates used are resolved (never None)."""

    config: SimConfig
    pull_bandwidth_bytes_per_s: int
    push_bandwidth_bytes_per_s: int
    latency_ns: int
    ps_threads: int
    worker_threads: int
    step_start_ns: tuple[tuple[int, ...], ...]  # [worker][step]
    step_end_ns: tuple[tuple[int, ...], ...]
    end_ns: int
    link_busy_ns: tuple[int, int]  # pull, push direction: time with a transfer in flight
    link_bytes: tuple[int, int]
    ps_busy_ns: int  # thread-ns of PS CPU work
    n_events: int
    # (time_ns, pull busy ns, push busy ns, PS busy thread-ns, pull bytes, push bytes) cumulative, at every
    # step end, in time order
    snapshots: tuple[tuple[int, int, int, int, int, int], ...] = ()
    tasks: tuple[TaskRecord, ...] = ()


def resolve_policy(model: StepModel, config: SimConfig) -> Policy:
    """The policy object a config names."""
    if config.policy == "tf":
        return TfOrder()
    if config.policy == "tictac":
        return TicTac()
    check_order(model, config.order)
    return FixedOrder(config.order)


def critical_path_ns(model: StepModel, pull_bw: int, push_bw: int, latency_ns: int) -> int:
    """Length of the step with no contention at all (every transfer alone on the link, free CPUs)."""
    finish = [0] * model.n_tasks
    for t in _topo_order(model):
        ready = max((finish[p] for p in model.preds(t)), default=0) + model.delay_ns[t]
        finish[t] = ready + _service_ns(model, t, pull_bw, push_bw, latency_ns)
    return max(finish)


def _service_ns(model: StepModel, t: int, pull_bw: int, push_bw: int, latency_ns: int) -> int:
    kind = model.kinds[t]
    if kind == TaskKind.PULL:
        return latency_ns + math.ceil(model.size_bytes[t] * 1e9 / pull_bw)
    if kind == TaskKind.PUSH:
        return latency_ns + math.ceil(model.size_bytes[t] * 1e9 / push_bw)
    return model.dur_ns[t]


def _topo_order(model: StepModel) -> list[int]:
    indeg = [len(model.preds(t)) for t in range(model.n_tasks)]
    succ: list[list[int]] = [[] for _ in range(model.n_tasks)]
    for t in range(model.n_tasks):
        for p in model.preds(t):
            succ[p].append(t)
    order = [t for t in range(model.n_tasks) if indeg[t] == 0]
    for t in order:
        for s in succ[t]:
            indeg[s] -= 1
            if indeg[s] == 0:
                order.append(s)
    return order


def transfer_shares(cap: float, demands: list[float]) -> list[float]:
    """Max-min fair shares of ``cap`` among ``demands`` (each share at most its demand)."""
    shares = [0.0] * len(demands)
    left, open_ = cap, sorted(range(len(demands)), key=lambda i: demands[i])
    while open_:
        even = left / len(open_)
        i = open_[0]
        if demands[i] <= even:
            shares[i] = demands[i]
            left -= demands[i]
            open_.pop(0)
        else:
            for j in open_:
                shares[j] = even
            break
    return shares


class _Direction:
    """Processor sharing over queue heads, tracked in virtual bytes (bytes each head has received).

    ``link_bw`` is the direction's bandwidth; ``bw`` the rate it runs at now (lower while the PS's CPU limits
    transfers, see :func:`transfer_shares`).
    """

    __slots__ = ("busy_ns", "bw", "bytes", "heads", "link_bw", "model", "n_active", "queues", "t_last", "v",
                 "version")

    def __init__(self, bw: int, model: LinkModel) -> None:
        self.link_bw = bw
        self.bw: float = bw
        self.model = model
        self.v = 0.0
        self.t_last = 0
        self.n_active = 0
        self.queues: dict[Hashable, list[tuple[int, int, int, int, int, int]]] = {}  # key -> waiting (not head)
        self.heads: list[tuple[float, int, Hashable, int, int]] = []  # (v_finish, seq, key, instance, start)
        self.version = 0
        self.busy_ns = 0
        self.bytes = 0

    def advance(self, now: int) -> None:
        if self.n_active:
            self.v += (now - self.t_last) * self.bw / self.n_active / 1e9
            self.busy_ns += now - self.t_last
        self.t_last = now

    def next_time(self) -> int | None:
        if not self.heads:
            return None
        need = self.heads[0][0] - self.v
        return self.t_last + max(0, math.ceil(need * self.n_active * 1e9 / self.bw - 1e-6))


def simulate(model: StepModel, config: SimConfig,  # noqa: PLR0912, PLR0915 - one event loop reads best whole
             *, on_task: Callable[[TaskRecord], None] | None = None) -> SimResult:
    """Simulate ``config.n_workers`` workers running ``config.steps`` steps each; see the module docstring.

    ``on_task``, when given, is called with every finished task (in completion order) so that callers can
    stream them; ``config.record_tasks`` keeps them in the result instead.
    """
    link = link_model(config.link)
    policy = resolve_policy(model, config)
    rng = np.random.default_rng(config.seed)
    n, n_workers, n_steps = model.n_tasks, config.n_workers, config.steps
    pull_bw = config.pull_bandwidth_bytes_per_s or model.link.pull_bandwidth_bytes_per_s
    push_bw = config.push_bandwidth_bytes_per_s or model.link.push_bandwidth_bytes_per_s
    latency = model.link.latency_ns if config.latency_ns is None else config.latency_ns
    ps_cap = config.ps_threads or model.ps_threads
    w_cap = config.worker_threads or model.worker_threads
    kinds = [int(k) for k in model.kinds]
    dur, size, delay, rank = list(model.dur_ns), list(model.size_bytes), list(model.delay_ns), list(model.rank)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for t in range(n):
        for p in model.preds(t):
            succ[p].append(t)
            indeg[t] += 1
    roots = [t for t in range(n) if indeg[t] == 0]
    ps_kinds = {int(k) for k in PS_KINDS}
    spread = config.start_spread_ns
    if spread is None:
        spread = critical_path_ns(model, pull_bw, push_bw, latency)
    offsets = [0] + [int(x) for x in rng.integers(0, max(1, spread), size=n_workers - 1)]

    dirs = (_Direction(pull_bw, link), _Direction(push_bw, link))
    transfer_cap = config.ps_transfer_bytes_per_s
    record = config.record_tasks or on_task is not None
    records: list[TaskRecord] = []
    heap: list[tuple[int, int, int, int, Any]] = []
    seq = 0
    n_events = 0

    remaining: list[list[int]] = [[] for _ in range(n_workers)]
    done_count = [0] * n_workers
    cur_step = [0] * n_workers
    prio: list[list[int]] = [[] for _ in range(n_workers)]
    ready_at: list[list[int]] = [[0] * n if record else [] for _ in range(n_workers)]
    started_at: list[list[int]] = [[0] * n if record else [] for _ in range(n_workers)]
    starts: list[list[int]] = [[] for _ in range(n_workers)]
    ends: list[list[int]] = [[] for _ in range(n_workers)]
    # CPUs: index 0..n_workers-1 workers, n_workers = the PS
    cpu_cap = [w_cap] * n_workers + [ps_cap]
    cpu_free: list[list[int]] = [list(range(c)) for c in cpu_cap]
    cpu_queue: list[list[tuple[int, int, int, int]]] = [[] for _ in cpu_cap]  # (key, seq, worker, task)
    ps_busy = 0
    ps_running = 0
    ps_t = 0
    snapshots: list[tuple[int, int, int, int, int, int]] = []

    def push(time: int, kind: int, payload: Any) -> None:
        nonlocal seq
        heapq.heappush(heap, (time, kind, seq, kind, payload))
        seq += 1

    def start_step(w: int, now: int) -> None:
        remaining[w] = indeg.copy()
        done_count[w] = 0
        starts[w].append(now)
        prio[w] = list(policy.priorities(model, rng))
        for t in roots:
            ready(w, t, now + delay[t], now)

    def ready(w: int, t: int, at: int, now: int) -> None:
        if at > now:
            push(at, _READY, (w, t))
        else:
            dispatch(w, t, now)

    def dispatch(w: int, t: int, now: int) -> None:
        nonlocal seq
        if record:
            ready_at[w][t] = now
        k = kinds[t]
        if k in (1, 2):  # PULL, PUSH
            if latency:
                push(now + latency, _READY, (w, ~t))
            else:
                arrive(w, t, now)
            return
        cpu = n_workers if k in ps_kinds else w
        if dur[t] == 0 and not cpu_queue[cpu]:
            finish(w, t, now, now, -1)
            return
        key = rank[t] if cpu < n_workers else now
        heapq.heappush(cpu_queue[cpu], (key, seq, w, t))
        seq += 1
        run_cpu(cpu, now)

    def ps_account(now: int, change: int) -> None:
        nonlocal ps_busy, ps_running, ps_t
        ps_busy += ps_running * (now - ps_t)
        ps_t = now
        ps_running += change

    def run_cpu(cpu: int, now: int) -> None:
        queue, free = cpu_queue[cpu], cpu_free[cpu]
        while queue and free:
            _, _, w, t = heapq.heappop(queue)
            slot = heapq.heappop(free)
            if record:
                started_at[w][t] = now
            if cpu == n_workers:
                ps_account(now, 1)
            push(now + dur[t], _CPU_DONE, (cpu, slot, w, t))

    def arrive(w: int, t: int, now: int) -> None:
        nonlocal seq
        d = dirs[0 if kinds[t] == 1 else 1]
        d.advance(now)
        instance = seq
        seq += 1
        key = link.queue_of(worker=w, transfer=instance)
        q = d.queues.get(key)
        if q is None:  # the queue is idle: serve at once
            d.queues[key] = []
            start_head(d, key, instance, w, t, now)
        else:
            heapq.heappush(q, (now, prio[w][t], instance, w, t, 0))  # arrival order, then the policy's
        schedule(d)
        rebalance(now)

    def rebalance(now: int) -> None:
        """Re-share the PS's transfer rate after a direction went busy or idle."""
        if transfer_cap is None:
            return
        active = [d for d in dirs if d.n_active]
        rates = dict(zip(map(id, active), transfer_shares(transfer_cap, [d.link_bw for d in active]), strict=True))
        for d in dirs:
            rate = rates.get(id(d), d.link_bw)
            if rate != d.bw:
                d.advance(now)
                d.bw = rate
                schedule(d)

    def start_head(d: _Direction, key: Hashable, instance: int, w: int, t: int, now: int) -> None:
        heapq.heappush(d.heads, (d.v + size[t], instance, key, w * n + t, now))
        d.n_active += 1

    def schedule(d: _Direction) -> None:
        d.version += 1
        at = d.next_time()
        if at is not None:
            push(at, _LINK, (d, d.version))

    def finish(w: int, t: int, start: int, now: int, slot: int) -> None:  # noqa: PLR0912 - the hot path, inlined
        stack = [(t, start, slot)]
        while stack:
            task, st, sl = stack.pop()
            if record:
                rec = TaskRecord(worker=w, step=cur_step[w], task=task, ready_ns=ready_at[w][task], start_ns=st,
                                 end_ns=now, slot=sl)
                if config.record_tasks:
                    records.append(rec)
                if on_task is not None:
                    on_task(rec)
            rem = remaining[w]
            for s in succ[task]:
                rem[s] -= 1
                if rem[s] == 0:
                    at = now + delay[s]
                    k = kinds[s]
                    if at > now:
                        push(at, _READY, (w, s))
                    elif k not in (1, 2) and dur[s] == 0 and not cpu_queue[n_workers if k in ps_kinds else w]:
                        if record:
                            ready_at[w][s] = now
                        stack.append((s, now, -1))
                    else:
                        dispatch(w, s, now)
            done_count[w] += 1
            if done_count[w] == n:
                ends[w].append(now)
                ps_account(now, 0)
                for d in dirs:
                    d.advance(now)
                snapshots.append((now, dirs[0].busy_ns, dirs[1].busy_ns, ps_busy, dirs[0].bytes, dirs[1].bytes))
                cur_step[w] += 1
                if cur_step[w] < n_steps:
                    at = now + config.step_gap_ns
                    if at > now:
                        push(at, _STEP, w)
                    else:
                        start_step(w, now)

    for w in range(n_workers):
        push(offsets[w], _STEP, w)
    now = 0
    while heap:
        now, kind, _, _, payload = heapq.heappop(heap)
        n_events += 1
        if kind == _CPU_DONE:
            cpu, slot, w, t = payload
            heapq.heappush(cpu_free[cpu], slot)
            if cpu == n_workers:
                ps_account(now, -1)
            finish(w, t, started_at[w][t] if record else 0, now, slot)
            run_cpu(cpu, now)
        elif kind == _LINK:
            d, version = payload
            if version != d.version:
                continue
            d.advance(now)
            done = []
            while d.heads and d.heads[0][0] <= d.v + _EPS_BYTES:
                _, _, key, inst, start = heapq.heappop(d.heads)
                d.n_active -= 1
                q = d.queues[key]
                if q:
                    _, _, nxt, nw, nt, _ = heapq.heappop(q)
                    start_head(d, key, nxt, nw, nt, now)
                else:
                    del d.queues[key]
                w, t = divmod(inst, n)
                d.bytes += size[t]
                done.append((w, t, start))
            schedule(d)
            rebalance(now)
            for w, t, start in done:
                finish(w, t, start, now, -1)
        elif kind == _READY:
            w, t = payload
            if t < 0:
                arrive(w, ~t, now)
            else:
                dispatch(w, t, now)
        else:
            start_step(payload, now)
    return SimResult(
        config=config, pull_bandwidth_bytes_per_s=pull_bw, push_bandwidth_bytes_per_s=push_bw, latency_ns=latency,
        ps_threads=ps_cap, worker_threads=w_cap,
        step_start_ns=tuple(tuple(s) for s in starts), step_end_ns=tuple(tuple(e) for e in ends), end_ns=now,
        link_busy_ns=(dirs[0].busy_ns, dirs[1].busy_ns), link_bytes=(dirs[0].bytes, dirs[1].bytes),
        ps_busy_ns=ps_busy, n_events=n_events, snapshots=tuple(snapshots), tasks=tuple(records),
    )


# ------------------------------------------------------------------------------------------------- metrics


def measurement_window(result: SimResult) -> tuple[int, int, int]:
    """(from_ns, to_ns, steps ending in between): after every worker's first step, until the first worker
    finishes its last. With one step per worker, the whole run."""
    ends = result.step_end_ns
    t_a = max(e[0] for e in ends)
    t_b = min(e[-1] for e in ends)
    if t_b > t_a:
        count = sum(1 for e in ends for x in e if t_a < x <= t_b)
        if count:
            return t_a, t_b, count
    first = min(s[0] for s in result.step_start_ns)
    return first, result.end_ns, sum(len(e) for e in ends)


def steps_per_s(result: SimResult) -> float:
    """Global-step increments per second over all workers, in the steady window of :func:`measurement_window`."""
    t_a, t_b, count = measurement_window(result)
    return count * 1e9 / max(1, t_b - t_a)


def step_time_ns(result: SimResult, worker: int = 0) -> list[int]:
    """Durations of ``worker``'s steps."""
    return [e - s for s, e in zip(result.step_start_ns[worker], result.step_end_ns[worker], strict=True)]


def _window_busy(result: SimResult, column: int) -> tuple[int, int]:
    """(busy amount, window length) of snapshot ``column`` over the measurement window."""
    t_a, t_b, _ = measurement_window(result)
    at = {s[0]: s for s in result.snapshots}
    if t_a in at and t_b in at:
        return at[t_b][column] - at[t_a][column], t_b - t_a
    totals = (result.end_ns, *result.link_busy_ns, result.ps_busy_ns, *result.link_bytes)
    return totals[column], result.end_ns


def link_utilisation(result: SimResult, direction: str) -> float:
    """Bytes ``direction`` (``pull``/``push``) carried in the measurement window / what its bandwidth allows
    there. Without a PS transfer limit a busy link runs at full rate, so this is also its busy fraction."""
    moved, span = _window_busy(result, 4 + DIRECTIONS.index(direction))
    bw = result.pull_bandwidth_bytes_per_s if direction == "pull" else result.push_bandwidth_bytes_per_s
    return moved * 1e9 / max(1, bw * span)


def ps_transfer_utilisation(result: SimResult) -> float:
    """Bytes the PS sent and received / what its transfer rate allows in the measurement window (0 when
    ``ps_transfer_bytes_per_s`` is unset)."""
    cap = result.config.ps_transfer_bytes_per_s
    if cap is None:
        return 0.0
    pulled, span = _window_busy(result, 4)
    pushed, _ = _window_busy(result, 5)
    return (pulled + pushed) * 1e9 / max(1, cap * span)


def ps_cpu_utilisation(result: SimResult) -> float:
    """PS CPU thread-time used / (threads x measurement window)."""
    busy, span = _window_busy(result, 3)
    return busy / max(1, result.ps_threads * span)


def link_bound_steps_per_s(model: StepModel, result: SimResult) -> float:
    """The most steps per second the link allows: each direction must carry one step's bytes per step."""
    bounds = [bw / b for bw, b in ((result.pull_bandwidth_bytes_per_s, model.bytes_of(TaskKind.PULL)),
                                   (result.push_bandwidth_bytes_per_s, model.bytes_of(TaskKind.PUSH))) if b > 0]
    return min(bounds) if bounds else math.inf


def ps_bound_steps_per_s(model: StepModel, result: SimResult) -> float:
    """The most steps per second the PS CPU allows."""
    work = sum(d for d, k in zip(model.dur_ns, model.kinds, strict=True) if k in PS_KINDS)
    return result.ps_threads * 1e9 / work if work else math.inf


def calibrate_link(model: StepModel, *, config: SimConfig | None = None, tolerance: float = 0.002) -> StepModel:
    """The model with both link bandwidths scaled by one factor so that one worker reproduces the trace's
    measured step time (``model.measured_step_ns``); latency and the pull/push ratio stay as estimated.

    Why: on the traced machine a transfer's duration is set by gRPC's copies and the two processes' CPU
    sharing as much as by bytes, so the busy-time estimate (:func:`tracegen.model.estimate_link`) is only
    right up to a factor; this fits that one factor, by bisection on a log scale (the step time does not grow
    with bandwidth). When no factor in [1/1024, 1024] reaches the measured time (the step is bound by compute
    and dispatch gaps), the estimate is returned unchanged and its ``method`` says so.
    """
    if model.measured_step_ns <= 0:
        return model
    base = config or SimConfig()
    base = dataclasses.replace(base, n_workers=1, steps=1, record_tasks=False, pull_bandwidth_bytes_per_s=None,
                               push_bandwidth_bytes_per_s=None)
    target = model.measured_step_ns
    link = model.link

    def step_ns(log2_factor: float) -> int:
        f = 2.0 ** log2_factor
        scaled = dataclasses.replace(
            model, link=dataclasses.replace(link, pull_bandwidth_bytes_per_s=max(1, round(
                link.pull_bandwidth_bytes_per_s * f)), push_bandwidth_bytes_per_s=max(1, round(
                    link.push_bandwidth_bytes_per_s * f))))
        return step_time_ns(simulate(scaled, base))[0]

    lo, hi = -10.0, 10.0
    if step_ns(hi) > target * (1 + tolerance) or step_ns(lo) < target * (1 - tolerance):
        return dataclasses.replace(model, link=dataclasses.replace(
            link, method=link.method + "; calibration impossible (step not bound by the link), used as is"))
    for _ in range(60):
        mid = (lo + hi) / 2
        got = step_ns(mid)
        if abs(got - target) <= target * tolerance / 2:
            lo = hi = mid
            break
        if got > target:
            lo = mid
        else:
            hi = mid
    f = 2.0 ** ((lo + hi) / 2)
    return dataclasses.replace(model, link=dataclasses.replace(
        link, pull_bandwidth_bytes_per_s=max(1, round(link.pull_bandwidth_bytes_per_s * f)),
        push_bandwidth_bytes_per_s=max(1, round(link.push_bandwidth_bytes_per_s * f)),
        method=f"{link.method}, scaled x{f:.3g} so that one worker reproduces the measured step time"))
