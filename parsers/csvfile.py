"""Small versioned CSV inputs (an instance catalogue, worker classes): the shared reading and checking; and the
one rule for a number in a cell of any CSV tracegen reads (:func:`cell_float`, :func:`cell_int`).

Such a file is UTF-8 (gzipped or not), its lines ended by ``\\n``, ``\\r\\n`` or ``\\r`` alone; its first line
names the format and version (``# tracegen-catalogue version 1``), further lines starting with ``#`` are comments,
blank lines are skipped, and a header row with exactly the format's columns comes first. Every problem is one line
naming the file, the line and, for a cell, its column and value.

A number in a cell is written with the ASCII digits 0-9, an optional ``-`` (a column's range then refuses it
where it cannot be negative), a decimal point and an exponent (``2.5e9``) where the column takes them, with white
space around it only, and at most :data:`MAX_NUMBER_CHARS` characters; its value is finite. Python's ``int`` and
``float`` also take ``+5``, ``1_000``, ``\\uff11\\uff12`` (full-width 12), ``٣`` (Arabic-Indic), ``nan`` and ``inf``: no
spreadsheet or tracegen writes them, and each reader took a different few of them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal

from parsers.errors import TraceFormatError, counted, quoted
from parsers.files import not_utf8_at, read_expanded

NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")  # [0-9], not \d: full-width digits are \d
INTEGER = re.compile(r"-?[0-9]+")
_COMMA_NUMBER = re.compile(r"-?[0-9]+(?:,[0-9]+)+(?:\.[0-9]*)?")
MAX_NUMBER_CHARS = 400  # more is no column's value; int() refuses 4300 digits
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")


class Records:
    """The records of CSV ``lines`` (:func:`csv.reader`'s), each with the line it starts on. A quoted cell may hold
    line breaks, so the reader's ``line_num`` is a record's last line: a stray quote runs on through the rows below
    to the end of the file, and a refusal there names the wrong line. ``start`` is the first line of the record
    being read, also while its :class:`csv.Error` is raised."""

    def __init__(self, lines: Iterable[str], *, strict: bool = False) -> None:
        self._reader = csv.reader(lines, strict=strict)
        self.start = 1

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        for cells in self._reader:
            yield self.start, cells
            self.start = self._reader.line_num + 1


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

    def number(self, col: int, *, low: float, high: float, low_open: bool = True, rule: str | None = None) -> float:
        """A number from ``low`` (excluded when ``low_open``) to ``high`` (:func:`cell_float`); ``rule``: the words
        of a refusal, by default the range."""
        rule = rule or f"must be a number {'>' if low_open else '>='} {low:g} and <= {high:g}"
        value = cell_float(self.text(col), rule, lambda why: self.fail(col, why))
        if not ((value > low if low_open else value >= low) and value <= high):
            raise self.fail(col, rule)
        return value

    def whole(self, col: int, *, low: float, high: float, unit: str, rule: str | None = None,
              exponent: bool = True) -> int:
        """A whole number of ``unit`` from ``low`` to ``high``, plain or, where ``exponent``, with an exponent
        (``2.5e9``, as a rate is quoted); a fraction is refused, not rounded (:func:`cell_int`)."""
        self.number(col, low=low, high=high, low_open=False, rule=rule)
        return cell_int(self.text(col), f"must be a whole number of {unit}", lambda why: self.fail(col, why),
                        exponent=exponent)


def _cell_decimal(cell: str, rule: str, fail: Callable[[str], Exception], pattern: re.Pattern[str]) -> Decimal:
    text = cell.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise fail(f"has more than {MAX_NUMBER_CHARS} characters")
    if not pattern.fullmatch(text):
        if any(c.isdigit() and not c.isascii() for c in text):
            raise fail(f"{rule}, written with the digits 0-9")
        if _COMMA_NUMBER.fullmatch(text):  # '1,234.5' or '2,5', as a spreadsheet formats them for people
            raise fail(f"{rule}, written without a comma: no thousands separators, and a decimal point (2.5)")
        if pattern is INTEGER and NUMBER.fullmatch(text) and _whole(Decimal(text)):  # '1e0' and '2.0': whole, but
            # not written as this column's are; '2.5' is told the rule alone
            raise fail(f"{rule}, written in the digits 0-9 alone: no exponent or decimal point")
        raise fail(rule)
    return Decimal(text)


def _whole(value: Decimal) -> bool:
    """Whether ``value`` is a whole number, compared without ``%``: past 28 digits, decimal's precision, that raises;
    nor rounded, where a huge exponent would take a while (``1e999999999`` is whole)."""
    return value.adjusted() >= MAX_NUMBER_CHARS or value == value.to_integral_value()


def cell_float(cell: str, rule: str, fail: Callable[[str], Exception]) -> float:
    """The number in CSV cell ``cell`` (module docstring: ASCII digits, maybe a ``-``, a decimal point and an
    exponent), finite. A refusal is ``fail(why)``, ``why`` being ``rule`` (the column's words: "must be a number")
    or what else was wrong; ``fail`` names the file, the line, the column and the cell."""
    value = float(_cell_decimal(cell, rule, fail, NUMBER))
    if not math.isfinite(value):  # 1e999
        raise fail("is too large")
    return value


def cell_int(cell: str, rule: str, fail: Callable[[str], Exception], *, exponent: bool = False) -> int:
    """The whole number in CSV cell ``cell``: ASCII digits, maybe a ``-``; with ``exponent`` also a decimal point
    and an exponent if the value is whole (``2.5e9``, ``1e3``); :func:`cell_float`'s ``rule`` and ``fail``."""
    value = _cell_decimal(cell, rule, fail, NUMBER if exponent else INTEGER)
    if value.adjusted() >= MAX_NUMBER_CHARS:  # 1e999999999 is short, and its int() is not
        raise fail("is too large")
    if value != value.to_integral_value():  # not 'value % 1': past 28 digits, decimal's precision, that raises
        raise fail(rule)
    return int(value)


def read_rows(path: str | os.PathLike[str], *, fmt: str, version: int, columns: tuple[str, ...],
              error: type[TraceFormatError], max_bytes: int, max_rows: int, what: str,
              older: dict[int, tuple[str, ...]] | None = None) -> list[Cells]:
    """The data rows of a versioned CSV file (module docstring), after checking its first line and header; at
    least one, else the file is refused naming the header's line and ``what`` the rows are ("worker classes").
    ``older``: earlier versions still read, with their columns (the rows' ``columns`` tell which one a file is)."""
    source = os.fspath(path)
    data = read_expanded(source, max_bytes, error)  # gzipped, as a trace may be
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, at = not_utf8_at(data, exc, lone_cr=True)
        raise error(f"{source}: line {line}: not UTF-8 text: {exc.object[exc.start : exc.end]!r} at byte {at}; "
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
    if len(rows) == 1:
        raise error(f"{source}: line {rows[0][0]}: the header and no {what} after it")
    if len(rows) - 1 > max_rows:
        raise error(f"{source}: more than {max_rows} rows")
    return [Cells(source, line, row, columns, error) for line, row in rows[1:]]


def _rows(text: str, source: str, columns: tuple[str, ...],
          error: type[TraceFormatError]) -> list[tuple[int, tuple[str, ...]]]:
    """(line, cells) of every row that is not blank or a comment, the header first."""
    # a comment is a line, not a row: its text is never read as CSV, where a quote in it would open a cell that
    # runs on through the rows below; it is passed on as a blank line, so that line numbers stay the file's
    lines = ("\n" if line.lstrip().startswith("#") else line for line in io.StringIO(text, newline=""))
    reader = Records(lines, strict=True)
    rows: list[tuple[int, tuple[str, ...]]] = []
    try:
        for line, cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if not rows and (got := tuple(c.strip() for c in cells)) != columns:  # before any row is measured
                # the first column that differs, named: the header quoted whole was cut short in the middle
                same = min(len(got), len(columns))
                i = next((i for i, (g, c) in enumerate(zip(got, columns, strict=False)) if g != c), same)
                where = (f"column {i + 1} is {quoted(got[i], 40)}, not {columns[i]!r}" if i < same
                         else f"column {i + 1} ({columns[i]}) is missing" if i < len(columns)
                         else f"column {i + 1} ({quoted(got[i], 40)}) is one more than its columns")
                raise error(f"{source}: line {line}: the header must be {','.join(columns)}: {where}")
            if rows and len(cells) != len(columns):
                where = (f"column {len(cells) + 1} ({columns[len(cells)]}) is missing" if len(cells) < len(columns)
                         else f"column {len(columns) + 1} is one more than the header's")
                raise error(f"{source}: line {line}: {counted(len(cells), 'cell')}, expected {len(columns)}: {where}")
            rows.append((line, tuple(c.strip() for c in cells)))
    except csv.Error as exc:
        raise error(f"{source}: line {reader.start}: not CSV: {exc}") from None
    return rows
