"""The subcommands that run real TensorFlow or judge against it: ``profile``, ``testbed``, ``netbench``,
``validate``. Each imports ``validation`` lazily, inside its handler, so that ``tracegen --help`` and the
trace-only commands work without TensorFlow.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from parsers.linkprofile import PROFILE_NAME
from parsers.singleworker import SINGLE_WORKER_NAME
from tracegen.cli_predict import simulation_counts
from tracegen.config import PAYLOAD_FRACTION, PredictConfig
from tracegen.curvetext import range_score, scored_knee
from tracegen.errors import ConfigError
from tracegen.link import LINK_MODELS
from tracegen.outputs import option_path, output_file, refuse_existing, refuse_non_folder
from tracegen.placement import PLACEMENTS
from tracegen.policy import parse_policy
from tracegen.processes import available_cpus
from tracegen.units import counted, format_rate, parse_count, parse_number, parse_rate
from tracegen.workercounts import parse_workers

if TYPE_CHECKING:
    from validation.compare import Comparison
    from validation.testbed_config import TestbedConfig
    from validation.validate import Inputs


def _profile(args: argparse.Namespace) -> int:
    from validation.capture import ProfileConfig, profile
    from validation.zoo import ModelSpec

    spec = ModelSpec(name=args.model, batch_size=args.batch_size, widths=tuple(args.widths or ()))
    out = option_path(args.out)  # '' is no directory: the trace went into the current one
    refuse_non_folder(out, "--out names the directory the trace goes into")  # else mkdir's bare 'File exists'
    if args.api == "tf2":
        return _profile_tf2(args, spec)
    if args.ps != 1:
        raise ConfigError(f"--ps: a tf1 profile runs one PS task; several need --api tf2 (got {args.ps})")
    config = ProfileConfig(model=spec, warmup_steps=5 if args.warmup is None else args.warmup,
                           traced_steps=args.steps)
    if args.netbench is not None:
        from validation.netbench import NetbenchConfig
        from validation.netbench_control import split_address

        split_address(args.netbench, "--netbench")  # NetbenchConfig would name its field, 'ps'
        netbench = NetbenchConfig(ps=args.netbench)  # checked before the job runs
        refuse_existing([out / PROFILE_NAME], False)
    paths = profile(config, out)
    print(f"traced {counted(len(paths), 'step')} of {args.model} (batch {args.batch_size}) into {args.out}")
    if args.netbench is not None:
        from parsers.linkprofile import write_link_profile
        from validation.netbench import run_netbench

        write_link_profile(run_netbench(netbench, progress=lambda line: print(line, flush=True)), out / PROFILE_NAME)
        print(f"wrote {out / PROFILE_NAME}: the link between this host and {args.netbench}; predict uses it")
    return 0


def _profile_tf2(args: argparse.Namespace, spec: Any) -> int:
    """``profile --api tf2``: a ParameterServerStrategy job profiled from its first step (validation.capture_tf2)."""
    from validation.capture import MAX_TRACED_STEPS
    from validation.capture_tf2 import capture
    from validation.cluster_config import MAX_PS

    if args.warmup:
        raise ConfigError("--api tf2 profiles from the first step: its registration holds the step function's "
                          f"graphs, which predict needs; --warmup must be 0 (got {args.warmup})")
    if args.netbench is not None:
        raise ConfigError("--netbench is not available with --api tf2 yet; run 'tracegen netbench run' beside it")
    if not 1 <= args.steps <= MAX_TRACED_STEPS:
        raise ConfigError(f"--steps must be from 1 to {MAX_TRACED_STEPS} (got {args.steps})")
    if not 1 <= args.ps <= MAX_PS:
        raise ConfigError(f"--ps must be from 1 to {MAX_PS} PS tasks (got {args.ps})")
    out = option_path(args.out)
    files = capture(out, steps=args.steps + 1, warmup=0, model=spec, ps_tasks=args.ps)
    print(f"profiled {counted(args.steps, 'step')} of {args.model} (batch {args.batch_size}) after the first call, "
          f"{counted(len(files), 'host')}, into {out} (a TensorBoard logdir)")
    return 0


def _testbed(args: argparse.Namespace) -> int:
    from validation.testbed import run_testbed

    if args.clean is not None:
        from validation.cluster_host import clean

        removed = clean(args.clean)
        print("\n".join(f"removed {x}" for x in removed) if removed else "nothing to remove")
        return 0
    if args.bandwidth is None or args.out is None:
        raise ConfigError("testbed needs --bandwidth and --out (or --clean RUN_ID)")

    config = _testbed_config(args)
    result = run_testbed(config, progress=lambda line: print(line, flush=True))
    if config.only_link_profile or config.only_single_worker:
        names = [n for n, on in ((PROFILE_NAME, config.only_link_profile),
                                 (SINGLE_WORKER_NAME, config.only_single_worker)) if on]
        print("wrote " + ", ".join(str(result.trace_dir / n) for n in names))
        return 0
    print(f"measured {counted(len(result.measurements), 'run')} into {result.csv_path}; trace in {result.trace_dir}")
    print("   N  repeat  steps/s  per worker")
    for m in result.measurements:
        print(f"{m.n_workers:4d}  {m.repeat:6d}  {m.steps_per_s:7.3f}  "
              + " ".join(f"{r:.3f}" for r in m.worker_steps_per_s))
    return 0


def _testbed_config(args: argparse.Namespace) -> TestbedConfig:
    """The testbed's settings from its options."""
    from validation.testbed_config import TestbedConfig

    return TestbedConfig(
        out_dir=option_path(args.out), model=args.model, workers=parse_workers(args.workers, "--workers"),
        bandwidth_bits_per_s=8 * parse_rate(args.bandwidth, what="--bandwidth"), batch_size=args.batch_size,
        widths=tuple(args.widths or ()), burst_bytes=args.burst, latency_ms=args.queue_latency,
        repeats=args.repeats, window_s=args.window, window_steps=args.window_steps, max_window_s=args.max_window,
        trace_workers=not args.no_worker_traces and args.api == "tf1", warmup_steps=args.warmup, cpu_cap_ps=args.cpu_ps,
        cpu_cap_worker=args.cpu_worker, traced_steps=args.traced_steps, subnet=args.subnet,
        timeout_s=args.timeout, link_profile=not args.no_link_profile, only_link_profile=args.only_link_profile,
        only_single_worker=args.only_single_worker, ps_at_cap=args.ps_at_cap, staleness=args.staleness,
        ps_tasks=args.ps,
        placement=args.ps_placement, worker_caps=tuple(args.worker_caps or ()),
        worker_links=tuple(args.worker_links or ()), api=args.api, cpu_cap_coordinator=args.cpu_coordinator,
        netbench_tensors=args.netbench_tensors, netbench_tensor_bytes=args.netbench_tensor_bytes)


