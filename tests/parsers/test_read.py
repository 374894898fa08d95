"""``read_trace``'s choice among the files of a directory or a pattern (:mod:`parsers.read`): a folder that holds
two traces, or a file that only looks like one of them, is refused in one line naming the file and what to do."""

from __future__ import annotations

import gzip
import pathlib
import shutil

import pytest

from parsers import TraceError, read_trace
from parsers.errors import MAX_MESSAGE_CHARS
from parsers.read import read_meta, side_files, trace_inputs
from parsers.tables import write_tables
from tracegen.cli import main

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
STEPS = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"  # as tracegen profile wrote them
RUN = next((DATA / "traces" / "tf2_pss" / "plugins" / "profile").iterdir())  # three hosts' .xplane.pb
VIEWER_RUN = next((DATA / "traces" / "tf2_pss_viewer" / "plugins" / "profile").iterdir())  # the same, as TensorBoard


def _one_line(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert len(err.strip()) <= MAX_MESSAGE_CHARS + len("tracegen inspect: error: "), err
    for part in parts:
        assert part in err, (part, err)


@pytest.mark.parametrize("stray", ["valid", "not an XSpace"])
def test_steps_with_a_stray_xplane_file_are_refused(tmp_path: pathlib.Path, stray: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of TF1 steps that also held one 'notes.xplane.pb' was read as that TF2 profile, its 12 steps
    counted as 'other files beside the TF2 profile, not read'; a stray file that was no XSpace ended in 'not an
    XSpace protobuf', as if the steps were the mistake."""
    folder = tmp_path / "trace"
    shutil.copytree(STEPS, folder)
    host = sorted(RUN.glob("*.xplane.pb"))[0]
    (folder / "notes.xplane.pb").write_bytes(host.read_bytes() if stray == "valid" else b"garbage")
    for path in (folder, f"{folder}/*.pb*", f"{folder}/*"):  # the directory, and patterns of its files
        assert main(["inspect", str(path)]) == 2
        _one_line(capsys.readouterr().err, f"{path}: holds a TF2 profile (1 .xplane.pb file, e.g. notes.xplane.pb)",
                  "and 12 trace files of no profiled host (e.g. step_000.pb.gz)",
                  "move one or the other to a directory of its own")


def test_steps_beside_trace_viewer_files_are_refused(tmp_path: pathlib.Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(VIEWER_RUN, run)
    shutil.copyfile(STEPS / "step_000.pb.gz", run / "step_000.pb.gz")
    with pytest.raises(TraceError, match=r"3 \.trace\.json\.gz files,.* 1 trace file of no profiled host"):
        read_trace(run)


def test_a_tf2_run_directory_with_tensorflows_other_tools_reads(tmp_path: pathlib.Path) -> None:
    """What TensorBoard's profiler keeps beside a host's .xplane.pb, each named after the host, is not read and
    counted as skipped, as before: not taken for another trace."""
    run = tmp_path / "logdir" / "plugins" / "profile" / RUN.name
    shutil.copytree(RUN, run)
    for viewer in VIEWER_RUN.glob("*.trace.json.gz"):  # the same hosts' trace-viewer files, as TensorBoard made them
        shutil.copyfile(viewer, run / viewer.name)
    host = sorted(RUN.glob("*.xplane.pb"))[0].name.removesuffix(".xplane.pb")
    (run / f"{host}.overview_page.pb").write_bytes(b"\x0a\x00")
    (run / f"{host}.memory_profile.json.gz").write_bytes(gzip.compress(b"{}"))
    expected = read_trace(RUN)
    for path in (run, run.parents[2], f"{run}/*"):
        trace = read_trace(path)
        assert trace.skipped["other files beside the TF2 profile, not read"] == 5
        assert trace.ops.equals(expected.ops)


@pytest.mark.parametrize(("name", "text"), [("notes.txt", "Run 3: link 500Mbit, queue 100\n"),
                                            ("README.txt", "# README\n\nThese are the MLP's steps.\n")])
def test_a_note_among_the_steps_is_named_with_what_to_do(tmp_path: pathlib.Path, name: str, text: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A notes.txt beside the steps ended in 'not a RunMetadata or StepStats protobuf: byte 0: field 10 has length
    117, more than the 38 bytes left in its message'. Not ignored either: a truncated step would vanish with it."""
    folder = tmp_path / "trace"
    shutil.copytree(STEPS, folder)
    (folder / name).write_text(text)
    assert main(["inspect", str(folder)]) == 2
    _one_line(capsys.readouterr().err, f"{folder / name}: not a text-format RunMetadata or StepStats step: its first "
              "line", "move it away: among steps, every *.txt file is read as one")


@pytest.mark.parametrize(("head", "what"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image, not a trace"),  # 'byte 10: field number 0'
    (b"PK\x03\x04\x14\x00\x00\x00", "a zip archive, not a trace"),  # 'byte 2: field number 0'
    (b"\x7fELF\x02\x01\x01\x00", "an executable (ELF), not a trace"),  # 'field 15 has wire type 7'
    (b"%PDF-1.4\n", "a PDF document, not a trace"),  # 'its first line '%PDF-1.4' starts no field of one'
    (b"BZh91AY&SY", "bzip2-compressed data, not a trace (it begins with b'BZh'); decompress it"),
])
def test_a_file_of_another_kind_is_named_as_such(tmp_path: pathlib.Path, head: bytes, what: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is no trace was parsed as a protobuf's fields, and the error told of wire types; a user who
    gave an image or an archive by mistake is now told which, alone or among the steps of a directory."""
    alone = tmp_path / "trace.pb"
    alone.write_bytes(head + bytes(range(256)))
    folder = tmp_path / "steps"
    shutil.copytree(STEPS, folder)
    (folder / "step_001.pb").write_bytes(alone.read_bytes())
    for path, named in ((alone, alone), (folder, folder / "step_001.pb")):
        assert main(["inspect", str(path)]) == 2
        _one_line(capsys.readouterr().err, f"{named}: {what}")


def test_one_table_of_converted_tables_is_named_as_such(tmp_path: pathlib.Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """One Parquet table of a conversion (or a sweep's part) given as the trace was parsed as a protobuf, and the
    error told of 'byte 53: field 6 has wire type 7' (a hardening pass): it names what the file is, and that the
    tables are read as their folder."""
    tables = tmp_path / "tables"
    write_tables(read_trace(STEPS), tables, "parquet")
    assert main(["inspect", str(tables / "ops.parquet")]) == 2
    _one_line(capsys.readouterr().err, f"{tables / 'ops.parquet'}: a Parquet file, not a trace (it begins with "
              "b'PAR1'); converted tables are read as their folder: give the folder")


def test_the_files_beside_a_trace_are_found_where_its_readers_look() -> None:
    """``convert`` carries them to its output: beside a directory of steps, a step file or a glob of them, and a TF2
    profile's run directory (in its logdir, beside plugins/); a name not there is left out."""
    assert [p.name for p in side_files(STEPS)] == ["meta.json", "link-profile.json", "single-worker.json"]
    assert side_files(STEPS / "step_000.pb.gz") == side_files(STEPS) == side_files(STEPS / "step_*.pb.gz")
    assert side_files(RUN) == [DATA / "traces" / "tf2_pss" / "meta.json"]
    assert side_files(VIEWER_RUN) == []


@pytest.mark.parametrize(("content", "what"), [
    (b"5", "a number (5)"), (b"-3.5e2\n", "a number (-3.5e2)"), (b"-0", "a number (-0)"),
    (b"1e999", "a number (1e999)"),
    (b'"text"', "a string ('text')"), (b"null", "null"), (b"\xef\xbb\xbf true ", "true"),
])
def test_json_that_is_no_object_is_named_as_such(tmp_path: pathlib.Path, content: bytes, what: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """An x.json that held only '5' was told 'not a text-format RunMetadata or StepStats step: its first line '5'
    starts no field of one': the JSON it is went unnamed. Then an x.pb that held it was told 'JSON that is not a
    trace', and a step_002.pb among steps still 'its first line '5' starts no field': each named one kind of trace
    it is not, where it is none of them."""
    folder = tmp_path / "steps"
    shutil.copytree(STEPS, folder)
    (folder / "step_002.pb.gz").unlink()
    (folder / "step_002.pb").write_bytes(content)
    rule = f"not a trace but {what} alone: no RunMetadata or StepStats (binary or text), nor a timeline JSON object"
    for name in ("x.json", "x.pb"):
        path = tmp_path / name
        path.write_bytes(content)
        assert main(["inspect", str(path)]) == 2
        _one_line(capsys.readouterr().err, f"{path}: {rule}")
    assert main(["inspect", str(folder)]) == 2
    _one_line(capsys.readouterr().err, f"{folder / 'step_002.pb'}: {rule}; move it away")


@pytest.mark.parametrize("content", [b"5 6", b"NaN", b"-Infinity", b"step_stats"])
def test_what_is_no_json_is_still_read_as_a_text_step(tmp_path: pathlib.Path, content: bytes,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.pbtxt"
    path.write_bytes(content)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert "JSON" not in err and "text-format" in err, err


def test_a_run_folder_whose_trace_is_in_a_subfolder_says_so(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The testbed's run folder (measured.csv, and the trace in trace/), as 'validate --measured' takes it, given to
    inspect or predict said only 'no trace files found'; a folder with no trace below it still says only that."""
    run = tmp_path / "run"
    shutil.copytree(STEPS.parent, run)
    assert main(["inspect", str(run)]) == 2
    _one_line(capsys.readouterr().err, f"{run}: no trace files", "; its folder trace/ holds one: pass that")
    tables = tmp_path / "conv"
    (tables / "notes").mkdir(parents=True)
    assert main(["convert", str(STEPS), "--to", "csv", str(tables / "t")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tables)]) == 2  # converted tables in a subfolder: a trace too
    _one_line(capsys.readouterr().err, "; its folder t/ holds one: pass that")
    shutil.rmtree(tables / "t")
    assert main(["inspect", str(tables)]) == 2
    err = capsys.readouterr().err
    _one_line(err, f"{tables}: no trace files")
    assert "holds one" not in err


def test_trace_inputs_are_the_files_read_trace_reads(tmp_path: pathlib.Path) -> None:
    """What a sweep hashes as the trace (tracegen.sweepgrid.trace_files): the steps read, not the Chrome JSON
    passed over for them nor another file in the folder; a table directory's tables of its manifest's format."""
    mlp = tmp_path / "mlp"
    shutil.copytree(DATA / "traces" / "mlp", mlp)
    (mlp / "curve.csv").write_text("n_workers\n1\n")
    assert trace_inputs(mlp) == [mlp / f"step_00{i}.pb" for i in range(3)]
    assert trace_inputs(mlp / "*.json") == [mlp / f"step_00{i}.json" for i in range(3)]  # meta.json is beside
    assert trace_inputs(mlp / "step_001.json") == [mlp / "step_001.json"]
    tables = tmp_path / "tables"
    written = write_tables(read_trace(mlp), tables, "csv")
    (tables / "ops.parquet").write_bytes(b"an earlier conversion's: not read")
    assert trace_inputs(tables) == sorted(written) and read_trace(tables).source_format
    logdir = DATA / "traces" / "tf2_pss"
    assert trace_inputs(logdir) == sorted(logdir.rglob("*.xplane.pb")) != []
    assert trace_inputs(tmp_path / "absent") == []


def test_a_file_beside_a_trace_that_is_a_link_to_nothing_is_listed(tmp_path: pathlib.Path) -> None:
    """Left out (exists() is False for it), it was read as absent; listed, its reader says what the link is."""
    shutil.copy(STEPS / "step_000.pb.gz", tmp_path)
    (tmp_path / "link-profile.json").symlink_to("link-profile.json")  # round a loop
    (tmp_path / "meta.json").symlink_to("moved.json")
    assert [p.name for p in side_files(tmp_path)] == ["meta.json", "link-profile.json"]


def test_a_gzipped_meta_json_is_read_as_the_other_files_beside_a_trace_are(tmp_path: pathlib.Path) -> None:
    """link-profile.json and single-worker.json are read plain or gzipped; meta.json was refused as 'line 1,
    byte 1: JSON is not valid UTF-8', a message about its text of a file that is gzip."""
    shutil.copy(STEPS / "step_000.pb.gz", tmp_path)
    (tmp_path / "meta.json").write_bytes(gzip.compress(b'{"batch_size": 64}'))
    assert read_meta(tmp_path) == {"batch_size": 64}
