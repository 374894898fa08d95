"""``tracegen sweep``: arguments, the runner, the progress line and the closing summary."""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
from collections.abc import Callable
from typing import TextIO

from parsers.catalogue import read_catalogue
from parsers.errors import quoted
from parsers.linkprofile import read_link_profile
from parsers.sweepdata import refuse_other_files
from tracegen.cli_predict import add_shard_arguments, batch_note, shard_counts
from tracegen.config import MAX_BATCH_SIZE, MIN_PAYLOAD_FRACTION, MIN_STEPS, PAYLOAD_FRACTION
from tracegen.errors import ConfigError
from tracegen.estimate import task_events
from tracegen.inputs import batch_size_of
from tracegen.link import LINK_MODELS
from tracegen.outputs import OutputDir, option_path, refuse_non_folder
from tracegen.policy import parse_policy
from tracegen.processes import MAX_JOBS, available_cpus, processes_for
from tracegen.simulate import MAX_STEPS
from tracegen.sweep import (
    MAX_PART_POINTS,
    MIN_PART_POINTS,
    PART_POINTS,
    Runner,
    SweepProgress,
    build_inputs,
    run_seconds,
    sweep,
)
from tracegen.sweepgrid import (
    MAX_POINTS,
    MAX_WORKER_SPEED,
    MIN_WORKER_SPEED,
    SweepInputs,
    file_sha256,
)
from tracegen.sweeprunner import LocalRunner, RayRunner
from tracegen.units import counted, format_wait, parse_count, parse_number, parse_rate
from tracegen.workercounts import parse_workers