def _caps(text: str) -> tuple[float, ...]:
    """``--worker-caps``: cores per worker, comma-separated."""
    return tuple(parse_number(part) for part in text.split(","))


def _links(text: str) -> tuple[int, ...]:
    """``--worker-links``: a rate per worker (bits/s as 8 x the parsed bytes/s), ``-`` for unshaped. A rate it
    cannot read is argparse's error (an argument type's own exception would escape argparse as a traceback)."""
    try:
        return tuple(0 if part.strip() == "-" else 8 * parse_rate(part, what="--worker-links")
                     for part in text.split(","))
    except ConfigError as exc:
        why = str(exc).removeprefix("'--worker-links': ").replace("'--worker-links' must", "each rate must")
        raise argparse.ArgumentTypeError(why) from None


# validate's input options: an empty one (an unset shell variable) was read by pathlib as '.', and the files of the
# current directory were validated against, not refused
_INPUTS = (("measured", "--measured", "the measurements"), ("trace", "--trace", "the trace"),
           ("link_profile", "--link-profile", "a link profile"), ("single_worker", "--single-worker",
                                                                  "a single-worker file"))


def _validate(args: argparse.Namespace) -> int:
    from tracegen.outputs import OutputDir
    from validation.compare import averaged, knee_note
    from validation.validate import OUTPUT_FILES, input_files, validate

    for key, option, what in _INPUTS:
        if getattr(args, key) is not None:
            option_path(getattr(args, key), what, option)  # its check alone: that it names something
    steps, warmup, seeds, jobs = simulation_counts(args)  # as predict checks them: 2 steps read fast
    policy, order = parse_policy(args.policy, "--policy")
    config = PredictConfig(
        bandwidth_bytes_per_s=None if args.bandwidth is None else parse_rate(args.bandwidth, what="--bandwidth"),
        link=args.link,
        policy=policy, order=order, order_file=args.policy if order else "", steps=steps,
        warmup_steps=warmup, seeds=seeds, payload_fraction=args.payload_fraction, jobs=jobs)
    with OutputDir(args.out, [*OUTPUT_FILES, *(["report.html"] * args.html)], force=args.force,
                   command="validate",
                   inputs=input_files(args.measured, args.trace, args.link_profile, args.single_worker,
                                      config.order_file or None)) as out:  # as predict's: none replaced
        comparison, inputs, warnings = validate(args.measured, args.trace, config, out, profile=args.link_profile,
                                                single_worker=args.single_worker,
                                                progress=lambda line: print(line, flush=True))
        if args.html:
            out.write("report.html", _validation_html(comparison, inputs, warnings, config, args.measured))
    print(f"inputs: measurements {inputs.measured}; trace {inputs.trace}; link profile "
          f"{inputs.profile or 'none'}; single worker {inputs.single_worker or 'none'}; "
          + (f"bandwidth from {inputs.bandwidth_from}" if inputs.bandwidth_bytes_per_s is not None else
             "no bandwidth (no bandwidth-only predictors: give --bandwidth, or bandwidth_bits_per_s in the CSV)"))
    if (repeats := averaged(comparison)) is not None:
        print(repeats)
    n_points = len(comparison.table)
    print(f"measured knee {_knee(comparison.measured_knee_n_workers, n_points)}")
    if (note := knee_note(list(comparison.table["n_workers"]))) is not None:
        print(f"note: {note}")
    for name, score in comparison.scores.items():
        band = "" if score.in_band is None else f"  inside band {score.in_band}/{n_points}"
        print(f"{name:14s} MAPE {score.mape:6.1%}  max error {score.max_error:6.1%}  knee "
              f"{_knee(score.knee_n_workers, n_points)}"
              + ("" if score.inside_range is None
                 else f"  inside measured range {range_score(score.inside_range, score.with_repeats)}") + band)
    print(f"wrote {', '.join(str(out.root / n) for n in out.written)}")
    return 0


