"""``tracegen predict``: arguments, the call, and the printed table."""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys

from parsers.files import broken_link
from parsers.read import meta_path, read_meta, read_trace
from parsers.singleworker import SingleWorker
from parsers.workerclasses import read_worker_classes
from tracegen.band import band_edges
from tracegen.config import MIN_STEPS, PAYLOAD_FRACTION, PredictConfig
from tracegen.curvetext import knee_text, plateau_text, stall_consequence, unsimulated_text
from tracegen.errors import ConfigError
from tracegen.inputs import batch_size_of, load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.link import LINK_MODELS
from tracegen.linkspec import held_ps_bound
from tracegen.model import TIMINGS
from tracegen.outputs import OutputDir
from tracegen.placement import MAX_SHARDS, PLACEMENTS
from tracegen.plateau import MAX_SATURATION_WORKERS, SATURATED, STALL_GAIN, STALL_POINTS
from tracegen.policy import parse_policy
from tracegen.predict import Prediction, predict
from tracegen.processes import MAX_JOBS, PARALLEL_S, available_cpus
from tracegen.shards import knee_cell as shard_knee_cell
from tracegen.simulate import MAX_STEPS
from tracegen.units import (
    counted,
    fixed,
    format_bytes,
    format_duration,
    format_rate,
    parse_count,
    parse_number,
    parse_rate,
    percent,
)
from tracegen.workercounts import parse_workers

# what the testbed's runs say of the PS's CPU per step as N grows (tests/validation/test_stated_measurements.py)
ELASTIC_PS_CPU = ("the testbed the PS spent 9-46 % less CPU per step at N = 4-5 than at N = 1 on 17 of the 20 runs "
                  "that recorded it, where it rose 0-11 % on two and moved 2 % either way on one (its RPC threads "
                  "spend what spare CPU it has; docs/validation.md, 'The PS's CPU is elastic')")
# what every command that reads a trace says it takes (parsers.read.read_trace reads them all)
TRACE_HELP = ("one worker's trace: a RunMetadata or StepStats protobuf (.pb, .pbtxt), a TF timeline or tracegen "
              "Chrome JSON (.json, .json.gz), a TF2 profile (<host>.xplane.pb, its run directory or the logdir, or "
              "TensorBoard's trace-viewer JSON of one), a directory or glob of traced steps, or tables from 'tracegen "
              "convert'")


