"""The measurements CSV that ``tracegen validate`` compares predictions with: its columns, reading and checking.

Measurements come from ``tracegen testbed`` (``measured.csv``, schema in :mod:`validation.testbed_files`) or from
anywhere else as a CSV (UTF-8, maybe gzipped) with one row per run and at least these columns (others are ignored,
but for a near miss of one that is read, such as ``ps_task``, ``Batch_size`` or one with a unit,
``batch_size (samples)``, which is refused)::

    n_workers             int    workers in the run (>= 1)
    steps_per_s           float  aggregate training steps per second of the run, all workers together (from
                                 1e-6 to 1e6)

and optionally ``repeat`` (int), ``batch_size`` (int, at most 10^9) and the PS link's rate per direction, either as
``bandwidth_bits_per_s`` (a number) or as ``bandwidth`` (text with its unit: ``500Mbit/s``, ``1Gbit/s``, ``125MB/s``; a
bare number is refused), not both. Several rows per N are repeats: a prediction is judged against their mean and shown
against their range. The testbed's CPU columns (:data:`CPU_COLUMNS`: the PS's, the workers' and the host's cores over
each window, each from 0 to 10000, and the PS's context switches per second, up to 1e10, empty when unknown) are read
when present and shown beside the rates (:func:`validation.compare.cpu_markdown`). ``bandwidth_bits_per_s`` is from 1000
to 8e15 (1 kbit/s to 1000 TB/s, as ``--bandwidth``). The testbed's ``ps_tasks`` is at most 64 (the PS shards a
prediction places parameters on), and each worker's part of ``worker_links`` 0 (none) or from 1e3 to 1e13 bits/s, as a
worker class's own link, and of ``worker_caps`` from 0.001 (what a CFS quota can enforce) to 10000 cores;
``worker_caps`` and ``worker_links`` hold a ';'-joined part per worker of the run
(``n_workers`` of them) or are empty. Blank lines are skipped, as are columns after the last named one with no name and
no cell (a spreadsheet's ``...,tensorflow_version,,``); column names are unique, lower case as above, and every row has
as many cells as the header, separated by commas (a spreadsheet's ';' is named as such); numbers are written with a
decimal point and no thousands separators (``1234.5``, not ``1,234.5`` or ``1234,5``).

The runs of one file are of one job on one cluster: where it has a column of the testbed's run settings
(:data:`SETTING_COLUMNS`: the model, its widths, the caps, the link's queue, ...), every row holds the same value
(numbers compared as numbers), and so does the link's rate (compared once read: ``500Mbit/s`` is ``62.5MB/s``),
else the file is refused: two campaigns appended into one would be averaged as repeats of each N.
"""

from __future__ import annotations

import collections
import csv
import difflib
import io
import itertools
import math
import os
import re
from typing import Any

import pandas as pd

from parsers.csvfile import INTEGER, NUMBER, Records, cell_float, cell_int
from parsers.files import not_utf8_at, read_expanded
from parsers.linkprofile import MAX_CPU_CORES
from parsers.read import UTF8_BOM
from parsers.workerclasses import MAX_LINK_BITS_PER_S, MIN_LINK_BITS_PER_S
from tracegen.config import MAX_BATCH_SIZE
from tracegen.errors import ConfigError as TracegenConfigError
from tracegen.placement import MAX_SHARDS
from tracegen.planreport import CSV_COLUMNS as PLAN_COLUMNS
from tracegen.plots import CSV_COLUMNS as CURVE_COLUMNS
from tracegen.simulate import MAX_WORKERS
from tracegen.units import MAX_RATE_BYTES_PER_S, MIN_RATE_BYTES_PER_S, counted, parse_rate
from validation.cluster_config import MAX_PERIOD_US, MIN_QUOTA_US
from validation.errors import ConfigError

REQUIRED_COLUMNS = ("n_workers", "steps_per_s")
PER_WORKER_COLUMNS = ("worker_caps", "worker_links")  # ';'-joined, a part per worker of the run
MAX_STEPS_PER_S = 1e6
MIN_STEPS_PER_S = 1e-6
# optional: where a window's CPU went, cores (validation.testbed_files's schema), shown in the report when present
CORE_COLUMNS = ("ps_cpu_cores", "worker_cpu_cores", "host_busy_cores", "host_softirq_cores", "host_steal_cores")
SWITCH_COLUMNS = ("ps_wakeups_per_s", "ps_preemptions_per_s")
CPU_COLUMNS = CORE_COLUMNS + SWITCH_COLUMNS
MAX_SWITCHES_PER_S = MAX_CPU_CORES * 1e6  # a context switch takes a core more than a microsecond
# a worker's CPU cap: 1 ms of CPU per 1 s CFS period is the least the kernel enforces (validation.cluster_config)
MIN_WORKER_CAP_CORES = MIN_QUOTA_US / MAX_PERIOD_US

