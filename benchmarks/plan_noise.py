"""How far ``tracegen plan``'s coarse points lie from ``predict``'s: every point plan simulates, simulated again as
``predict`` would.

``plan`` simulates each point with :class:`tracegen.plan.PlanConfig`'s defaults: one seed (0), 16 measured steps
(``STEP_BUDGET``) over all workers together, at least 3 (``MIN_STEPS``) per worker, after 1 (``WARMUP_STEPS``)
warm-up step each. ``predict`` simulates each with :class:`tracegen.config.PredictConfig`'s defaults: seeds 0, 1 and
2, 30 measured steps per worker after 3 warm-up steps each, their rates averaged. Everything else is the same on
both sides, built the way :func:`tracegen.plan.plan` builds it: the traced hosts as ``predict`` prepares them
(:func:`tracegen.plan.traced_hosts`, with the trace's ``link-profile.json`` and ``single-worker.json``), moved onto
the pair's instances (:func:`tracegen.instance.on_instances`, :func:`tracegen.instance.instance_links`), the PS link
``links["mid"]``, the traced job's PS tasks. Plan's own rate of every point is recomputed here from
:meth:`~tracegen.plan.PlanConfig.sim_config` and checked equal to the plan's option, so that the two sides differ
in the coarseness alone.

What it covers, exactly:
- traces: every trace of the validation campaign (``data/<campaign>/campaign.csv``; ``data/validation/dev/*`` and
  ``data/validation/test/*``, twelve) that has a ``link-profile.json`` beside it (all twelve do; one without is
  named and left out);
- pairs: every worker type x PS type of the catalogue (default ``data/catalogue/example.csv``: 12 pairs), counted
  once where plan simulates two pairs once (a spot type at another price alone: equal speeds and links; the
  example's c5.2xlarge-spot workers are c5.2xlarge's), so 9 per trace;
- N: every N that ``plan`` with its defaults simulated for that pair (``--workers 1-32``, up to the N where the
  pair's rate stalled), not a chosen few; each pair's best N (its fewest dollars per sample) and the plan's
  chosen option are among them and are also summed up on their own;
- not covered: the band's two ends (half- and full-duplex, simulated at one N, ranking nothing), ``--ps-shards``,
  ``--seeds`` or ``--step-budget`` other than the defaults, ``--target-rate`` (the choice is the cheapest per
  sample), catalogue types with their own link profile (the example has none).

The difference of a point is plan's steps/s / predict's - 1 (dollars per sample differ by about as much, the
other way). It prints one row per trace: its points, their median absolute difference and the largest (signed, with
its pair and N); the same of the pairs' best N; the chosen option's difference; how many options ``plan`` names
within its noise of the chosen one (:func:`tracegen.plan.within_noise` at :data:`tracegen.plan.NOISE_MARGIN`) and
the largest difference among them; and whether the option cheapest per sample by predict's rates (every pair
priced) is plan's choice, one it named, or neither. Then the summary figure over all traces: for every point, the
pairs' best N, the chosen options and the options named within noise, the median, 90th percentile and largest
absolute difference, and the count of traces where predict's cheapest was plan's choice, named, or neither.
:data:`tracegen.plan.NOISE_MARGIN` is the largest over every point, rounded up to a whole per cent.

Run: ``python benchmarks/plan_noise.py [CATALOGUE] [CAMPAIGN]`` (about ten minutes on two cores, 2026-12-07; the
pairs run in as many processes as this process may use).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics
import sys
from collections.abc import Callable, Sequence

import pandas as pd

from parsers.catalogue import Catalogue, read_catalogue
from parsers.read import read_trace
from tracegen.config import PredictConfig
from tracegen.inputs import load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.instance import instance_links, on_instances
from tracegen.link import LinkSpec
from tracegen.metrics import steps_per_s
from tracegen.model import StepModel
from tracegen.plan import NOISE_MARGIN, PlanConfig, plan, within_noise
from tracegen.processes import Processes, available_cpus
from tracegen.selfreplay import step_model
from tracegen.simulate import simulate

ROOT = pathlib.Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "data" / "catalogue" / "example.csv"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One option of a plan: its steps/s as plan simulates it and as predict would; ``simulation``: which of the
    trace's distinct simulations it is (pairs of equal speeds and links share one, :func:`distinct`)."""

    trace: str
    simulation: int
    worker: str
    ps: str
    n_workers: int
    plan_steps_per_s: float
    predict_steps_per_s: float
    best_of_pair: bool
    chosen: bool
    within_noise: bool  # named beside the answer (tracegen.plan.within_noise, at its NOISE_MARGIN)
    usd_per_hour: float  # the cluster's

    @property
    def difference(self) -> float:
        """plan's steps/s / predict's - 1."""
        return self.plan_steps_per_s / self.predict_steps_per_s - 1


