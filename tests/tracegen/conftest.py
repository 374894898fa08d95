"""Fixtures of the tracegen tests, on the real traces bundled in ``data/traces/`` (see tests/conftest.py)."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.model import StepModel, build_model

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"


@pytest.fixture
def real_trace_dir(model_dir: pathlib.Path) -> pathlib.Path:
    """Each real traced model's directory of steps."""
    return model_dir


@pytest.fixture
def mlp_trace_dir() -> pathlib.Path:
    """The smallest real trace, the MLP's."""
    return TRACES / "mlp"


@pytest.fixture
def real_model(real_trace_dir: pathlib.Path) -> StepModel:
    """The step model of each real trace."""
    return build_model(read_trace(real_trace_dir))