def _knee(n_workers: int, n_points: int) -> str:
    """A knee in validate's summary: ``N=2``, or ``-`` where one N was measured (no curve, no knee), by the rule of
    report.md's (:func:`tracegen.curvetext.scored_knee`)."""
    cell = scored_knee(n_workers, n_points)
    return cell if cell == "-" else f"N={cell}"


def _validation_html(comparison: Comparison, inputs: Inputs, warnings: list[str], config: PredictConfig,
                     measured: str) -> bytes:
    from tracegen.html_report import comparison_html, report_inputs
    from validation.compare import knee_note
    from validation.validate import single_worker_said

    note = knee_note(list(comparison.table["n_workers"]))

    bandwidth = (None if inputs.bandwidth_bytes_per_s is None else
                 f"{format_rate(inputs.bandwidth_bytes_per_s)} line rate from {inputs.bandwidth_from}, "
                 f"{config.payload_fraction:.4f} of it payload")
    pairs = report_inputs({
        "measurements": inputs.measured, "trace": inputs.trace, "link profile": inputs.profile,
        "bandwidth": bandwidth, "single worker": single_worker_said(inputs),
        "simulated": f"{config.warmup_steps} warm-up + {config.steps} measured steps per worker, "
                     f"{counted(config.seeds, 'seed')}; link model {config.link}, transfer order {config.policy}"})
    return comparison_html(comparison, title=f"Predicted vs measured: {measured}", inputs=pairs,
                           warnings=warnings, notes=[f"{note[0].upper()}{note[1:]}."] if note else [])