def distinct(points: Sequence[Point]) -> list[Point]:
    """``points`` with each simulated point once: a pair simulated for another (equal speeds and links) repeats
    that pair's rates, and would count them twice."""
    seen: set[tuple[str, int, int]] = set()
    kept = []
    for p in points:
        if (p.trace, p.simulation, p.n_workers) not in seen:
            seen.add((p.trace, p.simulation, p.n_workers))
            kept.append(p)
    return kept


Job = tuple[StepModel, LinkSpec, tuple[int, ...], tuple[int, ...]]


def rates(job: Job) -> list[tuple[float, float]]:
    """(plan's, predict's) steps/s at each N of the job, on the same scaled model, link and PS tasks."""
    model, link, of_task, ns = job
    coarse, full = PlanConfig(), PredictConfig()
    out = []
    for n in ns:
        planned = steps_per_s(simulate(model, coarse.sim_config(n, link, 0, of_task)))
        runs = [simulate(model, dataclasses.replace(full.sim_config(link), n_workers=n, seed=full.seed + s,
                                                    ps_shard_of_task=of_task))
                for s in range(full.seeds)]
        out.append((planned, statistics.fmean(steps_per_s(r) for r in runs)))
    return out


def trace_points(trace: pathlib.Path, catalogue: Catalogue, jobs: int = 1, name: str = "") -> list[Point]:
    """Every option ``plan`` gives ``trace`` with ``catalogue`` and its defaults (module docstring), each pair of
    equal speeds and links once, with predict's rate beside plan's."""
    model = step_model(read_trace(trace))  # as tracegen plan builds it
    profile, single = load_profile(profile_beside(trace)), load_single_worker(single_worker_beside(trace))
    result = plan(model, catalogue, PlanConfig(), link_profile=profile, single_worker=single)
    todo: dict[tuple[object, ...], Job] = {}
    keyed = []
    for pair in result.pairs:
        links = instance_links(result.model, result.traced_link, worker=pair.worker, ps=pair.ps,
                               measured_rpc=result.measured_rpc)
        speeds = (pair.worker.compute_speed, pair.ps.compute_speed)
        key = (*speeds, tuple(sorted(links.items())))
        if key not in todo:
            scaled = on_instances(result.model, result.traced_link, worker_speed=speeds[0], ps_speed=speeds[1])
            todo[key] = (scaled, links["mid"], result.model.traced_ps_task, tuple(o.n_workers for o in pair.options))
        keyed.append((pair, key))
    keys = list(todo)
    if jobs > 1 and len(keys) > 1:
        with Processes(rates, min(jobs, len(keys))) as processes:
            done = dict(zip(keys, processes.map([todo[k] for k in keys]), strict=True))
    else:
        done = {k: rates(todo[k]) for k in keys}
    near = {id(o) for o in within_noise(result)}
    points = []
    for pair, key in keyed:
        best = pair.best
        for option, (planned, predicted) in zip(pair.options, done[key], strict=True):
            if planned != option.steps_per_s:  # the two sides' inputs are not plan's: the comparison would lie
                raise RuntimeError(f"{trace}: {option.worker.name} + {option.ps.name} at N={option.n_workers}: "
                                   f"plan gave {option.steps_per_s} steps/s, its sim_config here {planned}")
            points.append(Point(trace=name or trace.parent.name, simulation=keys.index(key), worker=pair.worker.name,
                                ps=pair.ps.name, n_workers=option.n_workers, plan_steps_per_s=planned,
                                predict_steps_per_s=predicted, best_of_pair=option is best,
                                chosen=option is result.chosen, within_noise=id(option) in near,
                                usd_per_hour=option.usd_per_hour))
    return points


def campaign_traces(campaign: str = "validation") -> tuple[list[pathlib.Path], list[pathlib.Path]]:
    """The campaign's traces with a link profile beside them, and those without (module docstring)."""
    table = pd.read_csv(ROOT / "data" / campaign / "campaign.csv")
    traces = [ROOT / "data" / campaign / s / n / "trace" for s, n in zip(table["set"], table["name"], strict=True)]
    traces = sorted((t for t in traces if t.is_dir()), key=lambda t: (t.parent.parent.name, t.parent.name))
    return ([t for t in traces if (t / "link-profile.json").is_file()],
            [t for t in traces if not (t / "link-profile.json").is_file()])


SUBSETS: tuple[tuple[str, Callable[[Point], bool]], ...] = (
    ("every point", lambda _p: True),
    ("the pairs' best N", lambda p: p.best_of_pair),
    ("the chosen options", lambda p: p.chosen),
    ("the options plan names within its noise", lambda p: p.within_noise),
)


