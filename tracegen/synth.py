"""Synthetic multi-worker traces: what a simulation ran, as Chrome JSON that Perfetto and ``read_trace`` load
(up to a size: :func:`size_warning` says which viewers a large one is beyond).

The simulator decides what happened; :class:`parsers.chrome.ChromeWriter` writes it, streaming (memory holds
only the steps in progress, not the trace). Layout:
- one process per worker, named by its TensorFlow device (``/job:worker/replica:0/task:W/device:CPU:0``),
  with tracks ``compute T`` (its CPU threads), ``pulls L`` and ``pushes L`` (one lane per concurrent transfer,
  so slices on a track never overlap);
- one process for the PS (``/job:ps/replica:0/task:0/device:CPU:0``) with tracks ``thread T``; with several
  PS shards (``config.ps_shard_of_task``), one per shard (``task:K``), each holding its own PS ops, and each
  worker's transfers on one track per shard link (``pulls psK L``, ``pushes psK L``);
- transfers span from issue to arrival, with ``tensor_name``, ``size_bytes``, ``direction``, devices and, with
  shards, ``shard`` in args;
- a parameter's apply on the PS carries its gradient's ``staleness`` in args (:mod:`tracegen.variables`);
- flow arrows from each pull to the ops that read it, from each gradient's producer to its push, and from each
  push to the PS op that consumes it.
Ops that took no time (graph nodes that did not run) are not written. Steps are numbered
``worker * steps + k`` (with uneven workers, who run until the slowest is done, ``worker * MAX_STEPS + k``).
Reading the file back with :func:`parsers.read_trace` gives the ops and transfers.
"""

from __future__ import annotations

import itertools
import os
import pathlib
from typing import Any

from parsers.chrome import OWN_FORMAT_VERSION, ChromeWriter, assign_lanes, transfer_track
from parsers.limits import MAX_BYTES, MAX_RECORDS
from parsers.trace import SCHEMAS
from tracegen.model import PS_KINDS, TRANSFER_KINDS, StepModel, TaskKind
from tracegen.simulate import MAX_STEPS, SimConfig, SimResult, TaskRecord, simulate

CHROME_TRACING_MAX_BYTES = 256 << 20  # what chrome://tracing loads at most (google/trace-viewer#627)


def ps_device(shard: int) -> str:
    """TensorFlow device name of PS task (shard) ``shard``."""
    return f"/job:ps/replica:0/task:{shard}/device:CPU:0"


def worker_device(worker: int) -> str:
    """TensorFlow device name of worker ``worker``."""
    return f"/job:worker/replica:0/task:{worker}/device:CPU:0"


def write_synthetic_trace(model: StepModel, config: SimConfig, path: str | os.PathLike[str]) -> SimResult:
    """Simulate ``config`` and stream the run to ``path`` (atomically); returns the simulation result."""
    n = model.n_tasks
    stride = MAX_STEPS if config.uneven else config.total_steps  # uneven workers run more steps than asked
    pending: dict[tuple[int, int], list[TaskRecord]] = {}
    steps_rows: list[list[Any]] = []
    flow_id = 0
    cross = [[p for p in model.preds(t) if _track_kind(model, p) != _track_kind(model, t)] for t in range(n)]
    shard = config.ps_shard_of_task or (0,) * n

    extra: dict[str, Any] = {
        "format_version": OWN_FORMAT_VERSION, "source": f"tracegen synthetic: {model.source}",
        "source_format": "tracegen-synthetic", "lost": ["graph tables (synthetic trace of a simulation)"],
        "skipped": {}, "tables": {name: {"columns": list(SCHEMAS[name]), "rows": []}
                                  for name in ("graph_nodes", "graph_edges", "rendezvous", "variables", "steps")},
    }
    with ChromeWriter(path, extra=extra) as out:
        def emit_step(w: int, records: list[TaskRecord]) -> None:
            nonlocal flow_id
            step_id = w * stride + records[0].step
            where: dict[int, tuple[str, str, int, int]] = {}
            _transfers(out, model, records, w, step_id, shard, where)
            for r in records:
                kind = model.kinds[r.task]
                if kind in TRANSFER_KINDS or r.end_ns == r.start_ns:
                    continue
                ps = kind in PS_KINDS
                process = ps_device(shard[r.task]) if ps else worker_device(w)
                track = f"thread {r.slot}" if ps else f"compute {r.slot}"
                args = {"node_name": model.names[r.task], "op_type": kind.name, "step": step_id, "lane": r.slot,
                        "worker": w}
                if r.staleness >= 0:
                    args["staleness"] = r.staleness
                out.slice(process=process, track=track, name=model.names[r.task], start_ns=r.start_ns,
                          dur_ns=r.end_ns - r.start_ns, cat="op", args=args)
                where[r.task] = (process, track, r.start_ns, r.end_ns)
            for t, (process, track, start, _end) in sorted(where.items()):
                for p in cross[t]:
                    if p not in where:
                        continue
                    p_process, p_track, p_start, p_end = where[p]
                    flow_id += 1
                    out.flow(flow_id=flow_id, name=model.names[p], src=(p_process, p_track, max(p_start, p_end - 1)),
                             dst=(process, track, start))
            steps_rows.append([step_id, pathlib.PurePath(path).name, min(r.ready_ns for r in records),
                               max(r.end_ns for r in records)])

        def on_task(record: TaskRecord) -> None:
            key = (record.worker, record.step)
            bucket = pending.setdefault(key, [])
            bucket.append(record)
            if len(bucket) == n:
                del pending[key]
                emit_step(record.worker, bucket)

        result = simulate(model, config, on_task=on_task)
        extra["tables"]["steps"]["rows"] = sorted(steps_rows)
    return result