def _model_names() -> tuple[str, ...]:
    from validation.zoo import MODEL_NAMES  # importable without TensorFlow

    return MODEL_NAMES


def _widths(text: str) -> list[int]:
    """``--widths 512,512``; an empty entry is refused (``,,`` traced the zoo's default widths without a word)."""
    widths = []
    for i, entry in enumerate(text.split(","), start=1):
        try:
            widths.append(parse_count(entry))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"width {i} of {text[:60]!r} {exc}") from None
    return widths


TESTBED_HELP = ("measure the real curve on an emulated cluster (root; needs the 'tf' extra, iproute2 and the "
                "cgroup v1 cpu controller)")
VALIDATE_HELP = "compare measured throughput with predictions and the baselines"


def _add_testbed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", choices=_model_names(), default="mlp", help="zoo model (default mlp)")
    p.add_argument("--workers", default="1-4", metavar="LIST", help="worker counts, e.g. 1-5 or 1,2,4 "
                                                                    "(default 1-4)")
    p.add_argument("--bandwidth", metavar="RATE",
                   help="PS link rate per direction, e.g. 200Mbit/s, 1Gbit/s (bits/s) or 25MB/s (bytes/s)")
    p.add_argument("--batch-size", type=parse_count, default=32, metavar="B",
                   help="examples per step per worker (default 32)")
    p.add_argument("--widths", type=_widths, metavar="LIST", help="model widths, comma-separated (see profile)")
    p.add_argument("--burst", type=parse_count, default=16_384, metavar="BYTES",
                   help="tc tbf bucket size in bytes (default 16384)")
    p.add_argument("--queue-latency", type=parse_number, default=50.0, metavar="MS",
                   help="tc tbf queue latency in milliseconds: queue = rate x latency + burst (default 50, "
                        "lossless and fair; see validation.testbed_config)")
    p.add_argument("--repeats", type=parse_count, default=3, metavar="R", help="runs per worker count (default 3)")
    p.add_argument("--window", type=parse_number, default=30.0, metavar="SECONDS",
                   help="measurement window after warm-up, seconds (default 30)")
    p.add_argument("--window-steps", type=parse_count, default=0, metavar="STEPS",
                   help="lengthen each window so every worker does about this many steps, judged from the first "
                        "N=1 run's rate (default 0: fixed windows)")
    p.add_argument("--max-window", type=parse_number, default=120.0, metavar="SECONDS",
                   help="longest window --window-steps may ask for (default 120)")
    p.add_argument("--no-link-profile", action="store_true",
                   help="do not measure the link profile (tracegen netbench between the PS and one client host) "
                        "into DIR/trace/link-profile.json before the runs")
    p.add_argument("--no-worker-traces", action="store_true",
                   help="do not trace every worker after the window of each N>1 run (DIR/workers/nN/wI)")
    p.add_argument("--warmup", type=parse_count, default=10, metavar="STEPS",
                   help="steps before the window (default 10)")
    p.add_argument("--cpu-ps", type=parse_number, default=0.3, metavar="CORES", help="the PS's CPU cap (default 0.3)")
    p.add_argument("--cpu-worker", type=parse_number, default=0.3, metavar="CORES",
                   help="each worker's CPU cap (default 0.3); all caps together must stay under the cores")
    p.add_argument("--traced-steps", type=parse_count, default=10, metavar="STEPS",
                   help="steps traced in the N=1 run (default 10)")
    p.add_argument("--subnet", default="10.77.0.0/24", metavar="CIDR",
                   help="private IPv4 subnet for the namespaces' addresses (default 10.77.0.0/24)")
    p.add_argument("--timeout", type=parse_number, default=300.0, metavar="SECONDS",
                   help="limit for warm-up and for finishing after the window (default 300)")
    p.add_argument("--only-link-profile", action="store_true",
                   help="measure only the link profile, into DIR/trace/link-profile.json (refused if it exists)")
    p.add_argument("--netbench-tensors", type=parse_count, metavar="N",
                   help="tensors a netbench client step moves at most (netbench run's --tensors; default 32): with "
                        "--netbench-tensor-bytes, a payload shaped like the model's (its parameters' count and "
                        "mean size) rather than netbench's default")
    p.add_argument("--netbench-tensor-bytes", type=parse_count, metavar="BYTES",
                   help="bytes per netbench tensor (netbench run's --tensor-bytes; default 262144)")
    p.add_argument("--worker-caps", type=_caps, metavar="CORES,CORES,...",
                   help="each worker's own CPU cap, worker 0 first (a mixed cluster); workers beyond the list get "
                        "--cpu-worker")
    p.add_argument("--api", choices=("tf1", "tf2"), default="tf1",
                   help="tf1 (default): graph-mode workers; tf2: a ParameterServerStrategy job (a coordinator node "
                        "beside the PS and the workers, capped at --cpu-coordinator), its N=1 run profiled by "
                        "TensorFlow's profiler into trace/ (a TensorBoard logdir)")
    p.add_argument("--cpu-coordinator", type=parse_number, default=0.3, metavar="CORES",
                   help="the TF2 coordinator node's CPU cap (default 0.3; --api tf2)")
    p.add_argument("--worker-links", type=_links, metavar="RATE,RATE,...",
                   help="each worker's own link rate, worker 0 first, '-' for unshaped (slow NICs in a mixed "
                        "cluster; the PS link's burst and queue latency); workers beyond the list are unshaped")
    p.add_argument("--ps", type=parse_count, default=1, metavar="K",
                   help="PS tasks, each with its own link shaped as above and the PS's CPU cap (default 1)")
    p.add_argument("--ps-placement", choices=PLACEMENTS, default="round-robin",
                   help="how variables go on the PS tasks: TF's round robin in creation order (default) or "
                        "greedy by bytes")
    p.add_argument("--staleness", action="store_true",
                   help="workers also read the global step with each step's parameters and report each step's "
                        "staleness (updates by others between read and apply): DIR/staleness.csv")
    p.add_argument("--only-single-worker", action="store_true",
                   help="measure only one untraced worker's rate and the PS's CPU per step, --repeats jobs of "
                        "it, their median into DIR/trace/single-worker.json (refused if it exists)")
    p.add_argument("--ps-at-cap", action="store_true",
                   help="after the single-worker runs, --repeats more of one worker against the PS capped at half "
                        "the CPU it used, which the worker then holds at its cap: the PS's CPU per step without "
                        "spare CPU in it, recorded as ps_at_cap in single-worker.json (predict shows the PS bound "
                        "it implies beside the curve)")
    p.add_argument("--out", metavar="DIR", help="directory for measured.csv and trace/ (refused if an earlier run's "
                                                "are there: nothing is overwritten)")
    p.add_argument("--clean", metavar="RUN_ID",
                   help="instead of measuring, remove what a crashed run left (its node processes, network "
                        "namespaces and cgroups): the 6 hex digits it printed ('cluster 3fa9c1 is up'), or all")
    p.set_defaults(handler=_testbed)



