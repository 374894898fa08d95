"""What a prediction simulates, prepared from its inputs: the links (from a link profile; from a bandwidth
alone, with the two ends of its band, :data:`BAND_TWO_WAY`; or the link the trace shows: :mod:`tracegen.predict`
says which wins) and, with a single-worker measurement that the replay of one worker falls short of, the step model
and links with tracing's cost undone (:mod:`tracegen.untraced`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tracegen.budget import MAX_EVENTS
from tracegen.config import PredictConfig
from tracegen.errors import ConfigError
from tracegen.estimate import engine_of, seconds_on_one_core, task_events
from tracegen.link import LinkSpec
from tracegen.linkspec import from_bandwidth, from_profile, with_single_worker
from tracegen.model import StepModel
from tracegen.simulate import SimConfig, resolve_link
from tracegen.units import format_wait
from tracegen.untraced import MAX_RUNS, fit_untraced, mismatch_note, untraced_link, untraced_model

BAND_TWO_WAY = {"low": 0.5, "mid": 0.75, "high": 1.0}

UNTRACED_SAY_S = 1.0  # seconds on one core tracing's cost may take to undo (prepared) before it is said


def resolve_links(model: StepModel, config: PredictConfig) -> dict[str, LinkSpec]:
    """The link(s) to simulate: ``{"mid": spec}``, plus ``"low"`` and ``"high"`` for a bandwidth alone."""
    if config.link_profile is not None:
        links = {"mid": from_profile(config.link_profile, model.link)}
    elif (payload := config.payload_bytes_per_s()) is not None:
        links = {name: from_bandwidth(payload, model.link, two_way=f) for name, f in BAND_TWO_WAY.items()}
    else:
        links = {"mid": resolve_link(model, SimConfig())}
    if config.single_worker is None:
        return links
    return {name: with_single_worker(spec, model, config.single_worker) for name, spec in links.items()}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """What to simulate: ``model`` and ``links`` with tracing's cost undone by ``speed`` (1: nothing undone), and the
    replay as traced (``traced_model``, ``traced_links``), which the band keeps (:func:`tracegen.band.band_curves`)."""

    model: StepModel
    links: dict[str, LinkSpec]
    traced_model: StepModel
    traced_links: dict[str, LinkSpec]
    speed: float = 1.0
    notes: tuple[str, ...] = ()  # what the user should know about the inputs (a measurement the replay misses)


def prepared(model: StepModel, config: PredictConfig, report: Callable[[str], None] | None = None) -> Prepared:
    """:func:`resolve_links`, then, with a single-worker measurement that the replay of one worker falls short
    of, tracing's cost undone (:mod:`tracegen.untraced`; one factor, found on the link the measurement was taken
    on, :func:`fit_link`, for every link). What that will cost is told to ``report`` first when it may take more
    than :data:`UNTRACED_SAY_S` (predict, validate: else a long run of steps is a silent minute before the
    curves' own estimate)."""
    links = resolve_links(model, config)
    if config.single_worker is None:
        return Prepared(model=model, links=links, traced_model=model, traced_links=links)
    # before the curves' budget (predict, validate): one worker up to MAX_RUNS times, at every seed and step asked
    run_events = task_events(model, (config.steps + config.warmup_steps) * config.seeds)
    events = MAX_RUNS * run_events
    if events > MAX_EVENTS:
        raise ConfigError(f"undoing tracing's cost ({config.single_worker.source or 'single-worker measurement'}) "
                          f"would simulate one worker up to {MAX_RUNS} times, about {events:.2g} events, "
                          f"{format_wait(seconds_on_one_core(events, 1, engine_of(config)))} on one core (more than "
                          f"the {MAX_EVENTS:.0e} allowed); ask for fewer steps or seeds")
    run_s = seconds_on_one_core(run_events, 1, engine_of(config))
    if report is not None and MAX_RUNS * run_s > UNTRACED_SAY_S:
        each = f"roughly {format_wait(run_s)}" if run_s >= 1 else "under a second"
        report(f"undoing tracing's cost: simulating one worker a few times (at most {MAX_RUNS}), about "
               f"{run_events:.2g} events a time: {each} a time on one core, {format_wait(MAX_RUNS * run_s)} at most")
    fit = fit_link(model, config, links)
    one_ps, measured = config.one_ps(fit), config.single_worker.steps_per_s
    speed, replayed = fit_untraced(model, one_ps, measured, seeds=config.seeds)
    note = mismatch_note(replayed, measured, speed)
    return Prepared(model=untraced_model(model, speed), traced_model=model, traced_links=links, speed=speed,
                    links={name: untraced_link(spec, speed) for name, spec in links.items()},
                    notes=(f"{config.single_worker.source or 'single-worker measurement'}: {note}",) if note else ())


def fit_link(model: StepModel, config: PredictConfig, links: dict[str, LinkSpec]) -> LinkSpec:
    """The link the single-worker measurement was taken on, where one worker's replay is set beside it to work out
    what tracing cost: the link profile when there is one (measured between the same two hosts); else the link
    the measurement names (its ``link_bits_per_s``, simulated as a bandwidth alone is); else the link predicted
    for, ``links["mid"]``. Tracing slows the hosts' CPUs, not the link, so the factor found there holds on any
    link; found on a slower link than the measurement's, one worker could never reach the measured rate, and the
    factor would run to its bound (``--bandwidth 200Mbit/s`` for a worker measured at 500: 4x)."""
    measured_on = None if config.single_worker is None else config.single_worker.link_bits_per_s
    if config.link_profile is not None or measured_on is None:
        return links["mid"]
    return resolve_links(model, dataclasses.replace(config, bandwidth_bytes_per_s=round(measured_on / 8)))["mid"]

