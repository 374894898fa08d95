"""RunMetadata and StepStats, binary and text, read from real TensorFlow traces and checked against
TensorFlow's own protobuf classes parsing the same bytes."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest
from google.protobuf import text_format
from hypothesis import given
from hypothesis import strategies as st

from parsers import read_trace
from parsers.errors import TraceContentError, TraceFormatError
from parsers.proto import tf_trace_pb2 as pb
from parsers.trace import device_role


def _tf_metadata(tf_protos, path: pathlib.Path):  # type: ignore[no-untyped-def]
    md = tf_protos.RunMetadata()
    md.ParseFromString(path.read_bytes())
    return md


def test_records_match_tensorflows_own_parse(step_pb: pathlib.Path, tf_protos) -> None:  # type: ignore[no-untyped-def]
    md = _tf_metadata(tf_protos, step_pb)
    nodes = [(d.device, n) for d in md.step_stats.dev_stats for n in d.node_stats]
    recvs = [(dev, n) for dev, n in nodes if n.node_name == "RecvTensor"]
    trace = read_trace(step_pb)
    assert len(trace.transfers) == len(recvs)
    assert len(trace.ops) == len(nodes) - len(recvs)
    # Times: nanosecond fields when TF set them, microseconds otherwise; same values as TF's parse.
    expected_starts = sorted(n.all_start_nanos or n.all_start_micros * 1000 for _, n in nodes
                             if n.node_name != "RecvTensor")
    assert sorted(trace.ops["start_ns"]) == expected_starts
    assert sorted(trace.transfers["size_bytes"]) == sorted(
        n.output[0].tensor_description.allocation_description.requested_bytes for _, n in recvs)
    assert len(trace.graph_nodes) == sum(len(g.node) for g in md.partition_graphs)


def test_transfers_are_named_directed_and_sized(step_pb: pathlib.Path) -> None:
    trace = read_trace(step_pb)
    xfers = trace.transfers
    # every bundled step pulls parameters and pushes gradients: the checks below hold for something
    assert set(xfers["direction"]) == {"pull", "push"}
    assert xfers["tensor_name"].notna().all()
    assert xfers["size_bytes"].notna().all()
    for row in xfers.itertuples():
        roles = (device_role(row.src_device), device_role(row.dst_device))
        assert row.direction == {("ps", "worker"): "pull", ("worker", "ps"): "push"}[roles]
    # Every recorded transfer is one of the graph's _Send/_Recv pairs, in the same direction.
    pairs = dict(zip(trace.rendezvous["tensor_name"], trace.rendezvous["direction"], strict=True))
    assert all(pairs[t] == d for t, d in zip(xfers["tensor_name"], xfers["direction"], strict=True))


def test_variables_have_the_graphs_shapes(step_pb: pathlib.Path, tf_protos) -> None:  # type: ignore[no-untyped-def]
    md = _tf_metadata(tf_protos, step_pb)
    expected = {}
    for g in md.partition_graphs:
        for n in g.node:
            if n.op == "VarHandleOp":
                dims = [d.size for d in n.attr["shape"].shape.dim]
                count = 1
                for d in dims:
                    count *= d
                expected[n.name] = count
    trace = read_trace(step_pb)
    assert dict(zip(trace.variables["name"], trace.variables["n_elements"], strict=True)) == expected


def test_text_format_reads_like_binary(step_pb: pathlib.Path, tf_protos, tmp_path: pathlib.Path) -> None:  # type: ignore[no-untyped-def]
    text_path = tmp_path / "step.pbtxt"
    text_path.write_text(text_format.MessageToString(_tf_metadata(tf_protos, step_pb)))
    text, binary = read_trace(text_path), read_trace(step_pb)
    assert text.source_format == "runmetadata-text"
    assert text.equals(binary)


def test_bare_step_stats_read_without_graphs(step_pb: pathlib.Path, tf_protos, tmp_path: pathlib.Path) -> None:  # type: ignore[no-untyped-def]
    md = _tf_metadata(tf_protos, step_pb)
    (tmp_path / "stats.pb").write_bytes(md.step_stats.SerializeToString())
    (tmp_path / "stats.pbtxt").write_text(text_format.MessageToString(md.step_stats))
    full = read_trace(step_pb)
    for name in ("stats.pb", "stats.pbtxt"):
        bare = read_trace(tmp_path / name)
        assert bare.ops.equals(full.ops)
        assert bare.transfers.equals(full.transfers)
        assert bare.graph_nodes.empty and bare.variables.empty
        assert any("partition graphs" in lost for lost in bare.lost)


def test_directory_and_glob_merge_steps_in_name_order(model_dir: pathlib.Path) -> None:
    trace = read_trace(model_dir)
    assert list(trace.steps["step"]) == [0, 1, 2]
    assert [pathlib.Path(s).name for s in trace.steps["source"]] == ["step_000.pb", "step_001.pb", "step_002.pb"]
    assert trace.steps["start_ns"].is_monotonic_increasing
    assert trace.skipped["Chrome JSON files ignored in favour of RunMetadata of the same steps"] == 3
    by_glob = read_trace(str(model_dir / "step_*.pb"))
    assert by_glob.ops.equals(trace.ops)
    # The partition graph is the same every step: merged once, not three times.
    single = read_trace(model_dir / "step_000.pb")
    assert len(trace.graph_nodes) == len(single.graph_nodes)


def test_several_chrome_files_are_refused_as_steps(model_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    from parsers import TraceContentError

    for p in model_dir.glob("step_*.json"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    with pytest.raises(TraceContentError) as info:  # the folder named, and what to do
        read_trace(tmp_path)
    said = str(info.value)
    assert said.startswith(f"{tmp_path}: ") and said.endswith("so steps cannot be merged: pass one file"), said


def test_gzipped_steps_read_like_plain_ones(model_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    import gzip

    for p in model_dir.glob("step_*.pb"):
        (tmp_path / f"{p.name}.gz").write_bytes(gzip.compress(p.read_bytes()))
    assert read_trace(tmp_path).equals(read_trace(model_dir))


def test_steps_of_two_jobs_in_one_directory_are_refused(tmp_path: pathlib.Path) -> None:
    """mlp's steps and one of cnn's were merged into one trace without a word, and predict then said no step was
    complete, 'trace more steps' (a hardening pass)."""
    traces = pathlib.Path(__file__).resolve().parents[2] / "data/traces"
    for i in range(2):
        shutil.copy(traces / "mlp" / f"step_00{i}.pb", tmp_path / f"step_00{i}.pb")
    shutil.copy(traces / "cnn" / "step_000.pb", tmp_path / "step_002.pb")
    with pytest.raises(TraceContentError, match=r"step_002\.pb: its partition graphs differ from .*step_000\.pb's"):
        read_trace(tmp_path)
    (tmp_path / "step_002.pb").unlink()
    assert len(read_trace(tmp_path).steps) == 2
    # one node more in one step's graphs said '(1 nodes in one only, ...)'
    run = pb.RunMetadata()
    run.ParseFromString((tmp_path / "step_001.pb").read_bytes())
    graph = run.partition_graphs[0]
    graph.node.add(name="extra", op="NoOp", device=graph.node[0].device)
    (tmp_path / "step_001.pb").write_bytes(run.SerializeToString())
    with pytest.raises(TraceContentError) as info:
        read_trace(tmp_path)
    assert "differ from " in str(info.value) and "'s (1 node in one only, e.g. 'extra'): " in str(info.value)


def test_steps_joined_by_cat_are_refused_not_read_as_one_step(model_dir: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    """Protobuf parses two messages laid end to end as one: ``cat step_000.pb step_001.pb`` (or two gzip members)
    was read as a single step with twice the ops, twice as long, and predicted from."""
    joined = tmp_path / "step_000.pb"
    joined.write_bytes((model_dir / "step_000.pb").read_bytes() + (model_dir / "step_001.pb").read_bytes())
    with pytest.raises(TraceContentError, match=r"step_000\.pb: partition_graphs\[\d+\] repeats partition_graphs"
                                                r"\[0\] .*two RunMetadata joined into one file"):
        read_trace(joined)


def test_partition_graphs_cut_short_are_refused(step_pb: pathlib.Path, tf_protos,  # type: ignore[no-untyped-def]
                                                 tmp_path: pathlib.Path) -> None:
    """An op recorded in step_stats whose node is not in the graphs would lose its dependencies; a device with
    records and no graph, every one of them."""
    md = _tf_metadata(tf_protos, step_pb)
    ps = next(g for g in md.partition_graphs if any("/job:ps" in n.device for n in g.node))
    recorded = {n.node_name for d in md.step_stats.dev_stats if "/job:ps" in d.device for n in d.node_stats}
    victim = next(n for n in ps.node if n.name in recorded and n.name != "_SOURCE")
    cut = tf_protos.RunMetadata()
    cut.CopyFrom(md)
    graph = next(g for g in cut.partition_graphs if any(n.name == victim.name for n in g.node))
    kept = [n for n in graph.node if n.name != victim.name]
    del graph.node[:]
    graph.node.extend(kept)
    (tmp_path / "node.pb").write_bytes(cut.SerializeToString())
    with pytest.raises(TraceContentError, match=rf"node\.pb: dev_stats\[\d+\]\.node_stats\[\d+\] \('{victim.name}'\) "
                                                r"is in no partition graph"):
        read_trace(tmp_path / "node.pb")
    no_ps = tf_protos.RunMetadata()
    no_ps.CopyFrom(md)
    del no_ps.partition_graphs[:]
    no_ps.partition_graphs.extend(g for g in md.partition_graphs if g is not ps)
    (tmp_path / "device.pb").write_bytes(no_ps.SerializeToString())
    with pytest.raises(TraceContentError, match=r"device\.pb: dev_stats\[\d+\] \('/job:ps/replica:0/task:0/device:"
                                                r"CPU:0'\) has records but no partition graph"):
        read_trace(tmp_path / "device.pb")


def test_one_step_read_twice_is_refused(tmp_path: pathlib.Path) -> None:
    """``gunzip -k`` leaves step_001.pb beside step_001.pb.gz: the step was merged twice, counted as another traced
    step and replayed twice as often, without a word (a hardening pass). Steps of one worker follow each other;
    one that starts before the one before it has ended is refused, naming both files."""
    import gzip

    dev = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    for i in range(3):
        shutil.copy(dev / f"step_00{i}.pb.gz", tmp_path / f"step_00{i}.pb.gz")
    assert len(read_trace(tmp_path).steps) == 3
    (tmp_path / "step_001.pb").write_bytes(gzip.decompress((dev / "step_001.pb.gz").read_bytes()))
    with pytest.raises(TraceContentError, match=r"step_001\.pb\.gz: records the same step as .*step_001\.pb \(its "
                                                r"records start at the same"):
        read_trace(tmp_path)
    (tmp_path / "step_001.pb").unlink()
    md = pb.RunMetadata()
    md.ParseFromString(gzip.decompress((dev / "step_002.pb.gz").read_bytes()))
    first = read_trace(tmp_path / "step_001.pb.gz").steps.iloc[0]
    shift_us = (int(md.step_stats.dev_stats[0].node_stats[0].all_start_micros) * 1000 - int(first["end_ns"])) // 1000
    for d in md.step_stats.dev_stats:  # another process's step, 1 ms before step 1 ended
        for n in d.node_stats:
            n.all_start_micros -= shift_us + 1000
    (tmp_path / "step_002.pb.gz").write_bytes(gzip.compress(md.SerializeToString()))
    with pytest.raises(TraceContentError, match=r"step_002\.pb\.gz: its step starts \d+ ns before the step of "
                                                r".*step_001\.pb\.gz ends"):
        read_trace(tmp_path)


def test_a_damaged_step_in_a_folder_named_in_other_bytes_than_utf8_is_named_once(tmp_path: pathlib.Path) -> None:
    """Under a folder whose name is not UTF-8, the message named the file twice ('bad\\udcff/step.pb: not a
    RunMetadata ...: bad\\udcff/step.pb: byte 0: ...'): the inner message's path, escaped, was not taken off."""
    folder = pathlib.Path(os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff"))
    folder.mkdir()
    (folder / "step.pb").write_bytes(b"garbage\x00")  # binary: printable text alone is told to be no step
    with pytest.raises(TraceFormatError) as info:
        read_trace(folder / "step.pb")
    assert str(info.value).endswith("step.pb: not a RunMetadata or StepStats protobuf: byte 0: field 12 has wire "
                                    "type 7, which TensorFlow's traces do not use"), info.value
    assert str(info.value).count("step.pb") == 1, info.value


@pytest.mark.parametrize(("text", "why"), [
    ("my notes\n", "its first line 'my notes' starts no field of one (step_stats, dev_stats, ...)"),
    ("# README\n\nThese steps are the MLP's.\n", "its first line \"These steps are the MLP's.\" starts no field"),
    ("node {\n  name: 'a'\n}\n", "its first line 'node {' starts no field of one"),  # a GraphDef, not a step
    ("# only a comment\n", "it holds comments only"),
])
def test_text_that_is_no_step_says_so(tmp_path: pathlib.Path, text: str, why: str) -> None:
    """'notes.txt' said 'not a RunMetadata or StepStats protobuf: byte 5: field 14 has wire type 4', a README
    'README.txt:3:7: invalid text-format protobuf: ... Expected "{"': words about protobuf wire types and braces for
    a file that was never a step. A step cut short is still not taken for prose: it is named by the line and
    column where it ends."""
    path = tmp_path / "notes.txt"
    path.write_text(text)
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    assert str(info.value).startswith(f"{path}: not a text-format RunMetadata or StepStats step: {why}")
    assert "move it away" not in str(info.value)  # a file named alone is no folder's step
    md = pb.RunMetadata()
    md.ParseFromString((pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp" / "step_000.pb")
                       .read_bytes())
    step = text_format.MessageToString(md)
    path.write_text(step[: len(step) // 2])
    with pytest.raises(TraceFormatError, match=rf"^{path}:\d+:\d+: invalid text-format protobuf"):
        read_trace(path)


@given(st.text(alphabet=["a", "d", "#", " ", "\t", "\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028"], max_size=30))
def test_the_first_line_is_found_as_splitlines_finds_it(text: str) -> None:
    """Which text-format message a file holds is told by its first line that is not blank or a comment; it was
    found by splitting the whole text into a list of lines (twice per file), now lazily: the same line
    for any mix of the boundaries ``str.splitlines`` knows."""
    from parsers.runmetadata import _first_line

    lines = [line.strip() for line in text.splitlines()]
    assert _first_line(text) == next((line for line in lines if line and not line.startswith("#")), None)


def test_a_transfer_without_its_allocation_takes_the_labels_exact_bytes(tmp_path: pathlib.Path) -> None:
    """A RecvTensor whose output records no allocation (requested_bytes 0, or no output) is sized by its label
    when the label gives whole bytes ('[2048B] ...'), and left unsized when it gives a rounded size ('[1.0MB]')."""
    import pandas as pd

    md = pb.RunMetadata()
    path = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp" / "step_000.pb"
    md.ParseFromString(path.read_bytes())
    recvs = [n for d in md.step_stats.dev_stats for n in d.node_stats if n.node_name == "RecvTensor"]
    exact = next(n for n in recvs if n.timeline_label.startswith("[2048B] "))
    rounded = next(n for n in recvs if n.timeline_label.startswith("[1.0MB] "))
    exact.output[0].tensor_description.allocation_description.requested_bytes = 0
    del rounded.output[:]
    (tmp_path / "step.pb").write_bytes(md.SerializeToString())
    moved = read_trace(tmp_path / "step.pb").transfers
    sizes = dict(zip(moved["tensor_name"], moved["size_bytes"], strict=True))
    assert sizes[exact.timeline_label.split()[2]] == 2048
    assert pd.isna(sizes[rounded.timeline_label.split()[2]])


def test_text_format_misspelt_field_is_named_not_what_it_left_out(step_pb: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """A text-format step with 'devic:' for 'device:' was refused as 'dev_stats[0] has no device name', and one
    with 'node_statz' for 'node_stats' as 'step_stats holds no records': unknown fields are skipped (a newer
    TensorFlow's step must read), so the typo went unnamed. A field unknown and skipped is still no fault."""
    md = pb.RunMetadata()
    md.ParseFromString(step_pb.read_bytes())
    text = text_format.MessageToString(md)
    newer = tmp_path / "newer.pbtxt"  # a field this reader's protos lack, in a step that has all it needs
    newer.write_text(text.replace("dev_stats {\n", "dev_stats {\n    future_field: 7\n", 1))
    assert read_trace(newer).ops.equals(read_trace(step_pb).ops)
    for typo, wrong in (("devic", text.replace("    device: ", "    devic: ", 1)),
                        ("node_statz", text.replace("node_stats {", "node_statz {"))):
        path = tmp_path / f"{typo}.pbtxt"
        path.write_text(wrong)
        line = 1 + wrong[: wrong.index(f"{typo}")].count("\n")
        with pytest.raises(TraceFormatError) as info:
            read_trace(path)
        assert str(info.value).startswith(f"{path}:{line}:")
        assert f'has no field named "{typo}"' in str(info.value)


def test_a_text_step_that_is_not_utf8_names_its_line_and_byte(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """It said only 'byte N' of a text step thousands of lines long."""
    run = pb.RunMetadata()
    run.ParseFromString(step_pb.read_bytes())
    text = text_format.MessageToString(run).encode()
    at = text.rindex(b'node_name: "') + len(b'node_name: "')  # in the last node: far down the file
    data = text[:at] + b"\xff" + text[at:]
    path = tmp_path / "step_000.pbtxt"
    path.write_bytes(data)
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    line = data[:at].count(b"\n") + 1
    assert str(info.value) == f"{path}: line {line}, byte {at}: text-format protobuf is not UTF-8"


MLP = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp"


@pytest.mark.parametrize(("field", "said"), [
    ("start", "op 'Relu' ends 56.9 years before the step's other {others} records start (step 0 lasts 56.9 years, "),
    ("dur", "op 'Relu' runs for 2.0 days, more than the day no op of a training step takes"),
], ids=["start", "dur"])
def test_an_op_or_gap_longer_than_a_day_is_refused_as_the_step_is_read(tmp_path: pathlib.Path, field: str,
                                                                       said: str) -> None:
    """One op of a traced step moved to 1 µs (a clock read wrong) made a step of 57 years, and one recorded as
    running two days a step longer than any: inspect reported them as the step time, and only predict, building a
    model, refused them. Refused as read, naming the step's file, the record's place in it and the gap."""
    run = pb.RunMetadata()
    run.ParseFromString((MLP / "step_001.pb").read_bytes())
    d, n, node = next((d, n, node) for d, dev in enumerate(run.step_stats.dev_stats) if "/job:worker" in dev.device
                      for n, node in enumerate(dev.node_stats) if node.node_name == "Relu")
    if field == "start":
        node.all_start_micros, node.all_start_nanos = 1, 0
    else:
        node.all_end_rel_micros, node.all_end_rel_nanos = 2 * 86_400 * 10**6, 2 * 86_400 * 10**9
    steps = tmp_path / "steps"  # of several steps, the message names the step's own file
    steps.mkdir()
    shutil.copy(MLP / "step_000.pb", steps)  # the step before it: one after it would overlap a 2-day op
    (steps / "step_001.pb").write_bytes(run.SerializeToString())
    whole = read_trace(MLP / "step_001.pb")
    said = said.format(others=len(whole.ops) + len(whole.transfers) - 1)
    for trace in (steps / "step_001.pb", steps):
        if trace == steps and field == "start":  # moved to 1 µs, the step overlaps the one before it: refused so
            continue
        with pytest.raises(TraceContentError) as info:
            read_trace(trace)
        message = str(info.value)
        assert message.startswith(f"{steps / 'step_001.pb'}: dev_stats[{d}].node_stats[{n}]: {said}"), message
        assert message.endswith("a time in the trace is wrong") and len(message) <= 300, message


@pytest.mark.parametrize("requested", [-1, 0])
def test_a_recvtensor_of_minus_one_bytes_is_of_unknown_size(tmp_path: pathlib.Path, requested: int) -> None:
    """TensorFlow labels a RecvTensor whose size it does not know '[-1B]' (and may leave requested_bytes -1 or
    unset): the size is unknown (<NA>), as every other format's missing size is, never -1 bytes nor 1."""
    run = pb.RunMetadata()
    run.ParseFromString((MLP / "step_000.pb").read_bytes())
    node = next(n for d in run.step_stats.dev_stats for n in d.node_stats if n.node_name == "RecvTensor")
    node.timeline_label = "[-1B]" + node.timeline_label[node.timeline_label.index("]") + 1:]
    for output in node.output:
        output.tensor_description.allocation_description.requested_bytes = requested
    path = tmp_path / "step_000.pb"
    path.write_bytes(run.SerializeToString())
    whole, read = read_trace(MLP / "step_000.pb"), read_trace(path)
    unknown = read.transfers["size_bytes"].isna()
    assert unknown.sum() == 1 and whole.transfers["size_bytes"].notna().all()
    assert read.transfers[~unknown].equals(whole.transfers[~unknown])


def test_a_step_of_two_records_a_day_apart_names_the_other_in_the_singular() -> None:
    # 'ends 3.0 days before the step's other 1 records start'
    from parsers.trace import span_fault

    trace = read_trace(MLP / "step_000.pb")
    ops = trace.ops.iloc[:2].copy()
    ops.loc[ops.index[0], "start_ns"] = int(ops["start_ns"].iloc[1]) - 3 * 86_400 * 10**9
    steps = trace.steps.iloc[:1].copy()
    steps.loc[steps.index[0], ["start_ns", "end_ns"]] = [int(ops["start_ns"].min()),
                                                          int((ops["start_ns"] + ops["dur_ns"]).max())]
    fields = {f: getattr(trace, f) for f in trace.__dataclass_fields__}
    fault = span_fault(trace.__class__(**{**fields, "ops": ops, "transfers": trace.transfers.iloc[:0],
                                          "steps": steps}))
    assert fault is not None and " ends 3.0 days before the step's other record starts (step 0 " in fault[2], fault
