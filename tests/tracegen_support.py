"""Helpers shared by the tracegen tests (``pythonpath`` in pyproject.toml puts ``tests/`` on the path): the small
hand-made step whose one variable two workers share, the inputs ``tracegen plan`` is tested on (the development
mlp trace, its link profile and single-worker measurement, a three-instance catalogue), a quick ``tracegen
predict`` for the command-line tests, ``predict``'s arguments parsed and its curve.csv read back for the
``test_predict*.py`` files, and what the three ``tracegen sweep`` test files share."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import pathlib
import re

from parsers.catalogue import Catalogue, Instance
from parsers.linkprofile import read_link_profile
from parsers.singleworker import read_single_worker
from tracegen.cli import main
from tracegen.cli_predict import add_predict_arguments
from tracegen.curve import Curve, CurvePoint
from tracegen.model import StepModel, StepTiming, TaskKind
from tracegen.plan import Option, Pair, Plan, PlanConfig, cheapest, fastest, plan
from tracegen.plateau import knee
from tracegen.wire import LinkEstimate

ROOT = pathlib.Path(__file__).resolve().parents[1]
MS = 1_000_000


def shared_variable_model() -> StepModel:
    """A variable node, its read, a 1 MB pull, 1 ms of compute, a 1 MB push and the apply that updates it."""
    names = ("ps:w", "ps:w/read", "pull w", "matmul", "push grad", "apply w", "ps:global_step", "step+1")
    kinds = (TaskKind.PS_OP, TaskKind.PS_OP, TaskKind.PULL, TaskKind.COMPUTE, TaskKind.PUSH, TaskKind.APPLY,
             TaskKind.PS_OP, TaskKind.APPLY)
    preds = ((), (0,), (1,), (2,), (3,), (4, 0), (), (6,))
    return StepModel(
        names=names, kinds=kinds, size_bytes=(0, 0, 1_000_000, 0, 1_000_000, 0, 0, 0), data_preds=preds,
        control_preds=((),) * 8, rank=tuple(range(8)), first_need_ns=(0,) * 8,
        timings=(StepTiming(dur_ns=(0, 0, 0, MS, 0, MS // 10, 0, 0), delay_ns=(0,) * 8, step_ns=0),),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=10**9, push_bandwidth_bytes_per_s=10**9, latency_ns=0,
                          method="given"))


PLAN_TRACE = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
PLAN_PROFILE = read_link_profile(PLAN_TRACE / "link-profile.json")
PLAN_SINGLE = read_single_worker(PLAN_TRACE / "single-worker.json")
PLAN_CONFIG = PlanConfig(workers=(1, 2, 3, 4, 6), batch_size=32, step_budget=8)


def inst(name: str, role: str, usd: float, speed: float, bits: int = 1_000_000_000,
                  **kw: object) -> Instance:
    """An instance of 4 cores: ``usd`` an hour, ``speed`` times the traced node, a link of ``bits`` per second."""
    return Instance(name=name, role=role, usd_per_hour=usd, compute_speed=speed, cores=4.0, link_bits_per_s=bits,
                    **kw)  # type: ignore[arg-type]


PLAN_CATALOGUE = Catalogue(instances=(inst("w1", "worker", 0.2, 1.0), inst("w2", "both", 0.5, 2.0),
                                      inst("ps", "ps", 1.0, 1.0, 200_000_000)))


def run_plan(model: StepModel, catalogue: Catalogue = PLAN_CATALOGUE, config: PlanConfig = PLAN_CONFIG) -> Plan:
    """``plan`` of ``model`` on ``catalogue`` with the plan trace's link profile and single-worker measurement."""
    return plan(model, catalogue, config, link_profile=PLAN_PROFILE, single_worker=PLAN_SINGLE)


def hand_option(worker: str, samples_per_s: float, *, n: int = 1, usd: float = 1.0, ps_usd: float = 1.0) -> Option:
    """A hand-made option: ``n`` workers of a type named ``worker`` at ``usd`` an hour and a PS named ``ps`` at
    ``ps_usd``, giving ``samples_per_s`` (a batch of one)."""
    return Option(worker=inst(worker, "worker", usd, 1.0), ps=inst("ps", "ps", ps_usd, 1.0), n_workers=n,
                  steps_per_s=samples_per_s, samples_per_s=samples_per_s, bottleneck="workers")


def hand_plan(base: Plan, options: list[Option], **config: object) -> Plan:
    """``base`` (for its model and links) with ``options`` instead of its own, a pair per worker type in their
    order, its config changed by ``config``, and the chosen and fastest picked from them as :func:`plan` picks."""
    by_worker: dict[str, list[Option]] = {}
    for o in options:
        by_worker.setdefault(o.worker.name, []).append(o)
    pairs = tuple(Pair(worker=os[0].worker, ps=os[0].ps, options=tuple(os),
                       plateau_samples_per_s=max(o.samples_per_s for o in os),
                       saturation_workers=max(os, key=lambda o: o.samples_per_s).n_workers, beyond_workers=None,
                       knee_n_workers=None, band_samples_per_s=None, link_description="hand-made")
                  for os in by_worker.values())
    cfg = dataclasses.replace(base.config, **config)  # type: ignore[arg-type]
    return dataclasses.replace(base, config=cfg, pairs=pairs, chosen=cheapest(options, cfg.target_samples_per_s),
                               fastest=fastest(options))


def quick_predict(out: pathlib.Path, trace: pathlib.Path, *more: str) -> int:
    """``tracegen predict`` of ``trace`` into ``out`` for N = 1 and 2, 3 steps, one seed, in one process."""
    return main(["predict", str(trace), "--workers", "1-2", "--steps", "3", "--seeds", "1", "--jobs", "1",
                 "--out", str(out), *more])


def parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed as ``tracegen predict``'s arguments, for ``run_predict``."""
    parser = argparse.ArgumentParser(prog="tracegen predict")
    add_predict_arguments(parser)
    return parser.parse_args(argv)


def rows(path: pathlib.Path) -> list[dict[str, str]]:
    """The rows of a CSV file such as curve.csv, each a dict keyed by the header's columns."""
    with path.open() as fh:
        return list(csv.DictReader(fh))


SWEEP_TRACE = PLAN_TRACE  # tracegen sweep's tests sweep the same development mlp trace
SWEEP_SMALL = ["--steps", "4", "--warmup-steps", "1"]  # sweep's options for a quick grid
SWEEP_COMPUTED = re.compile(r"computed (\d+) points?, (\d+) (?:was|were) already in")  # sweep's closing summary


def curve_of(ns: tuple[int, ...], rates: tuple[float, ...], *, reached: bool = True) -> Curve:
    """A curve of the rates ``rates`` at ``ns`` (nothing busy, no bounds), its plateau their best and its knee
    :func:`tracegen.plateau.knee`'s, for the tests of how a knee is said and drawn."""
    points = tuple(CurvePoint(n_workers=n, steps_per_s=r, steps_per_s_low=r, steps_per_s_high=r,
                              pull_link_utilisation=0.0, push_link_utilisation=0.0, ps_cpu_utilisation=0.0,
                              bottleneck="workers") for n, r in zip(ns, rates, strict=True))
    return Curve(points=points, plateau_steps_per_s=max(rates), saturation_workers=ns[-1],
                 knee_n_workers=knee(points, max(rates)), link_bound_steps_per_s=math.inf,
                 ps_bound_steps_per_s=math.inf, link_description="x", n_events=0, plateau_reached=reached)
