"""A traced step and link moved onto catalogue instances: what each column of the catalogue changes.

The trace was taken on one pair of hosts (the *traced* worker and PS); a plan asks what the same job does on
instances of other types (:mod:`parsers.catalogue`). The simulator is not touched: the step model and the link
are rebuilt with :func:`dataclasses.replace`, and every choice below is one line of the plan's assumptions.

- ``compute_speed`` of the **worker** type divides the duration of every ``COMPUTE`` task (an op on the worker's
  CPU) and the dispatch gap before it (``delay_ns``: the executor's own CPU work between an op's inputs being
  ready and the op starting). A faster CPU does both sooner.
- ``compute_speed`` of the **PS** type divides the CPU work of every ``APPLY``/``PS_OP`` task and the gap before
  it, and the PS's CPU per transfer request (``rpc_cpu_ns``: parsing, copying, replying; all CPU work). A PS op
  the trace timed under a CPU quota is first turned back into the CPU work it did
  (:meth:`tracegen.link.LinkSpec.ps_work_ns` of the traced link), then divided: a catalogue instance has whole
  cores and no quota.
- ``cores`` of the PS type are the PS's cores (``ps_cores``; no CFS quota). A worker's ``cores`` enter nothing:
  its op times and the ops it ran at once are the trace's, and ``compute_speed`` already says how much faster
  the instance runs them (counting its cores again would count the same speed twice).
- Not scaled: the gaps before transfers (``PULL``/``PUSH`` ``delay_ns``: they hold RPC set-up and round trips
  that a faster CPU does not shorten) and the trace's per-connection rate (what one traced worker's gRPC stack
  moved): both stay as traced, which errs on the slow side for faster workers.
- ``link_bits_per_s`` of the **PS** type is the PS link, the one all workers share: its payload share (TCP/IP
  and Ethernet headers taken off, :data:`tracegen.config.PAYLOAD_FRACTION`) each way through
  :func:`tracegen.linkspec.from_bandwidth`. A rate alone does not pin the plateau (how much the two directions
  slow each other is unknown), so the link is three links, as ``predict --bandwidth`` has them: ``low``
  (half-duplex), ``mid`` (the point prediction) and ``high`` (full duplex) (:data:`tracegen.preparation.BAND_TWO_WAY`).
- ``link_profile`` of the PS type, when given, pins that link: :func:`tracegen.linkspec.from_profile`, one link.
- ``link_bits_per_s`` of the **worker** type caps each worker's connection (its payload share): a worker cannot
  move a tensor faster than its own network card.
- The PS's CPU per transfer request, in this order: a ``single-worker.json`` beside the trace (measured on the
  traced PS, divided by the PS type's speed); else the PS type's own link profile's small-tensor points
  (measured on that instance, not divided); else the trace's ``link-profile.json`` (the traced PS, divided);
  else none.
"""

from __future__ import annotations

import dataclasses

from parsers.catalogue import Instance
from tracegen.config import PAYLOAD_FRACTION
from tracegen.link import LinkSpec
from tracegen.linkspec import from_bandwidth, from_profile
from tracegen.model import StepModel, scaled_timing
from tracegen.preparation import BAND_TWO_WAY


def on_instances(model: StepModel, traced: LinkSpec, *, worker_speed: float, ps_speed: float) -> StepModel:
    """``model`` with worker ops run ``worker_speed`` times and PS ops ``ps_speed`` times as fast (module
    docstring); PS ops' durations become CPU work at full speed (no quota)."""
    return dataclasses.replace(model, timings=tuple(
        scaled_timing(t, model.kinds, worker_speed=worker_speed, ps_speed=ps_speed, ps_work=traced.ps_work_ns)
        for t in model.timings))


def payload_bytes_per_s(bits_per_s: int, payload_fraction: float = PAYLOAD_FRACTION) -> int:
    """Tensor bytes per second a line rate of ``bits_per_s`` carries each way."""
    return max(1, round(bits_per_s / 8 * payload_fraction))


def instance_links(model: StepModel, traced: LinkSpec, *, worker: Instance, ps: Instance,
                   measured_rpc: bool, payload_fraction: float = PAYLOAD_FRACTION) -> dict[str, LinkSpec]:
    """The PS link of a cluster of ``worker`` workers and a ``ps`` PS: ``{"mid": spec}`` when the PS type's
    link profile pins it, else ``low``/``mid``/``high`` from its rate (module docstring). ``measured_rpc``: the
    traced link's ``rpc_cpu_ns`` come from a single-worker measurement."""
    if ps.link_profile is not None:
        links = {"mid": from_profile(ps.link_profile, model.link)}
    else:
        payload = payload_bytes_per_s(ps.link_bits_per_s, payload_fraction)
        links = {name: from_bandwidth(payload, model.link, two_way=f) for name, f in BAND_TWO_WAY.items()}
    own = links["mid"].rpc_cpu_ns
    if not measured_rpc and ps.link_profile is not None and any(own):
        rpc = own
    else:
        rpc = (traced.rpc_cpu_ns[0] / ps.compute_speed, traced.rpc_cpu_ns[1] / ps.compute_speed)
    cap = float(payload_bytes_per_s(worker.link_bits_per_s, payload_fraction))
    if ps.link_profile is not None:  # the profile's figures, not the row's rate: the model uses them
        peak = max((q.pull_bytes_per_s for q in ps.link_profile.of_mode("pull")), default=0.0)
        link = (f"PS link of its link profile {ps.link_profile.source or '(no path)'} (pulls up to "
                f"{peak * 8 / 1e9:.3g} Gbit/s of payload; the row's {ps.link_bits_per_s / 1e9:g} Gbit/s not used)")
    else:
        link = f"PS link {ps.link_bits_per_s / 1e9:g} Gbit/s (its rate only: NOT pinned)"
    return {name: dataclasses.replace(
        spec, ps_cores=ps.cores, ps_quota=None, rpc_cpu_ns=rpc,
        connection_bytes_per_s=(min(spec.connection_bytes_per_s[0], cap), min(spec.connection_bytes_per_s[1], cap)),
        description=f"{link}; {ps.cores:g} PS cores; {rpc[0] / 1e3:.0f} us of PS CPU per transfer")
        for name, spec in links.items()}
