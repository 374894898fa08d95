"""Every failure family a hostile review found (issue 8), as tests: a malformed input ends in one line of the
package's own error, at most 300 characters, naming the file, the position when known and what was wrong;
never a traceback, a hang or unbounded memory. Inputs that could blow up memory or block are read in a child
limited to 10 s and 2 GiB of address space (the ``child_runner`` fixture)."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import pathlib
import re
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

from parsers import TraceError, TraceFormatError, read_trace
from parsers.catalogue import CatalogueError, read_catalogue
from parsers.chrome import write_trace
from parsers.errors import MAX_MESSAGE_CHARS, one_line, quoted
from parsers.limits import MAX_BYTES, MAX_RECORDS, check_wire_shape
from parsers.linkprofile import ProfileError, read_link_profile
from parsers.proto import tf_trace_pb2 as pb
from parsers.read import read_meta
from parsers.singleworker import SingleWorker, SingleWorkerError, read_single_worker, write_single_worker
from parsers.tables import write_tables
from parsers.workerclasses import WorkerClassError, read_worker_classes

from parsers_support import REAL_JSON, REAL_PB, TRACES, check_message, fails, profile_file


def _edited_pb(edit: Callable[[Any], None]) -> bytes:
    md = pb.RunMetadata()
    md.ParseFromString(REAL_PB.read_bytes())
    edit(md)
    return md.SerializeToString()


def _recv(md: Any) -> Any:
    return next(n for d in md.step_stats.dev_stats for n in d.node_stats if n.node_name == "RecvTensor")


@functools.cache
def _own_json() -> bytes:
    """Our own Chrome dialect of the mlp step (the one that carries every table)."""
    with tempfile.TemporaryDirectory() as tmp:
        write_trace(read_trace(REAL_PB), pathlib.Path(tmp) / "own.json")
        return (pathlib.Path(tmp) / "own.json").read_bytes()


def _edited_json(edit: Callable[[Any], None], *, own: bool = False) -> bytes:
    doc = json.loads(_own_json() if own else REAL_JSON.read_bytes())
    edit(doc)
    return json.dumps(doc).encode()


def _first_op(doc: Any) -> dict[str, Any]:
    return next(e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name") != "RecvTensor")


def _first_op_with_input(doc: Any) -> dict[str, Any]:
    return next(e for e in doc["traceEvents"] if e.get("ph") == "X" and "input0" in e.get("args", {}))


def _set(key: str, value: Any, *, args: bool = False) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        event = _first_op(doc)
        (event["args"] if args else event)[key] = value
    return edit


# ------------------------------------------------------------------ RecursionError on deep nesting (152 found)


def test_deep_text_format_nesting_names_line_and_column(tmp_path: pathlib.Path) -> None:
    text = fails(tmp_path, "deep.pbtxt", b"step_stats {\n" + b"x {\n" * 5000 + b"}\n" * 5001,
                 "text-format messages nested more than 64 deep")
    assert re.search(r"deep\.pbtxt:65:\d+: ", text), text


def test_deep_nesting_of_known_fields_with_angle_brackets(tmp_path: pathlib.Path) -> None:
    fails(tmp_path, "angle.pbtxt", b"step_stats < " + b"dev_stats < " * 3000, "nested more than 64 deep")


def test_nesting_hidden_by_brackets_in_strings_is_still_an_error(tmp_path: pathlib.Path) -> None:
    # The quick bracket count sees the closing brackets inside the string; the parser's own limit stands behind.
    data = b'step_stats {\n  x: "' + b"}" * 3000 + b'"\n' + b"y {\n" * 2000 + b"}\n" * 2001
    fails(tmp_path, "hidden.pbtxt", data, "nested")


def test_deep_json_names_the_byte(tmp_path: pathlib.Path) -> None:
    fails(tmp_path, "deep.json", b'{"traceEvents": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
          "byte 79: JSON nested more than 64 deep")


def test_deep_json_hidden_by_brackets_in_strings(tmp_path: pathlib.Path) -> None:
    data = b'{"traceEvents": ["' + b"]" * 5000 + b'", ' + b"[" * 3000 + b"]" * 3000 + b"]}"
    fails(tmp_path, "hidden.json", data, "nested too deeply")


# --------------------------------------------------------- OverflowError and int64 wrap-around (137 found)


@pytest.mark.parametrize(("field", "value"), [
    ("all_start_micros", 2**62),
    ("all_start_micros", 9_223_372_036_854_775),  # x1000 is just past int64: `inspect` printed a negative time
    ("all_end_rel_micros", 9_223_372_036_854_775),
    ("all_start_micros", -5),
])
def test_times_out_of_range_in_runmetadata(tmp_path: pathlib.Path, field: str, value: int) -> None:
    def edit(md: Any) -> None:
        node = md.step_stats.dev_stats[1].node_stats[2]
        node.all_start_nanos = 0
        setattr(node, field, value)

    text = fails(tmp_path, "times.pb", _edited_pb(edit), "dev_stats[1].node_stats[2]")
    assert f"bad times (start {value if field == 'all_start_micros' else ''}" in text, text


def test_nanosecond_duration_past_int64(tmp_path: pathlib.Path) -> None:
    def edit(md: Any) -> None:
        node = md.step_stats.dev_stats[0].node_stats[0]
        node.all_start_nanos, node.all_end_rel_nanos = 1_796_064_589_452_111_000, 2**63 - 1

    fails(tmp_path, "dur.pb", _edited_pb(edit), "bad times")


@pytest.mark.parametrize("edit", ["requested", "label"])
def test_transfer_sizes_past_16_tib(tmp_path: pathlib.Path, edit: str) -> None:
    def change(md: Any) -> None:
        node = _recv(md)
        if edit == "requested":
            node.output[0].tensor_description.allocation_description.requested_bytes = 2**63 - 1
        else:
            del node.output[:]
            node.timeline_label = re.sub(r"^\[[^\]]*\]", "[99999999999999999999B]", node.timeline_label)

    fails(tmp_path, "size.pb", _edited_pb(change), "more than 2**44 (16 TiB)")


def test_variable_shape_past_16_tib(tmp_path: pathlib.Path) -> None:
    def edit(md: Any) -> None:
        node = next(n for g in md.partition_graphs for n in g.node if n.op == "VarHandleOp")
        dims = node.attr["shape"].shape.dim
        dims.add().size = 2**62
        dims.add().size = 2**62

    fails(tmp_path, "shape.pb", _edited_pb(edit), "holds more than 2**44 bytes")


@pytest.mark.parametrize(("key", "value", "why"), [
    ("ts", 2**70, "'ts' out of range"),
    ("ts", -1, "'ts' out of range"),
    ("dur", 5 * 10**12, "'dur' out of range"),
    ("tid", 2**70, ".tid must be an integer from 0 to 4294967295"),
])
def test_chrome_numbers_out_of_range(tmp_path: pathlib.Path, key: str, value: int, why: str) -> None:
    fails(tmp_path, "range.json", _edited_json(_set(key, value)), why)


def test_huge_exponent_is_refused_without_computing_it(tmp_path: pathlib.Path) -> None:
    data = re.sub(rb'"ts": [0-9.]+', b'"ts": 1e999999999', REAL_JSON.read_bytes(), count=1)
    fails(tmp_path, "exp.json", data, "number 1e999999999 is too large")


@pytest.mark.parametrize(("path", "value", "why"), [
    ("args.step", 2**70, ".args.step must be an integer"),
    ("args.lane", -1, ".args.lane must be an integer from 0 to 4294967295"),
    ("cell", 2**63, "tracegen.tables.variables.rows[0] (n_elements) must be an integer from 0 to 17592186044416"),
    ("skipped", 10**30, "tracegen.skipped.x must be an integer"),
])
def test_own_dialect_numbers_out_of_range(tmp_path: pathlib.Path, path: str, value: int, why: str) -> None:
    def edit(doc: Any) -> None:
        if path == "cell":
            doc["tracegen"]["tables"]["variables"]["rows"][0][4] = value
        elif path == "skipped":
            doc["tracegen"]["skipped"] = {"x": value}
        else:
            _first_op(doc)["args"][path.split(".")[1]] = value

    fails(tmp_path, "own.json", _edited_json(edit, own=True), why)


def test_table_directory_with_a_huge_number_names_the_table(tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(REAL_PB), tmp_path, "csv")
    ops = tmp_path / "ops.csv"
    lines = ops.read_text().splitlines()
    lines[1] = re.sub(r",[0-9]+,([0-9]+),([0-9]+)$", rf",{2**70},\1,\2", lines[1])
    ops.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError) as info:
        read_trace(tmp_path)
    check_message(str(info.value), ops, "line 2: 'start_ns' must be a whole number within int64")


# ------------------------------------------------------------------ unhashable pid in Chrome JSON (45 found)


@pytest.mark.parametrize("pid", [[1], {"a": 1}, "1", 1.5, True])
def test_pid_that_is_not_an_integer(tmp_path: pathlib.Path, pid: Any) -> None:
    fails(tmp_path, "pid.json", _edited_json(_set("pid", pid)), ".pid must be an integer")


def test_process_name_with_a_list_pid(tmp_path: pathlib.Path) -> None:
    def edit(doc: Any) -> None:
        next(e for e in doc["traceEvents"] if e.get("name") == "process_name")["pid"] = [1]

    fails(tmp_path, "meta.json", _edited_json(edit), "traceEvents[0].pid must be an integer")


# ---------------------------------------------------------------- a non-ASCII digit as input slot (23 found)


def test_superscript_slot_in_chrome_json(tmp_path: pathlib.Path) -> None:
    def edit(doc: Any) -> None:
        _first_op_with_input(doc)["args"]["input0"] = "a:\u00b2"

    fails(tmp_path, "slot.json", _edited_json(edit), ".args.input0 'a:\u00b2' is not NAME, NAME:SLOT or ^NAME")


def test_superscript_slot_in_a_partition_graph(tmp_path: pathlib.Path) -> None:
    def edit(md: Any) -> None:
        md.partition_graphs[0].node[3].input.append("a:\u00b2")

    fails(tmp_path, "slot.pb", _edited_pb(edit), "partition_graphs[0].node[3]")


# ----------------------------------------------------------------- lone surrogates: UnicodeEncodeError (6 found)


@pytest.mark.parametrize(("where", "escape"), [("name", "\\ud800"), ("key", "\\udfff"), ("name", "a\\ud83d")])
def test_lone_surrogates_in_json(tmp_path: pathlib.Path, where: str, escape: str) -> None:
    def edit(doc: Any) -> None:
        event = _first_op(doc)
        if where == "name":
            event["args"]["name"] = "@@"
        else:
            event["args"]["@@"] = 1

    data = _edited_json(edit).replace(b"@@", escape.encode(), 1)
    fails(tmp_path, "surrogate.json", data, "holds a lone UTF-16 surrogate")


def test_surrogate_pairs_are_text(tmp_path: pathlib.Path) -> None:
    data = _edited_json(_set("name", "@@", args=True)).replace(b"@@", b"\\ud83d\\ude00", 1)
    path = tmp_path / "pair.json"
    path.write_bytes(data)
    assert "\U0001f600" in set(read_trace(path).ops["node_name"])


def test_lone_surrogate_in_own_dialect_table(tmp_path: pathlib.Path) -> None:
    def edit(doc: Any) -> None:
        doc["tracegen"]["tables"]["graph_nodes"]["rows"][0][1] = "@@"

    data = _edited_json(edit, own=True).replace(b"@@", b"\\udc00", 1)
    fails(tmp_path, "own.json", data, "tracegen.tables.graph_nodes.rows[0][1]")


def test_surrogate_escape_in_text_format(tmp_path: pathlib.Path) -> None:
    fails(tmp_path, "s.pbtxt", b'step_stats { dev_stats { device: "\\ud800" } }', "s.pbtxt")


# ------------------------------------------------- a key twice in one object: json keeps the last, others the first




def _key_twice(data: bytes) -> tuple[bytes, str]:
    """``data`` (a JSON object) with its first key written once more, first, with another value."""
    key = next(iter(json.loads(data)))
    return b"{" + json.dumps(key).encode() + b': "other", ' + data.lstrip()[1:], key


def test_a_key_twice_in_a_trace_names_the_object(tmp_path: pathlib.Path) -> None:
    data, key = _key_twice(REAL_JSON.read_bytes())
    fails(tmp_path, "top.json", data, f"the top-level object: key '{key}' appears twice")

    def edit(doc: Any) -> None:
        _first_op(doc)["args"]["@@"] = 1

    doc = json.loads(_edited_json(edit))
    index = doc["traceEvents"].index(_first_op(doc))
    data = _edited_json(edit).replace(b'"@@": 1', b'"name": "x", "@@": 1', 1)
    fails(tmp_path, "op.json", data, f"traceEvents[{index}].args: key 'name' appears twice")


def test_a_key_twice_in_a_link_profile_single_worker_or_meta_json(tmp_path: pathlib.Path) -> None:
    path = profile_file(tmp_path)
    data, key = _key_twice(path.read_bytes())
    path.write_bytes(data)
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    check_message(str(info.value), path, f"key '{key}' appears twice")
    path = tmp_path / "single-worker.json"
    write_single_worker(SingleWorker(steps_per_s=2.0, window_s=30.0), path)
    data, key = _key_twice(path.read_bytes())
    path.write_bytes(data)
    with pytest.raises(SingleWorkerError) as info:
        read_single_worker(path)
    check_message(str(info.value), path, f"key '{key}' appears twice")
    (tmp_path / "meta.json").write_text('{"batch_size": 32, "model": "mlp", "batch_size": 64}')
    with pytest.raises(TraceFormatError) as info:
        read_meta(tmp_path)
    check_message(str(info.value), tmp_path / "meta.json", "key 'batch_size' appears twice")
    (tmp_path / "meta.json").write_text('{"batch_size": 32, "a": {"batch_size": 64}}')
    assert read_meta(tmp_path) == {"batch_size": 32, "a": {"batch_size": 64}}  # the same key in two objects


def test_text_that_is_not_utf8(tmp_path: pathlib.Path) -> None:
    fails(tmp_path, "bytes.json", b'{"traceEvents": ["\xed\xa0\x80"]}', "byte 18: JSON is not valid UTF-8")


# ----------------------------------------------------------------------- our own JSON dialect (19 others found)


def _tracegen(key: str, value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        doc["tracegen"][key] = value
    return edit


def _table(name: str, key: str, value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        doc["tracegen"]["tables"][name][key] = value
    return edit


def _cell(name: str, col: int, value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        doc["tracegen"]["tables"][name]["rows"][0][col] = value
    return edit


def _arg(key: str, value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        next(e for e in doc["traceEvents"] if e.get("cat") == "transfer")["args"][key] = value
    return edit


def _no_metadata(doc: Any) -> None:
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ph") != "M"]


OWN_CASES: dict[str, tuple[Callable[[Any], None], str]] = {
    "version_true": (_tracegen("format_version", True), "unsupported tracegen Chrome format_version True"),
    # it said 'unsupported tracegen Chrome format_version None', a value the file does not hold
    "version_missing": (lambda doc: doc["tracegen"].pop("format_version"),
                        "tracegen.format_version is missing (this reader knows format_version 1)"),
    "lost_int": (_tracegen("lost", 5), "tracegen.lost must be a list of strings"),
    "skipped_text": (_tracegen("skipped", {"x": "12"}), "tracegen.skipped.x must be an integer"),
    "skipped_list": (_tracegen("skipped", [1]), "tracegen.skipped must be an object"),
    "source_dict": (_tracegen("source", {"a": 1}), "tracegen.source must be a string"),
    "tables_list": (_tracegen("tables", []), "'tracegen.tables' missing"),
    "rows_text": (_table("steps", "rows", "x"), "tracegen.tables.steps.rows must be a list"),
    "rows_null": (_table("steps", "rows", None), "tracegen.tables.steps.rows must be a list"),
    "row_short": (_table("steps", "rows", [[1]]), "tracegen.tables.steps.rows[0] must be a list of 4 values"),
    "cell_text_in_int": (_cell("steps", 2, "12"), "tracegen.tables.steps.rows[0] (start_ns) must be an integer"),
    "cell_int_in_text": (_cell("graph_nodes", 1, 5), "tracegen.tables.graph_nodes.rows[0] (node_name) must be a"),
    "cell_list": (_cell("graph_edges", 2, [0]), "(src_output) must be an integer"),
    "columns": (_table("variables", "columns", ["name"]), "tracegen.tables.variables does not have the columns"),
    "direction": (_arg("direction", "sideways"), ".args.direction must be one of pull, push, other"),
    "size_text": (_arg("size_bytes", "12"), ".args.size_bytes must be an integer"),
    "dst_null": (_arg("dst_device", None), ".args.dst_device must be a string"),
    "unnamed_pid": (_no_metadata, "has no process_name event naming its device"),
    "edge_kind": (_cell("graph_edges", 4, "sideways"), "tables.graph_edges.rows[0]: 'kind' must be one of data, "),
}


@pytest.mark.parametrize("case", sorted(OWN_CASES))
def test_own_dialect_values_are_checked(tmp_path: pathlib.Path, case: str) -> None:
    edit, why = OWN_CASES[case]
    fails(tmp_path, f"{case}.json", _edited_json(edit, own=True), why)


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path: pathlib.Path, token: bytes) -> None:
    data = re.sub(rb'"dur": [0-9.]+', b'"dur": ' + token, _own_json(), count=1)
    fails(tmp_path, "nan.json", data, f"{token.decode()} is not a JSON number")


def test_a_string_that_is_not_utf8_in_a_protobuf_is_named_with_its_byte(tmp_path: pathlib.Path) -> None:
    """protobuf's parser says only 'string field had bad UTF-8', the one protobuf error that had no position."""
    data = REAL_PB.read_bytes()
    at = data.index(b"/job:worker") + 6
    message = fails(tmp_path, "flip.pb", data[:at] + b"\xff" + data[at + 1:], f"byte {at}: string field ")
    assert "is not UTF-8: b'" in message and "\\xff" in message, message


