"""Reading a transfer-order file (``--policy FILE``)."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from parsers import read_trace
from tracegen.errors import ConfigError
from tracegen.metrics import steps_per_s
from tracegen.model import StepModel, StepTiming, TaskKind, build_model
from tracegen.policy import MAX_ORDER_BYTES, check_order, issued_in_order, read_order, step_start_pulls
from tracegen.simulate import SimConfig, simulate
from tracegen.wire import LinkEstimate

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"


def test_an_order_file_is_read_bounded_and_checked(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("a  # first\n\nb\n")
    assert read_order(path) == ("a", "b")
    path.write_text("\ufeffa\nb\n")  # a byte-order mark is not part of the first name
    assert read_order(path) == ("a", "b")
    path.write_bytes(b"a" * (MAX_ORDER_BYTES + 1))  # as /dev/zero would be: refused, not read to the end
    with pytest.raises(ConfigError, match=r"cannot read order file .*order\.txt.*more than the limit"):
        read_order(path)
    with pytest.raises(ConfigError) as info:  # the option, the file and what it is
        read_order("/dev/zero")
    assert str(info.value) == ("'policy': cannot read order file '/dev/zero': /dev/zero: a character device, not a "
                               "regular file: refused")
    path.write_bytes(b"a\n\xff\n")
    with pytest.raises(ConfigError, match=r"order.txt': line 2: not UTF-8 text at byte 2$"):
        read_order(path)
    path.write_bytes(b"\xef\xbb\xbfa\nb\xff\n")  # the byte is the file's, its mark counted (it was 3 short)
    with pytest.raises(ConfigError, match=r"order.txt': line 2: not UTF-8 text at byte 6$"):
        read_order(path)


def test_a_tensor_named_twice_in_an_order_file_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("a\n# b comes next\nb\na  # again: first or third?\n")
    with pytest.raises(ConfigError, match=r"order\.txt': line 4: 'a' is already on line 1"):
        read_order(path)


@pytest.mark.parametrize("brk", ["\f", "\v", "\x1c", "\x1e", "\x85", "\u2028", "\u2029"])
def test_order_file_lines_are_numbered_at_newlines_as_an_editor_numbers_them(tmp_path: pathlib.Path,
                                                                             brk: str) -> None:
    """str.splitlines also ended a line at \\f, \\v, \\x1c-\\x1e, \\x85, \\u2028 and \\u2029: a stray one
    (pasted from a web page, a form feed an editor shows as ^L) moved every later line number one on."""
    path = tmp_path / "order.txt"
    path.write_text(f"p{brk}\r\nq\r\nq\r\n", encoding="utf-8", newline="")
    with pytest.raises(ConfigError, match=r"order\.txt': line 3: 'q' is already on line 2$"):
        read_order(path)
    path.write_text(f"p{brk}r\n", encoding="utf-8", newline="")  # inside a line: part of the name, not two names
    assert read_order(path) == (f"p{brk}r",)


def test_an_order_file_of_lines_ended_by_a_carriage_return_alone_is_told_so(tmp_path: pathlib.Path) -> None:
    """Old Mac text is one line: it was refused as one unknown tensor, its name shortened in the middle, the
    '\\r' between the names out of sight."""
    path = tmp_path / "order.txt"
    path.write_bytes(b"# order\na/read\rb/read\rc/read\r")
    with pytest.raises(ConfigError) as info:
        read_order(path)
    assert str(info.value) == (f"'policy': order file {str(path)!r}: line 2: 'a/read\\rb/read\\rc/read' holds a "
                               "carriage return inside it: end each line with '\\n' or '\\r\\n', not '\\r' alone")


def test_an_order_file_naming_unknown_tensors_is_named(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The error named the tensors but not the file they came from, and then not the line."""
    from parsers import read_trace
    from tracegen.cli import main
    from tracegen.model import TaskKind, build_model

    model = build_model(read_trace(mlp_trace_dir))
    pull = next(model.names[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL)
    path = tmp_path / "order.txt"
    path.write_text(f"{pull}\n# then\n\nno/such/tensor\nnor/this\n")
    assert main(["predict", str(mlp_trace_dir), "--policy", str(path), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert f"order file {str(path)!r}: line 4: 'no/such/tensor' is not a transfer of the model" in err, err
    assert "(and 1 more: 'nor/this')" in err and err.count("\n") == 1
    assert main(["sweep", str(mlp_trace_dir), "--policy", f"tf,{path}", "--out", str(tmp_path / "s")]) == 2
    assert f"order file {str(path)!r}: line 4: 'no/such/tensor'" in capsys.readouterr().err


def test_a_tensor_name_of_thousands_of_characters_is_quoted_short(mlp_trace_dir: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """A 100000-character line was quoted whole: the line of 300 characters was cut in the middle of the name, and
    'is not a transfer of the model' (or 'is already on line 1') never said."""
    model = build_model(read_trace(mlp_trace_dir))
    path = tmp_path / "order.txt"
    path.write_text("x" * 100_000 + "\n")
    with pytest.raises(ConfigError) as refused:
        check_order(model, read_order(path), str(path), "--policy")
    said = str(refused.value)
    assert "order.txt': line 1: 'xxxx" in said and "x...x" in said and "xx' is not a transfer of the model" in said
    assert len(said) < 400
    path.write_text(("y" * 100_000 + "\n") * 2)
    with pytest.raises(ConfigError) as refused:
        read_order(path)
    said = str(refused.value)
    assert said.endswith("yy' is already on line 1") and "y...y" in said and len(said) < 250


def reads_then_pulls(delays_us: tuple[int, ...]) -> StepModel:
    """Per parameter a PS read (2 us) then its pull, requested ``delays_us[i]`` after the read; no worker op."""
    n = len(delays_us)
    return StepModel(
        names=(*(f"read {i}" for i in range(n)), *(f"pull {i}" for i in range(n))),
        kinds=(TaskKind.PS_OP,) * n + (TaskKind.PULL,) * n, size_bytes=(0,) * n + (1000,) * n,
        data_preds=(*((),) * n, *((i,) for i in range(n))), control_preds=((),) * (2 * n),
        rank=tuple(range(2 * n)), first_need_ns=(0,) * (2 * n),
        timings=(StepTiming(dur_ns=(2000,) * n + (0,) * n, delay_ns=(0,) * n + tuple(d * 1000 for d in delays_us),
                            step_ns=0),),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=10**9, push_bandwidth_bytes_per_s=10**9, latency_ns=0,
                          method="given"))


def test_step_start_pulls_take_the_traced_request_moments_in_the_policys_order() -> None:
    model = reads_then_pulls((10, 30, 20))  # requested at 12, 32, 22 us: pull 0, pull 2, pull 1
    assert step_start_pulls(model) == [3, 4, 5]
    reordered = issued_in_order(model, [0, 0, 0, 2, 0, 1])  # pull 1 first, then pull 2, then pull 0
    assert reordered[0].delay_ns[3:] == (30_000, 10_000, 20_000)  # moments 12, 22, 32 us: to 1, 2, 0
    assert reordered[0].dur_ns == model.timings[0].dur_ns and reordered[0].delay_ns[:3] == (0, 0, 0)
    assert issued_in_order(model, [0, 0, 0, 0, 2, 1])[0].delay_ns == model.timings[0].delay_ns  # the traced order


def test_a_pull_waiting_on_the_worker_keeps_its_own_moment() -> None:
    """Only the pulls requested at step start trade moments: one behind a worker op is requested when it is."""
    base = reads_then_pulls((10, 20))
    model = dataclasses.replace(
        base, names=(*base.names, "op", "late pull"), kinds=(*base.kinds, TaskKind.COMPUTE, TaskKind.PULL),
        size_bytes=(*base.size_bytes, 0, 1000), data_preds=(*base.data_preds, (2,), (4,)),
        control_preds=((),) * 6, rank=tuple(range(6)), first_need_ns=(0,) * 6,
        timings=(StepTiming(dur_ns=(2000, 2000, 0, 0, 5000, 0), delay_ns=(0, 0, 10_000, 20_000, 0, 1000),
                            step_ns=0),))
    assert step_start_pulls(model) == [2, 3]
    assert issued_in_order(model, [0, 0, 1, 0, 0, 0])[0].delay_ns == (0, 0, 20_000, 10_000, 0, 1000)


def test_a_policy_changes_a_real_traces_prediction() -> None:
    """It did not: a policy ordered only transfers requested at the same nanosecond, and in a real trace each
    pull has a dispatch gap of its own, so the trace order and its reverse gave the same steps/s to four digits
    (and tf against tictac differed only by the random numbers tf draws)."""
    model = build_model(read_trace(TRACES / "resnet"))
    names = tuple(model.names[t] for t in step_start_pulls(model))
    assert len(names) > 10

    def rate(order: tuple[str, ...]) -> float:
        return steps_per_s(simulate(model, SimConfig(n_workers=4, policy="fixed", order=order)))

    forward, backward = rate(names), rate(names[::-1])
    assert backward < 0.99 * forward  # the first layer's parameters last: the forward pass waits longer


def test_an_order_file_named_gz_is_read_gzipped_or_refused_as_not_gzip(tmp_path: pathlib.Path) -> None:
    """A gzipped order file was refused as 'byte 1: not UTF-8 text', naming no gzip."""
    import gzip

    path = tmp_path / "order.txt.gz"
    path.write_bytes(gzip.compress(b"w1\n# a comment\nw0\n"))
    assert read_order(path) == ("w1", "w0")
    path.write_bytes(b"w1\nw0\n")
    with pytest.raises(ConfigError, match=r"order file .*order\.txt\.gz.*: named \.gz but is not gzip"):
        read_order(path)


def test_an_order_file_of_variable_names_is_told_where_tensor_names_are(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--policy asks for tensor names; a user who wrote the parameters 'inspect' lists ('fc1/kernel') was told
    only that they are no transfer, with no command that shows the names it takes."""
    from parsers import read_trace
    from tracegen.cli import main
    from tracegen.model import TRANSFER_KINDS, build_model

    model = build_model(read_trace(mlp_trace_dir))
    first = next(model.names[t] for t in range(model.n_tasks) if model.kinds[t] in TRANSFER_KINDS)
    path = tmp_path / "order.txt"
    path.write_text("fc1/kernel\n")
    assert main(["predict", str(mlp_trace_dir), "--policy", str(path), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "'fc1/kernel' is not a transfer of the model; " in err, err
    assert f"its tensor names are in transfers.csv of 'tracegen convert --to csv', e.g. {first!r}" in err, err
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", ["predict", "sweep"])
def test_the_cli_names_an_order_file_by_its_option_whatever_is_wrong(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    """A file that could not be read was '--policy', its unknown tensors 'policy' (predict's field): one option,
    two names in one session."""
    from tracegen.cli import main

    path = tmp_path / "order.txt"
    policy = str(path) if command != "sweep" else f"tf,{path}"
    args = [command, str(mlp_trace_dir), "--policy", policy, "--out", str(tmp_path / command)]
    for text, said in [("a\na\n", "line 2: 'a' is already on line 1"), ("no/such/tensor\n",
                                                                         "line 1: 'no/such/tensor' is not a transfer")]:
        path.write_text(text)
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"tracegen {command}: error: '--policy': order file {str(path)!r}: {said}"), err


def test_the_library_names_an_order_file_by_the_field(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """Called as a library, read and check both say 'policy', as SimConfig and PredictConfig call it."""
    from tracegen.policy import check_order

    path = tmp_path / "order.txt"
    path.write_text("a\na\n")
    with pytest.raises(ConfigError, match=r"^'policy': order file .*: line 2: 'a' is already on line 1$"):
        read_order(path)
    path.write_text("no/such\n")
    model, order = build_model(read_trace(mlp_trace_dir)), read_order(path)
    with pytest.raises(ConfigError, match=r"^'policy': order file .*: line 1: 'no/such' is not a transfer"):
        check_order(model, order, str(path))
