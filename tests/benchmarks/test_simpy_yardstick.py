"""tracegen's engine against the yardstick of issue 10: a plain SimPy model of the same job
(``benchmarks/simpy_model.py``) gives the same steps/s, within 1 %, on every bundled trace.

Same job: the ``fifo`` link model on the trace's own link, no PS CPU per transfer request (what the SimPy model
covers). Few steps per worker keep it quick; the benchmark ``benchmarks/bench_yardstick.py`` compares the CLI's
defaults.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import sys
from types import ModuleType

import pytest

from parsers.read import read_trace
from tracegen.errors import ModelError
from tracegen.link import uniform_link
from tracegen.metrics import steps_per_s
from tracegen.model import StepModel, build_model
from tracegen.simulate import SimConfig, resolve_link, simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACES = sorted(p.name for p in (ROOT / "data" / "traces").iterdir() if p.is_dir())
TOLERANCE = 0.01


def load_yardstick() -> ModuleType:
    """``benchmarks/simpy_model.py`` as a module (benchmarks is not a package)."""
    name = "simpy_model"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "simpy_model.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def bundled_model(name: str) -> StepModel:
    """The step model of ``data/traces/<name>``; skipped when the trace cannot make one (TF2 profiles have no
    partition graphs)."""
    try:
        return build_model(read_trace(ROOT / "data" / "traces" / name))
    except ModelError as exc:
        pytest.skip(f"{name}: no step model ({exc})")


@pytest.mark.parametrize("trace", TRACES)
def test_simpy_model_gives_tracegens_steps_per_s(trace: str) -> None:
    model = bundled_model(trace)
    simulate_simpy = load_yardstick().simulate_simpy
    for n in (1, 2, 4, 8):
        for seed in (0, 1):
            config = SimConfig(n_workers=n, steps=10, warmup_steps=2, seed=seed, link="fifo")
            ours, theirs = steps_per_s(simulate(model, config)), steps_per_s(simulate_simpy(model, config))
            assert theirs == pytest.approx(ours, rel=TOLERANCE), f"N={n}, seed={seed}"


def test_the_tolerance_sees_the_link() -> None:
    """A model that ignored the link would fail the comparison: on the MLP (link-bound at 8 workers), a link ten
    times faster changes steps/s by far more than the tolerance."""
    model = bundled_model("mlp")
    config = SimConfig(n_workers=8, steps=10, warmup_steps=2, link="fifo")
    traced = resolve_link(model, config)
    fast = uniform_link([10 * r for r in traced.connection_bytes_per_s], latency_ns=traced.latency_ns)
    simulate_simpy = load_yardstick().simulate_simpy
    slow_rate = steps_per_s(simulate_simpy(model, config))
    fast_rate = steps_per_s(simulate_simpy(model, dataclasses.replace(config, link_spec=fast)))
    assert fast_rate > slow_rate * (1 + 10 * TOLERANCE)


def test_simpy_model_refuses_what_it_does_not_model() -> None:
    model = bundled_model("mlp")
    with pytest.raises(ValueError, match="not fifo"):
        load_yardstick().simulate_simpy(model, SimConfig(n_workers=2, link="conn"))