PROGRESS_EVERY_S = 2.0  # when stderr is not a terminal: one line at most this often
MAX_SWEEP_EVENTS = 1e14  # over a year on one core compiled (tracegen.cost): more is a typo, not a sweep
LARGE_GRID_POINTS = 100_000  # finding which points are left takes about 10 s a million here (each id a hash):
# a grid this large is said to be under way, where the progress line came only after that silence


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``tracegen sweep``."""
    parser.add_argument("trace", help="trace file or directory of traced steps (as for predict)")
    parser.add_argument("--workers", default="1-16", metavar="LIST",
                        help="numbers of workers: a range 1-64, a list 1,2,4,8, or both (default 1-16)")
    parser.add_argument("--bandwidth", action="append", default=[], metavar="RATES",
                        help="PS link line rates per direction, comma-separated or repeated, e.g. "
                             "100Mbit/s,1Gbit/s (bits/s) or 125MB/s (bytes/s); each is one link of the grid, "
                             "predict's point prediction for a rate alone")
    parser.add_argument("--link-profile", action="append", default=[], metavar="FILE",
                        help="a link profile from 'tracegen netbench run'; repeat for several links (default, "
                             "with no --bandwidth either: link-profile.json beside the trace, else the link the "
                             "trace shows)")
    parser.add_argument("--catalogue", metavar="CSV",
                        help="instead of links: every worker type x PS type of an instance catalogue (as for plan; "
                             "format: parsers/catalogue.py), each pair's PS link and speeds as plan has them; rows "
                             "get the types and the cluster's $/hour")
    add_shard_arguments(parser, "numbers of parameter servers, e.g. 1-4 or 1,2,4: each K places the parameters on "
                                "K shards, each a PS like the traced one with its own link (default: the PS as "
                                "traced)")
    parser.add_argument("--policy", default="tf", metavar="LIST",
                        help="transfer orders, comma-separated: tf, tictac, or order FILEs of tensor names "
                             "(default tf)")
    parser.add_argument("--seeds", type=parse_count, default=1, metavar="S",
                        help="seeds SEED..SEED+S-1; each seed is its own point, not averaged (default 1)")
    parser.add_argument("--seed", type=parse_count, default=0, metavar="SEED", help="first seed (default 0)")
    parser.add_argument("--worker-speed", default="1", metavar="LIST",
                        help="worker compute speeds relative to the traced worker, comma-separated, e.g. 0.5,1,2: "
                             "worker ops and their dispatch gaps divided by it, as plan does (default 1)")
    parser.add_argument("--steps", type=parse_count, default=10, metavar="K",
                        help="measured steps each simulated worker runs after its warm-up (default 10)")
    parser.add_argument("--warmup-steps", type=parse_count, default=2, metavar="W",
                        help="steps each simulated worker runs before the measurement window opens (at least 1; "
                             "default 2)")
    parser.add_argument("--link", choices=sorted(LINK_MODELS), default="conn",
                        help="which transfers queue behind each other in a link direction (as for predict; "
                             "default conn)")
    parser.add_argument("--batch-size", type=parse_count, metavar="B",
                        help="samples per step, for samples/s (default: meta.json beside the trace, else 1)")
    parser.add_argument("--payload-fraction", type=parse_number, default=PAYLOAD_FRACTION, metavar="F",
                        help=f"share of a --bandwidth that carries tensor bytes (default {PAYLOAD_FRACTION:.4f})")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the Parquet dataset directory: rows are added to it, and a rerun of the same command "
                             "computes only the points it does not hold yet")
    parser.add_argument("--part-points", type=parse_count, default=PART_POINTS, metavar="K",
                        help=f"rows per part file: one is written each K finished points (default {PART_POINTS})")
    parser.add_argument("--jobs", type=parse_count, default=available_cpus(), metavar="J",
                        help="local worker processes, when the points left of the grid would take more than a few "
                             "seconds on one core (the rows are the same whatever J), or the CPUs of a --ray local "
                             "instance (default: the CPUs this process may use)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run the points as tasks on the Ray cluster at ADDRESS (HOST:6379, an IPv6 address in "
                             "brackets, [2001:db8::5]:6379, or auto); "
                             "'local' starts a Ray instance of --jobs CPUs for this sweep (needs the sweep extra)")


def parse_speeds(text: str) -> tuple[float, ...]:
    """``0.5,1,2`` → (0.5, 1.0, 2.0): finite numbers > 0."""
    speeds = []
    if not all(p.strip() for p in text.split(",")):  # "cannot read '' in ''" named nothing
        raise ConfigError(f"'--worker-speed': {quoted(text)} has an empty entry; give speeds comma-separated, e.g. "
                          "0.5,1,2")
    for piece in text.split(","):
        try:
            speed = parse_number(piece)
        except argparse.ArgumentTypeError:
            raise ConfigError(f"'--worker-speed': cannot read {quoted(piece.strip())} in {quoted(text)}; write e.g. "
                              "0.5,1,2") from None
        if not MIN_WORKER_SPEED <= speed <= MAX_WORKER_SPEED:
            raise ConfigError(f"'--worker-speed': {quoted(piece.strip())} in {quoted(text)} must be from "
                              f"{MIN_WORKER_SPEED:g} to {MAX_WORKER_SPEED:g}")
        if speed in speeds:
            raise ConfigError(f"'--worker-speed': {quoted(piece.strip())} in {quoted(text)} is a speed given before; "
                              "give each once")
        speeds.append(speed)
    return tuple(speeds)


def parse_bandwidths(texts: list[str]) -> dict[str, int]:
    """Each ``--bandwidth`` value, split at commas: label (as written) → line rate in bytes/s."""
    rates: dict[str, int] = {}
    for text in texts:
        if not all(p.strip() for p in text.split(",")):
            raise ConfigError(f"'--bandwidth': {quoted(text)} has an empty entry; give rates comma-separated, e.g. "
                              "100Mbit/s,1Gbit/s")
        pieces = text.split(",")
        for lead, rest in itertools.pairwise(pieces):  # '1,000Mbit/s', '1,5Gbit/s': "'1' has no unit"
            number, more = lead.strip(), rest.strip()
            if number.isascii() and number.isdigit() and re.match(r"[0-9]", rest):
                meant = (f"{number}{more} (no thousands separator)" if re.match(r"[0-9]{3}(?![0-9])", rest)
                         else f"{number}.{more} (a decimal point)")
                raise ConfigError(f"'--bandwidth': {quoted(text)}: a comma separates rates, so {quoted(number)} is "
                                  f"one, with no unit; write {meant}, or give each rate its unit")
    for piece in (p.strip() for text in texts for p in text.split(",")):
        if piece in rates:
            raise ConfigError(f"'--bandwidth': {quoted(piece)} is given twice; give each link once")
        rates[piece] = parse_rate(piece, what="--bandwidth")
        same = next((label for label, rate in rates.items() if rate == rates[piece] and label != piece), None)
        if same is not None:
            raise ConfigError(f"'--bandwidth': {quoted(same)} and {quoted(piece)} are the same rate; give each link "
                              "once")
    return rates


def check_profiles(paths: list[str]) -> None:
    """Each ``--link-profile`` read (then again with the trace) and given once, by its bytes: refused by the
    option's name before any work."""
    seen: dict[str, str] = {}
    for path in paths:
        read_link_profile(path)  # first: the reader refuses what is not a profile file (a FIFO)
        digest = file_sha256(path)
        if digest in seen:
            raise ConfigError(f"'--link-profile': {seen[digest]!r} and {path!r} are the same profile; give each once")
        seen[digest] = path


