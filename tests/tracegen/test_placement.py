"""Where parameters go on several PS shards (``tracegen/placement.py``): round robin in creation order, greedy by
bytes, a placement file followed and checked, and a K-PS trace's own placement, against what TensorFlow did."""

from __future__ import annotations

import csv
import dataclasses
import json
import pathlib
import re
import subprocess
import sys

import pytest

from parsers import read_trace
from tracegen.cli import main
from tracegen.config import PredictConfig
from tracegen.errors import ConfigError
from tracegen.model import TaskKind, build_model
from tracegen.placement import (
    MAX_SHARDS,
    creation_order,
    place,
    stored_bytes,
    traced_placement,
    variable_bytes,
    variable_order,
)
from tracegen.synthetic import synthetic_model
from tracegen.variables import VariableMap, variable_map

SHARDS = pathlib.Path(__file__).resolve().parents[2] / "data" / "shards"


def test_round_robin_follows_creation_order_with_the_global_step_first(mlp_trace_dir: pathlib.Path) -> None:
    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    created = creation_order(trace)
    assert created[0] == "ps:global_step" and len(created) == 7
    rr = place(model, 2, "round-robin", created)
    by_name = dict(zip(rr.variables.names, rr.shard_of_variable, strict=True))
    for i, name in enumerate(created[1:], start=1):  # TF's replica_device_setter: i-th variable on shard i % k
        assert by_name[name] == i % 2
    # every task of a parameter is on its shard; what belongs to none (the global step) on shard 0
    for t in range(model.n_tasks):
        v = rr.variables.of_task[t]
        if v >= 0:
            assert rr.shard_of_task[t] == rr.shard_of_variable[v]
    assert rr.shard_of_task[model.names.index("ps:global_step")] == 0
    assert sum(rr.bytes_per_shard(model)) == model.bytes_of(TaskKind.PULL)


def test_greedy_balances_bytes_better_than_round_robin_here(mlp_trace_dir: pathlib.Path) -> None:
    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    greedy = place(model, 2, "greedy", creation_order(trace))
    rr = place(model, 2, "round-robin", creation_order(trace))
    assert max(greedy.bytes_per_shard(model)) < max(rr.bytes_per_shard(model))
    assert max(greedy.bytes_per_shard(model)) >= max(variable_bytes(model, greedy.variables))


