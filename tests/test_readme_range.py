"""README's "What no measurement here covers": the quick start's curve past N = 5 against the campaign's measured
curve of the same configuration. The paragraph's figures are read from the README and recomputed: the measured
range from ``measured.csv``, the simulated ones by the quick start's own prediction (its defaults, N = 1..8)."""

from __future__ import annotations

import csv
import pathlib
import re

from parsers.read import read_trace
from tracegen.config import PredictConfig
from tracegen.curve import scaling_curve
from tracegen.inputs import load_profile, load_single_worker
from tracegen.model import build_model
from tracegen.preparation import prepared

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03"


def found(pattern: str, text: str) -> tuple[str, ...]:
    match = re.search(pattern, text)
    assert match is not None, f"README no longer says {pattern!r}"
    return match.groups()


def paragraph() -> str:
    text = " ".join((ROOT / "README.md").read_text().split())
    return text.split("**What no measurement here covers.**", 1)[1].split("**", 1)[0]


def test_the_measured_range_past_n1_is_the_campaigns() -> None:
    low, high = map(float, found(r"stopped at ([\d.]+)\u2013([\d.]+) steps/s from N = 2 to 5", paragraph()))
    with (CONFIG / "measured.csv").open() as f:
        rates = [float(r["steps_per_s"]) for r in csv.DictReader(f) if 2 <= int(r["n_workers"]) <= 5]
    assert (low, high) == (round(min(rates), 1), round(max(rates), 1))


def test_the_simulated_climb_and_plateau_are_the_quick_starts() -> None:
    text = paragraph()
    plateau = float(found(r"quick start's ([\d.]+) steps/s \"simulated at N=\d+\"", text)[0])
    at5, at8 = map(float, found(r"\(([\d.]+) at N = 5, ([\d.]+) at N = 8\)", text))
    trace = CONFIG / "trace"
    config = PredictConfig(workers=tuple(range(1, 9)), link_profile=load_profile(trace / "link-profile.json"),
                           single_worker=load_single_worker(trace / "single-worker.json"))
    prep = prepared(build_model(read_trace(str(trace))), config)
    curve = scaling_curve(prep.model, config.sim_config(prep.links["mid"]), config.workers, seeds=config.seeds,
                          stop_at_plateau=True)
    rates = {p.n_workers: p.steps_per_s for p in curve.points}
    assert (at5, at8) == (round(rates[5], 1), round(rates[8], 1))
    assert plateau == round(curve.plateau_steps_per_s, 1)
    measured_high = float(found(r"\u2013([\d.]+) steps/s from N = 2 to 5", text)[0])
    assert rates[5] > measured_high  # "while the simulator still climbed"
