"""Fixtures of the tracegen tests, on the real traces bundled in ``data/traces/`` (see tests/conftest.py)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

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



@pytest.fixture
def readme_command() -> Callable[[str], list[str]]:
    """The one ``tracegen`` command in the README's code block under a heading, as its words after ``tracegen``
    (run from the repository root: its paths are relative to it)."""
    import shlex

    def command(heading: str) -> list[str]:
        text = (TRACES.parents[1] / "README.md").read_text().split(heading, 1)[1].split("\n#", 1)[0]
        blocks = [block.strip() for block in text.split("```")[1::2]]
        assert len(blocks) == 1 and blocks[0].startswith("tracegen "), blocks
        return shlex.split(blocks[0])[1:]

    return command


@pytest.fixture
def no_testbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The testbed fails the test if it runs: what is refused must be refused before a cluster is built."""
    from validation import testbed

    def no_cluster(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the testbed ran")

    monkeypatch.setattr(testbed, "run_testbed", no_cluster)
