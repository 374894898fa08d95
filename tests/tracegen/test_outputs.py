"""``tracegen.outputs``: a symbolic link a user has where an output goes is theirs, even when it leads nowhere."""

from __future__ import annotations

import pathlib

import pytest

from tracegen.cli import main
from tracegen.errors import ConfigError
from tracegen.outputs import OutputDir, refuse_existing

MLP = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp"


@pytest.mark.parametrize("target", ["elsewhere/missing.csv", "curve.csv"])  # dangling; a loop onto itself
def test_a_link_to_nothing_where_an_output_goes_is_refused_and_kept(tmp_path: pathlib.Path, target: str) -> None:
    """``exists()`` is False for a link that dangles or loops, so such a link was taken for a free name and
    replaced by the run's file, without --force."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "curve.csv").symlink_to(target)
    with pytest.raises(ConfigError) as info, OutputDir(out, ["curve.csv"]):
        pass
    assert str(info.value) == f"{out / 'curve.csv'}: already exists; pass --force to replace the previous run"
    with pytest.raises(ConfigError, match="already exists; pass --force to overwrite"):
        refuse_existing([out / "curve.csv"], force=False)
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
