"""The Trace as plain tables: one CSV or Parquet file per table plus ``trace.json`` (source, lost, skipped).

Columns are exactly the schemas of :mod:`parsers.trace`. A directory written here reads back (``read_tables``,
or ``read_trace`` on the directory) into an equal Trace. Every row of a CSV table ends with a line break: a file
whose last row has none was cut short, and is refused. A row that repeats an earlier one exactly is refused in the
tables where no trace holds a record twice (``parsers.trace.ONCE_EACH``; transfers whose tensor name was lost aside):
the file was joined to itself.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
import pathlib
from collections.abc import Callable
from typing import Any, Literal

import pandas as pd

from parsers.atomic import write_set_atomic
from parsers.csvfile import INTEGER, MAX_NUMBER_CHARS, Records, cell_int
from parsers.errors import SchemaError, TraceFormatError, quoted
from parsers.files import not_utf8_at, read_file
from parsers.jsondoc import load_json
from parsers.limits import MAX_BYTES, MAX_RECORDS
from parsers.trace import (
    MAX_STEP,
    NULLABLE_INT,
    NULLABLE_TEXT,
    ONCE_EACH,
    SCHEMAS,
    STR,
    Position,
    Trace,
    make_table,
    outside_step,
    printable,
    repeated_record,
    row_contradiction,
    row_naming,
    source_of,
    step_fault,
    trace_from,
)

MANIFEST = "trace.json"
MANIFEST_KEYS = ("table_format", "source", "source_format", "lost", "skipped")  # every one written, so required
MAX_MANIFEST_BYTES = 1 << 20
# pyarrow (pandas' Parquet engine) ships no type information: imported by name, it is plainly Any.
_ARROW: Any = importlib.import_module("pyarrow")
_PARQUET: Any = importlib.import_module("pyarrow.parquet")
TableFormat = Literal["csv", "parquet"]


def table_paths(out_dir: pathlib.Path, fmt: TableFormat) -> list[pathlib.Path]:
    """The files :func:`write_tables` writes into ``out_dir``."""
    return [out_dir / f"{name}.{fmt}" for name in SCHEMAS] + [out_dir / MANIFEST]


def write_tables(trace: Trace, out_dir: str | os.PathLike[str], fmt: TableFormat) -> list[pathlib.Path]:
    """Write every table of ``trace`` as ``<table>.<fmt>`` and the manifest into ``out_dir``, as one set: all are
    made and written beside their places before any replaces an earlier conversion's (a failure part way leaves
    the old set whole, never old tables beside new ones)."""
    target = pathlib.Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    files: list[tuple[pathlib.Path, bytes]] = []
    for name in SCHEMAS:
        frame: pd.DataFrame = getattr(trace, name)
        buf = io.BytesIO()
        if fmt == "csv":
            # every text field quoted: a carriage return inside one must not end its row
            frame.to_csv(buf, index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
        else:
            frame.to_parquet(buf, index=False)
        files.append((target / f"{name}.{fmt}", buf.getvalue()))
    manifest = {"source": printable(trace.source), "source_format": trace.source_format, "table_format": fmt,
                "lost": list(trace.lost), "skipped": dict(trace.skipped)}
    files.append((target / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()))
    write_set_atomic(files)
    return table_paths(target, fmt)


def earlier_tables(out_dir: pathlib.Path, fmt: TableFormat) -> list[pathlib.Path]:
    """The tables an earlier :func:`write_tables` into ``out_dir`` wrote in the other format (its manifest says
    which), still there: a new conversion in ``fmt`` replaces that one, and they would be left holding the old
    trace. None when there is no readable manifest (the files are then not known to be tracegen's)."""
    try:
        earlier = _manifest(out_dir / MANIFEST)["table_format"]
    except TraceFormatError:
        return []
    if earlier == fmt:
        return []
    return [p for p in table_paths(out_dir, earlier)[:-1] if p.is_file()]  # the manifest is replaced, not removed


def table_files(in_dir: pathlib.Path) -> list[pathlib.Path]:
    """The files :func:`read_tables` reads from ``in_dir``: the tables of the format its manifest names, and the
    manifest (TraceFormatError when the manifest cannot be read, as :func:`read_tables` raises it)."""
    return table_paths(in_dir, _manifest(in_dir / MANIFEST)["table_format"])


def is_table_dir(path: pathlib.Path) -> bool:
    """Whether ``path`` is a directory written by :func:`write_tables`."""
    return path.is_dir() and (path / MANIFEST).is_file()


def read_tables(in_dir: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Trace:
    """Read a directory written by :func:`write_tables` back into a Trace; the tables together may hold at most
    ``max_bytes`` (bytes read for CSV, uncompressed column data for Parquet)."""
    source = pathlib.Path(in_dir)
    manifest = _manifest(source / MANIFEST)
    fmt = manifest["table_format"]
    tables = {}
    total = 0
    positions: dict[str, Position | None] = {}  # a Parquet row has no line: counted from 0
    for name in SCHEMAS:
        path = source / f"{name}.{fmt}"
        data = read_file(path, max_bytes)
        total += len(data) if fmt == "csv" else _parquet_size(data, path, max_bytes)
        if total > max_bytes:
            raise TraceFormatError(f"{source}: the tables hold more than the limit of {max_bytes} bytes together")
        try:
            frame, positions[name] = _csv_table(name, data, path) if fmt == "csv" else (
                pd.read_parquet(io.BytesIO(data)), None)
        except (ValueError, TypeError, OverflowError, OSError, _ARROW.ArrowException) as exc:  # OSError: pyarrow's
            raise TraceFormatError(f"{path}: cannot read table {name!r}: {exc}") from None  # corrupt column data
        tables[name] = make_table(name, frame, where=str(path), position=positions[name])
        if name in ONCE_EACH and (repeat := repeated_record(name, tables[name])) is not None:  # a file joined to itself
            at, earlier = row_naming(name, str(path), positions[name]), positions[name] or (lambda r: f"row {r}")
            raise SchemaError(f"{at(repeat[0])}: repeats {earlier(repeat[1])} exactly (a table holds each "
                                   "record once: was the file joined to itself?)")
        if (contradiction := row_contradiction(name, tables[name])) is not None:  # columns that say two things
            row, why = contradiction
            raise SchemaError(f"{row_naming(name, str(path), positions[name])(row)}: {why}")
    for check in (step_fault, outside_step):  # the second once each step is listed once
        fault = check(tables)
        if fault is not None:  # step_fault as the Trace would refuse it, but naming the table's file and line there
            name, row, why = fault
            raise SchemaError(f"{row_naming(name, str(source / f'{name}.{fmt}'), positions[name])(row)}: {why}")
    return trace_from(str(source), source=source_of(str(source), manifest["source"]),
                      source_format=manifest["source_format"], lost=manifest["lost"], skipped=manifest["skipped"],
                      **tables)


class _CsvLines:
    """A CSV table's row (from 0) as the line of the file it starts on, as a text editor numbers them. As written,
    the header is on line 1 and a row per line below it; a file edited by hand may hold blank lines, which the
    table reader skips, and a quoted cell may hold a line break: counted as 'row + 2', the line named was above the
    row at fault. Found only for a message: the text is read again as CSV (:class:`parsers.csvfile.Records`)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None

    def __call__(self, row: int) -> str:
        if self._starts is None:  # the records pandas reads: it skips a line that is blank or holds spaces only
            records = Records(io.StringIO(self._text, newline=""))
            self._starts = [start for start, cells in records if cells and (len(cells) > 1 or cells[0].strip())]
        return f"line {self._starts[row + 1] if row + 1 < len(self._starts) else row + 2}"


def _csv_table(name: str, data: bytes, path: pathlib.Path) -> tuple[pd.DataFrame, _CsvLines]:
    """Table ``name`` from CSV bytes: every cell read as text, then each integer column converted, a cell that is
    not a whole number within int64 named by its line (:class:`_CsvLines`)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # the codec counts from after a byte-order mark: 3 short of the file's byte
        line, at = not_utf8_at(data, exc, lone_cr=True)
        raise TraceFormatError(f"{path}: line {line}: not UTF-8 text: {exc.object[exc.start : exc.end]!r} at byte "
                               f"{at}; save it as UTF-8") from None
    if text and not text.endswith("\n"):  # every row written ends with one: the last row was cut (40 read as 4)
        last = text.count("\n") + 1
        raise TraceFormatError(f"{path}: line {last}: ends without a line break: the file was cut short (tracegen "
                               "ends every row with one)")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    lines = _CsvLines(text)
    nullable = set(NULLABLE_TEXT.get(name, ()))
    for column, dtype in SCHEMAS[name].items():
        if column not in frame.columns or dtype == STR:
            if column in nullable and column in frame.columns:
                frame[column] = frame[column].mask(frame[column] == "")
            continue
        frame[column] = pd.Series(_whole_cells(frame[column], column, dtype, path, lines), dtype=dtype,
                                  index=frame.index)
    return frame, lines


def _whole_cells(cells: pd.Series, column: str, dtype: str, path: pathlib.Path,
                 position: Position) -> list[int | None]:
    """An integer column's cells, each by the rule of every CSV's numbers (:func:`parsers.csvfile.cell_int`: ASCII
    digits, maybe an exponent: 1e3), within int64; blank (None) only where ``dtype`` is nullable. Plain digits,
    nearly every cell as written, are taken at once; the others one by one, the first bad one named by its line
    (``position``)."""
    rule = f"must be a whole number{' or empty' if dtype == NULLABLE_INT else ''}"

    def refusal(row: int) -> Callable[[str], TraceFormatError]:
        return lambda why: TraceFormatError(f"{path}: {position(row)}: {column!r} {why} "
                                            f"(got {quoted(cells.iloc[row])})")

    values: list[int | None] = []
    for row, (cell, plain) in enumerate(zip(cells, cells.str.fullmatch(INTEGER.pattern), strict=True)):
        if plain and len(cell) <= MAX_NUMBER_CHARS:
            value: int | None = int(cell)
        elif not cell.strip() and dtype == NULLABLE_INT:
            value = None
        else:
            value = cell_int(cell, rule, refusal(row), exponent=True)
        if value is not None and not -2**63 <= value < 2**63:
            raise refusal(row)("must be a whole number within int64")
        values.append(value)
    return values


def _manifest(path: pathlib.Path) -> dict[str, Any]:
    """The manifest's values, each checked: ``table_format``, ``source``, ``source_format``, ``lost``,
    ``skipped``."""
    doc = load_json(read_file(path, MAX_MANIFEST_BYTES), str(path))
    if not isinstance(doc, dict):
        raise TraceFormatError(f"{path}: not a tracegen table manifest (got {quoted(doc)})")
    fmt = doc.get("table_format")
    if "table_format" in doc and fmt not in ("csv", "parquet"):
        raise TraceFormatError(f"{path}: 'table_format' must be csv or parquet (got {quoted(fmt)})")
    missing = next((key for key in MANIFEST_KEYS if key not in doc), None)
    if missing is not None:  # not written whole, or not by tracegen: an empty source was shown for a lost one
        raise TraceFormatError(f"{path}: {missing!r} is missing (tracegen writes it in every table manifest)")
    lost = doc.get("lost") or []
    skipped = doc.get("skipped") or {}
    ok = (isinstance(doc["source"], str) and isinstance(doc["source_format"], str)
          and isinstance(lost, list) and all(isinstance(x, str) for x in lost) and isinstance(skipped, dict)
          and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_STEP for v in skipped.values()))
    if not ok:
        raise TraceFormatError(f"{path}: 'source' and 'source_format' must be strings, 'lost' a list of strings and "
                               "'skipped' an object of counts")
    return {"table_format": fmt, "source": doc["source"], "source_format": doc["source_format"],
            "lost": tuple(lost), "skipped": dict(skipped)}


def _parquet_size(data: bytes, path: pathlib.Path, limit: int) -> int:
    """The uncompressed size of a Parquet file's column data; TraceFormatError when it, or its row count, is
    over the limits (a small Parquet file can hold a compression bomb)."""
    try:
        meta = _PARQUET.ParquetFile(io.BytesIO(data)).metadata
    except (ValueError, OSError, _ARROW.ArrowException) as exc:
        raise TraceFormatError(f"{path}: not a Parquet file: {exc}") from None
    size = sum(meta.row_group(g).column(c).total_uncompressed_size
               for g in range(meta.num_row_groups) for c in range(meta.num_columns))
    if meta.num_rows > MAX_RECORDS or size > limit:
        raise TraceFormatError(f"{path}: {meta.num_rows} rows, {size} bytes uncompressed: more than the limits of "
                               f"{MAX_RECORDS} rows and {limit} bytes")
    return int(size)
