"""An output directory a command writes into, safely.

- One run at a time: the run holds an exclusive lock on ``DIR/.tracegen.lock``; a second run into the same
  directory is refused at once, before any work.
- Checked before any work: the directory is created if needed and must be writable; files this run will write
  that already exist are refused unless ``force``, and so is a file where this run needs a folder (a user's
  ``traces``). Checked again for every file before the first is moved into place. A file this run reads
  (``inputs``: a testbed's ``staleness.csv`` in the folder a report goes to) is refused as an output even with
  ``force``: it is no earlier run's output, and replacing it would lose the measurement.
- Nothing the user had is touched until the run has succeeded: files are written into ``DIR/.tracegen-staging/``
  and moved into place (each by one rename) when the run ends without an error, with SIGINT, SIGTERM and SIGHUP
  held back until all are (a signal then stops the run with every new file in place). A run that fails or is
  interrupted leaves the previous outputs as they were (and its staged files are removed).
- With ``force``, the files the previous run of the same command wrote (listed in ``DIR/.tracegen-run.json``)
  that this run did not write are removed once it has succeeded, so no file of an older run (a
  ``traces/n4.json`` the new run does not write) is left beside the new ones. Another command's files (predict's
  beside a plan) are left, and one this run would write is refused before any work, even with ``force``: it is
  no earlier run's of this command, and replacing it would leave the rest of that command's run beside a file
  that is not of it.
- What a killed run left is removed when the next run takes the lock: the staging directory and tracegen's own
  temporary files in the folders it writes into (:mod:`parsers.atomic`: ``.NAME.<pid>.<16 hex digits>.tmp`` whose
  writer is gone, and those of before 2026-12-06 named without a pid, ``.NAME.<16 hex digits>.tmp``), nothing
  else.
- A run that fails or is refused leaves no trace of itself: the lock file, when this run created it, and the
  directories it created for ``DIR``, when nothing else is in them, are removed again. A lock file that was
  there before (an earlier run's) stays.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pathlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import IO, Any

from parsers.atomic import is_temporary, named_by_no_owner, owner_gone, write_bytes_atomic
from parsers.files import broken_link, not_regular
from parsers.sweepdata import part_paths
from tracegen.errors import ConfigError
from tracegen.signals import held

LOCK_NAME = ".tracegen.lock"
MANIFEST_NAME = ".tracegen-run.json"
STAGING_NAME = ".tracegen-staging"


class OutputDir:
    """Use as a context manager: ``with OutputDir(path, planned, force=...) as out: out.write(name, data)``."""

    def __init__(self, path: str | os.PathLike[str], planned: Sequence[str], *, force: bool = False,
                 command: str = "", inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
        text = os.fspath(path)
        if not text.strip():
            raise ConfigError("'out' must name a directory (got an empty string)")
        self.root = pathlib.Path(text)
        self.planned = tuple(planned)
        self.force = force
        self.command = command  # which command's run: --force removes only the same command's older files
        self.inputs = tuple(pathlib.Path(p) for p in inputs)  # never replaced, whatever force
        self.written: list[str] = []
        self._lock: IO[Any] | None = None
        self._created: list[pathlib.Path] = []  # DIR and the parents this run made, DIR first
        self._made_lock = False  # whether this run created DIR/.tracegen.lock

    def path(self, name: str) -> pathlib.Path:
        """Where ``name`` (relative, may hold one folder) will be once the run has succeeded."""
        return self.root / name

    def free_bytes(self) -> int:
        """Bytes free on the file system the outputs go to (that of the nearest folder that exists)."""
        place = self.root.absolute()
        while not place.is_dir() and place != place.parent:
            place = place.parent
        return shutil.disk_usage(place).free

    def _staged(self, name: str) -> pathlib.Path:
        target = self.root / STAGING_NAME / name
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write(self, name: str, data: bytes | str) -> pathlib.Path:
        """Stage ``data`` as ``name``, recorded as this run's; the path it will have (:meth:`path`). Text is
        written as UTF-8, a name in it that is not UTF-8 (a path's byte as ``os.fsdecode`` keeps it, a lone
        surrogate) as its escape, ``\\udcfe``: a report about such a folder is still written."""
        if isinstance(data, str):
            data = data.encode("utf-8", "backslashreplace")
        with self._named(name):
            write_bytes_atomic(self._staged(name), data)
        self._record(name)
        return self.path(name)

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[pathlib.Path]:
        """A path to write ``name`` to (staged); recorded as this run's when the block ends."""
        with self._named(name):
            yield self._staged(name)
        self._record(name)

    @contextlib.contextmanager
    def _named(self, name: str) -> Iterator[None]:
        """An error writing ``name``'s staged file (a full disk) names the path it was to have: the staging
        folder's was one the user never gave, and a write's own error names no file."""
        try:
            yield
        except OSError as exc:
            if exc.filename not in (None, os.fspath(self.root / STAGING_NAME / name)) or not exc.errno:
                raise
            raise OSError(exc.errno, exc.strerror, os.fspath(self.path(name))) from None

    @contextlib.contextmanager
    def staged_folder(self) -> Iterator[pathlib.Path]:
        """The staging folder itself, for a process of its own that writes this run's files into it (``profile``'s
        TensorFlow worker, its steps); each file in it when the block ends without an error is this run's."""
        folder = self.root / STAGING_NAME
        folder.mkdir(parents=True, exist_ok=True)
        yield folder
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not is_temporary(path.name):
                self._record(path.relative_to(folder).as_posix())

    def _record(self, name: str) -> None:
        if name not in self.written:
            self.written.append(name)

    def __enter__(self) -> OutputDir:
        refuse_non_folder(self.root)
        self._created = make_folders(self.root)
        self._take_lock()
        try:
            self._prepare()
        except BaseException:
            self._release(failed=True)
            raise
        return self

    def _take_lock(self) -> None:
        """Create or open ``DIR/.tracegen.lock`` and lock it, remembering whether this run created it. A failed
        run removes the lock file it created, so a run that opened it just before may hold a lock on a file no
        longer there: it checks that the file it locked is still the one at the path, and tries again if not."""
        path = self.root / LOCK_NAME
        for _ in range(100):
            try:
                try:
                    fd, self._made_lock = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644), True
                except FileExistsError:
                    fd, self._made_lock = os.open(path, os.O_RDWR | os.O_CLOEXEC), False
            except FileNotFoundError:  # removed between the two opens by a run that failed: try again
                continue
            except OSError as exc:
                raise ConfigError(f"{self.root}: cannot write here: {exc.strerror or exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                self._created, self._made_lock = [], False  # another run's now (it opened the file): left to it
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    raise ConfigError(f"{self.root}: another tracegen run is writing into this directory") from None
                raise ConfigError(f"{self.root}: cannot lock: {exc.strerror or exc}") from exc
            with contextlib.suppress(OSError):
                if os.path.samestat(os.fstat(fd), path.stat()):
                    self._lock = os.fdopen(fd, "a")
                    return
            os.close(fd)  # locked a file a failed run had just removed: the lock is the file at the path
        raise ConfigError(f"{self.root}: cannot lock: {LOCK_NAME} keeps being removed")

    def _prepare(self) -> None:
        shutil.rmtree(self.root / STAGING_NAME, ignore_errors=True)
        for folder in {self.root, *((self.root / n).parent for n in self.planned)}:
            if folder.is_dir():
                for stale in folder.glob(".*.tmp"):  # one of a writer still at work (a convert here) is left
                    if stale.is_file() and (named_by_no_owner(stale.name) or owner_gone(stale)):
                        stale.unlink(missing_ok=True)
        manifest = self.root / MANIFEST_NAME  # written last: as a folder, the whole run's work was lost at its end
        if os.path.lexists(manifest) and not manifest.is_file():
            raise ConfigError(f"{manifest}: {broken_link(manifest) or 'is not a file'}; tracegen lists the files of "
                              "its runs here in that file: move it away")
        if self.planned:  # a sweep's own run writes parts alone, and names none in advance
            refuse_sweep_dataset(self.root)
        for name in self.planned:
            self._check_folders(name)
            self._check_not_input(self.root / name)
        self._check_not_others()
        existing = [n for n in self.planned if os.path.lexists(self.root / n)]  # a dangling or looping link too
        if existing and not self.force:
            # 'the previous run' only where one wrote it: a user's own curve.csv is no run's, and --force replaces it
            whose = ("the previous run" if existing[0] in self._manifest().get(self.command, [])
                     else f"it (no earlier tracegen {self.command + ' ' if self.command else ''}run here wrote it)")
            raise ConfigError(f"{self.root / existing[0]}: already exists; pass --force to replace {whose}")
        folders = [n for n in existing if not ((self.root / n).is_file() or (self.root / n).is_symlink())]
        if folders:
            raise ConfigError(f"{self.root / folders[0]}: is not a file; this run writes a file there")
        check_writable(self.root)

    def _check_folders(self, name: str) -> None:
        """ConfigError when a folder ``name`` goes into is there as something else (a user's file ``traces``)."""
        for folder in reversed(pathlib.PurePath(name).parents[:-1]):
            path = self.root / folder
            if path.exists() and not path.is_dir():
                raise ConfigError(f"{path}: is a file, not a directory; this run writes {name} inside it")

    def _check_not_others(self) -> None:
        """ConfigError when a file this run writes is there as another command's output (the manifest says so):
        ``--force`` replaces this command's earlier files, and another's would be lost from beside the rest of
        that run's (validate's ``staleness.csv`` among predict's files)."""
        owners = {n: c for c, files in self._manifest().items() if c != self.command for n in files}
        theirs = next((n for n in self.planned if n in owners and os.path.lexists(self.root / n)), None)
        if theirs is not None:
            raise ConfigError(f"{self.root / theirs}: written by tracegen {owners[theirs]}, not {self.command}; "
                              f"--force replaces only {self.command}'s own earlier files: write into another "
                              "directory (--out), or move it away first")

    def _check_not_input(self, target: pathlib.Path) -> None:
        """ConfigError when ``target`` is one of the files this run reads (:attr:`inputs`)."""
        refuse_input(target, self.inputs, "write into another directory (--out)")

    def _manifest(self) -> dict[str, list[str]]:
        """Per command, the files its last run here wrote (``DIR/.tracegen-run.json``; a manifest of before
        2026-12-04, one list, is this command's): only plain relative names inside this directory, so that a
        manifest is never a way to delete anything else."""
        try:
            doc = json.loads((self.root / MANIFEST_NAME).read_text(encoding="utf-8"))
            runs = doc["commands"] if "commands" in doc else {self.command: doc.get("files", [])}
            if not isinstance(runs, dict):
                return {}
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            return {}
        return {str(c): [n for n in listed if isinstance(n, str) and n and not n.startswith(("/", ".."))
                         and ".." not in pathlib.PurePath(n).parts]
                for c, listed in runs.items() if isinstance(listed, list)}

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        committed = False
        try:
            if exc_type is None:
                try:
                    with held():  # a stop between two renames would leave old and new files mixed
                        self._commit()
                        committed = True
                except BaseException as stop:  # a signal held during the commit, raised after it
                    if committed and not isinstance(stop, Exception):
                        names = ", ".join(self.written[:4]) + (", ..." if len(self.written) > 4 else "")
                        stop.add_note(f"after its new outputs were in place ({names} in {self.root})")
                    raise
        finally:
            shutil.rmtree(self.root / STAGING_NAME, ignore_errors=True)
            self._release(failed=not committed)

    def _commit(self) -> None:
        """The staged files into place; then, with ``force``, the previous run's files (of this command) this one
        did not write removed, and the manifest written (the previous run's files still there kept in it, without
        ``force``; other commands' files as they were, less those this run wrote)."""
        for name in self.written:  # every folder first: a run that cannot place one file replaces none
            target = self.root / name
            try:
                self._check_folders(name)
                self._check_not_input(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_dir():
                    raise ConfigError(f"{target}: is not a file; this run writes a file there")
            except OSError as exc:
                raise ConfigError(f"{target}: cannot write: {exc.strerror or exc}") from exc
        for name in self.written:
            target = self.root / name
            try:
                (self.root / STAGING_NAME / name).replace(target)
            except OSError as exc:
                raise ConfigError(f"{target}: cannot write: {exc.strerror or exc}") from exc
        runs = self._manifest()
        previous = [n for n in runs.pop(self.command, []) if n not in self.written]
        if self.force:  # only this command's older files: predict's beside a plan are not plan's to remove
            for name in previous:
                if (self.root / name).is_file():
                    (self.root / name).unlink()
            for folder in sorted({p for n in previous for p in pathlib.PurePath(n).parents if p.parts},
                                 key=lambda p: -len(p.parts)):  # the folders they leave empty (traces/) go too
                with contextlib.suppress(OSError):
                    (self.root / folder).rmdir()  # only if empty: a user's file there keeps it
            previous = []
        runs[self.command] = [*[n for n in previous if (self.root / n).is_file()], *self.written]
        runs = {c: [n for n in files if c == self.command or n not in self.written] for c, files in runs.items()}
        if any(runs.values()):
            doc = {"commands": {c: files for c, files in sorted(runs.items()) if files}}
            write_bytes_atomic(self.root / MANIFEST_NAME, (json.dumps(doc, indent=1) + "\n").encode())

    def _release(self, *, failed: bool = False) -> None:
        if self._lock is None:
            return
        if failed and (self._made_lock or self._created):  # still holding the lock: no other run is inside
            with contextlib.suppress(OSError):
                if self._made_lock:  # only a lock file this run created: an earlier run's stays
                    (self.root / LOCK_NAME).unlink()
            remove_folders(self._created)
        fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
        self._lock.close()
        self._lock = None


def check_writable(folder: pathlib.Path, what: str = "here") -> None:
    """ConfigError unless a file can be made in ``folder`` (permissions, a read-only mount, /proc), tried by making
    one and removing it: found before the work whose result goes there, not after."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".tracegen-probe-")
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot write {what}: {exc.strerror or exc}") from None
    os.close(fd)
    pathlib.Path(probe).unlink()


def option_path(text: str, what: str = "a directory", option: str = "--out") -> pathlib.Path:
    """``option``'s value as a path, an output's or an input's; ConfigError when it is empty (an unset shell
    variable): pathlib reads '' as '.', and the run then wrote into the current directory, or read the files there
    as its input, or blamed '.' for being one."""
    if not text.strip():
        raise ConfigError(f"'{option}' must name {what} (got an empty string)")
    return pathlib.Path(text)


def refuse_non_folder(path: pathlib.Path, purpose: str = "--out names the directory to write into") -> None:
    """ConfigError when ``path`` is there as something other than a folder: a file, or a symbolic link that loops
    or leads nowhere (which mkdir would call only 'File exists'), named for what it is."""
    if os.path.lexists(path) and not path.is_dir():
        what = broken_link(path) or f"is {not_regular(path) or 'a file'}, not a directory"  # a FIFO is no file
        raise ConfigError(f"{path}: {what}; {purpose}")


def make_folders(folder: pathlib.Path, what: str = "here") -> list[pathlib.Path]:
    """Create ``folder`` and the parents it lacks; the ones created, ``folder`` first (:func:`remove_folders` takes
    them away again should the run fail). ConfigError naming ``folder`` when it cannot be made, and the symbolic
    link on the way that loops or leads nowhere, or the file on the way, if that is why (mkdir says only 'File
    exists' or 'Not a directory')."""
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_folders(made)  # those made before the one that failed
        file = next((p for p in reversed((folder, *folder.parents)) if p.is_file()), None)  # mkdir: 'File exists'
        why = next((f"{p} is {link}" for p in reversed(made) if (link := broken_link(p))),
                   exc.strerror or exc if file is None else f"{file} is a file, not a folder")
        raise ConfigError(f"{folder}: cannot write {what}: {why}") from exc
    return made


@contextlib.contextmanager
def folders_made(folder: pathlib.Path, what: str = "here") -> Iterator[None]:
    """:func:`make_folders` for the block, removing the folders it made again when the block fails."""
    made = make_folders(folder, what)
    try:
        yield
    except BaseException:
        remove_folders(made)
        raise


def remove_folders(made: Sequence[pathlib.Path]) -> None:
    """Remove the folders :func:`make_folders` created, deepest first: only empty ones, stopping at the first that
    holds anything (a file another process put there meanwhile)."""
    with contextlib.suppress(OSError):
        for folder in made:
            folder.rmdir()


@contextlib.contextmanager
def output_file(path: pathlib.Path, *, force: bool, what: str) -> Iterator[pathlib.Path]:
    """Where a command writes its one output file (``convert --to chrome``, ``netbench run``), checked before the
    work whose result goes there: not replacing anything unless ``force`` (:func:`refuse_existing`), its missing
    folders created as an :class:`OutputDir`'s are, and writable (:func:`check_writable`, ``what`` naming the file
    in its message). Folders created for it are removed again when the block fails."""
    refuse_existing([path], force)
    refuse_sweep_dataset(path.parent)
    with folders_made(path.parent, what):
        check_writable(path.parent, what)
        yield path


def refuse_sweep_dataset(folder: pathlib.Path) -> None:
    """ConfigError when ``folder``, or a folder it is in, holds a sweep's Parquet parts (:mod:`parsers.sweepdata`):
    any other file written there or below (predict's ``curve.csv``) made pandas and pyarrow fail to read the
    dataset, and the sweep refuse to resume into it, and no ``--force`` makes that the user's wish."""
    for place in (folder, *folder.absolute().parents):
        if parts := part_paths(place):
            where = "there" if place is folder else "in a folder inside it"
            raise ConfigError(f"{place}: holds a sweep's Parquet parts ({parts[0].name}, ...); a file written {where} "
                              "would stop pandas and pyarrow reading the dataset, and the sweep resuming: write into "
                              "another directory")


def refuse_input(target: pathlib.Path, inputs: Sequence[str | os.PathLike[str]], instead: str) -> None:
    """ConfigError when ``target`` is one of the files this run reads, whatever ``--force`` says: ``instead`` says
    what to do. The input is named too where it was given by another path (a link, another hard link)."""
    for source in inputs:
        same = False
        with contextlib.suppress(OSError):  # either not there: not the same file
            same = target.samefile(source)
        if same:  # said once where it is the one path ('DIR/report.md: is an input of this run (DIR/report.md)')
            given = "" if target.absolute() == pathlib.Path(source).absolute() else f" (the same file as {source})"
            raise ConfigError(f"{target}: is an input of this run{given}, not an earlier run's output; {instead}")


def refuse_existing(paths: Sequence[pathlib.Path], force: bool) -> None:
    """ConfigError naming the first of ``paths`` that exists, unless ``force``: outputs never silently replace
    what a user has."""
    existing = [p for p in paths if os.path.lexists(p)]  # a link to nothing (or to itself) is the user's too
    if existing and not force:
        raise ConfigError(f"{existing[0]}: already exists; pass --force to overwrite")
