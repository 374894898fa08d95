"""The --out folder of the ``tracegen`` commands (:mod:`tracegen.cli` over :mod:`tracegen.outputs`): one run at a
time in it (its lock file), a file where a folder is needed, --force replacing an earlier run's outputs and only
those (never a file the run reads), what a failed or refused run leaves, temporary files, and outputs moved into
place all together, a signal included."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

from tracegen.cli import main

from tracegen_support import ROOT
from tracegen_support import quick_predict as _predict


def test_two_runs_into_one_directory_cannot_mix(tmp_path: pathlib.Path) -> None:
    from tracegen.errors import ConfigError
    from tracegen.outputs import OutputDir

    with OutputDir(tmp_path, ["a"]) as first:
        first.write("a", b"1")
        with pytest.raises(ConfigError, match="another tracegen run is writing"), OutputDir(tmp_path, ["b"]):
            pass
    readonly = tmp_path / "ro"
    readonly.mkdir(mode=0o500)
    # root writes anywhere, so a folder's mode shows nothing to root (CI runs as root, and skipped this); sysfs
    # takes no new file from root either (EACCES, or EROFS where it is mounted read-only)
    unwritable = ([] if os.geteuid() == 0 else [readonly]) + ([pathlib.Path("/sys/kernel")]
                                                              if sys.platform == "linux" else [])
    assert unwritable, "neither a folder this user cannot write nor sysfs: nothing would be checked"
    for folder in unwritable:
        with pytest.raises(ConfigError, match=rf"^{folder}: cannot write here: "), OutputDir(folder, ["a"]):
            pass


def test_out_naming_a_file_says_so_and_leaves_it(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "results"
    taken.write_text("mine")
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{taken}: is a file, not a directory" in err
    fifo = tmp_path / "pipe"  # it was called a file too
    os.mkfifo(fifo)
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--out", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{fifo}: is a FIFO (named pipe), not a directory; --out names the" in err
    assert taken.read_text() == "mine"


def test_a_forced_run_that_fails_leaves_the_previous_outputs(tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1") == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".tracegen.lock"}
    assert _predict(out, tmp_path / "no-such-trace", "--force") == 2
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".tracegen.lock"}
    assert after == before and pathlib.Path("curve.csv") in after
    assert "no such file" in capsys.readouterr().err


def test_a_failed_run_leaves_no_directory_of_its_own(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in the trace path used to leave an empty --out (and parents) holding a lock file."""
    out = tmp_path / "new" / "out"
    assert _predict(out, tmp_path / "no-such-trace") == 2
    assert "no such file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert _predict(mine / "out", tmp_path / "no-such-trace") == 2
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]  # what it did not create stays


