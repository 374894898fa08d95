"""The README's MAPE over N = 2..5 (``benchmarks/accuracy_beyond_n1.py``): each figure it quotes is the benchmark's,
formatted as the benchmark prints it, for the main campaign and the PS-shards campaign; and the benchmark's all-N
figure is the set's MAPE the stored scores give (to their 4 decimals), so both columns count the same errors."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from types import ModuleType

import pandas as pd
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def figures(benchmark_module: Callable[[str], ModuleType]) -> Callable[[str, str, str], str]:
    """(campaign, predictor, column) -> 'dev / test' figures as the benchmark prints them."""
    bench = benchmark_module("accuracy_beyond_n1")
    tables = {c: bench.mape(c).set_index(["predictor", "set"]) for c in bench.CAMPAIGNS}

    def quoted(campaign: str, predictor: str, column: str = "beyond_n1") -> str:
        return " / ".join(bench.percent(tables[campaign].loc[(predictor, s), column]) for s in ("dev", "test"))

    return quoted


def test_the_readme_quotes_the_benchmarks_figures(figures: Callable[..., str]) -> None:
    readme = words((ROOT / "README.md").read_text())
    sim, bw, roof, gaps, cycle = (figures("validation", p) for p in (
        "simulator", "simulator_bw", "roofline", "no_overlap", "roofline_cycle"))
    dev, test = sim.split(" / ")
    assert (f"MAPE over N = 2..5: simulator {dev} % dev / {test} % test with a profile, {bw} % with the bandwidth "
            f"only; roofline {roof} %, `no_overlap` {gaps} %, `roofline_cycle` {cycle} %.") in readme
    dev, test = figures("shards", "simulator").split(" / ")
    assert f'"How many PS"): simulator {dev} % dev / {test} % test (' in readme
    assert (f"), roofline {figures('shards', 'roofline')} %, `roofline_cycle` {figures('shards', 'roofline_cycle')}"
            " %. Where the simulator loses") in readme


@pytest.mark.parametrize("campaign", ["validation", "shards"])
def test_the_all_n_figures_are_the_stored_scores(campaign: str, benchmark_module: Callable[[str], ModuleType]) -> None:
    bench = benchmark_module("accuracy_beyond_n1")
    scores = pd.read_csv(ROOT / "data" / campaign / "reports" / "scores.csv")
    stated = scores.groupby(["predictor", "set"])["mape"].mean()
    table = bench.mape(campaign)
    assert len(table) == 2 * len(bench.PREDICTORS)
    for row in table.to_dict("records"):
        assert row["all_n"] == pytest.approx(stated[(row["predictor"], row["set"])], abs=1e-4), row
        assert row["configurations"] == (scores["set"] == row["set"]).sum() / scores["predictor"].nunique()
