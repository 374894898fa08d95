"""Chrome trace JSON: TensorFlow's timeline read against its own RunMetadata, our output read back equal, and
our output clean by Perfetto's rules."""

from __future__ import annotations

import gzip
import itertools
import json
import pathlib
import tempfile
from collections import defaultdict
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parsers import TraceContentError, TraceFormatError, read_trace
from parsers.chrome import ChromeWriter, assign_lanes, format_us, json_members, json_text, write_trace
from parsers.perfetto import check_perfetto


def test_tf_timeline_has_the_same_records_as_its_runmetadata(model_dir: pathlib.Path) -> None:
    for step in range(3):
        chrome = read_trace(model_dir / f"step_{step:03d}.json")
        proto = read_trace(model_dir / f"step_{step:03d}.pb")
        assert chrome.source_format == "tf-timeline-json"
        assert len(chrome.ops) == len(proto.ops)
        assert len(chrome.transfers) == len(proto.transfers)
        # The timeline keeps microseconds: our ns values are TF's µs times 1000.
        assert sorted(chrome.transfers["start_ns"]) == sorted(proto.transfers["start_ns"])
        assert set(chrome.ops["node_name"]) == set(proto.ops["node_name"])
        # Op types: from the RunMetadata's labels, from the timeline's args; they must agree, none missing.
        assert proto.ops["op_type"].notna().all()
        assert dict(zip(chrome.ops["node_name"], chrome.ops["op_type"], strict=True)) == dict(
            zip(proto.ops["node_name"], proto.ops["op_type"], strict=True))
        assert chrome.transfers["tensor_name"].isna().all() and chrome.transfers["size_bytes"].isna().all()
        assert sorted(chrome.transfers["direction"]) == sorted(proto.transfers["direction"])
        assert any("sizes" in lost for lost in chrome.lost)


def test_a_timeline_event_repeated_exactly_is_read_once(tmp_path: pathlib.Path) -> None:
    """TensorFlow's timeline of a step whose stats hold a record twice holds its event twice: an op and a
    RecvTensor so were read as two, one op and one transfer a step too many."""
    mlp = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp"
    doc = json.loads((mlp / "step_001.json").read_text())
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    recv = next(e for e in ops if e["name"] == "RecvTensor")
    op = next(e for e in ops if e["name"] != "RecvTensor")
    doc["traceEvents"] += [dict(op), dict(recv)]
    (tmp_path / "step_001.json").write_text(json.dumps(doc))
    once, twice = read_trace(mlp / "step_001.json"), read_trace(tmp_path / "step_001.json")
    assert twice.ops.equals(once.ops) and twice.transfers.equals(once.transfers)
    assert twice.skipped == {**once.skipped, "records TensorFlow wrote twice, exactly the same (node, device, times, "
                                             "thread): read once": 2}


def test_a_timeline_event_at_ts_0_among_epoch_times_is_refused_naming_it(tmp_path: pathlib.Path) -> None:
    """One event of a TF timeline at ts 0 among epoch microseconds made a step of 56.9 years, which inspect printed
    as the step time (1796064589477.215 ms)."""
    mlp = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp"
    doc = json.loads((mlp / "step_000.json").read_text())
    i, event = next((i, e) for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X"
                    and e["name"] != "RecvTensor")
    event["ts"] = 0
    path = tmp_path / "step_000.json"
    path.write_text(json.dumps(doc))
    whole = read_trace(mlp / "step_000.json")
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    assert str(info.value) == (
        f"{path}: traceEvents[{i}]: op {event['args']['name']!r} ends 56.9 years before the step's other "
        f"{len(whole.ops) + len(whole.transfers) - 1} records start (step 0 lasts 56.9 years, more than the day no "
        "training step takes): a time in the trace is wrong")


def test_a_step_of_records_each_under_a_day_lasting_more_is_refused_naming_the_step(tmp_path: pathlib.Path) -> None:
    """Two ops of 0.93 days each, the second starting before the first ends, make a step of 1.7 days without a gap
    that one record stands apart by: the step is named (the search for the record on the short side of the longest
    gap found none)."""
    mlp = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "mlp"
    doc = json.loads((mlp / "step_000.json").read_text())
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    start = min(e["ts"] for e in events)
    first, second = [e for e in events if e["name"] != "RecvTensor"][:2]
    first["ts"], first["dur"] = start, 80_000 * 10**6
    second["ts"], second["dur"] = start + 70_000 * 10**6, 80_000 * 10**6
    path = tmp_path / "step_000.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    assert str(info.value) == (f"{path}: step 0 lasts 1.7 days, more than the day no training step takes: a time in "
                               "the trace is wrong")


