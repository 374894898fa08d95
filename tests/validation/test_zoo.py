"""validation.zoo: what a model's widths make, checked before any TensorFlow job starts."""

from __future__ import annotations

import math
import pathlib

import pytest

from tracegen.cli import main
from validation import zoo
from validation.errors import ConfigError
from validation.zoo import ModelSpec, check_sizes

pytestmark = pytest.mark.slow  # each builds the model in a TensorFlow child process (a few seconds)


def test_a_variable_over_two_gib_is_refused_before_the_job(tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """'profile --widths 99999999999' started the job; its worker failed at the first pull ('Cannot parse tensor
    from proto') and the command quoted the last line of its stderr: 'worker 0 exited with code 1: ====='."""
    assert main(["profile", "--widths", "99999999999", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == ("tracegen profile: error: mlp with widths 99999999999: variable 'fc1/kernel' of shape [784, "
                   "99999999999] is 314 TB; TensorFlow moves no tensor over 2 GiB between PS and worker: choose "
                   "smaller widths\n"), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_a_batch_over_the_free_memory_is_refused_before_the_job(api: str, tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """'--batch-size 99999999999' started the job, whose worker failed in TensorFlow ('worker 0 exited with code 1:
    ValueError: Incompatible shapes between op input and calculated input gradient ...'): no variable grows with the
    batch, so check_sizes passed it. The model's largest tensor, sized from the graph TensorFlow builds, is now
    checked against the free memory too."""
    assert main(["profile", "--api", api, "--warmup", "0", "--batch-size", "99999999999", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracegen profile: error: mlp with widths 512,512 and batch size 99999999999: its "
                          "tensor "), err
    assert "of shape [99999999999, 784] is 314 TB, more than the " in err
    assert err.endswith(" of memory this machine has available: choose a smaller --batch-size\n"), err
    assert not (tmp_path / "out").exists()


def test_the_sizes_are_the_graphs_own() -> None:
    """The shapes come from the model TensorFlow builds: mlp 784 -> 512 -> 10 (the zoo's input and classes)."""
    variables, (_, shape, size) = zoo.model_sizes(ModelSpec(name="mlp", batch_size=32, widths=(512,)))
    assert variables == [
        ("fc1/kernel", [784, 512]), ("fc1/bias", [512]), ("logits/kernel", [512, 10]), ("logits/bias", [10])]
    assert size == 4 * math.prod(shape) and size >= 4 * 32 * 784  # at least the batch's input, float32


def test_an_embedding_table_read_sparsely_counts_only_against_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the looked-up rows of embed's table travel, so a 5 GB table is no tensor over 2 GiB; it must still fit
    in the memory the PS has."""
    table = ModelSpec(name="embed", widths=(20_000_000, 64, 4, 8))  # 20M x 64 float32: 5.12 GB
    monkeypatch.setattr(zoo, "available_memory_bytes", lambda: 8 << 30)
    check_sizes(table)
    monkeypatch.setattr(zoo, "available_memory_bytes", lambda: 4 << 30)
    with pytest.raises(ConfigError, match=r"its variables take 5\.12 GB, more than the 4\.29 GB of memory"):
        check_sizes(table)
