"""Which parameter each pull reads and each apply updates (``tracegen/variables.py``): by hand on tiny models,
and every parameter of real one-PS and K-PS traces."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from parsers import read_trace
from tracegen.model import PS_KINDS, StepTiming, TaskKind, build_model
from tracegen.variables import variable_map

from tracegen_support import shared_variable_model


def test_the_variable_is_what_a_pull_reads_and_an_apply_updates() -> None:
    variables = variable_map(shared_variable_model())
    assert variables.names == ("ps:w",)
    assert variables.of_task == (-1, -1, 0, -1, -1, 0, -1, -1)  # the global step is read by no pull: not one


def test_every_parameter_of_a_real_trace_is_found(mlp_trace_dir: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    variables = variable_map(model)
    pulls = [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    applies = [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.APPLY]
    assert all(variables.of_task[t] >= 0 for t in pulls)
    mapped = [t for t in applies if variables.of_task[t] >= 0]
    assert len(mapped) == variables.n_variables == len(applies) - 1  # all but the global step's increment
    assert all(model.kinds[model.names.index(n)] in PS_KINDS for n in variables.names)


@pytest.mark.parametrize("name", ["test/mlp_200mbit_k2_greedy", "test/mlp_200mbit_k3_greedy",
                                  "test/wide_1000mbit_k3_rr", "dev/wide_1000mbit_k2_greedy"])
def test_every_parameter_of_a_k_ps_trace_is_placeable(name: str) -> None:
    """On a PS task other than the first, the PS's 'update done' control edge to the worker looked like a read of
    the apply's inputs, the learning rate among them, so the apply had two read inputs and its variable was no
    parameter: greedy placement lost the biggest kernel (mlp k2: 5 of 6; a hardening pass)."""
    from tracegen.summary import summarize
    from tracegen.variables import variable_map

    trace = read_trace(pathlib.Path(__file__).resolve().parents[2] / "data/shards" / name / "trace")
    names = variable_map(build_model(trace)).names
    assert sorted(n.removeprefix("ps:") for n in names) == summarize(trace)["parameters"]


def test_an_apply_of_two_read_variables_updates_no_parameter() -> None:
    """Two variables, each read by a pull, and one apply taking both: which one it updates cannot be told, so
    neither is a parameter and no pull or apply is mapped."""
    model = shared_variable_model()
    names = ("ps:a", "ps:b", "pull a", "pull b", "matmul", "push grad", "apply")
    kinds = (TaskKind.PS_OP, TaskKind.PS_OP, TaskKind.PULL, TaskKind.PULL, TaskKind.COMPUTE, TaskKind.PUSH,
             TaskKind.APPLY)
    preds = ((), (), (0,), (1,), (2, 3), (4,), (5, 0, 1))
    model = dataclasses.replace(model, names=names, kinds=kinds, size_bytes=(0, 0, 8, 8, 0, 8, 0), data_preds=preds,
                                control_preds=((),) * 7, rank=tuple(range(7)), first_need_ns=(0,) * 7,
                                timings=(StepTiming(dur_ns=(0,) * 7, delay_ns=(0,) * 7, step_ns=0),))
    variables = variable_map(model)
    assert variables.names == () and variables.of_task == (-1,) * 7 and variables.n_variables == 0
    one = dataclasses.replace(model, data_preds=(*preds[:6], (5, 0)))  # the apply takes a alone: a is one
    assert variable_map(one).names == ("ps:a",) and variable_map(one).of_task == (-1, -1, 0, -1, -1, -1, 0)
