"""The sweep dataset: a directory of Parquet part files, one row per simulated grid point, both ways.

Layout of ``DIR`` (``tracegen sweep --out DIR``)::

    DIR/part-000000.parquet    rows of finished points, in grid order
    DIR/part-000001.parquet    ... one part per K points (the last of a run may hold fewer)
    DIR/.tracegen.lock         held by the one sweep writing into DIR

Every part has exactly the columns of :data:`SCHEMA`, in that order. A part is written atomically (a temporary
``.part-NNNNNN.parquet.*.tmp`` beside it, then renamed), so a reader sees whole parts only; names starting with
``.`` or ``_`` are skipped by pyarrow's and pandas' dataset readers, and DuckDB's ``DIR/*.parquet`` glob does not
match them. ``DIR`` holds nothing else a reader would take for a part: any other file or folder not starting
with ``.`` or ``_`` (a prediction's ``curve.csv``), on which pandas and pyarrow fail, is refused before any point
is simulated. Read the whole dataset with ``pandas.read_parquet(DIR)``, ``pyarrow.dataset.dataset(DIR)`` or, in
DuckDB, ``SELECT * FROM read_parquet('DIR/*.parquet')``. An uninterrupted run writes its rows in grid order,
the same bytes whatever ran it; a resumed one adds the points it had left, in grid order after the earlier
parts. Sort by :data:`SORT_COLUMNS` (as :func:`read_rows` does) for one order across runs. The values are the
same for the same grid point.

Columns (units in the names; utilisations are fractions 0..1 over the steady window of :mod:`tracegen.metrics`):

- ``point_id``: sha256 (hex) of the point's parameters and of the trace's content; unique in a dataset;
- ``trace_sha256``: the content hash of the trace's files (:func:`tracegen.sweepgrid.trace_sha256`);
- ``n_workers``, ``link`` (the link's label: a rate as written, a profile file's path, ``beside``, ``trace``,
  or a catalogue pair ``WORKER+PS``), ``link_kind`` (``bandwidth`` | ``profile`` | ``trace`` | ``instances``),
  ``bandwidth_bytes_per_s`` (the line rate; null for a profile, the trace's link or a catalogue pair),
  ``ps_shards`` (PS tasks), ``placement`` (of the parameters on them: ``as traced``, ``round-robin``,
  ``greedy``, ``file PATH``), ``policy`` (``tf`` | ``tictac`` | an order file's path), ``seed``, ``worker_speed``
  (worker ops run this many times as fast as traced, or as on the worker type), ``worker_type`` and ``ps_type``
  (a catalogue pair's instance types; null without a catalogue), ``steps``, ``warmup_steps``, ``link_model``
  (``conn`` | ``fifo`` | ``fair``), ``batch_size`` (samples per step): the point's parameters;
- ``steps_per_s``, ``samples_per_s``, ``pull_link_utilisation``, ``push_link_utilisation``,
  ``ps_cpu_utilisation`` (with several shards, their mean), ``bottleneck`` (:func:`tracegen.bottleneck.bottleneck`),
  ``busiest_shard``, ``busiest_shard_resource`` (``link-pull`` | ``link-push`` | ``ps-cpu``) and
  ``busiest_shard_utilisation`` (the busiest resource of any shard; one PS: the PS's), ``usd_per_hour`` (a
  catalogue pair's cluster: N workers and one PS per shard; null without a catalogue), ``n_events``,
  ``sim_end_ns`` (simulated time at the end of the run): what the point's simulation gave.

``bottleneck`` and ``busiest_shard_resource`` answer two questions and may differ in a row.
``busiest_shard_resource`` is the resource busiest against its peak, on any shard, whatever its utilisation.
``bottleneck`` is the curve's label (``link-pull`` | ``link-push`` | ``ps-cpu`` | ``workers``): a link direction
weighed against what it carries while the other direction is busy too (:func:`tracegen.bottleneck.two_way_share`: 3/4
of a rate given alone), on the shard busiest on that measure, and ``workers`` when nothing reaches 80 % on it (a
row knows no other N, so never ``contention``). So they differ where nothing is busy (``workers`` beside a
resource under 0.8) and where a link weighed so outranks a CPU busier against its peak, on that shard or another
(``link-pull`` at 0.73 of its peak, 0.97 weighed, beside ``ps-cpu`` at 0.82); ``ps-cpu`` in ``bottleneck`` is
``ps-cpu`` in ``busiest_shard_resource`` too.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import os
import pathlib
import re
from collections.abc import Collection, Sequence
from typing import Any

import pandas as pd

from parsers.atomic import write_bytes_atomic
from parsers.errors import SchemaError, TraceFormatError, quoted
from parsers.trace import printable

# pyarrow ships no type information: imported by name, it is plainly Any (as in parsers.tables).
_ARROW: Any = importlib.import_module("pyarrow")
_PARQUET: Any = importlib.import_module("pyarrow.parquet")
_COMPUTE: Any = importlib.import_module("pyarrow.compute")

COLUMNS: tuple[tuple[str, str], ...] = (
    ("point_id", "string"), ("trace_sha256", "string"), ("n_workers", "int64"), ("link", "string"),
    ("link_kind", "string"), ("bandwidth_bytes_per_s", "int64"), ("ps_shards", "int64"), ("placement", "string"),
    ("policy", "string"), ("seed", "int64"), ("worker_speed", "float64"), ("worker_type", "string"),
    ("ps_type", "string"), ("steps", "int64"), ("warmup_steps", "int64"), ("link_model", "string"),
    ("batch_size", "int64"), ("steps_per_s", "float64"), ("samples_per_s", "float64"),
    ("pull_link_utilisation", "float64"), ("push_link_utilisation", "float64"), ("ps_cpu_utilisation", "float64"),
    ("bottleneck", "string"), ("busiest_shard", "int64"), ("busiest_shard_resource", "string"),
    ("busiest_shard_utilisation", "float64"), ("usd_per_hour", "float64"), ("n_events", "int64"),
    ("sim_end_ns", "int64"),
)
SCHEMA: Any = _ARROW.schema([(name, getattr(_ARROW, kind)()) for name, kind in COLUMNS])
# one value in a dataset: a rerun at another would put two answers to one question beside each other
SETTING_COLUMNS = ("trace_sha256", "steps", "warmup_steps", "link_model", "batch_size")
# with those, what tells a point from another in the rows (the rest follows from the link or the shards)
KEY_COLUMNS = ("n_workers", "link", "ps_shards", "placement", "policy", "worker_speed", "seed")
SORT_COLUMNS = ("trace_sha256", "link", "ps_shards", "placement", "policy", "worker_speed", "n_workers", "seed",
                "point_id")
_TEXT = frozenset(name for name, kind in COLUMNS if kind == "string")
PART_RE = re.compile(r"^part-(\d{6,})\.parquet$")


def part_paths(directory: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The finished part files of the dataset in ``directory``, by number (none if it does not exist)."""
    root = pathlib.Path(directory)
    if not root.is_dir():
        return []
    found = [(int(m[1]), p) for p in root.iterdir() if (m := PART_RE.match(p.name)) and p.is_file()]
    return [p for _, p in sorted(found)]


