"""Atomic writes (:mod:`parsers.atomic`): the target is the old file or the whole new one, and no temporary file is
left behind, whatever interrupts the write."""

from __future__ import annotations

import fcntl
import os
import pathlib
import stat
import subprocess
import sys

import pytest

from parsers import atomic


def test_a_write_replaces_the_file_whole_with_open_s_permissions(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    atomic.write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_an_error_while_writing_keeps_the_old_file(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")

    def write_half() -> None:
        with atomic.open_atomic(target) as fh:
            fh.write(b"partial")
            raise ValueError("half way")

    with pytest.raises(ValueError, match="half way"):
        write_half()
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_ctrl_c_the_moment_the_temporary_file_exists_leaves_none(tmp_path: pathlib.Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep interrupted while writing a part left ``.part-000004.parquet.*.tmp`` (CI, 2026-12-02): the signal
    landed after the temporary file was made and before the code that removes it was in charge."""
    made = []
    real_open = os.open

    def open_then_interrupted(path: os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        os.close(real_open(path, flags, mode))
        made.append(pathlib.Path(path))
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "open", open_then_interrupted)
    target = tmp_path / "part-000004.parquet"
    with pytest.raises(KeyboardInterrupt):
        atomic.write_bytes_atomic(target, b"rows")
    assert made and made[0].parent == tmp_path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("where", "error"), [("missing/out.json", FileNotFoundError), ("folder", IsADirectoryError)])
def test_a_write_that_cannot_happen_names_the_target_not_the_temporary_file(
        tmp_path: pathlib.Path, where: str, error: type[OSError]) -> None:
    """'convert --to chrome ro/out.json' said 'ro/.out.json.40bbf96c5b506421.tmp: Permission denied'."""
    (tmp_path / "folder").mkdir()
    target = tmp_path / where
    with pytest.raises(error) as info:
        atomic.write_bytes_atomic(target, b"{}")
    assert info.value.filename == str(target) and info.value.filename2 is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"] and not any((tmp_path / "folder").iterdir())


def test_a_folder_it_may_not_write_in_is_named_as_the_target(tmp_path: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(path: os.PathLike[str], *_args: int) -> int:
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(os, "open", refused)  # (this may run as root, whom a read-only folder stops not)
    with pytest.raises(PermissionError) as info:
        atomic.write_bytes_atomic(tmp_path / "out.json", b"{}")
    assert info.value.filename == str(tmp_path / "out.json")


@pytest.mark.parametrize("interrupt", [False, True])
def test_a_set_is_replaced_whole_or_not_at_all(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                               interrupt: bool) -> None:
    """``convert --force`` wrote its tables one by one: a failure after the first left new tables beside old
    ones. A set is now written beside its places first; a failure (a folder that is not there, Ctrl-C the moment
    the last temporary file exists) leaves every old file and no temporary one."""
    old = {tmp_path / name: name.encode() for name in ("ops.csv", "transfers.csv", "manifest.json")}
    for path, data in old.items():
        path.write_bytes(data)
    files = [(path, b"new " + data) for path, data in old.items()]
    if interrupt:
        real_open, opened = os.open, []

        def open_then_interrupted(path: os.PathLike[str], flags: int, mode: int = 0o777) -> int:
            fd = real_open(path, flags, mode)
            opened.append(path)
            if len(opened) == len(files):
                os.close(fd)
                raise KeyboardInterrupt
            return fd

        monkeypatch.setattr(atomic.os, "open", open_then_interrupted)
        with pytest.raises(KeyboardInterrupt):
            atomic.write_set_atomic(files)
    else:
        with pytest.raises(FileNotFoundError) as info:
            atomic.write_set_atomic([*files[:2], (tmp_path / "missing" / "manifest.json", b"{}")])
        assert info.value.filename == str(tmp_path / "missing" / "manifest.json")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == old
    monkeypatch.undo()
    atomic.write_set_atomic(files)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == dict(files)


def test_a_staged_set_joins_what_its_block_writes(tmp_path: pathlib.Path) -> None:
    """``convert`` writes a Chrome trace and the files beside it (meta.json, ...) as one set: a trace that fails
    half way leaves neither the new side files nor a temporary file; a block that ends cleanly places them."""
    meta, trace = tmp_path / "meta.json", tmp_path / "t.json"
    meta.write_bytes(b"old")

    def trace_fails_half_way() -> None:
        with atomic.staged_set([(meta, b"new")]):
            assert meta.read_bytes() == b"old"  # not in place before the block has ended
            with atomic.open_atomic(trace) as fh:
                fh.write(b"partial")
                raise ValueError("half way")

    with pytest.raises(ValueError, match="half way"):
        trace_fails_half_way()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"meta.json": b"old"}
    with atomic.staged_set([(meta, b"new")]):
        atomic.write_bytes_atomic(trace, b"{}")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"meta.json": b"new", "t.json": b"{}"}


_WRITE_PAST_A_SIZE_LIMIT = """
import json, pathlib, resource, signal, sys
from parsers import atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then fails the write with EFBIG, as a full disk does
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
folder = pathlib.Path(sys.argv[1])
big = b"x" * 100_000
named = []
for write in (lambda: atomic.write_bytes_atomic(folder / "one.bin", big),
              lambda: atomic.write_set_atomic([(folder / "a.bin", b"small"), (folder / "b.bin", big)])):
    try:
        write()
    except OSError as exc:
        named.append([exc.filename, exc.strerror])
print(json.dumps(named))
"""


def test_a_write_that_runs_out_of_room_names_the_file(tmp_path: pathlib.Path) -> None:
    """A full disk (here a real EFBIG from a file size limit) failed a write with an error that names no file: the
    command line said 'cannot write its output: File too large', naming none of convert's or predict's files (a
    hardening pass). The old files stay, and no temporary file is left."""
    import json
    import subprocess
    import sys

    (tmp_path / "one.bin").write_bytes(b"old")
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _WRITE_PAST_A_SIZE_LIMIT, str(tmp_path)], capture_output=True,
                          text=True, check=False, timeout=60, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[str(tmp_path / "one.bin"), "File too large"],
                                       [str(tmp_path / "b.bin"), "File too large"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.bin"] and (tmp_path / "one.bin").read_bytes() == b"old"


def test_a_temporary_file_whose_lock_is_held_is_kept_whatever_its_pid(tmp_path: pathlib.Path) -> None:
    """A writer in another PID namespace (a container writing into a shared folder) has a pid that is no process
    here: its lock on the file says it is at work. Once the lock is free and the pid gone, the file goes."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    temp = tmp_path / f".out.json.{int(ended.stdout)}.0123456789abcdef.tmp"
    temp.write_bytes(b"half")
    target = tmp_path / "out.json"
    with temp.open("rb+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        atomic.write_bytes_atomic(target, b"new")
        assert temp.read_bytes() == b"half"
    atomic.write_bytes_atomic(target, b"newer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"] and target.read_bytes() == b"newer"


def test_only_a_targets_own_temporary_files_are_looked_at(tmp_path: pathlib.Path) -> None:
    """Another file's, and one named as before the pid was in the name (no owner to ask), are left."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    pid = int(ended.stdout)
    others = [tmp_path / f".out.json.x.{pid}.0123456789abcdef.tmp", tmp_path / ".out.json.0123456789abcdef.tmp",
              tmp_path / f".out.json.{pid}.0123456789abcdef.tmp.keep"]
    for path in others:
        path.write_bytes(b"theirs")
    atomic.write_bytes_atomic(tmp_path / "out.json", b"new")
    assert all(p.read_bytes() == b"theirs" for p in others)
    assert atomic.remove_stale(tmp_path / "out.json.x") == [others[0]]
