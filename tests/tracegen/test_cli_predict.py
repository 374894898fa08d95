"""``tracegen predict``'s own options (:mod:`tracegen.cli_predict`): what it refuses before any work, and the plot
it draws of a trace whatever the trace's name."""

from __future__ import annotations

import pathlib
import shutil

import pytest

from tracegen.cli import main

from tracegen_support import ROOT
from tracegen_support import quick_predict as _predict


@pytest.mark.parametrize(("argv", "message"), [
    # every N asked (the default stops where the rate stalls, which it estimates: not refused, and quick)
    (["--workers", "1-100000", "--every-n"], "would simulate about"),
    (["--workers", "1-100000", "--steps", "1000000"], "would simulate about"),
    (["--workers", "+3"], "'--workers'"),
    (["--seeds", "0"], "'--seeds' must be from 1"),
    (["--jobs", "0"], "'--jobs' must be from 1 to 4096 (got 0)"),  # it said 'jobs', the library's field
])
def test_absurd_predictions_are_refused_before_any_work(argv: list[str], message: str, tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["predict", str(ROOT / "data/traces/mlp"), *argv, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o" / "curve.csv").exists()


def test_an_empty_emit_traces_list_is_refused_not_taken_as_none(tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """'--emit-traces ""' (a variable that came out empty) wrote no trace and said nothing; '--workers ""' was
    refused."""
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--emit-traces", "", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "'--emit-traces': cannot read ''" in err and err.count("\n") == 1
    assert not (tmp_path / "o" / "curve.csv").exists()


def test_a_trace_named_like_a_formula_is_plotted_as_its_name(tmp_path: pathlib.Path) -> None:
    trace = tmp_path / "run$\\frac$"  # matplotlib reads $...$ as mathtext: this one does not parse
    shutil.copytree(ROOT / "data/traces/mlp", trace)
    out = tmp_path / "out"
    assert _predict(out, trace) == 0
    assert (out / "curve.png").read_bytes().startswith(b"\x89PNG")


_MOVED = "a symbolic link to 'moved.json', which does not exist"


@pytest.mark.parametrize(("name", "target", "more", "why"), [
    ("link-profile.json", "link-profile.json", [], "a symbolic link that loops"),
    ("single-worker.json", "moved.json", ["--bandwidth", "1Gbit/s"], _MOVED),
    ("meta.json", "moved.json", ["--bandwidth", "1Gbit/s"], _MOVED),
])
def test_a_file_beside_the_trace_that_is_a_link_to_nothing_is_refused_not_passed_over(
        name: str, target: str, more: list[str], why: str, tmp_path: pathlib.Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """exists() is False for a link round a loop or to a moved file: the link profile was passed over and the
    trace's own link predicted without a word, the single worker's rate and the batch size likewise."""
    trace = tmp_path / "trace"
    trace.mkdir()
    shutil.copy(ROOT / "data/traces/mlp/step_000.pb", trace)
    (trace / name).symlink_to(target)
    assert _predict(tmp_path / "o", trace, *more) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{trace / name}: cannot read: {why}" in err, err
    assert not (tmp_path / "o" / "curve.csv").exists()


def test_one_seed_and_one_worker_count_are_not_plural(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # 'simulating 1 worker counts x 1 seeds' and 'timings of 1 complete traced steps'
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "2", "--seeds", "1", "--steps", "3",
                 "--jobs", "1", "--out", str(tmp_path / "o")]) == 0
    got = capsys.readouterr()
    text = got.out + got.err
    assert "simulating 1 worker count x 1 seed" in text, text
    assert "1 worker counts" not in text and "1 seeds" not in text
