"""Tracing's cost undone: what is scaled, what is not, and that the factor brings one worker to its measured rate."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.curve import scaling_curve
from tracegen.model import TRANSFER_KINDS, StepModel, build_model
from tracegen.simulate import SimConfig, resolve_link
from tracegen.untraced import (
    MAX_SPEED,
    MISMATCH,
    TOLERANCE,
    fit_untraced,
    mismatch_note,
    one_worker_rate,
    untraced_link,
    untraced_model,
    untraced_speed,
)

SEEDS = 2


@pytest.fixture
def mlp(mlp_trace_dir: pathlib.Path) -> StepModel:
    return build_model(read_trace(mlp_trace_dir))


def config_of(model: StepModel) -> SimConfig:
    return SimConfig(steps=8, warmup_steps=2, link_spec=resolve_link(model, SimConfig()))


def one_worker(model: StepModel, config: SimConfig, speed: float) -> float:
    assert config.link_spec is not None
    alone = SimConfig(steps=config.steps, warmup_steps=config.warmup_steps,
                      link_spec=untraced_link(config.link_spec, speed))
    return scaling_curve(untraced_model(model, speed), alone, (1,), seeds=SEEDS,
                         find_plateau=False).points[0].steps_per_s


def test_ops_and_gaps_shrink_transfers_and_link_capacity_stay(mlp: StepModel) -> None:
    faster = untraced_model(mlp, 2.0)
    for before, after in zip(mlp.timings, faster.timings, strict=True):
        for t, kind in enumerate(mlp.kinds):
            want = before.dur_ns[t] if kind in TRANSFER_KINDS else round(before.dur_ns[t] / 2)
            assert after.dur_ns[t] == want
            assert after.delay_ns[t] == round(before.delay_ns[t] / 2)
    assert faster.size_bytes == mlp.size_bytes
    assert faster.link.pull_bandwidth_bytes_per_s == round(2 * mlp.link.pull_bandwidth_bytes_per_s)
    spec = config_of(mlp).link_spec
    assert spec is not None
    link = untraced_link(spec, 2.0)
    assert link.connection_bytes_per_s == (2 * spec.connection_bytes_per_s[0], 2 * spec.connection_bytes_per_s[1])
    assert (link.alone, link.both) == (spec.alone, spec.both)
    assert untraced_model(mlp, 1.0) is mlp and untraced_link(spec, 1.0) is spec


def test_the_factor_brings_one_worker_to_the_measured_rate(mlp: StepModel) -> None:
    config = config_of(mlp)
    traced = one_worker(mlp, config, 1.0)
    measured = traced * 1.15
    speed, replayed = fit_untraced(mlp, config, measured, seeds=SEEDS)
    assert 1.0 < speed < MAX_SPEED
    assert one_worker(mlp, config, speed) == pytest.approx(measured, rel=2 * TOLERANCE) == replayed


def test_a_replay_already_as_fast_is_left_alone_and_the_factor_is_bounded(mlp: StepModel) -> None:
    config = config_of(mlp)
    traced = one_worker(mlp, config, 1.0)
    assert untraced_speed(mlp, config, traced * 0.8, seeds=SEEDS) == 1.0
    assert untraced_speed(mlp, config, traced * 1000, seeds=SEEDS) == MAX_SPEED


def test_bad_arguments_are_refused(mlp: StepModel) -> None:
    with pytest.raises(ValueError, match=r"got 0\.5"):
        untraced_model(mlp, 0.5)
    with pytest.raises(ValueError, match="link_spec"):
        untraced_speed(mlp, SimConfig(), 10.0, seeds=1)
    with pytest.raises(ValueError, match=r"got -1\.0"):
        untraced_speed(mlp, config_of(mlp), -1.0, seeds=1)


def test_a_measurement_the_replay_cannot_reach_is_reported(mlp: StepModel) -> None:
    """A measured rate 1000 times the replay's: the factor stops at its bound and the note says that N = 1 is not
    pinned; a replay 20 % faster than the measurement is reported too (nothing is slowed down); within 5 %,
    nothing is said."""
    config = config_of(mlp)
    traced = one_worker(mlp, config, 1.0)
    assert one_worker_rate(mlp, config, 1.0, seeds=SEEDS) == pytest.approx(traced)
    measured = traced * 1000
    speed, replayed = fit_untraced(mlp, config, measured, seeds=SEEDS)
    assert speed == untraced_speed(mlp, config, measured, seeds=SEEDS) == MAX_SPEED
    assert replayed == one_worker_rate(mlp, config, speed, seeds=SEEDS)
    note = mismatch_note(replayed, measured, speed)
    assert note is not None and "slower than the untraced single-worker measurement" in note
    assert f"{MAX_SPEED:.2f}x" in note and "not pinned" in note
    faster = mismatch_note(traced, traced / 1.2, 1.0)
    assert faster is not None and "20% faster" in faster
    assert mismatch_note(traced, traced * (1 + MISMATCH / 2), 1.0) is None
