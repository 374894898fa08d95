"""A step model from a TF2 ParameterServerStrategy profile (the bundled capture, TensorFlow 2.21's own
profiler): the partition graphs rebuilt from the step function's registration, the variables' pulls and
updates found, the coordinator's dispatch gap kept, and one simulated worker replaying the profiled steps."""

from __future__ import annotations

import html
import pathlib
import statistics

import pytest

from parsers import read_trace
from parsers.traceviewer import HOST_CLOCKS_LOST, clock_note
from tracegen.errors import ModelError
from tracegen.metrics import steps_per_s
from tracegen.model import TaskKind, build_model
from tracegen.simulate import SimConfig, simulate
from tracegen.variables import variable_map

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
CLOCK_NOTE = str(clock_note([HOST_CLOCKS_LOST]))  # the line inspect and predict print of a trace viewer's hosts
# validation.capture_tf2.MODEL: float32 w1 256x320, b1 320, w2 320x10, b2 10
VARIABLE_BYTES = sorted(4 * n for n in (256 * 320, 320, 320 * 10, 10))


def test_a_tf2_profile_makes_a_step_model_with_its_variables() -> None:
    model = build_model(read_trace(TRACES / "tf2_pss"))
    variables = variable_map(model)
    assert variables.n_variables == 4
    pulls = [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL and variables.of_task[t] >= 0]
    assert sorted(model.size_bytes[t] for t in pulls) == VARIABLE_BYTES
    pushes = [t for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PUSH]
    assert sorted(model.size_bytes[t] for t in pushes) == VARIABLE_BYTES
    for t in pushes:  # every gradient is applied on the PS, after it arrived
        assert any(model.kinds[c] == TaskKind.APPLY and t in model.preds(c) for c in range(model.n_tasks))
    for t in pulls:  # every parameter is read by a worker op
        assert any(model.kinds[c] == TaskKind.COMPUTE and t in model.preds(c) for c in range(model.n_tasks))
    assert len(model.timings) == 3  # the first call (registration, tracing) left out
    assert model.step_gap_ns > 0  # the coordinator's dispatch of each next call


def test_the_note_on_the_unsized_control_edge_says_what_was_done_with_it() -> None:
    """The PS's 'updates applied' control edge is traced in every step without a size (parsers: an XSpace holds no
    byte counts, and no variable covers it) and modelled at 0 bytes; predict's note said it was 'absent from every
    traced step ... reconstructed from the rendezvous (size from the variable)', both untrue."""
    trace = read_trace(TRACES / "tf2_pss")
    model = build_model(trace)
    edge = "edge_58_GroupCrossDeviceControlEdges_0/Identity"
    traced = trace.transfers[trace.transfers["tensor_name"] == edge]
    assert len(traced) == 3 and traced["size_bytes"].isna().all()  # one per step, none with a size
    assert model.size_bytes[model.names.index(edge)] == 0
    assert model.notes == (f"1 transfer traced but never with a size (no variable near, 0 bytes): {edge}",)


def test_one_simulated_worker_replays_the_profiled_steps() -> None:
    # in-sample: the model is built from these very steps and gaps; what can fail is the replay of them
    trace = read_trace(TRACES / "tf2_pss")
    model = build_model(trace)
    steps = trace.steps.sort_values("step")
    lengths = (steps["end_ns"] - steps["start_ns"]).tolist()
    gaps = (steps["start_ns"].iloc[1:].to_numpy() - steps["end_ns"].iloc[:-1].to_numpy()).tolist()
    traced = 1e9 / (statistics.median(lengths) + statistics.median(gaps))
    rate = statistics.mean(steps_per_s(simulate(model, SimConfig(steps=30, warmup_steps=3, seed=s)))
                           for s in range(3))
    assert rate == pytest.approx(traced, rel=0.15)


def test_the_trace_viewer_files_make_the_same_graph() -> None:
    xspace = build_model(read_trace(TRACES / "tf2_pss"))
    viewer = build_model(read_trace(TRACES / "tf2_pss_viewer"))
    assert sorted(zip(viewer.names, viewer.kinds, strict=True)) == sorted(zip(xspace.names, xspace.kinds,
                                                                              strict=True))


def test_a_profile_without_the_first_call_says_how_to_get_one(tmp_path: pathlib.Path) -> None:
    worker = next(p for p in sorted((TRACES / "tf2_pss").rglob("*.xplane.pb")) if b"ReluGrad" in p.read_bytes())
    coordinator = next(p for p in sorted((TRACES / "tf2_pss").rglob("*.xplane.pb"))
                       if b"tf_function_call" in p.read_bytes())
    for p in (worker, coordinator):  # without the PS's profile, no PS component of the function
        (tmp_path / p.name).write_bytes(p.read_bytes())
    with pytest.raises(ModelError, match="first call"):
        build_model(read_trace(tmp_path))


