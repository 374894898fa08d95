"""CSV and Parquet tables: documented columns, and a round trip back to an equal Trace."""

from __future__ import annotations

import pathlib
import re

import pandas as pd
import pytest

from parsers import SCHEMAS, TraceError, TraceFormatError, read_trace
from parsers.tables import read_tables, write_tables

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
    with pytest.raises(TraceFormatError, match="'table_format' must be csv or parquet"):
        read_tables(tmp_path)


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
    with pytest.raises(TraceFormatError, match=r"ops\.csv: byte \d+: not UTF-8 text"):
        read_tables(tmp_path)


def test_a_step_that_ends_before_it_starts_is_refused(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """It was read, and inspect printed a step of -88.9 ms (a hardening pass)."""
    write_tables(read_trace(step_pb), tmp_path, "csv")
    steps = tmp_path / "steps.csv"
    header, row, *rest = steps.read_text().splitlines()
    step, source, start, end = row.split(",")
    steps.write_text("\n".join([header, f"{step},{source},{end},{start}", *rest]) + "\n")
    with pytest.raises(TraceError, match=r"steps\.csv: table 'steps' row 0: ends before it starts"):
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
    pq = pytest.importorskip("pyarrow.parquet")
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