def parse_policies(text: str) -> list[str]:
    """``--policy``'s comma-separated entries, each once, order files read (then again with the trace, to check
    their names against its transfers): refused by the option's name before any work."""
    policies = [p.strip() for p in text.split(",")]
    if not all(policies):
        raise ConfigError(f"'--policy': {quoted(text)} has an empty entry; give tf, tictac or order files, "
                          "comma-separated")
    for i, policy in enumerate(policies):
        if policy in policies[:i]:
            raise ConfigError(f"'--policy': {quoted(policy)} is given twice in {quoted(text)}; give each once")
        parse_policy(policy, "--policy")
    return policies


def grid_events(inputs: SweepInputs) -> float:
    """About how many events the whole grid simulates (:func:`tracegen.estimate.task_events`): each point's workers
    x its warm-up and measured steps."""
    grid = inputs.grid
    per_n = grid.n_points / len(grid.workers)  # points at each worker count
    return task_events(inputs.model, (grid.steps + grid.warmup_steps) * per_n * sum(grid.workers))


def grid_seconds(inputs: SweepInputs) -> float:
    """About how long the whole grid takes on one core: each point's run (:func:`tracegen.sweep.run_seconds`, every
    task of the step counted, as :func:`grid_events` counts them), priced at the engine its PS arrangement goes to
    (not the C core on several shards) and at its N (a task instance costs the C core more in a larger run)."""
    grid = inputs.grid
    per_n, price = grid.n_points / len(grid.workers) / len(grid.shards), run_seconds(inputs)
    return per_n * sum(price(n, s.n_shards) for s in grid.shards for n in grid.workers)


