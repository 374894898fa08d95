"""``tracegen validate`` on the measurements stored in data/testbed: the report, its table and its figures
must agree with the measurements themselves."""

from __future__ import annotations

import math
import pathlib

import pandas as pd
import pytest

from tracegen.cli import main

TESTBED = pathlib.Path(__file__).resolve().parents[2] / "data" / "testbed"
CONFIGS = sorted(p.name for p in TESTBED.glob("*") if (p / "measured.csv").is_file())


@pytest.mark.parametrize("config", CONFIGS[:1])
def test_validate_on_stored_measurements(config: str, tmp_path: pathlib.Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = TESTBED / config
    assert main(["validate", "--measured", str(folder), "--steps", "6", "--seeds", "2",
                 "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "comparison.csv")
    runs = pd.read_csv(folder / "measured.csv")
    means = runs.groupby("n_workers")["steps_per_s"].mean()
    assert list(table["n_workers"]) == list(means.index)
    assert list(table["measured_mean"]) == pytest.approx(list(means), abs=1e-4)
    for name in ("simulator", "simulator_nominal", "no_overlap", "ps_queue"):
        errors = (table[name] - table["measured_mean"]).abs() / table["measured_mean"]
        assert list(table[f"{name}_error"]) == pytest.approx(list(errors), abs=2e-4)
        assert f"{name}" in printed and all(math.isfinite(v) and v > 0 for v in table[name])
    report = (tmp_path / "report.md").read_text()
    assert "## Scores" in report and (tmp_path / "comparison.png").stat().st_size > 1000
    if (folder / "workers").is_dir():
        assert "Real multi-worker traces against simulated ones" in report


def test_validate_refuses_a_folder_without_measurements(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--measured", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no such measurements file" in capsys.readouterr().err
