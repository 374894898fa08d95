"""The estimate of how long a prediction's simulations take (tracegen.cost), on given inputs: no clocks."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.cost import PROCESS_START_S, SECONDS_PER_TASK, busy_tasks, run_s, seconds_left, wall_s
from tracegen.model import TRANSFER_KINDS, build_model

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_a_run_costs_each_busy_task_instance_the_same() -> None:
    """Linear in the workers and their steps: the engine's events per worker step do not grow with N enough to
    count (the heap's extra level is lost in the spread between models)."""
    for engine, per_task in SECONDS_PER_TASK.items():
        assert run_s(10, 4, 5, engine) == pytest.approx(per_task * 10 * 4 * 5)
        assert run_s(10, 8, 5, engine) == pytest.approx(2 * run_s(10, 4, 5, engine))
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
    from tracegen.predict import PredictConfig, engine_of

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
    from tracegen.plan import PlanConfig, _engine
    from tracegen.predict import run_engine, seconds_on_one_core
    from tracegen.sweep import build_inputs

    trace = ROOT / "data/traces/mlp"
    one = build_inputs(trace, workers=range(1, 5), ps_shards=(1,))
    two = build_inputs(trace, workers=range(1, 5), ps_shards=(1, 2))
    assert grid_seconds(one) == pytest.approx(seconds_on_one_core(grid_events(one), native.engine()))
    sharded = run_engine(two.grid.sim_config(next(p for p in two.grid.points() if p.ps_shards == 2)))
    assert grid_seconds(two) == pytest.approx(seconds_on_one_core(grid_events(two) / 2, native.engine())
                                              + seconds_on_one_core(grid_events(two) / 2, sharded))
    reference = "pure Python" if native.mypyc_off() else "compiled (mypyc)"
    assert sharded == reference
    model = build_model(read_trace(trace))
    assert _engine(model, {}, PlanConfig(), (0, 1) * (model.n_tasks // 2 + 1)) == reference
    assert _engine(model, {}, PlanConfig(), (0,) * model.n_tasks) == native.engine()


def test_a_synthetic_trace_is_priced_at_writing_its_bytes_not_at_the_c_core() -> None:
    """``--emit-traces`` runs are recorded (never on the C core) and their JSON is written at tens of MB/s: priced
    as a curve's run on the C core, a 250 MB trace that took 10 s was said to take a tenth of a second."""
    from tracegen.cost import TRACE_WRITE_BYTES_PER_S
    from tracegen.predict import TRACE_BYTES_PER_EVENT, PredictConfig, task_events, traces_seconds

    model = build_model(read_trace(ROOT / "data/traces/resnet"))
    config = PredictConfig(emit_traces=(32,))
    steps = config.steps + config.warmup_steps
    written_s = task_events(model, steps * 32) * TRACE_BYTES_PER_EVENT / TRACE_WRITE_BYTES_PER_S
    assert traces_seconds(model, config) > written_s > 10 * run_s(busy_tasks(model), 32, steps, "C core")
    # two traces, of 32 and of 64 workers, take three times what one of 32 does (each N once)
    assert traces_seconds(model, PredictConfig(emit_traces=(32, 64, 32))) == pytest.approx(
        3 * traces_seconds(model, config))
