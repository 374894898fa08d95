"""Bad input: one clear line naming the file and the problem, exit code 2, no traceback, no hang."""

from __future__ import annotations

import gzip
import pathlib
from collections.abc import Callable
from types import ModuleType

import pytest

from parsers import TraceContentError, TraceFormatError, read_trace
from parsers.proto import tf_trace_pb2 as pb
from tracegen.cli import main

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
REAL_PB = TRACES / "mlp" / "step_000.pb"
REAL_JSON = TRACES / "mlp" / "step_000.json"


def _edited_pb(edit) -> bytes:  # type: ignore[no-untyped-def]
    md = pb.RunMetadata()
    md.ParseFromString(REAL_PB.read_bytes())
    edit(md)
    return md.SerializeToString()


def _rename_workers(md) -> None:  # type: ignore[no-untyped-def]
    for dev in md.step_stats.dev_stats:
        dev.device = dev.device.replace("/job:worker", "/job:ps")
        for node in dev.node_stats:
            node.timeline_label = node.timeline_label.replace("/job:worker", "/job:ps")
    del md.partition_graphs[:]


def _bad_label(md) -> None:  # type: ignore[no-untyped-def]
    md.step_stats.dev_stats[0].node_stats[0].timeline_label = "[1KB] garbled"


def _negative_time(md) -> None:  # type: ignore[no-untyped-def]
    md.step_stats.dev_stats[2].node_stats[3].all_start_nanos = 0
    md.step_stats.dev_stats[2].node_stats[3].all_start_micros = -5


CASES = {
    "empty": (b"", "file is empty"),
    "blank": (b"  \n\t ", "file is empty"),
    "garbage": (bytes(range(256)) * 4, "not a RunMetadata or StepStats protobuf"),
    "truncated_pb": (REAL_PB.read_bytes()[: len(REAL_PB.read_bytes()) // 2], "not a RunMetadata"),
    "no_devices_pb": (b"\x08\x01", "no step_stats with named devices"),
    "truncated_json": (REAL_JSON.read_bytes()[:5000], "invalid JSON"),
    "json_not_trace": (b'{"hello": "world"}', "not a Chrome trace"),
    "json_events_not_objects": (b'{"traceEvents": [1, 2, 3]}', "traceEvents[0] is not an object"),
    "json_no_complete_events": (b'{"traceEvents": []}', "no complete ('X') events"),
    "json_bomb_deep": (b"[" * 200_000 + b"]" * 200_000, "nested more than 64 deep"),
    "json_bad_ts": (b'{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": '
                    b'"/job:worker/replica:0/task:0/device:CPU:0 Compute"}}, {"ph": "X", "pid": 1, "tid": 0, '
                    b'"name": "MatMul", "ts": "soon", "dur": 3}]}', "'ts' must be a number"),
    "json_huge_int": (b'{"traceEvents": [' + b"9" * 5000 + b"]}", "unreadable JSON value"),
    "json_wrong_dialect": (b'{"traceEvents": [{"ph": "X", "pid": 1, "tid": 0, "name": "a", "ts": 1, "dur": 1}]}',
                           "not a TF timeline"),
    "corrupt_gzip": (b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"not deflate at all", "corrupt gzip"),
    "truncated_gzip": (gzip.compress(REAL_JSON.read_bytes())[:300], "truncated"),
    "text_syntax": (b"step_stats {\n  dev_stats {\n    device: \n", ":4:1: invalid text-format protobuf"),
    "text_bad_field_value": (b"step_stats { dev_stats { node_stats { all_start_micros: \"x\" } } }",
                             "all_start_micros"),
    "no_worker": (_edited_pb(_rename_workers), "no device of job 'worker'"),
    "bad_recv_label": (_edited_pb(_bad_label), "RecvTensor label does not read"),
    "negative_time": (_edited_pb(_negative_time), "bad times"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_naming_the_file(case: str, tmp_path: pathlib.Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data, why = CASES[case]
    _refused_by_inspect(tmp_path / f"{case}.trace", data, why, capsys)


def test_a_length_past_the_end_of_the_file_is_not_a_run_metadata(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
        benchmark_module: Callable[[str], ModuleType]) -> None:
    """A field that claims 1 TiB of a 12-byte file. The wire encoder is the fuzzer's (benchmarks/fuzz_protobuf.py),
    not a second copy here: loading fuzz_parsers puts benchmarks/ on the path fuzz_protobuf imports its parts by."""
    benchmark_module("fuzz_parsers")
    varint = benchmark_module("fuzz_protobuf").varint
    _refused_by_inspect(tmp_path / "absurd_length.trace", b"\x0a" + varint(1 << 40) + b"\x0a\x02ab",
                        "not a RunMetadata", capsys)


def _refused_by_inspect(path: pathlib.Path, data: bytes, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``tracegen inspect`` of ``data`` in ``path``: exit code 2, one line on stderr naming the file and ``why``."""
    path.write_bytes(data)
    assert main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert str(path) in err and why in err, err
    assert "Traceback" not in err


def test_missing_path_and_empty_directory(tmp_path: pathlib.Path) -> None:
    # the path named first, as every message of a file does (the rule's words alone passed a message without it)
    with pytest.raises(TraceFormatError) as missing:
        read_trace(tmp_path / "nope.pb")
    assert str(missing.value) == f"{tmp_path / 'nope.pb'}: no such file or directory"
    with pytest.raises(TraceFormatError) as empty:
        read_trace(tmp_path)
    assert str(empty.value).startswith(f"{tmp_path}: no trace files ("), empty.value


def test_oversized_files_and_gzip_bombs_are_refused_unread(tmp_path: pathlib.Path) -> None:
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20)))  # 8 MiB of spaces in ~8 kB
    with pytest.raises(TraceFormatError, match="expands beyond the limit of 1048576 bytes"):
        read_trace(bomb, max_bytes=1 << 20)
    big = tmp_path / "big.pb"
    big.write_bytes(b"\0" * (2 << 20))
    with pytest.raises(TraceFormatError, match="more than the limit"):
        read_trace(big, max_bytes=1 << 20)


def test_content_errors_name_the_record(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "x.pb"
    path.write_bytes(_edited_pb(_bad_label))
    with pytest.raises(TraceContentError, match=r"dev_stats\[0\]\.node_stats\[0\]"):
        read_trace(path)
