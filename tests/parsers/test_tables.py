"""CSV and Parquet tables: documented columns, and a round trip back to an equal Trace."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable

import pandas as pd
import pytest

from parsers import SCHEMAS, TraceError, TraceFormatError, read_trace
from parsers.tables import read_tables, write_tables

from parsers_support import refused_without_key

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_tables_round_trip(model_dir: pathlib.Path, tmp_path: pathlib.Path, fmt: str) -> None:
    trace = read_trace(model_dir)
    write_tables(trace, tmp_path, fmt)  # type: ignore[arg-type]
    again = read_trace(tmp_path)
    assert again.equals(trace)
    assert again.skipped == trace.skipped


def test_csv_columns_are_the_documented_schema(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(step_pb), tmp_path, "csv")
    for name, schema in SCHEMAS.items():
        assert list(pd.read_csv(tmp_path / f"{name}.csv", nrows=0).columns) == list(schema)


def test_broken_manifest_is_a_format_error(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(step_pb), tmp_path, "csv")
    (tmp_path / "trace.json").write_text('{"table_format": "xlsx"}')
    with pytest.raises(TraceFormatError) as info:  # the manifest named, and the value it holds
        read_tables(tmp_path)
    assert str(info.value) == f"{tmp_path / 'trace.json'}: 'table_format' must be csv or parquet (got 'xlsx')"


@pytest.mark.parametrize(("cell", "message"), [
    ("nan", "line 3: 'start_ns' must be a whole number (got 'nan')"),
    ("1883.5", "line 3: 'start_ns' must be a whole number (got '1883.5')"),
    ("1e23", "line 3: 'start_ns' must be a whole number within int64 (got '1e23')"),  # read exactly, not as a float
    ("1e30", "line 3: 'start_ns' must be a whole number within int64 (got '1e30')"),  # was decimal's traceback
    ("", "line 3: 'start_ns' must be a whole number (got '')"),
    ("+1883", "line 3: 'start_ns' must be a whole number (got '+1883')"),  # one rule for every CSV's numbers
    ("\uff11\uff18\uff18\uff13", "line 3: 'start_ns' must be a whole number, written with the digits 0-9"),
])
def test_a_bad_cell_in_a_csv_table_names_its_line(step_pb: pathlib.Path, tmp_path: pathlib.Path, cell: str,
                                                  message: str) -> None:
    """pandas' own words named no row ('cannot safely convert passed user dtype of int64 for float64 dtyped data
    in column 5', 'invalid literal for int()', 'Overflow'; a hardening pass)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    ops = tmp_path / "ops.csv"
    lines = ops.read_text().splitlines()
    cells = lines[2].split(",")
    cells[4] = cell
    lines[2] = ",".join(cells)
    ops.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError, match=re.escape(f"{ops}: {message}")):
        read_tables(tmp_path)
    ops.write_bytes(ops.read_bytes().replace(b"NoOp", b"No\xe9Op", 1))
    with pytest.raises(TraceFormatError, match=r"ops\.csv: line \d+: not UTF-8 text: b'\\xe9' at byte \d+"):
        read_tables(tmp_path)


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_not_utf8_in_a_csv_table_names_its_line_and_the_byte_of_the_file(step_pb: pathlib.Path,
                                                                          tmp_path: pathlib.Path, bom: bytes) -> None:
    """It said 'byte N' in the codec's count, which starts after a byte-order mark (a spreadsheet's 'CSV UTF-8'): 3
    short of the byte in the file, and no line of the thousands a table holds."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    ops = tmp_path / "ops.csv"
    data = bom + ops.read_bytes().replace(b"NoOp", b"No\xe9Op", 1)
    ops.write_bytes(data)
    bad = data.index(b"\xe9")
    line = data[:bad].count(b"\n") + 1
    with pytest.raises(TraceFormatError) as info:
        read_tables(tmp_path)
    assert str(info.value) == f"{ops}: line {line}: not UTF-8 text: b'\\xe9' at byte {bad}; save it as UTF-8"


def test_a_step_that_ends_before_it_starts_is_refused(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """It was read, and inspect printed a step of -88.9 ms (a hardening pass)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    steps = tmp_path / "steps.csv"
    header, row, *rest = steps.read_text().splitlines()
    step, source, start, end = row.split(",")
    steps.write_text("\n".join([header, f"{step},{source},{end},{start}", *rest]) + "\n")
    with pytest.raises(TraceError, match=r"steps\.csv: line 2: ends before it starts"):  # the row on line 2
        read_tables(tmp_path)


