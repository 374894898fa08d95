"""An output directory a command writes into, safely.

- One run at a time: the run holds an exclusive lock on ``DIR/.tracegen.lock``; a second run into the same
  directory is refused at once, before any work.
- Checked before any work: the directory is created if needed and must be writable; files this run will write
  that already exist are refused unless ``force``.
- With ``force``, every file the previous run wrote (listed in ``DIR/.tracegen-run.json``) is removed first, so
  no file of an older run (a ``traces/n4.json`` the new run does not write) is left beside the new ones.
- Files are written atomically (:mod:`parsers.atomic`); temporary files that a killed run left (``.*.tmp``) are
  removed when the next run takes the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pathlib
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import IO, Any

from parsers.atomic import write_bytes_atomic
from tracegen.errors import ConfigError

LOCK_NAME = ".tracegen.lock"
MANIFEST_NAME = ".tracegen-run.json"


class OutputDir:
    """Use as a context manager: ``with OutputDir(path, planned, force=...) as out: out.write(name, data)``."""

    def __init__(self, path: str | os.PathLike[str], planned: Sequence[str], *, force: bool = False) -> None:
        text = os.fspath(path)
        if not text.strip():
            raise ConfigError("'out' must name a directory (got an empty string)")
        self.root = pathlib.Path(text)
        self.planned = tuple(planned)
        self.force = force
        self.written: list[str] = []
        self._lock: IO[Any] | None = None

    def path(self, name: str) -> pathlib.Path:
        """Where ``name`` (relative, may hold one folder) goes; its folder is created."""
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write(self, name: str, data: bytes) -> pathlib.Path:
        """Write ``data`` to ``name`` atomically and record it as this run's."""
        target = self.path(name)
        write_bytes_atomic(target, data)
        self._record(name)
        return target

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[pathlib.Path]:
        """The path for a writer that writes atomically itself; recorded as this run's when the block ends."""
        yield self.path(name)
        self._record(name)

    def _record(self, name: str) -> None:
        if name not in self.written:
            self.written.append(name)

    def __enter__(self) -> OutputDir:
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"{self.root}: is a file, not a directory; --out names the directory to write into")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._lock = (self.root / LOCK_NAME).open("a")
        except OSError as exc:
            raise ConfigError(f"{self.root}: cannot write here: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lock.close()
            self._lock = None
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise ConfigError(f"{self.root}: another tracegen run is writing into this directory") from None
            raise ConfigError(f"{self.root}: cannot lock: {exc.strerror or exc}") from exc
        try:
            self._prepare()
        except BaseException:
            self._release()
            raise
        return self

    def _prepare(self) -> None:
        for stale in self.root.rglob(".*.tmp"):
            stale.unlink(missing_ok=True)
        existing = [n for n in self.planned if (self.root / n).exists()]
        if existing and not self.force:
            raise ConfigError(f"{self.root / existing[0]}: already exists; pass --force to replace the previous run")
        if self.force:
            for name in [*self._previous(), *existing]:
                target = self.root / name
                if target.is_file():
                    target.unlink()
        probe = self.root / ".tracegen-write-check.tmp"
        try:
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise ConfigError(f"{self.root}: cannot write here: {exc.strerror or exc}") from exc

    def _previous(self) -> list[str]:
        try:
            listed = json.loads((self.root / MANIFEST_NAME).read_text(encoding="utf-8")).get("files", [])
        except (OSError, ValueError, AttributeError):
            return []
        # only plain relative names inside this directory: a manifest is never a way to delete anything else
        return [n for n in listed if isinstance(n, str) and n and not n.startswith(("/", ".."))
                and ".." not in pathlib.PurePath(n).parts]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self.written:
                write_bytes_atomic(self.root / MANIFEST_NAME,
                                   (json.dumps({"files": self.written}, indent=1) + "\n").encode())
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def refuse_existing(paths: Sequence[pathlib.Path], force: bool) -> None:
    """ConfigError naming the first of ``paths`` that exists, unless ``force``: outputs never silently replace
    what a user has."""
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise ConfigError(f"{existing[0]}: already exists; pass --force to overwrite")
