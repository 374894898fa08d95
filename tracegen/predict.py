"""``predict``: from a trace to the scaling curve, its plot and synthetic traces, and the CLI's ``predict``.

Pipeline: read the trace → :func:`tracegen.model.build_model` → link: the given bandwidth (its payload share),
or the trace's estimate (optionally calibrated so that one worker reproduces the measured step time,
:func:`tracegen.simulate.calibrate_link`) → :func:`tracegen.curve.scaling_curve` → files, each written
atomically: ``curve.csv``, ``curve.png`` and, when asked, ``traces/n{N}.json``. The same trace, config and seed
give byte-identical ``curve.csv`` and traces.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import pathlib
from collections.abc import Iterable

from parsers.atomic import write_bytes_atomic
from parsers.read import read_trace
from parsers.trace import Trace
from tracegen.curve import Curve, parse_workers, scaling_curve
from tracegen.errors import ConfigError
from tracegen.link import LINK_MODELS
from tracegen.model import TIMINGS, StepModel, build_model
from tracegen.policy import parse_policy
from tracegen.simulate import SimConfig, calibrate_link
from tracegen.synth import write_synthetic_trace
from tracegen.units import format_duration, format_rate, parse_duration, parse_rate

PAYLOAD_FRACTION = 1448 / 1514  # TCP payload per Ethernet frame: MTU 1500, IPv4, TCP with timestamps
CSV_COLUMNS = ("n_workers", "steps_per_s", "samples_per_s", "steps_per_s_low", "steps_per_s_high",
               "pull_link_utilisation", "push_link_utilisation", "ps_cpu_utilisation", "ps_transfer_utilisation",
               "bottleneck")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PredictConfig:
    """What to predict. ``bandwidth_bytes_per_s``/``latency_ns`` None: estimated from the trace.

    A given ``bandwidth_bytes_per_s`` is the link's line rate, as a link or ``tc`` is configured; tensors move
    at ``payload_fraction`` of it (the rest is TCP/IP and Ethernet headers: 1448 payload bytes in a 1514-byte
    frame with TCP timestamps at a 1500-byte MTU). A rate estimated from the trace is payload already.
    ``ps_transfer_bytes_per_s``: how many bytes the PS can send and receive per second together (None: no
    limit); see :mod:`tracegen.simulate`.
    """

    workers: tuple[int, ...] = tuple(range(1, 17))
    bandwidth_bytes_per_s: int | None = None
    payload_fraction: float = PAYLOAD_FRACTION
    ps_transfer_bytes_per_s: int | None = None
    latency_ns: int | None = None
    link: str = "fifo"
    policy: str = "tf"
    order: tuple[str, ...] = ()
    steps: int = 10
    seeds: int = 3
    seed: int = 0
    ps_threads: int | None = None
    batch_size: int = 1
    emit_traces: tuple[int, ...] = ()
    calibrate: bool = False
    timing: str = "representative"

    def __post_init__(self) -> None:
        if not self.workers or min(self.workers) < 1:
            raise ConfigError(f"'workers' must be worker counts >= 1 (got {self.workers!r})")
        if self.batch_size < 1:
            raise ConfigError(f"'batch_size' must be >= 1 (got {self.batch_size})")
        if not 0 < self.payload_fraction <= 1:
            raise ConfigError(f"'payload_fraction' must be in (0, 1] (got {self.payload_fraction})")
        if self.seeds < 1:
            raise ConfigError(f"'seeds' must be >= 1 (got {self.seeds})")
        if self.emit_traces and min(self.emit_traces) < 1:
            raise ConfigError(f"'emit_traces' must be worker counts >= 1 (got {self.emit_traces!r})")

    def sim_config(self) -> SimConfig:
        """The simulation settings (n_workers is set per point)."""
        payload = None if self.bandwidth_bytes_per_s is None else max(
            1, round(self.bandwidth_bytes_per_s * self.payload_fraction))
        return SimConfig(steps=self.steps, seed=self.seed, pull_bandwidth_bytes_per_s=payload,
                         push_bandwidth_bytes_per_s=payload, latency_ns=self.latency_ns,
                         ps_transfer_bytes_per_s=self.ps_transfer_bytes_per_s,
                         link=self.link, policy=self.policy, order=self.order, ps_threads=self.ps_threads)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """What :func:`predict` computed and wrote."""

    model: StepModel
    curve: Curve
    bandwidth_estimated: bool
    files: tuple[pathlib.Path, ...]


def predict(trace: Trace | str | os.PathLike[str], config: PredictConfig,
            out_dir: str | os.PathLike[str]) -> Prediction:
    """Run the pipeline of the module docstring and write its files under ``out_dir`` (created if needed)."""
    tr = trace if isinstance(trace, Trace) else read_trace(trace)
    model = build_model(tr, timing=config.timing)
    sim = config.sim_config()
    sim.__post_init__()
    if config.bandwidth_bytes_per_s is None and config.calibrate:
        model = calibrate_link(model, config=sim)
    curve = scaling_curve(model, sim, config.workers, seeds=config.seeds)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "curve.csv", out / "curve.png"]
    write_bytes_atomic(files[0], curve_csv(curve, config.batch_size).encode())
    write_bytes_atomic(files[1], curve_png(curve, title=pathlib.Path(tr.source).name or tr.source))
    if config.emit_traces:
        (out / "traces").mkdir(exist_ok=True)
        for n in sorted(set(config.emit_traces)):
            path = out / "traces" / f"n{n}.json"
            write_synthetic_trace(model, dataclasses.replace(sim, n_workers=n), path)
            files.append(path)
    return Prediction(model=model, curve=curve, bandwidth_estimated=config.bandwidth_bytes_per_s is None,
                      files=tuple(files))


def curve_csv(curve: Curve, batch_size: int) -> str:
    """The curve as CSV (fixed decimals, so equal curves give equal bytes)."""
    lines = [",".join(CSV_COLUMNS)]
    for p in curve.points:
        lines.append(",".join([
            str(p.n_workers), f"{p.steps_per_s:.4f}", f"{p.steps_per_s * batch_size:.4f}",
            f"{p.steps_per_s_low:.4f}", f"{p.steps_per_s_high:.4f}", f"{p.pull_link_utilisation:.4f}",
            f"{p.push_link_utilisation:.4f}", f"{p.ps_cpu_utilisation:.4f}", f"{p.ps_transfer_utilisation:.4f}",
            p.bottleneck]))
    return "\n".join(lines) + "\n"


def curve_png(curve: Curve, *, title: str) -> bytes:
    """Throughput against N with the seed spread, the knee marked and the link bound drawn."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    ax = fig.add_subplot()
    ns = [p.n_workers for p in curve.points]
    ax.fill_between(ns, [p.steps_per_s_low for p in curve.points], [p.steps_per_s_high for p in curve.points],
                    alpha=0.25, label="range over seeds")
    ax.plot(ns, [p.steps_per_s for p in curve.points], marker="o", label="predicted steps/s")
    knee = next(p for p in curve.points if p.n_workers == curve.knee_n_workers)
    ax.axvline(knee.n_workers, color="grey", linestyle=":")
    ax.annotate(f"knee N={knee.n_workers}", (knee.n_workers, knee.steps_per_s), textcoords="offset points",
                xytext=(6, -14))
    top = max(p.steps_per_s_high for p in curve.points)
    if curve.link_bound_steps_per_s < 3 * top:
        ax.axhline(curve.link_bound_steps_per_s, color="red", linestyle="--",
                   label=f"link bound {curve.link_bound_steps_per_s:.3g} steps/s")
    ax.set_xlabel("workers (N)")
    ax.set_ylabel("steps per second (all workers)")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------- CLI


