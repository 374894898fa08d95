"""The sweep's grid and point ids (``tracegen/sweepgrid.py``): the points a grid holds and their order, what a
point id covers, and the files a trace is hashed from."""

from __future__ import annotations

import dataclasses
import pathlib
import shutil

import pytest

from tracegen import sweepgrid
from tracegen.errors import ConfigError
from tracegen.sweep import build_inputs
from tracegen.sweepgrid import SweepPolicy, file_sha256, trace_files, trace_sha256

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"


def test_a_tf2_logdir_is_hashed_down_to_its_profiles(tmp_path: pathlib.Path) -> None:
    from tracegen.sweepgrid import trace_sha256

    logdir = tmp_path / "trace"
    shutil.copytree(ROOT / "data/tf2/dev/mlp_500mbit_q100_b128k_ps03/trace", logdir)
    before = trace_sha256(logdir)
    profile = next(logdir.rglob("*.xplane.pb"))  # under plugins/profile/RUN/: a resumed sweep must see it change
    profile.write_bytes(profile.read_bytes() + b"\0")
    assert trace_sha256(logdir) != before


def test_a_point_id_changes_with_the_simulators_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep resumed after an upgrade that changed results kept the older model's rows: the id covered the
    inputs only."""
    inputs = build_inputs(TRACE, workers=range(1, 3), policies=("tf",), seeds=(0,), steps=4, warmup_steps=1)
    before = [inputs.point_id(p) for p in inputs.grid.points()]
    monkeypatch.setattr(sweepgrid, "MODEL_VERSION", sweepgrid.MODEL_VERSION + 1)
    after = [inputs.point_id(p) for p in inputs.grid.points()]
    assert not set(before) & set(after)


def test_a_grid_has_every_combination_of_its_axes_n_outermost() -> None:
    grid = build_inputs(TRACE, workers=(3, 1), policies=("tf", "tictac"), seeds=(0, 5), steps=4,
                        warmup_steps=1).grid
    points = list(grid.points())
    assert grid.n_points == len(points) == 2 * 2 * 2
    assert [(p.n_workers, p.policy, p.seed) for p in points] == [
        (3, "tf", 0), (3, "tf", 5), (3, "tictac", 0), (3, "tictac", 5),
        (1, "tf", 0), (1, "tf", 5), (1, "tictac", 0), (1, "tictac", 5)]
    config = grid.sim_config(points[3])
    assert (config.n_workers, config.seed, config.policy, config.steps) == (3, 5, "tictac", 4)
    for axis, values in (("workers", (1, 1)), ("seeds", (0, 0)), ("worker_speeds", (1.0, 1.0))):
        with pytest.raises(ConfigError, match=f"'{axis}': each value must be given once"):
            dataclasses.replace(grid, **{axis: values})
    with pytest.raises(ConfigError, match="'workers': the grid needs at least one value"):
        dataclasses.replace(grid, workers=())


def test_a_policys_key_is_its_name_or_its_orders_digest() -> None:
    assert SweepPolicy(label="tf", policy="tf").key == "tf"
    ab = SweepPolicy(label="a.txt", policy="fixed", order=("a", "b")).key
    assert ab.startswith("fixed:") and len(ab) == len("fixed:") + 64
    assert SweepPolicy(label="b.txt", policy="fixed", order=("a", "b")).key == ab  # the label is no part of it
    assert SweepPolicy(label="a.txt", policy="fixed", order=("b", "a")).key != ab


def test_file_sha256_hashes_regular_files_only(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "abc"
    path.write_bytes(b"abc")  # FIPS 180-2's first SHA-256 example
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    # each message names the path (matching the rule alone passed one that did not)
    with pytest.raises(ConfigError) as info:
        file_sha256(tmp_path)
    assert str(info.value) == f"{tmp_path}: not a regular file"
    with pytest.raises(ConfigError) as info:
        file_sha256(tmp_path / "absent")
    assert str(info.value).startswith(f"{tmp_path / 'absent'}: cannot read: "), info.value


def test_trace_files_are_the_files_a_trace_is_read_from_and_the_ones_beside_it(tmp_path: pathlib.Path) -> None:
    """Every file under a folder was hashed as the trace's: a curve.csv written there, a Chrome file passed over for
    the RunMetadata of the same steps, a subfolder's files."""
    (tmp_path / "sub").mkdir()
    for name in ("step_000.pb", "step_000.json", "curve.csv", "sub/step_001.pb", ".hidden", "link-profile.json"):
        (tmp_path / name).write_bytes(b"x")
    assert trace_files(tmp_path) == [tmp_path / "link-profile.json", tmp_path / "step_000.pb"]
    assert trace_files(tmp_path / "*.json") == [tmp_path / "link-profile.json", tmp_path / "step_000.json"]
    assert trace_files(tmp_path / "step_000.pb") == [tmp_path / "link-profile.json", tmp_path / "step_000.pb"]
    assert trace_files(tmp_path / "sub" / "*.pb") == [tmp_path / "sub" / "step_001.pb"]
    assert trace_files(tmp_path / "absent.pb") == []
    with pytest.raises(ConfigError) as info:  # the trace as given (the rule alone passed without it)
        trace_sha256(tmp_path / "absent.pb")
    assert str(info.value) == f"trace {str(tmp_path / 'absent.pb')!r}: no such file, directory or matching files"


def test_trace_sha256_covers_names_as_well_as_bytes(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.pb").write_bytes(b"x")
    before = trace_sha256(tmp_path)
    (tmp_path / "a.pb").rename(tmp_path / "b.pb")
    assert trace_sha256(tmp_path) != before