def subset(points: Sequence[Point], label: str) -> list[Point]:
    """The distinct points (:func:`distinct`) of the subset ``label`` of :data:`SUBSETS`."""
    keep = dict(SUBSETS)[label]
    return distinct([p for p in points if keep(p)])


def figures(points: Sequence[Point]) -> tuple[float, float, float]:
    """The median, the 90th percentile (inclusive) and the largest absolute difference of ``points`` (fractions;
    NaN for none)."""
    sizes = [abs(p.difference) for p in points]
    if not sizes:
        return math.nan, math.nan, math.nan
    tail = statistics.quantiles(sizes, n=10, method="inclusive")[-1] if len(sizes) > 1 else sizes[0]
    return statistics.median(sizes), tail, max(sizes)


def _where(points: Sequence[Point]) -> str:
    if not points:
        return "-"
    p = max(points, key=lambda p: abs(p.difference))
    return f"{p.difference:+.1%} ({p.worker} + {p.ps}, N={p.n_workers})"


def predicts_cheapest(points: Sequence[Point]) -> Point:
    """Of one trace's options (every pair's, priced), the cheapest per sample by predict's rates, ties broken as
    :func:`tracegen.plan.cheapest` breaks them (the batch is the same for all, so steps stand for samples)."""
    return min(points, key=lambda p: (p.usd_per_hour / p.predict_steps_per_s, p.usd_per_hour, p.n_workers))


def verdict(points: Sequence[Point]) -> str:
    """Whether predict's cheapest (:func:`predicts_cheapest`) is plan's choice, one plan named within its noise of
    it, or neither (then which)."""
    p = predicts_cheapest(points)
    return ("the chosen" if p.chosen else "named" if p.within_noise
            else f"NOT named: {p.worker} + {p.ps}, N={p.n_workers}")


def row(name: str, points: Sequence[Point]) -> str:
    """One trace's row of :data:`HEADER`: its distinct points, their median absolute difference and the largest
    (signed, and where); the same of the pairs' best N; the chosen option's difference; and of the options plan
    names within its noise, how many and the largest."""
    every, best = subset(points, "every point"), subset(points, "the pairs' best N")
    chosen, near = subset(points, "the chosen options"), subset(points, "the options plan names within its noise")
    cells = [name, str(len(every)), f"{figures(every)[0]:.1%}", _where(every), str(len(best)),
             f"{figures(best)[0]:.1%}", _where(best), _where(chosen), str(len(near)), _where(near), verdict(points)]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| trace | points | median | largest | best N | median | largest | chosen | within noise | largest | "
          "predict's cheapest |\n|---|---|---|---|---|---|---|---|---|---|---|")


def summary(points: Sequence[Point], n_traces: int, catalogue: str) -> str:
    """The figure the table sums up to: per subset of :data:`SUBSETS`, over every trace, its distinct points and
    their median, 90th percentile and largest absolute difference; and in how many traces predict's cheapest was
    plan's choice, named within its noise, or neither (:func:`verdict`)."""
    verdicts = [verdict([p for p in points if p.trace == t]) for t in dict.fromkeys(p.trace for p in points)]
    parts = []
    for label, _ in SUBSETS:
        some = subset(points, label)
        median, tail, largest = figures(some)
        parts.append(f"{label} ({len(some)}): median {median:.1%}, 90th percentile {tail:.1%}, largest {largest:.1%}")
    return (f"plan / predict - 1 of steps/s, {n_traces} traces x {catalogue}, NOISE_MARGIN {NOISE_MARGIN:.0%}: "
            + "; ".join(parts) + f". Predict's cheapest option was plan's choice in {verdicts.count('the chosen')} "
            f"of {len(verdicts)} traces, one plan named within its noise in {verdicts.count('named')}, neither in "
            f"{sum(v.startswith('NOT') for v in verdicts)}")


def main(argv: list[str]) -> int:
    """Print the table and the summary (module docstring)."""
    catalogue = read_catalogue(argv[0] if argv else CATALOGUE)
    traces, left_out = campaign_traces(argv[1] if len(argv) > 1 else "validation")
    for t in left_out:
        print(f"left out, no link-profile.json: {t.relative_to(ROOT)}")
    jobs = available_cpus()
    every: list[Point] = []
    print(HEADER)
    for trace in traces:
        name = f"{trace.parent.parent.name}/{trace.parent.name}"
        points = trace_points(trace, catalogue, jobs, name)
        every += points
        print(row(name, points), flush=True)
    source = pathlib.Path(catalogue.source)
    print("\n" + summary(every, len(traces), str(source.relative_to(ROOT) if source.is_relative_to(ROOT) else source)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
