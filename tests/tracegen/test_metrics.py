"""tracegen.metrics: the estimators, on hand-computable inputs."""

from __future__ import annotations

import pytest

from tracegen.metrics import fraction_in_window


def test_steps_are_counted_by_the_fraction_inside_the_window() -> None:
    steps = [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.5, 4.5)]
    assert fraction_in_window(steps, 0.5, 2.5) == pytest.approx(2.0)
    assert fraction_in_window(steps, 3.0, 3.5) == 0.0  # a gap between steps holds no step
    assert fraction_in_window(steps, 3.0, 4.0) == pytest.approx(0.5)
    assert fraction_in_window([(1.0, 1.0)], 0.0, 2.0) == 0.0
    assert fraction_in_window([(0, 4), (4, 8)], 2, 6) == 1.0  # the model's integer nanoseconds, the same rule
