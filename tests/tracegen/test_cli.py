"""The ``tracegen`` command as a whole (:mod:`tracegen.cli`): ``inspect`` against its golden files, help and
--version, the errors, exit codes and signals common to every command, the --out folder each one writes, and the
README's examples. Tests of one subcommand alone are in ``test_cli_<module>.py`` (plan's and sweep's in
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

from tracegen.cli import Terminated, main

from tracegen_support import ROOT
from tracegen_support import quick_predict as _predict

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("model", ["cnn", "mlp", "resnet"])
def test_inspect_json_matches_golden(model: str, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the summary names its source: keep it relative and stable
    assert main(["inspect", "--json", f"data/traces/{model}"]) == 0
    got = json.loads(capsys.readouterr().out)
    golden = GOLDEN / f"inspect_{model}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
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


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """``tracegen inspect X | head -1``: the reader goes away; no error message, the SIGPIPE exit code."""
    exe = pathlib.Path(sys.executable).parent / "tracegen"
    script = f"'{exe}' inspect --json '{ROOT / 'data/traces/resnet'}' | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert done.stderr == ""
    assert done.stdout.strip() in ("0", "141")  # 0 when all was written before head left


def _default_stop_signals() -> None:
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_removes_temporary_files_and_exits_143(sig: str, code: int, tmp_path: pathlib.Path) -> None:
    """A prediction stopped by SIGTERM (or a closed terminal's SIGHUP, which exited 143 too) leaves neither
    half-written outputs nor hidden temporary files, and says so in one line (with --jobs 2, a SIGHUP to the
    process group killed multiprocessing's resource tracker, whose tracebacks followed it)."""
    import signal

    exe = pathlib.Path(sys.executable).parent / "tracegen"
    # long enough, with any engine, to run in two processes and still be running when the signal comes
    proc = subprocess.Popen([str(exe), "predict", str(ROOT / "data/traces/cnn"), "--workers", "1-40", "--every-n",
                             "--steps", "300", "--jobs", "2", "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_default_stop_signals)  # noqa: PLW1509 - a SIGTERM or SIGHUP ignored by whoever started pytest must not be inherited; only the signal dispositions are touched
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # progress lines: the simulation is under way
        said.append(line)
        if "N=1 done" in line:
            break
    assert any("in 2 processes" in line for line in said), said
    os.killpg(proc.pid, getattr(signal, sig))  # the whole group, as a closed terminal does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.strip().splitlines()[-1] == f"tracegen predict: stopped by {sig}"
    assert "Traceback" not in err and "Warning" not in err
    assert not (tmp_path / "out").exists()  # it made the directory: nothing of it is left, its lock included


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


def test_two_runs_into_one_directory_cannot_mix(tmp_path: pathlib.Path) -> None:
    from tracegen.errors import ConfigError
    from tracegen.outputs import OutputDir

    with OutputDir(tmp_path, ["a"]) as first:
        first.write("a", b"1")
        with pytest.raises(ConfigError, match="another tracegen run is writing"), OutputDir(tmp_path, ["b"]):
            pass
    readonly = tmp_path / "ro"
    readonly.mkdir(mode=0o500)
    # root writes anywhere, so a folder's mode shows nothing to root (CI runs as root, and skipped this); sysfs
    # takes no new file from root either (EACCES, or EROFS where it is mounted read-only)
    unwritable = ([] if os.geteuid() == 0 else [readonly]) + ([pathlib.Path("/sys/kernel")]
                                                              if sys.platform == "linux" else [])
    assert unwritable, "neither a folder this user cannot write nor sysfs: nothing would be checked"
    for folder in unwritable:
        with pytest.raises(ConfigError, match=rf"^{folder}: cannot write here: "), OutputDir(folder, ["a"]):
            pass


def test_a_signal_passes_through_a_librarys_catch_all() -> None:
    # SIGTERM's handler raises where the main thread is, maybe inside a library that catches Exception to retry
    # or to wrap it; the signal must reach main() (exit 143), not be swallowed or become "error" (exit 1)
    def library_call() -> None:
        try:
            raise Terminated("SIGTERM")
        except Exception:  # noqa: BLE001, S110 - what a library may do
            pass

    with pytest.raises(Terminated):
        library_call()


def test_out_naming_a_file_says_so_and_leaves_it(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "results"
    taken.write_text("mine")
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{taken}: is a file, not a directory" in err
    fifo = tmp_path / "pipe"  # it was called a file too
    os.mkfifo(fifo)
    assert main(["predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--out", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{fifo}: is a FIFO (named pipe), not a directory; --out names the" in err
    assert taken.read_text() == "mine"


def test_a_forced_run_that_fails_leaves_the_previous_outputs(tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1") == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".tracegen.lock"}
    assert _predict(out, tmp_path / "no-such-trace", "--force") == 2
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".tracegen.lock"}
    assert after == before and pathlib.Path("curve.csv") in after
    assert "no such file" in capsys.readouterr().err


def test_a_failed_run_leaves_no_directory_of_its_own(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in the trace path used to leave an empty --out (and parents) holding a lock file."""
    out = tmp_path / "new" / "out"
    assert _predict(out, tmp_path / "no-such-trace") == 2
    assert "no such file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert _predict(mine / "out", tmp_path / "no-such-trace") == 2
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]  # what it did not create stays


def test_a_refused_run_removes_the_lock_file_it_made_and_only_that(tmp_path: pathlib.Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A run refused in a directory that was there already (a user's curve.csv, no --force) left its
    .tracegen.lock in it (a hardening pass): only a directory the run had made itself was cleaned up. An earlier
    run's lock file stays, and a second run still cannot get in while the first holds the lock."""
    from tracegen.errors import ConfigError
    from tracegen.outputs import LOCK_NAME, OutputDir

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "curve.csv").write_text("mine")
    assert _predict(mine, ROOT / "data/traces/mlp") == 2
    assert "curve.csv: already exists" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["curve.csv"] and (mine / "curve.csv").read_text() == "mine"
    earlier = tmp_path / "earlier"
    assert _predict(earlier, ROOT / "data/traces/mlp") == 0
    assert (earlier / LOCK_NAME).is_file()
    before = sorted(p.name for p in earlier.iterdir())
    assert _predict(earlier, ROOT / "data/traces/mlp") == 2  # refused: curve.csv is there
    assert sorted(p.name for p in earlier.iterdir()) == before  # the lock it found is not its to remove
    with OutputDir(mine, ["a"]), pytest.raises(ConfigError, match="another tracegen run"), OutputDir(mine, ["b"]):
        pass


def test_a_forced_run_removes_only_what_the_previous_run_wrote(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1,2") == 0
    (out / "notes.txt").write_text("mine")
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force") == 0
    assert (out / "traces/n1.json").is_file() and not (out / "traces/n2.json").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # no traces now: their folder goes too
    assert not (out / "traces").exists() and (out / "notes.txt").read_text() == "mine"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force") == 0
    (out / "traces/mine.txt").write_text("mine")
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # a user's file there keeps it
    assert sorted(p.name for p in (out / "traces").iterdir()) == ["mine.txt"]


def test_a_forced_run_of_another_command_leaves_the_first_ones_files(tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """plan --force into a predict's folder removed curve.csv, the plots and the traces (a hardening pass); with
    --html, plan's page replaced predict's report.html (both were named so), and predict's curve then sat beside a
    report of a plan. plan's page is plan.html now: both pages stay, each beside its own run's files."""
    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--html") == 0
    predicted = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    page = (out / "report.html").read_bytes()
    assert main(["plan", str(ROOT / "data/traces/mlp"), "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--workers", "1-2", "--step-budget", "4", "--jobs", "1", "--html", "--force", "--out", str(out)]) == 0
    assert f"wrote {out / 'plan.csv'}, {out / 'plan.html'}\n" in capsys.readouterr().out
    kept = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert kept == sorted([*predicted, pathlib.Path("plan.csv"), pathlib.Path("plan.html")])
    assert (out / "report.html").read_bytes() == page and b"Which cluster to rent" in (out / "plan.html").read_bytes()
    assert _predict(out, ROOT / "data/traces/mlp", "--force") == 0  # its own older traces still go
    assert not (out / "traces/n1.json").exists() and (out / "plan.csv").is_file()


def test_only_tracegens_own_temporary_files_are_cleaned_up(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"
    (out / "notes").mkdir(parents=True)
    mine = [out / ".session.tmp", out / "notes" / ".draft.tmp"]
    for path in mine:
        path.write_text("important")
    killed = out / ".curve.csv.0123456789abcdef.tmp"  # what a killed run's atomic write left
    killed.write_text("half")
    assert _predict(out, ROOT / "data/traces/mlp") == 0
    assert all(p.read_text() == "important" for p in mine) and not killed.exists()


def test_a_file_where_a_run_needs_a_folder_is_refused_before_anything_is_replaced(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's file named ``traces`` in --out: the run wrote curve.csv and the plots, then failed on
    traces/n1.json, and with --force had replaced the earlier run's curve.csv (found by a hardening pass)."""
    from tracegen.errors import ConfigError
    from tracegen.outputs import OutputDir

    out = tmp_path / "out"
    assert _predict(out, ROOT / "data/traces/mlp") == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    (out / "traces").write_text("my notes")
    assert _predict(out, ROOT / "data/traces/mlp", "--emit-traces", "1", "--force", "--steps", "4") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out / 'traces'}: is a file, not a directory" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "traces"} == before
    assert (out / "traces").read_text() == "my notes"
    fresh = tmp_path / "fresh"  # the same when the file appears during the run: nothing is moved into place

    def run() -> None:
        with OutputDir(fresh, ["a.csv", "t/n1.json"]) as o:
            o.write("a.csv", b"1")
            o.write("t/n1.json", b"{}")
            (fresh / "t").write_text("mine")

    with pytest.raises(ConfigError, match="is a file, not a directory"):
        run()
    assert sorted(p.name for p in fresh.iterdir()) == ["t"]


def test_a_signal_while_outputs_move_into_place_waits_until_all_have(tmp_path: pathlib.Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM between two renames left the new curve.csv beside the old plots (a hardening pass). Held until
    all are in place, the stop then says so: 'stopped by SIGTERM' alone read as if the old outputs were kept."""
    import signal

    from tracegen.cli import Terminated, _terminate, _when
    from tracegen.outputs import OutputDir

    names = ["a.csv", "b.png", "t/c.json"]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("old")
    real_replace = pathlib.Path.replace
    moved: list[str] = []

    def replace_and_signal(self: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
        out = real_replace(self, target)
        if ".tracegen-staging" in self.parts and ".tracegen-staging" not in pathlib.Path(target).parts:
            moved.append(str(target))  # a staged file moved into place: signal after the first
            if len(moved) == 1:
                os.kill(os.getpid(), signal.SIGTERM)
        return out

    def run() -> None:
        with OutputDir(tmp_path, names, force=True) as out:
            for name in names:
                out.write(name, b"new")

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        monkeypatch.setattr(pathlib.Path, "replace", replace_and_signal)
        with pytest.raises(Terminated) as stop:
            run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(moved) == 3 and [(tmp_path / n).read_text() for n in names] == ["new"] * 3
    assert _when(stop.value) == f" after its new outputs were in place (a.csv, b.png, t/c.json in {tmp_path})"
    assert _when(KeyboardInterrupt()) == ""


def test_an_error_line_holds_at_most_300_characters_after_its_prefix() -> None:
    """The README says 300; the command line cut at 500 (a trace converted 25 times named its 25 sources)."""
    from tracegen.cli import _one_line

    line = _one_line("a.json (from " * 40 + "x): bad\nvalue")
    assert len(line) == 300 and "\n" not in line and line.endswith("...")


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


def _run(argv: list[str], *, unbuffered: bool = False, **how: Any) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own (this checkout's), PYTHONUNBUFFERED as asked (pytest's may have it
    set, users mostly do not)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | ({"PYTHONUNBUFFERED": "1"} if unbuffered
                                                                              else {})
    return subprocess.run([sys.executable, "-m", "tracegen", *argv], text=True, check=False, timeout=120, env=env,
                          cwd=ROOT, **how)


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("command", ["inspect", "predict"])
def test_a_full_disk_under_standard_output_is_said_in_words(command: str, unbuffered: bool,
                                                             tmp_path: pathlib.Path) -> None:
    """It printed 'error: : No space left on device' (a hardening pass); then 'cannot write its output', which
    named no output, and only where PYTHONUNBUFFERED was set: without it (as users run it) the summary failed at
    the interpreter's exit, in two lines of "Exception ignored ... OSError" and exit code 120."""
    argv = ["inspect", str(ROOT / "data/traces/mlp")] if command == "inspect" else [
        "predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1", "--jobs", "1",
        "--out", str(tmp_path / "out")]
    with pathlib.Path("/dev/full").open("w") as full:
        done = _run(argv, unbuffered=unbuffered, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1:] == [f"tracegen {command}: error: cannot write to standard output: No space "
                                             "left on device"], done.stderr
    assert "Exception" not in done.stderr


def _close_stderr() -> None:
    os.close(2)


def test_with_stderr_closed_notes_and_warnings_do_not_go_to_stdout(tmp_path: pathlib.Path) -> None:
    """Started with 2>&- (a cron job, a service), Python has no sys.stderr, and print(file=None) writes to
    standard output: the warning and the progress lines went into the summary a script reads (a hardening pass).
    They are dropped, as a closed stderr asks; stdout is what it is with stderr elsewhere. A stderr that cannot be
    written (2> /dev/full) is as good as closed: the first progress line ended the run (exit 1)."""
    mlp = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"  # its single-worker.json gives a warning

    def predict(out: str, **how: Any) -> subprocess.CompletedProcess[str]:
        return _run(["predict", str(mlp), "--workers", "1", "--bandwidth", "200Mbit/s", "--steps", "3", "--seeds",
                     "1", "--jobs", "1", "--out", str(tmp_path / out)], stdout=subprocess.PIPE, **how)

    seen = predict("seen", stderr=subprocess.PIPE)
    assert seen.returncode == 0 and "warning: " in seen.stderr and "simulating" in seen.stderr
    closed = predict("closed", stderr=subprocess.DEVNULL, preexec_fn=_close_stderr)
    assert closed.returncode == 0 and closed.stdout == seen.stdout.replace(str(tmp_path / "seen"),
                                                                           str(tmp_path / "closed"))
    with pathlib.Path("/dev/full").open("w") as full:
        unwritable = predict("full", stderr=full)
    assert unwritable.returncode == 0 and "wrote " in unwritable.stdout


def test_a_ctrl_c_while_the_command_line_is_imported_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A Ctrl-C in the first second (pandas and pyarrow importing) printed a KeyboardInterrupt traceback (a
    hardening pass): the import is where it lands, made to happen here."""
    import builtins

    from tracegen import entry

    real_import = builtins.__import__

    def interrupted(name: str, *args: Any, **kwargs: Any) -> Any:
        fromlist = args[2] if len(args) > 2 else kwargs.get("fromlist")
        if name == "tracegen" and "cli" in (fromlist or ()):
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry.main(["inspect", "x"]) == 130
    assert capsys.readouterr().err == "tracegen: interrupted\n"


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_sigterm_while_the_command_line_is_imported_is_one_line(sig: str, code: int) -> None:
    """A SIGTERM or SIGHUP in the first second (the command line's modules importing, before main() handles them)
    killed the command without a word; it is one line and the exit code the shell reports, as a Ctrl-C there is.
    Run in a process of its own: before the fix the signal kills whatever process it lands in."""
    script = f"""
import builtins, signal, sys
from tracegen import entry
real_import = builtins.__import__
def stopped(name, *args, **kwargs):
    fromlist = args[2] if len(args) > 2 else kwargs.get("fromlist")
    if name == "tracegen" and "cli" in (fromlist or ()):
        signal.raise_signal(signal.{sig})
    return real_import(name, *args, **kwargs)
builtins.__import__ = stopped
sys.exit(entry.main(["inspect", "x"]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120,
                          cwd=ROOT)
    assert (done.returncode, done.stderr) == (code, f"tracegen: stopped by {sig}\n")


def test_a_hangup_the_caller_ignores_stays_ignored(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``nohup tracegen predict ... &`` and a closed terminal: the command replaced nohup's ignored SIGHUP by its own
    handler and stopped ('stopped by SIGHUP', exit 129), losing the run nohup was there to keep. A signal the
    caller ignores is left ignored; the hangup lands here while the trace is read."""
    import signal

    from tracegen import cli

    real = cli.read_trace

    def hung_up(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGHUP)
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "read_trace", hung_up)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert main(["inspect", str(ROOT / "data/traces/mlp")]) == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert "stopped" not in capsys.readouterr().err


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


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_netbench_server_stopped_by_a_signal_says_so_with_the_shells_exit_code(sig: str, code: int) -> None:
    """``netbench serve`` (and the testbed) turn SIGTERM and SIGHUP into their own exception to remove what they
    started; the command printed it as an error ('error: received SIGTERM; stopping and removing what this run
    started') with exit code 2, a usage error's, where every other command says 'stopped by SIGTERM', 143."""
    import signal

    from validation.ports import free_port

    argv = [sys.executable, "-m", "tracegen", "netbench", "serve", "--bind", "127.0.0.1", "--port", str(free_port())]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True,
                            preexec_fn=_default_stop_signals)  # noqa: PLW1509 - only the signal dispositions are touched
    try:
        assert proc.stdout is not None
        assert "listening on" in proc.stdout.readline()
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err) == (code, f"tracegen netbench: stopped by {sig}\n")


def test_a_testbed_stopped_by_a_hangup_says_what_it_could_not_remove(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """What the emulated cluster could not remove rides on the stop as a note; the stop's one line keeps it."""
    import signal

    from validation import testbed
    from validation.errors import TerminatedError

    def hung_up(*_args: Any, **_kwargs: Any) -> None:
        stop = TerminatedError("received SIGHUP (signal 1); removing the emulated cluster 3fa9c1", signal.SIGHUP)
        stop.add_note("emulated cluster 3fa9c1: could not remove cgroup /sys/fs/cgroup/cpu/tracegen_3fa9c1_ps")
        raise stop

    monkeypatch.setattr(testbed, "run_testbed", hung_up)
    assert main(["testbed", "--bandwidth", "100Mbit/s", "--workers", "1", "--out", "o"]) == 129
    assert capsys.readouterr().err == ("tracegen testbed: stopped by SIGHUP emulated cluster 3fa9c1: could not remove "
                                       "cgroup /sys/fs/cgroup/cpu/tracegen_3fa9c1_ps\n")


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
    from tracegen.predict import PredictConfig
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


@pytest.mark.parametrize(("command", "option", "name", "content"), [
    ("predict", "--placement", "shards.csv", "variable,shard\nfc1/kernel,0\nfc1/bias,1\nfc2/kernel,1\nfc2/bias,0\n"
                                             "logits/kernel,0\nlogits/bias,1\n"),
    ("predict", "--link-profile", "curve.csv", None),
    ("plan", "--catalogue", "plan.csv", None),
], ids=["placement", "link-profile", "catalogue"])
def test_force_never_replaces_a_file_the_run_reads(command: str, option: str, name: str, content: str | None,
                                                   tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'predict --ps-shards 2 --placement out/shards.csv --out out --force' read the user's placement file, then
    replaced it with its shards table; plan did the same to a catalogue named plan.csv. --force replaces an
    earlier run's outputs, never what the run reads (as validate and convert already held)."""
    trace = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
    source = {"--link-profile": trace / "link-profile.json", "--catalogue": ROOT / "data" / "catalogue" / "example.csv"}
    given = tmp_path / name
    given.write_bytes(content.encode() if content is not None else source[option].read_bytes())
    before = given.read_bytes()
    extra = ["--ps-shards", "2"] if option == "--placement" else []
    assert main([command, str(trace), "--workers", "1-2", option, str(given), *extra, "--out", str(tmp_path),
                 "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{given}: is an input of this run" in err, err
    assert given.read_bytes() == before


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
