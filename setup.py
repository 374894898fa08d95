"""Compiles tracegen's event engine with mypyc when it can; everything else is in ``pyproject.toml``.

The engine's modules (:data:`tracegen.native.MODULES`) are ordinary typed Python. With a C compiler at install
time mypyc turns them into C extensions that run the same code many times as fast (README, quick start;
docs/model.md, "The compiled engine"); without one, or if mypyc fails, they install and run as the pure Python they
are. Beside the compiled files goes ``tracegen/_native.json``, the sha256 of each source compiled: at import,
:mod:`tracegen.native` loads a module from its ``.py`` when that no longer matches (edited since the build), so a
stale build never runs.
"""

from __future__ import annotations

import json
import pathlib
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tracegen.native import MANIFEST, MODULES, PACKAGE, source_digest

SOURCES = [f"{PACKAGE}/{name}.py" for name in MODULES]


def _extensions() -> list:  # type: ignore[type-arg]
    """mypyc's extensions for the engine, or none (pure Python) when mypyc cannot make them."""
    try:
        from mypyc.build import mypycify

        extensions = mypycify(["--ignore-missing-imports", *SOURCES], group_name="tracegen_engine")
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (any failure of the optional build means: pure Python)
        print(f"tracegen: the engine stays pure Python (mypyc could not compile it: {exc})", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # no C compiler: setuptools warns and installs the pure modules
    return extensions


def _core() -> Extension:
    """The C core (``tracegen/_core.c``, :mod:`tracegen.fastcore`), optional like the rest: built with its own
    digest, so that a build older than the file beside it is not used, and without fused multiply-adds, whose
    rounding is not Python's."""
    source = pathlib.Path(PACKAGE) / "_core.c"
    return Extension(f"{PACKAGE}._core", [str(source)], optional=True,
                     define_macros=[("CORE_SOURCE_DIGEST", f'"{source_digest(source)}"')],
                     extra_compile_args=["-O3", "-ffp-contract=off", "-fno-strict-aliasing"])


class BuildExt(build_ext):
    """setuptools' build_ext, then the manifest of what it compiled (only when every module was)."""

    def run(self) -> None:
        built = [pathlib.Path(self.get_ext_fullpath(f"{PACKAGE}.{name}")) for name in MODULES]
        for path in [built[0].parent / MANIFEST, *built]:  # a failed build must not leave an old one standing
            path.unlink(missing_ok=True)
        super().run()
        if self.extensions and all(path.exists() for path in built):
            digests = {name: source_digest(pathlib.Path(source)) for name, source in zip(MODULES, SOURCES, strict=True)}
            (built[0].parent / MANIFEST).write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


setup(ext_modules=[*_extensions(), _core()], cmdclass={"build_ext": BuildExt})
