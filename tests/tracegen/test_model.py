from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.errors import ModelError
from tracegen.model import StepModel, TaskKind, build_model, estimate_link, synthetic_model
from tracegen.simulate import SimConfig, calibrate_link, simulate, step_time_ns


def test_real_model_has_every_transfer_and_its_bytes(real_trace_dir: pathlib.Path, real_model: StepModel) -> None:
    trace = read_trace(real_trace_dir)
    step0 = trace.transfers[trace.transfers["step"] == 0]
    assert real_model.count(TaskKind.PULL) == int((trace.rendezvous["direction"] == "pull").sum())
    assert real_model.count(TaskKind.PUSH) == int((trace.rendezvous["direction"] == "push").sum())
    assert real_model.bytes_of(TaskKind.PULL) == int(step0[step0["direction"] == "pull"]["size_bytes"].sum())
    assert real_model.count(TaskKind.APPLY) >= 2
    applies = [t for t in range(real_model.n_tasks) if real_model.names[t].endswith("ResourceApplyGradientDescent")]
    assert applies
    for t in applies:  # every apply op waits for a pushed gradient
        assert any(real_model.kinds[p] == TaskKind.PUSH for p in real_model.data_preds[t])
    # the global-step update is PS work; the step ends when it and every apply are done (all tasks)
    assert real_model.kinds[real_model.names.index("ps:GradientDescent")] == TaskKind.APPLY


def test_one_worker_reproduces_the_measured_step_time(real_model: StepModel) -> None:
    """Issue 3: N=1 simulated from a trace reproduces its measured (median) step time within 5 %, with the
    link as estimated (no calibration: nothing here is fitted to the step time)."""
    for seed in range(3):
        got = step_time_ns(simulate(real_model, SimConfig(n_workers=1, steps=3, seed=seed)))
        assert all(abs(g / real_model.measured_step_ns - 1) <= 0.05 for g in got), (got, real_model.measured_step_ns)


def test_calibration_fits_the_step_time_when_asked(real_model: StepModel) -> None:
    model = calibrate_link(real_model)
    got = step_time_ns(simulate(model, SimConfig(n_workers=1, steps=1)))[0]
    assert abs(got / real_model.measured_step_ns - 1) <= 0.01 or "impossible" in model.link.method


def test_link_estimate_is_positive_and_documented(real_trace_dir: pathlib.Path) -> None:
    est = estimate_link(read_trace(real_trace_dir))
    assert est.pull_bandwidth_bytes_per_s > 0
    assert est.push_bandwidth_bytes_per_s > 0
    assert 0 <= est.latency_ns < 10**8
    assert "representative" in est.method


def test_chrome_timeline_cannot_be_modelled(mlp_trace_dir: pathlib.Path) -> None:
    json_steps = sorted(mlp_trace_dir.glob("*.json"))
    json_steps = [p for p in json_steps if p.name.startswith("step_")]
    if not json_steps:
        pytest.skip("no TF timeline JSON beside the trace")
    with pytest.raises(ModelError, match="partition graphs"):
        build_model(read_trace(json_steps[0]))


def test_synthetic_model_shape() -> None:
    model = synthetic_model(n_params=3, n_layers_ops=2)
    assert model.count(TaskKind.PULL) == model.count(TaskKind.PUSH) == 3
    assert model.count(TaskKind.COMPUTE) == 12
    with pytest.raises(ModelError, match="n_params >= 1"):
        synthetic_model(n_params=0)


def test_median_timing_is_the_per_task_statistic(real_trace_dir: pathlib.Path, real_model: StepModel) -> None:
    trace = read_trace(real_trace_dir)
    median = build_model(trace, timing="median")
    assert median.names == real_model.names and median.link == real_model.link
    ops = trace.ops[trace.ops["node_name"] == "Relu"] if "Relu" in median.names else trace.ops.iloc[:0]
    if not ops.empty:  # the mlp and cnn: Relu ran in every step
        assert median.dur_ns[median.names.index("Relu")] == int(ops["dur_ns"].median())
    with pytest.raises(ModelError, match="'timing' must be one of"):
        build_model(trace, timing="mean")
