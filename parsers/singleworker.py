"""What one untraced worker did against its PS, on the two hosts a user has: ``single-worker.json``.

A trace shows which op waits for which tensor, but tracing slows every op, and the PS's CPU per step is more
than its traced ops: every tensor a worker pulls or pushes costs the PS a request to parse, a tensor to copy and
a reply to send, none of which a trace records. Both are measured, untraced, while one worker trains against
the PS (``tracegen testbed`` does it in its N = 1 runs; any job on two hosts can, by timing steps and reading
the PS process's CPU time). The file sits beside the trace, as ``link-profile.json`` does.

``single-worker.json`` (format ``tracegen-single-worker``, version 1)::

    format             "tracegen-single-worker"
    version            1
    tool               what wrote it, e.g. "tracegen testbed 0.1.0"
    date               when, ISO 8601 UTC
    steps_per_s        the worker's untraced training steps per second
    ps_cpu_s_per_step  (optional, null when unknown) CPU seconds the PS process used per step, all threads
    ps_cores           (optional, null when unknown) the PS host's CPU cap or core count, from 0.001 (what a CFS
                       quota can enforce) to 4096; with both known, ps_cpu_s_per_step x steps_per_s (cores used)
                       may not exceed it
    ps_cpu_quota       (optional, null when none) {"host_cores": 2.0, "period_us": 10000} when ps_cores is a CFS
                       quota below the cores the PS may run on (as ps.cpu_quota in link-profile.json)
    window_s           how long it was measured, seconds
    link_bits_per_s    (optional, null when unknown) the line rate of the link the worker trained over, bits per
                       second, from 1e3 to 1e13 (a shaped link's rate): where tracing's cost is worked out when the
                       prediction is for another link (:func:`tracegen.preparation.prepared`)
    ps_at_cap          (optional, null when not measured) the same worker against the PS capped tighter, so that
                       it keeps the PS at its cap: {"ps_cores": 0.05, "steps_per_s": 5.1, "ps_cpu_s_per_step":
                       0.0098, "window_s": 30.0, "ps_cpu_quota": null or as above}; its CPU per step times its rate
                       must be at least ``HELD_SHARE`` of its cores
    notes              (optional) list of strings

A key not named here is refused, in ``ps_at_cap`` and ``ps_cpu_quota`` too: a misspelt optional key
(``ps_cpu_ms_per_step``) would otherwise read as unknown, and the PS's CPU drop out of the model without a word.

Why ``ps_at_cap``: the PS's CPU per step is elastic. gRPC's threads spend what CPU the PS has spare, so the same
worker at the same rate costs a PS capped at 1.0 core 24 ms of CPU a step, at 0.3 cores 19 ms, and at 0.05 cores
(where it holds the PS at its cap) 10 ms (data/README.md, ``remeasured/cnn_300mbit_q5_b16k_pscaps``). Whether the
held figure is the PS's cost in a cluster that holds it at its cap was tested on a holdout (``data/atcap``): on one
configuration yes, on the other the tight cap made the PS spend 54 % more a step. So it is recorded and shown
beside a prediction, not used in it (:func:`tracegen.linkspec.held_ps_bound`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from typing import Any

from parsers.atomic import write_bytes_atomic
from parsers.errors import TraceFormatError
from parsers.files import read_expanded
from parsers.jsondoc import finite_float, load_json
from parsers.linkprofile import MIN_CPU_CORES, Checker, CpuQuota
from parsers.workerclasses import MAX_LINK_BITS_PER_S, MIN_LINK_BITS_PER_S

FORMAT = "tracegen-single-worker"
VERSION = 1
SINGLE_WORKER_NAME = "single-worker.json"  # its name beside a trace
MAX_BYTES = 1 << 16
# a process cannot use more CPU than its cap or its host's cores; the measurement window's edges may add a little
CPU_SLACK = 1.1
HELD_SHARE = 0.9  # ps_at_cap: the PS used at least this share of its cores (the rest: the window edges)
KEYS = ("format", "version", "tool", "date", "steps_per_s", "ps_cpu_s_per_step", "ps_cores", "ps_cpu_quota",
        "window_s", "link_bits_per_s", "ps_at_cap", "notes")
REQUIRED_KEYS = ("tool", "date", "steps_per_s", "window_s")
AT_CAP_KEYS = ("ps_cores", "steps_per_s", "ps_cpu_s_per_step", "window_s", "ps_cpu_quota")


class SingleWorkerError(TraceFormatError):
    """A ``single-worker.json`` that cannot be read or does not follow the schema."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AtCap:
    """The worker against the PS capped so that it keeps the PS at its cap (module docstring, ``ps_at_cap``)."""

    ps_cores: float
    steps_per_s: float
    ps_cpu_s_per_step: float
    window_s: float
    ps_cpu_quota: CpuQuota | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SingleWorker:
    """One untraced worker's measured rate and the PS's CPU per step (module docstring)."""

    steps_per_s: float
    window_s: float
    ps_cpu_s_per_step: float | None = None
    ps_cores: float | None = None
    ps_cpu_quota: CpuQuota | None = None
    ps_at_cap: AtCap | None = None
    link_bits_per_s: float | None = None
    tool: str = "tracegen"
    date: str = ""
    notes: tuple[str, ...] = ()
    source: str = ""