def add_predict_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``tracegen predict``."""
    parser.add_argument("trace", help="trace file or directory of traced steps (RunMetadata .pb/.pbtxt)")
    parser.add_argument("--workers", default="1-16", metavar="LIST",
                        help="numbers of workers to predict: a range 1-16, a list 1,2,4,8, or both (default 1-16)")
    parser.add_argument("--bandwidth", metavar="RATE",
                        help="PS link bandwidth per direction, e.g. 500Mbit/s, 1Gbit/s, 10G (bits/s) or 125MB/s "
                             "(bytes/s); default: estimated from the trace and printed")
    parser.add_argument("--payload-fraction", type=float, default=PAYLOAD_FRACTION, metavar="F",
                        help="share of a given --bandwidth that carries tensor bytes; the rest is protocol headers "
                             f"(default {PAYLOAD_FRACTION:.4f}: TCP/IPv4 with timestamps at MTU 1500)")
    parser.add_argument("--ps-transfer-rate", metavar="RATE",
                        help="bytes per second the PS sends and receives together while both directions are busy "
                             "(its CPU, or acknowledgements queued behind the other direction's data), e.g. 38MB/s "
                             "or the 'both' rate of tracegen testbed --transfer-bench; default: no limit")
    parser.add_argument("--latency", metavar="TIME",
                        help="fixed cost per transfer, e.g. 50us, 2ms; default: estimated from the trace")
    parser.add_argument("--link", choices=sorted(LINK_MODELS), default="fifo",
                        help="how a link direction shares bandwidth: fair = all transfers equally, fifo = one at "
                             "a time in arrival and policy order, conn = one at a time per worker, workers equally "
                             "(default fifo: what real 1- and 2-worker traces showed, see tracegen.link)")
    parser.add_argument("--policy", default="tf", metavar="tf|tictac|FILE",
                        help="transfer order: tf = random per step like TensorFlow's executor, tictac = by first "
                             "need, or a FILE of tensor names, one per line (default tf)")
    parser.add_argument("--steps", type=int, default=10, metavar="K",
                        help="steps each simulated worker runs (default 10; the first is warm-up)")
    parser.add_argument("--seeds", type=int, default=3, metavar="S",
                        help="simulations per worker count, seeds 0..S-1; low/high columns are their range "
                             "(default 3)")
    parser.add_argument("--ps-threads", type=int, metavar="T",
                        help="threads of the PS CPU running apply ops (default: as many as the trace ran at once)")
    parser.add_argument("--batch-size", type=int, metavar="B",
                        help="samples per step, for samples/s (default: meta.json beside the trace, else 1)")
    parser.add_argument("--emit-traces", default="", metavar="LIST",
                        help="also write synthetic Chrome traces DIR/traces/n{N}.json for these N, e.g. 1,4,16")
    parser.add_argument("--timing", choices=TIMINGS, default="representative",
                        help="op durations and gaps: representative = replay the traced step of median length "
                             "(default); median = each op's median over the traced steps")
    parser.add_argument("--calibrate", action="store_true",
                        help="scale the estimated link rates so that one worker reproduces the trace's step time "
                             "(a fit; off by default: the estimate alone reproduces the real traces here)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for curve.csv, curve.png, traces/")
    parser.add_argument("--force", action="store_true", help="overwrite output files that already exist")


def _batch_size(trace_path: str, given: int | None) -> int:
    if given is not None:
        return given
    path = pathlib.Path(trace_path)
    meta = (path if path.is_dir() else path.parent) / "meta.json"
    try:
        value = json.loads(meta.read_text(encoding="utf-8")).get("batch_size")
    except (OSError, ValueError, AttributeError):
        return 1
    return value if isinstance(value, int) and value >= 1 else 1


def refuse_existing(paths: Iterable[pathlib.Path], force: bool) -> None:
    """ConfigError naming the first of ``paths`` that exists, unless ``force``: outputs never silently
    replace what a user has."""
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise ConfigError(f"{existing[0]}: already exists; pass --force to overwrite")


def run_predict(args: argparse.Namespace) -> int:
    """Handle ``tracegen predict``: print the table, the knee and the link used; return the exit code."""
    out = pathlib.Path(args.out)
    emitted = parse_workers(args.emit_traces) if args.emit_traces else ()
    refuse_existing([out / "curve.csv", out / "curve.png", *(out / "traces" / f"n{n}.json" for n in emitted)],
                    args.force)
    policy, order = parse_policy(args.policy)
    config = PredictConfig(
        workers=parse_workers(args.workers),
        bandwidth_bytes_per_s=None if args.bandwidth is None else parse_rate(args.bandwidth),
        payload_fraction=args.payload_fraction,
        ps_transfer_bytes_per_s=None if args.ps_transfer_rate is None else parse_rate(
            args.ps_transfer_rate, what="ps-transfer-rate"),
        latency_ns=None if args.latency is None else parse_duration(args.latency),
        link=args.link, policy=policy, order=order, steps=args.steps, seeds=args.seeds, ps_threads=args.ps_threads,
        batch_size=_batch_size(args.trace, args.batch_size),
        emit_traces=parse_workers(args.emit_traces) if args.emit_traces else (), calibrate=args.calibrate,
        timing=args.timing)
    result = predict(args.trace, config, args.out)
    curve, model = result.curve, result.model
    print(f"model: {model.n_tasks} tasks from {model.n_traced_steps} traced steps of {model.source}; "
          f"measured step {format_duration(model.measured_step_ns)}")
    for note in model.notes:
        print(f"note: {note}")
    if result.bandwidth_estimated:
        how = f"estimated from the trace ({model.link.method})"
    else:
        assert config.bandwidth_bytes_per_s is not None  # noqa: S101 - not estimated means given
        how = (f"given as {format_rate(config.bandwidth_bytes_per_s)}, of which tensors get "
               f"{config.payload_fraction:.2%} (the rest is protocol headers)")
    print(f"link: pull {format_rate(curve.pull_bandwidth_bytes_per_s)}, push "
          f"{format_rate(curve.push_bandwidth_bytes_per_s)}, latency {format_duration(curve.latency_ns)}: {how}")
    print(f"{'N':>4} {'steps/s':>9} {'samples/s':>10} {'low':>8} {'high':>8} {'pull':>5} {'push':>5} {'ps':>5} "
          f"{'psnet':>5}  bottleneck")
    for p in curve.points:
        print(f"{p.n_workers:>4} {p.steps_per_s:>9.2f} {p.steps_per_s * config.batch_size:>10.1f} "
              f"{p.steps_per_s_low:>8.2f} {p.steps_per_s_high:>8.2f} {p.pull_link_utilisation:>5.0%} "
              f"{p.push_link_utilisation:>5.0%} {p.ps_cpu_utilisation:>5.0%} {p.ps_transfer_utilisation:>5.0%}  "
              f"{p.bottleneck}")
    print(f"knee: N={curve.knee_n_workers} (smallest N reaching 95% of the maximum); link bound "
          f"{curve.link_bound_steps_per_s:.2f} steps/s")
    print(f"wrote {', '.join(str(f) for f in result.files)}")
    return 0
