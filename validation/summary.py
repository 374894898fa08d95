"""Scores over validation campaigns: ``python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]``.

Each ``CAMPAIGN.csv`` lists configurations and their set (``dev`` or ``test``, drawn before any ran); each has a
``tracegen validate`` report folder ``REPORTS_DIR/<set>/<name>/`` (its ``comparison.csv``). Writes
``REPORTS_DIR/scores.csv`` (one row per configuration and predictor: MAPE, max error, knee against the measured
knee, and for a predictor with a band the measured means inside it and its median width relative to the
measurement) and ``REPORTS_DIR/summary.md`` (the same per set, with the set's mean MAPE, worst error and the
share of exact knees).
"""

from __future__ import annotations

import io
import os
import pathlib
import re
import statistics
import sys
from collections.abc import Sequence

import pandas as pd

from parsers.atomic import write_bytes_atomic
from parsers.errors import counted, quoted
from validation.compare import knee_of
from validation.errors import ConfigError
from validation.measured import HEADER_LINE, csv_cells, read_csv_text

PREDICTORS = ("simulator", "roofline", "no_overlap", "ps_queue", "roofline_cycle", "simulator_bw", "roofline_bw",
              "no_overlap_bw", "ps_queue_bw")
SCORE_COLUMNS = ("set", "configuration", "predictor", "mape", "max_error", "knee", "measured_knee", "in_band",
                 "n_points", "band_width")


MAX_CAMPAIGN_BYTES = 1 << 20  # a campaign lists tens of configurations, a few kB
SETS = ("dev", "test")
# a configuration's name is a folder under REPORTS_DIR/<set>/: one path component, never '..', a '/' or a NUL
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}")


def read_campaign(path: pathlib.Path) -> list[tuple[str, str]]:
    """(set, name) of every configuration of a campaign CSV: a header naming at least ``name`` and ``set`` (others
    are ignored), then a row per configuration, each (set, name) once. Read as every CSV tracegen reads is
    (:func:`validation.measured.read_csv_text`, :func:`validation.measured.csv_cells`): bounded, a FIFO or a
    directory refused, UTF-8 with or without a byte-order mark, every row as wide as the header; a problem is
    one line naming the file and the line."""
    source = os.fspath(path)
    frame = csv_cells(read_csv_text(source, MAX_CAMPAIGN_BYTES), source)
    header_line = frame.attrs.get(HEADER_LINE, 1)
    missing = [c for c in ("name", "set") if c not in frame.columns]
    if missing:
        raise ConfigError(f"{source}:{header_line}: missing column {missing[0]!r} (columns: "
                          f"{', '.join(map(str, frame.columns))[:80] or 'none'}; required: name, set)")
    if frame.empty:  # else an empty summary, as if every configuration had been left out for want of a report
        raise ConfigError(f"{source}:{header_line}: the header and no configurations after it")
    out: list[tuple[str, str]] = []
    first: dict[tuple[str, str], int] = {}
    for line, name_cell, set_cell in zip(frame.index, frame["name"], frame["set"], strict=True):
        name, group = str(name_cell).strip(), str(set_cell).strip()
        if group not in SETS or not name:
            raise ConfigError(f"{source}:{line}: each row needs a name and a set of dev or test (got name "
                              f"{quoted(name, 40)}, set {quoted(group, 40)})")
        if not _NAME.fullmatch(name):  # a folder of REPORTS_DIR/<set>/: '../x' would read another tree's report
            raise ConfigError(f"{source}:{line}: name {quoted(name, 60)} must be 1 to 200 characters of A-Z a-z "
                              "0-9 . _ + - starting with a letter or digit: it names a report folder")
        if (group, name) in first:  # scored twice, it would weigh twice in the set's means
            raise ConfigError(f"{source}:{line}: configuration {name!r} of set {group!r} is already on line "
                              f"{first[group, name]}; list each once")
        first[group, name] = int(line)
        out.append((group, name))
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
    listed: dict[tuple[str, str], pathlib.Path] = {}
    for path in campaigns:
        for config in read_campaign(path):
            if config in listed:  # one report scored twice weighs twice in the set's means
                raise ConfigError(f"{path}: configuration {config[1]!r} of set {config[0]!r} is also in "
                                  f"{listed[config]}; list each in one campaign")
            listed[config] = path
    table = scores(list(listed), reports)
    buf = io.StringIO()
    table.to_csv(buf, index=False, float_format="%.4f", lineterminator="\n")
    write_bytes_atomic(reports / "scores.csv", buf.getvalue().encode())
    stored = pd.read_csv(io.StringIO(buf.getvalue()))  # the summary shows what scores.csv holds, to the digit
    write_bytes_atomic(reports / "summary.md", summary_markdown(stored).encode())
    return stored


def main(argv: Sequence[str]) -> int:
    """``python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]``; a campaign or report that
    cannot be used is one line on stderr and exit code 2, as tracegen's commands say it."""
    if len(argv) < 2:
        print("usage: python -m validation.summary REPORTS_DIR CAMPAIGN.csv [CAMPAIGN.csv ...]", file=sys.stderr)
        return 2
    reports, campaigns = pathlib.Path(argv[0]), [pathlib.Path(a) for a in argv[1:]]
    try:
        table = write_summary(reports, campaigns)
        unscored = [f"{group}/{name}" for path in campaigns for group, name in read_campaign(path)
                    if not (reports / group / name / "comparison.csv").is_file()]
    except ConfigError as exc:
        print(f"validation.summary: error: {exc}", file=sys.stderr)
        return 2
    if unscored:  # left out as scores() says; said here, or a misspelt name is a configuration gone without a word
        verbs = ("has", "is") if len(unscored) == 1 else ("have", "are")
        print(f"note: {counted(len(unscored), 'configuration')} {verbs[0]} no {reports}/<set>/<name>/comparison.csv "
              f"and {verbs[1]} left out: {', '.join(unscored[:5])}{' ...' if len(unscored) > 5 else ''}",
              file=sys.stderr)
    print(summary_markdown(table), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
