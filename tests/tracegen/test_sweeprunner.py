"""Where a sweep's chunks run (``tracegen/sweeprunner.py``): local worker processes give each chunk the rows the
same chunk gives in this process, and bad job counts or an empty Ray address are refused before any work."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from tracegen.errors import ConfigError
from tracegen.sweep import build_inputs, run_chunk
from tracegen.sweeprunner import LocalRunner, RayRunner

TRACE = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"


def test_local_workers_give_each_chunk_the_rows_it_gives_here() -> None:
    inputs = build_inputs(TRACE, workers=(1, 2, 3), policies=("tf",), seeds=(0,), steps=4, warmup_steps=1)
    points = list(inputs.grid.points())
    chunks = [tuple(points[:2]), tuple(points[2:])]
    got: list[list[Any]] = []
    LocalRunner(2).run(inputs, chunks, got.append)
    assert sorted(map(len, got)) == [1, 2]
    by_id = {row["point_id"]: row for rows in got for row in rows}
    assert by_id == {row["point_id"]: row for chunk in chunks for row in run_chunk(inputs, chunk)}


def test_one_job_runs_each_chunk_in_this_process() -> None:
    """A worker process costs about a second to start, for nothing with one job: its chunks run here, each chunk's
    rows handed over as it finishes, in order."""
    import multiprocessing

    inputs = build_inputs(TRACE, workers=(1, 2, 3), policies=("tf",), seeds=(0,), steps=4, warmup_steps=1)
    points = list(inputs.grid.points())
    chunks = [tuple(points[:2]), tuple(points[2:])]
    got: list[list[Any]] = []
    children: list[int] = []

    def on_rows(rows: list[Any]) -> None:
        children.append(len(multiprocessing.active_children()))
        got.append(rows)

    LocalRunner(1).run(inputs, chunks, on_rows)
    assert children == [0, 0]
    assert got == [run_chunk(inputs, chunk) for chunk in chunks]


@pytest.mark.parametrize("jobs", [0, 4097])
def test_a_job_count_out_of_range_is_refused(jobs: int) -> None:
    with pytest.raises(ConfigError, match=f"'jobs' must be from 1 to 4096 \\(got {jobs}\\)"):
        LocalRunner(jobs)
    with pytest.raises(ConfigError, match="'jobs' must be from 1 to 4096"):
        RayRunner("local", jobs)


def test_an_empty_ray_address_is_refused() -> None:
    with pytest.raises(ConfigError, match="'ray' must be a cluster address such as HOST:6379, auto or local"):
        RayRunner("  ", 1)
