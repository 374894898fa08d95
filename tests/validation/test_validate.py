"""``tracegen validate`` on stored measurements: the report, its table and its figures must agree with the
measurements themselves, every input must be named, and a mismatched trace must be flagged."""

from __future__ import annotations

import math
import pathlib

import pandas as pd
import pytest

from tracegen.cli import main

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
TESTBED = DATA / "testbed"
CONFIGS = sorted(p.name for p in TESTBED.glob("*") if (p / "measured.csv").is_file())


@pytest.mark.parametrize("config", CONFIGS[:1])
def test_validate_on_stored_measurements(config: str, tmp_path: pathlib.Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = TESTBED / config
    assert main(["validate", "--measured", str(folder), "--steps", "5", "--seeds", "1",
                 "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert f"trace {folder / 'trace'}" in printed and "bandwidth from" in printed
    table = pd.read_csv(tmp_path / "comparison.csv")
    runs = pd.read_csv(folder / "measured.csv")
    means = runs.groupby("n_workers")["steps_per_s"].mean()
    assert list(table["n_workers"]) == list(means.index)
    assert list(table["measured_mean"]) == pytest.approx(list(means), abs=1e-4)
    for name in ("simulator_bw", "roofline_bw", "no_overlap_bw", "ps_queue_bw"):
        errors = (table[name] - table["measured_mean"]).abs() / table["measured_mean"]
        assert list(table[f"{name}_error"]) == pytest.approx(list(errors), abs=2e-4)
        assert name in printed and all(math.isfinite(v) and v > 0 for v in table[name])
    assert (table["simulator_bw_band_low"] <= table["simulator_bw"] + 1e-4).all()
    assert (table["simulator_bw"] <= table["simulator_bw_band_high"] + 1e-4).all()
    report = (tmp_path / "report.md").read_text()
    assert "## Scores" in report and (tmp_path / "comparison.png").stat().st_size > 1000
    assert "link profile: none" in report


def test_a_trace_of_another_model_is_flagged(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    mlp, cnn = TESTBED / "mlp_200mbit", TESTBED / "cnn_100mbit"
    assert main(["validate", "--measured", str(mlp / "measured.csv"), "--trace", str(cnn / "trace"),
                 "--steps", "4", "--seeds", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "warning: the trace was captured with model 'cnn', the measurements have ['mlp']" in printed
    assert "## Warnings" in (tmp_path / "report.md").read_text()


def test_validate_refuses_a_folder_without_measurements(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--measured", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no such measurements file" in capsys.readouterr().err
