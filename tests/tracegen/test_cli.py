"""The ``tracegen`` command as a whole (:mod:`tracegen.cli`): ``inspect`` against its golden files, help and
--version, the usage errors and error lines common to every command, and the README's examples. The --out folder
every command writes is tested in ``test_cli_outputs.py``; signals, closed pipes and full disks in
``test_cli_signals.py``. Tests of one subcommand alone are in ``test_cli_<module>.py`` (plan's and sweep's in
``test_plan.py`` and ``test_sweep*.py``)."""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tracegen.cli import main

from tracegen_support import ROOT

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("model", ["cnn", "mlp", "resnet"])
def test_inspect_json_matches_golden(model: str, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the summary names its source: keep it relative and stable
    assert main(["inspect", "--json", f"data/traces/{model}"]) == 0
    got = json.loads(capsys.readouterr().out)
    golden = GOLDEN / f"inspect_{model}.json"
    # rewritten, the file would be compared with itself: a run with UPDATE_GOLDEN set passed whatever inspect said
    if os.environ.get("UPDATE_GOLDEN") and (not golden.is_file() or got != json.loads(golden.read_text())):
        golden.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
        pytest.fail(f"{golden}: rewritten (UPDATE_GOLDEN): review its diff, then run again without UPDATE_GOLDEN")
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("model", ["cnn", "mlp", "resnet"])
def test_inspect_golden_figures_agree_with_the_raw_trace(model: str, tf_protos) -> None:  # type: ignore[no-untyped-def]
    """The golden files were written by tracegen itself (UPDATE_GOLDEN), so a parser bug present when they were
    regenerated would pass the test above. Here a few of their figures are worked out from the RunMetadata files
    with TensorFlow's own protobuf classes, not tracegen's parser: the steps, the devices, the transfers per step
    (a RecvTensor from the PS to the worker is a pull, from the worker to the PS a push) and their bytes, the
    parameters (the PS's variables that a ReadVariableOp reads) with their elements and bytes from the graph's
    shapes, and each step's time from its first op's start to its last op's end."""
    from tensorflow.core.framework import types_pb2

    golden = json.loads((GOLDEN / f"inspect_{model}.json").read_text())
    steps = sorted((ROOT / "data/traces" / model).glob("step_*.pb"))
    pulls: list[list[int]] = []
    pushes: list[list[int]] = []
    step_ns: list[int] = []
    devices: set[str] = set()
    shapes: dict[str, tuple[int, ...]] = {}
    for path in steps:
        md = tf_protos.RunMetadata()
        md.ParseFromString(path.read_bytes())
        pulls.append([])
        pushes.append([])
        starts, ends = [], []
        for dev in md.step_stats.dev_stats:
            devices.add(dev.device)
            for ns in dev.node_stats:
                start_ns = ns.all_start_nanos or ns.all_start_micros * 1000
                starts.append(start_ns)
                ends.append(start_ns + (ns.all_end_rel_nanos or ns.all_end_rel_micros * 1000))
                if ns.node_name == "RecvTensor":  # '[1.0MB] [697Mb/s] edge_17_... from /job:ps/... to /job:worker/...'
                    sender = ns.timeline_label.split(" from ", 1)[1].split(" to ", 1)[0]
                    size = ns.output[0].tensor_description.allocation_description.requested_bytes
                    (pulls if sender.startswith("/job:ps/") else pushes)[-1].append(size)
        step_ns.append(max(ends) - min(starts))
        for graph in md.partition_graphs:
            handles = {n.name: n for n in graph.node if n.op == "VarHandleOp" and n.device.startswith("/job:ps/")}
            for n in graph.node:
                if n.op == "ReadVariableOp" and n.input[0] in handles:
                    handle = handles[n.input[0]]
                    assert handle.attr["dtype"].type == types_pb2.DT_FLOAT  # 4 bytes an element
                    shapes[handle.name] = tuple(d.size for d in handle.attr["shape"].shape.dim)
    assert golden["n_steps"] == len(steps) == 3
    assert golden["devices"] == sorted(devices)
    assert golden["pull_count_recorded_per_step"] == [len(p) for p in pulls]
    assert golden["push_count_recorded_per_step"] == [len(p) for p in pushes]
    assert {golden["pull_bytes"]} == {sum(p) for p in pulls} and golden["pull_count"] == len(pulls[0])
    assert {golden["push_bytes"]} == {sum(p) for p in pushes} and golden["push_count"] == len(pushes[0])
    assert golden["parameters"] == sorted(shapes) and golden["n_variables"] == len(shapes)
    assert golden["param_elements"] == sum(math.prod(s) for s in shapes.values())
    assert golden["param_bytes"] == 4 * golden["param_elements"]
    assert golden["step_time_ns_per_step"] == step_ns


@pytest.mark.parametrize("model", ["cnn", "mlp", "resnet"])
def test_inspect_golden_timing_figures_agree_with_the_raw_trace(model: str, tf_protos) -> None:  # type: ignore[no-untyped-def]
    """As the test above, for the golden timing figures (the median over steps): the time transfers were in
    flight, the time worker ops ran (not counting the ops that stand for a transfer), both at once, the PS's op
    time, and each direction's bytes over its time in flight; from the RunMetadata files with TensorFlow's own
    protobuf classes, spans merged here by sorting, not by summary.py's interval tree."""
    golden = json.loads((GOLDEN / f"inspect_{model}.json").read_text())
    flight: list[list[tuple[int, int]]] = []
    running: list[list[tuple[int, int]]] = []
    ps_ns: list[int] = []
    rates: dict[str, list[float]] = {"pull": [], "push": []}
    for path in sorted((ROOT / "data/traces" / model).glob("step_*.pb")):
        md = tf_protos.RunMetadata()
        md.ParseFromString(path.read_bytes())
        spans: dict[str, list[tuple[int, int]]] = {"pull": [], "push": [], "worker": [], "ps": []}
        moved = {"pull": 0, "push": 0}
        for dev in md.step_stats.dev_stats:
            for ns in dev.node_stats:
                start_ns = ns.all_start_nanos or ns.all_start_micros * 1000
                span = (start_ns, start_ns + (ns.all_end_rel_nanos or ns.all_end_rel_micros * 1000))
                if ns.node_name == "RecvTensor":
                    sender = ns.timeline_label.split(" from ", 1)[1].split(" to ", 1)[0]
                    direction = "pull" if sender.startswith("/job:ps/") else "push"
                    spans[direction].append(span)
                    moved[direction] += ns.output[0].tensor_description.allocation_description.requested_bytes
                elif ns.node_name and _op_type(ns.timeline_label) not in STANDS_FOR_A_TRANSFER:
                    spans["worker" if dev.device.startswith("/job:worker/") else "ps"].append(span)
        flight.append(_merged(spans["pull"] + spans["push"]))
        running.append(_merged(spans["worker"]))
        ps_ns.append(sum(e - s for s, e in spans["ps"]))
        for direction in ("pull", "push"):
            rates[direction].append(moved[direction] * 1e9 / sum(e - s for s, e in _merged(spans[direction])))
    assert len(flight) == 3
    both = [_overlap(a, b) for a, b in zip(flight, running, strict=True)]
    in_flight = [sum(e - s for s, e in spans) for spans in flight]
    assert golden["transfer_time_ns"] == statistics.median(in_flight)
    assert golden["compute_time_ns"] == statistics.median(sum(e - s for s, e in spans) for spans in running)
    assert golden["overlap_ns"] == statistics.median(both) > 0
    assert golden["overlap_fraction"] == pytest.approx(statistics.median(
        o / t for o, t in zip(both, in_flight, strict=True)), rel=1e-12)
    assert golden["ps_compute_time_ns"] == statistics.median(ps_ns)
    assert golden["pull_rate_bytes_per_s"] == pytest.approx(statistics.median(rates["pull"]), rel=1e-12)
    assert golden["push_rate_bytes_per_s"] == pytest.approx(statistics.median(rates["push"]), rel=1e-12)


# ops that stand for a transfer (their spans wait for the network) or for the function's frame: no compute
STANDS_FOR_A_TRANSFER = {"_Recv", "_Send", "_HostRecv", "_HostSend", "_Retval", "_Arg"}


def _op_type(label: str) -> str | None:
    """``OpType`` of a RunMetadata timeline label ``name = OpType(inputs)``."""
    return label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else None


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of ``spans`` (empty ones dropped) as disjoint spans, by sorting."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(sp for sp in spans if sp[1] > sp[0]):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """How long two unions of disjoint sorted spans overlap."""
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def test_inspect_prints_a_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(ROOT / "data/traces/mlp/step_001.json")]) == 0
    out = capsys.readouterr().out
    assert "not in this format" in out and "pulls      6 per step" in out


def test_inspect_gives_a_whole_median_op_count_as_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    # the quick start's 12 steps, 48 ops each: the median of an even count is a float, and the line said
    # 'ops        48.0 per step (median)' where the 3-step mlp trace's said '48 per step'
    trace = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    assert main(["inspect", str(trace), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ops_per_step"] == 48  # what the line must say
    assert main(["inspect", str(trace)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("ops "))
    assert line == "ops        48 per step (median)", line


def test_inspect_counts_what_it_skipped_after_each_reason(capsys: pytest.CaptureFixture[str]) -> None:
    # the reasons are plural phrases: the line said "1 steps that were the step function's first call"
    trace = ROOT / "data/traces/tf2_embed_ps2"
    assert main(["inspect", str(trace), "--json"]) == 0
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert 1 in skipped.values() and len(skipped) >= 2
    assert main(["inspect", str(trace)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("skipped: "))
    assert line == "skipped: " + "; ".join(f"{why}: {n}" for why, n in sorted(skipped.items())), line
    assert not any(f"1 {why}" in line for why in skipped), line


def test_inspect_shortens_the_per_step_figures_of_a_long_trace(tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # a synthetic trace of 2 workers has dozens of steps: the steps line listed every one, and each recorded
    # count, on lines hundreds of characters long
    out = tmp_path / "pred"
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "2", "--bandwidth", "1Gbit/s",
                 "--emit-traces", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    synthetic = out / "traces" / "n2.json"
    assert main(["inspect", str(synthetic), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    n = s["n_steps"]
    assert n > 12 and len(s["step_time_ns_per_step"]) == n
    assert main(["inspect", str(synthetic)]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = next(x for x in lines if x.startswith("steps "))
    assert steps.endswith(f" ({n} steps; each in inspect --json)") and steps.count(" ms") == 1 + 11, steps
    for key, prefix in (("pull_count_recorded_per_step", "pulls "), ("push_count_recorded_per_step", "pushes ")):
        line = next(x for x in lines if x.startswith(prefix))
        (count,) = set(s[key])  # every simulated step records all its transfers
        assert line.endswith(f"; recorded per step: {count} in each of the {n} steps"), line


def test_inspect_says_the_transfer_figures_are_medians_taken_apart(capsys: pytest.CaptureFixture[str]) -> None:
    # on the mlp trace the overlap's share (the median of each step's) is not overlap / in flight as printed
    # (2.657 / 20.706 ms is 13 %, the line said 21 %): without the word, the line reads as inconsistent
    assert main(["inspect", str(ROOT / "data/traces/mlp"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert round(s["overlap_fraction"], 2) != round(s["overlap_ns"] / s["transfer_time_ns"], 2)
    assert main(["inspect", str(ROOT / "data/traces/mlp")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("transfers"))
    assert line.endswith("of a step's transfer time (each the median over steps, taken apart)"), line


def test_inspect_says_whether_predict_uses_the_link_estimate_or_the_profile_beside(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 'link est.' line said 'what predict uses without --bandwidth' with a link profile beside the trace too,
    when predict uses the profile for the PS link and the trace's estimate only per connection."""
    trace = tmp_path / "mlp"
    shutil.copytree(ROOT / "data/traces/mlp", trace)
    assert main(["inspect", str(trace)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("link est."))
    assert "(the trace's own: " in line and "predict's PS link when no link-profile.json is beside" in line, line
    profile = trace / "link-profile.json"
    shutil.copyfile(ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace/link-profile.json", profile)
    assert main(["inspect", str(trace)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("link est."))
    assert "(the trace's own: " in line and f"predict's PS link is {profile}, beside the trace" in line, line
    assert "only caps one worker's connection" in line and "when no link-profile.json" not in line, line


def test_installed_command_runs_as_a_user_would(tmp_path: pathlib.Path) -> None:
    exe = pathlib.Path(sys.executable).parent / "tracegen"
    done = subprocess.run([str(exe), "inspect", str(tmp_path / "missing.pb")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"tracegen inspect: error: {tmp_path / 'missing.pb'}: no such file or directory"
    helped = subprocess.run([str(exe), "convert", "--help"], capture_output=True, text=True, check=True)
    assert "--to {chrome,parquet,csv}" in helped.stdout


def test_version_names_the_package_and_its_engine() -> None:
    """``tracegen --version`` was refused ('the following arguments are required: COMMAND'). It now says the
    installed version and whether the compiled engine runs (a bug report needs both). An output that cannot
    take it, or the help, is one line and exit code 2 (argparse dropped the error of ``--help > /dev/full`` and
    exited 0)."""
    import importlib.metadata

    from tracegen import native

    exe = pathlib.Path(sys.executable).parent / "tracegen"
    done = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"tracegen {importlib.metadata.version('tracegen-ps')} (engine: {native.engine()};")
    for argv, prog in ((["--version"], "tracegen"), (["--help"], "tracegen"), (["plan", "--help"], "tracegen plan")):
        full = subprocess.run(f"'{exe}' {' '.join(argv)} > /dev/full", shell=True,  # noqa: S602
                              capture_output=True, text=True, check=False, timeout=60)
        assert (full.returncode, full.stderr) == (2, f"{prog}: error: cannot write to standard output: No space "
                                                     "left on device\n"), argv


@pytest.mark.parametrize(("argv", "said"), [
    (["predict", "{trace}", "--bandwidth", "fast"],
     "tracegen predict: error: '--bandwidth': cannot read 'fast' as a rate"),
    (["validate", "--trace", "{trace}", "--measured", "{trace}", "--bandwidth", "0"],
     "tracegen validate: error: '--bandwidth': '0' has no unit"),
    (["testbed", "--model", "mlp", "--bandwidth", "fast"],
     "tracegen testbed: error: '--bandwidth': cannot read 'fast'"),
])
def test_a_bad_bandwidth_names_the_option_as_typed(argv: list[str], said: str, tmp_path: pathlib.Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The rate was named 'bandwidth', a setting no option of these commands is called (a hardening pass)."""
    trace = str(ROOT / "data/traces/mlp")
    assert main([a.format(trace=trace) for a in argv] + ["--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(said), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", [
    ["predict", "--bandwidth", "1Gbit/s"],
    ["plan", "--catalogue", str(ROOT / "data/catalogue/example.csv")],
    ["sweep", "--bandwidth", "1Gbit/s"],
])
@pytest.mark.parametrize("fraction", ["1e-300", "0.001"])
def test_a_payload_fraction_no_link_has_is_refused_not_rounded_up(command: list[str], fraction: str,
                                                                  tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """1 Gbit/s at a payload fraction of 1e-300 is 1e-292 bytes/s; predict and plan simulated 1 byte/s (the payload
    rate is rounded to at least one byte) and printed a curve for it (a hardening pass)."""
    argv = [command[0], str(ROOT / "data/traces/mlp"), *command[1:], "--payload-fraction", fraction, "--workers",
            "1", "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"must be from 0.01 to 1 (got {fraction})" in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", [
    ["predict", "--bandwidth", "1Gbit/s"],
    ["plan", "--catalogue", str(ROOT / "data/catalogue/example.csv")],
])
def test_a_payload_fraction_a_float_rounds_to_0_is_quoted_as_typed(command: list[str], tmp_path: pathlib.Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # --payload-fraction 1e-400 was refused with '(got 0.0)': the float had underflowed
    argv = [command[0], str(ROOT / "data/traces/mlp"), *command[1:], "--payload-fraction", "1e-400", "--workers",
            "1", "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --payload-fraction: '1e-400' is too small for a 64-bit float" in err
    assert "0.0" not in err and len(err) <= 300 and not (tmp_path / "o").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["predict", "t", "--steps"], "tracegen predict: error: argument --steps: expected one argument"),
    (["predict", "t", "--bandwidth", "-5Mbit/s", "--out", "o"],
     "argument --bandwidth: expected one argument (a value that begins with '-' is written --bandwidth=VALUE)"),
    (["predict", "--link", "bogus"], "argument --link: invalid choice: 'bogus'"),
    (["nosuch"], "tracegen: error: argument COMMAND: invalid choice: 'nosuch'"),
    (["netbench", "run"], "tracegen netbench run: error: the following arguments are required: --ps"),
    # an option of another command: argparse said 'tracegen: error: ... (see 'tracegen --help')', whose help lists
    # no command's options (a hardening pass)
    (["sweep", "t", "--out", "o", "--worker-classes", "w.csv"],
     "tracegen sweep: error: unrecognized arguments: --worker-classes w.csv (see 'tracegen sweep --help')"),
    (["netbench", "run", "--ps", "h:1", "--bogus"], "tracegen netbench run: error: unrecognized arguments: --bogus"),
    # a prefix of an option was taken for it: predict --seed 3 (as plan and sweep have it) ran seeds 0, 1 and 2, and
    # validate --seed 3 three seeds, as --seeds 3 (a hardening pass)
    (["predict", "t", "--seed", "3", "--out", "o"], "tracegen predict: error: unrecognized arguments: --seed 3"),
    (["validate", "--trace", "t", "--measured", "m", "--out", "o", "--seed", "3"],
     "tracegen validate: error: unrecognized arguments: --seed 3"),
    # a rate it cannot read was a traceback: the type function raised tracegen's ConfigError, which argparse passes
    (["testbed", "--worker-links", "1Gbit/s,zz"], "tracegen testbed: error: argument --worker-links: cannot read 'zz'"),
    (["testbed", "--worker-links", "0Mbit/s"], "argument --worker-links: each rate must be between 1 kbit/s and "
                                               "8000 Tbit/s"),
    (["testbed", "--worker-links", "100"], "argument --worker-links: '100' has no unit (bits or bytes per second?)"),
])
def test_a_usage_error_is_one_line_and_exit_code_2(argv: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's own errors too: one line naming the command, what was wrong and where help is, no usage
    block."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "--help')" in err


def _options(parser: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{prog} {name}")
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield prog, action


def test_every_options_help_gives_its_default_and_names_its_value() -> None:
    """--help says what every option means: a default that is used is said (testbed --subnet, validate --link and
    --policy did not), and a value is named by what it is (B, STEPS, PORT), not by argparse's upper-cased
    option name (BATCH_SIZE, TF_PORT, REPEATS)."""
    import argparse

    from tracegen.cli import build_parser

    unsaid, unnamed = [], []
    for prog, action in _options(build_parser(), "tracegen"):
        if action.default not in (None, False, "", [], argparse.SUPPRESS) and "default" not in (action.help or ""):
            unsaid.append(f"{prog} {action.option_strings[-1]}")
        if action.nargs != 0 and action.metavar is None and action.choices is None:
            unnamed.append(f"{prog} {action.option_strings[-1]}")
    assert not unsaid and not unnamed, (unsaid, unnamed)


def test_an_error_line_holds_at_most_300_characters_after_its_prefix() -> None:
    """The README says 300; the command line cut at 500 (a trace converted 25 times named its 25 sources)."""
    from tracegen.cli import _one_line

    line = _one_line("a.json (from " * 40 + "x): bad\nvalue")
    assert len(line) <= 300 and "\n" not in line and line.startswith("a.json (from a.json")
    assert line.endswith("x): bad value"), line  # what was wrong, at the end, was cut off


def test_a_long_path_and_a_long_value_keep_the_line_and_the_rule(tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # 'validate --measured <a 400-character path>/m.csv' printed '.../eeee...': the end cut, and with it the
    # line number, the rule and the value; the path and the value are shortened in their middles instead
    folder = tmp_path / ("d" * 200) / ("e" * 200)
    folder.mkdir(parents=True)
    measured = folder / "m.csv"
    measured.write_text("n_workers,steps_per_s\n1,2\n2," + "7" * 380 + "\n")
    assert main(["validate", "--trace", str(ROOT / "data/traces/mlp"), "--measured", str(measured), "--out",
                 str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    message = err.removeprefix("tracegen validate: error: ").rstrip("\n")
    assert err.count("\n") == 1 and len(message) <= 300, err
    assert message.startswith(str(tmp_path)[:20]) and "/m.csv:3: 'steps_per_s' " in message, err
    assert message.endswith("')") and "' is too large (got '777" in message, err


@pytest.mark.parametrize("argv", [
    ["predict", "data/traces/mlp", "--workers", "1", "--out", "{long}"],
    ["predict", "{long}", "--out", "{tmp}/out"],
    ["convert", "data/traces/mlp", "{long}/x.json", "--to", "chrome"],
    ["plan", "data/traces/mlp", "--catalogue", "{long}", "--out", "{tmp}/out"],
])
def test_a_path_too_long_for_the_system_is_one_short_line(argv: list[str], tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A path longer than the system takes (ENAMETOOLONG) was printed whole: one line of 5000 characters (a
    hardening pass); it is shortened in the middle, as the trace reader's messages are, keeping what was wrong."""
    monkeypatch.chdir(ROOT)
    long = str(tmp_path / "/".join(["d" * 200] * 25))
    assert main([a.format(long=long, tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) <= 400 and " ... " in err, err
    assert err.startswith(f"tracegen {argv[0]}: error: ") and err.endswith("File name too long\n"), err


@pytest.mark.parametrize(("argv", "said"), [
    (["predict", "data/traces/mlp", "--workers", "1,1,2", "--bandwidth", "1Gbit/s"],
     "tracegen predict: error: '--workers': '1,1,2' lists N=1 twice; give each N once"),
    (["predict", "data/traces/mlp", "--emit-traces", "1-4,3"],
     "tracegen predict: error: '--emit-traces': '1-4,3' lists N=3 twice ('1-4' and '3'); give each N once"),
    (["predict", "data/traces/mlp", "--ps-shards", "2,2"],
     "tracegen predict: error: '--ps-shards': '2,2' lists N=2 twice; give each N once"),
    (["plan", "data/traces/mlp", "--catalogue", "data/catalogue/example.csv", "--workers", "1-4,3", "--step-budget",
      "4", "--jobs", "1"],
     "tracegen plan: error: '--workers': '1-4,3' lists N=3 twice ('1-4' and '3'); give each N once"),
    (["sweep", "data/traces/mlp", "--bandwidth", "1Gbit/s", "--workers", "2,4,2"],
     "tracegen sweep: error: '--workers': '2,4,2' lists N=2 twice; give each N once"),
    (["testbed", "--bandwidth", "100Mbit/s", "--workers", "1,1"],
     "tracegen testbed: error: '--workers': '1,1' lists N=1 twice; give each N once"),
])
@pytest.mark.usefixtures("no_testbed")
def test_every_list_of_counts_refuses_a_repeat_before_any_work(argv: list[str], said: str, tmp_path: pathlib.Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``predict --workers 1,1,2`` ran N = 1 and 2 and said nothing of the repeat; every command that takes a
    list of counts now refuses it in one line, before it reads a trace or makes its --out (the testbed, were it
    to get that far, stops before it builds a cluster)."""
    monkeypatch.chdir(ROOT)
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == said + "\n"
    assert not (tmp_path / "o").exists()


def test_the_readme_quick_start_runs_as_written(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The README's quick start: exactly two commands; the first installs and runs ``tracegen predict`` on data in
    ``data/``, and that predict, as written, writes what the README says it writes (run from a copy of its inputs'
    places, so ``out/`` lands in a temporary folder); the second is the test script ``.ci/run`` calls."""
    import shlex

    text = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [block.strip() for block in text.split("```")[1::2]]
    assert len(commands) == 2, commands
    install, _, run = commands[0].partition(" && ")
    assert install == "pip install ." and commands[1] == "bash scripts/test.sh"
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
    argv = shlex.split(run)
    assert argv[0] == "tracegen"
    (tmp_path / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0
    printed = capsys.readouterr().out
    out = pathlib.Path(argv[argv.index("--out") + 1])
    for name in ("curve.csv", "curve.png", "traces/n1.json", "traces/n4.json"):  # what the README lists
        assert (out / name).is_file(), name
        assert f"`{pathlib.PurePath(name).name}`" in text or f"`{out}/{name}`" in text, name
    assert "plateau" in printed and "knee" in printed


def test_the_readme_python_example_runs_as_written(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The README's "In Python": its first block runs as written from the repository root and prints the plateau,
    the knee and one rate per N; the second (local processes) gives the same curve, as the text says (run over
    N = 1..8 rather than its 1..64, to stay fast). Nothing ran these blocks: they could break unseen."""
    import re

    text = (ROOT / "README.md").read_text().split("\n## In Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2, blocks
    monkeypatch.chdir(ROOT)
    names: dict[str, Any] = {}
    exec(blocks[0], names)  # noqa: S102 -- the README's own example, run as a user would
    serial = names["curve"]
    assert [p.n_workers for p in serial.points] == list(range(1, 9))
    assert capsys.readouterr().out == (f"{serial.plateau_steps_per_s} {serial.knee_n_workers} "
                                       f"{[round(p.steps_per_s, 1) for p in serial.points]}\n")
    parallel = blocks[1].replace("range(1, 65)", "range(1, 9)")
    assert parallel != blocks[1], "the second block no longer simulates range(1, 65): update this test"
    exec(parallel, names)  # noqa: S102
    assert names["curve"] == serial
    from tracegen.config import PredictConfig
    from tracegen.simulate import SimConfig
    # what the text says of it: SimConfig's defaults, not predict's
    assert (SimConfig().steps, SimConfig().warmup_steps) == (10, 2) and "(10 steps after 2 warm-up" in text
    assert (PredictConfig().steps, PredictConfig().warmup_steps) == (30, 3) and "30 steps after 3" in text


@pytest.mark.parametrize("command", ["inspect", "predict"])
def test_help_names_every_format_a_trace_may_be_in(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """predict's help said a trace is 'RunMetadata .pb/.pbtxt' and inspect's left out TF2 profiles, while both
    read every format parsers.read.read_trace does."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in ("StepStats", ".pbtxt", ".json.gz", "xplane.pb", "trace-viewer", "tracegen convert"):
        assert name in text, name


@pytest.mark.parametrize(("argv", "said"), [
    (["predict", "data/traces/mlp", "--ps-threads", "5000"], "'ps_threads' (--ps-threads) must be an integer from 1"),
    (["predict", "data/traces/mlp", "--batch-size", "0"], "'batch_size' (--batch-size) must be from 1 to 10^9 (got 0)"),
    (["plan", "data/traces/mlp", "--catalogue", "data/catalogue/example.csv", "--batch-size", "0"],
     "'batch_size' (--batch-size) must be from 1 to 10^9 (got 0)"),
    (["validate", "--measured", "data/validation/dev/mlp_500mbit_q100_b128k_ps03", "--payload-fraction", "0"],
     "'payload_fraction' (--payload-fraction) must be from 0.01 to 1 (got 0.0)"),
])
def test_a_setting_the_library_refuses_is_named_with_its_option(argv: list[str], said: str, tmp_path: pathlib.Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The library's checks name their fields ('ps_threads', 'payload_fraction'): the line names the option too."""
    monkeypatch.chdir(ROOT)
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tracegen {argv[0]}: error: {said}") and err.count("\n") == 1, err


def test_a_message_about_a_file_keeps_its_words() -> None:
    """Only a message that begins with a setting's name gets an option: one about a file begins with the file."""
    from tracegen.cli import with_option

    assert with_option("'window_s' must be > 0 (got 0.0)", "testbed") == "'window_s' (--window) must be > 0 (got 0.0)"
    assert with_option("m.csv:2: 'window_s' must be > 0", "testbed") == "m.csv:2: 'window_s' must be > 0"
    assert with_option("'window_s' must be > 0", "inspect") == "'window_s' must be > 0"  # no such option there
    assert with_option("'--steps' must be from 3", "predict") == "'--steps' must be from 3"


def test_predicts_out_help_names_every_file_it_writes_and_jobs_its_threshold(tmp_path: pathlib.Path) -> None:
    """predict --help said '--out DIR  directory for curve.csv, curve.png, traces/' (not staleness.csv, shards.csv,
    report.html), and '--jobs' of predict and plan 'when it takes more than a few seconds' where the rule is
    tracegen.processes.PARALLEL_S on one core."""
    from tracegen.cli import build_parser
    from tracegen.processes import PARALLEL_S

    helps = {(prog, a.option_strings[-1]): a.help or "" for prog, a in _options(build_parser(), "tracegen")}
    out = tmp_path / "o"
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "1-2", "--steps", "3", "--seeds", "1",
                 "--ps-shards", "1", "--emit-traces", "1", "--html", "--out", str(out)]) == 0
    written = {p.name if p.parent == out else f"{p.parent.name}/" for p in out.rglob("*")
               if p.is_file() and not p.name.startswith(".")}  # not its lock and record of what it wrote
    assert {w for w in written if w not in helps[("tracegen predict", "--out")]} == set()
    for prog in ("tracegen predict", "tracegen plan"):
        assert f"{PARALLEL_S:g} s or more on one core" in helps[(prog, "--jobs")]
