"""The fuzz harness of ``benchmarks/fuzz_parsers.py``, for tests that run inputs in child processes with the
benchmark's time and memory limits (a worker process forks one child per input: nothing forks pytest itself)."""

from __future__ import annotations

import dataclasses
import itertools
import pathlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from parsers.limits import MAX_BYTES

ROOT = pathlib.Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class ChildRunner:
    """Runs ``read_trace`` on one input at a time in a child limited to 10 s and 2 GiB of address space."""

    pool: Any
    numbers: Iterator[int] = dataclasses.field(default_factory=itertools.count)

    def _run(self, spec: dict[str, Any]) -> dict[str, Any]:
        [result] = list(self.pool.run([spec]))
        return result

    def read_file(self, path: pathlib.Path) -> dict[str, Any]:
        """The outcome of reading ``path`` as it is (``result["read"]["outcome"]``: error, read, traceback, ...)."""
        return self._run({"k": next(self.numbers), "family": "given", "seed": 0, "path": str(path),
                          "stages": ["read"]})

    def read_generated(self, family: str, k: int) -> dict[str, Any]:
        """The outcome of reading input ``k`` of mutation ``family`` (run seed 0)."""
        return self._run({"k": k, "family": family, "seed": 0, "stages": ["read"]})


@pytest.fixture(scope="session")
def harness(benchmark_module: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_module("fuzz_parsers")


@pytest.fixture(scope="session")
def child_runner(harness: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChildRunner]:
    """One worker for the session; its gzip bombs expand to just past the reader's limit, and the edits that
    take seconds each are left out (``quick``), so that no input comes near the time limit on a slow machine."""
    corpus = harness.build_corpus(tmp_path_factory.mktemp("fuzz_corpus"), bomb_bytes=MAX_BYTES + (16 << 20),
                                  quick=True)
    work = tmp_path_factory.mktemp("fuzz_inputs")
    with harness.pool(corpus, work, harness.Limits(time_s=10.0, memory_bytes=2 << 30), 1, model=False) as pool:
        yield ChildRunner(pool)
