"""The sweep dataset (``parsers/sweepdata.py``): parts written and read back, found by number, a point in two
parts or a file a reader would mix in refused, and the rows another sweep wrote told apart."""

from __future__ import annotations

import pathlib
import shutil
from typing import Any

import pytest

from parsers.errors import SchemaError
from parsers.sweepdata import (
    COLUMNS,
    next_part_number,
    part_paths,
    read_contents,
    read_point_ids,
    read_rows,
    refuse_other_files,
    write_part,
)


def _row(point_id: str, n_workers: int, **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"string": "x", "int64": 1, "float64": 0.5}
    row = {name: values[kind] for name, kind in COLUMNS}
    row.update({"point_id": point_id, "n_workers": n_workers, "link": "1Gbit"}, **changes)
    return row


def test_parts_read_back_sorted_by_the_sort_columns(tmp_path: pathlib.Path) -> None:
    write_part(tmp_path, 0, [_row("c", 3), _row("a", 1, link="2Gbit")])
    write_part(tmp_path, 1, [_row("b", 2)])
    rows = read_rows(tmp_path)
    assert list(rows.columns) == [name for name, _ in COLUMNS]
    assert list(rows["point_id"]) == ["b", "c", "a"]  # link first ("1Gbit" < "2Gbit"), then n_workers
    assert read_point_ids(tmp_path) == {"a", "b", "c"}
    assert read_rows(tmp_path / "absent").empty


def test_write_part_refuses_a_row_whose_columns_differ(tmp_path: pathlib.Path) -> None:
    row = _row("a", 1)
    del row["seed"]
    with pytest.raises(SchemaError, match="sweep row has columns"):
        write_part(tmp_path, 0, [row])
    row = dict(reversed(_row("a", 1).items()))  # every column, out of order
    with pytest.raises(SchemaError, match="sweep row has columns"):
        write_part(tmp_path, 0, [row])
    assert part_paths(tmp_path) == []


def test_parts_are_found_by_number_not_by_name(tmp_path: pathlib.Path) -> None:
    assert part_paths(tmp_path / "absent") == [] and next_part_number(tmp_path) == 0
    for number in (10, 999999, 1000000):
        write_part(tmp_path, number, [_row(str(number), 1)])
    (tmp_path / ".part-000003.parquet.1.tmp").write_bytes(b"")
    (tmp_path / "part-7.parquet").write_bytes(b"")  # fewer than six digits: no part
    assert [p.name for p in part_paths(tmp_path)] == ["part-000010.parquet", "part-999999.parquet",
                                                      "part-1000000.parquet"]
    assert next_part_number(tmp_path) == 1000001


@pytest.mark.parametrize(("name", "readers"), [("curve.csv", "pandas and pyarrow"), ("sub", "pandas and pyarrow"),
                                               ("other.parquet", "pandas, pyarrow and DuckDB"),
                                               (".other.parquet", "pandas, pyarrow and DuckDB")])
def test_anything_a_reader_would_take_for_a_part_is_refused(tmp_path: pathlib.Path, name: str, readers: str) -> None:
    write_part(tmp_path, 0, [_row("a", 1)])
    (tmp_path / ".tracegen.lock").write_bytes(b"")
    (tmp_path / "_SUCCESS").write_bytes(b"")
    refuse_other_files(tmp_path)
    if name == "sub":
        (tmp_path / name).mkdir()
    else:
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(SchemaError, match=f"{name}: not a part of a sweep, and {readers} would read it as one"):
        refuse_other_files(tmp_path)


def test_a_point_in_two_parts_is_refused_naming_both(tmp_path: pathlib.Path) -> None:
    first = write_part(tmp_path, 0, [_row("a" * 64, 1)])
    shutil.copyfile(first, tmp_path / "part-000001.parquet")
    with pytest.raises(SchemaError, match=r"part-000001\.parquet: point 'aaaaaaaaaaaa\.\.\.' is in .*part-000000"):
        read_contents(tmp_path)


def test_other_row_finds_rows_of_other_settings_or_of_the_points_to_compute(tmp_path: pathlib.Path) -> None:
    part = write_part(tmp_path, 0, [_row("a", 1), _row("b", 2, steps=10)])
    contents = read_contents(tmp_path)
    assert sorted(contents.point_ids) == ["a", "b"]
    settings = {"trace_sha256": "x", "steps": 1, "warmup_steps": 1, "link_model": "x", "batch_size": 1}
    found = contents.other_row(settings, [])
    assert found is not None and found[0] == part and found[1]["steps"] == 10
    settings["steps"] = 10
    found = contents.other_row(settings, [])
    assert found is not None and found[1]["steps"] == 1
    write_part(tmp_path, 0, [_row("a", 1), _row("b", 2)])
    contents, settings["steps"] = read_contents(tmp_path), 1
    assert contents.other_row(settings, []) is None
    assert contents.other_row(settings, [_row("new", 3)]) is None
    found = contents.other_row(settings, [_row("new", 2)])  # the parameters of a row the dataset holds by another id
    assert found is not None and found[1]["n_workers"] == 2


@pytest.mark.parametrize(("change", "said"), [
    # a part read and written back with pandas: every text column as large_string, the names all as they were
    (lambda t: t.to_pandas(), "column 'point_id' is large_string where a sweep's is string"),
    (lambda t: t.drop_columns(["steps_per_s", "seed"]), "no column 'seed' (nor 1 more of the sweep's 29)"),
    (lambda t: t.append_column("extra", t.column("seed")), "column 'extra' is not one of the sweep's 29"),
    (lambda t: t.select([1, 0, *range(2, t.num_columns)]), "column 1 is 'trace_sha256' where a sweep's is "
                                                           "'point_id'"),
    (lambda t: t.append_column("seed", t.column("seed")), "column 'seed' appears twice"),
])
def test_a_part_of_another_schema_is_refused_naming_what_differs(tmp_path: pathlib.Path, change: Any,
                                                                 said: str) -> None:
    """It said "columns ['point_id', 'trace_sha256', ...] differ from the sweep schema", listing 29 names (cut
    short in the middle on the command line) that were every one the sweep's where a column's type differed, and
    naming no column where one was missing."""
    import pyarrow.parquet as pq

    path = write_part(tmp_path, 0, [_row("a", 1)])
    changed = change(pq.read_table(path))
    if hasattr(changed, "to_parquet"):
        changed.to_parquet(path, index=False)
    else:
        pq.write_table(changed, path)
    with pytest.raises(SchemaError) as info:
        read_rows(tmp_path)
    assert str(info.value) == (f"{path}: {said}: not the sweep schema of this version (parsers/sweepdata.py); "
                               "sweep into a new directory")
