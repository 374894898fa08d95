"""Staleness: which parameter each pull reads and each apply updates, and how many updates come in between."""

from __future__ import annotations

import argparse
import json
import pathlib

import pytest

from parsers import read_trace
from tracegen.cli_predict import add_predict_arguments, run_predict
from tracegen.config import PAYLOAD_FRACTION
from tracegen.errors import ConfigError
from tracegen.metrics import measurement_window, staleness
from tracegen.model import TaskKind, build_model
from tracegen.simulate import SimConfig, SimResult, simulate
from tracegen.synth import write_synthetic_trace
from tracegen.synthetic import synthetic_model
from tracegen.variables import variable_map

from tracegen_support import MS, shared_variable_model


def test_two_workers_that_read_together_apply_one_after_the_other() -> None:
    """Both read version 0; the PS applies one gradient, then the other: staleness 0, then 1."""
    config = SimConfig(n_workers=2, steps=1, warmup_steps=0, start_spread_ns=0, ps_threads=1, record_tasks=True)
    result = simulate(shared_variable_model(), config)
    assert sorted(result.staleness_updates()[:, 2].tolist()) == [0, 1]
    applies = sorted((r.end_ns, r.staleness) for r in result.tasks if r.task == 5)
    assert [s for _, s in applies] == [0, 1]
    assert all(r.staleness == -1 for r in result.tasks if r.task != 5)


