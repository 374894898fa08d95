"""A point's bottleneck: the resource busiest in its runs (a PS link direction, weighed against what it carries
while the other is busy too, :func:`two_way_share`, or the PS's CPU), of the PS shard busiest on that measure, when
it is :data:`BUSY_THRESHOLD` busy; else ``workers`` or ``contention`` (:func:`idle_label`). The rule is told in
:mod:`tracegen.curve`'s docstring.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from tracegen.link import PULL, PUSH, LinkSpec
from tracegen.metrics import (
    ShardUse,
    shard_utilisations,
)
from tracegen.simulate import SimResult

BUSY_THRESHOLD = 0.8
EFFICIENT = 0.8  # a point with no busy resource is ``workers`` at this share of the smallest N's rate per worker


def bottleneck(result: SimResult) -> str:
    """Name of the busiest resource of a run, or ``workers`` when none is busy (module docstring); with several
    PS shards, of the shard busiest on that measure (:func:`labelled_shard`; their mean would hide one saturated
    shard among idle ones)."""
    return busiest_label(labelled_shard(shard_utilisations(result), result.link_spec), result.link_spec)


def runs_bottleneck(runs: Sequence[SimResult]) -> str:
    """The bottleneck of one N's runs (its seeds): of each shard's utilisations averaged over the runs (with one PS,
    the figures a curve's table prints beside it), so that the label never contradicts them; a vote of the runs'
    own labels called a point with 78 % push ``link-push`` and the next, 80 %, ``workers``."""
    per_run = [shard_utilisations(r) for r in runs]
    means = [ShardUse(shard=k, pull=statistics.fmean(u[k].pull for u in per_run),
                      push=statistics.fmean(u[k].push for u in per_run),
                      cpu=statistics.fmean(u[k].cpu for u in per_run)) for k in range(len(per_run[0]))]
    return busiest_label(labelled_shard(means, runs[0].link_spec), runs[0].link_spec)


def labelled_shard(uses: Sequence[ShardUse], link: LinkSpec) -> ShardUse:
    """The shard a bottleneck is named from: the one whose load is highest as :func:`busiest_label` weighs it (the
    lower shard on a tie). Not :func:`tracegen.metrics.busiest_shard`, the busiest against each resource's peak: on
    three greedy shards at N = 24 that was shard 2's CPU at 74 %, so the point said ``workers``, while shard 1's
    pull link moved 69 % of its peak, 92 % of what it carries both ways."""
    return max(uses, key=lambda u: (_load(u, link)[1], -u.shard))


def _load(use: ShardUse, link: LinkSpec) -> tuple[str, float]:
    """A shard's busiest resource and its load as :func:`busiest_label` weighs it."""
    loads = (("link-pull", use.pull / two_way_share(link, PULL)),
             ("link-push", use.push / two_way_share(link, PUSH)), ("ps-cpu", use.cpu))
    return max(loads, key=lambda kv: kv[1])


def busiest_label(busiest: ShardUse, link: LinkSpec) -> str:
    """:func:`bottleneck` from the shard it is named from (:func:`labelled_shard`), when that is already at hand. A
    link direction is weighed against what it carries while the other direction is busy too (:func:`two_way_share`),
    as :func:`tracegen.plateau.saturated` weighs it: a link given by its bandwidth alone carries 3/4 of it each way
    then, so measured against its peak it never reached 80 %, and its plateau, the link moving all it could, was
    labelled ``contention``."""
    name, value = _load(busiest, link)
    return name if value >= BUSY_THRESHOLD else "workers"


def idle_label(n_workers: int, steps_per_s: float, first_per_worker: float) -> str:
    """What holds a point whose resources are none of them busy (module docstring): ``workers`` while each of its
    ``n_workers`` steps at :data:`EFFICIENT` of ``first_per_worker`` (the smallest N's steps/s per worker) or
    more, else ``contention``."""
    return "workers" if steps_per_s >= EFFICIENT * first_per_worker * n_workers else "contention"


def two_way_share(link: LinkSpec, direction: int) -> float:
    """The most ``direction`` carries while the other is busy, as a share of its peak."""
    return max(rate for _, rate in link.both[direction]) / link.peak_bytes_per_s(direction)
