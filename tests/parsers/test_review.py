"""What a review of the readers found on 2026-12-04, as tests: odd but valid input read right (a file name that
is not UTF-8, a step without ops, empty and multi-line strings through every table format), and inputs that
were read wrong or crashed refused in one line naming the file (a host's profile twice, fractional integers in
a Parquet table, a bare number as the tracegen section)."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import shutil
from typing import Any

import pandas as pd
import pytest
from google.protobuf import text_format

from parsers import TraceError, read_trace
from parsers.errors import MAX_MESSAGE_CHARS
from parsers.proto import tf_trace_pb2 as pb
from parsers.tables import write_tables
from tracegen.cli import main

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def _timeline(ops: list[dict[str, Any]], process: str = f"{WORKER} Compute") -> bytes:
    """A TF timeline of one process, the ops its complete events."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": process}}]
    events += [{"ph": "X", "cat": "Op", "pid": 1, "tid": 0, "ts": 100 + 20 * k, "dur": 10, **op}
               for k, op in enumerate(ops)]
    return json.dumps({"traceEvents": events}).encode()


def _one_line(text: str, path: pathlib.Path | str, why: str) -> None:
    assert "\n" not in text.strip() and "Traceback" not in text, text
    assert len(text.strip()) <= MAX_MESSAGE_CHARS + len("tracegen inspect: error: ")
    assert str(path) in text and why in text, text


def test_a_file_name_that_is_not_utf8_reads(tmp_path: pathlib.Path) -> None:
    name = os.fsdecode(b"step\xff.pb")  # what the file system hands over: a lone surrogate
    shutil.copyfile(DATA / "traces" / "mlp" / "step_000.pb", tmp_path / name)
    trace = read_trace(tmp_path / name)
    assert len(trace.steps) == 1
    assert "\\udcff" in trace.steps["source"].iloc[0]  # written as its escape: the string dtype holds it


def test_a_step_without_ops_is_summarised(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "recv_only.json"
    path.write_bytes(_timeline([{"name": "RecvTensor", "args": {"name": "RecvTensor", "op": "RecvTensor"}}]))
    assert main(["inspect", str(path)]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["csv", "parquet", "chrome"])
def test_empty_and_multi_line_strings_survive_every_format(tmp_path: pathlib.Path, fmt: str) -> None:
    source = tmp_path / "odd.json"
    source.write_bytes(_timeline([
        {"name": "MatMul", "args": {"name": "mm\rx", "op": "MatMul"}},  # a carriage return in a name
        {"name": "", "args": {"name": 'say "hi", then\nleave', "op": ""}},  # an empty op: unknown, as NA
        {"name": "Relu", "args": {"name": "r", "op": "Relu"}},
    ]))
    trace = read_trace(source)
    assert trace.ops["op_type"].isna().sum() == 1
    out = tmp_path / ("out.json" if fmt == "chrome" else "out")
    assert main(["convert", str(source), "--to", fmt, str(out)]) == 0
    again = read_trace(out)
    assert again.equals(trace)
    assert main(["inspect", str(out)]) == 0


def test_a_hosts_profile_twice_is_refused(tmp_path: pathlib.Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(next((DATA / "traces" / "tf2_pss" / "plugins" / "profile").iterdir()), run)
    first = sorted(run.glob("*.xplane.pb"))[0]
    (run / (first.name + ".gz")).write_bytes(gzip.compress(first.read_bytes()))
    with pytest.raises(TraceError) as info:
        read_trace(run)
    _one_line(str(info.value), first, "keep one of them")


def test_a_fraction_in_an_integer_column_is_refused(tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(DATA / "traces" / "mlp" / "step_000.pb"), tmp_path, "parquet")
    ops = pd.read_parquet(tmp_path / "ops.parquet")
    ops["dur_ns"] = ops["dur_ns"].astype(float) + 0.5
    ops.to_parquet(tmp_path / "ops.parquet", index=False)
    with pytest.raises(TraceError) as info:
        read_trace(tmp_path)
    _one_line(str(info.value), tmp_path / "ops.parquet", "'dur_ns' must be a whole number")


def test_a_bare_number_as_the_tracegen_section_is_refused(tmp_path: pathlib.Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "own.json"
    path.write_text('{"traceEvents": [], "tracegen": 1}')
    assert main(["inspect", str(path)]) == 2
    _one_line(capsys.readouterr().err, path, "'tracegen.tables' missing")


def test_a_link_profile_beside_the_steps_is_not_taken_for_a_trace() -> None:
    folder = DATA / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
    assert (folder / "link-profile.json").is_file() and (folder / "single-worker.json").is_file()
    assert not any("JSON" in reason for reason in read_trace(folder).skipped)


def test_a_text_step_stats_under_a_comment_reads(tmp_path: pathlib.Path) -> None:
    run = pb.RunMetadata()
    run.ParseFromString((DATA / "traces" / "mlp" / "step_000.pb").read_bytes())
    path = tmp_path / "stats.pbtxt"
    path.write_text("# one step's stats\n" + text_format.MessageToString(run.step_stats))
    assert len(read_trace(path).ops) == len(read_trace(DATA / "traces" / "mlp" / "step_000.pb").ops)


def test_gzip_inside_gzip_says_so(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "step.pb.gz"
    path.write_bytes(gzip.compress(gzip.compress((DATA / "traces" / "mlp" / "step_000.pb").read_bytes())))
    with pytest.raises(TraceError) as info:
        read_trace(path)
    _one_line(str(info.value), path, "gzip inside gzip")
