"""Moving a traced step onto catalogue instances (``tracegen/instance.py``): worker ops scaled by the worker's
speed, the PS's work by the PS's, transfers left as they are."""

from __future__ import annotations

import pytest

from parsers import read_trace
from tracegen.instance import on_instances, payload_bytes_per_s
from tracegen.model import StepModel, TaskKind, build_model
from tracegen.plan import traced_hosts

from tracegen_support import PLAN_PROFILE, PLAN_SINGLE, PLAN_TRACE


@pytest.fixture(scope="module")
def model() -> StepModel:
    return build_model(read_trace(PLAN_TRACE))


def test_compute_speed_scales_worker_ops_and_ps_work(model: StepModel) -> None:
    _untraced, traced, _notes = traced_hosts(model, PLAN_PROFILE, PLAN_SINGLE)
    fast = on_instances(model, traced, worker_speed=2.0, ps_speed=4.0)
    for before, after in zip(model.timings, fast.timings, strict=True):
        for t, kind in enumerate(model.kinds):
            if kind == TaskKind.COMPUTE:
                assert after.dur_ns[t] == round(before.dur_ns[t] / 2)
            elif kind in (TaskKind.APPLY, TaskKind.PS_OP):
                assert after.dur_ns[t] == round(traced.ps_work_ns(before.dur_ns[t]) / 4)
            else:
                assert (after.dur_ns[t], after.delay_ns[t]) == (before.dur_ns[t], before.delay_ns[t])
    assert model.timings[0].dur_ns != fast.timings[0].dur_ns  # the model itself is not changed


def test_payload_bytes_per_s_by_hand() -> None:
    assert payload_bytes_per_s(1_000_000_000, 0.9) == 112_500_000  # 1 Gbit/s = 125 MB/s, 90 % of it payload
    assert payload_bytes_per_s(8_000, 0.5) == 500
    assert payload_bytes_per_s(1, 0.5) == 1  # never nothing: a link carries at least a byte a second