def test_own_chrome_with_a_record_repeated_is_refused_naming_both(step_pb: pathlib.Path,
                                                                  tmp_path: pathlib.Path) -> None:
    """tracegen writes each record once, and its tables' reader refuses a repeated row (a file joined to itself);
    its Chrome JSON with an op event or a variable's row repeated read silently, and its tables then did not."""
    path = tmp_path / "own.json"
    write_trace(read_trace(step_pb), path)
    doc = json.loads(path.read_text())
    i = next(i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "op")
    doc["traceEvents"].append(dict(doc["traceEvents"][i]))
    (tmp_path / "ops.json").write_text(json.dumps(doc))
    with pytest.raises(TraceContentError) as info:
        read_trace(tmp_path / "ops.json")
    assert str(info.value) == (f"{tmp_path / 'ops.json'}: traceEvents[{len(doc['traceEvents']) - 1}]: repeats "
                               f"traceEvents[{i}] exactly (tracegen writes each record once: was the file edited?)")
    doc = json.loads(path.read_text())
    rows = doc["tracegen"]["tables"]["variables"]["rows"]
    rows.append(list(rows[0]))
    (tmp_path / "variables.json").write_text(json.dumps(doc))
    with pytest.raises(TraceFormatError, match=rf"tracegen\.tables\.variables\.rows\[{len(rows) - 1}\]: repeats "
                                               r"rows\[0\] exactly"):
        read_trace(tmp_path / "variables.json")


def test_tf_timeline_op_inputs_become_graph_edges(model_dir: pathlib.Path) -> None:
    chrome = read_trace(model_dir / "step_000.json")
    proto = read_trace(model_dir / "step_000.pb")
    ran = set(chrome.ops["node_name"])
    graph_edges = {(s, d, k) for s, d, k in zip(proto.graph_edges["src_node"], proto.graph_edges["dst_node"],
                                                proto.graph_edges["kind"], strict=True) if d in ran}
    chrome_edges = set(zip(chrome.graph_edges["src_node"], chrome.graph_edges["dst_node"],
                           chrome.graph_edges["kind"], strict=True))
    # Every data input survives; the timeline drops some control inputs (Trace.lost says so).
    assert chrome_edges <= graph_edges
    assert {e for e in chrome_edges if e[2] == "data"} == {e for e in graph_edges if e[2] == "data"}
    assert any("control" in lost for lost in chrome.lost)


def test_gzipped_timeline_reads_the_same(model_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    plain = model_dir / "step_001.json"
    zipped = tmp_path / "step_001.json.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_trace(zipped).equals(read_trace(plain))


def test_own_chrome_output_reads_back_equal_and_is_perfetto_clean(model_dir: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    for source in (model_dir, model_dir / "step_002.json"):
        trace = read_trace(source)
        out = tmp_path / "out.json"
        write_trace(trace, out)
        again = read_trace(out)
        assert again.equals(trace)
        assert again.lost == trace.lost and again.source_format == trace.source_format
        assert check_perfetto(json.loads(out.read_text())["traceEvents"]) == []


def test_own_chrome_output_carries_names_and_bytes(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = read_trace(step_pb)
    write_trace(trace, tmp_path / "t.json")
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    transfers = [e for e in events if e.get("cat") == "transfer"]
    assert len(transfers) == len(trace.transfers)
    assert {e["args"]["tensor_name"] for e in transfers} == set(trace.transfers["tensor_name"])
    assert sum(e["args"]["size_bytes"] for e in transfers) == trace.transfers["size_bytes"].sum()


@given(st.lists(st.integers(min_value=-10**15, max_value=10**15)))
def test_format_us_is_exact(values: list[int]) -> None:
    for ns in values:
        assert int(Decimal(format_us(ns)) * 1000) == ns


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(1, 100)), max_size=60))
def test_assign_lanes_never_overlaps_and_uses_the_fewest_lanes(spans: list[tuple[int, int]]) -> None:
    starts = [s for s, _ in spans]
    ends = [s + d for s, d in spans]
    lanes = assign_lanes(starts, ends)
    by_lane: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for lane, s, e in zip(lanes, starts, ends, strict=True):
        by_lane[lane].append((s, e))
    for items in by_lane.values():
        items.sort()
        assert all(b[0] >= a[1] for a, b in itertools.pairwise(items))
    # The fewest lanes possible is the largest number of intervals in flight at one instant.
    depth = max((sum(1 for s, e in zip(starts, ends, strict=True) if s <= p < e) for p in starts), default=0)
    assert len(set(lanes)) == depth


