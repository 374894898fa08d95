"""The bandwidth-only band, anchored to what one untraced worker measured.

With only a bandwidth, :mod:`tracegen.predict` simulates the two ends of what the link can do (half and full
duplex). That band covers the link's unknowns only: at N = 1, where the link's two directions hardly meet, it is
a few per cent wide, yet the replayed step itself can be off by much more — tracing slows every op and transfer
(a traced ``deep`` step takes 105 ms, the same step untraced 79 ms), and the PS's request handling is spread
over the transfers by estimate. When a single-worker measurement (``single-worker.json``) gives the untraced
rate, the simulation's own error at N = 1 is known: ``factor`` = measured rate / simulated rate, both on the link
the measurement was taken on (:func:`tracegen.preparation.fit_link`; a prediction for a slower link would otherwise
blame the link's own slowness on the replay). Nothing says
whether that error stays the same at larger N (a compute-bound error fades once the link saturates), so the
band is widened to hold both the simulation as it is and the simulation scaled by ``factor``, at every N; the
scaled high end never exceeds the link's full-duplex bound (each direction at its payload rate: bytes cannot move
faster). On that link, at N = 1 the band then holds the measured rate by construction, since it is an input.
:func:`band_curves` simulates the two ends (their links: :mod:`tracegen.preparation`) and anchors them so.
"""

from __future__ import annotations

import dataclasses

from tracegen.config import PredictConfig
from tracegen.curve import Curve, CurvePoint, Simulations, scaling_curve
from tracegen.errors import ConfigError
from tracegen.link import LinkSpec
from tracegen.model import StepModel
from tracegen.preparation import Prepared, fit_link


def band_edges(curve: Curve, band: tuple[Curve, Curve]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per N of ``curve``, the band's low and high steps/s as every output shows them (``curve.csv``, its plot,
    the HTML report, the terminal): the ends' own seeds widened to hold ``curve``'s, so that a band never leaves
    out the point predicted beside it (the point has tracing's cost undone, the band not: :func:`anchored`)."""
    low = tuple(min(lo.steps_per_s_low, p.steps_per_s_low) for lo, p in zip(band[0].points, curve.points, strict=True))
    high = tuple(max(hi.steps_per_s_high, p.steps_per_s_high)
                 for hi, p in zip(band[1].points, curve.points, strict=True))
    return low, high


def anchored(band: tuple[Curve, Curve], factor: float) -> tuple[Curve, Curve]:
    """``band`` (low curve, high curve) widened to hold itself scaled by ``factor`` (module docstring)."""
    if not factor > 0:
        raise ValueError(f"'factor' must be > 0 (got {factor})")
    low, high = band
    cap = high.link_bound_steps_per_s

    def lower(p: CurvePoint) -> CurvePoint:
        return dataclasses.replace(p, steps_per_s=min(p.steps_per_s, p.steps_per_s * factor),
                                   steps_per_s_low=min(p.steps_per_s_low, p.steps_per_s_low * factor),
                                   steps_per_s_high=min(p.steps_per_s_high, p.steps_per_s_high * factor))

    def upper(p: CurvePoint) -> CurvePoint:
        def up(v: float) -> float:
            return max(v, min(v * factor, cap))
        return dataclasses.replace(p, steps_per_s=up(p.steps_per_s), steps_per_s_low=up(p.steps_per_s_low),
                                   steps_per_s_high=up(p.steps_per_s_high))

    return (dataclasses.replace(low, points=tuple(lower(p) for p in low.points)),
            dataclasses.replace(high, points=tuple(upper(p) for p in high.points)))


def band_curves(prep: Prepared, config: PredictConfig, workers: tuple[int, ...], *, find_plateau: bool = True,
                processes: Simulations | None = None) -> tuple[Curve, Curve]:
    """The bandwidth-only band: the traced replay at the link's two extremes, widened to hold it scaled by the
    measured single worker's rate when there is one (:func:`anchored`). The replay as traced, not with
    tracing's cost undone: whether that correction holds at larger N is itself uncertain, and the band is there
    to cover what the point prediction cannot know."""
    low, high = (scaling_curve(prep.traced_model, config.sim_config(prep.traced_links[end]), workers,
                               seeds=config.seeds, find_plateau=find_plateau, processes=processes)
                 for end in ("low", "high"))
    if config.single_worker is None:
        return low, high
    fit = fit_link(prep.traced_model, config, prep.traced_links)  # where the measurement was taken
    return anchored((low, high), single_worker_factor(prep.traced_model, config, fit))


def single_worker_factor(model: StepModel, config: PredictConfig, spec: LinkSpec) -> float:
    """The measured single-worker rate over the simulated one (one worker like the traced one, one PS)."""
    if config.single_worker is None:
        raise ConfigError("no single-worker measurement to compare N = 1 with")
    one = scaling_curve(model, config.one_ps(spec), (1,), seeds=config.seeds, find_plateau=False).points[0]
    return config.single_worker.steps_per_s / one.steps_per_s

