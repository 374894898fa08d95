"""``tracegen validate`` on stored measurements: the report, its table and its figures must agree with the
measurements themselves, every input must be named, and a mismatched trace must be flagged."""

from __future__ import annotations

import json
import math
import pathlib
import re
import shutil

import pandas as pd
import pytest

from parsers import read_trace
from tracegen.cli import main
from tracegen.model import TaskKind, build_model
from validation.errors import ConfigError
from validation.validate import mismatches

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
    # each end is the min (max) of its band curve and the prediction's own seeds, so the two lines above hold
    # whatever the ends are: with the link the limit at the largest N, each end must move off the prediction
    last = table.iloc[-1]
    assert last["simulator_bw_band_low"] < last["simulator_bw"] < last["simulator_bw_band_high"]
    report = (tmp_path / "report.md").read_text()
    assert "## Scores" in report and (tmp_path / "comparison.png").stat().st_size > 1000
    assert "link profile: none" in report


def _same_files(first: pathlib.Path, second: pathlib.Path) -> None:
    names = sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file())
    assert "report.md" in names and "prediction_bw/curve.csv" in names
    assert names == sorted(str(p.relative_to(second)) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_the_report_is_the_same_in_one_process_or_two(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A campaign configuration with its link profile and its bandwidth: every file of the report, byte for
    byte, whatever --jobs."""
    import tracegen.processes

    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # jobs = 2 in two processes, however short the run
    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    for jobs in ("1", "2"):
        assert main(["validate", "--measured", str(folder), "--steps", "5", "--seeds", "2", "--jobs", jobs,
                     "--out", str(tmp_path / jobs)]) == 0
        said = capsys.readouterr()
        assert ("in 2 processes" in said.out + said.err) == (jobs == "2"), said
    _same_files(tmp_path / "1", tmp_path / "2")


def test_a_validation_too_short_to_gain_from_processes_runs_in_one(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """validate started all --jobs processes whatever the work: about a second each to start, for simulations of
    a fraction of a second. Its curves now go to processes only when they would take PARALLEL_S on one core, as
    predict's and plan's do; the report is the same."""
    import tracegen.processes

    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    argv = ["validate", "--measured", str(folder), "--steps", "5", "--seeds", "2", "--jobs", "2"]
    assert main([*argv, "--out", str(tmp_path / "short")]) == 0
    alone = capsys.readouterr()
    assert "simulating with the link profile" in alone.out + alone.err
    assert "processes" not in alone.out + alone.err, alone
    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # the same validation, as if long enough
    assert main([*argv, "--out", str(tmp_path / "forced")]) == 0
    side_by_side = capsys.readouterr()
    lines = (side_by_side.out + side_by_side.err).splitlines()
    assert any(line.startswith("simulating with the link profile") and line.endswith("in 2 processes")
               for line in lines), lines
    assert any(line.startswith("simulating with the bandwidth only") and line.endswith("in 2 processes")
               for line in lines), lines
    _same_files(tmp_path / "short", tmp_path / "forced")


def test_a_single_worker_measurement_the_replay_misses_is_a_warning_of_the_report(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The measurement four times faster than one worker can go on the profiled link: said for each predictor
    that used it, in report.md's warnings and on the terminal."""
    import dataclasses
    import shutil

    from parsers.singleworker import SINGLE_WORKER_NAME, read_single_worker, write_single_worker

    folder = tmp_path / "mlp"
    shutil.copytree(DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03", folder)
    single = read_single_worker(folder / "trace" / SINGLE_WORKER_NAME)
    write_single_worker(dataclasses.replace(single, steps_per_s=single.steps_per_s * 4,
                                            ps_cpu_s_per_step=(single.ps_cpu_s_per_step or 0) / 4),
                        folder / "trace" / SINGLE_WORKER_NAME)
    assert main(["validate", "--measured", str(folder), "--steps", "5", "--seeds", "1", "--jobs", "1",
                 "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    report = (tmp_path / "out" / "report.md").read_text()
    for which in ("with the link profile", "with the bandwidth only"):
        line = f"{which}: {folder / 'trace' / SINGLE_WORKER_NAME}: one worker replays at"
        assert f"warning: {line}" in printed and f"- {line}" in report
    assert report.count("N = 1 is not pinned to the measurement") == 2


def test_a_trace_of_another_model_is_flagged(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    mlp, cnn = TESTBED / "mlp_200mbit", TESTBED / "cnn_100mbit"
    assert main(["validate", "--measured", str(mlp / "measured.csv"), "--trace", str(cnn / "trace"),
                 "--steps", "4", "--seeds", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    # both files named, the value as written (it said "the measurements have ['mlp']", naming neither file)
    assert (f"warning: {cnn / 'trace' / 'meta.json'}: the trace was captured with model 'cnn', "
            f"{mlp / 'measured.csv'} has 'mlp'\n") in printed
    assert "## Warnings" in (tmp_path / "report.md").read_text()


def test_a_capture_setting_the_measurements_differ_from_is_warned_of_in_a_short_line(tmp_path: pathlib.Path) -> None:
    """A meta.json of 20000 widths and a 5000-character model name made warning lines of 109 kB and 5 kB, printed
    and written into the report as they were."""
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "meta.json").write_text(json.dumps({"model": "m" * 5000, "widths": list(range(20000))}))
    runs = pd.DataFrame({"model": ["mlp"], "widths": ["512;512"]})
    said = mismatches(trace, runs)
    assert len(said) == 2 and all(len(w) <= 300 for w in said), said
    where = f"{trace / 'meta.json'}: "
    assert said[0].startswith(f"{where}the trace was captured with model 'mmm") and "m..." in said[0]
    assert said[0].endswith("m', the measurements file has 'mlp'")
    assert said[1].startswith(f"{where}the trace was captured with widths '0;1;2;3;") and "has '512;512'" in said[1]


@pytest.mark.parametrize("given", [False, True])
def test_validate_refuses_a_trace_that_is_not_there(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                    given: bool) -> None:
    """A testbed folder holding measured.csv but no trace/ printed a warning about a meta.json beside the folder
    (not the trace) before the error: two lines, the first naming the wrong file (a hardening pass)."""
    folder = tmp_path / "run"
    folder.mkdir()
    dev = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    (folder / "measured.csv").write_bytes((dev / "measured.csv").read_bytes())
    trace = tmp_path / "elsewhere" if given else folder / "trace"
    args = ["--trace", str(trace)] if given else []
    assert main(["validate", "--measured", str(folder), *args, "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and f"{trace}: no such trace" in captured.err, captured.err
    assert not (tmp_path / "out").exists()
    trace.symlink_to(trace.name)  # a link that loops: named as one, not only as missing
    assert main(["validate", "--measured", str(folder), *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{trace}: no such trace: a symbolic link that loops" in err, err


def test_a_link_profile_that_cannot_be_read_is_refused_before_any_work(tmp_path: pathlib.Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """validate read --link-profile only once the trace was read and the model built, after printing that it
    simulated with it: a profile that is not there got 'simulating with the link profile gone.json' first."""
    dev = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    gone = tmp_path / "gone.json"
    assert main(["validate", "--measured", str(dev), "--link-profile", str(gone), "--out", str(tmp_path / "o")]) == 2
    captured = capsys.readouterr()
    assert "simulating" not in captured.out, captured.out
    assert captured.err.count("\n") == 1 and f"{gone}: cannot read: No such file" in captured.err, captured.err
    assert not (tmp_path / "o").exists()


def test_measurements_without_a_batch_size_take_the_trace_s(tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A user's own CSV (n_workers, steps_per_s) against a testbed trace whose meta.json says batch 32: validate
    used a batch of 1, so its prediction's samples/s was its steps/s, where predict on the same trace says 32x."""
    dev = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    mine = tmp_path / "mine.csv"
    mine.write_text("n_workers,steps_per_s\n1,10.8\n2,17.0\n")
    assert main(["validate", "--measured", str(mine), "--trace", str(dev / "trace"), "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    assert "- batch size: 32" in (tmp_path / "o/report.md").read_text()
    curve = pd.read_csv(tmp_path / "o/prediction/curve.csv")
    assert list(curve["samples_per_s"]) == pytest.approx(list(32 * curve["steps_per_s"]), rel=1e-3)


def test_a_glob_of_step_files_is_a_trace_to_validate(tmp_path: pathlib.Path) -> None:
    """read_trace takes a glob of step files; the check for a trace that is not there must not refuse one."""
    from validation.validate import resolve_inputs

    dev = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    pattern = str(dev / "trace" / "step_*.pb.gz")
    inputs = resolve_inputs(dev / "measured.csv", pattern, None, None)
    assert str(inputs.trace) == pattern
    with pytest.raises(ConfigError) as info:  # the path given, and the option it came from
        resolve_inputs(dev / "measured.csv", tmp_path / "step_000.pb.gz", None, None)
    assert str(info.value) == f"{tmp_path / 'step_000.pb.gz'}: no such trace (--trace)"


def test_validate_refuses_a_folder_without_measurements(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--measured", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no such measurements file" in capsys.readouterr().err
    # a file that is not there is said to be missing, not asked to come with its trace
    assert main(["validate", "--measured", str(tmp_path / "m.csv"), "--out", str(tmp_path / "out")]) == 2
    assert f"{tmp_path / 'm.csv'}: no such measurements file" in capsys.readouterr().err


def _with_ps_tasks(source: pathlib.Path, target: pathlib.Path, k: int, placement: str) -> pathlib.Path:
    runs = pd.read_csv(source)
    runs["ps_tasks"], runs["placement"] = k, placement
    runs.to_csv(target, index=False)
    return target


def test_runs_on_several_ps_are_predicted_on_as_many_shards(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The same one-PS trace predicts more for the same runs said to have had two PS with greedy placement
    (the bundled mlp's bytes split between them) than for one, and the report says how they were placed."""
    folder = TESTBED / "mlp_200mbit"
    tables = {}
    for k in (1, 2):
        out = tmp_path / f"k{k}"
        measured = _with_ps_tasks(folder / "measured.csv", tmp_path / f"k{k}.csv", k, "greedy")
        assert main(["validate", "--measured", str(measured), "--trace", str(folder / "trace"), "--steps", "5",
                     "--seeds", "1", "--out", str(out)]) == 0
        tables[k] = pd.read_csv(out / "comparison.csv")
    assert "2 PS tasks, greedy placement" in capsys.readouterr().out
    assert "greedy placement, predicted from the one-PS trace" in (tmp_path / "k2" / "report.md").read_text()
    for name in ("simulator_bw", "roofline_bw"):
        assert tables[2][name].iloc[-1] > 1.2 * tables[1][name].iloc[-1]


@pytest.mark.parametrize("ps_tasks", [1, 2])
def test_a_placement_no_placement_has_is_refused_by_its_line(ps_tasks: int, tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """On runs of one PS task a misspelt placement ('greedy ', 'grredy') was taken without a word (one PS has
    nothing to place); on several, the refusal named no line."""
    folder = TESTBED / "mlp_200mbit"
    measured = _with_ps_tasks(folder / "measured.csv", tmp_path / "m.csv", ps_tasks, "greedy")
    lines = measured.read_text().splitlines()
    lines[3] = lines[3].replace("greedy", "grredy")
    measured.write_text("\n".join(lines) + "\n")
    assert main(["validate", "--measured", str(measured), "--trace", str(folder / "trace"), "--steps", "3",
                 "--seeds", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{measured}:4: 'placement' must be one of round-robin, greedy (got 'grredy')" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_runs_that_differ_in_ps_tasks_are_refused(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = TESTBED / "mlp_200mbit"
    runs = pd.read_csv(folder / "measured.csv")
    runs["ps_tasks"] = [1 + i % 2 for i in range(len(runs))]
    runs.to_csv(tmp_path / "mixed.csv", index=False)
    assert main(["validate", "--measured", str(tmp_path / "mixed.csv"), "--trace", str(folder / "trace"),
                 "--out", str(tmp_path / "out")]) != 0
    assert "runs differ in their PS tasks ([1, 2])" in capsys.readouterr().err


def test_runs_that_differ_in_batch_size_are_refused(tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """They were read, and the report's samples/s were of batch size 1 (a hardening pass)."""
    folder = TESTBED / "mlp_200mbit"
    runs = pd.read_csv(folder / "measured.csv")
    runs["batch_size"] = [32 * (1 + i % 2) for i in range(len(runs))]
    runs.to_csv(tmp_path / "mixed.csv", index=False)
    assert main(["validate", "--measured", str(tmp_path / "mixed.csv"), "--trace", str(folder / "trace"),
                 "--out", str(tmp_path / "out")]) == 2
    # one message, naming the line: a warning that the trace's batch size (32) differed from [32, 64] came first
    out, err = capsys.readouterr()
    assert "batch_size" not in out and err.count("\n") == 1
    assert f"{tmp_path / 'mixed.csv'}:3: 'batch_size' is 64, not 32 as on line 2: runs of two settings" in err


@pytest.mark.parametrize("bandwidth", [[], ["--bandwidth", "500Mbit/s"]])
def test_runs_that_differ_in_link_rate_are_refused_by_their_line(bandwidth: list[str], tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Two campaigns at two link rates in one file: with --bandwidth given they were averaged as repeats of each
    N without a word (the rows' rates were checked only when no --bandwidth was); without it the refusal named
    no line and showed the rates in bytes/s ([50000000.0, 62500000.0]), a unit the file does not use."""
    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    lines = (folder / "measured.csv").read_text().splitlines(keepends=True)  # bandwidth_bits_per_s 500000000
    lines[3] = lines[3].replace(",500000000,", ",400000000,")
    path = tmp_path / "m.csv"
    path.write_text("".join(lines))
    assert main(["validate", "--measured", str(path), "--trace", str(folder / "trace"), *bandwidth, "--steps", "3",
                 "--seeds", "1", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: the link's rate is 400000000 bits/s, not 500000000 as on line 2: runs of two settings" in err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_repeats_averaged_are_said_and_one_run_twice_is_warned_of(tmp_path: pathlib.Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Rows of one N are averaged as repeats (validation.measured), and the summary said nothing of it; two rows
    numbered as one run (the same N and repeat) were averaged without a word (a hardening pass)."""
    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    lines = (folder / "measured.csv").read_text().splitlines(keepends=True)  # N = 1..5, repeat 0 each
    again = lines[2].replace("17.4012", "17.9").replace("2,0,", "2,1,", 1)
    twice = lines[4].replace("16.801", "16.5")
    path = tmp_path / "m.csv"
    path.write_text("".join([*lines, again, twice]))
    argv = ["validate", "--measured", str(path), "--trace", str(folder / "trace"), "--steps", "4", "--seeds", "1",
            "--jobs", "1", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"warning: {path}:{len(lines) + 2}: n_workers 4 and repeat 0 as on line 5: the same run twice?" in out
    assert "\nmeasured: N=2: 2 runs averaged; N=4: 2 runs averaged\n" in out
    assert "n_workers 2" not in out  # repeat 1 of N = 2 is a repeat
    table = pd.read_csv(tmp_path / "out" / "comparison.csv")
    assert list(table["n_repeats"]) == [1, 2, 1, 2, 1]


def test_workers_with_caps_of_their_own_are_predicted_at_their_speed(tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The same runs said to have had every worker at half the traced worker's CPU cap are predicted slower at
    N = 1 (resnet's step is mostly compute), and the speeds are printed."""
    folder = TESTBED / "resnet_50mbit"
    runs = pd.read_csv(folder / "measured.csv")
    runs["worker_caps"] = [";".join(["0.15"] * n) for n in runs["n_workers"]]
    runs.to_csv(tmp_path / "half.csv", index=False)
    ones = {}
    for name, measured in (("as traced", folder / "measured.csv"), ("half", tmp_path / "half.csv")):
        assert main(["validate", "--measured", str(measured), "--trace", str(folder / "trace"), "--steps", "4",
                     "--seeds", "1", "--out", str(tmp_path / name.replace(" ", "_"))]) == 0
        ones[name] = pd.read_csv(tmp_path / name.replace(" ", "_") / "comparison.csv")["simulator_bw"].iloc[0]
    assert "workers at 0.5, 0.5" in capsys.readouterr().out
    assert ones["half"] < 0.8 * ones["as traced"]


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_report_into_the_testbed_folder_never_replaces_its_measurements(
        force: list[str], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """validate --measured DIR --out DIR wrote the comparison over the testbed's staleness.csv with --force (the
    message without it said 'pass --force to replace the previous run': the file was no run's output), and the
    next validate of DIR then failed: 'not a testbed staleness.csv'."""
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(DATA / "staleness/mlp_500mbit_q100_b128k_ps03", folder, ignore=shutil.ignore_patterns("report"))
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert main(["validate", "--measured", str(folder), "--steps", "3", "--seeds", "1", "--out", str(folder),
                 *force]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'staleness.csv'}: is an input of this run" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")} == before
    mine = tmp_path / "comparison.csv"  # a user's measurements named as one of the report's files
    shutil.copy(folder / "measured.csv", mine)
    assert main(["validate", "--measured", str(mine), "--trace", str(folder / "trace"), "--steps", "3", "--seeds",
                 "1", "--out", str(tmp_path), *force]) == 2
    assert f"{mine}: is an input of this run" in capsys.readouterr().err
    assert mine.read_bytes() == before["measured.csv"]


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("given", ["--trace", "--policy"])
def test_a_trace_or_order_file_named_as_a_report_file_is_never_replaced(
        given: str, force: list[str], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """validate --trace OUT/report.md --out OUT --force wrote its report over the trace it had just read (a
    Chrome file, whatever its name), where predict refuses its own trace as an output; an order file given to
    --policy went the same way. Every file it reads is refused as an output, --force or not."""
    from parsers import read_trace
    from tracegen.model import TRANSFER_KINDS, build_model

    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    out = tmp_path / "out"
    out.mkdir()
    if given == "--trace":
        mine = out / "report.md"
        assert main(["convert", str(folder / "trace"), "--to", "chrome", str(mine)]) == 0
        (out / "meta.json").unlink()  # carried beside it by convert: one of the trace's, not the report's
    else:
        mine = out / "comparison.csv"  # a transfer order, all of its tensor names the trace's
        model = build_model(read_trace(folder / "trace"))
        mine.write_text("\n".join(model.names[t] for t in range(model.n_tasks) if model.kinds[t] in TRANSFER_KINDS))
    before = mine.read_bytes()
    capsys.readouterr()
    assert main(["validate", "--measured", str(folder), given, str(mine), "--steps", "3", "--seeds", "1",
                 "--out", str(out), *force]) == 2
    err = capsys.readouterr().err
    assert f"{mine}: is an input of this run" in err and err.count("\n") == 1, err
    assert mine.read_bytes() == before


def test_a_staleness_csv_tracegen_wrote_beside_the_measurements_is_not_taken_for_the_testbeds(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Measurements kept in a prediction's folder: validate read predict's staleness.csv beside them as the
    testbed's measured staleness and stopped ('not a testbed staleness.csv: the header must be
    n_workers,repeat,staleness,steps'), on a file the user never named."""
    trace = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    folder = tmp_path / "results"
    assert main(["predict", str(trace), "--workers", "1-2", "--steps", "3", "--seeds", "1", "--out", str(folder)]) == 0
    assert (folder / "staleness.csv").is_file()
    (folder / "mine.csv").write_text("n_workers,steps_per_s\n1,10\n2,18\n")
    capsys.readouterr()
    assert main(["validate", "--measured", str(folder / "mine.csv"), "--trace", str(trace), "--steps", "3",
                 "--seeds", "1", "--out", str(tmp_path / "report")]) == 0
    said = capsys.readouterr().out
    assert f"warning: {folder / 'staleness.csv'}: tracegen predict's staleness histogram" in said
    report = (tmp_path / "report/report.md").read_text()
    assert "tracegen predict's staleness histogram" in report and not (tmp_path / "report/staleness.csv").exists()


@pytest.mark.parametrize(("column", "row", "said"), [
    ("worker_caps", "2,10,0.25;1e300", "'worker_caps' part 2 (worker 1) must be from 0.001 to 10000 cores (got "
                                        "'1e300')"),
    ("worker_caps", "2,10,0.25;0.000001", "'worker_caps' part 2 (worker 1) must be from 0.001 to 10000 cores (got "
                                          "'0.000001')"),
    ("worker_caps", "2,10,0.25;500", "'worker_caps' 500 cores is 2000 x the traced worker's cap"),
    ("worker_links", "2,10,100000000;1", "'worker_links' must be 0 (none) or from 1e3 to 1e13 bits/s (got '1')"),
    ("worker_links", "2,10,100000000;99999999999999999999999", "'worker_links' must be 0 (none) or from 1e3 to 1e13"),
    ("ps_tasks", "1,10,100000", "'ps_tasks' must be at most 64 (got '100000')"),
])
def test_a_workers_cap_link_or_ps_count_out_of_range_names_the_file_line_and_value(
        column: str, row: str, said: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cap, a worker's link or a PS count nobody could simulate was reported as a value derived from it, without
    the file or the line: "'worker_speed' factors must be numbers from 0.001 to 1000 (got (1.0, 4e+300))",
    "'worker_link_bytes_per_s' rates must be 0 (none) or from 1 to 1e15 bytes/s (got (0.1195...,))",
    "'ps_shards' must be from 1 to 64 (got 100000)"."""
    measured = tmp_path / "m.csv"
    first = {"worker_caps": "1,10,0.25\n", "worker_links": "1,10,100000000\n", "ps_tasks": ""}[column]
    measured.write_text(f"n_workers,steps_per_s,{column}\n{first}{row}\n")
    trace = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    assert main(["validate", "--measured", str(measured), "--trace", str(trace), "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    line = 2 if column == "ps_tasks" else 3
    assert f"{measured}:{line}: {said}" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


class _SimulatedError(Exception):
    """Raised by a stand-in for the simulation: the run got that far."""


def _huge_n(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> tuple[pathlib.Path, pathlib.Path]:
    """Measurements with a row at n_workers 100000, and the trace to validate them with; a simulation raises
    :class:`_SimulatedError` (the run got that far)."""
    def simulated(*_args: object, **_kwargs: object) -> None:
        raise _SimulatedError

    monkeypatch.setattr("validation.validate.scaling_curve", simulated)
    measured = tmp_path / "m.csv"
    measured.write_text("n_workers,steps_per_s\n1,10.8\n100000,17.0\n")
    return measured, DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03/trace"


def test_measurements_at_a_huge_n_are_refused_before_any_work(tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """validate simulated every measured N without predict's cost check: a row at n_workers 100000 (a typo for
    10) with --steps 1000 started about 5.5e10 events, days on one core, with no word; predict refuses that."""
    measured, trace = _huge_n(tmp_path, monkeypatch)
    assert main(["validate", "--measured", str(measured), "--trace", str(trace), "--steps", "1000", "--seeds", "3",
                 "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert "simulating" not in captured.out, captured.out
    assert captured.err.count("\n") == 1, captured.err
    assert "tracegen validate: error: this prediction would simulate about " in captured.err, captured.err
    assert not (tmp_path / "out").exists()


def test_a_long_validation_says_what_it_will_cost_before_simulating(tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A validation of minutes (n_workers 100000 at the default steps and seeds, about 1.8e9 events) ran without
    a line of what it would take, where predict says it."""
    measured, trace = _huge_n(tmp_path, monkeypatch)
    with pytest.raises(_SimulatedError):
        main(["validate", "--measured", str(measured), "--trace", str(trace), "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    cost = printed.find("simulated events: roughly ")
    assert 0 <= cost < printed.find("simulating"), printed


@pytest.mark.parametrize(("option", "what"), [("--trace", "the trace"), ("--measured", "the measurements"),
                                              ("--link-profile", "a link profile"),
                                              ("--single-worker", "a single-worker file")])
def test_an_empty_input_path_is_refused_not_read_as_the_current_directory(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str,
        what: str) -> None:
    """'--trace "$TRACE"' with TRACE unset: pathlib read '' as '.', and validate read the trace files of the
    current directory (or a testbed folder's measured.csv there) and reported on them."""
    dev = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    (tmp_path / "step_000.pb.gz").write_bytes((dev / "trace/step_000.pb.gz").read_bytes())  # a trace here
    monkeypatch.chdir(tmp_path)
    given = {"--measured": str(dev / "measured.csv"), "--trace": str(dev / "trace"), option: ""}
    args = [a for pair in given.items() for a in pair]
    assert main(["validate", *args, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (f"tracegen validate: error: '{option}' must name {what} (got an empty "
                                       "string)\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("rows", "why"), [("", "it has no rows"),
                                           ("7,0,0,5\n", "its N (7) are none the prediction has")])
def test_a_staleness_file_with_nothing_to_compare_is_said_not_an_empty_table(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], rows: str, why: str) -> None:
    """A testbed staleness.csv holding only its header (a campaign that recorded no staleness), or only Ns that
    were not predicted, gave an empty 'Staleness, measured against simulated' table and a staleness.csv of a
    header, without saying why nothing was compared."""
    folder = tmp_path / "run"
    shutil.copytree(DATA / "staleness/mlp_500mbit_q100_b128k_ps03", folder, ignore=shutil.ignore_patterns("report"))
    (folder / "staleness.csv").write_text("n_workers,repeat,staleness,steps\n" + rows)
    assert main(["validate", "--measured", str(folder), "--out", str(tmp_path / "o"), "--seeds", "1", "--steps",
                 "4", "--warmup-steps", "1", "--jobs", "1"]) == 0
    said = f"{folder / 'staleness.csv'}: {why}: no staleness compared"
    assert said in capsys.readouterr().out
    report = (tmp_path / "o/report.md").read_text()
    assert said in report and "Staleness, measured against simulated" not in report
    assert not (tmp_path / "o/staleness.csv").exists()


class _FittingError(Exception):
    """Raised where tracing's cost would be worked out: what was said before it is what a user saw meanwhile."""


def test_undoing_tracings_cost_is_said_first_when_it_is_long(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """validate --steps 1000000 --seeds 1 on the dev mlp runs: a minute of one worker's runs, in silence, before the
    curves' own estimate; now a line says what it does and about how long, as predict does."""
    import tracegen.preparation

    def fit(*_args: object, **_kwargs: object) -> None:
        raise _FittingError

    monkeypatch.setattr(tracegen.preparation, "fit_untraced", fit)
    folder = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
    with pytest.raises(_FittingError):
        main(["validate", "--measured", str(folder), "--steps", "1000000", "--seeds", "1", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    said = [line for line in (captured.out + captured.err).splitlines() if "tracing's cost" in line]
    assert len(said) == 1 and said[0].startswith("undoing tracing's cost: simulating one worker a few times"), said


@pytest.mark.parametrize(("option", "value", "why"), [
    ("--steps", "2", "'--steps' must be from 3 to 1000000 (got 2)"),
    ("--warmup-steps", "0", "'--warmup-steps' must be from 1 to 1000000 (got 0)"),
    ("--seeds", "0", "'--seeds' must be from 1 to 1000 (got 0)"),
    ("--jobs", "0", "'--jobs' must be from 1 to 4096 (got 0)"),
])
def test_validate_checks_its_simulation_options_as_predict_does(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str], option: str,
                                                                value: str, why: str) -> None:
    """``--steps 2`` was taken (predict refuses fewer than 3: so short a window reads fast) and the simulator scored
    on it; the others were refused in the library's field names ('steps', 'jobs'), not the options'."""
    folder = DATA / "validation/dev/mlp_500mbit_q100_b128k_ps03"
    assert main(["validate", "--measured", str(folder), option, value, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"tracegen validate: error: {why}\n"
    assert not (tmp_path / "out").exists()


def test_the_cycle_roofline_reads_the_profiles_cycle_points_and_is_left_out_without_them(
        tmp_path: pathlib.Path) -> None:
    """The baseline from netbench's ``cycle`` points (data/README.md): the roofline's N / T1 until the profile's
    cycle rate for N clients over a step's bytes binds; a profile without those points gives no such column."""
    folder = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
    assert main(["validate", "--measured", str(folder), "--steps", "5", "--seeds", "1", "--jobs", "1",
                 "--out", str(tmp_path / "with")]) == 0
    table = pd.read_csv(tmp_path / "with" / "comparison.csv").set_index("n_workers")
    profile = json.loads((folder / "trace" / "link-profile.json").read_text())
    cycle = {p["connections"]: p["pull_bytes_per_s"] for p in profile["points"] if p["mode"] == "cycle"}
    model = build_model(read_trace(folder / "trace"))
    step_bytes = max(model.bytes_of(TaskKind.PULL), model.bytes_of(TaskKind.PUSH))
    one = table.loc[1, "roofline"]  # the roofline's N / T1 at N = 1, where its link does not bind
    assert one < cycle[8] / step_bytes < 2 * one  # so the cycle rate binds the new column from N = 2 on
    for n in (2, 4):
        assert table.loc[n, "roofline_cycle"] == pytest.approx(cycle[n] / step_bytes, rel=1e-3)
    assert table.loc[3, "roofline_cycle"] == pytest.approx((cycle[2] + cycle[4]) / 2 / step_bytes, rel=1e-3)
    bare = tmp_path / "bare.json"
    profile["points"] = [p for p in profile["points"] if p["mode"] != "cycle"]
    bare.write_text(json.dumps(profile))
    assert main(["validate", "--measured", str(folder), "--link-profile", str(bare), "--steps", "5", "--seeds", "1",
                 "--jobs", "1", "--out", str(tmp_path / "without")]) == 0
    assert "roofline_cycle" not in pd.read_csv(tmp_path / "without" / "comparison.csv").columns


def test_an_order_file_is_named_as_the_policy_option_and_by_its_line(tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown tensor in --policy FILE was refused by the simulation as "'policy': order file: 'x' is not a
    transfer", naming neither the file nor its line, while a file that did not read was '--policy'."""
    folder = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
    order = tmp_path / "order.txt"
    for text, said in [("a\na\n", "line 2: 'a' is already on line 1"),
                       ("# first\nno/such/tensor\n", "line 2: 'no/such/tensor' is not a transfer of the model")]:
        order.write_text(text)
        assert main(["validate", "--measured", str(folder / "measured.csv"), "--trace", str(folder / "trace"),
                     "--policy", str(order), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"tracegen validate: error: '--policy': order file {str(order)!r}: {said}"), err
        assert not (tmp_path / "out").exists()


OWN_TRACE = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"


def validate_own(tmp_path: pathlib.Path, rows: str, *more: str) -> pathlib.Path:
    """A user's own CSV (``rows``, header first) written to ``tmp_path/mine.csv`` and validated against the bundled
    ``mlp_500`` trace, quickly (3 steps, one seed), into ``tmp_path/out``; the CSV's path."""
    measured = tmp_path / "mine.csv"
    measured.write_text(rows)
    assert main(["validate", "--measured", str(measured), "--trace", str(OWN_TRACE), "--steps", "3", "--seeds", "1",
                 *more, "--out", str(tmp_path / "out")]) == 0
    return measured


def test_validate_without_a_bandwidth_says_why_no_bandwidth_only_predictor_ran(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's own CSV of steps/s alone: no link rate is known, so the ``_bw`` predictors are not run, and the
    inputs line says so and how to give one (it said 'bandwidth from none')."""
    validate_own(tmp_path, "n_workers,steps_per_s\n1,10.8\n2,17.4\n")
    printed = capsys.readouterr().out
    assert "bandwidth from" not in printed and "simulator_bw" not in printed
    assert ("no bandwidth (no bandwidth-only predictors: give --bandwidth, or bandwidth_bits_per_s in the CSV)"
            in printed)


@pytest.mark.parametrize(("rows", "knee", "note"), [
    ("1,10.8\n2,17.4\n4,16.8\n8,17.2\n", "measured knee N=2",
     "note: the knee is the smallest N measured (1-2, 4, 8) within 95% of the highest: a knee at an N not measured "
     "(3, 5-7) shows as the next N measured"),
    ("4,16.8\n", "measured knee -", "note: one N measured (4): no knee, which needs a curve")])
def test_a_knee_of_n_with_gaps_or_of_one_n_is_said_for_what_it_is(rows: str, knee: str, note: str,
                                                                  tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A user's runs at N = 1, 2, 4, 8 (or at one N): the summary, report.md and report.html gave a knee as if
    every N had been measured (one N: every predictor 'knee N=4', as if each had found the measured knee)."""
    validate_own(tmp_path, "n_workers,steps_per_s\n" + rows, "--html")
    printed = capsys.readouterr().out
    assert f"\n{knee}\n{note}" in printed
    sentence = note.removeprefix("note: ")
    sentence = sentence[0].upper() + sentence[1:]
    assert sentence in (tmp_path / "out" / "report.md").read_text()
    assert sentence.replace("'", "&#x27;") in (tmp_path / "out" / "report.html").read_text()
    assert ("knee N=" in printed.split(note, 1)[1]) == (knee != "measured knee -")


def test_inside_measured_range_is_said_of_the_n_with_repeats_everywhere(tmp_path: pathlib.Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """N = 2 ran once: the summary said 'inside measured range k/3', report.md and report.html 'k of 3', counting
    its one value as a range; each now counts the N run twice or more, and says so, in the same words."""
    validate_own(tmp_path, "n_workers,steps_per_s\n1,10.8\n1,11.2\n2,17.4\n3,17.2\n3,17.7\n", "--html")
    printed = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "out" / "comparison.csv")
    repeated = table[table["n_repeats"] > 1]
    assert list(repeated["n_workers"]) == [1, 3]
    report = (tmp_path / "out" / "report.md").read_text()
    page = (tmp_path / "out" / "report.html").read_text()
    names = [c.removesuffix("_error") for c in table.columns if c.endswith("_error")]
    assert names
    for name in names:
        inside = int(repeated[name].between(repeated["measured_min"], repeated["measured_max"]).sum())
        said = f"{inside} of 2 N with repeats"
        line = next(line for line in printed.splitlines() if line.startswith(f"{name} "))
        assert f"inside measured range {said}" in line, line
        row = next(line for line in report.splitlines() if line.startswith(f"| {name} |"))
        assert f" | {said} | " in row, row
        assert re.search(rf"<td>{re.escape(name)}</td>(<td>[^<]*</td>){{3}}<td>{said}</td>", page), name


def test_without_a_single_worker_file_the_report_says_what_stood_in_for_it(tmp_path: pathlib.Path) -> None:
    """A user's trace folder of steps alone and a CSV without N = 1: the report said 'single worker: none (no
    single-worker.json beside the trace)', and left it to be guessed whether the CSV's runs stood in for it and how
    one worker was simulated; with the file, that the simulated N = 1 is brought to its rate."""
    folder = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
    trace = tmp_path / "mytrace"
    trace.mkdir()
    for step in sorted((folder / "trace").glob("step_*.pb.gz")):
        shutil.copy(step, trace)
    measured = tmp_path / "mine.csv"
    measured.write_text("n_workers,steps_per_s\n2,17.4\n3,17.5\n")
    assert main(["validate", "--measured", str(measured), "--trace", str(trace), "--bandwidth", "500Mbit/s",
                 "--steps", "3", "--seeds", "1", "--html", "--out", str(tmp_path / "out")]) == 0
    said = ("single worker: none (no --single-worker, no single-worker.json beside the trace; the measurements' N = 1 "
            "rows are no input): one worker replayed as traced, tracing's own cost included; no CPU per transfer "
            "request for the PS (the bandwidth only)")
    assert f"- {said}\n" in (tmp_path / "out" / "report.md").read_text()
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<dt>single worker</dt><dd>" + said.split(": ", 1)[1].replace("'", "&#x27;") + "</dd>" in page
    shutil.copy(folder / "trace" / "link-profile.json", trace)
    assert main(["validate", "--measured", str(measured), "--trace", str(trace), "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "profiled")]) == 0
    assert ("tracing's own cost included; the PS's CPU per transfer request from the link profile's small requests, "
            "which underrate it\n") in (tmp_path / "profiled" / "report.md").read_text()
    shutil.copy(folder / "trace" / "single-worker.json", trace)
    assert main(["validate", "--measured", str(measured), "--trace", str(trace), "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "anchored")]) == 0
    assert (f"- single worker: {trace / 'single-worker.json'} (one untraced worker's run: the rate a simulated worker "
            "is brought to where the traced replay is slower, so N = 1's error is then no prediction"
            ) in (tmp_path / "anchored" / "report.md").read_text()


@pytest.mark.parametrize(("column", "rate"), [("bandwidth", "500Mbit/s"), ("bandwidth_bits_per_s", "5e8")])
def test_the_link_rate_is_said_to_come_from_the_column_it_was_read_from(column: str, rate: str,
                                                                        tmp_path: pathlib.Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A CSV whose rate is in 'bandwidth' (with its unit) was said to give it in 'bandwidth_bits_per_s', a column
    it does not have: the reader looking for where the rate came from looked for the wrong column."""
    measured = validate_own(tmp_path, f"n_workers,steps_per_s,{column}\n1,10.8,{rate}\n2,17.4,{rate}\n")
    assert f"bandwidth from {measured} ({column})\n" in capsys.readouterr().out
    assert (f"- bandwidth: 500 Mbit/s (62.5 MB/s) line rate from {measured} ({column}), "
            in (tmp_path / "out" / "report.md").read_text())


def test_the_readmes_own_runs_example_is_read_as_it_says(tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """README's "Checking a prediction against your own runs": its CSV, as written, validated against the bundled
    trace; its required columns are the reader's; the repeats it shows are averaged, the rate read with its unit."""
    from validation.measured import REQUIRED_COLUMNS

    readme = (DATA.parent / "README.md").read_text()
    section = readme.split("### Checking a prediction against your own runs", 1)[1].split("\n### ", 1)[0]
    blocks = section.split("```\n")[1::2]
    assert blocks[0].startswith("tracegen validate --measured runs.csv --trace TRACE --out DIR")
    runs = tmp_path / "runs.csv"
    runs.write_text(blocks[1])
    required = re.search(r"- Required: `(\w+)`, an integer from 1, and `(\w+)`", section)
    assert required is not None and required.groups() == REQUIRED_COLUMNS
    trace = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
    assert main(["validate", "--measured", str(runs), "--trace", str(trace), "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert f"bandwidth from {runs} (bandwidth)" in printed and "measured: N=2: 2 runs averaged" in printed
    assert "simulator_bw" in printed and "note: the knee is the smallest N measured (1-2, 4)" in printed


def test_each_workers_rate_given_for_all_workers_is_asked_about_in_the_report(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """steps_per_s that fall as each worker's own do (the testbed's worker_steps_per_s, copied for steps_per_s):
    the summary and report.md gave MAPEs of 200 % without a word on what the column counts."""
    measured = validate_own(tmp_path, "n_workers,steps_per_s\n1,10.8154\n2,8.70734\n3,5.76171\n")
    said = f"{measured}: steps_per_s at N=3 (5.762) is 0.53 of N=1's (10.82), as each worker's own rate falls"
    assert f"warning: {said}" in capsys.readouterr().out
    assert f"- {said}" in (tmp_path / "out" / "report.md").read_text()


def test_a_batch_size_other_than_the_traces_names_both_files(tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    measured = validate_own(tmp_path, "n_workers,steps_per_s,batch_size\n1,10.8,64\n2,17.4,64\n")
    said = f"{OWN_TRACE / 'meta.json'}: the trace was captured with batch_size 32, {measured} has 64"
    assert f"warning: {said}\n" in capsys.readouterr().out
    assert f"- {said}\n" in (tmp_path / "out" / "report.md").read_text()
