"""Worker classes: a cluster whose workers are not all alike, as CSV (``tracegen predict --worker-classes``).

Format ``tracegen-worker-classes``, version 2 (UTF-8; the shared rules of :mod:`parsers.csvfile`)::

    # tracegen-worker-classes version 2
    name,count,speed,link_bits_per_s
    slow,2,0.5,-
    far,1,1.0,1e8
    standard,*,1.0,-

    name    the class: 1 to 64 characters of ``A-Z a-z 0-9 . _ : + -``, unique in the file whatever its case
            (``Fast`` and ``fast`` name one class, so a second row of either is refused)
    count   how many workers of the class, 1 to 100000 in the digits 0-9 alone (``1e3`` and ``2.0`` are refused),
            or ``*`` (as many as the rest; last row only)
    speed   how fast its CPU runs the traced ops, relative to the node the trace was taken on: 0.5 = every op
            takes twice as long (from 0.001 to 1000)
    link_bits_per_s  the rate of the worker's own network link, each way, bits per second as a provider quotes
            it: a whole number from 1e3 to 1e13, plain or with an exponent (2.5e9), as in an instance catalogue
            (predict takes the same payload fraction of it as of a ``--bandwidth``), or ``-``:
            no link of its own that slows it (the usual case: the PS's link is the shared one). Each of the
            worker's transfers then moves at most that fast.

Version 1 files (``name,count,speed``, no ``link_bits_per_s``) are still read: every class with ``-``.

Workers are numbered in file order: with the file above, N = 3 is two slow workers and one standard one, N = 1
one slow worker. Without a ``*`` row, workers beyond the listed counts run at speed 1.
"""

from __future__ import annotations

import dataclasses
import os

from parsers.csvfile import read_rows
from parsers.errors import TraceFormatError

FORMAT = "tracegen-worker-classes"
VERSION = 2
COLUMNS = ("name", "count", "speed", "link_bits_per_s")
COLUMNS_V1 = ("name", "count", "speed")
MAX_BYTES = 1 << 16
MAX_CLASSES = 100
MAX_COUNT = 100_000
MIN_LINK_BITS_PER_S, MAX_LINK_BITS_PER_S = 1e3, 1e13  # a worker's own link (also a testbed's worker_links cell)


class WorkerClassError(TraceFormatError):
    """A worker-classes file that cannot be read or does not follow the schema."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkerClass:
    """One row: ``count`` None for ``*``; ``link_bits_per_s`` 0 for ``-``; ``line``: the file's line of it."""

    name: str
    count: int | None
    speed: float
    link_bits_per_s: int = 0
    line: int = 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkerClasses:
    """A whole file, rows in order."""

    classes: tuple[WorkerClass, ...]
    source: str = ""

    def of_workers(self, n_workers: int) -> tuple[WorkerClass | None, ...]:
        """The class of workers 0 .. n_workers-1 (None beyond the listed counts)."""
        out: list[WorkerClass | None] = []
        for c in self.classes:
            out += [c] * (n_workers - len(out) if c.count is None else min(c.count, n_workers - len(out)))
        return tuple(out + [None] * (n_workers - len(out)))

    def speeds(self, n_workers: int) -> tuple[float, ...]:
        """The speed of workers 0 .. n_workers-1."""
        return tuple(1.0 if c is None else c.speed for c in self.of_workers(n_workers))

    def links(self, n_workers: int) -> tuple[int, ...]:
        """The own link rate (bits/s, 0 for none) of workers 0 .. n_workers-1; () when no class has one."""
        if not any(c.link_bits_per_s for c in self.classes):
            return ()
        return tuple(0 if c is None else c.link_bits_per_s for c in self.of_workers(n_workers))

    def unreached(self, n_workers: int) -> tuple[WorkerClass, ...]:
        """The classes listed past workers 0 .. n_workers-1: no run of at most ``n_workers`` workers has one."""
        reached = self.of_workers(n_workers)
        return tuple(c for c in self.classes if c not in reached)

    def describe(self) -> str:
        """One line: the classes in order."""
        return ", then ".join(f"{'the rest' if c.count is None else c.count} x {c.name} (speed {c.speed:g}"
                              + (f", own link {c.link_bits_per_s / 1e6:g} Mbit/s)" if c.link_bits_per_s else ")")
                              for c in self.classes)


def read_worker_classes(path: str | os.PathLike[str]) -> WorkerClasses:
    """Read and check a worker-classes file (module docstring)."""
    rows = read_rows(path, fmt=FORMAT, version=VERSION, columns=COLUMNS, error=WorkerClassError,
                     max_bytes=MAX_BYTES, max_rows=MAX_CLASSES, what="worker classes", older={1: COLUMNS_V1})
    source = os.fspath(path)
    classes: list[WorkerClass] = []
    seen: dict[str, tuple[str, int]] = {}  # by the name in lower case, as a catalogue's: Fast and fast are one class
    for i, c in enumerate(rows):
        name = c.name(0)
        if (first := seen.get(name.casefold())) is not None:
            again = "" if first[0] == name else f" ({first[0]!r}: names are the same whatever their case)"
            raise c.fail(0, f"names the class of line {first[1]} again{again}")
        seen[name.casefold()] = (name, c.line)
        if c.text(1) == "*":
            if i != len(rows) - 1:
                raise c.fail(1, "'*' (all the remaining workers) may only be the last row's count")
            count = None
        else:
            # a count is written in digits, as any count of things: '1e3' or '2.0' workers is a slip (a rate's
            # cell pasted into the wrong column), and was read as 1000 and 2
            count = c.whole(1, low=1, high=MAX_COUNT, unit="workers or '*'", exponent=False)
        link = 0
        if len(c.columns) > 3 and c.text(3) != "-":  # a fraction is refused, as a catalogue's rate is
            link = c.whole(3, low=MIN_LINK_BITS_PER_S, high=MAX_LINK_BITS_PER_S, unit="bits per second",
                           rule="must be bits per second from 1e3 to 1e13 (a plain number: 1e8 for 100 Mbit/s), or "
                                "'-' for no link of its own")
        classes.append(WorkerClass(name=name, count=count, speed=c.number(2, low=1e-3, high=1e3, low_open=False),
                                   link_bits_per_s=link, line=c.line))
    return WorkerClasses(classes=tuple(classes), source=source)
