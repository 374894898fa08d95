"""A scaling curve's findings in words, as every output says them (the terminal, ``report.md``, the HTML report,
the chart's knee mark, the shards and plan tables): the plateau (:func:`plateau_text`), the knee (:func:`knee_text`,
in short :func:`knee_short`), the asked N a stalled curve did not simulate and what the stall says of more workers.
"""

from __future__ import annotations

from collections.abc import Iterable

from tracegen.curve import Curve
from tracegen.plateau import KNEE_FRACTION, STALL_GAIN
from tracegen.units import fixed
from tracegen.workercounts import format_workers


def noise_words(half: float) -> str:
    """Why a stop judged inside the seeds' noise (:func:`tracegen.plateau.noise_between`) does not pin the rate, in
    words."""
    return (f"the seeds' 95% interval there, ±{fixed(half, 2)} steps/s, is wider than the {1 - KNEE_FRACTION:.0%} "
            "that sets the knee")


def plateau_text(curve: Curve) -> str:
    """The plateau in words: its rate and where it was simulated, and that it is not pinned where the search
    stopped inside the seeds' noise (``plateau_noise``) or the curve stalled inside it (``stall_noise``: no search
    ran past a stall, so the plateau rests on it as much; ``--steps 3`` on the bundled ps03 trace printed 'plateau
    20.75 steps/s (simulated at N=13)' under a stall it called not pinned, and with ``--every-n`` said nothing of
    the noise at all), or, when the search had not seen it stop rising, that it is a lower bound."""
    at = f"{fixed(curve.plateau_steps_per_s, 2)} steps/s (simulated at N={curve.saturation_workers}"
    if curve.plateau_reached and curve.plateau_noise is not None:
        stop, before, half = curve.plateau_noise
        return (f"{at}; not pinned: the search stopped at N={stop} on a rise under {STALL_GAIN:.0%} from N={before}, "
                f"and {noise_words(half)}; more --steps or --seeds narrow it)")
    if curve.plateau_reached and curve.stall_noise is not None:
        stop, before, half = curve.stall_noise
        return (f"{at}; not pinned: the rate stalled at N={stop} on a rise under {STALL_GAIN:.0%} from N={before}, "
                f"and {noise_words(half)}; more --steps or --seeds narrow it)")
    if curve.plateau_reached:
        return f"{at})"
    return f"at least {fixed(curve.plateau_steps_per_s, 2)} steps/s (still rising at N={curve.saturation_workers})"


def unsimulated_text(curve: Curve) -> str:
    """Which asked N a stalled curve did not simulate, in words (its ``unsimulated_workers`` must be some)."""
    return (f"N={format_workers(curve.unsimulated_workers)} not simulated: the rate stalled by "
            f"N={curve.points[-1].n_workers}")


def stall_consequence(curve: Curve) -> str:
    """What a stalled curve's stall says of more workers (after :func:`unsimulated_text` and why it stalled): that
    they do not raise the rate, or, where the stall lies inside the seeds' noise (``stall_noise``), that it is not
    pinned: ``--steps 3`` on the bundled ps03 trace stalled by N=14 at 20.75 steps/s (±3.45), and ``--steps 30``
    simulated 21.96 at N=15."""
    if curve.stall_noise is None:
        return "so more workers do not raise it"
    stop, before, _ = curve.stall_noise
    return (f"but that is not pinned: N={stop} is under {STALL_GAIN:.0%} above N={before}, and "
            f"{noise_words(curve.stall_noise[2])}, so more workers may still raise it; more --steps or --seeds "
            "narrow it")


def knee_text(curve: Curve) -> str:
    """The knee in words: ``N=k``; ``N=k or later`` against a plateau that is a lower bound; or not reached.
    Where the N just below the knee were not simulated (``--workers 1,2,100``, ``--workers 5``), the knee is
    only known to lie among them or at k: ``N=k or earlier (N=3-99 not simulated)``; the bare ``N=100`` read
    as a finding that 3..99 workers fall short."""
    if curve.knee_n_workers is None:
        return f"not reached by N={curve.points[-1].n_workers}"
    k = curve.knee_n_workers
    below = simulated_below((p.n_workers for p in curve.points), k)
    if below == k - 1:
        return f"N={k}" + ("" if curve.plateau_reached else " or later")
    gap = f"N={below + 1}" if below + 1 == k - 1 else f"N={below + 1}-{k - 1}"
    if not curve.plateau_reached:  # a higher plateau moves it later; the unsimulated N may hold it
        return f"N={below + 1} or later ({gap} not simulated)"
    return f"N={k} or earlier ({gap} not simulated)"


def knee_mark(curve: Curve) -> str:
    """The knee as a chart marks it at its N (:func:`knee_short` with ``N``): ``N=k``, ``N<=k`` or ``N>=a``; ''
    for no knee."""
    if curve.knee_n_workers is None:  # nothing to mark at any N
        return ""
    short = knee_short((p.n_workers for p in curve.points), curve.knee_n_workers, curve.plateau_reached)
    return f"N={short}" if short[0].isdigit() else f"N{short}"


def knee_short(simulated: Iterable[int], k: int | None, plateau_reached: bool) -> str:
    """:func:`knee_text` in short, the one rule of the chart's mark, the shards table and ``shards.csv``, plan's
    table, ``plan.csv`` and ``plan.html``: ``k`` where the N just below the knee ``k`` were ``simulated`` and the
    plateau reached; ``<=k`` where they were not ('N=k or earlier'); ``>=a`` against a plateau that is a lower
    bound ('N=a or later': ``a`` the first N not simulated below ``k``, else ``k``); ``>n`` for no knee, ``n`` the
    largest N simulated ('not reached by N=n'; '' when none was). The marks showed a bare ``k`` where the words
    said 'N=3 or later', and the tables '-' or nothing where they said 'not reached by N=32'."""
    simulated = list(simulated)
    if k is None:
        return f">{max(simulated)}" if simulated else ""
    below = simulated_below(simulated, k)
    if not plateau_reached:
        return f">={below + 1}"
    return str(k) if below == k - 1 else f"<={k}"


def simulated_below(simulated: Iterable[int], k: int) -> int:
    """The largest of the ``simulated`` N below the knee ``k`` (0 for none): below ``k - 1``, the N between were
    not simulated, and the knee may lie among them (:func:`knee_text`, :func:`knee_short`)."""
    return max((n for n in simulated if n < k), default=0)


def scored_knee(knee_n_workers: int, n_points: int) -> str:
    """A knee of a curve scored against measurements, as validate's summary, report.md and report.html show it:
    ``-`` where one N was measured (a knee is a point of a curve: the knee of one point was that point, for the
    measurements and every predictor alike), else the N."""
    return "-" if n_points == 1 else str(knee_n_workers)


def range_score(inside_range: int | None, with_repeats: int) -> str:
    """A predictor's 'inside measured range' score as validate's summary, report.md and report.html say it: ``3 of
    4 N with repeats``, the N run two or more times whose measured min-max range holds the prediction, of those N;
    ``- (one run per N)`` where none ran twice (``inside_range`` None). An N run once has no range: its one value,
    missed by a prediction 0.1 % off, was counted as a range missed, and the count was 'of' every N measured."""
    return "- (one run per N)" if inside_range is None else f"{inside_range} of {with_repeats} N with repeats"