def next_part_number(directory: str | os.PathLike[str]) -> int:
    """The number of the next part to write: one past the highest there."""
    parts = part_paths(directory)
    return int(PART_RE.match(parts[-1].name)[1]) + 1 if parts else 0  # type: ignore[index]


def _read(path: pathlib.Path, columns: Sequence[str] | None = None) -> Any:
    try:  # opened here, not by Arrow, whose paths must be UTF-8 (a folder named in another encoding is not)
        with path.open("rb") as fh:
            part = _PARQUET.ParquetFile(fh)  # its footer parsed once: the schema checked, then the columns read
            if not part.schema_arrow.equals(SCHEMA):
                raise SchemaError(f"{path}: {_schema_difference(part.schema_arrow)}: not the sweep schema of this "
                                  "version (parsers/sweepdata.py); sweep into a new directory")
            return part.read(columns=list(columns) if columns is not None else None)
    except OSError as exc:
        if exc.errno is not None:  # the system's refusal (permissions, gone): the file may be whole
            raise TraceFormatError(f"{path}: cannot be read: {exc.strerror}") from exc
        raise _damaged(path, exc) from exc
    except _ARROW.ArrowException as exc:
        raise _damaged(path, exc) from exc


def _schema_difference(schema: Any) -> str:
    """The first way ``schema`` is not :data:`SCHEMA`, in words: a column missing, foreign, twice, out of place,
    or of another type. Listing its names said nothing where they were every one the sweep's (a part written back
    by pandas has the same names, its text as ``large_string``), and the list was cut short on the command line."""
    named = _names_difference(list(schema.names), list(SCHEMA.names))
    if named is not None:
        return named
    for field, expected in zip(schema, SCHEMA, strict=True):
        if not field.type.equals(expected.type):
            return f"column {quoted(field.name, 80)} is {field.type} where a sweep's is {expected.type}"
        if field.nullable != expected.nullable:
            return (f"column {quoted(field.name, 80)} is {'' if field.nullable else 'not '}nullable where a "
                    f"sweep's is{'' if expected.nullable else ' not'}")
    return "its columns' metadata differ from a sweep's"


