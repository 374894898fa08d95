"""Whether the event engine runs compiled, and the guard that keeps a stale compiled build from running.

``setup.py`` compiles :data:`MODULES` with mypyc when the installing machine has a C compiler, and writes
:data:`MANIFEST` beside them: the sha256 of each source it compiled. When ``tracegen`` is imported,
:func:`guard` makes the compiled modules load from their ``.py`` instead when any one's source no longer matches
(edited since the build, or no manifest), as does ``TRACEGEN_PURE=1``. Both forms run the same code, so a
simulation's results are byte-identical either way (``tests/tracegen/test_native.py``); only the speed differs.

This module is imported by ``setup.py`` before anything is installed: it imports nothing outside the standard
library.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import pathlib
import sys
from collections.abc import Sequence
from types import ModuleType

PACKAGE = "tracegen"
MODULES = ("engine", "pscpu", "link", "simulate")  # the engine: what one simulation spends its time in
MANIFEST = "_native.json"
PURE_ENV = "TRACEGEN_PURE"


def source_digest(path: pathlib.Path) -> str:
    """sha256 of a source file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiled_file(package_dir: pathlib.Path, name: str) -> pathlib.Path | None:
    """The compiled form of module ``name`` in ``package_dir``, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = package_dir / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def from_source(package_dir: pathlib.Path, names: Sequence[str], *, pure: bool) -> tuple[str, ...]:
    """Which of the compiled modules ``names`` must load from source: all of them with ``pure``, or when any one's
    source digest is not the one the manifest recorded when they were compiled (compiled together, each checks
    the others' types: a compiled module cannot take an object of a class its edited neighbour defines anew)."""
    try:
        manifest = json.loads((package_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        manifest = {}
    if not isinstance(manifest, dict):
        manifest = {}
    compiled = tuple(name for name in names if compiled_file(package_dir, name) is not None)
    stale = pure or any(manifest.get(name) != source_digest(package_dir / f"{name}.py") for name in compiled)
    return compiled if stale else ()


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the named modules of one package as their ``.py`` files, ahead of their compiled forms."""

    def __init__(self, package: str, package_dir: pathlib.Path, names: Sequence[str]) -> None:
        self.package, self.package_dir, self.names = package, package_dir, frozenset(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None,  # noqa: ARG002  (the finder protocol's)
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:  # noqa: ARG002
        package, _, name = fullname.rpartition(".")
        if package != self.package or name not in self.names:
            return None
        return importlib.util.spec_from_file_location(fullname, self.package_dir / f"{name}.py")


def guard(package: str, package_dir: pathlib.Path, names: Sequence[str] = MODULES) -> tuple[str, ...]:
    """Make the modules that must not run compiled (:func:`from_source`) load from source; returns their names.
    Call it from the package's ``__init__``, before any of them is imported."""
    stale = from_source(package_dir, names, pure=os.environ.get(PURE_ENV) == "1")
    if stale and not any(isinstance(f, _SourceFinder) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder(package, package_dir, stale))
    return stale


def engine() -> str:
    """What simulations run on in this process: ``C core`` (the runs :mod:`tracegen.fastcore` takes, which are
    the ones curves, validations, plans and sweeps are made of; the rest run compiled or pure, as below),
    ``compiled (mypyc)`` or ``pure Python``."""
    import tracegen.fastcore

    if tracegen.fastcore.why_off() is None:
        return "C core"
    return reference_engine()


def reference_engine() -> str:
    """What the runs the C core does not take run on: ``compiled (mypyc)`` or ``pure Python``."""
    return "pure Python" if mypyc_off() else "compiled (mypyc)"


def mypyc_off() -> bool:
    """Whether the reference engine (:data:`MODULES`) runs as the pure Python it is, not compiled by mypyc."""
    import tracegen.simulate

    return str(tracegen.simulate.__file__).endswith(".py")
