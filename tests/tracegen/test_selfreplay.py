"""The replay held to its traced steps (tracegen/selfreplay.py): a replay slower than the steps is sped up until
it gives their mean back, one already as fast is left alone, and the factor keeps to its bounds."""

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
    replayed_model,
    step_model,
)
from tracegen.synthetic import synthetic_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEEP = ROOT / "data" / "atcap" / "test" / "deep_500mbit_q100_b16k_ps03" / "trace"  # replays slow as it is


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


def test_a_replay_as_fast_as_its_steps_or_faster_is_left_alone() -> None:
    model = small()
    replayed = mean_step_ns(model, 1.0)
    for claimed_ns in (round(replayed), round(replayed * 1.3)):
        claimed = with_traced_steps(model, claimed_ns)
        assert replay_factor(claimed) == 1.0
        assert replayed_model(claimed) is claimed


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
