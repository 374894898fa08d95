"""The ``tracegen`` command: golden ``inspect --json`` on the bundled traces, ``convert``, help and errors."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tracegen.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("model", ["cnn", "mlp", "resnet"])
def test_inspect_json_matches_golden(model: str, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the summary names its source: keep it relative and stable
    assert main(["inspect", "--json", f"data/traces/{model}"]) == 0
    got = json.loads(capsys.readouterr().out)
    golden = GOLDEN / f"inspect_{model}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
    assert got == json.loads(golden.read_text())


def test_inspect_prints_a_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(ROOT / "data/traces/mlp/step_001.json")]) == 0
    out = capsys.readouterr().out
    assert "not in this format" in out and "pulls      6 per step" in out


def test_convert_refuses_to_overwrite_without_force(tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.json"
    out.write_text("precious")
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "chrome", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == "precious"
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "chrome", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["traceEvents"]


def test_convert_tables_then_inspect_them(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(ROOT / "data/traces/cnn"), "--to", "parquet", str(tmp_path / "tables")]) == 0
    capsys.readouterr()
    assert main(["inspect", "--json", str(tmp_path / "tables")]) == 0
    from_tables = json.loads(capsys.readouterr().out)
    assert main(["inspect", "--json", str(ROOT / "data/traces/cnn")]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in from_tables.items() if k != "source"} == {k: v for k, v in direct.items()
                                                                       if k != "source"}


def test_installed_command_runs_as_a_user_would(tmp_path: pathlib.Path) -> None:
    exe = pathlib.Path(sys.executable).parent / "tracegen"
    done = subprocess.run([str(exe), "inspect", str(tmp_path / "missing.pb")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"tracegen inspect: error: {tmp_path / 'missing.pb'}: no such file or directory"
    helped = subprocess.run([str(exe), "convert", "--help"], capture_output=True, text=True, check=True)
    assert "--to {chrome,parquet,csv}" in helped.stdout
