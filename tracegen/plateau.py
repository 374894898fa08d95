"""Where a scaling curve stops rising, and its knee. The stall among the asked N (:func:`stalled_after`:
:data:`STALL_POINTS` in a row under :data:`STALL_GAIN` above the best, each at a :func:`saturated` resource); the
search past the asked range when it did not stall (:func:`plateau_search`, from :func:`saturation_workers`, at most
:data:`PLATEAU_PROBES` doublings up to :data:`MAX_SATURATION_WORKERS`); whether the stop lies inside the seeds'
noise (:func:`noise_between`); and the knee, the smallest N within :data:`KNEE_FRACTION` of the plateau. The rules
are told in :mod:`tracegen.curve`'s docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tracegen.bottleneck import two_way_share
from tracegen.link import PULL, PUSH, LinkSpec

if TYPE_CHECKING:
    from tracegen.curve import CurvePoint


KNEE_FRACTION = 0.95
MAX_SATURATION_WORKERS = 256
PLATEAU_PROBES = 3  # doublings of N past the asked range while the rate still climbs (the plateau search)
STALL_POINTS = 3  # past the plateau: this many asked N in a row, each not STALL_GAIN above the best rate so far
STALL_GAIN = 0.01
SATURATED = 0.9  # predict's stall counts only points whose busiest resource is at least this busy


def knee(points: Sequence[CurvePoint], plateau: float, fraction: float = KNEE_FRACTION) -> int | None:
    """The smallest N whose throughput reaches ``fraction`` of the plateau; None if none does."""
    return min((p.n_workers for p in points if p.steps_per_s >= fraction * plateau), default=None)


def saturation_workers(one_worker_steps_per_s: float, bound_steps_per_s: float, largest: int) -> int:
    """Workers enough to saturate the tighter bound (1.5 x bound / one worker's rate, plus one), at least
    ``largest``, at most :data:`MAX_SATURATION_WORKERS` (or ``largest`` if that is more)."""
    if not math.isfinite(bound_steps_per_s) or one_worker_steps_per_s <= 0:
        return largest
    wanted = math.ceil(1.5 * bound_steps_per_s / one_worker_steps_per_s) + 1
    return max(largest, min(wanted, MAX_SATURATION_WORKERS))


def stalled_after(rates: Sequence[float], saturated: Sequence[bool] | None = None) -> int | None:
    """The index of the rate after which a curve has stalled: :data:`STALL_POINTS` rates in a row, each not
    :data:`STALL_GAIN` above the best before it (so the last of them rose less than that over all of them); None
    while it still climbs. With ``saturated`` (per rate), only saturated points count, and one that is not starts
    the count again: a flat stretch below a saturated resource (workers in lock-step, say) may rise again."""
    best, stall = 0.0, 0
    for i, rate in enumerate(rates):
        if rate > best * (1 + STALL_GAIN):
            best, stall = rate, 0
        else:
            stall = stall + 1 if saturated is None or saturated[i] else 0
        if stall >= STALL_POINTS:
            return i
    return None


def saturated(point: CurvePoint, link: LinkSpec | None = None) -> bool:
    """Whether ``point``'s busiest resource (a link direction or the PS's CPU, means over seeds and shards) is
    :data:`SATURATED` busy: more workers then cannot raise the rate much. A direction's utilisation is of its
    peak (:meth:`~tracegen.link.LinkSpec.peak_bytes_per_s`); with ``link``, a direction counts as busy at that share
    of the most it carries while the other direction is busy too, its lower ceiling under the two-way load of a
    plateau (a link given by its bandwidth alone carries 3/4 of it each way then: measured against the peak, it
    never looked saturated, and ``--workers 1-3000`` simulated every N)."""
    pull, push = (SATURATED if link is None else SATURATED * two_way_share(link, d) for d in (PULL, PUSH))
    return (point.pull_link_utilisation >= pull or point.push_link_utilisation >= push
            or point.ps_cpu_utilisation >= SATURATED)


def search_noise(largest: CurvePoint, probed: Sequence[CurvePoint], *, plateau: float = 0.0,
                 bound: float = math.inf) -> tuple[int, int, float] | None:
    """Whether the plateau search past the asked range, which simulated ``probed`` after the asked ``largest``
    and stopped on the last of them, a rise under :data:`STALL_GAIN` over the one before, stopped inside the
    seeds' noise: (the N it stopped at, the N before, the wider 95 % half-width of the two) when that half-width is
    more than the 5 % (1 - :data:`KNEE_FRACTION`) between the plateau and the knee, let alone the STALL_GAIN the stop
    was judged by; else None: the quick start's ±0.47 on 22.14 steps/s at N=64 (2 %), a last point that rose more
    (the search ended still rising: a lower bound), and a ``plateau`` within STALL_GAIN of the tighter ``bound``,
    pinned by it, noise or not. One such comparison is all that ends the search: ``--steps 3`` on the bundled mlp
    trace stopped at N=5 on a 0.7 % rise over N=4 (±6.05 and ±9.08 steps/s) and called 94.22 steps/s the plateau,
    where ``--steps 30`` went on to 96.33 at N=20, its link bound."""
    if not probed or plateau >= (1 - STALL_GAIN) * bound:
        return None
    return noise_between(probed[-1], probed[-2] if len(probed) > 1 else largest)


def stall_noise_of(points: Sequence[CurvePoint], stalled: int | None) -> tuple[int, int, float] | None:
    """``Curve.stall_noise`` of ``points`` that stalled at index ``stalled`` (:func:`stalled_after`; None: they did
    not): :func:`noise_between` the point it stalled at and the best before it, which it did not rise 1 % above."""
    if stalled is None or stalled < 1:
        return None
    before = max(points[:stalled], key=lambda p: (p.steps_per_s, -p.n_workers))
    return noise_between(points[stalled], before)


def noise_between(stop: CurvePoint, before: CurvePoint) -> tuple[int, int, float] | None:
    """Whether a rise under :data:`STALL_GAIN` from ``before`` to ``stop``, taken as the rate stopping, lies inside
    the seeds' noise: (``stop``'s N, ``before``'s N, the wider 95 % half-width of the two) when that half-width is
    more than the 5 % (1 - :data:`KNEE_FRACTION`) between the plateau and the knee; None when it is not, or when
    ``stop`` rose more. The one rule of the plateau search's stop (:func:`search_noise`) and of the stall that ends
    a curve (:func:`stalled_after`, ``Curve.stall_noise``)."""
    if stop.steps_per_s >= before.steps_per_s * (1 + STALL_GAIN):
        return None
    half = max(p.steps_per_s_ci95 or 0.0 for p in (stop, before))
    return (stop.n_workers, before.n_workers, half) if half > (1 - KNEE_FRACTION) * before.steps_per_s else None


def plateau_search(largest: int, rate: float, start: int, at: Callable[[int], float], *,
                   rising: bool = False) -> tuple[int, float, bool]:
    """(N, rate, reached) of the plateau past the asked N, whose largest, ``largest``, ran at ``rate``: ``at(n)``
    (the rate simulated at ``n``) at ``start`` if that is more workers, then at twice as many while the rate still
    rises :data:`STALL_GAIN` over the last, at most :data:`PLATEAU_PROBES` times and up to
    :data:`MAX_SATURATION_WORKERS` (or ``largest`` if that is more). ``reached`` is False when the last N
    simulated still rose that much: past the asked range, or, where the range already reaches the cap and nothing
    is simulated past it, when the asked curve was still ``rising`` at its largest N."""
    best_n, best, rose = largest, rate, rising
    n = start if start > largest else 2 * largest
    for _ in range(PLATEAU_PROBES):
        n = min(n, max(MAX_SATURATION_WORKERS, largest))
        if n <= best_n:  # at the cap: reached unless the N before it still rose
            return best_n, best, not rose
        got = at(n)
        if got < best * (1 + STALL_GAIN):
            return (n, got, True) if got > best else (best_n, best, True)
        best_n, best, n, rose = n, got, 2 * n, True
    return best_n, best, False


def plateau_probes(largest: int, start: int = 0) -> tuple[int, ...]:
    """The N :func:`plateau_search` simulates past an asked range ending at ``largest``, from ``start`` as it does,
    when the rate keeps rising: for estimating what a curve costs."""
    cap = max(MAX_SATURATION_WORKERS, largest)
    probes: list[int] = []
    n = start if start > largest else 2 * largest
    for _ in range(PLATEAU_PROBES):
        n = min(n, cap)
        if n <= (probes[-1] if probes else largest):
            break
        probes.append(n)
        n *= 2
    return tuple(probes)
