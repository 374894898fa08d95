"""tracegen's engine against the yardstick of issue 10: a plain SimPy model of the same job
(``benchmarks/simpy_model.py``) gives the same steps/s, within 1 %, on every bundled trace.

Same job: the ``fifo`` link model on the trace's own link, no PS CPU per transfer request (what the SimPy model
covers). Few steps per worker keep it quick; the benchmark ``benchmarks/bench_yardstick.py`` compares the CLI's
defaults.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

from parsers.read import read_trace
from tracegen.link import uniform_link
from tracegen.metrics import steps_per_s
from tracegen.model import StepModel, StepTiming, TaskKind, build_model
from tracegen.policy import TicTac, issued_in_order, step_start_pulls
from tracegen.simulate import SimConfig, resolve_link, simulate
from tracegen.wire import LinkEstimate

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
TOLERANCE = 0.01


@pytest.fixture(scope="module")
def simpy_model(benchmark_module: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_module("simpy_model")


def test_simpy_model_gives_tracegens_steps_per_s(model_dir: pathlib.Path, simpy_model: ModuleType) -> None:
    model = build_model(read_trace(model_dir))  # every bundled RunMetadata trace (conftest's model_dir)
    for n in (1, 2, 4, 8):
        for seed in (0, 1):
            config = SimConfig(n_workers=n, steps=10, warmup_steps=2, seed=seed, link="fifo")
            ours, theirs = steps_per_s(simulate(model, config)), steps_per_s(simpy_model.simulate_simpy(model, config))
            assert theirs == pytest.approx(ours, rel=TOLERANCE), f"N={n}, seed={seed}"


def test_simpy_model_gives_tracegens_steps_per_s_on_a_tf2_profile(simpy_model: ModuleType) -> None:
    """The TF2 profile's model has what TF1 traces lack (the coordinator's gap between steps): both must have it."""
    model = build_model(read_trace(TRACES / "tf2_pss"))
    assert model.step_gap_ns > 0
    for n in (1, 4):
        config = SimConfig(n_workers=n, steps=10, warmup_steps=2, link="fifo")
        ours, theirs = simulate(model, config), simpy_model.simulate_simpy(model, config)
        assert steps_per_s(theirs) == pytest.approx(steps_per_s(ours), rel=TOLERANCE), f"N={n}"


def test_the_tolerance_sees_the_link(simpy_model: ModuleType) -> None:
    """A model that ignored the link would fail the comparison: on the MLP (link-bound at 8 workers), a link ten
    times faster changes steps/s by far more than the tolerance."""
    model = build_model(read_trace(TRACES / "mlp"))
    config = SimConfig(n_workers=8, steps=10, warmup_steps=2, link="fifo")
    traced = resolve_link(model, config)
    fast = uniform_link([10 * r for r in traced.connection_bytes_per_s], latency_ns=traced.latency_ns)
    slow_rate = steps_per_s(simpy_model.simulate_simpy(model, config))
    fast_rate = steps_per_s(simpy_model.simulate_simpy(model, dataclasses.replace(config, link_spec=fast)))
    assert fast_rate > slow_rate * (1 + 10 * TOLERANCE)


def test_simpy_model_refuses_what_it_does_not_model(simpy_model: ModuleType) -> None:
    with pytest.raises(ValueError, match="not fifo"):
        simpy_model.simulate_simpy(build_model(read_trace(TRACES / "mlp")), SimConfig(n_workers=2, link="conn"))


def test_both_models_serve_transfers_requested_together_in_the_policys_order(simpy_model: ModuleType) -> None:
    """Three 1 ms pulls requested at the same nanosecond; the first one's reader computes 5 ms, the others'
    0.1 ms. Served a first, a step takes 6 ms; served last, 8 ms: each model must follow the order it is given,
    the first transfer of the batch included."""
    ms = 1_000_000
    model = StepModel(
        names=("a", "b", "c", "use a", "use b", "use c"), kinds=(TaskKind.PULL,) * 3 + (TaskKind.COMPUTE,) * 3,
        size_bytes=(1_000_000,) * 3 + (0,) * 3, data_preds=((), (), (), (0,), (1,), (2,)), control_preds=((),) * 6,
        rank=tuple(range(6)), first_need_ns=(0,) * 6,
        timings=(StepTiming(dur_ns=(0, 0, 0, 5 * ms, ms // 10, ms // 10), delay_ns=(0,) * 6, step_ns=0),),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=10**9, push_bandwidth_bytes_per_s=10**9, latency_ns=0,
                          method="given"))
    for order, step_ms in ((("a", "b", "c"), 6), (("c", "b", "a"), 8), (("b", "a", "c"), 7)):
        config = SimConfig(n_workers=1, steps=4, warmup_steps=1, link="fifo", policy="fixed", order=order,
                           worker_threads=3)
        ours, theirs = steps_per_s(simulate(model, config)), steps_per_s(simpy_model.simulate_simpy(model, config))
        assert ours == pytest.approx(1000 / step_ms), order
        assert theirs == pytest.approx(ours, rel=TOLERANCE), order


@pytest.mark.parametrize("policy", ["tictac", "reversed"])
def test_both_models_request_a_real_traces_pulls_in_the_policys_order(simpy_model: ModuleType, policy: str) -> None:
    """On a real trace a policy decides which pull takes which traced request moment (tracegen.policy): both
    models alike (a SimPy model that kept the traced order fails both cases, on this fifo link)."""
    model = build_model(read_trace(TRACES / "resnet"))
    names = [model.names[t] for t in step_start_pulls(model)]
    given = {"tictac": {}, "reversed": {"order": tuple(reversed(names))}}[policy]
    for n in (1, 4):
        config = SimConfig(n_workers=n, steps=10, warmup_steps=2, link="fifo",
                           policy="tictac" if policy == "tictac" else "fixed", **given)
        ours, theirs = steps_per_s(simulate(model, config)), steps_per_s(simpy_model.simulate_simpy(model, config))
        assert theirs == pytest.approx(ours, rel=TOLERANCE), f"N={n}"


def test_the_yardsticks_own_request_order_is_tracegens(model_dir: pathlib.Path, simpy_model: ModuleType) -> None:
    """The yardstick derives the policy's priorities and which step-start pull takes which traced request moment
    itself; it used tracegen.policy's (issued_in_order, TicTac), so a bug there moved both models alike and the
    steps/s above agreed. Here the two derivations meet exactly, for TicTac's order, its reverse and the trace's, on
    every bundled trace."""
    for model in (build_model(read_trace(model_dir)), build_model(read_trace(TRACES / "tf2_pss"))):
        assert simpy_model.step_start_pulls(model) == step_start_pulls(model)
        tictac = list(TicTac().priorities(model, np.random.default_rng(0)))
        assert simpy_model.policy_priorities(model, SimConfig(n_workers=1, policy="tictac")) == tictac
        for priority in (tictac, [-p for p in tictac], list(range(model.n_tasks))):
            assert simpy_model.requested_in_order(model, priority) == issued_in_order(model, priority)
