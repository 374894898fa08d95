from __future__ import annotations

import dataclasses
import pathlib
import statistics

import pandas as pd
import pytest

from parsers import read_trace
from tracegen.errors import ModelError
from tracegen.metrics import step_time_ns
from tracegen.model import StepModel, TaskKind, build_model, complete_steps
from tracegen.simulate import SimConfig, simulate
from tracegen.synthetic import synthetic_model


def test_real_model_has_every_transfer_and_its_bytes(real_trace_dir: pathlib.Path, real_model: StepModel) -> None:
    trace = read_trace(real_trace_dir)
    step0 = trace.transfers[trace.transfers["step"] == 0]
    assert real_model.count(TaskKind.PULL) == int((trace.rendezvous["direction"] == "pull").sum())
    assert real_model.count(TaskKind.PUSH) == int((trace.rendezvous["direction"] == "push").sum())
    assert real_model.bytes_of(TaskKind.PULL) == int(step0[step0["direction"] == "pull"]["size_bytes"].sum())
    assert real_model.count(TaskKind.APPLY) >= 2
    applies = [t for t in range(real_model.n_tasks) if real_model.names[t].endswith("ResourceApplyGradientDescent")]
    assert applies
    for t in applies:  # every apply op waits for a pushed gradient
        assert any(real_model.kinds[p] == TaskKind.PUSH for p in real_model.data_preds[t])
    # the global-step update is PS work; the step ends when it and every apply are done (all tasks)
    assert real_model.kinds[real_model.names.index("ps:GradientDescent")] == TaskKind.APPLY


def test_one_worker_replays_every_complete_traced_step(real_trace_dir: pathlib.Path, real_model: StepModel) -> None:
    """Each simulated step replays one complete traced step: with no other worker the simulated steps take as
    many distinct lengths as there are traced ones, and their mean is the traced mean (within 6 %: transfers move
    at the estimated rate, not at each step's own)."""
    result = simulate(real_model, SimConfig(n_workers=1, steps=60, warmup_steps=0, seed=1))
    got = step_time_ns(result)
    traced = [t.step_ns for t in real_model.timings]
    assert len(set(got)) == len(set(traced))
    assert abs(statistics.fmean(got) / statistics.fmean(traced) - 1) <= 0.06
    assert len(real_model.timings) == len(complete_steps(read_trace(real_trace_dir))[0])


def test_a_step_with_missing_records_is_never_replayed() -> None:
    """cnn at 300 Mbit/s: the PS lost all 9 push records of traced step 1; the model keeps steps 0 and 2 only."""
    trace = read_trace(pathlib.Path(__file__).resolve().parents[2] / "data" / "testbed" / "cnn_300mbit" / "trace")
    complete, why = complete_steps(trace)
    assert complete == [0, 2] and "9 pushes" in why[1]
    model = build_model(trace)
    assert [t.traced_step for t in model.timings] == [0, 2]
    assert any("traced step 1 left out" in n for n in model.notes)
    with pytest.raises(ModelError, match="none of the 3 traced steps is complete"):
        build_model(trace.__class__(**{**{f: getattr(trace, f) for f in trace.__dataclass_fields__},
                                       "transfers": trace.transfers[trace.transfers["direction"] != "push"]}))


def test_one_missing_record_and_one_traced_step_are_said_in_the_singular() -> None:
    # said 'step 0: 1 pulls, 0 pushes and 0 apply ops unrecorded', and of a trace of one step, 'none of the 1
    # traced steps is complete'
    trace = read_trace(pathlib.Path(__file__).resolve().parents[2] / "data" / "testbed" / "cnn_300mbit" / "trace")
    fields = {f: getattr(trace, f) for f in trace.__dataclass_fields__}
    pulls = trace.transfers.index[(trace.transfers["direction"] == "pull") & (trace.transfers["step"] == 0)]
    _, why = complete_steps(trace.__class__(**{**fields, "transfers": trace.transfers.drop(pulls[:1])}))
    assert why[0] == "1 pull, 0 pushes and 0 apply ops unrecorded", why
    one = {name: table[table["step"] == 1] for name, table in fields.items()
           if isinstance(table, pd.DataFrame) and "step" in table.columns}
    with pytest.raises(ModelError) as refused:
        build_model(trace.__class__(**{**fields, **one}))
    assert ": the 1 traced step is not complete (step 1: 0 pulls, 9 pushes and 0 apply ops unrecorded)" in str(
        refused.value), refused.value


def test_chrome_timeline_cannot_be_modelled(mlp_trace_dir: pathlib.Path) -> None:
    # the mlp's steps are kept in both forms: a skip when the JSON was gone let the refusal go untested
    json_steps = sorted(mlp_trace_dir.glob("step_*.json"))
    assert json_steps, f"no TF timeline JSON in {mlp_trace_dir}"
    with pytest.raises(ModelError) as refused:
        build_model(read_trace(json_steps[0]))
    # the file named, as every message of a file does
    assert str(refused.value).startswith(f"{json_steps[0]}: the trace has no partition graphs"), refused.value