@pytest.mark.parametrize(("data", "where"), [
    (b'{"a": [1, 2,\n  NaN]}', ":2:3: "),
    (b'{"x": "NaN \\" Infinity", "a": -Infinity}', ":1:31: "),  # not the ones inside a string
    (b"\xef\xbb\xbf{\"a\": Infinity}", ":1:7: "),  # as json.loads counts: after the byte-order mark
    (b'{"a": 0.' + b"9" * 5000 + b', "b": 1' + b"9" * 5000 + b'e-4990, "c": ' + b"9" * 5000 + b"}",
     ":1:10030: "),  # "b" about 2e10: long, in range
], ids=["nan", "in_string", "bom", "long_int"])
def test_refused_json_values_name_their_position(data: bytes, where: str) -> None:
    """NaN, Infinity and an integer too long for Python are refused after json's scanner took them, which tells
    no position; the message gives the line and column anyway, as for every other JSON error."""
    from parsers.jsondoc import load_json

    with pytest.raises(TraceFormatError) as info:
        load_json(data, "doc.json")
    assert str(info.value).startswith(f"doc.json{where}unreadable JSON value: "), str(info.value)[:200]


def test_an_integer_too_long_says_so_without_pythons_advice() -> None:
    """Python's own words ended '; use sys.set_int_max_str_digits() to increase the limit', advice no user of
    the command can take."""
    from parsers.jsondoc import load_json

    digits = sys.get_int_max_str_digits() + 1
    with pytest.raises(TraceFormatError) as info:
        load_json(b'{"version": ' + b"9" * digits + b"}", "doc.json")
    assert str(info.value) == (f"doc.json:1:13: unreadable JSON value: Exceeds the limit ({digits - 1} digits) for "
                               f"integer string conversion: value has {digits} digits")


