"""``tracegen validate``: predict with the settings the measurements were taken under, and score the result.

Inputs: measurements (a CSV, see :mod:`validation.compare`, or a ``tracegen testbed`` output folder holding
``measured.csv``, the single-worker ``trace/`` captured under the same settings, and optionally
``ps_transfer.csv`` from ``--transfer-bench`` and ``workers/`` traces of every worker of each N) and a trace.
The simulator is scored beside the two analytic baselines of :mod:`tracegen.baselines`, with the same metrics.

Writes into ``out_dir``: ``report.md``, ``comparison.csv``, ``comparison.png`` and the simulator's own
``prediction/`` and ``prediction_nominal/`` (curve.csv, curve.png).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib

from parsers.atomic import write_bytes_atomic
from parsers.read import read_trace
from tracegen.baselines import no_overlap, ps_queue, step_costs
from tracegen.model import StepModel
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
from validation.multiworker import real_stats, simulated_stats
from validation.testbed import read_transfer_rate

MEASURED_NAME = "measured.csv"
TRACE_DIR_NAME = "trace"
TRANSFER_NAME = "ps_transfer.csv"
WORKERS_DIR_NAME = "workers"


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


def _transfer_rate(config: PredictConfig, measured_dir: pathlib.Path | None) -> int | None:
    """The PS's two-way rate: as given, else the testbed folder's transfer benchmark, else no limit."""
    if config.ps_transfer_bytes_per_s is not None or measured_dir is None:
        return config.ps_transfer_bytes_per_s
    bench = measured_dir / TRANSFER_NAME
    return read_transfer_rate(bench) if bench.is_file() else None


def _phase_table(model: StepModel, cfg: PredictConfig, workers_dir: pathlib.Path) -> list[str]:
    """Markdown rows: real multi-worker traces against a simulation of the same N."""
    rows = ["| N | step ms (real / sim) | pull phase ms | rest of step ms | both directions busy |",
            "|---|---|---|---|---|"]
    for n_dir in sorted(workers_dir.glob("n*"), key=lambda p: int(p.name[1:]) if p.name[1:].isdigit() else 0):
        dirs = sorted(d for d in n_dir.iterdir() if d.is_dir())
        if not dirs:
            continue
        real = real_stats(dirs)
        sim = simulated_stats(model, dataclasses.replace(cfg.sim_config(), n_workers=real.n_workers, steps=8))
        rows.append(f"| {real.n_workers} | {real.step_ms:.0f} / {sim.step_ms:.0f} | {real.pull_ms:.0f} / "
                    f"{sim.pull_ms:.0f} | {real.rest_ms:.0f} / {sim.rest_ms:.0f} | {real.both_busy:.0%} / "
                    f"{sim.both_busy:.0%} |")
    return rows


def validate(measured: str | os.PathLike[str], trace: str | os.PathLike[str] | None, config: PredictConfig,
             out_dir: str | os.PathLike[str]) -> Comparison:
    """Predict for every measured N under the measured settings, compare, and write the report.

    Predictors: ``simulator`` with the link rate estimated from the trace (taken under the measurements'
    settings, it measures the link as it performed), ``simulator_nominal`` with the recorded link rate (its
    payload share), and the two baselines at the recorded rate.
    """
    measured_path, trace_path = resolve_inputs(measured, trace)
    measured_dir = pathlib.Path(measured) if pathlib.Path(measured).is_dir() else None
    runs = read_measured(measured_path)
    source = str(measured_path)
    bandwidth = config.bandwidth_bytes_per_s or setting(runs, "bandwidth_bytes_per_s", source)
    if bandwidth is None:
        raise ConfigError(f"{source}: no 'bandwidth_bits_per_s' or 'bandwidth' column; give --bandwidth")
    batch = setting(runs, "batch_size", source) or config.batch_size
    workers = tuple(sorted(set(runs["n_workers"])))
    base = dataclasses.replace(config, workers=workers, batch_size=int(batch), emit_traces=(),
                               ps_transfer_bytes_per_s=_transfer_rate(config, measured_dir))
    nominal = dataclasses.replace(base, bandwidth_bytes_per_s=int(bandwidth))
    estimated = dataclasses.replace(base, bandwidth_bytes_per_s=None)
    out = pathlib.Path(out_dir)
    tr = read_trace(trace_path)
    prediction = predict(tr, estimated, out / "prediction")
    nominal_curve = predict(tr, nominal, out / "prediction_nominal").curve
    costs = step_costs(tr)
    payload = bandwidth * base.payload_fraction
    comparison = compare(runs, {
        "simulator": [p.steps_per_s for p in prediction.curve.points],
        "simulator_nominal": [p.steps_per_s for p in nominal_curve.points],
        "no_overlap": no_overlap(costs, workers, payload),
        "ps_queue": ps_queue(costs, workers, payload),
    })
    link = prediction.model.link
    settings = {
        "measurements": source, "trace": str(trace_path),
        "link rate recorded (each direction)": format_rate(bandwidth),
        "payload share of the recorded rate": f"{base.payload_fraction:.4f}",
        "link rate estimated from the trace": f"pull {format_rate(link.pull_bandwidth_bytes_per_s)}, push "
                                              f"{format_rate(link.push_bandwidth_bytes_per_s)}",
        "PS two-way transfer rate": "no limit" if base.ps_transfer_bytes_per_s is None
        else format_rate(base.ps_transfer_bytes_per_s),
        "batch size": batch, "link model": base.link, "transfer order": base.policy, "simulated steps": base.steps,
        "seeds": base.seeds,
    }
    title = f"Predicted vs measured: {measured_dir.name if measured_dir else trace_path.name}"
    text = report_markdown(comparison, settings, title)
    if measured_dir is not None and (measured_dir / WORKERS_DIR_NAME).is_dir():
        text += ("\n## Real multi-worker traces against simulated ones\n\nEvery worker traced a few steps after "
                 "its measurement window (real) and a simulation of the same N (sim), figures as defined in "
                 "validation.multiworker:\n\n" + "\n".join(_phase_table(prediction.model, estimated,
                                                                       measured_dir / WORKERS_DIR_NAME)) + "\n")
    md_path, csv_path, png_path = report_paths(out)
    write_bytes_atomic(md_path, text.encode())
    write_bytes_atomic(csv_path, comparison_csv(comparison))
    write_bytes_atomic(png_path, comparison_png(comparison, title))
    return comparison
