"""How long a prediction's simulations take: before they run, from what is known then (the model's tasks, each
run's N and steps, the runs, the processes), and as they go, from how long those done so far took.

One simulation costs the engine about the same for each task instance it runs (one task of one worker's step)
that takes time: a transfer, or an op that lasts; an op of no duration finishes inside its predecessor's event and
costs next to nothing (:mod:`tracegen.simulate`). Measured with ``time.process_time`` on the eleven bundled
traces (``data/traces/*``, ``data/validation/dev/*/trace``), N = 1..64, 2026-12-05: compiled 0.4-1.1 µs a task
instance (0.75 the middle; the PS's handling of each request, given by a single-worker measurement, is the
upper half), pure Python 6-18 µs (13 the middle). No growth with N worth a constant up to 64: the heap's extra level per
doubling is lost in the spread between models. The C core (:mod:`tracegen.fastcore`), measured the same way on
2026-12-06 on nine of those traces at N = 1, 8, 32 and 64: 0.15-0.50 µs (0.19 the middle; the most at N = 1, where
a run's set-up weighs), against 0.51-1.09 (0.69) compiled on the same runs. A run the C core does not take
(:func:`tracegen.fastcore.takes_config`) costs what the compiled engine costs, and ``predict`` prices it so
(:func:`tracegen.estimate.engine_of`).

The C core's cost of a task instance grows with N, by about its cost at small N for every
:data:`C_CORE_WORKERS_PER_COST` workers (likely its run's state and event heap outgrowing the processor's caches),
measured with ``time.process_time`` on 2026-12-06, one PS shard, 4-10 steps: 0.17-0.19 µs at N = 100 (mlp, cnn,
resnet), 0.27, 0.33 and 0.25 at N = 1000, 0.47 and 0.45 at N = 3000 (mlp, cnn). Whole sweep grids (10 + 2 steps,
one core) took, against their estimate priced flat and priced so: mlp N = 500-3000 in steps of 500, 2.9 s (1.46
flat, 3.57 now); cnn 250-2000 by 250, 4.4 s (1.95, 3.79); resnet 100-1000 by 100, 11.7 s (7.0, 10.3); mlp 1-300,
6.5 s (6.3, 7.1). The compiled engine's grows less (mlp on two shards: 1.28, 1.60 and 1.65 µs at N = 100, 1000
and 3000), and was priced flat until the measurement below.

Runs on several PS shards (``--ps-shards``, which the C core leaves to the compiled engine) cost that engine about
what the same runs on one shard do, measured with ``time.process_time`` on 2026-12-06, 20:58-21:22 UTC (the
compiled engine made to run every run, the least of 2-5 repeats taken in turn, 10 + 2 steps, round-robin
placements; other sessions' tests on the second core at times) on ``data/shards`` (mlp_200mbit_k1, wide_1000mbit_k1,
mlp_200mbit_k2_rr and wide_1000mbit_k3_rr, these two also on their traced PS tasks), ``data/traces`` mlp, cnn,
resnet and tf2_pss and the six ``data/validation/dev`` traces, N = 8-3000: on two shards 1.05 times one (quartiles
0.99-1.10 over 69 pairs), on three 1.10 (1.05-1.15 over 28). Within the spread between models, so not priced apart.
What had moved is the compiled engine's own cost: 0.85-2.5 µs a task instance on one shard over those runs (1.38
the middle; 1.16-1.19 in the machine's quieter stretches), 7.9-9.0 times the C core in runs taken in turn with it
(the C core 0.13-0.34 µs, 0.17-0.22 the middle, as priced; the compiled engine built from the commit before the C
core costs the same, so the engine did not slow down), and estimates of shard runs read 1.7 times too fast.
Priced at 1.2 µs since, at small N (the middle at N = 100 below: 1.20), and N-aware as the C core is, by that
cost once more for every :data:`COMPILED_WORKERS_PER_COST` workers: runs of every N taken in turn (2026-12-06,
21:27-21:30 UTC, the least of 2), mlp, cnn and wide_1000mbit_k1 on one and two shards cost 1.34-1.66 times (1.46
the middle) at N = 1000 what they cost at 100, 1.35-1.75 (1.56) at 3000 (wide on two shards left out: its N = 100
read 2.24 µs, noise); resnet and the dev embed trace, on one and two shards, 1.13-1.60 at 1000 (all nine: 1.42).
The growth slows past 1000, which a line cannot follow: 4000 makes it 1.22 and 1.68 times at 1000 and 3000 (3000
would make it 1.29 and 1.94). A whole grid, ``sweep data/traces/mlp --workers 500,1000,...,3000 --ps-shards 2
--jobs 1`` (10 + 2 steps), took 13.7 and 16.7 s beyond a one-point sweep's start (21:35 UTC), estimated at 14 s so
and at 5.8 s by 0.75 µs flat.

Pure Python (``TRACEGEN_PURE=1``) had moved too, and is priced at 22 µs a task instance since, flat: measured with
``time.process_time`` on 2026-12-06, 21:46-21:49 UTC (10 + 2 steps, each trace's profile as predict takes it, the
least of 2 repeats taken in turn with the compiled engine on the same runs; other sessions on the second core) on
``data/traces`` cnn, mlp, resnet and tf2_pss and the six ``data/validation/dev`` traces, at N = 1, 8 and 32:
14.0-32.7 µs over the 30 runs (quartiles 18.6-24.2, 21.1 the middle), every one above the 13 priced before; by N,
18.5 (14.0-24.2) at 1, 21.4 (17.0-32.7) at 8, 23.2 (19.1-32.5) at 32, the middle of 8 and 32 priced. 15 times the
compiled engine in the middle of those runs (quartiles 8.6-19.2; the compiled engine 1.3-1.4 µs at N = 8 and 32,
most at N = 1, where a run's set-up weighs). A run of 4 + 1 steps an hour before read the same: 13.6-35.0 µs. The
rise from N = 8 to 32 (8 % in the middle) is within the spread between models (deep, embed and the dev resnet the
dearest), so not priced by N.

A synthetic trace (``--emit-traces``) costs what its recorded run costs (recorded runs go to the compiled or pure
engine, never the C core) and the rest, the run's records handed over and its JSON written: 60-84 MB/s of JSON,
measured on 2026-12-06 (after the writer's encoding was cached) with ``write_synthetic_trace`` on mlp at N = 4 and
32, cnn at 16, resnet at 8 and 32 (3 to 250 MB; the whole at 57-73 MB/s; ``bench_simulate.py`` prints the rate of
a 16-worker trace).

Runs in several processes go in batches (:func:`tracegen.curve.scaling_curve`): each batch's runs the longest
first onto whichever process is free, the next batch once its last run is in, and the processes are started
once, each importing numpy and tracegen (about a second, side by side).
"""

