"""Where a :class:`~tracegen.link.LinkSpec` comes from: a measured link profile, a given bandwidth, or the trace.

- :func:`from_profile`: the profile's one-way points (``pull``, ``push``) give each direction's capacity for k
  connections, its ``both`` points the capacity while the other direction is busy too, and the small request's
  round trip under one-way load, less its round trip on the idle link, each direction's queue delay; the PS
  host's cores and, from the ``rpc_*`` points, the CPU the PS spends per transfer request. The
  profile's ``cycle`` points (clients alternating pulls and pushes, as workers do) are not in the spec: they are
  what :func:`check_profile` predicts, a check of the link model on the two hosts' own measurements, and a
  baseline of their own (:func:`tracegen.baselines.cycle_rates`, ``roofline_cycle``).
- :func:`from_bandwidth`: a line rate (its payload share per direction), the same for any number of connections.
  With ``two_way`` < 1 both directions together carry that fraction of what they carry apart.
- :func:`with_single_worker`: what one untraced worker's run measured on the PS (``single-worker.json``): its
  CPU per step, less the PS ops the trace shows, spread over the step's transfers as each request's handling —
  the PS's own cost of serving tensors, which neither a trace nor a bandwidth shows. Not the file's
  ``ps_at_cap`` (the worker holding the PS at a tighter cap): the PS's CPU per step is elastic, but on the holdout
  that tested it (docs/validation.md, "The PS's CPU is elastic") the held figure predicted one plateau better and
  one far worse, so ``predict`` shows the bound it implies beside the curve instead (:func:`held_ps_bound`).
- Every spec keeps the single-worker trace's per-connection rate (one worker's own limit) and latency.
- :func:`at_cap_plateau`: not a spec but a bound beside it. The single-worker run measures the PS's CPU per
  step with the PS mostly idle; at its cap the PS's RPC threads spend far less a step (docs/validation.md, "The PS
  at its cap"), which the profile's points with the PS at its cap show as CPU per byte moved.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

from parsers.linkprofile import CpuQuota, LinkProfile, ProfilePoint
from parsers.singleworker import SingleWorker
from tracegen.errors import ConfigError
from tracegen.link import MAX_RPC_CPU_NS, PULL, PUSH, LinkSpec, Table
from tracegen.model import PS_KINDS, TRANSFER_KINDS, StepModel, StepTiming, TaskKind
from tracegen.pscpu import CfsQuota
from tracegen.wire import LinkEstimate


def _table(points: tuple[ProfilePoint, ...], direction: int) -> Table:
    """Rate by connections, never falling as connections are added: k connections can always move what fewer
    moved (a lower figure at more connections is each client's own per-step pause showing, not the link)."""
    attr = "pull_bytes_per_s" if direction == PULL else "push_bytes_per_s"
    table, best = [], 1.0
    for p in points:
        best = max(best, float(getattr(p, attr)))
        table.append((p.connections, best))
    return tuple(table)


def from_profile(profile: LinkProfile, trace_link: LinkEstimate | None) -> LinkSpec:
    """The link a profile describes, limited per connection by what one traced worker moved (if given)."""
    one_way = (profile.of_mode("pull"), profile.of_mode("push"))
    both = profile.of_mode("both")
    for name, pts in (("pull", one_way[0]), ("push", one_way[1]), ("both", both)):
        if not pts:
            raise ConfigError(f"{profile.source}: the link profile has no {name!r} points")
    alone = (_table(one_way[0], PULL), _table(one_way[1], PUSH))
    two_way = (_table(both, PULL), _table(both, PUSH))
    idle = profile.idle_rtt_ns
    delays: list[Table] = []
    for pts in one_way:
        known = [(p.connections, float(max(0, p.probe_rtt_ns - idle))) for p in pts
                 if p.probe_rtt_ns is not None and idle is not None]
        delays.append(tuple(known) if known else ((1, 0.0),))
    best = (max(r for _, r in alone[0]), max(r for _, r in alone[1]))
    conn = best if trace_link is None else (
        float(trace_link.pull_bandwidth_bytes_per_s), float(trace_link.push_bandwidth_bytes_per_s))
    latency = trace_link.latency_ns if trace_link is not None else (idle or 0)
    cores = ps_cores(profile)
    return LinkSpec(alone=alone, both=two_way, connection_bytes_per_s=conn, latency_ns=latency,
                    queue_delay_ns=(delays[0], delays[1]), ps_cores=cores, ps_quota=cfs_quota(profile.cpu_quota),
                    rpc_cpu_ns=(rpc_cpu_ns(profile, "rpc_pull", cores), rpc_cpu_ns(profile, "rpc_push", cores)),
                    description=f"link profile {profile.source or '(in memory)'} ({profile.date}); one worker's "
                                "connection moves at most what the trace's did" + quota_note(cores, profile.cpu_quota))


def cfs_quota(quota: CpuQuota | None) -> CfsQuota | None:
    """The simulator's quota for a recorded one (None for None)."""
    return None if quota is None else CfsQuota(host_cores=quota.host_cores, period_ns=quota.period_us * 1000)


def quota_note(cores: float | None, quota: CpuQuota | None, source: str = "") -> str:
    """What the description says about a PS cap enforced as a quota ("" when there is none); ``source``: the file
    that said so, named in the same parentheses (a second pair after them, '(... on 2 cores) (from ...)', read as
    two asides)."""
    if cores is None or quota is None or cores >= quota.host_cores:
        return ""
    return (f"; the PS's {cores:g} cores are a CFS quota ({quota.period_us / 1000:g} ms periods on "
            f"{quota.host_cores:g} cores{f', from {source}' if source else ''})")


def ps_cores(profile: LinkProfile) -> float | None:
    """The PS host's CPU the profile recorded (``ps.cores``), if it is a plausible number."""
    cores = profile.ps.get("cores")
    if isinstance(cores, int | float) and not isinstance(cores, bool) and 0 < cores <= 4096:
        return float(cores)
    return None


AT_CAP = 0.97  # a profile point whose PS used at least this share of its cores ran at its cap
BULK_MODES = ("pull", "push", "both", "cycle")


def at_cap_plateau(profile: LinkProfile, model: StepModel, spec: LinkSpec) -> float | None:
    """Steps per second the PS's cores allow if each step costs them the traced PS ops' work (under ``spec``'s
    cap) plus the step's bytes at the CPU per byte of the profile's bulk points with the PS at its cap (their
    median); None when the profile has no such point. An estimate from above: on the two testbed runs that
    had such points it lay 20 % above the measured plateau, the single-worker cost 26-31 % below (the PS keeps
    more per step than its traced ops)."""
    cores = ps_cores(profile)
    if cores is None:
        return None
    costs = [p.ps_cpu_cores / (p.pull_bytes_per_s + p.push_bytes_per_s) for p in profile.points
             if p.mode in BULK_MODES and p.ps_cpu_cores is not None and p.ps_cpu_cores >= AT_CAP * cores
             and p.pull_bytes_per_s + p.push_bytes_per_s > 0]
    if not costs:
        return None
    step_bytes = sum(model.bytes_of(kind) for kind in TRANSFER_KINDS)
    step_s = model.mean_work_ns(PS_KINDS, spec.ps_work_ns) / 1e9 + step_bytes * statistics.median(costs)
    return cores / step_s if step_s > 0 else None


def held_ps_bound(measured: SingleWorker) -> float | None:
    """Steps per second the PS's cores allow at the CPU per step of ``ps_at_cap`` (None without it or its
    cores): a figure shown beside the curve, not used in it (module docstring)."""
    held = measured.ps_at_cap
    if held is None or not measured.ps_cores:
        return None
    return measured.ps_cores / held.ps_cpu_s_per_step


def rpc_cpu_ns(profile: LinkProfile, mode: str, cores: float | None) -> float:
    """CPU the PS spends on one small-tensor request (``rpc_pull``/``rpc_push`` points): the CPU its process
    used over the requests it served per second, the least over the points (the busiest shows the cost with the
    least idle spinning in it); 0 without such points."""
    costs = []
    for p in profile.of_mode(mode):
        used = p.ps_cpu_cores if p.ps_cpu_cores is not None else cores
        if used is not None and p.transfers_per_s:
            costs.append(used * 1e9 / p.transfers_per_s)
    return min(costs, default=0.0)


def request_cpu_ns(model: StepModel, measured: SingleWorker, spec: LinkSpec) -> float | None:
    """The PS's CPU per transfer request: its measured CPU per step less the traced PS ops' work (under ``spec``'s
    PS cap), over the step's transfers (None when the measurement has no PS CPU, or the step no transfers). The
    figure with the worker alone, not ``ps_at_cap`` (module docstring)."""
    transfers = sum(model.count(k) for k in TRANSFER_KINDS)
    if measured.ps_cpu_s_per_step is None or not transfers:
        return None
    return max(0.0, measured.ps_cpu_s_per_step * 1e9 - model.mean_work_ns(PS_KINDS, spec.ps_work_ns)) / transfers


def with_single_worker(spec: LinkSpec, model: StepModel, measured: SingleWorker) -> LinkSpec:
    """``spec`` with the PS's request handling from ``measured`` (module docstring), and its cores and their
    quota when the spec does not know them: the PS's cores, or how a cap of the same cores was enforced (a
    profile measured where the PS's process could not see its cgroup says its cores but not its quota)."""
    if spec.ps_cores is None:
        known = dataclasses.replace(spec, ps_cores=measured.ps_cores, ps_quota=cfs_quota(measured.ps_cpu_quota),
                                    description=spec.description + quota_note(measured.ps_cores,
                                                                              measured.ps_cpu_quota))
    elif spec.ps_quota is None and measured.ps_cpu_quota is not None and measured.ps_cores == spec.ps_cores:
        known = dataclasses.replace(spec, ps_quota=cfs_quota(measured.ps_cpu_quota),
                                    description=spec.description + quota_note(
                                        spec.ps_cores, measured.ps_cpu_quota,
                                        measured.source or "the single-worker measurement"))
    elif measured.ps_cores and measured.ps_cores != spec.ps_cores:  # two PS sizes: which the link has, said
        known = dataclasses.replace(spec, description=f"{spec.description}; the PS's {spec.ps_cores:g} cores, not "
                                    f"the {measured.ps_cores:g} of {measured.source or 'the single-worker run'}")
    else:
        known = spec
    cost = request_cpu_ns(model, measured, known)
    if cost is None or measured.ps_cpu_s_per_step is None:  # the second follows from the first; said for mypy
        return known  # no CPU per step measured, but the PS's cores and quota were
    if cost > MAX_RPC_CPU_NS:
        raise ConfigError(f"{measured.source or 'single-worker measurement'}: 'ps_cpu_s_per_step' "
                          f"{measured.ps_cpu_s_per_step:g} s is {cost / 1e9:.3g} s of the PS's CPU for each of the "
                          f"step's transfers, more than the {MAX_RPC_CPU_NS / 1e9:g} s a request may take: "
                          "is it seconds, not milliseconds?")
    return dataclasses.replace(
        known, rpc_cpu_ns=(cost, cost),
        description=f"{known.description}; the PS spends {cost / 1e3:.0f} us of CPU per transfer (from "
                    f"{measured.ps_cpu_s_per_step * 1e3:.1f} ms per step measured untraced, "
                    f"{measured.source or 'in memory'})")


def from_bandwidth(bytes_per_s: int, trace_link: LinkEstimate, *, two_way: float = 1.0) -> LinkSpec:
    """A link of ``bytes_per_s`` payload each way; both busy: each direction at ``two_way`` of it."""
    if not 0 < two_way <= 1:
        raise ConfigError(f"'two_way' must be in (0, 1] (got {two_way})")
    alone = ((1, float(bytes_per_s)),)
    both = ((1, float(bytes_per_s) * two_way),)
    conn = (min(float(bytes_per_s), trace_link.pull_bandwidth_bytes_per_s),
            min(float(bytes_per_s), trace_link.push_bandwidth_bytes_per_s))
    return LinkSpec(alone=(alone, alone), both=(both, both), connection_bytes_per_s=conn,
                    latency_ns=trace_link.latency_ns,
                    description=f"given bandwidth {bytes_per_s} B/s payload each way"
                                + (f", both ways at once {two_way:.0%} of it" if two_way < 1 else ""))


def cycle_model(point: ProfilePoint, profile: LinkProfile) -> StepModel:
    """A netbench ``cycle`` client's step as a step model: pull ``n`` tensors, then push them, nothing else; the
    step starts one idle round trip after the last (the session's own request and reply)."""
    if point.step_bytes is None:
        raise ConfigError(f"{profile.source}: cycle point k={point.connections} lacks 'step_bytes'")
    n = max(1, math.ceil(point.step_bytes / profile.tensor_bytes))
    size = point.step_bytes // n
    names = [f"pull{i}" for i in range(n)] + [f"push{i}" for i in range(n)]
    kinds = [TaskKind.PULL] * n + [TaskKind.PUSH] * n
    data = [()] * n + [tuple(range(n))] * n
    idle = profile.idle_rtt_ns or 0
    timing = StepTiming(dur_ns=(0,) * (2 * n), delay_ns=(idle,) * n + (0,) * n, step_ns=0)
    fast = 10**15
    return StepModel(names=tuple(names), kinds=tuple(kinds), size_bytes=(size,) * (2 * n), data_preds=tuple(data),
                     control_preds=((),) * (2 * n), rank=tuple(range(2 * n)), first_need_ns=tuple(range(2 * n)),
                     timings=(timing,), link=LinkEstimate(pull_bandwidth_bytes_per_s=fast,
                                                          push_bandwidth_bytes_per_s=fast, latency_ns=0,
                                                          method="netbench cycle"),
                     source=f"netbench cycle k={point.connections}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CycleCheck:
    """A profile's ``cycle`` point beside what the link model built from its other points predicts."""

    connections: int
    measured_bytes_per_s: float
    predicted_bytes_per_s: float

    @property
    def error(self) -> float:
        """Relative error of the prediction."""
        return (self.predicted_bytes_per_s - self.measured_bytes_per_s) / self.measured_bytes_per_s


def check_profile(profile: LinkProfile, *, steps: int = 30, seed: int = 0) -> list[CycleCheck]:
    """Predict every ``cycle`` point of ``profile`` from its other points (module docstring)."""
    from tracegen.metrics import steps_per_s
    from tracegen.simulate import SimConfig, simulate

    spec = dataclasses.replace(from_profile(profile, None), latency_ns=0)
    checks = []
    for point in profile.of_mode("cycle"):
        model = cycle_model(point, profile)
        result = simulate(model, SimConfig(n_workers=point.connections, steps=steps, seed=seed, link_spec=spec,
                                           policy="tictac"))
        predicted = steps_per_s(result) * model.bytes_of(TaskKind.PULL)
        checks.append(CycleCheck(connections=point.connections, measured_bytes_per_s=point.pull_bytes_per_s,
                                 predicted_bytes_per_s=predicted))
    return checks