# the testbed's settings of a run (validation.testbed_files), the same in every run compared at once; batch_size,
# the link's rate, ps_tasks and placement are checked by validate, which reads them
SETTING_COLUMNS = ("model", "widths", "learning_rate", "warmup_steps", "burst_bytes", "latency_ms", "cpu_cap_ps",
                   "cpu_cap_worker", "cpu_cap_coordinator", "api", "tensorflow_version")

# every column read; another is ignored, unless it is a letter or two off one of these (_refuse_near_miss)
READ_COLUMNS = (*REQUIRED_COLUMNS, "repeat", "batch_size", "ps_tasks", "placement", "worker_caps", "worker_links",
                "bandwidth_bits_per_s", "bandwidth", *CPU_COLUMNS, *SETTING_COLUMNS)

# what tracegen writes with n_workers and steps_per_s columns too: predictions, which would be read as measurements
PREDICTED = {CURVE_COLUMNS: "a curve tracegen predicted (predict's or validate's curve.csv)",
             PLAN_COLUMNS: "a plan tracegen made (plan.csv)"}

MAX_MEASURED_BYTES = 16 << 20  # a campaign of thousands of runs is a few hundred kB
MAX_MEASURED_ROWS = 100_000
MAX_CSV_COLUMNS = 1000  # the testbed writes about 35


