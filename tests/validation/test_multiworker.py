"""Phase figures of real and simulated multi-worker runs."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.model import build_model
from tracegen.simulate import SimConfig
from validation.multiworker import real_stats, simulated_stats

TESTBED = pathlib.Path(__file__).resolve().parents[2] / "data" / "testbed"
RUNS = sorted(TESTBED.glob("*/workers/n*"))


@pytest.mark.parametrize("run", RUNS[:2], ids=lambda p: f"{p.parent.parent.name}-{p.name}")
def test_real_figures_are_consistent(run: pathlib.Path) -> None:
    dirs = sorted(d for d in run.iterdir() if d.is_dir())
    stats = real_stats(dirs)
    assert stats.n_workers == len(dirs) == int(run.name[1:])
    assert 0 < stats.pull_ms < stats.step_ms and 0 < stats.rest_ms < stats.step_ms
    assert 0.0 <= stats.both_busy <= 1.0


def test_alternating_workers_keep_both_directions_busy() -> None:
    # fifo lets two workers alternate (one pulls while the other pushes); fair sharing keeps them in lock-step
    model = build_model(read_trace(TESTBED / "mlp_200mbit" / "trace"))
    fifo = simulated_stats(model, SimConfig(n_workers=2, steps=6, link="fifo"))
    fair = simulated_stats(model, SimConfig(n_workers=2, steps=6, link="fair"))
    assert fifo.both_busy > 0.2 > fair.both_busy
    assert fifo.step_ms < fair.step_ms