def single_worker_json(measured: SingleWorker) -> bytes:
    """The document, keys in schema order, ending in a newline."""
    doc = {"format": FORMAT, "version": VERSION, "tool": measured.tool, "date": measured.date,
           "steps_per_s": measured.steps_per_s, "ps_cpu_s_per_step": measured.ps_cpu_s_per_step,
           "ps_cores": measured.ps_cores, "window_s": measured.window_s, "notes": list(measured.notes)}
    if measured.ps_cpu_quota is not None:
        doc["ps_cpu_quota"] = dataclasses.asdict(measured.ps_cpu_quota)
    if measured.link_bits_per_s is not None:
        doc["link_bits_per_s"] = measured.link_bits_per_s
    if measured.ps_at_cap is not None:
        doc["ps_at_cap"] = dataclasses.asdict(measured.ps_at_cap)
    return (json.dumps(doc, indent=2) + "\n").encode()


def write_single_worker(measured: SingleWorker, path: str | os.PathLike[str]) -> None:
    """Write ``measured`` to ``path`` atomically."""
    write_bytes_atomic(pathlib.Path(path), single_worker_json(measured))


def read_single_worker(path: str | os.PathLike[str]) -> SingleWorker:
    """Read and check a ``single-worker.json`` (plain or gzipped); :class:`SingleWorkerError` names the file and
    the bad key."""
    source = os.fspath(path)
    data = read_expanded(source, MAX_BYTES, SingleWorkerError)
    doc: Any = load_json(data, source, parse_float=finite_float, error=SingleWorkerError)
    c = Checker(source, SingleWorkerError)
    c.header(doc, FORMAT, VERSION)
    c.known(doc, KEYS, "", REQUIRED_KEYS)
    cpu, cores = doc.get("ps_cpu_s_per_step"), doc.get("ps_cores")
    steps_per_s = c.number(c.key(doc, "steps_per_s", ""), "steps_per_s", positive=True, high=1e9)
    ps_cpu = None if cpu is None else c.number(cpu, "ps_cpu_s_per_step", high=86_400.0)
    ps_cores = None if cores is None else c.number(cores, "ps_cores", low=MIN_CPU_CORES, high=4096.0)
    if ps_cpu is not None and ps_cores is not None and ps_cpu * steps_per_s > ps_cores * CPU_SLACK:
        raise SingleWorkerError(f"{source}: ps_cpu_s_per_step {ps_cpu:g} at steps_per_s {steps_per_s:g} is "
                                f"{ps_cpu * steps_per_s:.3g} cores of CPU, more than ps_cores {ps_cores:g}")
    window_s = c.number(c.key(doc, "window_s", ""), "window_s", positive=True, high=86_400.0)
    if steps_per_s * window_s < 1:  # a rate no window could measure: a unit slip, not a measurement
        raise SingleWorkerError(f"{source}: steps_per_s {steps_per_s:g} over window_s {window_s:g} is "
                                f"{steps_per_s * window_s:.3g} steps; a measurement counts at least one")
    link = doc.get("link_bits_per_s")
    return SingleWorker(
        steps_per_s=steps_per_s,
        window_s=window_s,
        link_bits_per_s=None if link is None else c.number(link, "link_bits_per_s", low=MIN_LINK_BITS_PER_S,
                                                            high=MAX_LINK_BITS_PER_S),
        ps_cpu_s_per_step=ps_cpu, ps_cores=ps_cores,
        ps_cpu_quota=c.cpu_quota({"cpu_quota": doc.get("ps_cpu_quota")}, "ps_cpu_quota", ps_cores, "ps_cores"),
        ps_at_cap=None if doc.get("ps_at_cap") is None else _at_cap(c, doc["ps_at_cap"]),
        tool=c.text(c.key(doc, "tool", ""), "tool"), date=c.text(c.key(doc, "date", ""), "date"),
        notes=c.notes(doc), source=source)


def _at_cap(c: Checker, raw: Any) -> AtCap:
    """The ``ps_at_cap`` object, checked: its figures, and that the PS really was at its cap."""
    c.known(c.mapping(raw, "ps_at_cap"), AT_CAP_KEYS, "ps_at_cap", AT_CAP_KEYS[:4])
    cores = c.number(c.key(raw, "ps_cores", "ps_at_cap"), "ps_at_cap.ps_cores", low=MIN_CPU_CORES, high=4096.0)
    rate = c.number(c.key(raw, "steps_per_s", "ps_at_cap"), "ps_at_cap.steps_per_s", positive=True, high=1e9)
    cpu = c.number(c.key(raw, "ps_cpu_s_per_step", "ps_at_cap"), "ps_at_cap.ps_cpu_s_per_step", positive=True,
                   high=86_400.0)
    window_s = c.number(c.key(raw, "window_s", "ps_at_cap"), "ps_at_cap.window_s", positive=True, high=86_400.0)
    used = cpu * rate
    if not HELD_SHARE * cores <= used <= CPU_SLACK * cores:
        raise SingleWorkerError(f"{c.source}: ps_at_cap used {used:.3g} cores (ps_cpu_s_per_step {cpu:g} at "
                                f"steps_per_s {rate:g}) of ps_cores {cores:g}: not at its cap, so not its work "
                                "per step")
    return AtCap(ps_cores=cores, steps_per_s=rate, ps_cpu_s_per_step=cpu, window_s=window_s,
                 ps_cpu_quota=c.cpu_quota({"cpu_quota": raw.get("ps_cpu_quota")}, "ps_at_cap.ps_cpu_quota", cores,
                                          "ps_at_cap.ps_cores"))