def _names_difference(names: list[str], want: list[str]) -> str | None:
    """How column ``names`` are not the sweep's ``want``: one missing, foreign, twice or out of place; None if
    they are the same."""
    if missing := [n for n in want if n not in names]:
        more = f" (nor {len(missing) - 1} more of the sweep's {len(want)})" if len(missing) > 1 else ""
        return f"no column {quoted(missing[0], 80)}{more}"
    if foreign := [n for n in names if n not in want]:
        return f"column {quoted(foreign[0], 80)} is not one of the sweep's {len(want)}"
    if (twice := next((n for i, n in enumerate(names) if n in names[:i]), None)) is not None:
        return f"column {quoted(twice, 80)} appears twice"
    moved = next((i for i, (n, w) in enumerate(zip(names, want, strict=True)) if n != w), None)
    return None if moved is None else (f"column {moved + 1} is {quoted(names[moved], 80)} where a sweep's is "
                                       f"{quoted(want[moved], 80)}")


def _damaged(path: pathlib.Path, exc: Exception) -> TraceFormatError:
    # A part is renamed into place only once written whole, so this one was cut short or changed since. Its rows
    # cannot be read, so which points it held is unknown: removing it is the user's call, and a rerun then
    # computes exactly those points again (every point not in a readable part).
    return TraceFormatError(f"{path}: a damaged Parquet part ({quoted(str(exc).splitlines()[0], 80)}); delete it "
                            "and rerun the same sweep: it computes that part's points again")


def refuse_other_files(directory: str | os.PathLike[str]) -> None:
    """SchemaError naming the first entry of ``directory`` that a reader of it would take for a part and is not
    one: a Parquet file that is not a part, which every reader would mix into the dataset, and any other file or
    folder not starting with ``.`` or ``_``, on which pandas' and pyarrow's dataset readers fail. Reads no part:
    cheap enough to run before any work."""
    root = pathlib.Path(directory)
    entries = sorted(root.iterdir()) if root.is_dir() else []
    other = [p for p in entries if not (PART_RE.match(p.name) and p.is_file())
             and (p.suffix == ".parquet" or not p.name.startswith((".", "_")))]
    if other:
        readers = "pandas, pyarrow and DuckDB" if other[0].suffix == ".parquet" else "pandas and pyarrow"
        raise SchemaError(f"{other[0]}: not a part of a sweep, and {readers} would read it as one; sweep into a "
                          "directory that holds only a sweep's parts")


