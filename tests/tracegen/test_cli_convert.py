"""``tracegen convert`` (:mod:`tracegen.cli_convert`): the outputs it refuses to write or replace, and the files the
readers take from beside a trace, which it carries: a converted trace predicts what the trace predicts, and no other
trace's files at the output are read with it."""

from __future__ import annotations

import json
import pathlib
import re
import shutil

import pytest

from parsers import read_trace
from parsers.proto import tf_trace_pb2
from parsers.read import BESIDE
from tracegen.cli import main

from tracegen_support import ROOT

DEV = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"  # beside it: all three
MLP = ROOT / "data" / "traces" / "mlp"  # beside it: meta.json only
CNN = ROOT / "data" / "traces" / "cnn"
SMALL = ["--workers", "1-2", "--seeds", "1", "--steps", "5", "--warmup-steps", "1", "--jobs", "1"]


def _out(tmp_path: pathlib.Path, to: str) -> pathlib.Path:
    return tmp_path / "conv" / ("mlp.json" if to == "chrome" else "tables")


@pytest.mark.parametrize("to", ["chrome", "parquet", "csv"])
def test_predict_on_the_converted_trace_gives_the_same_curve(to: str, tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The side files were left behind: predict on the conversion used the trace's own link estimate (not the
    netbench profile) and a batch of 1 (samples/s were steps/s), and its curve.csv differed from the trace's."""
    out = _out(tmp_path, to)
    assert main(["convert", str(DEV), "--to", to, str(out)]) == 0
    said = capsys.readouterr().out
    assert main(["predict", str(DEV), *SMALL, "--out", str(tmp_path / "orig")]) == 0
    assert main(["predict", str(out), *SMALL, "--out", str(tmp_path / "conv_pred")]) == 0
    original = (tmp_path / "orig" / "curve.csv").read_bytes()
    assert (tmp_path / "conv_pred" / "curve.csv").read_bytes() == original
    header, first = original.decode().splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert float(row["samples_per_s"]) > float(row["steps_per_s"])  # meta.json's batch size was read
    assert f"carried {', '.join(BESIDE)} from {DEV} into {out.parent if to == 'chrome' else out}" in said, said
    for name in BESIDE:
        assert (out.parent if to == "chrome" else out).joinpath(name).read_bytes() == (DEV / name).read_bytes()