def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measured", required=True, metavar="CSV|DIR",
                   help="measurements CSV, a row per run: n_workers and steps_per_s (steps per second of all "
                        "workers together), maybe repeat, batch_size, bandwidth (500Mbit/s) (README, 'Checking a "
                        "prediction against your own runs'); or a testbed output directory")
    p.add_argument("--trace", metavar="TRACE",
                   help="the single-worker trace (default: DIR/trace of a testbed directory)")
    p.add_argument("--link-profile", metavar="FILE",
                   help="link profile from 'tracegen netbench' (default: link-profile.json beside the trace)")
    p.add_argument("--single-worker", metavar="FILE",
                   help="one untraced worker's rate and PS CPU per step (default: single-worker.json beside the "
                        "trace)")
    p.add_argument("--bandwidth", metavar="RATE",
                   help="the link's line rate for the bandwidth-only predictors (default: the measurements' "
                        "bandwidth_bits_per_s)")
    p.add_argument("--payload-fraction", type=parse_number, default=PAYLOAD_FRACTION, metavar="F",
                   help=f"share of the link rate that carries tensor bytes (default {PAYLOAD_FRACTION:.4f})")
    p.add_argument("--link", choices=sorted(LINK_MODELS), default="conn", help="link model (see predict; default conn)")
    p.add_argument("--policy", default="tf", metavar="tf|tictac|FILE", help="transfer order (see predict; default tf)")
    p.add_argument("--steps", type=parse_count, default=30, metavar="K",
                   help="measured simulated steps per worker (default 30)")
    p.add_argument("--warmup-steps", type=parse_count, default=3, metavar="W",
                   help="simulated warm-up steps per worker (default 3)")
    p.add_argument("--seeds", type=parse_count, default=3, metavar="S", help="simulations per worker count (default 3)")
    p.add_argument("--jobs", type=parse_count, default=available_cpus(), metavar="J",
                   help="local processes to run the simulations in when they take more than a few seconds; the "
                        "report is the same whatever J (default: the CPUs this process may use)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for report.md, comparison.csv/.png")
    p.add_argument("--html", action="store_true",
                   help="also write DIR/report.html: measured points over every predictor, the errors and the "
                        "inputs in one page that opens offline (hover the chart for the values)")
    p.add_argument("--force", action="store_true",
                   help="replace an earlier report in DIR (never another command's files)")
    p.set_defaults(handler=_validate)




