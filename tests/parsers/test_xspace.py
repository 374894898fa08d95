"""Finding a TF2 profile's files and decoding them (``parsers/xspace.py``): logdirs, run directories and host
files told apart, the newest run chosen, a host given twice refused, XSpace bytes told from other bytes."""

from __future__ import annotations

import gzip
import pathlib

import pytest

from parsers import TraceContentError, TraceError, TraceFormatError, read_trace, xspace
from parsers.proto import xplane_pb2 as pb


def test_a_logdir_without_profiles_is_refused(tmp_path: pathlib.Path) -> None:
    (tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00").mkdir(parents=True)
    with pytest.raises(TraceError, match=r"no profile run holds a \.xplane\.pb or \.trace\.json\.gz file"):
        read_trace(tmp_path)


def _run(root: pathlib.Path, name: str, *files: str) -> pathlib.Path:
    run = root / "plugins" / "profile" / name
    run.mkdir(parents=True)
    for file in files:
        (run / file).write_bytes(b"")
    return run


def test_host_name_is_the_file_name_without_the_profile_suffix() -> None:
    assert xspace.host_name("/r/127.0.0.1_43669.xplane.pb") == "127.0.0.1_43669"
    assert xspace.host_name("r/h.xplane.pb.gz") == "h"
    assert xspace.host_name("h.trace.json.gz") == "h"
    assert xspace.host_name("h.trace.json") == "h"
    assert xspace.host_name("h.pb") == "h.pb"


def test_is_profile_dir_tells_logdirs_and_runs_from_other_folders(tmp_path: pathlib.Path) -> None:
    assert not xspace.is_profile_dir(tmp_path)
    assert not xspace.is_profile_dir(tmp_path / "absent")
    (tmp_path / "step.json").write_bytes(b"")
    assert not xspace.is_profile_dir(tmp_path)
    run = _run(tmp_path / "logdir", "1", "h.xplane.pb")
    assert xspace.is_profile_dir(tmp_path / "logdir") and xspace.is_profile_dir(run)
    assert not xspace.is_profile_dir(run / "h.xplane.pb")


def test_profile_files_takes_the_newest_run_and_xplanes_before_viewer_files(tmp_path: pathlib.Path) -> None:
    _run(tmp_path, "2026_01_01_00_00_00", "old.xplane.pb")
    _run(tmp_path, "2026_01_02_00_00_00", "b.xplane.pb", "a.xplane.pb.gz", "a.trace.json.gz", "notes.txt")
    _run(tmp_path, "2026_01_03_00_00_00")  # no profile in it: no run
    runs = xspace.profile_runs(tmp_path)
    assert [r.name for r in runs] == ["2026_01_01_00_00_00", "2026_01_02_00_00_00"]
    assert [p.name for p in xspace.profile_files(tmp_path)] == ["a.xplane.pb.gz", "b.xplane.pb"]
    assert xspace.profile_runs(runs[0]) == []  # a run directory is no logdir
    viewer = _run(tmp_path / "other", "1", "h.trace.json.gz", "h.trace.json")
    assert [p.name for p in xspace.profile_files(viewer)] == ["h.trace.json.gz"]


def test_read_profile_files_refuses_one_host_twice_and_bounds_the_total(tmp_path: pathlib.Path) -> None:
    plain, zipped = tmp_path / "h.xplane.pb", tmp_path / "h.xplane.pb.gz"
    plain.write_bytes(b"a" * 20)
    zipped.write_bytes(gzip.compress(b"a" * 20))
    assert xspace.read_profile_files([plain], "run", 64) == [(str(plain), b"a" * 20)]
    assert xspace.read_profile_files([zipped], "run", 64) == [(str(zipped), b"a" * 20)]
    with pytest.raises(TraceContentError, match="are both the profile of host 'h'; keep one of them"):
        xspace.read_profile_files([plain, zipped], "run", 64)
    other = tmp_path / "g.xplane.pb"
    other.write_bytes(b"b" * 30)
    assert len(xspace.read_profile_files([plain, other], "run", 50)) == 2
    with pytest.raises(TraceFormatError, match="run: the profile's files hold more than the limit of 49 bytes"):
        xspace.read_profile_files([plain, other], "run", 49)


def test_looks_like_xspace_wants_a_plane_named_as_the_profiler_names_them() -> None:
    profiles = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "tf2_pss" / "plugins" / "profile"
    real = next(profiles.glob("*/*.xplane.pb"))
    assert xspace.looks_like_xspace(real.read_bytes())
    for name in ("/host:CPU", "Task Environment", "/device:GPU:0"):
        space = pb.XSpace()
        space.planes.add(name=name)
        assert xspace.looks_like_xspace(space.SerializeToString()), name
    space = pb.XSpace()
    space.planes.add(name="host:CPU")
    assert not xspace.looks_like_xspace(space.SerializeToString())
    assert not xspace.looks_like_xspace(b"\xff\xff\xff")


def test_tally_adds_to_a_reasons_count() -> None:
    skipped: dict[str, int] = {}
    xspace.tally(skipped, "a")
    xspace.tally(skipped, "a", 3)
    xspace.tally(skipped, "b", 2)
    assert skipped == {"a": 4, "b": 2}