def test_a_placement_file_is_followed_and_checked(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    names = place(model, 1, "round-robin").variables.names
    path = tmp_path / "placement.csv"
    at = f"^{re.escape(str(path))}: "  # each refusal names the file first (the rule alone passed without it)
    path.write_text("variable,shard\n" + "".join(f"{n},{i % 3}\n" for i, n in enumerate(names)))
    plain = "".join(f"{n.removeprefix('ps:')},{i % 3}\n" for i, n in enumerate(names))  # as inspect names them
    path.write_text("variable,shard\n" + plain)
    assert place(model, 3, str(path)).shard_of_variable == tuple(i % 3 for i in range(len(names)))
    path.write_text("variable,shard\n" + "".join(f"{n},{i % 3}\n" for i, n in enumerate(names)))
    assert place(model, 3, str(path)).shard_of_variable == tuple(i % 3 for i in range(len(names)))
    path.write_text("\ufeffvariable,shard\n" + "".join(f"{n},{i % 3}\n" for i, n in enumerate(names)))  # a BOM
    assert place(model, 3, str(path)).shard_of_variable == tuple(i % 3 for i in range(len(names)))
    path.write_text("variable,shard\n" + "".join(f"{n},{i % 3}\n" for i, n in enumerate(names)))
    wanted = r"line 4: expected variable,shard with a shard from 0 to 1, placing on 2 shards \(got '.*,2'\)"
    with pytest.raises(ConfigError, match=at + wanted):
        place(model, 2, str(path))
    path.write_text("variable,shard\n" + f"{names[0]},\u00b2\n")  # a digit to str.isdigit, not to int()
    with pytest.raises(ConfigError, match=at + r"line 2: expected variable,shard with a shard from 0 to 1"):
        place(model, 2, str(path))
    path.write_text("variable,shard\n" + "".join(f"{n},0\n" for n in names) + f"{names[0]},1\n")
    with pytest.raises(ConfigError, match=at + rf"line {len(names) + 2}: '{names[0]}' is placed twice"):
        place(model, 2, str(path))
    path.write_text("variable,shard\n" + f"{names[0]},0\n")
    with pytest.raises(ConfigError,
                       match=at + rf"no shard for {len(names) - 1} parameters, e\.g\. '{re.escape(names[1])}'$"):
        place(model, 2, str(path))
    with pytest.raises(ConfigError, match="round-robin, greedy or a placement file"):
        place(model, 2, "nearest")


def test_a_placement_files_errors_count_one_shard_and_one_parameter_in_the_singular(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """They said 'placing on 1 shard(s)' and 'no shard for 1 parameter(s)'."""
    model = build_model(read_trace(mlp_trace_dir))
    names = place(model, 1, "round-robin").variables.names
    path = tmp_path / "placement.csv"
    at = f"^{re.escape(str(path))}: "  # each refusal names the file first (the rule alone passed without it)
    path.write_text("variable,shard\n" + f"{names[0]},1\n")
    with pytest.raises(ConfigError, match=at + r"line 2: expected variable,shard with a shard from 0 to 0, placing on "
                                          r"1 shard \(got '.*,1'\)$"):
        place(model, 1, str(path))
    path.write_text("variable,shard\n" + "".join(f"{n},0\n" for n in names[:-1]))
    with pytest.raises(ConfigError, match=at + rf"no shard for 1 parameter, e\.g\. '{re.escape(names[-1])}'$"):
        place(model, 1, str(path))


def test_a_placement_row_of_thousands_of_characters_is_quoted_short(mlp_trace_dir: pathlib.Path,
                                                                    tmp_path: pathlib.Path) -> None:
    """A shard of 5000 digits was quoted whole with its row: the line ran to its 300 characters of them."""
    model = build_model(read_trace(mlp_trace_dir))
    names = place(model, 1, "round-robin").variables.names
    path = tmp_path / "placement.csv"
    path.write_text(f"variable,shard\n{names[0]},{'9' * 5000}\n")
    with pytest.raises(ConfigError) as refused:
        place(model, 2, str(path))
    said = str(refused.value)
    assert "placement.csv: line 2: has more than 400 characters (got '" in said and len(said) < 250
    long_name = "v" * 5000
    path.write_text(f"variable,shard\n{long_name},0\n{long_name},1\n")
    with pytest.raises(ConfigError) as refused:  # a name the trace lacks, the first thing wrong with it
        place(model, 2, str(path))
    assert len(str(refused.value)) < 400


def test_an_unclosed_quote_in_a_placement_file_is_named_on_its_line(mlp_trace_dir: pathlib.Path,
                                                                    tmp_path: pathlib.Path) -> None:
    """The quoted cell swallowed every row below it, and the refusal named the file's last line."""
    model = build_model(read_trace(mlp_trace_dir))
    names = place(model, 1, "round-robin").variables.names
    path = tmp_path / "placement.csv"
    rows = [f"{n},{i % 2}\n" for i, n in enumerate(names)]
    path.write_text("variable,shard\n" + "".join([rows[0], '"' + rows[1], *rows[2:]]))
    with pytest.raises(ConfigError, match=r"placement\.csv: line 3: expected variable,shard"):
        place(model, 2, str(path))


def test_a_placement_file_names_only_the_parameters_in_utf8(mlp_trace_dir: pathlib.Path,
                                                           tmp_path: pathlib.Path) -> None:
    """Both were ignored: a name no parameter has (a typo) and bytes that are not UTF-8 (read as U+FFFD)."""
    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    names = place(model, 1, "round-robin").variables.names
    path = tmp_path / "placement.csv"
    every = b"variable,shard\n" + b"".join(f"{n},{i % 2}\n".encode() for i, n in enumerate(names))
    path.write_bytes(every + b"ps:fc1/kernal,1\n")
    with pytest.raises(ConfigError, match=rf"placement\.csv: line {len(names) + 2}: 'ps:fc1/kernal' is not a "
                                          r"parameter the trace has \(parameters: ps:"):
        place(model, 2, str(path), creation_order(trace))
    path.write_bytes(every + b"ps:global_step,1\n")
    with pytest.raises(ConfigError, match=r"'ps:global_step' is a variable but not a parameter"):
        place(model, 2, str(path), creation_order(trace))
    path.write_bytes(every.replace(b"variable,shard\n", b"variable,shard\nps:caf\xe9,0\n"))
    with pytest.raises(ConfigError, match=r"placement\.csv: line 2: not UTF-8 text at byte 21$"):
        place(model, 2, str(path), creation_order(trace))
    path.write_bytes(b"\xef\xbb\xbf" + every + b"ps:caf\xe9,0\n")  # a spreadsheet's mark: the file's byte still
    with pytest.raises(ConfigError, match=rf"placement\.csv: line {len(names) + 2}: not UTF-8 text at byte "
                                          rf"{3 + len(every) + 6}$"):
        place(model, 2, str(path), creation_order(trace))


@pytest.mark.parametrize("name", ["mlp_200mbit_k2_rr", "mlp_200mbit_k2_greedy", "mlp_200mbit_k3_greedy",
                                  "wide_1000mbit_k2_greedy", "wide_1000mbit_k3_rr"])
def test_placement_from_a_one_ps_trace_is_what_tensorflow_did(name: str) -> None:
    """Placed from the one-PS base run's trace, every PS task serves the bytes TensorFlow put on it in the real
    K-PS run (``ps_bytes``, measured by the testbed from the workers' own graph)."""
    with (SHARDS / "campaign.csv").open() as fh:
        campaign = {row["name"]: row for row in csv.DictReader(fh)}
    row, base = campaign[name], campaign[campaign[name]["base"]]
    trace = read_trace(SHARDS / base["set"] / base["name"] / "trace")
    model = build_model(trace)
    placed = place(model, int(row["ps_tasks"]), row["placement"], creation_order(trace))
    with (SHARDS / row["set"] / name / "measured.csv").open() as fh:
        measured = {r["ps_bytes"] for r in csv.DictReader(fh)}
    assert measured == {";".join(str(b) for b in placed.bytes_per_shard(model))}


@pytest.mark.parametrize("name", ["mlp_200mbit_k2_rr", "mlp_200mbit_k3_greedy", "wide_1000mbit_k3_rr"])
def test_a_trace_of_a_k_ps_job_keeps_its_placement(name: str) -> None:
    """Read from the trace of the K-PS job itself, each PS task serves the bytes TensorFlow put on it there, and
    the one-PS base trace has no traced placement."""
    with (SHARDS / "campaign.csv").open() as fh:
        campaign = {row["name"]: row for row in csv.DictReader(fh)}
    row, base = campaign[name], campaign[campaign[name]["base"]]
    model = build_model(read_trace(SHARDS / row["set"] / name / "trace"))
    traced = traced_placement(model)
    assert traced.n_shards == int(row["ps_tasks"])
    with (SHARDS / row["set"] / name / "measured.csv").open() as fh:
        measured = {r["ps_bytes"] for r in csv.DictReader(fh)}
    assert measured == {";".join(str(b) for b in traced.bytes_per_shard(model))}
    config = PredictConfig().on_traced_ps_tasks(model)
    assert config.ps_shard_of_task == config.traced_ps_task == model.traced_ps_task
    assert config.one_ps(None).ps_shard_of_task == model.traced_ps_task  # the traced job: its K PS tasks
    one_ps = build_model(read_trace(SHARDS / base["set"] / base["name"] / "trace"))
    assert one_ps.traced_ps_task == () and PredictConfig().on_traced_ps_tasks(one_ps) == PredictConfig()
    with pytest.raises(ConfigError, match="one PS task"):
        traced_placement(one_ps)


def test_a_placement_fifo_is_named_for_what_it_is(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    import os

    fifo = tmp_path / "placement.csv"
    os.mkfifo(fifo)
    model = build_model(read_trace(mlp_trace_dir))
    with pytest.raises(ConfigError, match=r"placement\.csv': not a regular file"):
        place(model, 2, str(fifo))


def test_variable_order_is_creation_order_then_what_it_lacks() -> None:
    variables = VariableMap(of_task=(), names=("ps:b", "ps:a", "ps:c"))
    assert variable_order(variables, ("ps:global_step", "ps:c", "ps:a")) == ["ps:global_step", "ps:c", "ps:a", "ps:b"]
    assert variable_order(variables) == ["ps:global_step", "ps:b", "ps:a", "ps:c"]  # no graph: the step first


def test_round_robin_and_greedy_by_hand_on_a_synthetic_model() -> None:
    """Four parameters of 100, 10, 10 and 10 bytes in creation order p0..p3 (the global step, absent from the
    model, weighs 8 bytes): round robin takes step, p0, p1, p2, p3 onto shards 0, 1, 0, 1, 0; greedy puts each on
    the lightest shard so far (ties to the lower): step 0 (8), p0 1 (100), p1 0 (18), p2 0 (28), p3 0 (38)."""
    model = synthetic_model(n_params=4, n_layers_ops=1)
    sizes = [100, 10, 10, 10]
    pulls = [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    model = dataclasses.replace(model, size_bytes=tuple(
        sizes[pulls.index(t)] if t in pulls else b for t, b in enumerate(model.size_bytes)))
    names = variable_map(model).names
    assert len(names) == 4 and variable_bytes(model, variable_map(model)) == sizes
    created = ("ps:global_step", *names)
    assert place(model, 2, "round-robin", created).shard_of_variable == (1, 0, 1, 0)
    greedy = place(model, 2, "greedy", created)
    assert greedy.shard_of_variable == (1, 0, 0, 0)
    assert greedy.bytes_per_shard(model) == (30, 100)
    for n in (0, MAX_SHARDS + 1):
        with pytest.raises(ConfigError, match=f"'ps_shards' must be from 1 to {MAX_SHARDS} \\(got {n}\\)"):
            place(model, n, "greedy")


# TensorFlow's own placement of the zoo's embed on 2 PS tasks by the testbed's greedy ps_strategy: each variable op's
# name and task, as JSON (run in a process of its own: the graph is TF1's)
_TF_GREEDY = """
import json, sys
import tensorflow as tf
from validation.node import GreedyBytes
from validation.zoo import ModelSpec, build_loss
v1 = tf.compat.v1
v1.disable_eager_execution()
setter = v1.train.replica_device_setter(ps_tasks=2, ps_strategy=GreedyBytes(2))
with v1.device(setter):
    v1.train.get_or_create_global_step()
    build_loss(ModelSpec(name="embed", batch_size=32, widths=tuple(json.loads(sys.argv[1]))))
print(json.dumps({v.op.name: tf.DeviceSpec.from_string(v.device).task for v in v1.global_variables()}))
"""


def test_greedy_weighs_a_sparsely_read_table_by_what_it_holds_as_tensorflow_does(tmp_path: pathlib.Path) -> None:
    """byte_size_load_fn weighs a variable by the bytes it holds: an embedding table of 25.6 MB whose step gathers
    32 kB of rows weighs 25.6 MB. Weighed by the rows it moves, the 256 kB dense kernel after it went to the other
    PS and the rest beside the table: not what the testbed's job (validation.node.GreedyBytes) placed."""
    widths = [100_000, 64, 4, 1024]  # 4 tokens a example: 32 x 4 rows of 64 floats gathered, a 64 x 1024 kernel
    out = tmp_path / "trace"
    assert main(["profile", "--model", "embed", "--widths", ",".join(map(str, widths)), "--warmup", "1",
                 "--steps", "2", "--out", str(out)]) == 0
    ran = subprocess.run([sys.executable, "-c", _TF_GREEDY, json.dumps(widths)], capture_output=True, text=True,
                         check=True, timeout=300)
    by_tf = json.loads(ran.stdout.strip().splitlines()[-1])
    trace = read_trace(out)
    model = build_model(trace)
    greedy = place(model, 2, "greedy", creation_order(trace), stored_bytes(trace))
    ours = {name.removeprefix("ps:"): shard for name, shard in
            zip(greedy.variables.names, greedy.shard_of_variable, strict=True)}
    assert ours == {name: task for name, task in by_tf.items() if name != "global_step"}, (ours, by_tf)
    assert len(ours) == 5 and len(set(ours.values())) == 2  # every parameter, on both PS
    by_moved = place(model, 2, "greedy", creation_order(trace))  # the rule this replaced: a different placement
    assert by_moved.shard_of_variable != greedy.shard_of_variable


def test_a_tf2_profile_is_placed_round_robin_in_the_order_the_strategy_placed_it() -> None:
    """A TF2 profile has no variable nodes, so round robin went by name, after a global step the job does not have:
    the zoo's mlp profiled on one PS task (a testbed run's trace), re-placed on two, split its kernels between the
    shards, where ParameterServerStrategy put all three on one PS task when the same model ran on two (the bundled
    tf2_ps2). The shards' numbers may differ: the testbed's job makes a step counter first, which shifts them."""
    data = pathlib.Path(__file__).resolve().parents[2] / "data"
    one = read_trace(data / "tf2" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace")  # the zoo's mlp, one PS
    two = read_trace(data / "traces" / "tf2_ps2")  # the same model on two PS tasks
    model = build_model(one)
    rr = place(model, 2, "round-robin", creation_order(one))
    theirs = {f"ps:{n}": d.rsplit("task:", 1)[1].split("/")[0] for n, d in
              zip(two.variables["name"], two.variables["device"], strict=True)}
    assert len(theirs) == 6 and set(theirs) <= set(rr.variables.names)  # the six parameters, in both
    ours = dict(zip(rr.variables.names, rr.shard_of_variable, strict=True))

    def groups(shard_of: dict[str, object]) -> set[frozenset[str]]:
        return {frozenset(n for n in theirs if shard_of[n] == s) for s in set(shard_of.values())} - {frozenset()}

    assert groups(ours) == groups(theirs)
