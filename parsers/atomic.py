"""Atomic file writes: a reader sees the old file or the whole new one, never a half-written file."""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile
from collections.abc import Iterator
from typing import IO, Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it is synced and renamed onto ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was. The new file gets the
    permissions a plain ``open`` would give it (0666 less the umask).
    """
    target = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        pathlib.Path(tmp).replace(target)
    finally:
        pathlib.Path(tmp).unlink(missing_ok=True)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`open_atomic`)."""
    with open_atomic(path, "wb") as fh:
        fh.write(data)