def test_own_dialect_still_reads_back_equal(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "own.json"
    path.write_bytes(_own_json())
    assert read_trace(path).equals(read_trace(REAL_PB))


# -------------------------------------------------------------- memory: bombs and very many events, under 2 GiB


def test_one_gib_gzip_bombs_stop_at_the_limit(child_runner: Any, harness: Any, tmp_path: pathlib.Path) -> None:
    for head, fill in ((b"", b"\0"), (b'{"traceEvents": [', b" "), (b"step_stats {\n", b" ")):
        path = tmp_path / "bomb.gz"
        path.write_bytes(harness.bomb(head, fill, 1024, valid=False))
        read = child_runner.read_file(path)["read"]
        assert read["outcome"] == "error", read
        assert f"gzip content expands beyond the limit of {MAX_BYTES} bytes" in read["detail"], read
        assert read["maxrss_mib"] < 1024, read


def test_json_with_250k_events_is_refused_within_2_gib(child_runner: Any, tmp_path: pathlib.Path) -> None:
    event = b'{"ph": "X", "pid": 1, "tid": 0, "ts": 1, "dur": 1, "name": "MatMul"}'
    path = tmp_path / "many.json"
    path.write_bytes(b'{"traceEvents": [' + b",".join([event] * 250_000) + b"]}")
    read = child_runner.read_file(path)["read"]
    assert read["outcome"] == "error", read
    assert f"250000 trace events, more than the limit of {MAX_RECORDS}" in read["detail"], read


def test_runmetadata_with_250k_records_is_refused(child_runner: Any, tmp_path: pathlib.Path) -> None:
    def edit(md: Any) -> None:
        md.step_stats.dev_stats[0].node_stats.extend([pb.NodeExecStats()] * 250_000)

    path = tmp_path / "many.pb"
    path.write_bytes(_edited_pb(edit))
    read = child_runner.read_file(path)["read"]
    assert read["outcome"] == "error", read
    assert f"node_stats records, more than the limit of {MAX_RECORDS}" in read["detail"], read


def test_wire_walk_counts_messages_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    import parsers.limits

    body = b"\x0a\x01/" + b"\x12\x00" * 2000
    data = b"\x0a" + bytes([0x80 | (len(body) + 3) & 0x7F, (len(body) + 3) >> 7]) + b"\x0a" + bytes(
        [0x80 | len(body) & 0x7F, len(body) >> 7]) + body
    check_wire_shape(data, pb.RunMetadata.DESCRIPTOR, "x.pb")
    monkeypatch.setattr(parsers.limits, "MAX_VALUES", 1000)
    with pytest.raises(TraceFormatError, match=r"x\.pb: byte \d+: more than 1000 protobuf messages"):
        check_wire_shape(data, pb.RunMetadata.DESCRIPTOR, "x.pb")


# ---------------------------------------------------------- size limits count bytes read: devices, pipes, /proc


@pytest.mark.parametrize(("path", "why"), [("", "an empty path names no trace"),
                                           ("a\0b.pb", "a path cannot hold a NUL character")])
def test_paths_that_name_no_file(path: str, why: str) -> None:
    with pytest.raises(TraceFormatError, match=why):
        read_trace(path)


def test_directory_total_is_bounded(tmp_path: pathlib.Path) -> None:
    for name in ("step_000.pb", "step_001.pb"):
        (tmp_path / name).write_bytes(REAL_PB.read_bytes())
    with pytest.raises(TraceFormatError) as info:
        read_trace(tmp_path, max_bytes=50_000)
    check_message(str(info.value), tmp_path, "hold more than the limit of 50000 bytes together")


# ------------------------------------------------------------------------------------- gzip, member by member


# ------------------------------------------------------------------------------------ bounded, one-line messages


def test_a_megabyte_label_is_quoted_short(tmp_path: pathlib.Path) -> None:
    def edit(md: Any) -> None:
        _recv(md).timeline_label = "x\n" * 500_000

    text = fails(tmp_path, "label.pb", _edited_pb(edit), "RecvTensor label does not read")
    assert "'x\\nx\\n" in text


def test_file_names_with_line_breaks_stay_on_one_line(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "two\nlines\u2028.pb"
    path.write_bytes(b"garbage")
    with pytest.raises(TraceError) as info:
        read_trace(path)
    text = str(info.value)
    assert len(text.splitlines()) == 1 and "two\\nlines\\u2028.pb" in text, text


def test_long_paths_are_shortened_in_the_middle(tmp_path: pathlib.Path) -> None:
    deep = tmp_path / ("d" * 200) / ("e" * 200)
    deep.mkdir(parents=True)
    path = deep / "x.pb"
    path.write_bytes(b"\x0a\xff")
    with pytest.raises(TraceError) as info:
        read_trace(path)
    text = str(info.value)
    assert len(text) <= MAX_MESSAGE_CHARS and text.startswith(str(tmp_path)[:50]) and " ... " in text, text


def test_one_line_and_quoted() -> None:
    assert one_line("a\nb\tc\u2028d\ud800") == "a\\nb\\tc\\u2028d\\ud800"
    long = "start " + "x" * 10_000 + " end"
    short = one_line(long)
    assert len(short) <= MAX_MESSAGE_CHARS and short.startswith("start") and short.endswith(" end")
    assert len(quoted("y" * 10_000)) <= 60
    assert len(quoted([[list(range(10_000))]] * 10_000)) <= 60


def test_one_line_shortens_the_longest_words_so_the_position_and_the_rule_survive() -> None:
    # a whole-message cut kept the path's start and the last third: of a long path and a long value, both the
    # position after the path and the rule before the value could go. Each long word is cut in its middle instead
    path = "/data/" + "p" * 400 + "/m.csv:3:"
    value = "'" + "v" * 500 + "'"
    text = one_line(f"{path} 'steps_per_s' must be a number > 0 (got {value}); write e.g. 2.5")
    assert len(text) <= MAX_MESSAGE_CHARS and text.startswith("/data/ppp") and "/m.csv:3: 'steps_per_s' must" in text
    assert text.endswith("vvv'); write e.g. 2.5") and "(got 'vvv" in text, text
    assert text.count(" ... ") == 2  # the path and the value, each once, to one length
    short = one_line(" ".join(["word"] * 1000))  # no long word: the middle of the whole goes, as before
    assert len(short) <= MAX_MESSAGE_CHARS and short.startswith("word word") and " ... " in short
    assert one_line("x" * 2_000_000).count(" ... ") == 1  # a megabyte quickly, shortened once


# ----------------------------------------------------------------------------- binary protobuf: byte positions


def test_huge_length_names_the_byte(tmp_path: pathlib.Path) -> None:
    data = b"\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x01" + REAL_PB.read_bytes()[:200]
    fails(tmp_path, "len.pb", data, "byte 0: field 1 has length 72057594037927936, more than the 200 bytes left")


def test_group_wire_type_names_the_byte(tmp_path: pathlib.Path) -> None:
    data = REAL_PB.read_bytes()
    fails(tmp_path, "group.pb", b"\x0b" + data, "byte 0: field 1 has wire type 3")


# ------------------------------------------------------------------------------------------- parquet tables


def test_damaged_parquet_table_names_the_file(tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(REAL_PB), tmp_path, "parquet")
    ops = tmp_path / "ops.parquet"
    ops.write_bytes(ops.read_bytes()[:-100])
    with pytest.raises(TraceFormatError) as info:
        read_trace(tmp_path)
    check_message(str(info.value), ops, "not a Parquet file")


# ---------------------------------------------------------------------- tables that refer to steps they lack


@pytest.mark.parametrize(("edit", "why"), [
    (lambda t: t["steps"]["rows"][0].__setitem__(0, 2147483648), "step 0 is not in the steps table"),
    (lambda t: t["steps"]["rows"].append(list(t["steps"]["rows"][0])), "is listed more than once"),
])
def test_our_json_with_ops_of_an_unknown_step_is_refused(tmp_path: pathlib.Path, edit: Any, why: str) -> None:
    """Found by benchmarks/fuzz_parsers.py (inputs 29972, 39717, 74867): the model looked such a step up and
    died of a KeyError."""
    own = tmp_path / "own.json"
    write_trace(read_trace(REAL_PB), own)
    doc = json.loads(own.read_bytes())
    edit(doc["tracegen"]["tables"])
    fails(tmp_path, "edited.json", json.dumps(doc).encode(), why)


def test_a_link_profile_or_single_worker_file_that_is_a_broken_link_is_named_as_one(tmp_path: pathlib.Path) -> None:
    """A link profile, single-worker file (or any file read whole) given as a symbolic link that loops or leads
    nowhere said 'cannot read: Too many levels of symbolic links' / 'No such file or directory'; it is named for
    what it is, as the trace and the output folders are."""
    loop, dangling = tmp_path / "loop.json", tmp_path / "gone.json"
    loop.symlink_to(loop.name)
    dangling.symlink_to("nowhere.json")
    for read, error in ((read_link_profile, ProfileError), (read_single_worker, SingleWorkerError)):
        with pytest.raises(error, match=f"^{re.escape(str(loop))}: cannot read: a symbolic link that loops$"):
            read(loop)
        with pytest.raises(error, match=f"^{re.escape(str(dangling))}: cannot read: a symbolic link to "
                                        "'nowhere.json', which does not exist$"):
            read(dangling)


@pytest.mark.parametrize(("make", "why"), [
    (lambda p: p.symlink_to("/nonexistent/step.pb"), "a symbolic link to '/nonexistent/step.pb', which does not exist"),
    (lambda p: p.symlink_to(p.name), "a symbolic link that loops"),
    (os.mkfifo, "a FIFO (named pipe)"),
    (lambda p: p.mkdir(), "a directory"),
])
@pytest.mark.parametrize("pattern", [False, True])
def test_a_step_file_that_cannot_be_read_is_refused_not_left_out(tmp_path: pathlib.Path, make: Callable[..., Any],
                                                                  why: str, pattern: bool) -> None:
    """A directory of steps (or a pattern's matches) holding a step_003.pb that is a link to nothing, a FIFO or a
    folder was read without it, without a word: the prediction then rested on one step fewer than the user had."""
    for n in range(3):
        (tmp_path / f"step_00{n}.pb").write_bytes((TRACES / "mlp" / f"step_00{n}.pb").read_bytes())
    make(tmp_path / "step_003.pb")
    with pytest.raises(TraceFormatError) as info:
        read_trace(tmp_path / "*.pb" if pattern else tmp_path)
    check_message(str(info.value), tmp_path / "step_003.pb", f"{why}: named as one of the trace's files")


def test_a_hosts_profile_that_cannot_be_read_is_refused_not_left_out(tmp_path: pathlib.Path) -> None:
    """A TF2 profile run whose PS host's .xplane.pb was a link to nothing was read as the other hosts' alone."""
    run = tmp_path / "plugins" / "profile" / "2026_12_01_12_50_54"
    run.mkdir(parents=True)
    for host in sorted((TRACES / "tf2_pss" / "plugins" / "profile").glob("*/*.xplane.pb"))[1:]:
        (run / host.name).write_bytes(host.read_bytes())
    (run / "127.0.0.1_1.xplane.pb").symlink_to("/nonexistent/host.xplane.pb")
    with pytest.raises(TraceFormatError) as info:
        read_trace(tmp_path)
    check_message(str(info.value), run / "127.0.0.1_1.xplane.pb", "which does not exist: named as one of the trace's")


def test_an_empty_path_given_as_a_file_to_read_is_named_as_one(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: pathlib.Path) -> None:
    """'--link-profile ""' (an unset shell variable) said '.: a directory, not a regular file: refused': pathlib
    takes '' for the current directory. It is refused as an empty path, as a trace's is."""
    monkeypatch.chdir(tmp_path)
    for read, error in ((read_link_profile, ProfileError), (read_single_worker, SingleWorkerError),
                        (read_catalogue, CatalogueError), (read_worker_classes, WorkerClassError)):
        with pytest.raises(error, match=r"^'': an empty path names no file$"):
            read("")


# ------------------------------------------------------------- a link profile or single-worker file, gzipped
DEV_TRACE = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"


@pytest.mark.parametrize(("reader", "name", "error"), [(read_link_profile, "link-profile.json", ProfileError),
                                                       (read_single_worker, "single-worker.json", SingleWorkerError)])
def test_a_gzipped_side_file_reads_and_a_plain_one_named_gz_says_it_is_not_gzip(
        tmp_path: pathlib.Path, reader: Callable[[pathlib.Path], Any], name: str, error: type[TraceError]) -> None:
    """'--link-profile p.json.gz' was refused as 'byte 1: JSON is not valid UTF-8', and a plain one named .gz as
    'invalid JSON' or read: neither said gzip, where a trace beside them is read gzipped."""
    plain = DEV_TRACE / name
    zipped = tmp_path / f"{name}.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert dataclasses.replace(reader(zipped), source=str(plain)) == reader(plain)  # read from its own path
    zipped.write_bytes(plain.read_bytes())
    with pytest.raises(error) as info:
        reader(zipped)
    check_message(str(info.value), zipped, "named .gz but is not gzip (gzip begins with bytes 1f 8b; this begins with")