def test_a_table_directory_is_named_as_read_then_as_first_captured(step_pb: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """An error about a converted trace named only where it was first captured, not the directory the user gave
    (a hardening pass)."""
    trace = read_trace(step_pb)
    write_tables(trace, tmp_path, "csv")
    assert read_tables(tmp_path).source == f"{tmp_path} (from {trace.source})"


def test_tables_beside_trace_files_are_refused_not_read_over_them(step_pb: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """A directory holding a converted table set and step files was read as the tables, the steps passed over
    without a word (editing or adding a step there changed nothing)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    assert len(read_trace(tmp_path).ops) == len(read_trace(step_pb).ops)  # tables alone: read
    (tmp_path / "step_000.pb").write_bytes(step_pb.read_bytes())
    with pytest.raises(TraceFormatError, match=rf"{re.escape(str(tmp_path))}: holds converted tables \(trace\.json\) "
                                               r"and trace files too \(e\.g\. step_000\.pb\)"):
        read_trace(tmp_path)


@pytest.mark.parametrize("table", ["ops", "transfers", "variables"])
@pytest.mark.parametrize("cut_bytes", [1, 2, 30])
def test_a_csv_table_cut_short_is_refused_naming_its_last_line(step_pb: pathlib.Path, tmp_path: pathlib.Path,
                                                               table: str, cut_bytes: int) -> None:
    """A table cut inside its last row read silently: ``dur_ns`` 1760000 became 176000, a variable's 40 bytes 4
    (a hardening pass). Every row tracegen writes ends with a line break, so a last row without one is cut."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    path = tmp_path / f"{table}.csv"
    data = path.read_bytes()
    path.write_bytes(data[:-cut_bytes])
    last_line = data[:-cut_bytes].count(b"\n") + 1
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}: line {last_line}: ends without a line break")):
        read_tables(tmp_path)


def test_corrupt_parquet_column_data_names_the_table_file(tmp_path: pathlib.Path) -> None:
    """A Parquet file whose footer reads but whose compressed column data is corrupt: pyarrow raises OSError
    for it ('Corrupt snappy compressed data'), which was not caught per table, so the one line named the
    directory ('DIR: cannot read: ...'), not the file, nor which table."""
    import pyarrow.parquet as pq  # a dependency of the package: missing, the test fails rather than skips
    write_tables(read_trace(TRACES / "mlp" / "step_000.pb"), tmp_path, "parquet")
    path = tmp_path / "transfers.parquet"
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    data = bytearray(path.read_bytes())
    end = column.data_page_offset + column.total_compressed_size
    for i in range(end - column.total_compressed_size // 2, end):  # the page's compressed bytes, not its header
        data[i] ^= 0x55
    path.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match=rf"^{re.escape(str(path))}: cannot read table 'transfers': "):
        read_trace(tmp_path)


def _edit_cell(path: pathlib.Path, line: int, column: str, value: str) -> None:
    """Set ``column`` of the row on ``line`` (the header is line 1) of CSV table ``path``."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[line - 2, column] = value
    frame.to_csv(path, index=False, lineterminator="\n")


@pytest.mark.parametrize(("table", "line", "column", "value", "why"), [
    ("ops", 6, "dur_ns", "-5", "'dur_ns' must be from 0 to"),
    ("transfers", 3, "direction", "sideways", "'direction' must be one of pull, push, other (got 'sideways')"),
    ("ops", 8, "step", "99", "step 99 is not in the steps table (which has 1 step)"),
    ("steps", 2, "end_ns", "1", "ends before it starts"),
])
def test_a_bad_csv_row_is_named_by_its_file_and_line(step_pb: pathlib.Path, tmp_path: pathlib.Path, table: str,
                                                     line: int, column: str, value: str, why: str) -> None:
    """The line a text editor shows, in the table's own file: these said 'table 'ops' row 4' (the row counted
    from 0 after the header, two less than its line), and a row whose step is not listed named the directory, not
    the file (a hardening pass)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    _edit_cell(tmp_path / f"{table}.csv", line, column, value)
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / table}.csv: line {line}: {why}"), caught.value