def add_tf_commands(sub: Any) -> None:
    """Add ``profile``, ``testbed``, ``netbench`` and ``validate`` to the subparsers ``sub``."""
    p = sub.add_parser("profile", help="run a real 1-worker TensorFlow job on localhost and trace it "
                                       "(needs the 'tf' extra)")
    p.add_argument("--model", choices=_model_names(), default="mlp", help="zoo model (default mlp)")
    p.add_argument("--batch-size", type=parse_count, default=32, metavar="B", help="examples per step (default 32)")
    p.add_argument("--widths", type=_widths, metavar="LIST",
                   help="model widths, comma-separated: mlp hidden sizes; cnn conv1,conv2,dense channels; resnet "
                        "stage channels; embed vocabulary,embedding size,tokens,hidden; deep width,layers; wide "
                        "input,hidden (default: the zoo's, validation.zoo)")
    p.add_argument("--api", choices=("tf1", "tf2"), default="tf1",
                   help="tf1 (default): a graph-mode job, RunMetadata per step; tf2: a ParameterServerStrategy job "
                        "(coordinator, PS and worker processes) profiled by TensorFlow's profiler into a TensorBoard "
                        "logdir of .xplane.pb files, from its first call (which is left out of the steps)")
    p.add_argument("--warmup", type=parse_count, default=None, metavar="STEPS",
                   help="untraced steps before tracing (default 5; 0 and only 0 with --api tf2)")
    p.add_argument("--steps", type=parse_count, default=10, metavar="STEPS",
                   help="traced steps (default 10: steps with records missing are left out, and the simulator "
                        "draws from the rest)")
    p.add_argument("--ps", type=parse_count, default=1, metavar="K",
                   help="PS tasks, each a process of its own, the variables placed on them round-robin (default 1; "
                        "more than 1 only with --api tf2)")
    p.add_argument("--netbench", metavar="HOST:PORT",
                   help="after tracing, measure the link to a 'tracegen netbench serve' on the PS host you will use "
                        "and write OUT/link-profile.json beside the trace (an IPv6 address in brackets: "
                        "[2001:db8::5]:7070)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for step_NNN.pb, step_NNN.json and meta.json "
                                                               "(refused if it holds a trace: nothing is overwritten)")
    p.set_defaults(handler=_profile)

    _add_testbed(sub.add_parser("testbed", help=TESTBED_HELP))
    _add_validate(sub.add_parser("validate", help=VALIDATE_HELP))
    _add_netbench(sub.add_parser("netbench", help=NETBENCH_HELP))


NETBENCH_HELP = ("measure the PS link as TensorFlow uses it, between two hosts: 'serve' on the PS host, 'run' on "
                 "another (needs the 'tf' extra)")


def _netbench_serve(args: argparse.Namespace) -> int:
    from validation.netbench_server import serve

    serve(bind=args.bind, port=args.port, tf_port=args.tf_port, once=args.once, cores=args.cores,
          progress=lambda line: print(line, flush=True))
    return 0