def add_predict_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``tracegen predict``."""
    parser.add_argument("trace", help=TRACE_HELP)
    parser.add_argument("--workers", default="1-16", metavar="LIST",
                        help="numbers of workers to predict: a range 1-16, a list 1,2,4,8, or both (default 1-16)")
    parser.add_argument("--link-profile", metavar="FILE",
                        help="link profile from 'tracegen netbench run' (default: link-profile.json beside the "
                             "trace, unless --bandwidth is given)")
    parser.add_argument("--single-worker", metavar="FILE",
                        help="one untraced worker's rate and the PS's CPU per step, measured on two hosts "
                             "(default: single-worker.json beside the trace; 'tracegen testbed' writes it)")
    parser.add_argument("--bandwidth", metavar="RATE",
                        help="PS link line rate per direction, e.g. 500Mbit/s, 1Gbit/s, 10G (bits/s) or 125MB/s "
                             "(bytes/s); without a link profile the plateau is not pinned and curve.csv gets "
                             "band_low/band_high")
    parser.add_argument("--payload-fraction", type=parse_number, default=PAYLOAD_FRACTION, metavar="F",
                        help="share of a given --bandwidth that carries tensor bytes; the rest is protocol headers "
                             f"(default {PAYLOAD_FRACTION:.4f}: TCP/IPv4 with timestamps at MTU 1500)")
    parser.add_argument("--link", choices=sorted(LINK_MODELS), default="conn",
                        help="which transfers queue behind each other in a link direction: conn = one worker's, "
                             "fifo = everyone's, fair = none (default conn; see tracegen.link)")
    parser.add_argument("--policy", default="tf", metavar="tf|tictac|FILE",
                        help="the order a worker requests its parameters in: tf = as traced, tictac = by first "
                             "need, or a FILE of tensor names, one per line (default tf)")
    parser.add_argument("--steps", type=parse_count, default=30, metavar="K",
                        help="measured steps each simulated worker runs after its warm-up (default 30)")
    parser.add_argument("--warmup-steps", type=parse_count, default=3, metavar="W",
                        help="steps each simulated worker runs before the measurement window opens (default 3)")
    parser.add_argument("--every-n", action="store_true",
                        help="simulate every asked N; by default the N after the rate stalls (3 in a row each under "
                             "1%% above the best so far, with the PS's CPU or a link direction at least 90%% busy, "
                             "a direction of what it carries while the other is busy too) are not simulated: in the "
                             "model more workers do not raise it, and they take most of a long curve's time")
    parser.add_argument("--seeds", type=parse_count, default=3, metavar="S",
                        help="simulations per worker count, seeds 0..S-1; the ±95%% column is the half-width of "
                             "the 95%% confidence interval of their mean (default 3)")
    parser.add_argument("--ps-threads", type=parse_count, metavar="T",
                        help="threads of the PS CPU running apply ops (default: as many as the trace ran at once)")
    parser.add_argument("--batch-size", type=parse_count, metavar="B",
                        help="samples per step, for samples/s (default: meta.json beside the trace, else 1)")
    parser.add_argument("--emit-traces", default=None, metavar="LIST",
                        help="also write synthetic Chrome traces DIR/traces/n{N}.json for these N, e.g. 1,4,16 "
                             "(default: none)")
    parser.add_argument("--timing", choices=TIMINGS, default="steps",
                        help="op timings: steps = each simulated step replays one complete traced step, drawn at "
                             "random (default); representative = only the median one; median = per-op medians")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory for curve.csv, curve.png, staleness.csv, staleness.png, and, when asked, "
                             "shards.csv (--ps-shards), traces/ (--emit-traces) and report.html (--html)")
    parser.add_argument("--html", action="store_true",
                        help="also write DIR/report.html: the curve, band, knee, utilisations and inputs in one "
                             "page that opens offline (hover a chart for the values)")
    parser.add_argument("--worker-classes", metavar="FILE",
                        help="workers that are not all like the traced one: a CSV of classes with counts, speeds and "
                             "links of their own (parsers/workerclasses.py); workers are numbered in file order")
    add_shard_arguments(parser, "also predict with K parameter servers, e.g. 1-4: writes shards.csv, one row per K "
                                "with the knee, the plateau and the shard that saturates")
    parser.add_argument("--jobs", type=parse_count, default=available_cpus(), metavar="J",
                        help=f"local processes to run the simulations in when the curve would take {PARALLEL_S:g} s "
                             "or more on one core; the files are the same whatever J (default: the CPUs this process "
                             "may use)")
    parser.add_argument("--force", action="store_true",
                        help="replace an earlier prediction's files in DIR (all of them, not only those written "
                             "again; never another command's)")


def int_option(value: int, name: str, low: int, high: int) -> int:
    """``value`` of option ``--NAME``, refused in the option's own name outside ``low`` to ``high``."""
    if not low <= value <= high:
        raise ConfigError(f"'--{name}' must be from {low} to {high} (got {value})")
    return value


def simulation_counts(args: argparse.Namespace) -> tuple[int, int, int, int]:
    """``--steps``, ``--warmup-steps``, ``--seeds`` and ``--jobs``, each refused outside its range in the option's
    own name, as predict and validate both take them (fewer than :data:`MIN_STEPS` read fast)."""
    return (int_option(args.steps, "steps", MIN_STEPS, MAX_STEPS),
            int_option(args.warmup_steps, "warmup-steps", 1, MAX_STEPS), int_option(args.seeds, "seeds", 1, 1000),
            int_option(args.jobs, "jobs", 1, MAX_JOBS))


def batch_note(trace: str, batch_size: int | None) -> str | None:
    """The note that samples/s are steps/s, where neither ``--batch-size`` nor ``meta.json`` beside ``trace`` gives
    a batch (a converted trace, say); None where one does. predict, plan and sweep each print it: plan's
    --target-rate and $ per 1000 samples, and sweep's samples_per_s, are per step then."""
    if batch_size is not None or (read_meta(trace) or {}).get("batch_size") is not None:  # as batch_size_of reads
        return None  # it: a null there is a batch of 1 too, and is said to be
    return (f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {meta_path(trace)} "
            f"{'gives no batch_size' if meta_path(trace).exists() else 'is not there'}")


