"""``tracegen.outputs``: a symbolic link a user has where an output goes is theirs, even when it leads nowhere."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from tracegen.cli import main
from tracegen.errors import ConfigError
from tracegen.outputs import OutputDir, refuse_existing, refuse_input

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = ROOT / "data" / "traces" / "mlp"
# a writer in the middle of an atomic write (as convert's Chrome file, predict's staged files are written)
WRITER = """
import sys, time
from parsers.atomic import open_atomic
with open_atomic(sys.argv[1]) as fh:
    fh.write(b"half a trace")
    fh.flush()
    print("writing", flush=True)
    time.sleep(600)
"""


def _writing(target: pathlib.Path) -> subprocess.Popen[bytes]:
    """A process that has begun writing ``target`` atomically and waits there, its temporary file beside it."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    with proc.stdout:  # it prints nothing more
        assert proc.stdout.readline() == b"writing\n"
    return proc


def _temporary(target: pathlib.Path, pid: int) -> pathlib.Path:
    [temp] = [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.{pid}.")]
    return temp


def _killed(target: pathlib.Path) -> pathlib.Path:
    """The temporary file a writer of ``target`` killed with SIGKILL half way left."""
    proc = _writing(target)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    return _temporary(target, proc.pid)


def test_a_killed_converts_temporary_file_goes_with_the_next_write_and_a_live_ones_stays(
        tmp_path: pathlib.Path) -> None:
    """A convert killed with SIGKILL left ``.mlp.json.<hex>.tmp`` beside its output for ever: nothing that wrote
    there later looked at it. The next write of that file removes it, once its writer is gone; a writer still at
    work keeps its own."""
    out = tmp_path / "mlp.json"
    left = _killed(out)
    live = _writing(out)
    try:
        theirs = _temporary(out, live.pid)
        assert main(["convert", str(MLP), "--to", "chrome", str(out)]) == 0
        assert not left.exists() and theirs.read_bytes() == b"half a trace"
        assert out.read_bytes().startswith(b"{")
    finally:
        live.kill()
        live.wait()
    assert main(["convert", str(MLP), "--to", "chrome", str(out), "--force"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json", "mlp.json"]


def test_an_output_directory_removes_a_killed_writers_temporary_files_not_a_live_ones(tmp_path: pathlib.Path) -> None:
    """A run taking DIR's lock removed every temporary file of tracegen's there, a convert's still being written
    into DIR among them (its rename then failed): the lock is the output directory runs', not every writer's."""
    left = _killed(tmp_path / "chrome.json")
    live = _writing(tmp_path / "other.json")
    try:
        theirs = _temporary(tmp_path / "other.json", live.pid)
        with OutputDir(tmp_path, ["curve.csv"]) as out:
            out.write("curve.csv", "n_workers\n1\n")
        assert not left.exists() and theirs.exists()
    finally:
        live.kill()
        live.wait()


@pytest.mark.parametrize("target", ["elsewhere/missing.csv", "curve.csv"])  # dangling; a loop onto itself
def test_a_link_to_nothing_where_an_output_goes_is_refused_and_kept(tmp_path: pathlib.Path, target: str) -> None:
    """``exists()`` is False for a link that dangles or loops, so such a link was taken for a free name and
    replaced by the run's file, without --force."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "curve.csv").symlink_to(target)
    with pytest.raises(ConfigError) as info, OutputDir(out, ["curve.csv"]):
        pass
    assert str(info.value) == (f"{out / 'curve.csv'}: already exists; pass --force to replace it (no earlier "
                               "tracegen run here wrote it)")
    with pytest.raises(ConfigError) as info:  # the file named, as OutputDir's message names it
        refuse_existing([out / "curve.csv"], force=False)
    assert str(info.value) == f"{out / 'curve.csv'}: already exists; pass --force to overwrite"
    assert (out / "curve.csv").readlink() == pathlib.Path(target)
    with OutputDir(out, ["curve.csv"], force=True) as run:  # asked to: the link is replaced, nothing behind it
        run.write("curve.csv", b"n_workers\n")
    assert not (out / "curve.csv").is_symlink() and (out / "curve.csv").read_bytes() == b"n_workers\n"


def test_a_link_to_nothing_given_as_out_or_as_measurements_is_named_as_such(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop, dangling = tmp_path / "loop", tmp_path / "dangling"
    loop.symlink_to("loop")
    dangling.symlink_to("gone")
    assert main(["predict", str(MLP), "--workers", "1", "--out", str(loop)]) == 2
    assert capsys.readouterr().err.endswith(f"{loop}: a symbolic link that loops; --out names the directory to write "
                                            "into\n")
    assert main(["validate", "--measured", str(dangling), "--trace", str(MLP), "--out", str(tmp_path / "v")]) == 2
    assert capsys.readouterr().err.endswith(f"{dangling}: no such measurements file: a symbolic link to "
                                            "'gone', which does not exist\n")


def test_names_that_are_not_utf8_are_written_as_escapes_and_read_back(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder named in another encoding (byte 0xFE, which ``os.fsdecode`` keeps as the lone surrogate
    ``\\udcfe``): curve.png's title crashed in matplotlib's fonts, report.md and report.html in UTF-8's encoder, a
    sweep's Parquet parts in Arrow, and a synthetic or converted trace wrote the name so that it could not be read
    back. Each now writes it as the escape ``\\udcfe`` and reads back what it wrote."""
    import os
    import shutil

    from parsers import read_trace
    from parsers.sweepdata import read_rows

    def odd(name: str) -> pathlib.Path:
        return tmp_path / os.fsdecode(name.encode() + b"\xfe")

    trace, measured = odd("trace"), odd("measured")
    shutil.copytree(MLP, trace)
    dev = MLP.parents[1] / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
    shutil.copytree(dev, measured)
    escaped = "trace\\udcfe"
    assert main(["predict", str(trace), "--workers", "1-2", "--steps", "3", "--seeds", "1", "--emit-traces", "1",
                 "--html", "--out", str(odd("out"))]) == 0
    assert escaped in (odd("out") / "report.html").read_text()
    assert escaped in read_trace(odd("out") / "traces" / "n1.json").source
    for fmt, name in (("csv", "tables"), ("chrome", "trace.json")):
        assert main(["convert", str(trace), "--to", fmt, str(odd(name))]) == 0
        assert escaped in read_trace(odd(name)).source
    assert main(["validate", "--measured", str(measured), "--steps", "3", "--seeds", "1", "--out", str(odd("v"))]) == 0
    assert "measured\\udcfe" in (odd("v") / "report.md").read_text()
    profile = odd("profile.json")
    shutil.copy(dev / "trace" / "link-profile.json", profile)
    for workers in ("1", "1-2"):  # the second resumes: it reads the first's part back
        assert main(["sweep", str(trace), "--workers", workers, "--steps", "3", "--link-profile", str(profile),
                     "--out", str(odd("sweep"))]) == 0
    assert read_rows(odd("sweep"))["link"].tolist() == [f"{tmp_path}/profile.json\\udcfe"] * 2
    capsys.readouterr()


def test_a_single_output_files_missing_folders_are_made_as_an_output_directorys_are(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'convert --to chrome' and 'netbench run' said 'output directory does not exist' where predict, validate,
    plan and convert's tables made the folders; a run that fails removes the folders it made again."""
    from parsers import read_trace
    from validation.ports import free_port

    trace = tmp_path / "a" / "new" / "dir" / "chrome.json"
    assert main(["convert", str(MLP), "--to", "chrome", str(trace)]) == 0, capsys.readouterr().err
    assert len(read_trace(trace).ops) == len(read_trace(MLP).ops)
    port = free_port()  # nothing listens there: the run fails after its checks, and takes its folders away
    profile = tmp_path / "b" / "new" / "dir" / "link-profile.json"
    assert main(["netbench", "run", "--ps", f"127.0.0.1:{port}", "--connect-timeout", "1", "--out",
                 str(profile)]) == 2
    err = capsys.readouterr().err
    assert f"cannot reach 'tracegen netbench serve' at 127.0.0.1:{port}" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.parametrize("args", [["predict", str(MLP), "--workers", "1", "--out", "{}/x"],
                                  ["convert", str(MLP), "--to", "chrome", "{}/x/chrome.json"],
                                  ["convert", str(MLP), "--to", "csv", "{}/x"]],
                         ids=["predict", "convert-chrome", "convert-csv"])
def test_an_out_through_a_link_that_loops_or_dangles_names_the_link(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    """mkdir through such a link said 'Too many levels of symbolic links' or 'File exists', naming no link."""
    loop, dangling = tmp_path / "loop", tmp_path / "dangling"
    loop.symlink_to("loop")
    dangling.symlink_to("gone")
    for link, why in ((loop, "a symbolic link that loops"),
                      (dangling, "a symbolic link to 'gone', which does not exist")):
        assert main([a.format(link) for a in args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.endswith(f": {link} is {why}\n"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "loop"]
    assert loop.readlink() == pathlib.Path("loop") and dangling.readlink() == pathlib.Path("gone")


@pytest.mark.parametrize("args", [["predict", str(MLP), "--workers", "1", "--out", "{}/x"],
                                  ["plan", str(MLP), "--catalogue", str(MLP.parents[1] / "catalogue/example.csv"),
                                   "--workers", "1", "--out", "{}/x"],
                                  ["convert", str(MLP), "--to", "chrome", "{}/chrome.json"],
                                  ["convert", str(MLP), "--to", "csv", "{}/x"]],
                         ids=["predict", "plan", "convert-chrome", "convert-csv"])
def test_an_out_under_a_file_names_the_file(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                            args: list[str]) -> None:
    """An output under a file said only 'Not a directory' (predict, plan, tables) or 'File exists' (a Chrome
    trace), naming no file (a hardening pass)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("precious")
    assert main([a.format(notes) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(f": {notes} is a file, not a folder\n"), err
    assert notes.read_text() == "precious" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_folder_where_the_run_manifest_goes_is_refused_before_the_work(tmp_path: pathlib.Path) -> None:
    """A folder named .tracegen-run.json in --out (where tracegen lists a run's files) was found only when the
    run, done, wrote that list: predict's or a sweep's whole work was lost at its end."""
    (tmp_path / ".tracegen-run.json").mkdir()
    with pytest.raises(ConfigError, match=r"\.tracegen-run\.json: is not a file; tracegen lists the files"):
        OutputDir(tmp_path, ["curve.csv"]).__enter__()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tracegen-run.json"]


def test_force_never_replaces_another_commands_output(tmp_path: pathlib.Path) -> None:
    """predict and validate both write staleness.csv (and, with --html, report.html): validate --force into a
    predict's folder replaced predict's file with its own and left predict's curve.csv beside it, though --force
    is said to replace an earlier run's files, none of another command's. Refused before any work, naming whose
    the file is; the same command's earlier file is replaced as before, and a file no run wrote is the user's to
    replace with --force."""
    with OutputDir(tmp_path, ["curve.csv", "staleness.csv"], command="predict") as out:
        out.write("curve.csv", "predict's")
        out.write("staleness.csv", "predict's")
    (tmp_path / "notes.txt").write_text("mine")
    for force in (False, True):
        with pytest.raises(ConfigError) as refused:
            OutputDir(tmp_path, ["report.md", "staleness.csv"], force=force, command="validate").__enter__()
        assert str(refused.value) == (f"{tmp_path / 'staleness.csv'}: written by tracegen predict, not validate; "
                                      "--force replaces only validate's own earlier files: write into another "
                                      "directory (--out), or move it away first")
    assert (tmp_path / "staleness.csv").read_text() == "predict's" and not (tmp_path / "report.md").exists()
    with OutputDir(tmp_path, ["staleness.csv", "notes.txt"], force=True, command="predict") as out:
        out.write("staleness.csv", "predict's again")
        out.write("notes.txt", "predict's")
    assert (tmp_path / "staleness.csv").read_text() == "predict's again"
    (tmp_path / "staleness.csv").unlink()  # moved away: nothing of predict's is in the way
    with OutputDir(tmp_path, ["staleness.csv"], command="validate") as out:
        out.write("staleness.csv", "validate's")
    assert (tmp_path / "staleness.csv").read_text() == "validate's"


_STAGE_PAST_A_SIZE_LIMIT = """
import json, pathlib, resource, signal, sys
from tracegen.outputs import OutputDir
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then fails the write with EFBIG, as a full disk does
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
named = []
for name in ("curve.csv", "traces/n4.json"):
    try:
        with OutputDir(pathlib.Path(sys.argv[1]), [name]) as out:
            if name == "curve.csv":
                out.write(name, b"x" * 100_000)
            else:
                with out.open(name) as path:
                    with path.open("wb") as fh:
                        fh.write(b"x" * 100_000)
    except OSError as exc:
        named.append(exc.filename)
print(json.dumps(named))
"""


def test_a_staged_file_that_cannot_be_written_is_named_where_it_was_to_go(tmp_path: pathlib.Path) -> None:
    """A full disk (here a real EFBIG from a file size limit) was said of the staging folder's file,
    'out/.tracegen-staging/curve.png: File too large', a path the user never gave (a hardening pass)."""
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _STAGE_PAST_A_SIZE_LIMIT, str(tmp_path / "out")],
                          capture_output=True, text=True, check=False, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(MLP.parents[2])})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [str(tmp_path / "out" / "curve.csv"), str(tmp_path / "out" / "traces/n4.json")]
    assert not (tmp_path / "out").exists()


def test_an_output_that_is_an_input_is_named_once_and_the_input_where_it_is_another_path(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal read 'OUT/report.md: is an input of this run (OUT/report.md)' when the output was the input
    file itself: the one path said twice. It is said once then (however it was spelled), and the input still
    named where it was given by another path, a link or another hard link, which alone says why."""
    trace = tmp_path / "trace.json"
    trace.write_text("{}")
    monkeypatch.chdir(tmp_path)
    for given in (trace, "trace.json", f"./{trace.name}"):
        with pytest.raises(ConfigError) as refused:
            refuse_input(trace, [tmp_path / "other.json", given], "write it elsewhere")
        assert str(refused.value) == (f"{trace}: is an input of this run, not an earlier run's output; write it "
                                      "elsewhere")
    (tmp_path / "link.json").symlink_to(trace)
    os.link(trace, tmp_path / "hard.json")
    for other in ("link.json", "hard.json"):
        with pytest.raises(ConfigError) as refused:
            refuse_input(tmp_path / other, [trace], "write it elsewhere")
        assert str(refused.value) == (f"{tmp_path / other}: is an input of this run (the same file as {trace}), not "
                                      "an earlier run's output; write it elsewhere")
    refuse_input(tmp_path / "new.json", [trace, tmp_path / "gone.json"], "write it elsewhere")  # neither: no refusal


def test_a_users_own_file_where_an_output_goes_is_not_called_a_previous_runs(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A curve.csv of the user's own in --out was refused with 'pass --force to replace the previous run': no run
    wrote it, and --force replaces it all the same. The refusal says so; a file an earlier predict here wrote is
    still 'the previous run'."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "curve.csv").write_text("my own numbers\n")
    argv = ["predict", str(MLP), "--workers", "1", "--steps", "3", "--seeds", "1", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"{out / 'curve.csv'}: already exists; pass --force to replace it (no earlier tracegen predict run here "
        "wrote it)")
    assert (out / "curve.csv").read_text() == "my own numbers\n"
    assert main([*argv, "--force"]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith("already exists; pass --force to replace the previous run")


DEV = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"


@pytest.mark.parametrize("args", [["predict", str(MLP), "--workers", "1", "--steps", "3", "--seeds", "1",
                                   "--out", "{}"],
                                  ["plan", str(MLP), "--catalogue", str(MLP.parents[1] / "catalogue/example.csv"),
                                   "--workers", "1", "--out", "{}"],
                                  ["validate", "--measured", str(DEV / "measured.csv"), "--trace", str(DEV / "trace"),
                                   "--steps", "3", "--seeds", "1", "--out", "{}"],
                                  ["convert", str(MLP), "--to", "chrome", "{}/chrome.json"],
                                  ["convert", str(MLP), "--to", "csv", "{}"]],
                         ids=["predict", "plan", "validate", "convert-chrome", "convert-csv"])
def test_no_command_writes_into_a_sweeps_dataset(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                 args: list[str]) -> None:
    """predict, plan, validate and convert wrote their files beside a sweep's Parquet parts without a word (a
    hardening pass): pandas.read_parquet of the folder then failed on curve.csv ('Parquet magic bytes not found'),
    and the sweep refused to resume there. Refused before any work, naming the folder and a part; --force does not
    change that, and the dataset is left as it was."""
    sweep = tmp_path / "sweep"
    assert main(["sweep", str(MLP), "--workers", "1", "--steps", "3", "--out", str(sweep)]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in sweep.iterdir())
    for force in ([], ["--force"]):
        assert main([a.format(sweep) for a in args] + force) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{sweep}: holds a sweep's Parquet parts (part-000000.parquet" in err, err
        assert sorted(p.name for p in sweep.iterdir()) == before


def test_no_command_writes_into_a_folder_inside_a_sweeps_dataset(tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """pandas and pyarrow read a dataset's folders too: predict --out DATASET/pred broke it as curve.csv beside the
    parts did."""
    sweep = tmp_path / "sweep"
    assert main(["sweep", str(MLP), "--workers", "1", "--steps", "3", "--out", str(sweep)]) == 0
    capsys.readouterr()
    assert main(["predict", str(MLP), "--workers", "1", "--steps", "3", "--seeds", "1", "--out",
                 str(sweep / "pred" / "n1")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and (f"{sweep}: holds a sweep's Parquet parts (part-000000.parquet, ...); a file "
                                     "written in a folder inside it would stop") in err, err
    assert sorted(p.name for p in sweep.iterdir()) == [".tracegen.lock", "part-000000.parquet"]
