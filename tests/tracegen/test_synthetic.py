"""The synthetic layered model (``tracegen/synthetic.py``) that tests and benchmarks build: its shape, its
refusals, and its seeded variation."""

from __future__ import annotations

import pytest

from tracegen.errors import ModelError
from tracegen.model import TaskKind
from tracegen.synthetic import synthetic_model


def test_synthetic_model_shape() -> None:
    model = synthetic_model(n_params=3, n_layers_ops=2)
    assert model.count(TaskKind.PULL) == model.count(TaskKind.PUSH) == 3
    assert model.count(TaskKind.COMPUTE) == 12
    with pytest.raises(ModelError, match="n_params >= 1"):
        synthetic_model(n_params=0)


def test_the_same_seed_gives_the_same_model_and_sizes_vary_about_the_given_one() -> None:
    model = synthetic_model(n_params=8, param_bytes=1000, seed=3)
    assert model == synthetic_model(n_params=8, param_bytes=1000, seed=3)
    other = synthetic_model(n_params=8, param_bytes=1000, seed=4)
    assert model.size_bytes != other.size_bytes and model.timings != other.timings
    pulls = [model.size_bytes[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    assert len(set(pulls)) > 1 and all(500 <= b <= 1500 for b in pulls)  # within +-50 %
