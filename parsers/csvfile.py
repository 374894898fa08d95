"""Small versioned CSV inputs (an instance catalogue, worker classes): the shared reading and checking.

Such a file is UTF-8, its lines ended by ``\\n``, ``\\r\\n`` or ``\\r`` alone; its first line names the format
and version (``# tracegen-catalogue version 1``), further lines starting with ``#`` are comments, blank lines are
skipped, and a header row with exactly the format's columns comes first. Every problem is one line naming the
file, the line and, for a cell, its column and value.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re

from parsers.errors import TraceFormatError, quoted
from parsers.files import read_file

_NUMBER = re.compile(r"^\+?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclasses.dataclass(frozen=True, slots=True)
class Cells:
    """Checks one row's cells, raising ``error`` naming the file, line and column."""

    source: str
    line: int
    row: tuple[str, ...]
    columns: tuple[str, ...]
    error: type[TraceFormatError]

    def fail(self, col: int, rule: str) -> TraceFormatError:
        return self.error(f"{self.source}: line {self.line}, column {col + 1} ({self.columns[col]}): {rule} "
                          f"(got {quoted(self.row[col])})")

    def text(self, col: int) -> str:
        return self.row[col].strip()

    def name(self, col: int) -> str:
        """A name: 1 to 64 characters of ``A-Z a-z 0-9 . _ : + -``, starting with a letter or digit."""
        cell = self.text(col)
        if not _NAME.match(cell):
            raise self.fail(col, "must be 1 to 64 characters of A-Z a-z 0-9 . _ : + - (starting with a letter or "
                                 "digit)")
        return cell

    def number(self, col: int, *, low: float, high: float, low_open: bool = True) -> float:
        cell = self.text(col)
        value = float(cell) if _NUMBER.match(cell) else None
        ok = value is not None and (value > low if low_open else value >= low) and value <= high
        if value is None or not ok:
            raise self.fail(col, f"must be a number {'>' if low_open else '>='} {low:g} and <= {high:g}")
        return value


def read_rows(path: str | os.PathLike[str], *, fmt: str, version: int, columns: tuple[str, ...],
              error: type[TraceFormatError], max_bytes: int, max_rows: int,
              older: dict[int, tuple[str, ...]] | None = None) -> list[Cells]:
    """The data rows of a versioned CSV file (module docstring), after checking its first line and header.
    ``older``: earlier versions still read, with their columns (the rows' ``columns`` tell which one a file is)."""
    source = os.fspath(path)
    data = read_file(source, max_bytes, error)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = 1 + len(_LINE_END.findall(data[: exc.start].decode("utf-8-sig")))
        raise error(f"{source}: line {line}: not UTF-8 text: {exc.object[exc.start : exc.end]!r} at byte {exc.start}; "
                    "save it as UTF-8") from None
    if not text.strip():
        raise error(f"{source}: file is empty; line 1 must be {f'# {fmt} version {version}'!r}, then a header")
    known = {**(older or {}), version: columns}
    by_text = {str(v): v for v in known}  # compared as written: int() takes '²'.isdigit() or 5000 digits badly
    first = next(io.StringIO(text, newline=""), "").strip()  # a line ends as the CSV reader's do: \n, \r\n or \r
    m = re.match(rf"^#\s*{re.escape(fmt)}\s+version\s+(\S+)\s*$", first)
    if m is not None and m[1] not in by_text:
        versions = " or ".join(str(v) for v in sorted(known))
        raise error(f"{source}: line 1: version {quoted(m[1])} is not supported (this reader knows "
                    f"version {versions})")
    file_version = version if m is None else by_text[m[1]]
    if first != f"# {fmt} version {file_version}":
        raise error(f"{source}: line 1 must be {f'# {fmt} version {file_version}'!r} (got {quoted(first)})")
    columns = known[file_version]
    rows = _rows(text, source, columns, error)
    if not rows:  # line 1 is the version line, which is there: it is the header that is not
        raise error(f"{source}: no header after line 1: it must be {','.join(columns)}")
    if len(rows) - 1 > max_rows:
        raise error(f"{source}: more than {max_rows} rows")
    return [Cells(source, line, row, columns, error) for line, row in rows[1:]]


def _rows(text: str, source: str, columns: tuple[str, ...],
          error: type[TraceFormatError]) -> list[tuple[int, tuple[str, ...]]]:
    """(line, cells) of every row that is not blank or a comment, the header first."""
    # a comment is a line, not a row: its text is never read as CSV, where a quote in it would open a cell that
    # runs on through the rows below; it is passed on as a blank line, so that line numbers stay the file's
    lines = ("\n" if line.lstrip().startswith("#") else line for line in io.StringIO(text, newline=""))
    reader = csv.reader(lines, strict=True)
    rows: list[tuple[int, tuple[str, ...]]] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if not rows and tuple(c.strip() for c in cells) != columns:  # before any row is measured against it
                raise error(f"{source}: line {line}: the header must be {','.join(columns)} "
                            f"(got {quoted(','.join(c.strip() for c in cells))})")
            if rows and len(cells) != len(columns):
                where = (f"column {len(cells) + 1} ({columns[len(cells)]}) is missing" if len(cells) < len(columns)
                         else f"column {len(columns) + 1} is one more than the header's")
                raise error(f"{source}: line {line}: {len(cells)} cells, expected {len(columns)}: {where}")
            rows.append((line, tuple(c.strip() for c in cells)))
    except csv.Error as exc:
        raise error(f"{source}: line {reader.line_num}: not CSV: {exc}") from None
    return rows
