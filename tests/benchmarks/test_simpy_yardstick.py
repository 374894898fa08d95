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

import pytest

from parsers.read import read_trace
from tracegen.link import uniform_link
from tracegen.metrics import steps_per_s
from tracegen.model import build_model
from tracegen.simulate import SimConfig, resolve_link, simulate

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
