"""Leave one traced step out (``tracegen/replay.py``): each held-out step predicted from the others, on one PS or
on the PS tasks the job was traced with."""

from __future__ import annotations

import pathlib

from parsers import read_trace
from tracegen.model import build_model, complete_steps
from tracegen.replay import leave_one_out

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"


def test_leave_one_step_out_predicts_steps_it_has_not_seen(real_trace_dir: pathlib.Path) -> None:
    """A model built from the other traced steps predicts the mean of held-out steps (the figure is printed by
    benchmarks/leave_one_out.py for every trace in data/); each held-out step is predicted from steps that do
    not include it."""
    result = leave_one_out(read_trace(real_trace_dir), steps=20)
    assert {h.step for h in result.held_out} == set(complete_steps(read_trace(real_trace_dir))[0])
    assert abs(result.error_of_mean) <= 0.10


def test_leave_one_step_out_keeps_a_multi_ps_trace_on_its_ps_tasks() -> None:
    """A job traced with two PS tasks (real TF, data/shards/): each held-out step is replayed with every parameter
    on its traced PS and its own link, as predict does; on one link its bytes took twice the time (+61 %)."""
    trace = read_trace(DATA / "shards" / "test" / "mlp_200mbit_k2_greedy" / "trace")
    assert build_model(trace).traced_ps_task
    assert abs(leave_one_out(trace, steps=20).error_of_mean) <= 0.05