def _netbench_run(args: argparse.Namespace) -> int:
    from parsers.linkprofile import write_link_profile
    from tracegen.units import format_rate
    from validation.netbench import NetbenchConfig, run_netbench
    from validation.netbench_control import split_address

    out = option_path(args.out, "the profile's file")  # '' was '.', 'a directory', a name the user never gave
    split_address(args.ps, "--ps")  # NetbenchConfig would name its field, 'ps'
    if out.is_dir():  # else it is found out only when the profile is written, minutes of measuring later
        raise ConfigError(f"{out}: a directory; --out names the profile's file, e.g. {out / PROFILE_NAME}")
    # checked (missing folders made, as other commands' are) before minutes of measuring, not when it is written
    with output_file(out, force=args.force, what="the profile there"):
        config = NetbenchConfig(ps=args.ps, max_connections=args.max_connections, window_s=args.window,
                                tensors=args.tensors, tensor_bytes=args.tensor_bytes,
                                connect_timeout_s=args.connect_timeout)
        profile = run_netbench(config, progress=lambda line: print(line, flush=True))
        write_link_profile(profile, out)
    best = max(profile.points, key=lambda p: p.pull_bytes_per_s + p.push_bytes_per_s)
    print(f"most moved: {best.mode} with {counted(best.connections, 'connection')} per direction, pull "
          f"{format_rate(round(best.pull_bytes_per_s))}, push {format_rate(round(best.push_bytes_per_s))}")
    print(f"wrote {out}")
    return 0


def _add_netbench(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="netbench_command", required=True, metavar="serve|run")
    serve_help = ("on the PS host: wait for 'netbench run' and serve it a real TensorFlow PS task (a TensorFlow "
                  "server takes no authentication: only on a network you trust)")
    s = sub.add_parser("serve", help=serve_help, description=serve_help)
    s.add_argument("--bind", default="0.0.0.0", metavar="ADDR",  # noqa: S104 - a server for another host
                   help="address to listen on for the control connection (default 0.0.0.0: every IPv4 address; "
                        "'::' every IPv6 and IPv4 address; an IPv6 address, e.g. 2001:db8::5, listens on IPv6)")
    s.add_argument("--port", type=parse_count, default=7070, metavar="PORT", help="control port (default 7070)")
    s.add_argument("--tf-port", type=parse_count, default=2222, metavar="PORT",
                   help="port of the TensorFlow PS task (default 2222)")
    s.add_argument("--once", action="store_true", help="exit after one session")
    s.add_argument("--cores", type=parse_number, metavar="CORES",
                   help="the PS host's CPU to record in the profile (default: what this process may use: its "
                        "CPU affinity and cgroup quota)")
    s.set_defaults(handler=_netbench_serve)
    r = sub.add_parser("run", help="on a second host: measure pull, push and two-way rates for 1, 2, 4, ... "
                                   "connections and write a link profile")
    r.add_argument("--ps", required=True, metavar="HOST:PORT",
                   help="where 'netbench serve' listens: ps-host:7070, 10.0.0.5:7070, or an IPv6 address in "
                        "brackets, [2001:db8::5]:7070")
    r.add_argument("--out", default="link-profile.json", metavar="FILE",
                   help="the link profile to write (default link-profile.json)")
    r.add_argument("--max-connections", type=parse_count, default=8, metavar="K",
                   help="most connections per direction; doubling stops earlier once rates settle (default 8)")
    r.add_argument("--window", type=parse_number, default=3.0, metavar="SECONDS",
                   help="measurement window per point, seconds (default 3)")
    r.add_argument("--tensors", type=parse_count, default=32, metavar="N",
                   help="most tensors a client step moves (default 32)")
    r.add_argument("--tensor-bytes", type=parse_count, default=256 * 1024, metavar="BYTES",
                   help="bytes per tensor (default 262144)")
    r.add_argument("--connect-timeout", type=parse_number, default=10.0, metavar="SECONDS",
                   help="how long to wait for 'netbench serve' to accept the connection, seconds: a host that "
                        "refuses it (not started yet) is asked again until then (default 10)")
    r.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    r.set_defaults(handler=_netbench_run)
