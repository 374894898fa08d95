"""``tracegen plan``: arguments, the call, and the printed answer (the table, the choice, the assumptions)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parsers.catalogue import read_catalogue
from parsers.read import read_trace
from tracegen.cli_predict import add_shard_arguments, batch_note, int_option, shard_counts
from tracegen.config import PAYLOAD_FRACTION
from tracegen.errors import ConfigError
from tracegen.html_report import report_inputs
from tracegen.inputs import batch_size_of, load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.outputs import OutputDir
from tracegen.plan import STEP_BUDGET, Plan, PlanConfig, plan
from tracegen.planreport import PAIR_HEADER, answer, assumptions, noise_line, pair_cells, pair_note, plan_csv, plan_html
from tracegen.processes import MAX_JOBS, PARALLEL_S, available_cpus
from tracegen.selfreplay import step_model
from tracegen.shards import holding, placements
from tracegen.units import counted, parse_count, parse_number, parse_whole
from tracegen.workercounts import parse_workers


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``tracegen plan``."""
    parser.add_argument("trace", help="trace file or directory of traced steps (as for predict); a "
                                      "link-profile.json / single-worker.json beside it says what the traced PS was")
    parser.add_argument("--catalogue", required=True, metavar="CSV",
                        help="instance types to choose from (format: parsers/catalogue.py, example: "
                             "data/catalogue/example.csv)")
    parser.add_argument("--samples", type=parse_whole, default=10**8, metavar="S",
                        help="training samples to process, for the time and cost columns: a whole number, plain "
                             "or with an exponent (default 1e8)")
    parser.add_argument("--target-rate", type=parse_number, metavar="R",
                        help="samples per second wanted: the cheapest option reaching it is chosen (default: the "
                             "cheapest per sample)")
    parser.add_argument("--workers", default="1-32", metavar="LIST",
                        help="numbers of workers to consider: a range 1-32, a list 1,2,4,8, or both (default 1-32)")
    add_shard_arguments(parser, "also consider K parameter servers, e.g. 1-4: each K of each PS type is a pair of "
                                "its own, the parameters placed on K PS of the type, each with its own link (default: "
                                "the PS tasks as traced)")
    parser.add_argument("--batch-size", type=parse_count, metavar="B",
                        help="samples per step (default: meta.json beside the trace, else 1)")
    parser.add_argument("--step-budget", type=parse_count, default=STEP_BUDGET, metavar="K",
                        help=f"measured steps of all workers together per simulated point, at least 3 per worker "
                             f"(default {STEP_BUDGET})")
    parser.add_argument("--seeds", type=parse_count, default=1, metavar="S",
                        help="simulations per point, seeds SEED..SEED+S-1, averaged (default 1)")
    parser.add_argument("--seed", type=parse_count, default=0, metavar="SEED", help="first seed (default 0)")
    parser.add_argument("--payload-fraction", type=parse_number, default=PAYLOAD_FRACTION, metavar="F",
                        help="share of a link_bits_per_s that carries tensor bytes (default "
                             f"{PAYLOAD_FRACTION:.4f}: TCP/IPv4 with timestamps at MTU 1500)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for plan.csv")
    parser.add_argument("--html", action="store_true",
                        help="also write DIR/plan.html: the answer, the options, the assumptions and the inputs in "
                             "one page that opens offline (named for plan, as plan.csv is: predict's report.html "
                             "beside it stays)")
    parser.add_argument("--jobs", type=parse_count, default=available_cpus(), metavar="J",
                        help="local processes to simulate the pairs of instance types in, side by side, when they "
                             f"would take {PARALLEL_S:g} s or more on one core; the plan is the same whatever J "
                             "(default: the CPUs this process may use)")
    parser.add_argument("--force", action="store_true",
                        help="replace an earlier plan's plan.csv and plan.html in DIR (never another command's files)")


def run_plan(args: argparse.Namespace) -> int:
    """Handle ``tracegen plan``: print the table, the choice and the assumptions; return the exit code."""
    if args.target_rate is not None and args.target_rate <= 0:
        raise ConfigError(f"'--target-rate' must be > 0 samples/s (got {args.target_rate:g})")
    int_option(args.jobs, "jobs", 1, MAX_JOBS)  # before any work: PlanConfig has no jobs to check, the pool would
    config = PlanConfig(workers=parse_workers(args.workers, "--workers"), samples=args.samples,
                        target_samples_per_s=args.target_rate, batch_size=batch_size_of(args.trace, args.batch_size),
                        step_budget=args.step_budget, seeds=args.seeds, seed=args.seed,
                        payload_fraction=args.payload_fraction)
    ps_shards = shard_counts(args)
    catalogue = read_catalogue(args.catalogue)
    profile, single = profile_beside(args.trace), single_worker_beside(args.trace)
    read = (args.trace, args.catalogue, profile, single, args.placement)  # never replaced, even with --force
    with OutputDir(args.out, ["plan.csv", *(["plan.html"] * args.html)], force=args.force, command="plan",
                   inputs=[p for p in read if p]) as out:
        trace = read_trace(args.trace)
        model = step_model(trace)
        if (note := batch_note(args.trace, args.batch_size)) is not None:  # --target-rate is in samples/s
            print(note)
        if ps_shards:
            ps_shards, left_out = holding(model, trace, ps_shards)
            if left_out is not None:
                print(f"note: {left_out}")
        result = plan(model, catalogue, config, link_profile=load_profile(profile),
                      single_worker=load_single_worker(single),
                      progress=lambda line: print(line, file=sys.stderr, flush=True), jobs=args.jobs,
                      placed=placements(model, trace, ps_shards, args.placement) if ps_shards else ())
        written = [out.write("plan.csv", plan_csv(result))]
        if args.html:
            inputs = report_inputs({"trace": args.trace, "catalogue": args.catalogue, "link profile": profile,
                                    "single worker": single, "samples": f"{args.samples:g}",
                                    "target": None if args.target_rate is None else f"{args.target_rate:g} samples/s"})
            written.append(out.write("plan.html", plan_html(result, inputs)))
    _print(result, [str(p) for p in (profile, single) if p is not None])
    print(f"wrote {', '.join(str(w) for w in written)}")
    return 0


def _print(result: Plan, beside: list[str]) -> None:
    cfg, model = result.config, result.model
    print(f"model: {counted(model.n_tasks, 'task')} from {model.source}; batch {cfg.batch_size} samples per step; "
          f"{counted(len(result.pairs), 'pair')} x up to {counted(len(cfg.workers), 'worker count')}, "
          f"{counted(result.n_simulations, 'simulation')}")
    if beside:
        print(f"the traced PS: {', '.join(beside)}")
    widths = (18, 14, 6, 10, 8, 9, 8, 9, 5, 9, 13)

    def row(cells: Sequence[str]) -> str:  # two names to the left, figures to the right, the last one free
        fixed = (f"{c:<{w}}" if i < 2 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(cells, widths, strict=False)))
        return " ".join(fixed) + "  " + cells[-1]

    print(row(PAIR_HEADER))
    for pair in result.pairs:
        print(row(pair_cells(pair, cfg.samples)))
    print(pair_note(cfg.samples))
    print(answer(result))
    print(noise_line(result))
    print("assumptions:")
    for line in assumptions(result):
        print(f"  - {line}")
