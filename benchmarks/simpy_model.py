"""A plain SimPy model of the job :func:`tracegen.simulate.simulate` runs: the yardstick for tracegen's engine.

N asynchronous workers share one PS, modelled the way a SimPy user would write it: one process per worker and
one per task instance, resources for everything that queues, ``env.timeout`` for everything that takes time.
It covers the configuration where tracegen's own resources reduce to plain queues, so that it can be written
without tracegen's flow-level machinery:

- the ``fifo`` link model: each link direction (pull, push) is one ``simpy.PriorityResource`` of capacity 1, a
  transfer holds it while it moves at the connection's rate; among transfers requested at the same nanosecond
  the policy's priority goes first (tracegen queues by (request time, priority)), so the request's priority is
  ``(now_ns, policy priority)`` and the queue is first come, first served otherwise; and since a request to a free
  resource is granted at once, the transfers of one nanosecond make their requests together, in the policy's
  order, once nothing else is left to happen at that nanosecond (tracegen's ``LAUNCH``);
- the trace's own link (:func:`tracegen.simulate.resolve_link` with no ``link_spec``, or any link whose rate at
  one connection is the same whether or not the other direction is busy) and no PS CPU per transfer request
  (``rpc_cpu_ns`` = (0, 0), no CFS quota, at least as many PS cores as PS threads): the PS's CPU is then
  ``ps_threads`` threads each running an op at full speed, in arrival order — a ``simpy.Resource``;
- one PS shard and workers of equal speed.

The rest is the job as :mod:`tracegen.simulate` describes it: worker 0 starts at 0 and the others at offsets
drawn from ``numpy.random.default_rng(seed)``; at each step start the worker draws the step's traced timing
(its variant) and the policy's priorities from the same generator, in the same order (step starts in time
order), so both models see the same draws as long as they agree on that order. The policy's priorities
(:func:`policy_priorities`) and which step-start pull takes which traced request moment under them
(:func:`requested_in_order`) are worked out here from what :mod:`tracegen.policy` says they mean, not with its
functions, so that a bug in tracegen's order cannot move both models alike. A task becomes ready
``delay_ns`` after its last predecessor finished; worker ops take one of the worker's threads, lowest trace
rank first; PS ops a PS thread; a pull's request crosses the push direction (the link's latency plus that
direction's queue delay when it is busy), then the pull moves; a push moves the link's latency after its
gradient exists. The next step starts ``step_gap_ns`` after the last task, plus the pull direction's queue
delay when busy. Steps per second come from :func:`tracegen.metrics.steps_per_s` on a
:class:`~tracegen.simulate.SimResult` holding the step times, so the measurement window is tracegen's.

Run: ``python benchmarks/simpy_model.py [trace_dir] [n_workers]`` prints both models' steps/s.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import simpy

from tracegen.link import PULL, PUSH, LinkSpec
from tracegen.metrics import steps_per_s
from tracegen.model import PS_KINDS, StepModel, StepTiming, TaskKind
from tracegen.simulate import SimConfig, SimResult, critical_path_ns, resolve_link

Process = Generator[simpy.Event, Any, None]


def check_supported(model: StepModel, config: SimConfig, spec: LinkSpec) -> None:
    """ValueError unless ``config`` is a job this model reproduces (module docstring)."""
    ps_threads = config.ps_threads or model.ps_threads
    problems = {
        "link model is not fifo": config.link != "fifo",
        "several PS shards": len(set(config.ps_shard_of_task)) > 1,
        "uneven worker speeds": any(f != 1 for f in config.worker_speed),
        "PS CPU per transfer request": any(c != 0 for c in spec.rpc_cpu_ns),
        "a CFS quota on the PS": spec.ps_quota is not None,
        "fewer PS cores than PS threads": spec.ps_cores is not None and spec.ps_cores < ps_threads,
        "a link slowed by two-way traffic": any(spec.capacity(d, 1, False) != spec.capacity(d, 1, True)
                                                for d in (PULL, PUSH)),
    }
    found = [name for name, bad in problems.items() if bad]
    if found:
        raise ValueError(f"the SimPy yardstick does not model: {', '.join(found)}")


def step_start_pulls(model: StepModel) -> list[int]:
    """The pulls a worker requests as its step starts: those nothing on the worker comes before. Found from the
    other end to :func:`tracegen.policy.step_start_pulls`: every task downstream of a task that is not a PS op
    (a worker op, a transfer) waits on the worker; the pulls left are the step-start ones."""
    succ: list[list[int]] = [[] for _ in range(model.n_tasks)]
    for t in range(model.n_tasks):
        for p in model.preds(t):
            succ[p].append(t)
    waits = [False] * model.n_tasks
    stack = [s for t in range(model.n_tasks) if model.kinds[t] not in PS_KINDS for s in succ[t]]
    while stack:
        t = stack.pop()
        if not waits[t]:
            waits[t] = True
            stack.extend(succ[t])
    return [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL and not waits[t]]


def uncontended_ready_ns(model: StepModel, timing: StepTiming) -> list[int]:
    """When each task of one traced step becomes ready (its last predecessor done), nothing contended: every task
    takes its dispatch gap and its duration, at once. A SimPy run of its own, one process per task."""
    env = simpy.Environment()
    done = [env.event() for _ in range(model.n_tasks)]
    ready = [0] * model.n_tasks

    def task(t: int) -> Process:
        preds = model.preds(t)
        if preds:
            yield env.all_of([done[p] for p in preds])
        ready[t] = int(env.now)
        yield env.timeout(timing.delay_ns[t] + timing.dur_ns[t])
        done[t].succeed()

    for t in range(model.n_tasks):
        env.process(task(t))
    env.run()
    return ready


def policy_priorities(model: StepModel, config: SimConfig) -> list[int]:
    """Every task's priority (lower first) under an ordering policy that is the same at every step, as
    tracegen.policy describes them: ``tictac`` the order of first need in the trace (ties by task id); ``fixed``
    the tensors ``config.order`` names in its order, the others after them in trace rank order."""
    if config.policy == "tictac":
        by_need = sorted(range(model.n_tasks), key=lambda t: (model.first_need_ns[t], t))
        place = {t: r for r, t in enumerate(by_need)}
        return [place[t] for t in range(model.n_tasks)]
    if config.policy == "fixed":
        named = {name: i for i, name in enumerate(config.order)}
        return [named.get(name, len(named) + model.rank[t]) for t, name in enumerate(model.names)]
    raise ValueError(f"no fixed priorities for policy {config.policy!r}")


def requested_in_order(model: StepModel, priority: Sequence[int]) -> tuple[StepTiming, ...]:
    """The model's timings with its step-start pulls requested in ``priority`` order (lower first, then task id),
    as tracegen.policy describes it: in each traced step, the moments at which its step-start pulls were requested
    (from step start, nothing contended) are handed out, earliest first, to the pulls in that order; a pull's
    dispatch gap becomes what takes it from ready to its moment, never less than nothing."""
    pulls = step_start_pulls(model)
    in_order = sorted(pulls, key=lambda t: (priority[t], t))
    timings = []
    for timing in model.timings:
        ready = uncontended_ready_ns(model, timing)
        moments = sorted(ready[t] + timing.delay_ns[t] for t in pulls)
        delay = list(timing.delay_ns)
        for t, moment_ns in zip(in_order, moments, strict=True):
            delay[t] = max(0, moment_ns - ready[t])
        timings.append(dataclasses.replace(timing, delay_ns=tuple(delay)))
    return tuple(timings)


class SimpyJob:
    """One simulation: N workers, one PS with its CPU threads, the PS link's two directions."""

    def __init__(self, model: StepModel, config: SimConfig) -> None:
        self.model, self.config = model, config
        self.spec = resolve_link(model, config)
        check_supported(model, config, self.spec)
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(config.seed)
        # the policy's priorities and the order they give the step-start pulls, derived here anew from what
        # tracegen.policy says they mean, not with its functions: a bug there must not move both models alike
        self.fixed_priority = None if config.policy == "tf" else policy_priorities(model, config)
        self.timings = model.timings if self.fixed_priority is None else requested_in_order(model,
                                                                                            self.fixed_priority)
        self.ps_threads = config.ps_threads or model.ps_threads
        self.worker_threads = config.worker_threads or model.worker_threads
        self.ps_cpu = simpy.Resource(self.env, capacity=self.ps_threads)
        self.worker_cpus = [simpy.PriorityResource(self.env, capacity=self.worker_threads)
                            for _ in range(config.n_workers)]
        self.link = (simpy.PriorityResource(self.env, capacity=1), simpy.PriorityResource(self.env, capacity=1))
        self.joining: list[tuple[int, int, int, simpy.Event]] = []  # this nanosecond's transfers, not yet requested
        self.rate_bytes_per_s = tuple(min(self.spec.connection_bytes_per_s[d], self.spec.capacity(d, 1, False))
                                      for d in (PULL, PUSH))
        self.preds = [tuple(model.preds(t)) for t in range(model.n_tasks)]
        self.step_start_ns: list[list[int]] = [[] for _ in range(config.n_workers)]
        self.step_end_ns: list[list[int]] = [[] for _ in range(config.n_workers)]
        # per direction, the bytes of the transfers that have arrived and the one moving (start, size, duration):
        # at every step end a snapshot of the bytes moved, as tracegen takes them, for the rate where the link binds
        self.arrived_bytes = [0.0, 0.0]
        self.moving: list[tuple[int, int, int] | None] = [None, None]
        self.snapshots: list[tuple[int, float, float, float]] = []

    def run(self) -> SimResult:
        """Run every worker's steps; the step times as a SimResult (what tracegen's metrics read)."""
        config = self.config
        spread = config.start_spread_ns
        if spread is None:
            spread = critical_path_ns(self.model, self.spec)
        offsets_ns = [0] + [int(x) for x in self.rng.integers(0, max(1, spread), size=config.n_workers - 1)]
        for w, offset_ns in enumerate(offsets_ns):
            self.env.process(self.worker(w, offset_ns))
        self.env.run()
        return SimResult(config=config, link_spec=self.spec, ps_threads=self.ps_threads,
                         ps_cores=self.spec.ps_cores or float(self.ps_threads), worker_threads=self.worker_threads,
                         step_start_ns=tuple(map(tuple, self.step_start_ns)),
                         step_end_ns=tuple(map(tuple, self.step_end_ns)), end_ns=int(self.env.now), n_events=0,
                         snapshots=tuple(self.snapshots))

    def moved_bytes(self, direction: int) -> float:
        """Bytes ``direction`` has moved so far: what arrived, and the moving transfer's share of its time."""
        moved = self.arrived_bytes[direction]
        if (moving := self.moving[direction]) is not None:
            start_ns, size_bytes, dur_ns = moving
            moved += size_bytes * (self.env.now - start_ns) / dur_ns
        return moved

    def crossing_delay_ns(self, direction: int) -> int:
        """How long a small message crossing ``direction`` waits behind the transfer moving there (0 if idle)."""
        return self.spec.queue_delay(direction, 1) if self.link[direction].count else 0

    def worker(self, w: int, offset_ns: int) -> Process:
        """Worker ``w``: its steps back to back, each one task graph, the next after the PS's reply."""
        yield self.env.timeout(offset_ns)
        n_variants = len(self.model.timings)
        for _ in range(self.config.total_steps):
            self.step_start_ns[w].append(int(self.env.now))
            variant = int(self.rng.integers(n_variants)) if n_variants > 1 else 0
            # tf: a fresh order of the task ids per step, drawn from the run's generator as tracegen draws it
            priority = (self.rng.permutation(self.model.n_tasks).tolist() if self.fixed_priority is None
                        else self.fixed_priority)
            done = [self.env.event() for _ in range(self.model.n_tasks)]
            for t in range(self.model.n_tasks):
                self.env.process(self.task(w, t, variant, priority[t], done))
            yield self.env.all_of(done)
            self.step_end_ns[w].append(int(self.env.now))  # the PS's CPU is not tracked here: 0 core-ns
            self.snapshots.append((int(self.env.now), self.moved_bytes(PULL), self.moved_bytes(PUSH), 0.0))
            # the configured gap, a TF2 coordinator's dispatch gap (the model's), the PS's reply
            yield self.env.timeout(self.config.step_gap_ns + self.model.step_gap_ns + self.crossing_delay_ns(PULL))

    def task(self, w: int, t: int, variant: int, priority: int, done: list[simpy.Event]) -> Process:
        """Task ``t`` of worker ``w``'s step: wait for its predecessors and its dispatch gap, then run."""
        if self.preds[t]:
            yield self.env.all_of([done[p] for p in self.preds[t]])
        timing = self.timings[variant]
        if timing.delay_ns[t]:
            yield self.env.timeout(timing.delay_ns[t])
        kind = self.model.kinds[t]
        if kind == TaskKind.PULL:  # the worker's request crosses the push direction first
            yield self.env.timeout(self.spec.latency_ns + self.crossing_delay_ns(PUSH))
            yield from self.transfer(PULL, self.model.size_bytes[t], priority)
        elif kind == TaskKind.PUSH:  # the PS requested the gradient long before: only the latency
            yield self.env.timeout(self.spec.latency_ns)
            yield from self.transfer(PUSH, self.model.size_bytes[t], priority)
        else:
            if kind in PS_KINDS:  # a PS thread, in arrival order
                request = self.ps_cpu.request()
            else:  # one of the worker's threads, lowest trace rank first
                request = self.worker_cpus[w].request(priority=self.model.rank[t])
            with request:
                yield request
                yield self.env.timeout(timing.dur_ns[t])
        done[t].succeed()

    def transfer(self, direction: int, size_bytes: int, priority: int) -> Process:
        """Move ``size_bytes`` in ``direction``: wait for the direction (first come, first served; the policy's
        order among equal request times), then hold it at the connection's rate."""
        if size_bytes <= 0:
            return
        granted = self.env.event()
        self.joining.append((direction, priority, len(self.joining), granted))
        if len(self.joining) == 1:
            self.env.process(self.launch())
        request = yield granted
        with request:
            yield request
            dur_ns = max(1, math.ceil(size_bytes * 1e9 / self.rate_bytes_per_s[direction] - 1e-6))
            self.moving[direction] = (int(self.env.now), size_bytes, dur_ns)
            yield self.env.timeout(dur_ns)
            self.moving[direction] = None
            self.arrived_bytes[direction] += size_bytes

    def launch(self) -> Process:
        """Once nothing else happens at this nanosecond, request the link for its transfers in the policy's
        order (the first request to a free direction is granted at once, so the order of requests is the order
        of service)."""
        while self.env.peek() == self.env.now:
            yield self.env.timeout(0)
        joining, self.joining = sorted(self.joining, key=lambda j: j[:3]), []
        for direction, priority, _, granted in joining:
            granted.succeed(self.link[direction].request(priority=(self.env.now, priority)))


def simulate_simpy(model: StepModel, config: SimConfig) -> SimResult:
    """The SimPy model's run of ``config`` (supported configurations: module docstring)."""
    return SimpyJob(model, config).run()


def main() -> None:
    """Print both models' steps/s for one trace and N."""
    from parsers.read import read_trace
    from tracegen.model import build_model
    from tracegen.simulate import simulate

    trace = sys.argv[1] if len(sys.argv) > 1 else "data/traces/mlp"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    model = build_model(read_trace(trace))
    config = SimConfig(n_workers=n, link="fifo")
    print(f"{trace}, N={n}: tracegen {steps_per_s(simulate(model, config)):.3f} steps/s, "
          f"SimPy {steps_per_s(simulate_simpy(model, config)):.3f} steps/s")


if __name__ == "__main__":
    main()
