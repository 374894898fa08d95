"""The estimate of how long a prediction's simulations take (tracegen.cost), on given inputs: no clocks."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.cost import (
    C_CORE_WORKERS_PER_COST,
    COMPILED_WORKERS_PER_COST,
    PROCESS_START_S,
    SECONDS_PER_TASK,
    WORKERS_PER_COST,
    busy_tasks,
    run_s,
    seconds_left,
    task_s,
    wall_s,
)
from tracegen.model import TRANSFER_KINDS, build_model

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_a_run_costs_each_busy_task_instance_the_same_but_a_large_run_costs_the_c_core_more() -> None:
    """Linear in the tasks and steps; in the workers too for the compiled and pure engines. The C core's task
    instance costs more in a larger run (0.17-0.19 us at N = 100, 0.45-0.47 at 3000: tracegen.cost's docstring),
    priced flat, ``sweep --workers 1-3000`` was said to take half of what it took."""
    for engine, per_task in SECONDS_PER_TASK.items():
        assert run_s(10, 4, 5, engine) == pytest.approx(task_s(engine, 4) * 10 * 4 * 5)
        assert run_s(10, 4, 10, engine) == pytest.approx(2 * run_s(10, 4, 5, engine))
        assert run_s(20, 4, 5, engine) == pytest.approx(2 * run_s(10, 4, 5, engine))
        assert task_s(engine, 1) == pytest.approx(per_task, rel=1e-3)  # small runs: the constant measured there
    assert run_s(10, 8, 5, "pure Python") == pytest.approx(2 * run_s(10, 4, 5, "pure Python"))
    assert task_s("pure Python", 3000) == SECONDS_PER_TASK["pure Python"]  # flat: no growth measured
    assert task_s("C core", int(C_CORE_WORKERS_PER_COST)) == pytest.approx(2 * SECONDS_PER_TASK["C core"])
    assert run_s(10, 3000, 5, "C core") > 2 * 30 * run_s(10, 100, 5, "C core")
    # the compiled engine's grows too, more slowly (shard runs, which the C core leaves to it: tracegen.cost)
    compiled = "compiled (mypyc)"
    assert task_s(compiled, int(COMPILED_WORKERS_PER_COST)) == pytest.approx(2 * SECONDS_PER_TASK[compiled])
    assert run_s(10, 3000, 5, compiled) > 30 * run_s(10, 100, 5, compiled)
    assert SECONDS_PER_TASK["pure Python"] > 10 * SECONDS_PER_TASK["compiled (mypyc)"]


def test_ops_of_no_duration_are_not_counted_as_work() -> None:
    """The TF2 trace's 30 ops that never ran (no duration in any traced step) finish inside their predecessor's
    event: counted, its runs were estimated at 71/41 of what they cost."""
    model = build_model(read_trace(ROOT / "data/traces/tf2_pss"))
    idle = [t for t in range(model.n_tasks) if model.kinds[t] not in TRANSFER_KINDS
            and not any(timing.dur_ns[t] for timing in model.timings)]
    assert idle and busy_tasks(model) == model.n_tasks - len(idle)
    mlp = build_model(read_trace(ROOT / "data/traces/mlp"))
    assert busy_tasks(mlp) == mlp.n_tasks  # every task of it takes time in some traced step


def test_batches_run_one_after_the_other_their_runs_side_by_side() -> None:
    assert wall_s([[3.0, 3.0, 3.0]], 1) == 9.0  # one process: the sum
    # three runs of one N in two processes (a plateau probe with three seeds): two after each other on one
    assert wall_s([[3.0, 3.0, 3.0]], 2) == PROCESS_START_S + 6.0
    # the longest first, then each onto the process free soonest: 4 | 1+1+1+1
    assert wall_s([[1.0, 1.0, 4.0, 1.0, 1.0]], 2) == PROCESS_START_S + 4.0
    # a batch waits for its slowest before the next starts; the processes start once
    assert wall_s([[2.0, 1.0], [1.0]], 2) == PROCESS_START_S + 2.0 + 1.0
    assert wall_s([[2.0, 1.0], [1.0]], 3) == PROCESS_START_S + 2.0 + 1.0  # more processes than runs: no faster


def test_what_is_left_goes_at_the_pace_measured_so_far() -> None:
    # one process: a quarter of 20 s done in 10 s, twice as slow as estimated: 30 s left, not 15
    assert seconds_left(10.0, 5.0, 20.0, 1) == pytest.approx(30.0)
    assert seconds_left(2.5, 5.0, 20.0, 1) == pytest.approx(7.5)  # twice as fast: half the estimate's 15
    # two processes: what is done is the processes' start and half the one-core seconds done
    done = PROCESS_START_S + 3.0
    assert seconds_left(8.0, 6.0, 12.0, 2) == pytest.approx((12.0 - done) * 8.0 / done)
    assert seconds_left(8.0, 30.0, 12.0, 2) is None  # past the plan (the curve climbed on): no figure made up
    assert seconds_left(0.0, 0.0, 0.0, 1) is None


def test_runs_the_c_core_does_not_take_are_priced_at_the_engine_that_runs_them() -> None:
    """With the C core on, a run of workers that differ, of several PS shards or on the ``fair`` link still goes
    to the compiled (or pure) engine, three to four times slower: its estimate priced it at the C core's rate."""
    from tracegen import native
    from tracegen.config import PredictConfig
    from tracegen.estimate import engine_of

    plain = PredictConfig()
    assert engine_of(plain) == native.engine()
    others = [PredictConfig(worker_speed=(0.5,)), PredictConfig(worker_link_bits_per_s=(10**8,)),
              PredictConfig(link="fair"), PredictConfig(ps_shard_of_task=(0, 1))]
    reference = "pure Python" if native.mypyc_off() else "compiled (mypyc)"
    for config in others:
        assert engine_of(config) == reference, config
    assert engine_of(PredictConfig(ps_shard_of_task=(0, 0))) == native.engine()  # one shard: the core takes it


def test_a_sweep_and_a_plan_price_their_sharded_runs_at_the_engine_that_runs_them() -> None:
    """``sweep``'s and ``plan``'s "roughly ... on one core" priced every run at the C core's rate, several PS
    shards too, which the compiled (or pure) engine runs three to four times slower."""
    from tracegen import native
    from tracegen.cli_sweep import grid_events, grid_seconds
    from tracegen.estimate import run_engine, task_events
    from tracegen.plan import PlanConfig, _engine
    from tracegen.sweep import build_inputs

    trace = ROOT / "data/traces/mlp"
    one = build_inputs(trace, workers=range(1, 5), ps_shards=(1,))
    two = build_inputs(trace, workers=range(1, 5), ps_shards=(1, 2))
    steps, tasks = one.grid.steps + one.grid.warmup_steps, one.model.n_tasks
    assert grid_seconds(one) == pytest.approx(sum(run_s(tasks, n, steps, native.engine()) for n in range(1, 5)))
    assert grid_events(one) == pytest.approx(task_events(one.model, steps * sum(range(1, 5))))
    sharded = run_engine(two.grid.sim_config(next(p for p in two.grid.points() if p.ps_shards == 2)))
    assert grid_seconds(two) == pytest.approx(sum(run_s(tasks, n, steps, engine) for n in range(1, 5)
                                                  for engine in (native.engine(), sharded)))
    reference = "pure Python" if native.mypyc_off() else "compiled (mypyc)"
    assert sharded == reference
    model = build_model(read_trace(trace))
    assert _engine(model, {}, PlanConfig(), (0, 1) * (model.n_tasks // 2 + 1)) == reference
    assert _engine(model, {}, PlanConfig(), (0,) * model.n_tasks) == native.engine()


def test_a_synthetic_trace_is_priced_at_writing_its_bytes_not_at_the_c_core() -> None:
    """``--emit-traces`` runs are recorded (never on the C core) and their JSON is written at tens of MB/s: priced
    as a curve's run on the C core, a 250 MB trace that took 10 s was said to take a tenth of a second."""
    from tracegen.config import PredictConfig
    from tracegen.cost import TRACE_WRITE_BYTES_PER_S
    from tracegen.estimate import TRACE_BYTES_PER_EVENT, task_events, traces_seconds

    model = build_model(read_trace(ROOT / "data/traces/resnet"))
    config = PredictConfig(emit_traces=(32,))
    steps = config.steps + config.warmup_steps
    written_s = task_events(model, steps * 32) * TRACE_BYTES_PER_EVENT / TRACE_WRITE_BYTES_PER_S
    assert traces_seconds(model, config) > written_s > 10 * run_s(busy_tasks(model), 32, steps, "C core")
    # two traces, of 32 and of 64 workers, take what each does alone (each N once, at its own N's price)
    assert traces_seconds(model, PredictConfig(emit_traces=(32, 64, 32))) == pytest.approx(
        traces_seconds(model, config) + traces_seconds(model, PredictConfig(emit_traces=(64,))))


def test_a_sweep_and_a_plan_price_a_large_run_above_its_events_at_the_small_run_rate() -> None:
    """``sweep --workers 1-3000`` said about 10 minutes for what took twice that and more: every task instance was
    priced at the C core's cost in runs of up to 64 workers, and in a run of thousands it costs two to three times
    that (tracegen.cost's docstring). sweep and plan now price each run at its N."""
    from tracegen import native
    from tracegen.cli_sweep import grid_seconds
    from tracegen.link import uniform_link
    from tracegen.plan import WARMUP_STEPS, PlanConfig, _likely_seconds
    from tracegen.sweep import build_inputs

    if native.engine() != "C core":
        pytest.skip(f"the C core's growth with N is what this holds to; the engine here is the {native.engine()}")
    trace = ROOT / "data/traces/mlp"
    small, large = (build_inputs(trace, workers=(n,)) for n in (100, 3000))
    assert grid_seconds(large) > 2 * 30 * grid_seconds(small)
    model, links = build_model(read_trace(trace)), {"mid": uniform_link((1.25e8, 1.25e8))}
    worker_steps = {n: n * (PlanConfig().sim_config(n, None).steps + WARMUP_STEPS) for n in (100, 3000)}
    small_s, large_s = (_likely_seconds(model, links, PlanConfig(workers=(n,))) for n in (100, 3000))
    assert large_s > 2 * small_s * worker_steps[3000] / worker_steps[100]


def test_predicts_estimates_price_each_n_at_the_one_price_of_a_task_instance() -> None:
    """predict's "roughly ... on one core", its refusals and its choice of processes priced every task instance at
    the C core's cost in runs of up to 64 workers (``seconds_on_one_core``), while sweep and plan priced it at its
    N: a run of 3000 workers costs a C core task instance (1 + 3000 / 1500) / (1 + 10 / 1500) times what one of
    10 does (C_CORE_WORKERS_PER_COST; the compiled engine's by COMPILED_WORKERS_PER_COST), pure Python's flat."""
    from tracegen.config import PredictConfig
    from tracegen.estimate import EVENTS_PER_TASK, engine_of, estimated_events, estimated_seconds

    model = build_model(read_trace(ROOT / "data/traces/mlp"))
    small, large = PredictConfig(workers=(10,)), PredictConfig(workers=(3000,))
    engine = engine_of(small)
    per_event = {n: estimated_seconds(model, c) / estimated_events(model, c) for n, c in ((10, small), (3000, large))}
    assert per_event[10] == pytest.approx(task_s(engine, 10) / EVENTS_PER_TASK)
    per_cost = WORKERS_PER_COST.get(engine)
    growth = (1 + 3000 / per_cost) / (1 + 10 / per_cost) if per_cost else 1
    assert per_event[3000] / per_event[10] == pytest.approx(growth)
    both = PredictConfig(workers=(10, 3000))  # a curve: each N at its own price
    assert estimated_seconds(model, both) == pytest.approx(estimated_seconds(model, small)
                                                           + estimated_seconds(model, large))


def test_predicts_curve_estimate_prices_the_busy_tasks_as_its_runs_are_priced() -> None:
    """predict's and validate's choice of processes (``estimated_seconds``) priced every task, its progress
    (``run_seconds``) the busy ones: on ``tf2_pss`` (35 of 71 tasks busy) the two disagreed by twice."""
    from tracegen.config import PredictConfig
    from tracegen.cost import busy_tasks
    from tracegen.estimate import estimated_seconds, run_seconds

    model = build_model(read_trace(ROOT / "data/traces/tf2_pss"))
    assert busy_tasks(model) < model.n_tasks  # what makes the two counts differ
    config = PredictConfig(workers=(4,), seeds=1)
    assert estimated_seconds(model, config, workers=(4,)) == pytest.approx(run_seconds(model, config)(4))
