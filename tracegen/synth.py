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

from parsers.chrome import (
    OWN_FORMAT_VERSION,
    ChromeWriter,
    assign_lanes,
    json_members,
    json_text,
    transfer_track,
)
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
    file_name = pathlib.PurePath(path).name
    extra: dict[str, Any] = {
        "format_version": OWN_FORMAT_VERSION, "source": f"tracegen synthetic: {model.source}",
        "source_format": "tracegen-synthetic", "lost": ["graph tables (synthetic trace of a simulation)"],
        "skipped": {}, "tables": {name: {"columns": list(SCHEMAS[name]), "rows": []}
                                  for name in ("graph_nodes", "graph_edges", "rendezvous", "variables", "steps")},
    }
    with ChromeWriter(path, extra=extra) as out:
        steps = _Steps(out, model, config.ps_shard_of_task or (0,) * n)

        def on_task(record: TaskRecord) -> None:
            key = (record.worker, record.step)
            bucket = pending.setdefault(key, [])
            bucket.append(record)
            if len(bucket) == n:
                del pending[key]
                step_id = record.worker * stride + bucket[0].step
                steps.write(record.worker, step_id, bucket)
                steps_rows.append([step_id, file_name, min(r.ready_ns for r in bucket),
                                   max(r.end_ns for r in bucket)])

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