class ProgressLine:
    """Points done / to do, points per second and time left, on stderr: rewritten in place on a terminal, one
    line every :data:`PROGRESS_EVERY_S` seconds otherwise, none where there is no stderr (``sys.stderr`` is None
    in a process started with it closed). The time left is the time so far per estimated second done
    (:class:`~tracegen.sweep.SweepProgress`: each point priced at its N), times the estimated seconds left: not per
    point, as the grid's first points, its smallest N, are its cheapest. ``clock``: seconds, monotonic."""

    def __init__(self, stream: TextIO | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.tty = stream is not None and stream.isatty()
        self.clock = clock
        self.start = clock()
        self.last = -PROGRESS_EVERY_S

    def __call__(self, p: SweepProgress) -> None:
        if self.stream is None:
            return
        now = self.clock()
        final = p.done == p.todo
        if not (self.tty or final or now - self.last >= PROGRESS_EVERY_S):
            return
        self.last = now
        elapsed = now - self.start
        rate = p.done / elapsed if elapsed > 0 else 0.0
        done, todo = (p.seconds_done, p.seconds_todo) if p.seconds_todo else (p.done, p.todo)
        left = f"{format_wait(elapsed * (todo - done) / done)} left" if rate > 0 and done else "time left unknown"
        line = (f"sweep: {p.done}/{p.todo} points ({p.resumed} already done), {rate:.1f} points/s, {left}, "
                f"{counted(p.parts_written, 'part')} written")
        end = "\n" if final or not self.tty else ""
        print(("\r\x1b[K" if self.tty else "") + line, end=end, file=self.stream, flush=True)


def points_left_said(start: SweepProgress) -> str:
    """``the K points left `` where a sweep resumed (the grid line's words before where they run), else ''."""
    return f"the {counted(start.todo, 'point')} left " if start.resumed else ""


def local_runner(start: SweepProgress, jobs: int) -> tuple[LocalRunner, str]:
    """The local runner for the points a sweep has left (``start``: its first progress,
    :data:`tracegen.sweep.RunnerFor`) and where the grid line says they run: ``jobs`` processes where those points
    alone would take long enough on one core to gain from them, as predict's curves do
    (:func:`tracegen.processes.processes_for`), else this process. A
    resumed grid's few points left are not worth starting processes for, however large the grid."""
    left = points_left_said(start)
    if start.todo == 0:
        return LocalRunner(1), "every point already done"
    n = processes_for(start.seconds_todo, jobs)
    if n > 1:
        return LocalRunner(n), f"{left}on {n} local processes"
    return LocalRunner(1), f"{left}in this process" + (f" (too short to gain from {jobs} local processes)"
                                                       if jobs > 1 else "")


def _check_options(args: argparse.Namespace) -> None:
    """The options read as numbers, by their names, before the trace is read or anything is said of the grid."""
    if not MIN_STEPS <= args.steps <= MAX_STEPS:  # fewer read fast: the window's edges cut steps whose pulls are done
        raise ConfigError(f"'--steps' must be from {MIN_STEPS} to {MAX_STEPS} (got {args.steps}), as for predict")
    if not 1 <= args.warmup_steps <= MAX_STEPS:  # utilisations are measured from a warm-up step's end
        raise ConfigError(f"'--warmup-steps' must be from 1 to {MAX_STEPS} (got {args.warmup_steps})")
    if not MIN_PART_POINTS <= args.part_points <= MAX_PART_POINTS:
        raise ConfigError(f"'--part-points' must be from {MIN_PART_POINTS} to 10^7 (got {args.part_points})")
    if args.seeds < 1:  # else a grid of no seeds, said as "the grid needs at least one value (got none)"
        raise ConfigError(f"'--seeds' must be at least 1 (got {args.seeds})")
    if args.seeds > MAX_POINTS:  # else made into a tuple first: a billion seeds took 24 GB, until the kernel killed it
        raise ConfigError(f"'--seeds' must be at most {MAX_POINTS}, the most points a grid may have (got {args.seeds})")
    if not 1 <= args.jobs <= MAX_JOBS:
        raise ConfigError(f"'--jobs' must be from 1 to {MAX_JOBS} (got {args.jobs})")
    if args.batch_size is not None and not 1 <= args.batch_size <= MAX_BATCH_SIZE:
        raise ConfigError(f"'--batch-size' must be from 1 to 10^9 (got {args.batch_size})")
    if not MIN_PAYLOAD_FRACTION <= args.payload_fraction <= 1:
        raise ConfigError(f"'--payload-fraction' must be from {MIN_PAYLOAD_FRACTION} to 1 "
                          f"(got {args.payload_fraction:g})")
    if args.ray is not None and not args.ray.strip():
        raise ConfigError(f"'--ray' must be a cluster address such as HOST:6379, auto or local (got {args.ray!r})")
    refuse_non_folder(option_path(args.out))


def run_sweep(args: argparse.Namespace) -> int:
    """Handle ``tracegen sweep``: build the grid, run it, print the summary; return the exit code."""
    _check_options(args)
    policies = parse_policies(args.policy)
    if args.payload_fraction != PAYLOAD_FRACTION and not args.bandwidth and args.catalogue is None:  # else unused
        raise ConfigError(f"'--payload-fraction' {args.payload_fraction:g} is the share of a --bandwidth (or of a "
                          "catalogue's link_bits_per_s) that carries tensor bytes, and neither was given: a link "
                          "profile or the trace's link is measured payload")
    check_profiles(args.link_profile)
    # the address's form checked here; whether a head answers, once points are found left to run (none left: no Ray)
    ray = RayRunner(args.ray, args.jobs) if args.ray is not None else None
    workers, bandwidths = parse_workers(args.workers, "--workers"), parse_bandwidths(args.bandwidth)
    speeds, ps_shards = parse_speeds(args.worker_speed), shard_counts(args)
    catalogue = read_catalogue(args.catalogue) if args.catalogue is not None else None
    # --out opened first (locked, checked, nothing in it a reader would take for a part): refused before the trace
    # is read or anything is said; a run refused here, or failing below, leaves the folder as it was
    with OutputDir(args.out, []) as target:
        refuse_other_files(target.root)
        inputs = build_inputs(args.trace, workers=workers, bandwidths=bandwidths, link_profiles=args.link_profile,
                              policies=policies, seeds=range(args.seed, args.seed + args.seeds), worker_speeds=speeds,
                              steps=args.steps, warmup_steps=args.warmup_steps, link_model=args.link,
                              batch_size=batch_size_of(args.trace, args.batch_size),
                              payload_fraction=args.payload_fraction, ps_shards=ps_shards, placement=args.placement,
                              catalogue=catalogue, policy_option="--policy")
        for note in inputs.notes:
            print(f"warning: {note}", file=sys.stderr)
        if (batch := batch_note(args.trace, args.batch_size)) is not None:  # the rows' samples_per_s
            print(batch)
        grid = inputs.grid
        events, seconds = grid_events(inputs), grid_seconds(inputs)
        if events > MAX_SWEEP_EVENTS:  # a typo (--steps 1000000), not a job: refused before any point runs
            raise ConfigError(f"this grid would simulate about {events:.2g} events, "
                              f"{format_wait(seconds)} on one core (more than the "
                              f"{MAX_SWEEP_EVENTS:.0e} allowed); ask for fewer or smaller --workers, fewer --steps or "
                              "split the grid")

        def runner_for(start: SweepProgress) -> Runner:
            """The runner for the points left, said with the grid once they are known (sweep finds them)."""
            runner: Runner
            if ray is not None and start.todo:  # Ray whenever asked, however few the points left
                ray.check_head()  # before the grid line: a head that does not answer is one line, nothing said
                runner, where = ray, f"{points_left_said(start)}on Ray at {args.ray}"
            else:  # with no point left, said so, and Ray never asked: "on Ray at X" promised work that never ran
                runner, where = local_runner(start, args.jobs)
                if ray is not None:
                    where += f": nothing left to run on Ray at {args.ray}"
            print(f"grid: {counted(len(grid.workers), 'worker count')} x {counted(len(grid.links), 'link')} x "
                  f"{counted(len(grid.shards), 'PS shard count')} x "
                  f"{counted(len(grid.policies), 'policy', 'policies')} x "
                  f"{counted(len(grid.worker_speeds), 'worker speed')} x {counted(len(grid.seeds), 'seed')} = "
                  f"{counted(grid.n_points, 'point')}, {counted(grid.steps, 'step')} each; {where}; about "
                  f"{events:.2g} events, roughly "
                  f"{format_wait(max(seconds, 1))} on one core for the whole grid", flush=True)
            return runner

        if grid.n_points >= LARGE_GRID_POINTS:
            sys.stdout.flush()  # what was said before first, where both go to one terminal or file
            print(f"sweep: finding the points not yet in {args.out}: the id of each of {grid.n_points} points, and "
                  "the ids in the parts there", file=sys.stderr, flush=True)
        summary = sweep(inputs, target, runner_for, part_points=args.part_points, progress=ProgressLine(sys.stderr))
    were = "was" if summary.resumed == 1 else "were"
    print(f"computed {counted(summary.computed, 'point')}, {summary.resumed} {were} already in {args.out}; "
          f"{counted(len(summary.parts), 'part')} written")
    literal = str(args.out).replace("'", "''")  # a quote in the folder's name, as SQL writes it in a string
    query = f"SELECT * FROM read_parquet('{literal}/*.parquet') ORDER BY point_id"  # noqa: S608 - printed, not run
    try:
        args.out.encode("utf-8")
    except UnicodeEncodeError:  # pyarrow (and so pandas) takes paths as UTF-8 only: the hint would fail
        print(f"read it with pandas.read_parquet or in DuckDB once the folder has a UTF-8 name: both take paths "
              f"as UTF-8 only, and {os.fsencode(args.out)!r} is not")
        return 0
    print(f"read it with pandas.read_parquet({args.out!r}) or in DuckDB: {query}")
    return 0
