"""The accuracy the README states, guarded: every stored configuration is predicted again from its own inputs
(trace, link profile, single-worker measurement, link rate — nothing measured with N > 1 workers) and scored
against its measurements. A change that makes any prediction worse than ``data/validation/reports/scores.csv``
says, beyond a small tolerance for floating-point noise, fails here; and the README must show exactly the summary those scores make."""

from __future__ import annotations

import pathlib

import pandas as pd
import pytest

from tracegen.outputs import OutputDir
from tracegen.predict import PredictConfig
from validation.summary import summary_markdown
from validation.validate import validate

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORTS = ROOT / "data" / "validation" / "reports"
SCORES = REPORTS / "scores.csv"
CAMPAIGN = pd.read_csv(ROOT / "data/validation/campaign.csv")
FOLDERS = {name: ROOT / "data" / "validation" / group / name
           for group, name in CAMPAIGN[["set", "name"]].itertuples(index=False)}
MAPE_TOLERANCE = 0.01
MAX_TOLERANCE = 0.02


def stated() -> pd.DataFrame:
    return pd.read_csv(SCORES) if SCORES.is_file() else pd.DataFrame(columns=["configuration"])


def test_the_readme_shows_the_stated_summary() -> None:
    table = stated()
    if table.empty:
        pytest.skip("no validation scores stored yet")
    assert summary_markdown(table).strip() in (ROOT / "README.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(stated()["configuration"])))
def test_predictions_are_no_worse_than_stated(name: str, tmp_path: pathlib.Path) -> None:
    folder = FOLDERS[name]
    with OutputDir(tmp_path, []) as out:
        comparison, inputs, _ = validate(folder, None, PredictConfig(), out)
    claims = stated()[stated()["configuration"] == name]
    for claim in claims.to_dict("records"):
        got = comparison.scores[claim["predictor"]]
        assert got.mape <= claim["mape"] + MAPE_TOLERANCE, (claim["predictor"], got.mape, claim["mape"])
        assert got.max_error <= claim["max_error"] + MAX_TOLERANCE, (claim["predictor"], got.max_error)
        if not pd.isna(claim["in_band"]):
            assert got.in_band is not None and got.in_band >= int(claim["in_band"])
    assert inputs.profile == folder / "trace" / "link-profile.json"
    assert inputs.single_worker == folder / "trace" / "single-worker.json"
