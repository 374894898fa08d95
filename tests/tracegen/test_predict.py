from __future__ import annotations

import argparse
import csv
import pathlib

import pytest

from parsers import read_trace
from parsers.chrome import load_events
from parsers.perfetto import check_perfetto
from tracegen.curve import CurvePoint, knee, parse_workers
from tracegen.errors import ConfigError
from tracegen.model import TaskKind, build_model
from tracegen.predict import CSV_COLUMNS, add_predict_arguments, run_predict


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tracegen predict")
    add_predict_arguments(parser)
    return parser.parse_args(argv)


def test_predict_writes_curve_plot_and_traces(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(mlp_trace_dir), "--workers", "1-3,6", "--steps", "4", "--seeds", "2", "--emit-traces", "1,3"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert "knee: N=" in out
    assert "estimated from the trace" in out
    assert "Gbit/s" in out or "Mbit/s" in out
    with (tmp_path / "a" / "curve.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [int(r["n_workers"]) for r in rows] == [1, 2, 3, 6]
    for r in rows:
        assert float(r["steps_per_s_low"]) <= float(r["steps_per_s"]) <= float(r["steps_per_s_high"])
    assert (tmp_path / "a" / "curve.png").read_bytes().startswith(b"\x89PNG")
    events, _ = load_events((tmp_path / "a" / "traces" / "n3.json").read_bytes(), "n3.json")
    assert check_perfetto(events) == []
    # same trace, config and seed: byte-identical outputs
    assert run_predict(parse([*argv, "--out", str(tmp_path / "b")])) == 0
    for name in ("curve.csv", "traces/n1.json", "traces/n3.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_given_bandwidth_is_echoed(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    args = parse([str(mlp_trace_dir), "--workers", "1,2", "--bandwidth", "500Mbit/s", "--latency", "50us",
                  "--link", "fifo", "--policy", "tictac", "--steps", "3", "--seeds", "1", "--out", str(tmp_path)])
    assert run_predict(args) == 0
    out = capsys.readouterr().out
    assert "given as 500 Mbit/s (62.5 MB/s), of which tensors get 95.64%" in out
    assert "pull 478 Mbit/s (59.8 MB/s)" in out and "latency 50 us" in out


def test_policy_file(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    pulls = [model.names[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    order = tmp_path / "order.txt"
    order.write_text("# last pull first\n" + "\n".join(reversed(pulls)) + "\n")
    args = parse([str(mlp_trace_dir), "--workers", "2", "--policy", str(order), "--link", "conn", "--steps", "3",
                  "--seeds", "1", "--out", str(tmp_path / "o")])
    assert run_predict(args) == 0
    with pytest.raises(ConfigError, match=r"curve\.csv: already exists; pass --force"):
        run_predict(args)  # nothing the user has is overwritten without asking
    order.write_text("no_such_tensor\n")
    args.force = True
    with pytest.raises(ConfigError, match="no_such_tensor"):
        run_predict(args)


def test_bad_options_raise_config_errors(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match="'10 furlongs'"):
        run_predict(parse([str(mlp_trace_dir), "--bandwidth", "10 furlongs", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match="'workers'"):
        run_predict(parse([str(mlp_trace_dir), "--workers", "4-2", "--out", str(tmp_path)]))


def test_parse_workers() -> None:
    assert parse_workers("1-4") == (1, 2, 3, 4)
    assert parse_workers("1,2,4,8") == (1, 2, 4, 8)
    assert parse_workers("8,1-2") == (1, 2, 8)
    for bad in ("0", "a", "3-1", ""):
        with pytest.raises(ConfigError, match="'workers'"):
            parse_workers(bad)


def test_knee_is_smallest_n_reaching_95_percent() -> None:
    def point(n: int, rate: float) -> CurvePoint:
        return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                          pull_link_utilisation=0, push_link_utilisation=0, ps_cpu_utilisation=0,
                          ps_transfer_utilisation=0,
                          bottleneck="workers")
    assert knee([point(1, 1.0), point(2, 1.89), point(3, 1.96), point(4, 2.0), point(5, 1.7)]) == 3
