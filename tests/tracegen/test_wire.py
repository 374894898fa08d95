"""The link as the trace shows it (:mod:`tracegen.wire`)."""

from __future__ import annotations

import pathlib
import statistics

from parsers import read_trace
from tracegen.metrics import step_time_ns
from tracegen.model import build_model
from tracegen.simulate import SimConfig, simulate
from tracegen.wire import LARGE_TRANSFER_BYTES, busy_time

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"


def test_busy_time_counts_each_instant_once_and_each_period() -> None:
    assert busy_time([]) == (0, 0)
    assert busy_time([(10, 20)]) == (10, 1)
    assert busy_time([(10, 20), (15, 30), (40, 45), (0, 5)]) == (5 + 20 + 5, 3)
    assert busy_time([(10, 20), (20, 25)]) == (15, 1)  # touching intervals make one period
    assert busy_time([(10, 30), (12, 14)]) == (20, 1)  # one inside another


def test_link_rate_is_not_lowered_by_a_small_transfer_that_waited() -> None:
    """mlp at 500 Mbit/s, traced step 0 (real TF): a 4-byte push (the learning rate) is recorded for 17 ms, the two
    large gradients overlap. The push rate estimated from that step is at least their bytes over the time either
    was on the wire (from the later of its record's start and its input's readiness: the gradient ops' ends), so
    that replaying the step alone takes about as long as the step did."""
    trace = read_trace(DATA / "testbed" / "mlp_500mbit" / "trace")
    model = build_model(trace, use_steps=[0])
    tr = trace.transfers[(trace.transfers["step"] == 0) & (trace.transfers["direction"] == "push")]
    large = tr[tr["size_bytes"] >= LARGE_TRANSFER_BYTES]
    small_waits = tr[(tr["size_bytes"] < 1024) & (tr["dur_ns"] > 10**7)]
    assert len(large) == 2 and len(small_waits) >= 1
    ops = trace.ops[trace.ops["step"] == 0]
    ends = {name: int(s + d) for name, s, d in zip(ops["node_name"], ops["start_ns"], ops["dur_ns"], strict=True)}
    ready = {"edge_62_gradients/MatMul_1_grad/tuple/control_dependency_1": ends["gradients/MatMul_1_grad/MatMul_1"],
             "edge_71_gradients/MatMul_grad/MatMul_1": ends["gradients/MatMul_grad/MatMul_1"]}
    spans = sorted((max(int(s), ready[n]), int(s + d))
                   for n, s, d in zip(large["tensor_name"], large["start_ns"], large["dur_ns"], strict=True))
    union_ns = max(e for _, e in spans) - spans[0][0]  # they overlap (checked)
    assert spans[1][0] < spans[0][1]
    assert model.link.push_bandwidth_bytes_per_s >= 0.99 * int(large["size_bytes"].sum()) * 1e9 / union_ns
    replay = step_time_ns(simulate(model, SimConfig(steps=2, warmup_steps=0, seed=0)))
    assert abs(statistics.fmean(replay) / model.timings[0].step_ns - 1) <= 0.05


def test_link_estimate_is_positive_and_documented(real_trace_dir: pathlib.Path) -> None:
    est = build_model(read_trace(real_trace_dir)).link
    assert est.pull_bandwidth_bytes_per_s > 0
    assert est.push_bandwidth_bytes_per_s > 0
    assert 0 <= est.latency_ns < 10**8
    assert "complete traced steps" in est.method
