"""Atomic file writes: a reader sees the old file or the whole new one, never a half-written file.

The new bytes go into a temporary file beside the target, ``.NAME.<pid>.<16 hex digits>.tmp``, renamed onto it
once they are all written and synced. The writer holds an exclusive ``flock`` on it from its creation until after
the rename. A writer killed outright (SIGKILL, a machine that stopped) leaves it behind; the next write of the same
target removes such files, each only when its owner is gone: the process its name gives is no live one on this
machine (``os.kill(pid, 0)``) and nobody holds its lock (a writer in another PID namespace, a container's, whose
pid means nothing here, still does). A temporary file named as before 2026-12-06, ``.NAME.<16 hex digits>.tmp``,
names no owner and is left to :class:`tracegen.outputs.OutputDir`, which removes it under its folder's lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import re
import secrets
import stat
from collections.abc import Iterator, Sequence
from typing import IO, Any

_TEMP_TAIL = re.compile(r"(?P<pid>[1-9][0-9]{0,9})\.[0-9a-f]{16}\.tmp")  # after '.NAME.'
_TEMPORARY = re.compile(r"\..+\.(?:[1-9][0-9]{0,9}\.)?[0-9a-f]{16}\.tmp")  # either form, any target


def is_temporary(name: str) -> bool:
    """Whether ``name`` is that of a temporary file this module makes (or made before 2026-12-06, without a pid)."""
    return _TEMPORARY.fullmatch(name) is not None


def named_by_no_owner(name: str) -> bool:
    """Whether ``name`` is that of a temporary file this module made before 2026-12-06, without its writer's pid
    (:func:`owner_gone` can tell nothing of it): one an older tracegen's killed run left."""
    return is_temporary(name) and _pid_of(name) is None


def owner_gone(path: pathlib.Path) -> bool:
    """Whether ``path``, a temporary file this module made (:func:`is_temporary`), is one whose writer is gone: the
    pid in its name is no live process here, and its lock is free. False for a name without a pid (a temporary
    file of before 2026-12-06), for a live pid (or one reused since: the file is left, never a live one taken), for
    a lock held, and for anything that is not a regular file this process may open."""
    pid = _pid_of(path.name)
    if pid is None or _alive(pid):
        return False
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # gone already, a link, another user's: left as it is
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # its writer holds it: alive, whatever its pid says here
        return False
    except OSError:  # a file system without flock: the pid alone tells
        return True
    finally:
        os.close(fd)
    return True


def _pid_of(name: str) -> int | None:
    match = _TEMP_TAIL.search(name)
    return int(match["pid"]) if match is not None and match.end() == len(name) else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's (EPERM), or beyond any pid: not known to be gone
        return True
    return True


def remove_stale(target: pathlib.Path) -> list[pathlib.Path]:
    """Remove the temporary files of ``target`` (``.NAME.<pid>.<hex>.tmp`` beside it) whose writer is gone
    (:func:`owner_gone`); the ones removed. Quietly does nothing where the folder cannot be listed: the write that
    follows says what is wrong with it."""
    prefix, removed = f".{target.name}.", []
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            tail = entry.name[len(prefix):]
            if entry.name.startswith(prefix) and _TEMP_TAIL.fullmatch(tail) and owner_gone(pathlib.Path(entry.path)):
                with contextlib.suppress(FileNotFoundError):
                    pathlib.Path(entry.path).unlink()
                    removed.append(pathlib.Path(entry.path))
    return removed


def _create_beside(target: pathlib.Path, created: list[pathlib.Path]) -> int:
    """The descriptor of a new temporary file beside ``target`` (``.NAME.<pid>.<16 hex digits>.tmp``), locked
    (``flock``) for as long as the descriptor is open, its path appended to ``created`` before it is made: a
    KeyboardInterrupt that lands just after the file exists still leaves it in the caller's list to remove (a
    sweep's Ctrl-C while it writes a part). Those a killed writer left of ``target`` are removed first
    (:func:`remove_stale`)."""
    remove_stale(target)
    for _ in range(100):
        created.append(target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"))
        try:
            fd = os.open(created[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)  # the umask applies
        except FileExistsError:
            created.pop()  # another writer's: not ours to remove
            continue
        except OSError as exc:  # a folder missing or not writable: named as the path the caller asked for
            created.pop()
            raise _about(exc, target) from None
        with contextlib.suppress(OSError):  # a file system without flock: the pid in the name alone tells
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    raise FileExistsError(f"{target}: no free temporary name beside it in 100 tries")


def _replace(tmp: pathlib.Path, target: pathlib.Path) -> None:
    try:
        tmp.replace(target)
    except OSError as exc:  # a directory where the file should go, say
        raise _about(exc, target) from None


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it is synced and renamed onto ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was. The new file gets the
    permissions a plain ``open`` would give it (0666 less the umask); the temporary file never outlives the
    block, however it ends (:func:`_create_beside`).
    """
    target = pathlib.Path(path)
    created: list[pathlib.Path] = []
    try:
        fd = _create_beside(target, created)
        with _writing(target), os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            _replace(created[0], target)  # before the descriptor, and so its lock, is let go
    finally:
        for tmp in created:
            tmp.unlink(missing_ok=True)


def write_set_atomic(files: Sequence[tuple[pathlib.Path, bytes]]) -> None:
    """Write several files as one set: every one into a synced temporary file beside it first, then each renamed
    into place; a failure before the renames (a full disk, an interrupt) leaves every old file as it was and
    removes the temporary ones. Only a failing rename, which moves no data, can leave the set half replaced."""
    with staged_set(files):
        pass


@contextlib.contextmanager
def staged_set(files: Sequence[tuple[pathlib.Path, bytes]]) -> Iterator[None]:
    """Write ``files`` as :func:`write_set_atomic` does, but rename them into place only once the block has ended
    cleanly: what the block writes atomically itself (a Chrome trace streamed to its file) joins the set, and a
    failure in it leaves every file of the set as it was."""
    created: list[pathlib.Path] = []
    with contextlib.ExitStack() as open_files:  # each kept open, so locked, until it is renamed into place
        try:
            for target, data in files:
                with _writing(target):
                    fh = open_files.enter_context(os.fdopen(_create_beside(target, created), "wb"))
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            yield
            for tmp, (target, _) in zip(created, files, strict=True):
                _replace(tmp, target)
        finally:
            for tmp in created:
                tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _writing(target: pathlib.Path) -> Iterator[None]:
    """An error that names no file while ``target``'s temporary file is written (a full disk, a quota, a size
    limit: ``write`` and ``fsync`` name none) is raised naming ``target``: the command line said only 'cannot
    write its output'."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise _about(exc, target) from None


def _about(exc: OSError, target: pathlib.Path) -> OSError:
    """``exc`` naming ``target``, not the temporary file beside it, which the user never asked for (``OSError``
    with an errno makes the same subclass: PermissionError, IsADirectoryError, ...)."""
    return OSError(exc.errno, exc.strerror, os.fspath(target)) if exc.errno else exc


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`open_atomic`)."""
    with open_atomic(path, "wb") as fh:
        fh.write(data)