class _Steps:
    """Writes one worker step after another to ``out``. What every step repeats (a task's name and args, a
    track's ids) is encoded once, on first use, and handed to the writer as JSON text: a ``json.dumps`` per event
    was most of the time a trace took."""

    def __init__(self, out: ChromeWriter, model: StepModel, shard: tuple[int, ...]) -> None:
        n = model.n_tasks
        self.out, self.model, self.shard = out, model, shard
        self.sharded = max(shard) > 0
        self.names = [json_text(name) for name in model.names]
        kinds = model.kinds
        self.is_op = [kinds[t] not in TRANSFER_KINDS for t in range(n)]
        self.is_ps = [kinds[t] in PS_KINDS for t in range(n)]
        self.op_args = [json_members({"node_name": model.names[t], "op_type": kinds[t].name}) if self.is_op[t]
                        else "" for t in range(n)]
        # the transfer groups in the order they are written: pulls then pushes, each by shard link
        directions = (("pull", TaskKind.PULL), ("push", TaskKind.PUSH))
        self.groups = list(itertools.product(directions, range(max(shard) + 1)))
        group_of = {(kind, k): g for g, ((_direction, kind), k) in enumerate(self.groups)}
        self.group = [group_of.get((kinds[t], shard[t]), -1) for t in range(n)]
        self.cross = [[p for p in model.preds(t) if _track_kind(model, p) != _track_kind(model, t)]
                      for t in range(n)]
        self.flow_id = 0
        self.ids: dict[tuple[int, ...], str] = {}  # a track's key → its encoded ids (_track_ids)
        self.transfer_args: dict[tuple[int, int], str] = {}  # (task, worker) → args before the step
        self.staleness: dict[int, str] = {}
        self.shard_args = [json_members({"shard": k}) for k in range(max(shard) + 1)]

    def write(self, w: int, step_id: int, records: list[TaskRecord]) -> None:
        """Worker ``w``'s step ``step_id`` (its ``records``): transfers, ops, then the flows between them."""
        where: dict[int, tuple[str, int, int]] = {}  # task → (its track's ids, start_ns, end_ns)
        self._transfers(w, step_id, records, where)
        self._ops(w, step_id, records, where)
        out, names = self.out, self.names
        for t, (ids, start, _end) in sorted(where.items()):
            for p in self.cross[t]:
                placed = where.get(p)
                if placed is None:
                    continue
                p_ids, p_start, p_end = placed
                self.flow_id += 1
                out.encoded_flow(self.flow_id, names[p], (p_ids, max(p_start, p_end - 1)), (ids, start))

    def _track_ids(self, key: tuple[int, ...]) -> str:
        """The ids of the track ``key``: (worker, slot) for compute, (-1 - shard, slot) for a PS thread,
        (worker, transfer group, lane) for transfers."""
        if len(key) == 2:
            process = ps_device(-1 - key[0]) if key[0] < 0 else worker_device(key[0])
            track = f"thread {key[1]}" if key[0] < 0 else f"compute {key[1]}"
        else:
            (direction, _kind), k = self.groups[key[1]]
            process, track = worker_device(key[0]), transfer_track(direction, key[2], f"ps{k}" if self.sharded else "")
        ids = self.ids[key] = self.out.track_ids(process, track)
        return ids

    def _transfers(self, w: int, step_id: int, records: list[TaskRecord],
                   where: dict[int, tuple[str, int, int]]) -> None:
        """Worker ``w``'s transfers of one step, on its transfer tracks (one set per shard link when sharded)."""
        groups: list[list[TaskRecord]] = [[] for _ in self.groups]
        group = self.group
        for r in records:
            g = group[r.task]
            if g >= 0:
                groups[g].append(r)
        step_args = json_members({"step": step_id})
        out, names, ids_of, shard_args = self.out, self.names, self.ids, self.shard_args
        for g, rs in enumerate(groups):
            tail = (step_args, shard_args[self.groups[g][1]]) if self.sharded else (step_args,)
            lanes = assign_lanes([r.ready_ns for r in rs], [r.end_ns for r in rs])
            for lane, r in zip(lanes, rs, strict=True):
                t, start, end = r.task, r.ready_ns, r.end_ns
                key = (w, g, lane)
                ids = ids_of.get(key) or self._track_ids(key)
                head = self.transfer_args.get((t, w)) or self._transfer_args(t, w)
                out.encoded_slice(ids, names[t], start, end - start, '"transfer"', (head, *tail))
                where[t] = (ids, start, end)

    def _transfer_args(self, t: int, w: int) -> str:
        """Transfer ``t`` of worker ``w``'s args up to its step: its tensor, devices, direction and size."""
        (direction, kind), k = self.groups[self.group[t]]
        src, dst = (ps_device(k), worker_device(w)) if kind == TaskKind.PULL else (worker_device(w), ps_device(k))
        head = self.transfer_args[(t, w)] = json_members({
            "tensor_name": self.model.names[t], "src_device": src, "dst_device": dst, "direction": direction,
            "size_bytes": self.model.size_bytes[t]})
        return head

    def _ops(self, w: int, step_id: int, records: list[TaskRecord], where: dict[int, tuple[str, int, int]]) -> None:
        """Worker ``w``'s ops of one step and the PS ops it caused, each on its CPU thread's track; a parameter's
        apply with its gradient's staleness."""
        out, names, ids_of, is_op, is_ps, shard = self.out, self.names, self.ids, self.is_op, self.is_ps, self.shard
        op_args, staleness = self.op_args, self.staleness
        tails: dict[int, str] = {}  # lane → args after the op's names
        for r in records:
            t, start, end = r.task, r.start_ns, r.end_ns
            if not is_op[t] or end == start:
                continue
            slot = r.slot
            key = (-1 - shard[t], slot) if is_ps[t] else (w, slot)
            ids = ids_of.get(key) or self._track_ids(key)
            tail = tails.get(slot)
            if tail is None:
                tail = tails[slot] = json_members({"step": step_id, "lane": slot, "worker": w})
            if r.staleness >= 0:
                stale = staleness.get(r.staleness)
                if stale is None:
                    stale = staleness[r.staleness] = json_members({"staleness": r.staleness})
                out.encoded_slice(ids, names[t], start, end - start, '"op"', (op_args[t], tail, stale))
            else:
                out.encoded_slice(ids, names[t], start, end - start, '"op"', (op_args[t], tail))
            where[t] = (ids, start, end)


def _track_kind(model: StepModel, t: int) -> str:
    kind = model.kinds[t]
    if kind in TRANSFER_KINDS:
        return "transfer"
    return "ps" if kind in PS_KINDS else "worker"