def test_a_refused_run_removes_the_lock_file_it_made_and_only_that(tmp_path: pathlib.Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A run refused in a directory that was there already (a user's curve.csv, no --force) left its
    .tracegen.lock in it (a hardening pass): only a directory the run had made itself was cleaned up. An earlier
    run's lock file stays, and a second run still cannot get in while the first holds the lock."""
    from tracegen.errors import ConfigError
    from tracegen.outputs import LOCK_NAME, OutputDir

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "curve.csv").write_text("mine")
    assert _predict(mine, ROOT / "data/traces/mlp") == 2
    assert "curve.csv: already exists" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["curve.csv"] and (mine / "curve.csv").read_text() == "mine"
    earlier = tmp_path / "earlier"
    assert _predict(earlier, ROOT / "data/traces/mlp") == 0
    assert (earlier / LOCK_NAME).is_file()
    before = sorted(p.name for p in earlier.iterdir())
    assert _predict(earlier, ROOT / "data/traces/mlp") == 2  # refused: curve.csv is there
    assert sorted(p.name for p in earlier.iterdir()) == before  # the lock it found is not its to remove
    with OutputDir(mine, ["a"]), pytest.raises(ConfigError, match="another tracegen run"), OutputDir(mine, ["b"]):
        pass


def test_a_forced_run_removes_only_what_the_previous_run_wrote(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1,2") == 0
    (out / "notes.txt").write_text("mine")
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force") == 0
    assert (out / "traces/n1.json").is_file() and not (out / "traces/n2.json").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # no traces now: their folder goes too
    assert not (out / "traces").exists() and (out / "notes.txt").read_text() == "mine"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force") == 0
    (out / "traces/mine.txt").write_text("mine")
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # a user's file there keeps it
    assert sorted(p.name for p in (out / "traces").iterdir()) == ["mine.txt"]


def test_a_forced_run_of_another_command_leaves_the_first_ones_files(tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """plan --force into a predict's folder removed curve.csv, the plots and the traces (a hardening pass); with
    --html, plan's page replaced predict's report.html (both were named so), and predict's curve then sat beside a
    report of a plan. plan's page is plan.html now: both pages stay, each beside its own run's files."""
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--html") == 0
    predicted = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    page = (out / "report.html").read_bytes()
    assert main(["plan", str(ROOT / "data/traces/mlp"), "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--workers", "1-2", "--step-budget", "4", "--jobs", "1", "--html", "--force", "--out", str(out)]) == 0
    assert f"wrote {out / 'plan.csv'}, {out / 'plan.html'}\n" in capsys.readouterr().out
    kept = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert kept == sorted([*predicted, pathlib.Path("plan.csv"), pathlib.Path("plan.html")])
    assert (out / "report.html").read_bytes() == page and b"Which cluster to rent" in (out / "plan.html").read_bytes()
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # its own older traces still go
    assert not (out / "traces/n1.json").exists() and (out / "plan.csv").is_file()


def test_only_tracegens_own_temporary_files_are_cleaned_up(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"
    (out / "notes").mkdir(parents=True)
    mine = [out / ".session.tmp", out / "notes" / ".draft.tmp"]
    for path in mine:
        path.write_text("important")
    killed = out / ".curve.csv.0123456789abcdef.tmp"  # what a killed run's atomic write left
    killed.write_text("half")
    assert _predict(out, ROOT / "data/traces/mlp") == 0
    assert all(p.read_text() == "important" for p in mine) and not killed.exists()


def test_a_file_where_a_run_needs_a_folder_is_refused_before_anything_is_replaced(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's file named ``traces`` in --out: the run wrote curve.csv and the plots, then failed on
    traces/n1.json, and with --force had replaced the earlier run's curve.csv (found by a hardening pass)."""
    from tracegen.errors import ConfigError
    from tracegen.outputs import OutputDir

    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp") == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    (out / "traces").write_text("my notes")
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force", "--steps", "4") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out / 'traces'}: is a file, not a directory" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "traces"} == before
    assert (out / "traces").read_text() == "my notes"
    fresh = tmp_path / "fresh"  # the same when the file appears during the run: nothing is moved into place

    def run() -> None:
        with OutputDir(fresh, ["a.csv", "t/n1.json"]) as o:
            o.write("a.csv", b"1")
            o.write("t/n1.json", b"{}")
            (fresh / "t").write_text("mine")

    with pytest.raises(ConfigError, match="is a file, not a directory"):
        run()
    assert sorted(p.name for p in fresh.iterdir()) == ["t"]


def test_a_signal_while_outputs_move_into_place_waits_until_all_have(tmp_path: pathlib.Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM between two renames left the new curve.csv beside the old plots (a hardening pass). Held until
    all are in place, the stop then says so: 'stopped by SIGTERM' alone read as if the old outputs were kept."""
    import signal

    from tracegen.cli import Terminated, _terminate, _when
    from tracegen.outputs import OutputDir

    names = ["a.csv", "b.png", "t/c.json"]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("old")
    real_replace = pathlib.Path.replace
    moved: list[str] = []

    def replace_and_signal(self: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
        out = real_replace(self, target)
        if ".tracegen-staging" in self.parts and ".tracegen-staging" not in pathlib.Path(target).parts:
            moved.append(str(target))  # a staged file moved into place: signal after the first
            if len(moved) == 1:
                os.kill(os.getpid(), signal.SIGTERM)
        return out

    def run() -> None:
        with OutputDir(tmp_path, names, force=True) as out:
            for name in names:
                out.write(name, b"new")

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        monkeypatch.setattr(pathlib.Path, "replace", replace_and_signal)
        with pytest.raises(Terminated) as stop:
            run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(moved) == 3 and [(tmp_path / n).read_text() for n in names] == ["new"] * 3
    assert _when(stop.value) == f" after its new outputs were in place (a.csv, b.png, t/c.json in {tmp_path})"
    assert _when(KeyboardInterrupt()) == ""


@pytest.mark.parametrize(("command", "option", "name", "content"), [
    ("predict", "--placement", "shards.csv", "variable,shard\nfc1/kernel,0\nfc1/bias,1\nfc2/kernel,1\nfc2/bias,0\n"
                                             "logits/kernel,0\nlogits/bias,1\n"),
    ("predict", "--link-profile", "curve.csv", None),
    ("plan", "--catalogue", "plan.csv", None),
], ids=["placement", "link-profile", "catalogue"])
def test_force_never_replaces_a_file_the_run_reads(command: str, option: str, name: str, content: str | None,
                                                   tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'predict --ps-shards 2 --placement out/shards.csv --out out --force' read the user's placement file, then
    replaced it with its shards table; plan did the same to a catalogue named plan.csv. --force replaces an
    earlier run's outputs, never what the run reads (as validate and convert already held)."""
    trace = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
    source = {"--link-profile": trace / "link-profile.json", "--catalogue": ROOT / "data" / "catalogue" / "example.csv"}
    given = tmp_path / name
    given.write_bytes(content.encode() if content is not None else source[option].read_bytes())
    before = given.read_bytes()
    extra = ["--ps-shards", "2"] if option == "--placement" else []
    assert main([command, str(trace), "--workers", "1-2", option, str(given), *extra, "--out", str(tmp_path),
                 "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{given}: is an input of this run" in err, err
    assert given.read_bytes() == before