def test_one_worker_is_never_stale_and_more_workers_are_staler(mlp_trace_dir: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    n_vars = variable_map(model).n_variables
    alone = simulate(model, SimConfig(n_workers=1, steps=6))
    assert alone.staleness_updates()[:, 2].tolist() == [0] * (6 * n_vars)  # every measured update counted, none stale
    means = [staleness([simulate(model, SimConfig(n_workers=n, steps=6, seed=s)) for s in range(2)]).mean
             for n in (2, 4, 8)]
    assert means[0] > 0 and means == sorted(means) and means[-1] > 2 * means[0]


def test_a_slow_worker_sends_staler_gradients() -> None:
    """A compute-bound step: a worker at a quarter of the speed reads, computes four times as long, and the
    others apply several times meanwhile."""
    model = synthetic_model(n_params=4, n_layers_ops=3, param_bytes=10_000, op_dur_ns=MS,
                            bandwidth_bytes_per_s=10**9)
    result = simulate(model, SimConfig(n_workers=4, steps=6, worker_speed=(0.25,), record_tasks=True))
    t_a, t_b = measurement_window(result)
    by_worker: dict[int, list[int]] = {}
    for r in result.tasks:
        if r.staleness >= 0 and t_a <= r.start_ns and r.end_ns <= t_b:
            by_worker.setdefault(r.worker, []).append(r.staleness)
    slow = sum(by_worker[0]) / len(by_worker[0])
    fast = sum(sum(v) for w, v in by_worker.items() if w) / sum(len(v) for w, v in by_worker.items() if w)
    assert slow > 2 * fast
    # its steps take longer, too
    steps = [[e - s for s, e in zip(starts, ends, strict=True)]
             for starts, ends in zip(result.step_start_ns, result.step_end_ns, strict=True)]
    assert min(steps[0]) > max(max(w) for w in steps[1:])


def test_worker_speed_must_be_a_sane_factor() -> None:
    message = r"'worker_speed' factors must be numbers from 0\.001 to 1000 \(got \(0\.0,\)\)"
    with pytest.raises(ConfigError, match=message):
        SimConfig(worker_speed=(0.0,))


def test_predict_writes_the_staleness_histogram_and_traces_carry_it(mlp_trace_dir: pathlib.Path,
                                                                    tmp_path: pathlib.Path) -> None:
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    args = parser.parse_args([str(mlp_trace_dir), "--workers", "1,4", "--steps", "4", "--seeds", "2",
                              "--out", str(tmp_path / "p")])
    assert run_predict(args) == 0
    lines = (tmp_path / "p" / "staleness.csv").read_text().splitlines()
    assert lines[0] == "n_workers,staleness,updates,fraction"
    rows = [line.split(",") for line in lines[1:]]
    for n in ("1", "4"):
        assert sum(float(r[3]) for r in rows if r[0] == n) == pytest.approx(1.0, abs=1e-5)
    assert [r[1] for r in rows if r[0] == "1"] == ["0"]
    assert (tmp_path / "p" / "staleness.png").read_bytes().startswith(b"\x89PNG")
    header = (tmp_path / "p" / "curve.csv").read_text().splitlines()[0].split(",")
    assert {"staleness_mean", "staleness_median", "staleness_p99"} <= set(header)
    model = build_model(read_trace(mlp_trace_dir))
    write_synthetic_trace(model, SimConfig(n_workers=3, steps=2), tmp_path / "n3.json")
    events = json.loads((tmp_path / "n3.json").read_text())["traceEvents"]
    stale = [e["args"]["staleness"] for e in events if e.get("ph") == "X" and "staleness" in e.get("args", {})]
    assert stale and all(isinstance(s, int) and s >= 0 for s in stale)


def test_predict_with_two_slow_workers_is_slower_and_says_so(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 1\nname,count,speed\nslow,2,0.2\nstandard,*,1\n")
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    base = [str(mlp_trace_dir), "--workers", "1,2,3", "--steps", "4", "--seeds", "1"]
    assert run_predict(parser.parse_args([*base, "--out", str(tmp_path / "even")])) == 0
    assert run_predict(parser.parse_args([*base, "--worker-classes", str(classes), "--out",
                                          str(tmp_path / "uneven")])) == 0
    assert "2 x slow (speed 0.2), then the rest x standard (speed 1)" in capsys.readouterr().out

    def rates(name: str) -> list[float]:
        lines = (tmp_path / name / "curve.csv").read_text().splitlines()[1:]
        return [float(line.split(",")[1]) for line in lines]

    # at N = 1 and 2 every worker is a slow one, so every step is slower; at N = 3 (two slow, one standard) the
    # link bounds both clusters and which is ahead over 4 steps of one seed is noise (lock-step or not)
    even, uneven = rates("even"), rates("uneven")
    assert len(even) == len(uneven) == 3
    assert all(u < e for u, e in zip(uneven[:2], even[:2], strict=True))


def test_a_worker_behind_its_own_slow_link_is_held_to_that_link(mlp_trace_dir: pathlib.Path,
                                                                tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\n"
                       "far,1,1,1e6\nstandard,*,1,-\n")
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    args = [str(mlp_trace_dir), "--workers", "1,2", "--steps", "4", "--seeds", "1", "--worker-classes", str(classes),
            "--out", str(tmp_path / "p")]
    assert run_predict(parser.parse_args(args)) == 0
    assert "1 x far (speed 1, own link 1 Mbit/s)" in capsys.readouterr().out
    lines = (tmp_path / "p" / "curve.csv").read_text().splitlines()[1:]
    one, two = (float(line.split(",")[1]) for line in lines)
    model = build_model(read_trace(mlp_trace_dir))
    pull_bytes = sum(b for b, k in zip(model.size_bytes, model.kinds, strict=True) if k == TaskKind.PULL)
    assert one <= 1e6 / 8 * PAYLOAD_FRACTION / pull_bytes  # its own link bounds the lone far worker
    assert two > 2 * one  # the standard worker is not held back by the far one's link


def test_the_staleness_figures_of_updates_inside_the_window_by_hand() -> None:
    """staleness() pools the updates read and applied inside each run's steady window; its mean, median and p99
    (an update's own staleness, the 99th percentile taken upwards, not one between two updates) worked out by hand
    on updates given to a run (its recorded ones replaced, packed as SimResult packs them)."""
    import dataclasses

    import numpy as np

    result = simulate(shared_variable_model(), SimConfig(n_workers=2, steps=3, warmup_steps=1))
    t_a, t_b = measurement_window(result)

    def given(*updates: tuple[int, int, int]) -> SimResult:
        return dataclasses.replace(result, staleness=np.array(updates, dtype=np.int64).reshape(-1, 3).tobytes())

    inside = [(t_a, t_b, v) for v in [0] * 98 + [1, 5]]
    outside = [(t_a - 1, t_a + 1, 7), (t_a, t_b + 1, 9), (t_a - 5, t_a - 1, 8)]  # read before, applied after
    figures = staleness([given(*inside, *outside), given(*inside, *outside)])
    assert figures is not None
    assert figures.histogram == ((0, 196), (1, 2), (5, 2)) and figures.n_updates == 200
    assert figures.mean == pytest.approx(12 / 200) and figures.median == 0.0
    assert figures.p99 == 5.0  # the 198th of 200 values, upwards: the 199th is a 5 (by interpolation, 1.04)
    assert staleness([given(*outside)]) is None
    two = staleness([given((t_a, t_b, 0), (t_a, t_b, 1))])
    assert two is not None and (two.median, two.p99) == (0.5, 1.0)  # the median of an even count: halfway