HEADER_LINE = "header_line"  # csv_cells' frame.attrs key: the header's line number
RATE_COLUMN = "rate_column"  # read_measured's frame.attrs key: the column the link's rate was read from


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_measured(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and check a measurements CSV; errors name the file, the line and the bad value. Reads at most
    :data:`MAX_MEASURED_BYTES` bytes (counted as read, so pipes and devices are bounded too)."""
    source = os.fspath(path)
    if not os.path.lexists(source):
        raise ConfigError(f"{source}: no such measurements file")
    text = read_csv_text(source, MAX_MEASURED_BYTES)
    frame = csv_cells(text, source)
    header = f"{source}:{frame.attrs.get(HEADER_LINE, 1)}"
    if (predicted := PREDICTED.get(tuple(map(str, frame.columns)))) is not None:
        raise ConfigError(f"{header}: {predicted}, not measurements: a prediction scored against a prediction says "
                          "nothing; give the runs' measured steps_per_s")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ConfigError(f"{header}: missing column {missing[0]!r} (columns: "
                          f"{_short(', '.join(map(str, frame.columns)) or 'none')}; required: "
                          f"{', '.join(REQUIRED_COLUMNS)}){_case_hint(missing[0], frame)}"
                          f"{_separator_hint(list(map(str, frame.columns)))}{_later_header_hint(frame)}")
    _refuse_near_miss([str(c) for c in frame.columns], header)
    if frame.empty:
        raise ConfigError(f"{header}: the header and no measurement rows after it")
    try:
        return _rows(frame, source)
    except ConfigError as exc:
        error = exc
    # the rows are checked a column at a time: of several bad lines, the first in the file is the one to name, as a
    # reader fixes them top down. The shortest head of the rows with a bad one ends at it (a head with a bad row
    # stays bad as rows are added), found by halving
    good, bad = 0, len(frame)
    while bad - good > 1:
        mid = (good + bad) // 2
        try:
            _rows(frame.iloc[:mid], source)
            good = mid
        except ConfigError as exc:
            bad, error = mid, exc
    raise error


def _rows(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The measurement rows of ``frame`` (its header checked), checked column by column."""
    _refuse_a_run_twice(frame, source)
    _refuse_two_settings(frame, source)
    out = pd.DataFrame({
        "n_workers": [_n_workers(v, source, i) for i, v in _cells(frame, "n_workers")],
        "steps_per_s": [_steps_per_s(v, source, i) for i, v in _cells(frame, "steps_per_s")],
    }, index=frame.index)  # each run's line: a value judged later (a cap against the trace's) is named by it
    _read_optional(frame, out, source)
    _refuse_uneven_parts(out, source)
    _refuse_two_rates(out, source)
    return out


def _refuse_uneven_parts(runs: pd.DataFrame, source: str) -> None:
    """ConfigError for a run whose per-worker cell has other than ``n_workers`` parts: the testbed writes a part
    per worker of the run, or none; the longest run's parts were once taken for every run's cluster without a
    word."""
    for column in PER_WORKER_COLUMNS:
        if column in runs.columns:
            for line, n, parts in zip(runs.index, runs["n_workers"], runs[column], strict=True):
                if parts and len(parts) != n:
                    raise ConfigError(f"{source}:{line}: {column!r} has {counted(len(parts), 'part')} for "
                                      f"n_workers {n}; give each worker's value, ';'-joined, one per worker of the run")


_UNIT_SUFFIX = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")  # 'steps_per_s (steps/s)', 'steps_per_s [1/s]'


def _case_hint(name: str, frame: pd.DataFrame) -> str:
    """With a column that is ``name`` in other letter case (``N_workers``, from a spreadsheet): that names are
    read as written, lower case; with one that is ``name`` and a unit in brackets (``steps_per_s (steps/s)``): that
    names are written bare (the unit is the name's own); with a column of samples for the steps: how to have steps."""
    columns = [str(c) for c in frame.columns]
    other = next((c for c in columns if c.strip().lower() == name), None)
    if other is not None:
        return f"; the header's {other!r} would be it: column names are lower case"
    unit = next((c for c in columns if _UNIT_SUFFIX.sub("", c).strip().lower() == name), None)
    if unit is not None:
        return f"; the header's {_short(unit)!r} would be it: write the name alone, its unit is the name's own"
    samples = next((c for c in columns if "sample" in c.lower()), None) if name == "steps_per_s" else None
    if samples is not None:
        return (f"; {_short(samples)!r} is not read: give the steps per second of all workers together (samples/s "
                "over the batch size)")
    return ""


def _later_header_hint(frame: pd.DataFrame) -> str:
    """With a row below the header that names every required column (a title line above the header, as a
    spreadsheet's sheet may have): that the header is the file's first line."""
    for line, cells in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        if all(c in {str(v).strip() for v in cells} for c in REQUIRED_COLUMNS):
            return f"; line {line} names them: the header is the first line, so remove the lines above it"
    return ""


def _refuse_near_miss(columns: list[str], header: str) -> None:
    """ConfigError for a column that is not read but is close to one that is read and absent (``ps_task``,
    ``Batch_size``), or is one with a unit in brackets (``batch_size (samples)``): ignored, the prediction would be
    made without what it says, and look right."""
    absent = [c for c in READ_COLUMNS if c not in columns]
    for column in (c for c in columns if c not in READ_COLUMNS):
        if (bare := _UNIT_SUFFIX.sub("", column).strip().lower()) != column.strip().lower() and bare in absent:
            raise ConfigError(f"{header}: column {_short(column)!r} is no column validate reads; is it {bare!r}? "
                              "Write the name alone, its unit is the name's own (the columns it does not read are "
                              "ignored)")
        meant = difflib.get_close_matches(column.strip().lower(), absent, n=1, cutoff=0.8)
        if meant:
            raise ConfigError(f"{header}: column {_short(column)!r} is no column validate reads; is it {meant[0]!r}? "
                              "(the columns it does not read are ignored, so a misspelt one would be)")


def _separator_hint(header: list[str]) -> str:
    """With a header of one column holding ';' or a tab: what else the file's columns are separated by (a
    spreadsheet that writes decimal commas separates by ';', and its rows then split on the commas)."""
    if len(header) != 1:
        return ""
    name = header[0]
    found = next((what for sep, what in ((";", "';'"), ("\t", "tabs")) if sep in name), None)
    return "" if found is None else f"; its columns are separated by {found}: a CSV's are by commas"


def _n_workers(text: str, source: str, line: int) -> int:
    """An ``n_workers`` cell: from 1 to the most workers a simulation takes."""
    value: int = cell_number(text, int, "n_workers", source, line)
    if value > MAX_WORKERS:
        raise ConfigError(f"{source}:{line}: 'n_workers' must be at most {MAX_WORKERS} (got {_short(text.strip())!r})")
    return value


def _refuse_a_run_twice(frame: pd.DataFrame, source: str) -> None:
    """With a ``repeat`` column, a row whose every cell is an earlier row's is that run written again (a file
    appended to twice): read, it would count as one more repeat and weigh the run twice in the mean."""
    if "repeat" not in frame.columns:
        return
    seen: dict[tuple[str, ...], int] = {}
    for line, cells in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        key = tuple(str(c).strip() for c in cells)
        if key in seen:
            raise ConfigError(f"{source}:{line}: the run of line {seen[key]} again (n_workers "
                              f"{_short(str(frame.at[line, 'n_workers']).strip())}, repeat "
                              f"{_short(str(frame.at[line, 'repeat']).strip())}, every cell the same); keep it once")
        seen[key] = int(line)


def suspect_repeats(runs: pd.DataFrame, source: str) -> list[str]:
    """Warnings for rows :func:`read_measured` took as repeats that look like one run written twice: with a
    ``repeat`` column, the same N and repeat number on two lines (two campaigns appended, or a run copied and
    edited); without one, a row whose every value read is an earlier row's. They are still averaged, as the
    module docstring says, and each line is named so that a mistake can be found."""
    key = ["n_workers", "repeat"] if "repeat" in runs.columns else list(runs.columns)
    found: list[str] = []
    first: dict[tuple[Any, ...], int] = {}
    for line, row in zip(runs.index, runs[key].itertuples(index=False, name=None), strict=True):
        values = tuple(str(v) for v in row)  # NaN (an empty CPU cell) equal to NaN
        if values not in first:
            first[values] = int(line)
            continue
        what = (f"n_workers {values[0]} and repeat {values[1]} as on line {first[values]}" if "repeat" in runs.columns
                else f"every value as on line {first[values]}")
        found.append(f"{source}:{line}: {what}: the same run twice? Averaged with it as a repeat of N={values[0]}")
    return found[:5] + ([f"{source}: {len(found) - 5} more such lines"] if len(found) > 5 else [])


PER_WORKER_FALL = 0.6  # a mean below this share of the smallest N's: no curve measured in data/ falls below 1.1


def suspect_per_worker(runs: pd.DataFrame, source: str) -> list[str]:
    """A warning when the mean rate at a larger N is below :data:`PER_WORKER_FALL` of the smallest N's: that is how
    each worker's own steps per second fall as workers are added, and ``steps_per_s`` counts all workers' steps
    together; every prediction would be N times too high, and look it. Adding workers to an async PS job has not
    cut the total rate so on any testbed run (over the 54 curves measured in ``data/`` the lowest is 1.13), but it
    may, so the runs are still compared."""
    means = runs.groupby("n_workers")["steps_per_s"].mean()
    if len(means) < 2:
        return []
    smallest, first = int(means.index[0]), float(means.iloc[0])
    fallen = [(int(n), float(m)) for n, m in zip(means.index, means, strict=True) if m < PER_WORKER_FALL * first]
    if not fallen:
        return []
    n, mean = fallen[-1]
    return [f"{source}: steps_per_s at N={n} ({mean:.4g}) is {mean / first:.2f} of N={smallest}'s ({first:.4g}), as "
            "each worker's own rate falls; steps_per_s counts the steps of all workers together: are these each "
            "worker's?"]


def _refuse_two_settings(frame: pd.DataFrame, source: str) -> None:
    """Every row's value of each of :data:`SETTING_COLUMNS` the file has is the first row's (module docstring)."""
    for column in (c for c in SETTING_COLUMNS if c in frame.columns):
        cells = _cells(frame, column)
        first_line, first = cells[0]
        for line, cell in cells[1:]:
            if _setting(cell) != _setting(first):
                raise ConfigError(f"{source}:{line}: {column!r} is {_short(cell.strip())!r}, not "
                                  f"{_short(first.strip())!r} as on line {first_line}: runs of two settings would be "
                                  "averaged as repeats of one; compare one setting at a time")


def _refuse_two_rates(runs: pd.DataFrame, source: str) -> None:
    """Every row's link rate is the first row's, as for :data:`SETTING_COLUMNS`, compared once read (the same rate
    may be written ``500Mbit/s`` or ``0.5Gbit/s``)."""
    if "bandwidth_bytes_per_s" not in runs.columns:
        return
    (first_line, first), *rest = zip(runs.index, runs["bandwidth_bytes_per_s"], strict=True)
    for line, rate in rest:
        if rate != first:
            raise ConfigError(f"{source}:{line}: the link's rate is {rate * 8:.15g} bits/s, not {first * 8:.15g} as "
                              f"on line {first_line}: runs of two settings would be averaged as repeats of one; "
                              "compare one setting at a time")


def _setting(cell: str) -> str | float:
    """A setting's cell as it compares: a number as its value (0.30 is 0.3), other text stripped; a number beyond
    a float's range as its text (1e400 and 1e401 are both infinity as floats, and would be one setting)."""
    text = cell.strip()
    if NUMBER.fullmatch(text) and math.isfinite(value := float(text)):
        return value
    return text


def read_csv_text(source: str, max_bytes: int) -> str:
    """The UTF-8 text of regular file ``source``, read bounded (:func:`parsers.files.read_file`: a FIFO or a device
    is refused before it is opened for reading, and one swapped in after the check is caught on what was opened),
    gzip expanded (to at most ``max_bytes`` too). Text that is not UTF-8 is refused naming its line, its column
    and the bytes; a spreadsheet, a UTF-16 export or an empty file is named as such."""
    data = read_expanded(source, max_bytes, ConfigError)
    if not data.strip():
        raise ConfigError(f"{source}: {'empty file' if not data else 'only blank lines'}; a CSV needs a header line "
                          "naming its columns and a row per run")
    for magic, what in _NOT_CSV:
        if data.startswith(magic):
            raise ConfigError(f"{source}: {what}, not CSV text (it begins with {data[:len(magic)]!r}); {_SAVE_AS}")
    try:
        return data.decode("utf-8-sig")  # a spreadsheet's byte-order mark is not part of the first column's name
    except UnicodeDecodeError as exc:
        raise ConfigError(_not_utf8(data, exc, source)) from None


_SAVE_AS = "save it as CSV, UTF-8"
_NOT_CSV = ((b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"),
            (b"PK\x03\x04", "a zip archive (a spreadsheet's .xlsx or .ods?)"),
            (b"\xd0\xcf\x11\xe0", "an old Office document (a spreadsheet's .xls?)"))


def _not_utf8(data: bytes, exc: UnicodeDecodeError, source: str) -> str:
    """Where ``data`` stops being UTF-8: the line, the column (by the header's names) and the bytes, quoted. The
    codec's ``exc.start`` counts from after a byte-order mark, so the file's byte is :func:`not_utf8_at`'s; lines end
    as the CSV reader's do, at ``\\n``, ``\\r\\n`` or a ``\\r`` alone, as every other message here counts them."""
    line, at = not_utf8_at(data, exc, lone_cr=True)
    first = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    start = max(data.rfind(b"\n", first, at), data.rfind(b"\r", first, at), first - 1) + 1
    end = min((i for i in (data.find(b"\n", at), data.find(b"\r", at)) if i >= 0), default=len(data))
    bad = exc.object[exc.start:exc.end]
    cells = _line_cells(data[start:end])
    field, cell = next(((i, c) for i, c in enumerate(cells) if not _is_utf8(c)), (None, b""))
    header = next((h for h in re.split(rb"\r\n?|\n", data[first:start]) if h.strip()), None)
    names = [] if header is None else [n.decode("utf-8", errors="replace").strip() for n in _line_cells(header)]
    where = ("the header" if header is None else f"column {_short(names[field])!r}"
             if field is not None and field < len(names) else "a cell")
    return (f"{source}:{line}: {where}: not UTF-8 text: byte{'s' * (len(bad) > 1)} {bad!r} in "
            f"{_short(repr(cell or bad))}; {_SAVE_AS}")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _line_cells(line: bytes) -> list[bytes]:
    """The cells of one CSV line, as bytes (quotes and escapes read as the csv module reads them)."""
    text = line.rstrip(b"\r").decode("utf-8", errors="surrogateescape")
    try:
        cells = next(csv.reader([text]), [])
    except csv.Error:
        cells = text.split(",")
    return [c.encode("utf-8", errors="surrogateescape") for c in cells]


def csv_cells(text: str, source: str) -> pd.DataFrame:
    """The CSV's cells as text, indexed by their line numbers; blank lines skipped; every row as wide as the
    header, whose names are unique. Also reads the testbed's ``staleness.csv`` (:mod:`validation.staleness`)."""
    reader = Records(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 1
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for line, cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if header is None:
                header, header_line = [c.strip() for c in cells], line  # 'n_workers, steps_per_s'
                _check_header(header, source, line)
            elif len(cells) != len(header) and cells[0].lstrip().startswith("#"):  # blamed for its width alone
                # (a row as wide as the header is a row: a run named '#3')
                raise ConfigError(f"{source}:{line}: a comment line (got {_short(','.join(cells))!r}): this CSV has "
                                  "no comment lines; remove it, or put what it says in a column of its own")
            elif len(cells) != len(header):
                raise ConfigError(f"{source}:{line}: {counted(len(cells), 'cell')}, the header has {len(header)} "
                                  f"(got {_short(','.join(cells))!r}){_separator_hint(header)}"
                                  f"{_decimal_comma_hint(cells, len(header))}")
            elif len(rows) == MAX_MEASURED_ROWS:
                raise ConfigError(f"{source}: more than {MAX_MEASURED_ROWS} rows")
            else:
                rows.append(cells)
                lines.append(line)
    except csv.Error as exc:
        raise ConfigError(f"{source}:{reader.start}: not a readable CSV: {_short(str(exc))}") from None
    if header and (blanks := _trailing_blanks(header)):
        # columns a spreadsheet exports after the last one used ('...,tensorflow_version,,'): with no name and no
        # cell on any row they hold nothing to read, and are dropped, as any column not read is ignored. One that
        # holds a cell is data under no name: ignored as before when alone, refused where '' would be twice
        named = len(header) - blanks
        held = next(((line, k, row[k]) for line, row in zip(lines, rows, strict=True)
                     for k in range(named, len(header)) if row[k].strip()), None)
        if held is None:
            header, rows = header[:named], [row[:named] for row in rows]
        elif blanks > 1 or "" in header[:named]:  # column '' twice
            raise ConfigError(f"{source}:{held[0]}: column {held[1] + 1} has no name in the header (line "
                              f"{header_line}) but holds {_short(held[2])!r}; name it or remove it")
    frame = pd.DataFrame(rows, columns=header or [], index=lines, dtype=str)
    frame.attrs[HEADER_LINE] = header_line
    return frame


def _decimal_comma_hint(cells: list[str], width: int) -> str:
    """With a row wider than the header that holds two whole numbers side by side (``1,10,8154``): that a number
    written with a decimal comma splits in two at it (a spreadsheet's, in a locale that writes them). Which pair
    was one number the row cannot tell (``1,10`` or ``10,8154``), so none is named."""
    if len(cells) <= width or not any(INTEGER.fullmatch(a.strip()) and re.fullmatch(r"[0-9]+", b.strip())
                                      for a, b in itertools.pairwise(cells)):
        return ""
    return "; a number with a decimal comma (10,5) splits in two at it: write a decimal point (10.5)"


def _check_header(header: list[str], source: str, line: int) -> None:
    """ConfigError for a header that is a comment, names more than :data:`MAX_CSV_COLUMNS` columns or one twice."""
    if header[0].lower().startswith("sep=") and len(header) <= 2:  # a spreadsheet's line naming its separator
        raise ConfigError(f"{source}:{line}: a spreadsheet's separator line (got {_short(','.join(header))!r}) where "
                          "the header should be: remove it; the first line names the columns, separated by commas")
    if header[0].startswith("#"):  # else the next line, the header, is blamed for its width
        raise ConfigError(f"{source}:{line}: a comment where the header should be (got "
                          f"{_short(','.join(header))!r}): this CSV has no comment lines; its first line "
                          "names its columns")
    named = len(header) - _trailing_blanks(header)  # a spreadsheet's empty columns: see csv_cells
    if named > MAX_CSV_COLUMNS:  # each is checked against the columns read, and becomes a frame's column: a 4 MB
        # header of 400000 names took 36 s, the 16 MB a file may hold minutes
        raise ConfigError(f"{source}:{line}: the header names {named} columns, more than {MAX_CSV_COLUMNS}: no "
                          "run's measurements have so many")
    if (twice := next((c for c, k in collections.Counter(header[:named]).items() if k > 1), None)) is not None:
        raise ConfigError(f"{source}:{line}: column {_short(twice)!r} appears twice in the header")


def _trailing_blanks(header: list[str]) -> int:
    """How many of the header's last names are empty (a spreadsheet's unused columns: ``...,tensorflow_version,,``);
    the first is never counted: a header that names nothing keeps one, and is refused for the columns it lacks."""
    return next((k for k in range(len(header) - 1) if header[-1 - k]), len(header) - 1)


def _cells(frame: pd.DataFrame, column: str) -> list[tuple[int, str]]:
    """The cells of ``column``, each with its line number (:func:`csv_cells`' index)."""
    return [(int(line), str(cell)) for line, cell in zip(frame.index, frame[column], strict=True)]


def _read_optional(frame: pd.DataFrame, out: pd.DataFrame, source: str) -> None:
    """The optional columns of the module docstring that ``frame`` has, checked, into ``out``."""
    if "repeat" in frame.columns:
        out["repeat"] = [cell_number(v, int, "repeat", source, i, positive=False) for i, v in _cells(frame, "repeat")]
    if "batch_size" in frame.columns:
        out["batch_size"] = [_batch_size(v, source, i) for i, v in _cells(frame, "batch_size")]
    for column in ("model", "widths"):
        if column in frame.columns:
            out[column] = [_short(str(v), 200) for v in frame[column]]
    if "ps_tasks" in frame.columns:  # testbed --ps K; older files have one PS
        out["ps_tasks"] = [_ps_tasks(v, source, i) for i, v in _cells(frame, "ps_tasks")]
    if "placement" in frame.columns:
        out["placement"] = [_short(str(v), 200) for v in frame["placement"]]
    if "worker_caps" in frame.columns:  # testbed --worker-caps: each worker's CPU cap, ';'-joined
        out["worker_caps"] = [_caps(v, source, i) for i, v in _cells(frame, "worker_caps")]
    if "worker_links" in frame.columns:  # testbed --worker-links: each worker's own link, bits/s, ';'-joined
        out["worker_links"] = [tuple(_worker_link(part, source, i) for part in _per_worker_parts(v, "worker_links",
                                                                                                  source, i))
                               for i, v in _cells(frame, "worker_links")]
    _read_bandwidth(frame, out, source)
    for column in CPU_COLUMNS:  # testbed: where each window's CPU went (empty: unknown; older files lack them)
        if column in frame.columns:
            out[column] = [_cpu(v, column, source, i) if str(v).strip() else math.nan for i, v in _cells(frame, column)]


def _cpu(text: str, column: str, source: str, line: int) -> float:
    """A cell of :data:`CPU_COLUMNS`: cores from 0 to a host's most (:data:`parsers.linkprofile.MAX_CPU_CORES`, as a
    link profile's ``ps_cpu_cores``), switches from 0 to as many as those cores could make; 1e300 was read and shown
    as where the CPU went."""
    value: float = cell_number(text, float, column, source, line, positive=False)
    if column in CORE_COLUMNS and value > MAX_CPU_CORES:
        raise ConfigError(f"{source}:{line}: {column!r} must be from 0 to {MAX_CPU_CORES:g} cores: no host has more "
                          f"(got {_short(text.strip())!r})")
    if column in SWITCH_COLUMNS and value > MAX_SWITCHES_PER_S:
        raise ConfigError(f"{source}:{line}: {column!r} must be from 0 to {MAX_SWITCHES_PER_S:.0e} per second: a "
                          f"switch takes a core over a microsecond (got {_short(text.strip())!r})")
    return value + 0.0  # '-0' is 0 cores, not -0.00 in the report


def _batch_size(text: str, source: str, line: int) -> int:
    """A ``batch_size`` cell: from 1 to the largest batch a prediction takes."""
    value: int = cell_number(text, int, "batch_size", source, line)
    if value > MAX_BATCH_SIZE:
        raise ConfigError(f"{source}:{line}: 'batch_size' must be at most 10^9 (got {_short(text.strip())!r})")
    return value


def _ps_tasks(text: str, source: str, line: int) -> int:
    """A ``ps_tasks`` cell: from 1 to the PS shards a prediction places parameters on."""
    value: int = cell_number(text, int, "ps_tasks", source, line)
    if value > MAX_SHARDS:
        raise ConfigError(f"{source}:{line}: 'ps_tasks' must be at most {MAX_SHARDS} (got {_short(text.strip())!r})")
    return value


def _worker_link(text: str, source: str, line: int) -> int:
    """One worker's part of a ``worker_links`` cell, bits/s: 0 (no link of its own) or from 1e3 to 1e13, as a
    worker class's own link (:mod:`parsers.workerclasses`)."""
    value: int = cell_number(text, int, "worker_links", source, line, positive=False, exponent=True)
    if value and not MIN_LINK_BITS_PER_S <= value <= MAX_LINK_BITS_PER_S:
        raise ConfigError(f"{source}:{line}: 'worker_links' must be 0 (none) or from 1e3 to 1e13 bits/s (got "
                          f"{_short(text.strip())!r})")
    return value


def _caps(text: str, source: str, line: int) -> tuple[float, ...]:
    """A ``worker_caps`` cell: cores per worker, ';'-joined (empty: none given), each from the least a CFS quota
    can enforce (:data:`MIN_WORKER_CAP_CORES`) to a host's most (:data:`parsers.linkprofile.MAX_CPU_CORES`). 1e300
    was read, and refused only by validate, as a speed of 8e+300 x the traced worker's: neither the value as typed
    nor which worker's part it was."""
    caps = []
    for k, part in enumerate(_per_worker_parts(text, "worker_caps", source, line)):
        cap: float = cell_number(part, float, "worker_caps", source, line)
        if not MIN_WORKER_CAP_CORES <= cap <= MAX_CPU_CORES:
            raise ConfigError(f"{source}:{line}: 'worker_caps' part {k + 1} (worker {k}) must be from "
                              f"{MIN_WORKER_CAP_CORES:g} to {MAX_CPU_CORES:g} cores (got {_short(part.strip())!r})")
        caps.append(cap)
    return tuple(caps)


def _per_worker_parts(text: str, column: str, source: str, line: int) -> list[str]:
    """The ';'-joined parts of a per-worker cell, worker 1's first; none for an empty cell. An empty part is
    refused: dropped, it would give each worker after it the next one's value."""
    if not text.strip():
        return []
    parts = text.split(";")
    if any(not part.strip() for part in parts):
        raise ConfigError(f"{source}:{line}: {column!r} has an empty part in {_short(text.strip())!r}; give each "
                          "worker's value, ';'-joined")
    return parts


def _read_bandwidth(frame: pd.DataFrame, out: pd.DataFrame, source: str) -> None:
    """The link's rate, from ``bandwidth_bits_per_s`` or ``bandwidth``: one of them, never both (which is meant?)."""
    if "bandwidth_bits_per_s" in frame.columns and "bandwidth" in frame.columns:
        raise ConfigError(f"{source}: columns 'bandwidth_bits_per_s' and 'bandwidth' both give the link's rate; "
                          "keep one")
    if "bandwidth_bits_per_s" in frame.columns:
        out["bandwidth_bytes_per_s"] = [_bandwidth(v, source, i) for i, v in _cells(frame, "bandwidth_bits_per_s")]
        out.attrs[RATE_COLUMN] = "bandwidth_bits_per_s"
    elif "bandwidth" in frame.columns:
        out["bandwidth_bytes_per_s"] = [_rate(v, source, i) for i, v in _cells(frame, "bandwidth")]
        out.attrs[RATE_COLUMN] = "bandwidth"


def _bandwidth(text: str, source: str, line: int) -> float:
    """A ``bandwidth_bits_per_s`` cell, in bytes per second: from 1 kbit/s to 8e15 bit/s, as ``--bandwidth``. A
    rate written with its unit (``500Mbit/s``) is refused with where such a rate goes: ``bandwidth``."""
    try:
        bits = cell_number(text, float, "bandwidth_bits_per_s", source, line)
    except ConfigError as exc:
        try:
            parse_rate(text, what="bandwidth")
        except TracegenConfigError:
            raise exc from None
        raise ConfigError(f"{exc}; a rate with its unit goes in a column named 'bandwidth' instead") from None
    if not 8 * MIN_RATE_BYTES_PER_S <= bits <= 8 * MAX_RATE_BYTES_PER_S:
        raise ConfigError(f"{source}:{line}: 'bandwidth_bits_per_s' must be from 1000 (1 kbit/s) to 8e15 "
                          f"(got {_short(text)!r})")
    return float(bits / 8)


def cell_number(text: str, kind: type[int] | type[float], column: str, source: str, line: int, *,
                positive: bool = True, exponent: bool = False) -> Any:
    """Cell ``text`` of ``column`` on ``line`` as ``kind``, by the rule of every CSV's numbers
    (:func:`parsers.csvfile.cell_float`; an integer without a decimal point or exponent, unless ``exponent``
    allows one where the value is whole, as a rate is written: ``1e8``): >= 0, and > 0 when ``positive``."""
    def fail(why: str) -> ConfigError:
        return ConfigError(f"{source}:{line}: {column!r} {why} (got {_short(text)!r})")

    value: float = (cell_int(text, "must be a whole number" if exponent else "must be an integer", fail,
                             exponent=exponent) if kind is int
                    else cell_float(text, "must be a number", fail))
    if value < 0 or (positive and value == 0):
        raise ConfigError(f"{source}:{line}: {column!r} must be {'> 0' if positive else '>= 0'} (got {_short(text)!r})")
    return value


def _steps_per_s(text: str, source: str, line: int) -> float:
    value: float = cell_number(text, float, "steps_per_s", source, line)
    if not MIN_STEPS_PER_S <= value <= MAX_STEPS_PER_S:  # a million steps a second, or one in 11 days, is no
        # training job's rate: a unit or a column mixed up
        raise ConfigError(f"{source}:{line}: 'steps_per_s' must be from {MIN_STEPS_PER_S:g} to "
                          f"{MAX_STEPS_PER_S:.0e} (got {_short(text)!r})")
    return value


def _rate(text: str, source: str, line: int) -> float:
    """A ``bandwidth`` cell, in bytes per second, read as ``--bandwidth`` is (:func:`tracegen.units.parse_rate`: a
    number alone is refused for want of a unit; one belongs in ``bandwidth_bits_per_s``)."""
    try:
        return float(parse_rate(text, what="bandwidth"))
    except TracegenConfigError as exc:
        raise ConfigError(f"{source}:{line}: {exc}") from exc