@pytest.mark.parametrize("to", ["chrome", "csv"])
def test_another_traces_side_file_at_the_output_is_replaced_only_with_force(
        to: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second trace converted into the same folder would be read with the first one's meta.json."""
    assert main(["convert", str(MLP), "--to", to, str(_out(tmp_path, to))]) == 0
    target = _out(tmp_path, to).with_name("cnn.json") if to == "chrome" else _out(tmp_path, to)
    meta = (target.parent if to == "chrome" else target) / "meta.json"
    capsys.readouterr()
    assert main(["convert", str(CNN), "--to", to, str(target)]) == 2
    err = capsys.readouterr().err
    assert err == (f"tracegen convert: error: {meta}: already exists and differs from the trace's {CNN / 'meta.json'}; "
                   "it would be read with the converted trace: write into a folder of its own, or pass --force to "
                   "replace it\n")
    assert meta.read_bytes() == (MLP / "meta.json").read_bytes()
    assert to != "chrome" or not target.exists()
    assert main(["convert", str(CNN), "--to", to, str(target), "--force"]) == 0
    assert meta.read_bytes() == (CNN / "meta.json").read_bytes()


def test_a_side_file_the_trace_lacks_is_removed_only_with_force(tmp_path: pathlib.Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Converting a trace without a link profile over a conversion of one with it left the old link-profile.json
    beside the new tables, and predict read it as the new trace's link."""
    tables = tmp_path / "tables"
    assert main(["convert", str(DEV), "--to", "csv", str(tables)]) == 0
    shutil.copyfile(MLP / "meta.json", tables / "meta.json")  # the same: only the two that MLP lacks are in the way
    assert main(["convert", str(MLP), "--to", "csv", str(tables)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tracegen convert: error: {tables / 'link-profile.json'}: would be read with the "
                          "converted trace, which has no link-profile.json beside it") and "--force" in err, err
    assert main(["convert", str(MLP), "--to", "csv", str(tables), "--force"]) == 0
    said = capsys.readouterr().out
    assert sorted(p.name for p in tables.iterdir() if p.name in BESIDE) == ["meta.json"]
    assert f"removed {tables / 'link-profile.json'}, {tables / 'single-worker.json'}: " in said, said


def test_a_chrome_file_beside_its_trace_or_an_identical_side_file_needs_no_force(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The trace's own meta.json is where a Chrome file beside it looks; one with the same bytes is the same."""
    trace = tmp_path / "mlp"
    shutil.copytree(MLP, trace)
    assert main(["convert", str(trace), "--to", "chrome", str(trace / "all.json")]) == 0
    assert "carried" not in capsys.readouterr().out
    assert main(["convert", str(trace), "--to", "chrome", str(tmp_path / "out" / "a.json")]) == 0
    assert main(["convert", str(trace), "--to", "chrome", str(tmp_path / "out" / "b.json")]) == 0
    assert "carried meta.json from" in capsys.readouterr().out


def test_a_side_files_name_or_a_folder_in_its_place_is_refused(tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A Chrome trace named meta.json would be read as the capture settings of the folder's traces (and the trace's
    meta.json copied over it); a folder where a side file goes would fail the rename after the trace was written."""
    assert main(["convert", str(MLP), "--to", "chrome", str(tmp_path / "meta.json"), "--force"]) == 2
    assert "meta.json is read beside a trace" in capsys.readouterr().err
    (tmp_path / "meta.json").mkdir()
    assert main(["convert", str(MLP), "--to", "chrome", str(tmp_path / "t.json"), "--force"]) == 2
    err = capsys.readouterr().err
    assert err == (f"tracegen convert: error: {tmp_path / 'meta.json'}: a directory where convert puts the trace's "
                   "meta.json; move it away\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]


def test_a_chrome_file_named_as_the_tables_manifest_is_refused(tmp_path: pathlib.Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A Chrome trace written as DIR/trace.json made DIR read as converted tables: inspect DIR failed on
    "'table_format' must be csv or parquet", and the next conversion into DIR was refused."""
    assert main(["convert", str(MLP), "--to", "chrome", str(tmp_path / "trace.json")]) == 2
    assert "trace.json is the name of converted tables' manifest" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    assert main(["convert", str(MLP), "--to", "chrome", str(tmp_path / "chrome.json")]) == 0
    assert main(["inspect", str(tmp_path)]) == 0


@pytest.mark.parametrize(("to", "name"), [("parquet", "x.json"), ("csv", "out.json"), ("csv", "t.csv.gz"),
                                         ("csv", "x.parquet")])
def test_tables_named_like_a_file_are_refused_unless_the_name_ends_in_a_slash(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], to: str, name: str) -> None:
    """'convert T --to parquet x.json' made a directory x.json of eight files where one file was expected,
    and said so only in passing."""
    out = tmp_path / name
    assert main(["convert", str(MLP), "--to", to, str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: --to {to} writes a directory (a file per table, and trace.json), not one" in err
    assert f"e.g. {tmp_path / name.partition('.')[0]}, or end the name in '/' to use it\n" in err, err
    assert err.count("\n") == 1 and not out.exists(), err
    assert main(["convert", str(MLP), "--to", to, f"{out}/"]) == 0  # a directory, as asked
    assert (out / "trace.json").is_file()
    capsys.readouterr()
    assert main(["convert", str(CNN), "--to", to, str(out), "--force"]) == 0  # there already: a directory, plainly


def test_a_parquet_dataset_may_be_named_as_datasets_are(tmp_path: pathlib.Path) -> None:
    """A folder of Parquet files named x.parquet is how Spark and DuckDB users name a dataset: not refused."""
    assert main(["convert", str(MLP), "--to", "parquet", str(tmp_path / "x.parquet")]) == 0
    assert (tmp_path / "x.parquet" / "trace.json").is_file()
    # and it is the trace, read back by its dataset's name (a manifest alone passed, whatever the tables held)
    assert read_trace(tmp_path / "x.parquet").equals(read_trace(MLP))


def test_a_chrome_file_named_as_a_folder_or_as_tables_is_refused(tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """'--to chrome new/' wrote a file named 'new' (pathlib drops the '/') and carried meta.json into its parent;
    '--to chrome x.parquet' wrote Chrome JSON under a Parquet name."""
    assert main(["convert", str(MLP), "--to", "chrome", f"{tmp_path / 'new'}/"]) == 2
    assert f"{tmp_path / 'new'}/: ends in '/', a directory; --to chrome writes one file" in capsys.readouterr().err
    assert main(["convert", str(MLP), "--to", "chrome", str(tmp_path / "x.parquet")]) == 2
    assert "x.parquet: --to chrome writes one Chrome JSON file, but the name reads as '.parquet'" in (
        capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("trace_in", "name"), [
    ("mlp", "step_000.json"),  # TensorFlow's timeline of step 0, passed over for its RunMetadata
    ("tf2_pss", "plugins/profile/2026_12_01_12_50_54/127.0.0.1_47463.xplane.pb"),  # a host's profile, read
], ids=["timeline-beside-runmetadata", "tf2-host-profile"])
def test_force_never_replaces_a_trace_file_in_the_folder_it_reads(trace_in: str, name: str, tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``convert mlp --to chrome mlp/step_000.json --force`` wrote tracegen's JSON of all three steps over
    TensorFlow's timeline of step 0, and a TF2 logdir's host profile went the same way: neither was among the
    steps' sources that the check looked at."""
    trace = tmp_path / trace_in
    shutil.copytree(ROOT / "data" / "traces" / trace_in, trace)
    before = {p: p.read_bytes() for p in trace.rglob("*") if p.is_file()}
    assert main(["convert", str(trace), "--to", "chrome", str(trace / name), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{trace / name}: one of the trace's own files" in err, err
    assert err.count(str((trace / name).parent)) == 1, err  # its folder named once, in the path
    assert {p: p.read_bytes() for p in trace.rglob("*") if p.is_file()} == before
    assert main(["convert", str(trace), "--to", "chrome", str(trace / "chrome.json")]) == 0  # a new name is fine


def test_a_chrome_file_that_would_be_read_with_the_trace_in_its_folder_is_refused(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``convert DIR --to chrome DIR/chrome.json`` on a folder whose one step is Chrome JSON wrote a second Chrome
    JSON there, and the folder was refused from then on ('2 Chrome JSON files'); in a TF2 profile's run directory,
    a file of no profiled host had the profile refused the same way. Beside RunMetadata steps, or at a logdir's
    top, it is passed over, and written."""
    steps = tmp_path / "steps"
    steps.mkdir()
    shutil.copyfile(MLP / "step_001.json", steps / "step_001.json")
    logdir = tmp_path / "tf2"
    shutil.copytree(ROOT / "data" / "traces" / "tf2_pss", logdir)
    [run] = (logdir / "plugins" / "profile").iterdir()
    for trace, out in ((steps, steps / "chrome.json"), (logdir, run / "chrome.json")):
        assert main(["convert", str(trace), "--to", "chrome", str(out), "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{out}: would be read with the trace's files beside it" in err, err
        assert err.count(str(out.parent)) == 1, err  # the folder was named twice: in the path, then again
        assert not out.exists() and main(["inspect", str(trace)]) == 0
    assert main(["convert", str(logdir), "--to", "chrome", str(logdir / "chrome.json")]) == 0
    mlp = tmp_path / "mlp"
    shutil.copytree(MLP, mlp)
    assert main(["convert", str(mlp), "--to", "chrome", str(mlp / "chrome.json")]) == 0
    assert main(["convert", str(mlp), "--to", "chrome", str(mlp / "chrome.pb")]) == 2  # read as a step


def _inspected(trace: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """``inspect --json`` of ``trace``, less where it was read from."""
    assert main(["inspect", "--json", str(trace)]) == 0
    summary = json.loads(capsys.readouterr().out)
    del summary["source"]
    return summary


@pytest.mark.parametrize("to", ["chrome", "parquet", "csv"])
def test_a_record_tensorflow_wrote_twice_is_read_once_and_the_conversion_reads_back(
        to: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A RunMetadata whose step stats hold a worker op's record and a RecvTensor's twice, every field the same (as
    TensorFlow writes some), read with one op a step too many, and its tables were refused as a file joined to
    itself ('ops.csv: line 28: repeats line 2 exactly'): the conversion of a readable trace did not read back."""
    run = tf_trace_pb2.RunMetadata()
    run.ParseFromString((MLP / "step_000.pb").read_bytes())
    for kind in ("op", "transfer"):
        dev, node = next((d, n) for d in run.step_stats.dev_stats if "/job:worker" in d.device for n in d.node_stats
                         if (n.node_name == "RecvTensor") == (kind == "transfer") and n.node_name)
        dev.node_stats.add().CopyFrom(node)
    trace = tmp_path / "twice"
    trace.mkdir()
    (trace / "step_000.pb").write_bytes(run.SerializeToString())
    once = tmp_path / "once"
    once.mkdir()
    shutil.copyfile(MLP / "step_000.pb", once / "step_000.pb")
    expected = _inspected(once, capsys)
    read = _inspected(trace, capsys)
    assert read.pop("skipped") == {"records TensorFlow wrote twice, exactly the same (node, device, times, thread): "
                                   "read once": 2}
    assert expected.pop("skipped") == {}
    assert read == expected  # the ops and transfers of the step as it was, once each
    out = _out(tmp_path, to)
    assert main(["convert", str(trace), "--to", to, str(out)]) == 0
    assert ("note: 2 records that TensorFlow wrote twice, exactly the same, are written once, as they were read "
            "(inspect counts them under 'skipped')\n") in capsys.readouterr().out
    converted = _inspected(out, capsys)
    assert converted.pop("skipped") == {"records TensorFlow wrote twice, exactly the same (node, device, times, "
                                        "thread): read once": 2}
    assert converted == expected


def test_one_record_tensorflow_wrote_twice_is_said_in_the_singular(tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The note said '1 record(s) that TensorFlow wrote twice, exactly the same, are written once'."""
    run = tf_trace_pb2.RunMetadata()
    run.ParseFromString((MLP / "step_000.pb").read_bytes())
    dev, node = next((d, n) for d in run.step_stats.dev_stats if "/job:worker" in d.device for n in d.node_stats
                     if n.node_name != "RecvTensor" and n.node_name)
    dev.node_stats.add().CopyFrom(node)
    trace = tmp_path / "twice"
    trace.mkdir()
    (trace / "step_000.pb").write_bytes(run.SerializeToString())
    assert main(["convert", str(trace), "--to", "chrome", str(tmp_path / "once.json")]) == 0
    assert ("note: 1 record that TensorFlow wrote twice, exactly the same, is written once, as it was read (inspect "
            "counts it under 'skipped')\n") in capsys.readouterr().out


@pytest.mark.parametrize("to", ["chrome", "csv"])
def test_the_files_written_are_counted_in_words(to: str, tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """'wrote 1 file(s): mlp.json': one file (Chrome JSON) in the singular, the tables in the plural, each listed."""
    assert main(["convert", str(MLP), "--to", to, str(_out(tmp_path, to))]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote "))
    said = re.fullmatch(r"wrote (\d+) (files?): (.*)", line)
    assert said is not None, line
    count = int(said[1])
    assert count == len(said[3].split(", ")), line
    assert (count == 1, said[2]) == ((True, "file") if to == "chrome" else (False, "files")), line


def test_two_timeline_transfers_of_one_moment_convert_to_tables_that_read_back(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TF's timeline JSON names no tensor: two RecvTensor events of the same start and length on two threads are
    two transfers, and two equal rows of the transfers table, which the tables' reader refused as a file joined to
    itself."""
    doc = json.loads((MLP / "step_001.json").read_text())
    first, second = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["name"] == "RecvTensor"][:2]
    assert first["tid"] != second["tid"]
    second["ts"], second["dur"] = first["ts"], first["dur"]
    trace = tmp_path / "timeline"
    trace.mkdir()
    (trace / "step_001.json").write_text(json.dumps(doc))
    expected = _inspected(trace, capsys)
    assert expected["pull_count_recorded_per_step"] == [6] and expected["skipped"] == {}
    for to in ("csv", "parquet", "chrome"):
        out = tmp_path / to if to != "chrome" else tmp_path / "chrome" / "t.json"
        assert main(["convert", str(trace), "--to", to, str(out)]) == 0
        assert "note:" not in capsys.readouterr().out  # nothing read once: both kept
        assert _inspected(out, capsys) == expected


def test_a_chrome_file_the_traces_pattern_would_match_is_refused(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace given as a glob was not looked at as a folder is: ``convert 'DIR/step_*.json' --to chrome
    DIR/step_009.json`` wrote a second Chrome JSON the pattern matches, and the pattern was refused from then on
    ('2 Chrome JSON files'); a RunMetadata-named file among RunMetadata steps would be read as one more step."""
    monkeypatch.chdir(tmp_path)  # paths as typed, relative: the message names two of them in its 300 characters
    steps = pathlib.Path("steps")
    steps.mkdir()
    shutil.copyfile(MLP / "step_001.json", steps / "step_001.json")
    mlp = pathlib.Path("mlp")
    shutil.copytree(MLP, mlp)
    other = pathlib.Path("other")  # a folder the pattern reaches into, holding no step yet
    other.mkdir()
    logdir = pathlib.Path("tf2")
    shutil.copytree(ROOT / "data" / "traces" / "tf2_pss", logdir)
    [run] = (logdir / "plugins" / "profile").iterdir()
    for pattern, out in ((steps / "step_*.json", steps / "step_009.json"), (mlp / "step_*", mlp / "step_009.pb"),
                         (pathlib.Path("*", "step_00[0-2].pb"), other / "step_000.pb"),
                         (run / "*", run / "chrome.json")):  # a file of no profiled host: the profile refused
        assert main(["convert", str(pattern), "--to", "chrome", str(out), "--force"]) == 2
        err = capsys.readouterr().err
        assert err == (f"tracegen convert: error: {out}: matches the trace's pattern {str(pattern)!r}, so would be "
                       "read as part of it; write it elsewhere\n")
        assert not out.exists() and main(["inspect", str(pattern)]) == 0
    capsys.readouterr()
    for pattern, out in ((steps / "step_*.json", steps / "chrome.json"), (mlp / "step_*", mlp / "step_009.json"),
                         (steps / "step_*.json", steps / ".step_009.json")):  # not matched; passed over; hidden
        assert main(["convert", str(pattern), "--to", "chrome", str(out)]) == 0
        assert main(["inspect", str(pattern)]) == 0


def test_convert_refuses_to_overwrite_without_force(tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.json"
    out.write_text("precious")
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "chrome", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == "precious"
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "chrome", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["traceEvents"]


def test_convert_says_when_the_output_is_of_the_wrong_kind(tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(ROOT / "data/traces/mlp")
    assert main(["convert", trace, "--to", "chrome", str(tmp_path), "--force"]) == 2
    assert f"{tmp_path}: a directory; --to chrome writes one file" in capsys.readouterr().err
    (tmp_path / "f").write_text("precious")
    assert main(["convert", trace, "--to", "csv", str(tmp_path / "f")]) == 2
    assert "f: not a directory; --to csv writes" in capsys.readouterr().err
    assert (tmp_path / "f").read_text() == "precious" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "chrome"])
def test_convert_refuses_an_empty_output_path(fmt: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """'convert TRACE "" --to csv' (an unset "$OUT") wrote the eight tables into the current directory, where
    predict, plan, sweep and validate refuse an empty --out (a hardening pass)."""
    monkeypatch.chdir(tmp_path)
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", fmt, ""]) == 2
    what = "a file" if fmt == "chrome" else "a directory"
    assert capsys.readouterr().err == f"tracegen convert: error: 'out' must name {what} (got an empty string)\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "chrome"])
def test_convert_refuses_standard_output(fmt: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """'convert TRACE -' wrote a file named '-' (the usual sign for standard output), and its 'wrote' line said so
    only in passing; it is refused, and './-' still names such a file."""
    monkeypatch.chdir(tmp_path)
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", fmt, "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracegen convert: error: 'out' '-': convert writes") and "./-" in err
    assert err.count("\n") == 1 and list(tmp_path.iterdir()) == []
    if fmt == "chrome":
        assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", fmt, "./-"]) == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["-", "meta.json"]  # and the trace's meta.json


def test_convert_writes_no_chrome_trace_into_a_directory_of_tables(tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """'convert tables --to chrome tables/all.json' was taken, and the tables could not be read again ('holds
    converted tables and trace files too'); named trace.json, with --force, it replaced their manifest. The
    converse (tables into a directory of steps) was refused already."""
    tables = tmp_path / "tables"
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "csv", str(tables)]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in tables.iterdir()}
    for name in ("all.json", "trace.json"):
        assert main(["convert", str(tables), "--to", "chrome", str(tables / name), "--force"]) == 2
        err = capsys.readouterr().err
        assert err == (f"tracegen convert: error: {tables}: holds converted tables (trace.json); a trace written "
                       "there would be read with them, and they could not be read again: write it elsewhere\n")
    assert {p.name: p.read_bytes() for p in tables.iterdir()} == before
    assert main(["inspect", str(tables)]) == 0


def test_convert_writes_no_tables_over_a_directory_of_steps(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """'convert steps --to csv steps' wrote the tables beside the steps, and from then on every read of the
    directory read the tables and passed over the steps without a word: a step deleted or added there changed
    nothing (a hardening pass)."""
    steps = tmp_path / "mlp"
    shutil.copytree(ROOT / "data/traces/mlp", steps)
    for fmt in ("csv", "parquet"):
        assert main(["convert", str(steps), "--to", fmt, str(steps), "--force"]) == 2
        err = capsys.readouterr().err
        assert f"{steps}: holds trace files (e.g. step_000.json)" in err and len(err.splitlines()) == 1, err
    assert not (steps / "trace.json").exists() and not (steps / "ops.csv").exists()
    assert main(["convert", str(steps), "--to", "csv", str(tmp_path / "tables")]) == 0
    assert main(["convert", str(tmp_path / "tables"), "--to", "csv", str(tmp_path / "tables"), "--force"]) == 0


def test_convert_force_in_another_format_removes_the_earlier_conversions_tables(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'convert cnn --to csv DIR --force' over an mlp conversion to Parquet left the seven Parquet tables of the mlp
    beside the new CSV ones (a hardening pass): read with pandas, DIR/ops.parquet was the other trace. They go
    once the new tables are written, and the summary says so; a file of the user's, not a table, stays."""
    from parsers.tables import SCHEMAS

    tables = tmp_path / "tables"
    assert main(["convert", str(ROOT / "data/traces/mlp"), "--to", "parquet", str(tables)]) == 0
    (tables / ".notes").write_text("mine")
    capsys.readouterr()
    assert main(["convert", str(ROOT / "data/traces/cnn"), "--to", "csv", str(tables), "--force"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("removed 7 files of the earlier conversion in parquet: ops.parquet, "), out
    assert sorted(p.name for p in tables.iterdir()) == sorted([".notes", "trace.json", "meta.json",  # cnn's
                                                               *(f"{n}.csv" for n in SCHEMAS)])
    assert main(["convert", str(ROOT / "data/traces/cnn"), "--to", "csv", str(tables), "--force"]) == 0
    assert "removed" not in capsys.readouterr().out
    assert main(["inspect", "--json", str(tables)]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == f"{tables} (from {ROOT / 'data/traces/cnn'})"


def test_convert_never_replaces_a_file_of_the_trace_it_reads(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``convert DIR DIR/meta.json --to chrome --force`` replaced the trace's own meta.json with a Chrome trace (and
    a step file the same way): --force replaces an earlier output, never what the run reads."""
    trace = tmp_path / "mlp"
    shutil.copytree(ROOT / "data" / "traces" / "mlp", trace)
    for name in ("meta.json", "step_000.pb"):
        before = (trace / name).read_bytes()
        assert main(["convert", str(trace), str(trace / name), "--to", "chrome", "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{trace / name}: is an input of this run" in err, err
        assert (trace / name).read_bytes() == before
    assert main(["convert", str(trace), str(tmp_path / "out.json"), "--to", "chrome"]) == 0


def test_convert_tables_then_inspect_them(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(ROOT / "data/traces/cnn"), "--to", "parquet", str(tmp_path / "tables")]) == 0
    capsys.readouterr()
    assert main(["inspect", "--json", str(tmp_path / "tables")]) == 0
    from_tables = json.loads(capsys.readouterr().out)
    assert main(["inspect", "--json", str(ROOT / "data/traces/cnn")]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in from_tables.items() if k != "source"} == {k: v for k, v in direct.items()
                                                                       if k != "source"}