@dataclasses.dataclass(frozen=True, slots=True)
class Contents:
    """What a rerun needs of the dataset in a directory (:func:`read_contents`, each part read once):
    ``point_ids``, the id of every row; ``parts``, each part's path with its :data:`SETTING_COLUMNS` and
    :data:`KEY_COLUMNS` (an Arrow table, the strings as dictionaries: a few bytes a row), for :meth:`other_row`."""

    point_ids: Collection[str]
    parts: tuple[tuple[pathlib.Path, Any], ...]

    def other_row(self, settings: dict[str, Any],
                  points: Sequence[dict[str, Any]]) -> tuple[pathlib.Path, dict[str, Any]] | None:
        """The first row that the points of another sweep wrote, with its part: one whose
        :data:`SETTING_COLUMNS` differ from ``settings``, or whose :data:`KEY_COLUMNS` equal those of one of
        ``points`` (the points this run computes, which the dataset does not hold by id: a row with their
        parameters was computed from other inputs). None when there is none."""
        wanted = {tuple(printable(p[k]) for k in KEY_COLUMNS) for p in points}
        for path, table in self.parts:
            for name, value in settings.items():
                other = table.filter(_COMPUTE.not_equal(table.column(name),
                                                        _ARROW.scalar(value, SCHEMA.field(name).type)))
                if other.num_rows:
                    return path, other.slice(0, 1).to_pylist()[0]
            keys = zip(*(table.column(k).to_pylist() for k in KEY_COLUMNS), strict=True)
            if (i := next((i for i, key in enumerate(keys) if key in wanted), None)) is not None:
                return path, table.slice(i, 1).to_pylist()[0]
        return None


def read_contents(directory: str | os.PathLike[str]) -> Contents:
    """The :class:`Contents` of the dataset in ``directory``, each part read once (its schema checked first; a
    point in two rows refused, naming both parts; anything else a reader of the directory would take for a part
    refused: a Parquet file that is not one, which every reader would mix into the dataset, and any other file or
    folder not starting with ``.`` or ``_``, on which pandas' and pyarrow's dataset readers fail)."""
    refuse_other_files(directory)
    where: dict[str, pathlib.Path] = {}
    parts = []
    for path in part_paths(directory):
        table = _read(path, ("point_id", *SETTING_COLUMNS, *KEY_COLUMNS))
        for point in table.column("point_id").to_pylist():
            if point in where:  # a part copied in again: every reader would count its rows twice
                raise SchemaError(f"{path}: point {str(point)[:12] + '...'!r} is in {where[point]} too; a point is "
                                  "one row of a dataset: remove the copy")
            where[point] = path
        parts.append((path, _compact(table.drop_columns(["point_id"]))))
    return Contents(point_ids=where.keys(), parts=tuple(parts))


def _compact(table: Any) -> Any:
    """``table`` with its string columns as dictionaries: a resumed dataset's few labels held once, not per row."""
    return _ARROW.table({name: table.column(name).dictionary_encode() if name in _TEXT else table.column(name)
                         for name in table.column_names})


def read_point_ids(directory: str | os.PathLike[str]) -> set[str]:
    """The ``point_id`` of every row in the dataset in ``directory``, checked as :func:`read_contents` checks
    them."""
    return set(read_contents(directory).point_ids)


def read_rows(directory: str | os.PathLike[str]) -> pd.DataFrame:
    """Every row of the dataset in ``directory``, sorted by :data:`SORT_COLUMNS` (an empty frame with the
    schema's columns when there are no parts)."""
    tables = [_read(p) for p in part_paths(directory)]
    table = _ARROW.concat_tables(tables) if tables else SCHEMA.empty_table()
    frame: pd.DataFrame = table.to_pandas()
    return frame.sort_values(list(SORT_COLUMNS), kind="stable", ignore_index=True)


def write_part(directory: str | os.PathLike[str], number: int, rows: Sequence[dict[str, Any]]) -> pathlib.Path:
    """Write ``rows`` (dicts with exactly the schema's columns) as part ``number``, atomically."""
    names = [name for name, _ in COLUMNS]
    for row in rows:
        if list(row) != names:
            raise SchemaError(f"sweep row has columns {list(row)}, the schema has {names}")
    # a label that is not UTF-8 (a profile's path as os.fsdecode keeps it) as its escape: Arrow's strings are UTF-8
    table = _ARROW.Table.from_pylist([printable(row) for row in rows], schema=SCHEMA)
    buf = io.BytesIO()
    _PARQUET.write_table(table, buf)
    path = pathlib.Path(directory) / f"part-{number:06d}.parquet"
    write_bytes_atomic(path, buf.getvalue())
    return path
