"""``tracegen validate``: predict with the settings the measurements were taken under, and score the result.

Inputs: measurements (a CSV, see :mod:`validation.compare`, or a ``tracegen testbed`` output folder holding
``measured.csv`` and the single-worker ``trace/`` captured under the same settings) and a trace. The link rate
recorded in the measurements is used for the prediction unless the caller gives one. The simulator's curve
is scored beside the two analytic baselines of :mod:`tracegen.baselines`, with the same metrics.

Writes into ``out_dir``: ``report.md``, ``comparison.csv``, ``comparison.png`` and the simulator's own
``prediction/`` (curve.csv, curve.png).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib

from parsers.atomic import write_bytes_atomic
from parsers.read import read_trace
from tracegen.baselines import no_overlap, ps_queue, step_costs
from tracegen.predict import PredictConfig, predict
from tracegen.units import format_rate
from validation.compare import (
    Comparison,
    compare,
    comparison_csv,
    comparison_png,
    read_measured,
    report_markdown,
    report_paths,
    setting,
)
from validation.errors import ConfigError

MEASURED_NAME = "measured.csv"
TRACE_DIR_NAME = "trace"


def resolve_inputs(measured: str | os.PathLike[str], trace: str | os.PathLike[str] | None,
                   ) -> tuple[pathlib.Path, pathlib.Path]:
    """The measurements CSV and the trace: explicit, or from a testbed output folder."""
    path = pathlib.Path(measured)
    if path.is_dir():
        if trace is None:
            trace = path / TRACE_DIR_NAME
        path = path / MEASURED_NAME
    if trace is None:
        raise ConfigError(f"{path}: give the single-worker trace with --trace (or a testbed folder holding "
                          f"{MEASURED_NAME} and {TRACE_DIR_NAME}/)")
    return path, pathlib.Path(trace)


def validate(measured: str | os.PathLike[str], trace: str | os.PathLike[str] | None, config: PredictConfig,
             out_dir: str | os.PathLike[str]) -> Comparison:
    """Predict for every measured N under the measured link settings, compare, and write the report."""
    measured_path, trace_path = resolve_inputs(measured, trace)
    runs = read_measured(measured_path)
    source = str(measured_path)
    bandwidth = config.bandwidth_bytes_per_s or setting(runs, "bandwidth_bytes_per_s", source)
    if bandwidth is None:
        raise ConfigError(f"{source}: no 'bandwidth_bits_per_s' or 'bandwidth' column; give --bandwidth")
    batch = setting(runs, "batch_size", source) or config.batch_size
    workers = tuple(sorted(set(runs["n_workers"])))
    cfg = dataclasses.replace(config, workers=workers, bandwidth_bytes_per_s=int(bandwidth), batch_size=int(batch),
                              emit_traces=())
    out = pathlib.Path(out_dir)
    tr = read_trace(trace_path)
    prediction = predict(tr, cfg, out / "prediction")
    costs = step_costs(tr)
    comparison = compare(runs, {
        "simulator": [p.steps_per_s for p in prediction.curve.points],
        "no_overlap": no_overlap(costs, workers, bandwidth),
        "ps_queue": ps_queue(costs, workers, bandwidth),
    })
    settings = {
        "measurements": source, "trace": str(trace_path), "link rate (each direction)": format_rate(bandwidth),
        "payload fraction of the link rate": f"{cfg.payload_fraction:.4f}",
        "PS transfer rate (both directions together)": "no limit" if cfg.ps_transfer_bytes_per_s is None
        else format_rate(cfg.ps_transfer_bytes_per_s),
        "batch size": batch, "link model": cfg.link, "transfer order": cfg.policy, "simulated steps": cfg.steps,
        "seeds": cfg.seeds,
    }
    title = f"Predicted vs measured: {trace_path.name or trace_path}"
    md_path, csv_path, png_path = report_paths(out)
    write_bytes_atomic(md_path, report_markdown(comparison, settings, title).encode())
    write_bytes_atomic(csv_path, comparison_csv(comparison))
    write_bytes_atomic(png_path, comparison_png(comparison, title))
    return comparison
