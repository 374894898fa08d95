"""Fixtures of the tracegen tests.

Real traces: every directory ``data/traces/<model>/`` holding ``*.pb`` steps; while ``data/`` has none, the
captures in ``/tmp/cap/<model>/`` (made with ``validation.capture.profile``). Tests that need them skip when
neither exists. Point elsewhere with ``TRACEGEN_TRACES=/some/dir`` (a directory of such model directories).
"""

from __future__ import annotations

import os
import pathlib

import pytest

from tracegen.model import StepModel, build_model

REPO = pathlib.Path(__file__).resolve().parents[2]


def _trace_dirs() -> list[pathlib.Path]:
    roots = [pathlib.Path(os.environ["TRACEGEN_TRACES"])] if "TRACEGEN_TRACES" in os.environ else []
    roots += [REPO / "data" / "traces", pathlib.Path("/tmp/cap")]
    for root in roots:
        found = sorted(d for d in root.glob("*") if d.is_dir() and any(d.glob("*.pb")))
        if found:
            return found
    return []


TRACE_DIRS = _trace_dirs()


@pytest.fixture(params=TRACE_DIRS or [None], ids=[d.name for d in TRACE_DIRS] or ["none"])
def real_trace_dir(request: pytest.FixtureRequest) -> pathlib.Path:
    """Each real traced model's directory of steps."""
    if request.param is None:
        pytest.skip("no real traces under data/traces/*/ or /tmp/cap/*/")
    path: pathlib.Path = request.param
    return path


@pytest.fixture
def mlp_trace_dir() -> pathlib.Path:
    """The smallest real trace (the MLP), or the first one found."""
    if not TRACE_DIRS:
        pytest.skip("no real traces under data/traces/*/ or /tmp/cap/*/")
    return next((d for d in TRACE_DIRS if d.name == "mlp"), TRACE_DIRS[0])


@pytest.fixture
def real_model(real_trace_dir: pathlib.Path) -> StepModel:
    """The step model of each real trace."""
    from parsers import read_trace

    return build_model(read_trace(real_trace_dir))
