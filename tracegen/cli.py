"""The ``tracegen`` command: a thin shell over the library, one subcommand per task.

Every subcommand parses its options, calls one library function, prints a short summary and writes files only
where told. Library errors become one line on stderr and exit code 2; a traceback is a bug. The CLI is the
outermost layer, so it alone may reach into ``validation`` (for the commands that run real TensorFlow), and
only lazily, inside the handler that needs it.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

from parsers import TraceError, read_trace
from parsers.chrome import write_trace
from parsers.tables import table_paths, write_tables
from tracegen.curve import parse_workers
from tracegen.errors import TracegenError
from tracegen.link import LINK_MODELS
from tracegen.policy import parse_policy
from tracegen.predict import PAYLOAD_FRACTION, PredictConfig, add_predict_arguments, refuse_existing, run_predict
from tracegen.summary import summarize
from tracegen.units import format_bytes, parse_duration, parse_rate

EXIT_USAGE = 2


class CliError(Exception):
    """A problem with the command line itself (an output that exists, a missing option)."""


def _inspect(args: argparse.Namespace) -> int:
    summary = summarize(read_trace(args.trace))
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(format_summary(summary))
    return 0


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    return format_bytes(n) if n < 1000 else f"{format_bytes(n)} ({int(n)} B)"


def _fmt_ms(ns: float | None) -> str:
    return "unknown" if ns is None else f"{ns / 1e6:.3f} ms"


def format_summary(s: dict[str, Any]) -> str:
    """The human-readable form of :func:`tracegen.summary.summarize`'s result."""
    rate = {k: "unknown" if s[k] is None else f"{s[k] * 8 / 1e6:.1f} Mbit/s"
            for k in ("pull_rate_bytes_per_s", "push_rate_bytes_per_s")}
    lines = [
        f"trace      {s['source']} ({s['source_format']})",
        f"steps      {s['n_steps']} traced; step time {_fmt_ms(s['step_time_ns'])} (median); per step: "
        + ", ".join(_fmt_ms(t) for t in s["step_time_ns_per_step"]),
        f"devices    {len(s['devices'])}: " + ", ".join(s["devices"]),
        f"ops        {s['ops_per_step']} per step (median)",
        f"params     {s['n_variables'] if s['n_variables'] is not None else 'unknown'} variables, "
        f"{s['param_elements'] if s['param_elements'] is not None else 'unknown'} elements, "
        f"{_fmt_bytes(s['param_bytes'])}"
        + (f"; plus {s['n_other_variables']} other variables ({_fmt_bytes(s['other_variable_bytes'])})"
           if s["n_other_variables"] else ""),
        f"pulls      {s['pull_count']} per step, {_fmt_bytes(s['pull_bytes'])}; recorded per step: "
        f"{s['pull_count_recorded_per_step']}",
        f"pushes     {s['push_count']} per step, {_fmt_bytes(s['push_bytes'])}"
        + (f" ({s['gradient_push_count']} gradients, {_fmt_bytes(s['gradient_push_bytes'])})"
           if s["gradient_push_count"] is not None else "")
        + f"; recorded per step: {s['push_count_recorded_per_step']}",
        f"transfers  in flight {_fmt_ms(s['transfer_time_ns'])}; compute {_fmt_ms(s['compute_time_ns'])}; "
        f"overlap {_fmt_ms(s['overlap_ns'])}"
        + (f" ({s['overlap_fraction']:.0%} of transfer time)" if s["overlap_fraction"] is not None else ""),
        f"rate       pulls {rate['pull_rate_bytes_per_s']}, pushes {rate['push_rate_bytes_per_s']} (observed)",
    ]
    link = s["link_estimate"]
    if link is not None:
        lines.append(f"link est.  pull {link['pull_bandwidth_bytes_per_s'] * 8 / 1e6:.1f} Mbit/s, push "
                     f"{link['push_bandwidth_bytes_per_s'] * 8 / 1e6:.1f} Mbit/s, latency "
                     f"{link['latency_ns'] / 1e3:.0f} us ({link['method']}; what predict uses without "
                     "--bandwidth)")
    if s["lost"]:
        lines.append("not in this format: " + "; ".join(s["lost"]))
    if s["skipped"]:
        lines.append("skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(s["skipped"].items())))
    return "\n".join(lines)


def _convert(args: argparse.Namespace) -> int:
    trace = read_trace(args.trace)
    out = pathlib.Path(args.out)
    if args.to == "chrome":
        refuse_existing([out], args.force)
        if not out.parent.is_dir():
            raise CliError(f"{out.parent}: output directory does not exist")
        write_trace(trace, out)
        written = [out]
    else:
        refuse_existing(table_paths(out, args.to), args.force)
        written = write_tables(trace, out, args.to)
    print(f"wrote {len(written)} file(s): {', '.join(str(p) for p in written)}")
    return 0


def _profile(args: argparse.Namespace) -> int:
    from validation.capture import ProfileConfig, profile
    from validation.zoo import ModelSpec

    spec = ModelSpec(name=args.model, batch_size=args.batch_size, widths=tuple(args.widths or ()))
    config = ProfileConfig(model=spec, warmup_steps=args.warmup, traced_steps=args.steps)
    paths = profile(config, pathlib.Path(args.out))
    print(f"traced {len(paths)} step(s) of {args.model} (batch {args.batch_size}) into {args.out}")
    return 0


def _testbed(args: argparse.Namespace) -> int:
    from validation.testbed import TestbedConfig, run_testbed

    config = TestbedConfig(
        out_dir=pathlib.Path(args.out), model=args.model, workers=parse_workers(args.workers),
        bandwidth_bits_per_s=8 * parse_rate(args.bandwidth), batch_size=args.batch_size,
        widths=tuple(args.widths or ()), burst_bytes=args.burst, latency_ms=args.queue_latency,
        repeats=args.repeats, window_s=args.window, window_steps=args.window_steps, max_window_s=args.max_window,
        trace_workers=not args.no_worker_traces, warmup_steps=args.warmup, cpu_cap_ps=args.cpu_ps,
        cpu_cap_worker=args.cpu_worker, traced_steps=args.traced_steps, subnet=args.subnet,
        timeout_s=args.timeout)
    if args.transfer_bench:
        from validation.testbed import measure_transfer_rates

        rates = measure_transfer_rates(config, window_s=config.window_s,
                                       progress=lambda line: print(line, flush=True))
        for kind, rate in rates.items():
            print(f"{kind:5s} {rate / 1e6:8.1f} MB/s")
        print(f"wrote {config.out_dir / 'ps_transfer.csv'}; pass 'both' to predict as --ps-transfer-rate")
        return 0
    result = run_testbed(config, progress=lambda line: print(line, flush=True))
    print(f"measured {len(result.measurements)} run(s) into {result.csv_path}; trace in {result.trace_dir}")
    print("   N  repeat  steps/s  per worker")
    for m in result.measurements:
        print(f"{m.n_workers:4d}  {m.repeat:6d}  {m.steps_per_s:7.3f}  "
              + " ".join(f"{r:.3f}" for r in m.worker_steps_per_s))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from validation.compare import report_paths
    from validation.validate import validate

    out = pathlib.Path(args.out)
    refuse_existing([*report_paths(out), out / "prediction", out / "prediction_nominal"], args.force)
    policy, order = parse_policy(args.policy)
    transfer = args.ps_transfer_rate
    if transfer is not None and pathlib.Path(transfer).is_file():
        from validation.testbed import read_transfer_rate

        transfer_rate: int | None = read_transfer_rate(transfer)
    else:
        transfer_rate = None if transfer is None else parse_rate(transfer, what="ps-transfer-rate")
    config = PredictConfig(
        bandwidth_bytes_per_s=None if args.bandwidth is None else parse_rate(args.bandwidth),
        latency_ns=None if args.latency is None else parse_duration(args.latency), link=args.link,
        policy=policy, order=order, steps=args.steps, seeds=args.seeds, payload_fraction=args.payload_fraction,
        ps_transfer_bytes_per_s=transfer_rate)
    comparison = validate(args.measured, args.trace, config, args.out)
    print(f"measured knee N={comparison.measured_knee_n_workers}")
    for name, score in comparison.scores.items():
        print(f"{name:12s} MAPE {score.mape:6.1%}  max error {score.max_error:6.1%}  knee N={score.knee_n_workers}"
              f"  inside measured range {score.inside_range}/{len(comparison.table)}")
    print(f"wrote {args.out}/report.md, comparison.csv, comparison.png")
    return 0


def _widths(text: str) -> list[int]:
    try:
        return [int(w) for w in text.split(",") if w.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"widths must be comma-separated integers (got {text!r})") from exc


TESTBED_HELP = ("measure the real curve on an emulated cluster (root; needs the 'tf' extra, iproute2 and the "
                "cgroup v1 cpu controller)")
VALIDATE_HELP = "compare measured throughput with predictions and the baselines"


def _add_testbed(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", choices=("mlp", "cnn", "resnet"), default="mlp", help="zoo model (default mlp)")
    p.add_argument("--workers", default="1-4", metavar="LIST", help="worker counts, e.g. 1-5 or 1,2,4 "
                                                                    "(default 1-4)")
    p.add_argument("--bandwidth", required=True, metavar="RATE",
                   help="PS link rate per direction, e.g. 200Mbit/s, 1Gbit/s (bits/s) or 25MB/s (bytes/s)")
    p.add_argument("--batch-size", type=int, default=32, help="examples per step per worker (default 32)")
    p.add_argument("--widths", type=_widths, help="model widths, comma-separated (see profile)")
    p.add_argument("--burst", type=int, default=16_384, metavar="BYTES",
                   help="tc tbf bucket size in bytes (default 16384)")
    p.add_argument("--queue-latency", type=float, default=50.0, metavar="MS",
                   help="tc tbf queue latency in milliseconds: queue = rate x latency + burst (default 50, "
                        "lossless and fair; see validation.testbed)")
    p.add_argument("--repeats", type=int, default=3, help="runs per worker count (default 3)")
    p.add_argument("--window", type=float, default=30.0, metavar="SECONDS",
                   help="measurement window after warm-up, seconds (default 30)")
    p.add_argument("--window-steps", type=int, default=0, metavar="STEPS",
                   help="lengthen each window so every worker does about this many steps, judged from the first "
                        "N=1 run's rate (default 0: fixed windows)")
    p.add_argument("--max-window", type=float, default=120.0, metavar="SECONDS",
                   help="longest window --window-steps may ask for (default 120)")
    p.add_argument("--transfer-bench", action="store_true",
                   help="instead of training, measure how many bytes/s the PS moves over this link with no "
                        "computation: one worker pulling, one pushing, both at once (DIR/ps_transfer.csv)")
    p.add_argument("--no-worker-traces", action="store_true",
                   help="do not trace every worker after the window of each N>1 run (DIR/workers/nN/wI)")
    p.add_argument("--warmup", type=int, default=10, metavar="STEPS", help="steps before the window (default 10)")
    p.add_argument("--cpu-ps", type=float, default=0.3, metavar="CORES", help="the PS's CPU cap (default 0.3)")
    p.add_argument("--cpu-worker", type=float, default=0.3, metavar="CORES",
                   help="each worker's CPU cap (default 0.3); all caps together must stay under the cores")
    p.add_argument("--traced-steps", type=int, default=3, help="steps traced in the N=1 run (default 3)")
    p.add_argument("--subnet", default="10.77.0.0/24", help="private subnet inside the namespaces")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="limit for warm-up and for finishing after the window (default 300)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for measured.csv and trace/")
    p.set_defaults(handler=_testbed)



def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measured", required=True, metavar="CSV|DIR",
                   help="measurements CSV (n_workers, steps_per_s, ...; see validation.compare) or a testbed "
                        "output directory")
    p.add_argument("--trace", help="the single-worker trace (default: DIR/trace of a testbed directory)")
    p.add_argument("--bandwidth", metavar="RATE", help="override the link rate recorded in the measurements")
    p.add_argument("--latency", metavar="TIME", help="fixed cost per transfer, e.g. 50us (default: estimated)")
    p.add_argument("--payload-fraction", type=float, default=PAYLOAD_FRACTION, metavar="F",
                   help=f"share of the link rate that carries tensor bytes (default {PAYLOAD_FRACTION:.4f})")
    p.add_argument("--ps-transfer-rate", metavar="RATE|CSV",
                   help="bytes/s the PS's CPU moves in and out together, or a ps_transfer.csv from "
                        "'tracegen testbed --transfer-bench' (default: no limit)")
    p.add_argument("--link", choices=sorted(LINK_MODELS), default="fifo", help="link model (see predict)")
    p.add_argument("--policy", default="tf", metavar="tf|tictac|FILE", help="transfer order (see predict)")
    p.add_argument("--steps", type=int, default=10, metavar="K", help="simulated steps per worker (default 10)")
    p.add_argument("--seeds", type=int, default=3, metavar="S", help="simulations per worker count (default 3)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for report.md, comparison.csv/.png")
    p.add_argument("--force", action="store_true", help="overwrite a report that already exists")
    p.set_defaults(handler=_validate)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="tracegen", description=(
        "Predict how asynchronous parameter-server training scales, from one worker's TensorFlow trace."))
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (repeat for debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="summarise a trace: steps, parameters, transfers, overlap, rates")
    p.add_argument("trace", help="RunMetadata .pb/.pbtxt, TF timeline or tracegen Chrome JSON (.json, .json.gz), "
                                 "a directory of traced steps, or a glob")
    p.add_argument("--json", action="store_true", help="print one JSON object (keys in tracegen.summary)")
    p.set_defaults(handler=_inspect)

    p = sub.add_parser("convert", help="write the normalised trace as Chrome JSON or as tables")
    p.add_argument("trace", help="any trace tracegen reads (see inspect)")
    p.add_argument("--to", choices=("chrome", "parquet", "csv"), required=True,
                   help="chrome: one JSON file for Perfetto/chrome://tracing; parquet/csv: one file per table "
                        "(columns documented in parsers.trace) plus trace.json, into directory OUT")
    p.add_argument("out", help="output file (chrome) or directory (parquet, csv)")
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    p.set_defaults(handler=_convert)

    p = sub.add_parser("profile", help="run a real 1-PS, 1-worker TensorFlow job on localhost and trace it "
                                       "(needs the 'tf' extra)")
    p.add_argument("--model", choices=("mlp", "cnn", "resnet"), default="mlp", help="zoo model (default mlp)")
    p.add_argument("--batch-size", type=int, default=32, help="examples per step (default 32)")
    p.add_argument("--widths", type=_widths, help="model widths, comma-separated: mlp hidden sizes; cnn "
                                                  "conv1,conv2,dense channels; resnet stage channels")
    p.add_argument("--warmup", type=int, default=5, help="untraced steps before tracing (default 5)")
    p.add_argument("--steps", type=int, default=3, help="traced steps (default 3)")
    p.add_argument("--out", required=True, help="directory for step_NNN.pb, step_NNN.json and meta.json")
    p.set_defaults(handler=_profile)

    p = sub.add_parser("predict", help="predict throughput for N workers from one worker's trace")
    add_predict_arguments(p)
    p.set_defaults(handler=run_predict)

    _add_testbed(sub.add_parser("testbed", help=TESTBED_HELP))
    _add_validate(sub.add_parser("validate", help=VALIDATE_HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tracegen`` command line; returns the exit code."""
    from validation.errors import ValidationError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG if args.verbose > 1 else logging.INFO,
                            format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args))
    except (TraceError, TracegenError, CliError, ValidationError) as exc:
        print(f"tracegen {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # an output that cannot be written: say which and why, in one line
        print(f"tracegen {args.command}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"tracegen {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