def add_shard_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--ps-shards`` (helped by ``what``) and ``--placement``, as predict, plan and sweep take them."""
    parser.add_argument("--ps-shards", metavar="K", help=what)
    parser.add_argument("--placement", default="round-robin", metavar="HOW",
                        help="how parameters go to the shards of --ps-shards: round-robin (TF's default, creation "
                             "order), greedy (each variable in creation order to the shard holding the fewest bytes so "
                             "far, weighed by the bytes it holds, as TF1's GreedyLoadBalancingStrategy did) or a CSV "
                             "file variable,shard (default round-robin)")


def shard_counts(args: argparse.Namespace) -> tuple[int, ...]:
    """The numbers of PS shards of ``--ps-shards`` (none when not given; ``--placement`` alone is refused)."""
    if args.placement != "round-robin" and args.ps_shards is None:
        raise ConfigError(f"'--placement' {args.placement!r} places parameters on the shards of --ps-shards, "
                          "which was not given")
    if args.ps_shards is None:
        return ()
    if args.placement not in PLACEMENTS and not pathlib.Path(args.placement).is_file():  # else after the trace
        there = pathlib.Path(args.placement)
        what = "not a regular file" if there.exists() else broken_link(there) or "no such file"
        raise ConfigError(f"'--placement' must be round-robin, greedy or a placement file (got {args.placement!r}: "
                          f"{what})")
    counts = parse_workers(args.ps_shards, "--ps-shards")  # '' is refused
    if max(counts) > MAX_SHARDS:  # checked here too, to quote what was written, not the first count over
        raise ConfigError(f"'--ps-shards' must be from 1 to {MAX_SHARDS} shards (got {args.ps_shards!r})")
    return counts


def run_predict(args: argparse.Namespace) -> int:
    """Handle ``tracegen predict``: print the link used, the table and the knee; return the exit code. The notes on
    the inputs are said once the trace is read: a bad input gives its one error line, not notes and then it."""
    notes: list[str] = []
    emitted = parse_workers(args.emit_traces, "--emit-traces") if args.emit_traces is not None else ()
    workers = parse_workers(args.workers, "--workers")
    steps, warmup, seeds, jobs = simulation_counts(args)
    profile_path = args.link_profile
    if profile_path is not None and args.bandwidth is not None:  # the profile would win, the rate unused
        raise ConfigError(f"--link-profile {profile_path} and --bandwidth {args.bandwidth} both give the PS link; "
                          "give one (a profile pins the plateau, a rate alone gives its band)")
    if profile_path is None and args.bandwidth is None:
        found = profile_beside(args.trace)
        profile_path = None if found is None else str(found)
    elif profile_path is None and profile_beside(args.trace) is not None:
        notes.append(f"note: {profile_beside(args.trace)} is not used: --bandwidth was given")
    single_path = args.single_worker
    beside = single_path is None and (found := single_worker_beside(args.trace)) is not None
    if beside:
        single_path = str(found)
    single = load_single_worker(single_path)
    if beside and single is not None:
        notes.append(f"note: using {single_path}, measured on two hosts: {_what_it_gives(single)}")
    policy, order = parse_policy(args.policy, "--policy")
    ps_shards = shard_counts(args)
    speeds: tuple[float, ...] = ()
    links: tuple[int, ...] = ()
    if args.worker_classes is not None:
        classes = read_worker_classes(args.worker_classes)
        most = max(*workers, *emitted, MAX_SATURATION_WORKERS)  # the plateau search's N and the traces' too
        speeds = classes.speeds(most)
        links = classes.links(most)
        notes.append(f"note: workers from {args.worker_classes}: {classes.describe()}")
        if unreached := classes.unreached(asked := max((*workers, *emitted))):  # a cluster larger than asked?
            more = len(unreached) - 1
            notes.append(f"note: {args.worker_classes}:{unreached[0].line}: class {unreached[0].name!r}"
                         f"{f' and {more} more' if more else ''} listed past the {asked} worker"
                         f"{'s' * (asked > 1)} asked: no N asked has a worker of {'them' if more else 'it'}")
    if args.payload_fraction != PAYLOAD_FRACTION and args.bandwidth is None and not links:  # else unused
        raise ConfigError(f"'--payload-fraction' {args.payload_fraction:g} is the share of a --bandwidth (or of a "
                          "worker class's own link) that carries tensor bytes, and neither was given: a link profile "
                          "or the trace's link is measured payload")
    config = PredictConfig(
        workers=workers, link_profile=load_profile(profile_path), single_worker=single,
        bandwidth_bytes_per_s=None if args.bandwidth is None else parse_rate(args.bandwidth, what="--bandwidth"),
        payload_fraction=args.payload_fraction, link=args.link, policy=policy, order=order,
        order_file=args.policy if order else "", steps=steps,
        warmup_steps=warmup, seeds=seeds, ps_threads=args.ps_threads,
        batch_size=batch_size_of(args.trace, args.batch_size), emit_traces=emitted, timing=args.timing,
        worker_speed=speeds, worker_link_bits_per_s=links,
        ps_shards=ps_shards, placement=args.placement,
        jobs=jobs, every_n=args.every_n)
    if (note := batch_note(args.trace, args.batch_size)) is not None:
        notes.append(note)
    planned = ["curve.csv", "curve.png", "staleness.csv", "staleness.png", "shards.csv",
               *(f"traces/n{n}.json" for n in emitted),
               *(["report.html"] * args.html)]
    read = (args.trace, profile_path, single_path, args.worker_classes, config.order_file, args.placement)
    with OutputDir(args.out, planned, force=args.force, command="predict",  # never what it reads, even with --force
                   inputs=[p for p in read if p]) as out:
        trace = read_trace(args.trace)
        for note in notes:
            print(note)
        result = predict(trace, config, out, progress=lambda line: print(line, file=sys.stderr, flush=True))
        if args.html:
            result = dataclasses.replace(result, files=(*result.files, out.write("report.html", _html(
                result, config, args.trace, profile_path, single_path))))
    _print(result, config)
    return 0


def _what_it_gives(single: SingleWorker) -> str:
    """What a single-worker measurement adds to a prediction, in words."""
    gives = ["one untraced worker's rate"]
    if single.ps_cpu_s_per_step is not None:
        gives.append("the PS's CPU per transfer request")
    if single.ps_cores is not None:
        gives.append(f"the PS's {single.ps_cores:g} cores{' (a CPU quota)' if single.ps_cpu_quota else ''}")
    return ", ".join(gives)


def _html(result: Prediction, config: PredictConfig, trace: str, profile: str | None, single: str | None) -> bytes:
    from tracegen.html_report import prediction_html, report_inputs

    bandwidth = config.bandwidth_bytes_per_s
    inputs = report_inputs({
        "trace": trace, "link": result.link_source,
        "link profile": profile or ("not used: --bandwidth given" if bandwidth is not None else None),
        "bandwidth": None if bandwidth is None else f"{format_rate(bandwidth)} line rate, "
                                                    f"{config.payload_fraction:.4f} of it payload",
        "single worker": single,
        "model": f"{result.model.n_tasks} tasks; {counted(len(result.model.timings), 'complete traced step')} of "
                 f"{result.model.n_traced_steps}",
        **({"model notes": "; ".join(result.model.notes)} if result.model.notes else {}),  # as printed, 'note:'
        "simulated": f"{config.warmup_steps} warm-up + {config.steps} measured steps per worker, "
                     f"{counted(config.seeds, 'seed')} from {config.seed}; link model {config.link}, "
                     f"transfer order {config.policy}"
                     + (f"; {unsimulated_text(result.curve)}" if result.curve.unsimulated_workers else ""),
        "batch size": config.batch_size})
    return prediction_html(result.curve, title=f"Predicted scaling: {trace}", inputs=inputs,
                           batch_size=config.batch_size, band=result.band)


def _print(result: Prediction, config: PredictConfig) -> None:
    curve, model = result.curve, result.model
    print(f"model: {model.n_tasks} tasks; timings of {counted(len(model.timings), 'complete traced step')} of "
          f"{model.n_traced_steps} in {model.source}; median step {format_duration(model.measured_step_ns)}")
    for note in model.notes:
        print(f"note: {note}")
    print(f"link: {result.link_source}")
    if config.bandwidth_bytes_per_s is not None and config.link_profile is None:
        print(f"      {format_rate(config.bandwidth_bytes_per_s)} line rate, {config.payload_fraction:.2%} of it "
              "tensor payload; the plateau is NOT pinned: band_low/band_high bound it, a link profile "
              "('tracegen netbench') pins it")
    band = result.band
    print(f"{'N':>4} {'steps/s':>9} {'±95%':>7} {'samples/s':>10}"
          + (f" {'band_low':>9} {'band_high':>9}" if band else "") + f" {'pull':>5} {'push':>5} {'ps':>5}  bottleneck")
    edges = None if band is None else band_edges(curve, band)
    for i, p in enumerate(curve.points):
        low, high = ("", "") if edges is None else (fixed(edges[0][i], 2), fixed(edges[1][i], 2))
        cells = f" {low:>9} {high:>9}" if band else ""
        ci = "-" if p.steps_per_s_ci95 is None else fixed(p.steps_per_s_ci95, 2)
        print(f"{p.n_workers:>4} {fixed(p.steps_per_s, 2):>9} {ci:>7} "
              f"{fixed(p.steps_per_s * config.batch_size, 1):>10}{cells} {percent(p.pull_link_utilisation):>5} "
              f"{percent(p.push_link_utilisation):>5} {percent(p.ps_cpu_utilisation):>5}  {p.bottleneck}")
    if curve.unsimulated_workers:
        print(f"{unsimulated_text(curve)} ({STALL_POINTS} worker counts in a row each under {STALL_GAIN:.0%} above "
              f"the best, with the PS's CPU or a link direction at least {SATURATED:.0%} busy, a direction of what it "
              f"carries while the other is busy too), {stall_consequence(curve)}; --every-n simulates them")
    print(f"plateau {plateau_text(curve)}; knee (95% of the plateau): {knee_text(curve)}; "
          f"link bound {fixed(curve.link_bound_steps_per_s, 2)} steps/s")
    if result.cycle_steps_per_s is not None:
        print(f"note: the link profile's cycle points (clients alternating pulls and pushes, as workers do) bound "
              f"N={curve.points[-1].n_workers} at {result.cycle_steps_per_s:.2f} steps/s: an estimate from the "
              "profile alone, not the model above; where the link binds it was often the closer one on the "
              "validation campaigns (roofline_cycle, README 'Validation')")
    measured = config.single_worker
    if curve.points[-1].bottleneck == "ps-cpu" and measured is not None and measured.ps_cpu_s_per_step is not None:
        per_step_ms = measured.ps_cpu_s_per_step * 1e3
        at_cap = result.ps_at_cap_steps_per_s
        print(f"note: the PS's CPU binds this plateau at the single-worker run's {per_step_ms:.1f} ms per step; on "
              f"{ELASTIC_PS_CPU}, so the plateau may lie up to 1.8x higher"
              + ("" if at_cap is None else f"; the link profile's points with the PS at its cap put it at "
                                            f"{at_cap:.2f} steps/s, an estimate from above"))
    held = None if measured is None else held_ps_bound(measured)
    if measured is not None and measured.ps_at_cap is not None and held is not None:
        print(f"note: one worker holding the PS at a cap of {measured.ps_at_cap.ps_cores:g} cores cost it "
              f"{measured.ps_at_cap.ps_cpu_s_per_step * 1e3:.1f} ms of CPU a step (ps_at_cap), a PS bound of "
              f"{held:.2f} steps/s on its {measured.ps_cores:g} cores; not used above: on the holdout that tested "
              "it, it predicted one plateau better and one far worse (docs/validation.md, 'The PS's CPU is elastic')")
    if result.shards:
        print(f"PS shards ({result.shards[0].placement} placement): each a PS like the traced one, its own link")
        print("   K   knee  plateau steps/s  at N  saturates                 pull bytes per shard")
        for r in result.shards:
            k_knee = shard_knee_cell(r)
            print(f"{r.n_shards:4d}  {k_knee:>5}  {fixed(r.plateau_steps_per_s, 2):>15}  {r.plateau_workers:4d}  "
                  f"shard {r.saturating_shard} {r.saturating_resource} {percent(r.saturating_utilisation):>4}".ljust(67)
                  + " " + " / ".join(format_bytes(b) for b in r.shard_pull_bytes))
    print(f"wrote {', '.join(str(f) for f in result.files)}")
