"""CSV and Parquet tables: documented columns, and a round trip back to an equal Trace."""

from __future__ import annotations

import pathlib

import pandas as pd
import pytest

from parsers import SCHEMAS, TraceFormatError, read_trace
from parsers.tables import read_tables, write_tables


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
