"""``summarize`` on real traces: the parameters, pulls and pushes must agree with each other and with the
partition graphs, whatever the model."""

from __future__ import annotations

import pathlib

from parsers import read_trace
from tracegen.cli import format_summary
from tracegen.summary import summarize


def test_pulls_and_gradient_pushes_move_every_parameter_once(model_dir: pathlib.Path) -> None:
    trace = read_trace(model_dir)
    s = summarize(trace)
    applies = trace.graph_nodes[trace.graph_nodes["op_type"].str.contains("Apply")]
    assert s["n_variables"] == len(applies) == s["gradient_push_count"]
    assert s["param_bytes"] == s["pull_bytes"] == s["gradient_push_bytes"]
    assert s["param_bytes"] == trace.variables["size_bytes"].sum() - s["other_variable_bytes"]
    # Non-gradient pushes (the learning rate) are small scalars.
    assert 0 < s["push_bytes"] - s["gradient_push_bytes"] <= 8 * (s["push_count"] - s["gradient_push_count"])


def test_recorded_counts_and_times_are_per_step(model_dir: pathlib.Path) -> None:
    trace = read_trace(model_dir)
    s = summarize(trace)
    assert s["n_steps"] == len(s["step_time_ns_per_step"]) == len(s["pull_count_recorded_per_step"]) == 3
    assert all(n <= s["push_count"] for n in s["push_count_recorded_per_step"])
    assert 0 <= s["overlap_ns"] <= min(s["transfer_time_ns"], s["compute_time_ns"])
    assert s["transfer_time_ns"] <= s["step_time_ns"] * 1.5


def test_chrome_input_says_unknown_instead_of_guessing(model_dir: pathlib.Path) -> None:
    s = summarize(read_trace(model_dir / "step_000.json"))
    full = summarize(read_trace(model_dir / "step_000.pb"))
    assert s["pull_bytes"] is None and s["param_bytes"] is None and s["n_variables"] is None
    assert s["pull_count"] == full["pull_count_recorded_per_step"][0]
    # The timeline keeps whole microseconds: the step time agrees to within their rounding.
    assert abs(s["step_time_ns"] - full["step_time_ns"]) <= 2000


def test_a_synthetic_trace_says_the_bytes_its_transfers_carry(model_dir: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    """A synthetic trace has no graph, but every transfer in it carries its size: inspect said its pulls' and
    pushes' bytes were unknown. They are each step's sum, the traced step's own."""
    from tracegen.cli import main

    assert main(["predict", str(model_dir), "--workers", "2", "--steps", "3", "--seeds", "1", "--jobs", "1",
                 "--emit-traces", "2", "--out", str(tmp_path)]) == 0
    s = summarize(read_trace(tmp_path / "traces" / "n2.json"))
    full = summarize(read_trace(model_dir))
    assert (s["pull_bytes"], s["push_bytes"]) == (full["pull_bytes"], full["push_bytes"])


def test_a_tf2_profile_says_the_bytes_of_its_sized_pulls_beside_its_unsized_control_edge() -> None:
    """The TF2 profile's control edge is never recorded with a size: the step's pull bytes are unknown, but its
    sized pulls carry every parameter, and inspect says so (it printed 'unknown' for the 342 kB)."""
    s = summarize(read_trace(pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "tf2_pss"))
    assert s["pull_bytes"] is None
    assert s["pull_unsized"] == 1 and s["pull_count"] == s["n_variables"] + 1
    assert s["pull_sized_bytes"] == s["param_bytes"] > 0
    assert s["push_unsized"] == 0 and s["push_sized_bytes"] == s["push_bytes"]
    pulls = next(line for line in format_summary(s).splitlines() if line.startswith("pulls"))
    assert f"({s['param_bytes']} B) in the {s['n_variables']} sized, 1 tensor never recorded with a size" in pulls


def test_one_gradient_and_one_element_are_said_in_the_singular() -> None:
    # a one-variable model's summary said '1 elements' and '(1 gradients, 4 B)'
    s = summarize(read_trace(pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "tf2_pss"))
    s.update(n_variables=1, param_elements=1, param_bytes=4, gradient_push_count=1, gradient_push_bytes=4)
    text = format_summary(s)
    assert "params     1 variable, 1 element, 4 B" in text and " (1 gradient, 4 B); " in text, text


def test_chrome_input_has_no_count_of_unsized_tensors(model_dir: pathlib.Path) -> None:
    s = summarize(read_trace(model_dir / "step_000.json"))
    assert s["pull_unsized"] is None and s["pull_sized_bytes"] is None


def test_the_link_estimate_is_the_one_predict_uses_once_held_to_the_steps() -> None:
    """A deep trace whose replay runs slow as estimated: inspect gives the rates predict simulates, raised, and says
    so; not the raw estimate."""
    from tracegen.model import build_model
    from tracegen.selfreplay import replayed_model

    trace = read_trace(pathlib.Path(__file__).resolve().parents[2] / "data" / "atcap" / "test"
                       / "deep_500mbit_q100_b16k_ps03" / "trace")
    raw, used = build_model(trace).link, replayed_model(build_model(trace)).link
    assert used.pull_bandwidth_bytes_per_s > raw.pull_bandwidth_bytes_per_s
    said = summarize(trace)["link_estimate"]
    assert (said["pull_bandwidth_bytes_per_s"], said["push_bandwidth_bytes_per_s"], said["method"]) == (
        used.pull_bandwidth_bytes_per_s, used.push_bandwidth_bytes_per_s, used.method)
    assert "raised" in said["method"]