def test_median_timing_is_the_per_task_statistic(real_trace_dir: pathlib.Path, real_model: StepModel) -> None:
    trace = read_trace(real_trace_dir)
    median = build_model(trace, timing="median")
    assert median.names == real_model.names and median.link == real_model.link
    assert len(median.timings) == 1
    ops = trace.ops[trace.ops["node_name"] == "Relu"] if "Relu" in median.names else trace.ops.iloc[:0]
    if not ops.empty:  # the mlp and cnn: Relu ran in every step
        assert median.timings[0].dur_ns[median.names.index("Relu")] == int(ops["dur_ns"].median())
    with pytest.raises(ModelError, match="'timing' must be one of"):
        build_model(trace, timing="mean")


def test_a_step_with_none_of_the_workers_ops_is_not_complete(mlp_trace_dir: pathlib.Path,
                                                             tmp_path: pathlib.Path) -> None:
    """A converted trace whose ops table was cut to its header was predicted as if the step had no compute,
    with no word (a hardening pass)."""
    from parsers.tables import write_tables

    write_tables(read_trace(mlp_trace_dir), tmp_path, "csv")
    ops = tmp_path / "ops.csv"
    ops.write_text(ops.read_text().splitlines()[0] + "\n")
    with pytest.raises(ModelError) as refused:  # the trace named, as every message of a file does
        build_model(read_trace(tmp_path))
    assert str(refused.value).startswith(f"{tmp_path} (from ") and (
        ": none of the 3 traced steps is complete (step 0: none of the worker's ") in str(refused.value), refused.value


def test_a_job_with_every_variable_on_the_worker_is_named_as_such(mlp_trace_dir: pathlib.Path) -> None:
    """A model whose parameters all live on the worker (no PS, nothing crosses a link) was told its trace had 'no
    partition graphs with _Send/_Recv pairs' and to trace 'with output_partition_graphs=True', which it had."""
    trace = read_trace(mlp_trace_dir)
    worker = "/job:worker/replica:0/task:0/device:CPU:0"
    nodes, edges = trace.graph_nodes, trace.graph_edges
    rendezvous = set(nodes[nodes["op_type"].isin(["_Send", "_Recv"])]["node_name"])
    local = trace.__class__(**{
        **{f: getattr(trace, f) for f in trace.__dataclass_fields__},
        "ops": trace.ops[(trace.ops["device"] == worker) & ~trace.ops["node_name"].isin(rendezvous)],
        "graph_nodes": nodes[(nodes["device"] == worker) & ~nodes["node_name"].isin(rendezvous)],
        "graph_edges": edges[(edges["device"] == worker) & ~edges["src_node"].isin(rendezvous)
                             & ~edges["dst_node"].isin(rendezvous)],
        "transfers": trace.transfers.iloc[:0], "rendezvous": trace.rendezvous.iloc[:0],
        "variables": trace.variables.assign(device=worker).astype({"device": "string"})})
    assert local.has_graph  # partition graphs it has: the old message said it lacked them
    with pytest.raises(ModelError) as info:
        build_model(local)
    message = str(info.value)
    assert f"no PS and no transfer in the trace (devices: {worker})" in message, message
    assert "output_partition_graphs" not in message and "\n" not in message and len(message) <= 300


@pytest.mark.parametrize("name", ["layer0/read\ud800", "\udcff", "a\ud83d"])
def test_a_task_name_that_is_not_text_is_refused_when_the_model_is_built(name: str) -> None:
    """A lone surrogate in a task's name was written into 'predict --emit-traces' traces as JSON's \\ud800, which
    read_trace then refused ('holds a lone UTF-16 surrogate'): the written trace could not be read back."""
    model = synthetic_model()
    with pytest.raises(ModelError, match=r"^task 2's name .* holds a lone UTF-16 surrogate \(U\+D[89A-F][0-9A-F]{2} "
                                         r"at character \d+\), which is not text"):
        dataclasses.replace(model, names=(*model.names[:2], name, *model.names[3:]))


def test_a_cycle_in_the_graphs_is_named_by_the_trace_and_the_ops_on_it(mlp_trace_dir: pathlib.Path,
                                                                       tmp_path: pathlib.Path) -> None:
    """An edge added back from an op to its input (a converted trace's graph_edges.csv edited by hand) was refused
    as "the partition graphs have a cycle through 'edge_29_gradients/BiasAdd_2_grad/BiasAddGrad'": no file, and a
    transfer that waits behind the cycle, not one on it."""
    from parsers.tables import write_tables

    write_tables(read_trace(mlp_trace_dir), tmp_path, "csv")
    edges = tmp_path / "graph_edges.csv"
    lines = edges.read_text().splitlines()
    device, src, _, dst, _ = next(line for line in lines[1:] if "worker" in line).split(",")
    edges.write_text("\n".join([*lines, f"{device},{dst},0,{src},\"data\""]) + "\n")
    with pytest.raises(ModelError) as info:
        build_model(read_trace(tmp_path))
    message = str(info.value)
    names = sorted([src.strip('"'), dst.strip('"')])
    assert message.startswith(f"{tmp_path} (from {mlp_trace_dir}): the partition graphs have a cycle: "), message
    cycle = message.split("have a cycle: ", 1)[1].split("; ", 1)[0].split(" -> ")
    assert sorted(n.strip("'") for n in cycle[:-1]) == names and cycle[0] == cycle[-1], message
