"""Scores over validation campaigns: ``python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]``.

Each ``CAMPAIGN.csv`` lists configurations and their set (``dev`` or ``test``, drawn before any ran); each has a
``tracegen validate`` report folder ``REPORTS_DIR/<set>/<name>/`` (its ``comparison.csv``). Writes
``REPORTS_DIR/scores.csv`` (one row per configuration and predictor: MAPE, max error, knee against the measured
knee, and for a predictor with a band the measured means inside it and its median width relative to the
measurement) and ``REPORTS_DIR/summary.md`` (the same per set, with the set's mean MAPE, worst error and the
share of exact knees).
"""

from __future__ import annotations

import csv
import io
import pathlib
import statistics
import sys
from collections.abc import Sequence

import pandas as pd

from parsers.atomic import write_bytes_atomic
from validation.compare import knee_of
from validation.errors import ConfigError

PREDICTORS = ("simulator", "roofline", "no_overlap", "ps_queue", "roofline_cycle", "simulator_bw", "roofline_bw",
              "no_overlap_bw", "ps_queue_bw")
SCORE_COLUMNS = ("set", "configuration", "predictor", "mape", "max_error", "knee", "measured_knee", "in_band",
                 "n_points", "band_width")


def read_campaign(path: pathlib.Path) -> list[tuple[str, str]]:
    """(set, name) of every configuration of a campaign CSV."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the campaign: {exc.strerror or exc}") from exc
    out = []
    for i, row in enumerate(rows, start=2):
        if row.get("set") not in ("dev", "test") or not row.get("name"):
            raise ConfigError(f"{path}:{i}: each row needs a name and a set of dev or test (got {row!r:.80})")
        out.append((row["set"], row["name"]))
    return out


def scores(campaign: Sequence[tuple[str, str]], reports: pathlib.Path) -> pd.DataFrame:
    """One row per configuration and predictor (module docstring); configurations without a report are left
    out."""
    rows = []
    for group, name in campaign:
        path = reports / group / name / "comparison.csv"
        if not path.is_file():
            continue
        table = pd.read_csv(path)
        ns = [int(n) for n in table["n_workers"]]
        measured_knee = knee_of(ns, list(table["measured_mean"]))
        for predictor in PREDICTORS:
            if predictor not in table.columns:
                continue
            errors = table[f"{predictor}_error"]
            row = {"set": group, "configuration": name, "predictor": predictor, "mape": float(errors.mean()),
                   "max_error": float(errors.max()), "knee": knee_of(ns, list(table[predictor])),
                   "measured_knee": measured_knee, "in_band": None, "n_points": len(table), "band_width": None}
            if f"{predictor}_band_low" in table.columns:
                low, high = table[f"{predictor}_band_low"], table[f"{predictor}_band_high"]
                mean = table["measured_mean"]
                row["in_band"] = int(((low <= mean) & (mean <= high)).sum())
                row["band_width"] = float(((high - low) / mean).median())
            rows.append(row)
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


def summary_markdown(table: pd.DataFrame) -> str:
    """Per set, per configuration: MAPE / max error / knee of each predictor; then the set's aggregate."""
    lines: list[str] = []
    for group in ("test", "dev"):
        part = table[table["set"] == group]
        if part.empty:
            continue
        predictors = [p for p in PREDICTORS if p in set(part["predictor"])]
        lines += [f"### {group} set", "", "| configuration | measured knee | " + " | ".join(
            f"{p}: MAPE / max / knee" for p in predictors) + " |", "|---|---|" + "---|" * len(predictors)]
        for name, rows in part.groupby("configuration", sort=True):
            by = {r["predictor"]: r for r in rows.to_dict("records")}
            cells = [f"{by[p]['mape']:.1%} / {by[p]['max_error']:.1%} / {by[p]['knee']}" if p in by else "-"
                     for p in predictors]
            lines.append(f"| {name} | {rows['measured_knee'].iloc[0]} | " + " | ".join(cells) + " |")
        agg = []
        for p in predictors:
            rows = part[part["predictor"] == p]
            exact = (rows["knee"] == rows["measured_knee"]).mean()
            agg.append(f"{rows['mape'].mean():.1%} / {rows['max_error'].max():.1%} / {exact:.0%} exact")
        lines.append("| **all** | | " + " | ".join(agg) + " |")
        band = part[part["in_band"].notna()]
        if not band.empty:
            inside, points = int(band["in_band"].sum()), int(band["n_points"].sum())
            lines += ["", f"Band (bandwidth only): {inside} of {points} measured means inside [band_low, "
                          f"band_high]; median band width {statistics.median(band['band_width']):.0%} of the "
                          "measured value."]
        lines.append("")
    return "\n".join(lines)


def write_summary(reports: pathlib.Path, campaigns: Sequence[pathlib.Path]) -> pd.DataFrame:
    """Compute the scores and write ``scores.csv`` and ``summary.md`` into ``reports``."""
    table = scores([c for path in campaigns for c in read_campaign(path)], reports)
    buf = io.StringIO()
    table.to_csv(buf, index=False, float_format="%.4f", lineterminator="\n")
    write_bytes_atomic(reports / "scores.csv", buf.getvalue().encode())
    stored = pd.read_csv(io.StringIO(buf.getvalue()))  # the summary shows what scores.csv holds, to the digit
    write_bytes_atomic(reports / "summary.md", summary_markdown(stored).encode())
    return stored


def main(argv: Sequence[str]) -> int:
    """``python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]``."""
    if len(argv) < 2:
        print("usage: python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]", file=sys.stderr)
        return 2
    table = write_summary(pathlib.Path(argv[0]), [pathlib.Path(a) for a in argv[1:]])
    print(summary_markdown(table), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