from __future__ import annotations

from collections.abc import Sequence

from tracegen.model import TRANSFER_KINDS, StepModel

# one core, a task instance that takes time
SECONDS_PER_TASK = {"C core": 0.19e-6, "compiled (mypyc)": 1.2e-6, "pure Python": 22e-6}
TRACE_WRITE_BYTES_PER_S = 65e6  # a synthetic trace's records and JSON, its run's simulation aside (module docstring)
C_CORE_WORKERS_PER_COST = 1500.0  # N at which a C core task instance costs twice what it does at small N
COMPILED_WORKERS_PER_COST = 4000.0  # as that, for the compiled engine (module docstring)
# the engines whose task instance costs more in a larger run, and how much more (task_s); pure Python's is flat
WORKERS_PER_COST = {"C core": C_CORE_WORKERS_PER_COST, "compiled (mypyc)": COMPILED_WORKERS_PER_COST}
PROCESS_START_S = 1.0  # starting the simulations' processes (spawned: each imports numpy and tracegen)


def busy_tasks(model: StepModel) -> int:
    """The tasks of a step that cost the engine an event of their own: transfers, and ops that last in some
    traced step (an op of no duration in all of them finishes the instant it is ready)."""
    return sum(1 for t, kind in enumerate(model.kinds)
               if kind in TRANSFER_KINDS or any(timing.dur_ns[t] for timing in model.timings))


def task_s(engine: str, n_workers: int) -> float:
    """One core's seconds for a task instance of a run of ``n_workers`` workers with ``engine``: its
    :data:`SECONDS_PER_TASK`, once more for every :data:`WORKERS_PER_COST` workers on the C core and the compiled
    engine (module docstring). The one price of a task instance: every estimate goes through it (predict's and
    validate's :func:`tracegen.estimate.seconds_on_one_core` and :func:`tracegen.estimate.run_seconds`, plan's and
    sweep's :func:`run_s`), and with it the choice of processes and the time left said as runs end."""
    per_cost = WORKERS_PER_COST.get(engine)
    return SECONDS_PER_TASK[engine] * (1.0 + (n_workers / per_cost if per_cost else 0.0))


def run_s(tasks: int, n_workers: int, steps: float, engine: str) -> float:
    """One core's seconds for one simulation of ``n_workers`` workers running ``steps`` steps each (warm-up
    included) of a step of ``tasks`` busy tasks (:func:`busy_tasks`), with ``engine``
    (:func:`tracegen.native.engine`)."""
    return task_s(engine, n_workers) * tasks * n_workers * steps


def wall_s(batches: Sequence[Sequence[float]], jobs: int) -> float:
    """Seconds ``batches`` of runs (each run's one-core seconds) take, one batch after the other, each batch's runs
    in ``jobs`` processes, the longest first onto the process free soonest; with more than one process, starting
    them (:data:`PROCESS_START_S`) too."""
    if jobs <= 1:
        return sum(sum(batch) for batch in batches)
    total = PROCESS_START_S
    for batch in batches:
        free = [0.0] * jobs
        for run in sorted(batch, reverse=True):
            free[free.index(min(free))] += run
        total += max(free)
    return total


def seconds_left(elapsed_s: float, done_s: float, planned_s: float, jobs: int) -> float | None:
    """What is left of work planned to take ``planned_s`` seconds in ``jobs`` processes (:func:`wall_s`), when
    runs estimated at ``done_s`` one-core seconds are done after ``elapsed_s``: the rest of the plan at the pace
    measured so far (this machine's and this model's, not the estimate's). None once the plan is used up (a
    curve that goes on climbing past the N it likely stalls at)."""
    done = (PROCESS_START_S if jobs > 1 else 0.0) + done_s / jobs
    if done <= 0 or done >= planned_s:
        return None
    return (planned_s - done) * elapsed_s / done
