"""Reading a transfer-order file (``--policy FILE``)."""

from __future__ import annotations

import pathlib

import pytest

from tracegen.errors import ConfigError
from tracegen.policy import MAX_ORDER_BYTES, read_order


def test_an_order_file_is_read_bounded_and_checked(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("a  # first\n\nb\n")
    assert read_order(path) == ("a", "b")
    path.write_bytes(b"a" * (MAX_ORDER_BYTES + 1))  # as /dev/zero would be: refused, not read to the end
    with pytest.raises(ConfigError, match=r"cannot read order file .*order\.txt.*more than the limit"):
        read_order(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_order("/dev/zero")
    path.write_bytes(b"a\n\xff\n")
    with pytest.raises(ConfigError, match=r"order.txt': byte 2: not UTF-8 text"):
        read_order(path)


def test_a_tensor_named_twice_in_an_order_file_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("a\n# b comes next\nb\na  # again: first or third?\n")
    with pytest.raises(ConfigError, match=r"order\.txt': line 4: 'a' is already on line 1"):
        read_order(path)


def test_an_order_file_naming_unknown_tensors_is_named(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The error named the tensors but not the file they came from."""
    from tracegen.cli import main

    path = tmp_path / "order.txt"
    path.write_text("no/such/tensor\n")
    assert main(["predict", str(mlp_trace_dir), "--policy", str(path), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert f"order file {str(path)!r} names tensors" in err and "'no/such/tensor'" in err, err
    assert main(["sweep", str(mlp_trace_dir), "--policy", f"tf,{path}", "--out", str(tmp_path / "s")]) == 2
    assert f"order file {str(path)!r} names tensors" in capsys.readouterr().err
