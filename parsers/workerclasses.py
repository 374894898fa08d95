"""Worker classes: a cluster whose workers are not all alike, as CSV (``tracegen predict --worker-classes``).

Format ``tracegen-worker-classes``, version 1 (UTF-8; the shared rules of :mod:`parsers.csvfile`)::

    # tracegen-worker-classes version 1
    name,count,speed
    slow,2,0.5
    standard,*,1.0

    name    the class: 1 to 64 characters of ``A-Z a-z 0-9 . _ : + -``, unique in the file
    count   how many workers of the class, 1 to 100000, or ``*`` (as many as the rest; last row only)
    speed   how fast its CPU runs the traced ops, relative to the node the trace was taken on: 0.5 = every op
            takes twice as long (from 0.001 to 1000)

Workers are numbered in file order: with the file above, N = 3 is two slow workers and one standard one, N = 1
one slow worker. Without a ``*`` row, workers beyond the listed counts run at speed 1.
"""

from __future__ import annotations

import dataclasses
import os

from parsers.csvfile import read_rows
from parsers.errors import TraceFormatError

FORMAT = "tracegen-worker-classes"
VERSION = 1
COLUMNS = ("name", "count", "speed")
MAX_BYTES = 1 << 16
MAX_CLASSES = 100
MAX_COUNT = 100_000


class WorkerClassError(TraceFormatError):
    """A worker-classes file that cannot be read or does not follow the schema."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkerClass:
    """One row: ``count`` None for ``*``."""

    name: str
    count: int | None
    speed: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkerClasses:
    """A whole file, rows in order."""

    classes: tuple[WorkerClass, ...]
    source: str = ""

    def speeds(self, n_workers: int) -> tuple[float, ...]:
        """The speed of workers 0 .. n_workers-1."""
        out: list[float] = []
        for c in self.classes:
            out += [c.speed] * (n_workers - len(out) if c.count is None else min(c.count, n_workers - len(out)))
        return tuple(out + [1.0] * (n_workers - len(out)))

    def describe(self) -> str:
        """One line: the classes in order."""
        return ", then ".join(f"{'the rest' if c.count is None else c.count} x {c.name} (speed {c.speed:g})"
                              for c in self.classes)


def read_worker_classes(path: str | os.PathLike[str]) -> WorkerClasses:
    """Read and check a worker-classes file (module docstring)."""
    rows = read_rows(path, fmt=FORMAT, version=VERSION, columns=COLUMNS, error=WorkerClassError,
                     max_bytes=MAX_BYTES, max_rows=MAX_CLASSES)
    source = os.fspath(path)
    if not rows:
        raise WorkerClassError(f"{source}: no worker classes after the header")
    classes: list[WorkerClass] = []
    seen: set[str] = set()
    for i, c in enumerate(rows):
        name = c.name(0)
        if name in seen:
            raise c.fail(0, "names another row's class again")
        seen.add(name)
        if c.text(1) == "*":
            if i != len(rows) - 1:
                raise c.fail(1, "'*' (all the remaining workers) may only be the last row's count")
            count = None
        else:
            value = c.number(1, low=1, high=MAX_COUNT, low_open=False)
            if value != int(value):
                raise c.fail(1, "must be a whole number of workers or '*'")
            count = int(value)
        classes.append(WorkerClass(name=name, count=count, speed=c.number(2, low=1e-3, high=1e3, low_open=False)))
    return WorkerClasses(classes=tuple(classes), source=source)