def test_a_step_listed_twice_is_named_by_its_line(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = read_trace(step_pb)
    write_tables(trace, tmp_path, "csv")
    steps = tmp_path / "steps.csv"
    header, row = steps.read_text().splitlines()
    steps.write_text(f"{header}\n{row}\n{row}\n")
    with pytest.raises(TraceError, match=re.escape(f"{steps}: line 3: step 0 is listed more than once")):
        read_tables(tmp_path)


def test_a_bad_parquet_row_is_named_by_its_row(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A Parquet file has no lines: its rows are counted from 0, as pandas and DuckDB show them."""
    write_tables(read_trace(step_pb), tmp_path, "parquet")
    ops = pd.read_parquet(tmp_path / "ops.parquet")
    ops.loc[4, "dur_ns"] = -5
    ops.to_parquet(tmp_path / "ops.parquet")
    with pytest.raises(TraceError, match=re.escape(f"{tmp_path / 'ops.parquet'}: table 'ops' row 4: 'dur_ns' must")):
        read_tables(tmp_path)


@pytest.mark.parametrize(("column", "value", "why"), [
    ("dur_ns", "x", "'dur_ns' must be a whole number (got 'x')"),  # read as a whole number
    ("dur_ns", "-5", "'dur_ns' must be from 0 to"),  # checked against the schema once read
])
def test_a_bad_csv_row_below_blank_lines_and_a_cell_of_two_lines_is_named_by_its_line(
        step_pb: pathlib.Path, tmp_path: pathlib.Path, column: str, value: str, why: str) -> None:
    """Rows were counted as 'row + 2': a table edited by hand with a blank line in it, or a name holding a line
    break (quoted, over two lines), had its bad row named by a line above it, as a text editor numbers them."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    ops = tmp_path / "ops.csv"
    frame = pd.read_csv(ops, dtype=str, keep_default_na=False)
    frame.loc[1, "node_name"] = "two\nlines"
    frame.loc[4, column] = value
    lines = frame.to_csv(index=False, lineterminator="\n").splitlines(keepends=True)
    lines.insert(4, "\n")  # after the row of two lines (lines 3 and 4): a blank line 5
    lines.insert(5, "   \n")  # and one of spaces, line 6
    ops.write_text("".join(lines))
    # header 1, rows on 2 and 3-4, blanks 5 and 6, rows on 7, 8 and 9: the fifth row is on line 9
    assert next(i for i, text in enumerate(lines, start=1) if f",{value}," in text) == 9
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    assert str(caught.value).startswith(f"{ops}: line 9: {why}"), caught.value


@pytest.mark.parametrize(("column", "values", "said"), [
    # a traceback in inspect: 'NAType' object has no attribute 'split'
    ("device", lambda d: d.where(d.index != 3, None), r"table 'ops' row 3: 'device' must not be empty \(got null\)"),
    # 'table 'ops': a column does not fit its type: Cannot convert non-finite values (NA or inf) to integer', no row
    ("start_ns", lambda d: d.astype(float).where(d.index != 3, float("nan")),
     r"table 'ops' row 3: 'start_ns' must not be empty \(got null\)"),
    # read as the nearest float, 1796064589452111360 for ...355: times moved by up to 128 ns without a word
    ("start_ns", lambda d: d.astype(float), r"table 'ops' row 0: 'start_ns' is 1\.\d+e\+18 as a float, which "
                                            r"holds whole numbers exactly only up to 2\*\*53: write the column as "
                                            "integers"),
])
def test_a_parquet_table_written_back_with_nulls_or_floats_is_refused_naming_its_row(
        step_pb: pathlib.Path, tmp_path: pathlib.Path, column: str, values: Callable[[pd.Series], pd.Series],
        said: str) -> None:
    """A table read with pandas, changed and written back: a null where the schema has none, or an integer column
    turned float (as pandas does to one that held a null)."""
    write_tables(read_trace(step_pb), tmp_path, "parquet")
    ops = tmp_path / "ops.parquet"
    frame = pd.read_parquet(ops)
    frame[column] = values(frame[column].astype(object) if column == "device" else frame[column])
    frame.to_parquet(ops, index=False)
    with pytest.raises(TraceError, match=f"^{re.escape(str(ops))}: {said}$"):
        read_tables(tmp_path)


@pytest.mark.parametrize("table", ["ops", "transfers", "graph_nodes", "rendezvous", "variables"])
def test_a_csv_table_holding_a_row_twice_is_refused_naming_both_lines(step_pb: pathlib.Path,
                                                                      tmp_path: pathlib.Path, table: str) -> None:
    """A table joined to itself (``cat ops.csv ops.csv`` less the second header) was read: inspect showed 96 ops a
    step where the trace has 48. No trace holds a record of these tables twice (graph_edges may: ``Mul(x, x)``)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    path = tmp_path / f"{table}.csv"
    header, *rows = path.read_text().splitlines()
    assert rows, f"{table} is empty in {step_pb}"
    path.write_text("\n".join([header, *rows, rows[1 if len(rows) > 1 else 0]]) + "\n")
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    earlier = 3 if len(rows) > 1 else 2
    assert str(caught.value) == (f"{path}: line {len(rows) + 2}: repeats line {earlier} exactly (a table holds "
                                 "each record once: was the file joined to itself?)")


def test_a_parquet_table_holding_a_row_twice_is_refused_naming_both_rows(step_pb: pathlib.Path,
                                                                         tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(step_pb), tmp_path, "parquet")
    path = tmp_path / "transfers.parquet"
    frame = pd.read_parquet(path)
    pd.concat([frame, frame]).to_parquet(path, index=False)
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    assert str(caught.value) == (f"{path}: table 'transfers' row {len(frame)}: repeats row 0 exactly (a table holds "
                                 "each record once: was the file joined to itself?)")


def test_a_graph_edge_listed_twice_is_kept(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """``Mul(x, x)`` has two equal input edges: a repeated row of graph_edges is a real graph, read as written."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    path = tmp_path / "graph_edges.csv"
    header, first, *rows = path.read_text().splitlines()
    path.write_text("\n".join([header, first, first, *rows]) + "\n")
    assert len(read_tables(tmp_path).graph_edges) == len(rows) + 2


@pytest.mark.slow  # some 20 s a format: 50-odd traces read, written and read back
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_every_bundled_trace_reads_back_from_tables(tmp_path: pathlib.Path, fmt: str) -> None:
    """No table of a trace tracegen reads holds a row twice where a repeat is refused: every bundled trace,
    converted, reads back equal."""
    data = TRACES.parent
    paths = sorted(p for p in data.glob("**/trace") if (p / "meta.json").is_file()) + sorted(TRACES.iterdir())
    assert len(paths) > 50
    for i, path in enumerate(paths):
        trace = read_trace(path)
        out = tmp_path / str(i)
        write_tables(trace, out, fmt)  # type: ignore[arg-type]
        assert read_trace(out).equals(trace), path


@pytest.mark.parametrize(("table", "column", "values", "row", "got"), [
    ("ops", "dur_ns", lambda d: d.astype(str), 0, "'{first}', a string"),  # digits: read as the number
    ("ops", "dur_ns", lambda d: d.astype(str).astype("string"), 0, "'{first}', a string"),
    ("ops", "dur_ns", lambda d: d > d.median(), 0, "{first}, a bool"),
    # nullable: the first cell that is not null is the first bad one
    ("transfers", "size_bytes", lambda d: d.astype(str).astype(object).where(d.index > 1, None).where(
        d.index != 3, "x"), 2, "'{third}', a string"),
])
def test_a_parquet_integer_column_holding_strings_is_refused_naming_its_row(
        step_pb: pathlib.Path, tmp_path: pathlib.Path, table: str, column: str,
        values: Callable[[pd.Series], pd.Series], row: int, got: str) -> None:
    """A column of text where the schema has an integer was cast without a word: '12' read as 12. A Parquet table
    tracegen wrote holds its integers as integers, so a string there, digits or not, is refused."""
    write_tables(read_trace(step_pb), tmp_path, "parquet")
    path = tmp_path / f"{table}.parquet"
    frame = pd.read_parquet(path)
    frame[column] = values(frame[column])
    frame.to_parquet(path, index=False)
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    shown = got.format(first=frame[column].iloc[0], third=frame[column].iloc[2])
    assert str(caught.value) == (f"{path}: table {table!r} row {row}: {column!r} must be a whole number, stored as "
                                 f"one (got {shown})")


@pytest.mark.parametrize("key", ["table_format", "source", "source_format", "lost", "skipped"])
def test_a_manifest_missing_a_key_tracegen_writes_is_refused_naming_it(step_pb: pathlib.Path, tmp_path: pathlib.Path,
                                                                       key: str) -> None:
    """A manifest holding only ``table_format`` was read, and inspect showed an empty source: every manifest
    tracegen writes holds all five keys, so one without a key was not written whole (or not by tracegen)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    manifest = tmp_path / "trace.json"
    assert (refused_without_key(manifest, key, lambda _: read_trace(tmp_path), TraceFormatError)
            == f"{manifest}: {key!r} is missing (tracegen writes it in every table manifest)")


def _first_line(path: pathlib.Path, column: str, value: str) -> int:
    """The line (the header is line 1) of the first row of CSV table ``path`` whose ``column`` is ``value``."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return int(frame.index[frame[column] == value][0]) + 2


@pytest.mark.parametrize(("table", "find", "column", "value", "why"), [
    ("graph_edges", ("kind", "data"), "src_output", "-1",
     "'src_output' must be from 0 up for a data edge (got -1, kind 'data')"),
    ("graph_edges", ("kind", "data"), "kind", "control", "'src_output' must be -1 for a control edge (got 0, kind "
                                                         "'control')"),
    ("variables", ("name", "fc1/kernel"), "n_elements", "401409",
     "'n_elements' must be the product of shape 784x512, 401408 (got 401409)"),
    ("variables", ("name", "fc1/kernel"), "shape", "784x513",
     "'n_elements' must be the product of shape 784x513, 402192 (got 401408)"),
    ("variables", ("name", "fc1/kernel"), "shape", "784*512",
     "'shape' must be 'scalar' or sizes joined by x, as 784x512 (got '784*512')"),
    ("variables", ("name", "global_step"), "shape", "2", "'n_elements' must be the product of shape 2, 2 (got 1)"),
    ("variables", ("name", "fc1/kernel"), "size_bytes", "401408",
     "'size_bytes' must be 401408 elements x 4 bytes of float32, 1605632 (got 401408)"),
    ("variables", ("name", "fc1/kernel"), "dtype", "float64",
     "'size_bytes' must be 401408 elements x 8 bytes of float64, 3211264 (got 1605632)"),
    ("variables", ("name", "fc1/kernel"), "dtype", "float33", "'dtype' must be one of float32, float64, "),
    ("transfers", ("direction", "pull"), "direction", "push",
     "'direction' must be pull for a tensor sent from '/job:ps/replica:0/task:0/device:CPU:0' to "
     "'/job:worker/replica:0/task:0/device:CPU:0' (got 'push')"),
    ("rendezvous", ("direction", "push"), "direction", "other",
     "'direction' must be push for a tensor sent from '/job:worker/replica:0/task:0/device:CPU:0' to "
     "'/job:ps/replica:0/task:0/device:CPU:0' (got 'other')"),
])
def test_a_csv_row_whose_columns_contradict_each_other_is_refused(tmp_path: pathlib.Path, table: str,
                                                                  find: tuple[str, str], column: str, value: str,
                                                                  why: str) -> None:
    """Each cell in range, the row saying two things: a data edge from slot -1, a variable whose shape, element
    count, dtype and bytes disagree, a pull sent from a worker to a PS. Read without a word: the model takes the
    one column it reads (a variable's size_bytes, a transfer's direction) and the prediction is wrong."""
    write_tables(read_trace(TRACES / "mlp" / "step_000.pb"), tmp_path, "csv")
    path = tmp_path / f"{table}.csv"
    line = _first_line(path, *find)
    _edit_cell(path, line, column, value)
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    assert str(caught.value).startswith(f"{path}: line {line}: {why}"), caught.value


def test_a_parquet_row_whose_columns_contradict_each_other_is_named_by_its_row(tmp_path: pathlib.Path) -> None:
    write_tables(read_trace(TRACES / "mlp" / "step_000.pb"), tmp_path, "parquet")
    path = tmp_path / "graph_edges.parquet"
    frame = pd.read_parquet(path)
    row = int(frame.index[frame["kind"] == "data"][0])
    frame.loc[row, "src_output"] = -1
    frame.to_parquet(path, index=False)
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    assert str(caught.value) == (f"{path}: table 'graph_edges' row {row}: 'src_output' must be from 0 up for a data "
                                 "edge (got -1, kind 'data')")


def test_a_step_shorter_than_its_records_is_refused_naming_the_first_record_outside(tmp_path: pathlib.Path) -> None:
    """A step's length is read from its start_ns and end_ns: one cut to end before its ops was replayed short."""
    write_tables(read_trace(TRACES / "mlp" / "step_000.pb"), tmp_path, "csv")
    steps = pd.read_csv(tmp_path / "steps.csv", dtype=str, keep_default_na=False)
    start = int(steps.loc[0, "start_ns"])
    _edit_cell(tmp_path / "steps.csv", 2, "end_ns", str(start + 1))
    ops = pd.read_csv(tmp_path / "ops.csv")
    row = int(((ops["start_ns"] < start) | (ops["start_ns"] + ops["dur_ns"] > start + 1)).to_numpy().argmax())
    with pytest.raises(TraceError) as caught:
        read_tables(tmp_path)
    begins, ends = int(ops["start_ns"].iloc[row]), int(ops["start_ns"].iloc[row] + ops["dur_ns"].iloc[row])
    assert str(caught.value) == (f"{tmp_path / 'ops.csv'}: line {row + 2}: runs from {begins} to {ends} ns, outside "
                                 f"its step 0, from {start} to {start + 1} ns in the steps table (a step spans every "
                                 "record of it)")
