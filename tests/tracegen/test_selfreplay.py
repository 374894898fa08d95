"""The replay held to its traced steps (tracegen/selfreplay.py): a replay slower than the steps is sped up until
it gives their mean back, one faster gets a larger per-transfer latency until it does, one as fast is left alone,
and the factor and the latency keep to their bounds."""

from __future__ import annotations

import dataclasses
import pathlib
import statistics

import pytest

from parsers import read_trace
from tracegen.model import StepModel, build_model
from tracegen.selfreplay import (
    MAX_FACTOR,
    TOLERANCE,
    mean_step_ns,
    raised,
    replay_factor,
    replay_latency_ns,
    replayed_model,
    step_model,
    with_latency,
)
from tracegen.synthetic import synthetic_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEEP = ROOT / "data" / "atcap" / "test" / "deep_500mbit_q100_b16k_ps03" / "trace"  # replays slow as it is
TF2 = ROOT / "data" / "traces" / "tf2_pss"  # replays fast as it is: each transfer costs more than the shortest


def small() -> StepModel:
    return synthetic_model(n_params=4, n_layers_ops=2, param_bytes=400_000, op_dur_ns=1_000_000,
                           bandwidth_bytes_per_s=100_000_000, latency_ns=50_000)


def with_traced_steps(model: StepModel, step_ns: int) -> StepModel:
    """``model`` claiming its traced steps lasted ``step_ns``."""
    return dataclasses.replace(model, timings=tuple(dataclasses.replace(t, step_ns=step_ns) for t in model.timings))


def test_a_replay_slower_than_its_steps_is_sped_up_to_their_mean() -> None:
    model = small()
    replayed = mean_step_ns(model, 1.0)
    claimed = with_traced_steps(model, round(replayed * 0.9))
    factor = replay_factor(claimed)
    assert 1.0 < factor < MAX_FACTOR
    assert mean_step_ns(claimed, factor) == pytest.approx(replayed * 0.9, rel=TOLERANCE)
    fitted = replayed_model(claimed)
    assert fitted.link.pull_bandwidth_bytes_per_s == round(model.link.pull_bandwidth_bytes_per_s * factor)
    assert fitted.link.push_bandwidth_bytes_per_s == round(model.link.push_bandwidth_bytes_per_s * factor)
    assert f"raised {factor:.2f}x" in fitted.link.method
    assert fitted.timings == claimed.timings and fitted.size_bytes == claimed.size_bytes


def test_a_replay_as_fast_as_its_steps_is_left_alone() -> None:
    claimed = with_traced_steps(small(), round(mean_step_ns(small(), 1.0)))
    assert replay_factor(claimed) == 1.0
    assert replay_latency_ns(claimed) == claimed.link.latency_ns
    assert replayed_model(claimed) is claimed


def test_a_replay_faster_than_its_steps_gets_a_larger_latency_until_it_gives_their_mean() -> None:
    model = small()
    replayed = mean_step_ns(model, 1.0)
    claimed = with_traced_steps(model, round(replayed * 1.3))
    assert replay_factor(claimed) == 1.0
    latency = replay_latency_ns(claimed)
    assert latency > model.link.latency_ns
    fitted = replayed_model(claimed)
    assert fitted.link.latency_ns == latency
    assert (fitted.link.pull_bandwidth_bytes_per_s, fitted.link.push_bandwidth_bytes_per_s) == (
        model.link.pull_bandwidth_bytes_per_s, model.link.push_bandwidth_bytes_per_s)  # a cost per transfer, not a rate
    assert mean_step_ns(fitted, 1.0) == pytest.approx(replayed * 1.3, rel=TOLERANCE)
    assert "its latency raised 0.050 -> " in fitted.link.method


def test_the_latency_stays_below_the_steps_it_gives_back() -> None:
    claimed = with_traced_steps(small(), 10**12)  # a thousand seconds a step: transfers in series share it
    latency = replay_latency_ns(claimed)
    assert latency < 10**12
    assert mean_step_ns(with_latency(claimed, latency), 1.0) == pytest.approx(10**12, rel=TOLERANCE)


def test_the_latency_is_never_lowered() -> None:
    with pytest.raises(ValueError, match="'latency_ns' must be at least the estimate's 50000 \\(got 49999\\)"):
        with_latency(small(), 49_999)


def test_steps_no_link_can_give_back_get_the_largest_factor() -> None:
    claimed = with_traced_steps(small(), 1_000)  # a microsecond: the compute alone takes longer
    assert replay_factor(claimed) == MAX_FACTOR


@pytest.mark.parametrize("factor", [0.99, MAX_FACTOR * 1.01])
def test_the_factor_keeps_to_its_bounds(factor: float) -> None:
    with pytest.raises(ValueError, match="'factor' must be from 1 to"):
        raised(small(), factor)


def test_a_bundled_deep_trace_replays_its_steps_mean_once_held_to_it() -> None:
    model = build_model(read_trace(DEEP))
    traced_mean = statistics.fmean(t.step_ns for t in model.timings)
    assert mean_step_ns(model, 1.0) > traced_mean * (1 + TOLERANCE)  # the miss this module is for
    fitted = replayed_model(model)
    assert mean_step_ns(fitted, 1.0) == pytest.approx(traced_mean, rel=TOLERANCE)
    assert step_model(read_trace(DEEP)).link == fitted.link  # what every command simulates


def test_the_bundled_tf2_trace_replays_its_steps_mean_once_held_to_it() -> None:
    model = build_model(read_trace(TF2))
    traced_mean = statistics.fmean(t.step_ns for t in model.timings)
    assert mean_step_ns(model, 1.0) < traced_mean * (1 - TOLERANCE)  # the miss the latency is raised for
    fitted = replayed_model(model)
    assert fitted.link.latency_ns > model.link.latency_ns
    assert mean_step_ns(fitted, 1.0) == pytest.approx(traced_mean, rel=TOLERANCE)