def test_a_profile_run_directory_finds_the_files_beside_its_logdir() -> None:
    """A TensorBoard logdir keeps the profile in plugins/profile/RUN/ and tracegen's files at its top. Given the
    run directory or one host's file in it, as the README allows, predict found no link profile, single-worker
    measurement or meta.json 'beside the trace': it fell back to the link the trace shows and a batch of 1
    (samples/s 32x too low here) with no word of the files it passed over (a hardening pass)."""
    from tracegen.inputs import batch_size_of, profile_beside, single_worker_beside
    from tracegen.sweepgrid import trace_files, trace_sha256

    logdir = TRACES.parent / "tf2" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
    [run] = (logdir / "plugins" / "profile").iterdir()
    host = sorted(run.glob("*.xplane.pb"))[0]
    for trace in (logdir, run, host, run / "*.xplane.pb"):
        assert profile_beside(trace) == logdir / "link-profile.json", trace
        assert single_worker_beside(trace) == logdir / "single-worker.json", trace
        assert batch_size_of(str(trace), None) == 32, trace
    assert logdir / "link-profile.json" in trace_files(run)  # a sweep's point ids cover them too
    assert logdir / "meta.json" in trace_files(host)
    assert trace_sha256(run) != trace_sha256(logdir)  # the run's files and the logdir's three, named as such


def test_inspect_and_predict_say_the_trace_viewers_hosts_were_put_on_one_clock_by_causality_alone(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trace-viewer file counts each host's times from its own profile start; they are put onto one clock only as
    far as causality requires: a `note:` line says so, on the trace as converted too, and none is said of the
    XSpace, which keeps epoch times."""
    from tracegen.cli import main

    tables = tmp_path / "tables"
    assert main(["convert", str(TRACES / "tf2_pss_viewer"), "--to", "csv", str(tables)]) == 0
    for trace, said in ((TRACES / "tf2_pss_viewer", 1), (tables, 1), (TRACES / "tf2_pss", 0)):
        capsys.readouterr()
        assert main(["inspect", str(trace)]) == 0
        assert main(["predict", str(trace), "--workers", "1", "--steps", "3", "--seeds", "1",
                     "--out", str(tmp_path / f"out{said}{trace.name}")]) == 0
        notes = [line for line in capsys.readouterr().out.splitlines()
                 if line.startswith("note:") and CLOCK_NOTE in line]
        assert len(notes) == 2 * said, (trace, notes)


def test_predicts_report_page_carries_the_notes_on_the_trace_it_printed(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """report.html named its inputs but none of the model's notes that predict prints: the page of a trace-viewer
    prediction kept quiet that its hosts' times were put onto one clock by causality alone."""
    from tracegen.cli import main

    assert main(["predict", str(TRACES / "tf2_pss_viewer"), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--html", "--out", str(tmp_path / "o")]) == 0
    printed = [line.removeprefix("note: ") for line in capsys.readouterr().out.splitlines()
               if CLOCK_NOTE in line]
    page = html.unescape((tmp_path / "o" / "report.html").read_text())
    assert printed and printed[0] in page


def test_a_profile_on_two_ps_tasks_keeps_each_parameter_on_its_traced_ps_task(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job profiled on two PS tasks (the bundled tf2_ps2, mlp's kernels on task 0 and biases on task 1): its
    variables were read with no device and predict refused the trace; now the step model has each parameter on its
    traced PS task, as a TF1 trace on two PS tasks has, and predict keeps them there."""
    from tracegen.cli import main

    trace = read_trace(TRACES / "tf2_ps2")
    model = build_model(trace)
    variables = variable_map(model)
    assert variables.n_variables == 6 and sorted(set(model.traced_ps_task)) == [0, 1]
    held = trace.variables.groupby("device")["size_bytes"].sum()
    for k, device in enumerate(sorted(held.index)):  # traced task numbers in order: task 0's device first
        for kind in (TaskKind.PULL, TaskKind.PUSH):
            moved = [model.size_bytes[t] for t in range(model.n_tasks) if model.kinds[t] == kind
                     and model.traced_ps_task[t] == k and (kind == TaskKind.PUSH or variables.of_task[t] >= 0)]
            assert sum(moved) == held[device], (device, kind)
    out = tmp_path / "p"
    assert main(["predict", str(TRACES / "tf2_ps2"), "--bandwidth", "1Gbit/s", "--workers", "1-4", "--steps", "10",
                 "--seeds", "1", "--out", str(out)]) == 0
    assert "traced with 2 PS tasks" in capsys.readouterr().out
    assert (out / "curve.csv").read_text().count("\n") == 5  # the header and N = 1..4