def size_warning(path: str | os.PathLike[str]) -> str | None:
    """Which viewers the synthetic trace at ``path`` is too large for (chrome://tracing: 256 MiB; tracegen's own
    reader: :data:`parsers.limits.MAX_BYTES` and :data:`~parsers.limits.MAX_RECORDS` events), or None. Counts the
    events by lines: :class:`~parsers.chrome.ChromeWriter` writes one per line, between a first and a last line."""
    size = lines = 0
    with pathlib.Path(path).open("rb") as fh:
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            lines += chunk.count(b"\n")
    events = max(0, lines - 2)
    beyond = []
    if size > CHROME_TRACING_MAX_BYTES:
        beyond.append(f"chrome://tracing (at most {CHROME_TRACING_MAX_BYTES >> 20} MiB)")
    if size > MAX_BYTES or events > MAX_RECORDS:
        beyond.append(f"tracegen inspect and convert (at most {MAX_BYTES >> 20} MiB and {MAX_RECORDS} events)")
    if not beyond:
        return None
    return (f"{pathlib.PurePath(path).name} is {size / 2**20:.0f} MiB with {events} events: too large for "
            f"{' and '.join(beyond)}; Perfetto opens it (the largest with its trace_processor --httpd), or ask for "
            "fewer steps or workers")


def _transfers(out: ChromeWriter, model: StepModel, records: list[TaskRecord], w: int, step_id: int,
               shard: tuple[int, ...], where: dict[int, tuple[str, str, int, int]]) -> None:
    """Worker ``w``'s transfers of one step, on its transfer tracks (one set per shard link when sharded); each
    one's place into ``where``."""
    sharded = max(shard) > 0
    for (direction, kind), k in itertools.product((("pull", TaskKind.PULL), ("push", TaskKind.PUSH)),
                                                 range(max(shard) + 1)):
        group = [r for r in records if model.kinds[r.task] == kind and shard[r.task] == k]
        lanes = assign_lanes([r.ready_ns for r in group], [r.end_ns for r in group])
        for lane, r in zip(lanes, group, strict=True):
            process, track = worker_device(w), transfer_track(direction, lane, f"ps{k}" if sharded else "")
            src, dst = ((ps_device(k), worker_device(w)) if kind == TaskKind.PULL
                        else (worker_device(w), ps_device(k)))
            args: dict[str, Any] = {"tensor_name": model.names[r.task], "src_device": src, "dst_device": dst,
                                    "direction": direction, "size_bytes": model.size_bytes[r.task], "step": step_id}
            if sharded:
                args["shard"] = k
            out.slice(process=process, track=track, name=model.names[r.task], start_ns=r.ready_ns,
                      dur_ns=r.end_ns - r.ready_ns, cat="transfer", args=args)
            where[r.task] = (process, track, r.ready_ns, r.end_ns)


def _track_kind(model: StepModel, t: int) -> str:
    kind = model.kinds[t]
    if kind in TRANSFER_KINDS:
        return "transfer"
    return "ps" if kind in PS_KINDS else "worker"