def test_own_chrome_output_names_transfer_tracks_by_direction(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """Transfer tracks read ``pulls L`` and ``pushes L`` (once ``pushs L``)."""
    trace = read_trace(step_pb)
    write_trace(trace, tmp_path / "t.json")
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    plural = {"pull": "pulls", "push": "pushes", "other": "others"}
    transfers = [e for e in events if e.get("cat") == "transfer"]
    assert {e["args"]["direction"] for e in transfers} >= {"pull", "push"}
    for e in transfers:
        assert names[(e["pid"], e["tid"])].split(" ")[0] == plural[e["args"]["direction"]]


def _python_calls_to_write(tmp_path: pathlib.Path, n_tracks: int) -> int:
    """How many Python-level calls (generators resumed included) the writer makes to write one slice on each of
    ``n_tracks`` tracks: a count of work, the same on every machine, where a timing is not."""
    import sys

    from parsers.chrome import ChromeWriter

    calls = 0

    def count(_frame: object, event: str, _arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    before = sys.getprofile()
    with ChromeWriter(tmp_path / f"t{n_tracks}.json") as writer:
        sys.setprofile(count)
        try:
            for i in range(n_tracks):
                writer.slice(process=f"p{i % 2}", track=f"t{i}", name="x", start_ns=i, dur_ns=1)
        finally:
            sys.setprofile(before)
    return calls


def test_a_writer_with_many_tracks_numbers_them_in_linear_time(tmp_path: pathlib.Path) -> None:
    """Each new track counted the tracks before it: predict --emit-traces 5000 (a track per worker and link)
    wrote its trace for three minutes, after an estimate of a second (a hardening pass); 20,000 tracks took 5 s,
    60,000 would take 50. The work is counted, not timed (a time limit passes a quadratic count on a fast machine
    and fails a linear one on a loaded one): twice the tracks, twice the calls, where the count of the tracks so
    far made it four times. Tracks are still numbered 1, 2, ... in each process, in order of first use."""
    small, large = (_python_calls_to_write(tmp_path, n) for n in (2_000, 4_000))
    assert large <= 2.05 * small, (small, large)
    events = json.loads((tmp_path / "t4000.json").read_text())["traceEvents"]
    tids = [(e["pid"], e["tid"]) for e in events if e["ph"] == "X"]
    assert tids[:4] == [(1, 1), (2, 1), (1, 2), (2, 2)] and tids[-1] == (2, 2_000)


def test_own_chrome_output_named_gz_is_gzip_and_reads_back_equal(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """'convert TRACE out.json.gz --to chrome' wrote plain JSON under a gzip name, which gunzip and every tool that
    goes by the name refuse (a hardening pass); it is gzip, the same bytes each time, and reads back equal."""
    trace = read_trace(step_pb)
    out = tmp_path / "out.json.gz"
    write_trace(trace, out)
    first = out.read_bytes()
    write_trace(trace, out)
    assert first[:2] == b"\x1f\x8b" and out.read_bytes() == first
    write_trace(trace, tmp_path / "out.json")
    assert gzip.decompress(first) == (tmp_path / "out.json").read_bytes()
    assert read_trace(out).equals(trace)


# text that JSON must escape: quotes, backslashes, controls, non-ASCII, a lone surrogate (json.dumps writes \ud800)
ODD_TEXT = st.text(st.one_of(st.characters(), st.sampled_from(['"', "\\", "\x00", "\t", "\u2028", "é", "✓", "\ud800"])),
                   max_size=10)
ARGS = st.dictionaries(ODD_TEXT, st.one_of(st.integers(-(2**70), 2**70), ODD_TEXT, st.none(), st.booleans()),
                       max_size=4)


def _events(path: pathlib.Path) -> list[str]:
    """The event lines of a file :class:`ChromeWriter` wrote (one per line, between a first and a last line)."""
    lines = path.read_text().split("\n")
    return [line.removesuffix(",") for line in lines[1:-2]]


@given(process=ODD_TEXT, track=ODD_TEXT, name=ODD_TEXT, cat=ODD_TEXT, args=ARGS,
       start_ns=st.integers(-(10**15), 10**15), dur_ns=st.integers(-(10**6), 10**15), flow_id=st.integers(0, 2**62))
def test_every_event_is_spelled_as_json_dumps_spells_it(process: str, track: str, name: str, cat: str,
                                                        args: dict[str, object], start_ns: int, dur_ns: int,
                                                        flow_id: int) -> None:
    """Events are written from pre-encoded fragments, not one json.dumps each (a synthetic trace's time went there);
    the bytes must stay what json.dumps of the event wrote: its escapes, separators, key order and integers."""
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "t.json"
        with ChromeWriter(path) as out:
            out.slice(process=process, track=track, name=name, start_ns=start_ns, dur_ns=dur_ns, cat=cat, args=args)
            out.flow(flow_id=flow_id, name=name, src=(process, track, start_ns), dst=(process, track + "'", dur_ns))
        got = _events(path)
    ids = {"pid": 1, "tid": 1}
    expected = [json.dumps({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": process}}),
                json.dumps({"ph": "M", "name": "process_sort_index", "pid": 1, "tid": 0, "args": {"sort_index": 1}}),
                json.dumps({"ph": "M", "name": "thread_name", **ids, "args": {"name": track}}),
                json.dumps({"ph": "M", "name": "thread_sort_index", **ids, "args": {"sort_index": 1}}),
                f'{{"ts": {format_us(start_ns)}, "dur": {format_us(dur_ns)}, '
                + json.dumps({"ph": "X", "cat": cat, "name": name, **ids, "args": args})[1:],
                # a flow numbers both its tracks before writing either end
                json.dumps({"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": track + "'"}}),
                json.dumps({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 2}}),
                f'{{"ts": {format_us(start_ns)}, '
                + json.dumps({"ph": "s", "cat": "flow", "name": name, "id": flow_id, **ids})[1:],
                f'{{"ts": {format_us(dur_ns)}, '
                + json.dumps({"ph": "f", "cat": "flow", "name": name, "id": flow_id, "pid": 1, "tid": 2,
                              "bp": "e"})[1:]]
    assert got == expected


def test_pre_encoded_events_are_the_same_bytes_as_plain_ones(tmp_path: pathlib.Path) -> None:
    """The route a synthetic trace takes (names and args encoded once, args in parts) writes what slice() and flow()
    write; more events than the writer holds before a write, so the joins between held batches are covered."""
    names = ["a", 'q"uote', "back\\slash", "é✓", "\u2028", ""]
    plain, encoded = tmp_path / "plain.json", tmp_path / "encoded.json"
    with ChromeWriter(plain, extra={"x": 1}) as out:
        for i in range(10_000):
            name, track = names[i % len(names)], f"t{i % 7}"
            args = {"node_name": name, "step": i, "lane": i % 3} if i % 5 else {}
            out.slice(process=f"p{i % 3}", track=track, name=name, start_ns=i * 1001, dur_ns=i % 1000, args=args)
            if i % 4 == 0:
                out.flow(flow_id=i, name=name, src=(f"p{i % 3}", track, i), dst=("p0", "t0", i + 1))
    with ChromeWriter(encoded, extra={"x": 1}) as out:
        for i in range(10_000):
            name, track = names[i % len(names)], f"t{i % 7}"
            parts = (json_members({"node_name": name}), json_members({"step": i, "lane": i % 3})) if i % 5 else ()
            ids = out.track_ids(f"p{i % 3}", track)
            out.encoded_slice(ids, json_text(name), i * 1001, i % 1000, json_text("op"), parts)
            if i % 4 == 0:
                out.encoded_flow(i, json_text(name), (ids, i), (out.track_ids("p0", "t0"), i + 1))
    assert encoded.read_bytes() == plain.read_bytes()
    assert len(_events(plain)) > 10_000



@pytest.mark.parametrize(("bad", "shown"), [(None, "None"), (1, "1"), (["X"], "['X']")])
def test_an_event_whose_phase_is_not_text_is_refused_naming_it(model_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                                bad: object, shown: str) -> None:
    """An op whose 'ph' was null (or 1, or a list) was dropped without a word: inspect said 5 pulls a step where
    the trace held 6."""
    doc = json.loads((model_dir / "step_000.json").read_text())
    i = next(k for k, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X")
    doc["traceEvents"][i]["ph"] = bad
    path = tmp_path / "step_000.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    assert str(info.value) == (f"{path}: traceEvents[{i}].ph must be a string naming the event's phase, 'X' for "
                               f"an op (got {shown})")


def test_events_without_a_phase_or_of_other_phases_are_counted_as_skipped(model_dir: pathlib.Path,
                                                                          tmp_path: pathlib.Path) -> None:
    """An event with no 'ph' (the empty {} TensorBoard's files end with), or of a phase the timeline does not
    write ('B', 'i'), was dropped without a word; it is skipped and counted, as other events not read are."""
    doc = json.loads((model_dir / "step_000.json").read_text())
    xs = [k for k, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X"]
    whole = read_trace(model_dir / "step_000.json")
    assert whole.skipped == {}
    doc["traceEvents"][xs[0]]["ph"] = "B"
    doc["traceEvents"][xs[1]]["ph"] = "i"
    del doc["traceEvents"][xs[2]]["ph"]
    doc["traceEvents"].append({})
    path = tmp_path / "step_000.json"
    path.write_text(json.dumps(doc))
    trace = read_trace(path)
    assert len(trace.ops) + len(trace.transfers) == len(whole.ops) + len(whole.transfers) - 3
    assert trace.skipped == {"events without a phase ('ph')": 2,
                             "events of phases other than complete ('X'), metadata ('M') and flows ('s', 't', 'f')":
                             2}


def _own_lines(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> tuple[list[str], dict[str, object]]:
    """Our Chrome dialect of ``step_pb``, one event per line (edited as text below: a JSON round trip through
    floats would move every ``ts`` by up to a quarter of a microsecond), and the document it parses to."""
    path = tmp_path / "own.json"
    write_trace(read_trace(step_pb), path)
    return path.read_text().splitlines(), json.loads(path.read_text())


def _refused(tmp_path: pathlib.Path, lines: list[str]) -> str:
    path = tmp_path / "edited.json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    return str(info.value).removeprefix(f"{path}: ")


def test_own_chrome_with_a_direction_its_devices_contradict_is_refused(step_pb: pathlib.Path,
                                                                      tmp_path: pathlib.Path) -> None:
    """A pull event whose args say push: its tables read back refused it, the Chrome dialect took the word."""
    lines, doc = _own_lines(step_pb, tmp_path)
    events = doc["traceEvents"]
    assert isinstance(events, list)
    i = next(i for i, e in enumerate(events) if e.get("cat") == "transfer" and e["args"]["direction"] == "pull")
    assert lines[i + 1].count('"direction": "pull"') == 1  # line 0 opens the document; event i is line i + 1
    lines[i + 1] = lines[i + 1].replace('"direction": "pull"', '"direction": "push"')
    src, dst = events[i]["args"]["src_device"], events[i]["args"]["dst_device"]
    assert _refused(tmp_path, lines) == (f"traceEvents[{i}]: 'direction' must be pull for a tensor sent from "
                                         f"{src!r} to {dst!r} (got 'push')")


def test_own_chrome_with_a_record_outside_its_step_is_refused(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """The steps table says how long a step is; a step that starts after its first op would be replayed short."""
    lines, doc = _own_lines(step_pb, tmp_path)
    events = doc["traceEvents"]
    assert isinstance(events, list)
    first = min((i for i, e in enumerate(events) if e.get("cat") in ("op", "transfer") and e["args"]["step"] == 0),
                key=lambda i: Decimal(lines[i + 1].split('"ts": ', 1)[1].split(",", 1)[0]))
    steps = next(n for n, line in enumerate(lines) if '"steps": {"columns"' in line)
    row = lines[steps].split('"rows": [[0, ', 1)[1]
    start = int(row.split(", ")[1])
    lines[steps] = lines[steps].replace(f", {start}, ", f", {start + 1000}, ", 1)
    assert _refused(tmp_path, lines).startswith(f"traceEvents[{first}]: runs from {start} to ")
    assert f"outside its step 0, from {start + 1000} to " in _refused(tmp_path, lines)


def test_own_chrome_table_row_that_contradicts_itself_is_refused(step_pb: pathlib.Path,
                                                                 tmp_path: pathlib.Path) -> None:
    """A variable of the right shape with a wrong element count, in the tables the Chrome dialect carries."""
    lines, _ = _own_lines(step_pb, tmp_path)
    text = "\n".join(lines)
    table = text.index('"variables": {"columns"')
    begin = text.index('"rows": [[', table) + len('"rows": [[')
    end = text.index("]", begin)
    cells = text[begin:end].split(", ")
    cells[4] = str(int(cells[4]) + 1)  # n_elements
    text = text[:begin] + ", ".join(cells) + text[end:]
    assert "tracegen.tables.variables.rows[0]: 'n_elements' must be" in _refused(tmp_path, text.splitlines())
