"""The in-sample replay table of docs/validation.md ("Where the `deep` replays miss"), guarded: every row computed
again by ``benchmarks/replay_gaps.py``'s own :func:`in_sample` and formatted as it prints it must read as the page
says (the replay is seeded and deterministic, so the cells are exact)."""

from __future__ import annotations

import pathlib
import re
import statistics
from collections.abc import Callable
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (data/\S+) \| ([^|]+%\)) \|(.*)\|$")


def stated() -> dict[str, list[str]]:
    """The table's rows: trace -> its cells as printed."""
    page = (ROOT / "docs" / "validation.md").read_text()
    section = page.split("**Where the `deep` replays miss: in-sample too** (", 1)[1]  # not the opening list's
    rows = {}
    for line in section.split("\n\n", 2)[1].splitlines():
        if (found := ROW.match(line)) is not None:
            rows[found[1]] = [c.strip() for c in line.strip("|").split("|")[1:]]
    return rows


def test_the_table_has_the_default_traces(benchmark_module: Callable[[str], ModuleType]) -> None:
    assert sorted(stated()) == sorted(benchmark_module("replay_gaps").DEFAULT)


@pytest.mark.parametrize("trace", sorted(stated()))
def test_each_row_is_what_the_benchmark_prints(trace: str, benchmark_module: Callable[[str], ModuleType]) -> None:
    errors = benchmark_module("replay_gaps").in_sample(str(ROOT / trace))
    assert [f"{statistics.fmean(e):+.1%} ({min(e):+.0%}..{max(e):+.0%})" for e in errors] == stated()[trace]
