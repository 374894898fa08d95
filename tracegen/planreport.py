"""A plan as text: ``plan.csv`` (fixed decimals, so equal plans give equal bytes; a figure too small for them,
its first three digits), its assumptions, the table of pairs and the answer as the terminal and ``plan.html``
show them (:func:`plan_html`).

``plan.csv``: one row per option (a worker type, a PS type, N workers), pair by pair in catalogue order, N
ascending; the N past a pair's plateau that were not simulated have no row (:mod:`tracegen.plan`). Columns:

    worker_type, ps_type, n_ps, n_workers
                                        the option: N workers and n_ps PS (the traced job's PS tasks, or a K of
                                        ``--ps-shards``)
    steps_per_s, samples_per_s          predicted throughput of all workers together (samples = steps x batch)
    bottleneck                          as in ``curve.csv`` (:mod:`tracegen.curve`)
    cluster_usd_per_hour                N x the worker type's usd_per_hour + n_ps x the PS type's
    usd_per_1000_samples                dollars per 1,000 samples: cluster_usd_per_hour x 1000 / (3600 x samples_per_s)
    hours_for_samples, usd_for_samples  time and money to process the plan's ``samples``
    reaches_target                      yes / no; empty without a target
    knee_n_workers                      the pair's knee; empty when not reached in the asked N
    knee_as_printed                     the pair's knee as the table and plan.html show it (predict's
                                        ``tracegen.curvetext.knee_short``): k; ``<=k`` where the N just below k were not
                                        asked ('N=k or earlier'); ``>k`` where not reached by N=k, the largest asked
    plateau_samples_per_s               the pair's plateau (when not reached: the best rate seen, a lower bound)
    plateau_n_workers                   where it was seen
    plateau_in_range                    yes / no: whether the plateau lies within the asked N
    band_low_samples_per_s, band_high_samples_per_s
                                        the plateau on the half- and full-duplex ends of the PS type's rate
                                        (when not reached: the rates at its N, lower bounds too); empty when its
                                        link profile pins the link
    link_pinned                         yes when the PS type's link profile pinned the link
    best_of_pair                        yes on the pair's fewest-dollars-per-sample option
    chosen                              yes on the cheapest option reaching the target (or per sample)
    within_noise                        yes on the other options that plan's own noise cannot tell from the chosen
                                        one (``tracegen.plan.within_noise``): usd_per_1000_samples at most
                                        ``NOISE_MARGIN`` (a fraction, measured by benchmarks/plan_noise.py) above the
                                        chosen's and, with a target, samples_per_s at most that below the target;
                                        when no option reaches the target, yes on those within the margin below it
"""

from __future__ import annotations

from tracegen.config import MIN_STEPS
from tracegen.curvetext import knee_short
from tracegen.htmlpage import definitions, page, paragraph, section, table
from tracegen.link import PULL
from tracegen.plan import NOISE_MARGIN, WARMUP_STEPS, Option, Pair, Plan, PlanConfig, n_ps, within_noise
from tracegen.plateau import STALL_GAIN, STALL_POINTS
from tracegen.units import brief, counted, fixed, format_duration, format_rate
from tracegen.workercounts import format_workers

CSV_COLUMNS = ("worker_type", "ps_type", "n_ps", "n_workers", "steps_per_s", "samples_per_s", "bottleneck",
               "cluster_usd_per_hour", "usd_per_1000_samples", "hours_for_samples", "usd_for_samples",
               "reaches_target", "knee_n_workers", "knee_as_printed", "plateau_samples_per_s", "plateau_n_workers",
               "plateau_in_range", "band_low_samples_per_s", "band_high_samples_per_s", "link_pinned", "best_of_pair",
               "chosen", "within_noise")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def plan_csv(plan: Plan) -> str:
    """The plan's options as CSV (module docstring)."""
    samples, target = plan.config.samples, plan.config.target_samples_per_s
    lines = [",".join(CSV_COLUMNS)]
    near = {id(o) for o in within_noise(plan)}
    for pair in plan.pairs:
        best, band = pair.best, pair.band_samples_per_s
        for o in pair.options:
            lines.append(",".join([
                o.worker.name, o.ps.name, str(o.n_ps), str(o.n_workers), fixed(o.steps_per_s, 4),
                fixed(o.samples_per_s, 4), o.bottleneck, fixed(o.usd_per_hour, 4), fixed(o.usd_per_1000_samples, 6),
                fixed(o.hours_for(samples), 6), fixed(o.usd_for(samples), 4),
                "" if target is None else _yes(o.samples_per_s >= target),
                "" if pair.knee_n_workers is None else str(pair.knee_n_workers), knee_cell(pair),
                fixed(pair.plateau_samples_per_s, 4), str(pair.saturation_workers), _yes(pair.plateau_reached),
                "" if band is None else fixed(band[0], 4), "" if band is None else fixed(band[1], 4),
                _yes(pair.ps.link_profile is not None), _yes(o is best), _yes(o is plan.chosen),
                _yes(id(o) in near)]))
    return "\n".join(lines) + "\n"


def assumptions(plan: Plan) -> list[str]:
    """What the plan assumed, one line each, to print beside its answer."""
    cfg, traced, model = plan.config, plan.traced_link, plan.model
    pinned = sorted({p.ps.name for p in plan.pairs if p.ps.link_profile is not None})
    unpinned = sorted({p.ps.name for p in plan.pairs if p.ps.link_profile is None})
    quota = traced.ps_quota is not None and traced.ps_cores is not None and traced.ps_quota.applies(traced.ps_cores)
    rpc = traced.rpc_cpu_ns[PULL]
    return [
        "worker ops and the gaps before them: traced time / the worker type's compute_speed (catalogue; the "
        "worker's cores are not used: compute_speed is its speed)",
        "PS ops (as CPU work" + (f", taken out of the traced PS's {traced.ps_cores:g}-core quota" if quota else "")
        + f"), the gaps before them and the PS's CPU per transfer ({format_duration(rpc)} on the traced hosts' PS, "
        + ("from single-worker.json, measured untraced" if plan.measured_rpc
           else "from the link profile beside the trace" if rpc else "none known")
        + ") / the PS type's compute_speed; the PS gets all the PS type's cores, no quota",
        "not scaled: the gaps before transfers, and one worker's connection, at most what the traced worker's moved "
        f"({format_rate(model.link.pull_bandwidth_bytes_per_s)} pulling) and the worker type's link_bits_per_s: "
        "pessimistic when the trace's link was slower than the catalogue's (trace on the instance type to lift it)",
        f"the PS link: the PS type's link_bits_per_s from the catalogue, {cfg.payload_fraction:.2%} of it tensor "
        "payload each way"
        + (f"; pinned by its link profile for {', '.join(pinned)}" if pinned else "")
        + (f"; NOT pinned for {', '.join(unpinned)} (a rate only): the plateau's band_low/band_high bound it"
           if unpinned else ""),
        (f"cost: N workers + K PS for each K asked, the parameters placed {plan.placement} on K PS of the type, "
         "each with its own link of the type's rate;" if plan.placement else f"cost: N workers + {n_ps(model)} PS"
         + (" (the traced job's PS tasks, each keeping its traced parameters)" if n_ps(model) > 1 else ""))
        + " at the catalogue's usd_per_hour, nothing else (storage, traffic, idle time); "
        f"{cfg.batch_size} samples per step",
        f"each point: {counted(cfg.seeds, 'seed')} from {cfg.seed}, {counted(cfg.step_budget, 'measured step')} "
        f"over all workers (at least {MIN_STEPS} each) after {counted(WARMUP_STEPS, 'warm-up step')} each, coarser "
        "than predict's; N past a "
        f"plateau ({STALL_POINTS} in a row adding < {STALL_GAIN:.0%}) not simulated: they only add cost. Confirm "
        "the chosen option with 'tracegen predict'",
        *(f"warning: {note}" for note in plan.notes),
    ]


PAIR_HEADER = ("workers", "ps", "best N", "samples/s", "$/h", "$/1k smp", "hours", "$ total", "knee", "plateau",
               "band", "bottleneck")


def pair_note(samples: float) -> str:
    """What the table's columns (:data:`PAIR_HEADER`) mean that their names do not say: ``hours`` and ``$ total``
    alone left the reader to guess for how many samples (``--samples``, 1e8 unless given)."""
    return (f"best N: the pair's fewest dollars per sample, at which samples/s, $/h, $/1k smp, hours, $ total and "
            f"bottleneck are given; hours, $ total: to process {samples:g} samples (--samples); knee >k: not reached "
            "by N=k, the largest N asked; knee <=k: the N "
            "just below k were not asked (--workers), and it may lie among them; plateau +: not reached by the "
            "largest N asked (the bounds say more workers add more), a lower bound, as a band with + beside it; "
            "band: the plateau on a half- and a full-duplex link of the same rate")


def pair_cells(pair: Pair, samples: float) -> list[str]:
    """One pair's row of the table (:data:`PAIR_HEADER`), formatted."""
    b = pair.best
    more = "" if pair.plateau_reached else "+"  # the band was simulated where the plateau's lower bound was
    band = ("pinned" if pair.band_samples_per_s is None
            else f"{fixed(pair.band_samples_per_s[0], 0)}-{fixed(pair.band_samples_per_s[1], 0)}{more}")
    ps = b.ps.name if pair.n_ps == 1 else f"{pair.n_ps} x {b.ps.name}"
    return [b.worker.name, ps, str(b.n_workers), fixed(b.samples_per_s, 0), fixed(b.usd_per_hour, 2),
            f"{b.usd_per_1000_samples:.3g}", brief(b.hours_for(samples), 2), brief(b.usd_for(samples), 2),
            knee_cell(pair), fixed(pair.plateau_samples_per_s, 0) + more, band, b.bottleneck]


def knee_cell(pair: Pair) -> str:
    """The pair's knee in the table, as ``predict``'s shards table has it (:func:`tracegen.curvetext.knee_short`):
    ``<=k`` when the N just below it were not asked (``--workers 1,2,32`` gave 'knee 32' where every N from 1 to 32
    gave 11), as ``predict`` says 'or earlier'; ``>k`` when not reached by N=k, the largest asked (it said ``-``,
    not by which N)."""
    return knee_short((o.n_workers for o in pair.options), pair.knee_n_workers, pair.plateau_reached)


def _option(o: Option, samples: float) -> str:
    return (f"{o.n_workers} x {o.worker.name} + {'' if o.n_ps == 1 else f'{o.n_ps} x '}PS {o.ps.name}: "
            f"{fixed(o.samples_per_s, 0)} samples/s, "
            f"${fixed(o.usd_per_hour, 2)}/h, ${o.usd_per_1000_samples:.3g} per 1000 samples, "
            f"{brief(o.hours_for(samples), 2)} h and ${brief(o.usd_for(samples), 2)} for {samples:g} samples")


def answer(plan: Plan) -> str:
    """The plan's answer in one line: the cheapest option reaching the target (or per sample), or none."""
    cfg = plan.config
    target = cfg.target_samples_per_s
    if plan.chosen is None:
        return f"target {target:g} samples/s: none reaches it; the fastest is {_option(plan.fastest, cfg.samples)}"
    if target is None:
        return f"cheapest per sample: {_option(plan.chosen, cfg.samples)}"
    return f"cheapest reaching {target:g} samples/s: {_option(plan.chosen, cfg.samples)}"


def noise_line(plan: Plan) -> str:
    """What plan's own noise leaves open beside its answer (:func:`tracegen.plan.within_noise`): the other options
    it cannot tell from the chosen one, pair by pair (their N, dollars per 1,000 samples and samples/s, each a
    range), or that there are none; with a target none reaches, the options within the noise below it."""
    cfg = plan.config
    measured = f"{NOISE_MARGIN:.0%}, benchmarks/plan_noise.py"
    default = PlanConfig()
    if (cfg.step_budget, cfg.seeds) != (default.step_budget, default.seeds):  # the benchmark measured these only
        measured += f", measured at --step-budget {default.step_budget} and --seeds {default.seeds}, not at these"
    of = ("below the target" if plan.chosen is None
          else "of the cheapest" if cfg.target_samples_per_s is None else "of the choice")
    near = within_noise(plan)
    noun = "option" if plan.chosen is None else "other option"
    if not near:
        return f"within plan's noise ({measured}) {of}: no {noun}"
    pairs: dict[tuple[str, str, int], list[Option]] = {}
    for o in near:
        pairs.setdefault((o.worker.name, o.ps.name, o.n_ps), []).append(o)
    groups = []
    for (worker, ps, k), options in pairs.items():
        usd = _span([f"{o.usd_per_1000_samples:.3g}" for o in options])
        rate = _span([fixed(o.samples_per_s, 0) for o in options])
        groups.append(f"{format_workers([o.n_workers for o in options])} x {worker} + {'' if k == 1 else f'{k} x '}"
                      f"PS {ps} (${usd} per 1000 samples, {rate} samples/s)")
    return (f"within plan's noise ({measured}) {of}: {counted(len(near), noun)}, "
            f"{'; '.join(groups)}; confirm with 'tracegen predict'")


def _span(cells: list[str]) -> str:
    """The lowest and highest of the figures ``cells`` as ``low-high``, or the one figure when they are one."""
    low, high = min(cells, key=float), max(cells, key=float)
    return low if low == high else f"{low}-{high}"


def plan_html(plan: Plan, inputs: list[tuple[str, str]]) -> bytes:
    """The plan as one self-contained page: the answer, the table of pairs, the assumptions and the inputs."""
    rows = [pair_cells(pair, plan.config.samples) for pair in plan.pairs]
    return page("Which cluster to rent", [
        paragraph(answer(plan), "summary"),
        paragraph(noise_line(plan)),
        section("Options (each pair of a worker type and a PS type at its best N)",
                table(PAIR_HEADER, rows, table_id="pairs"), paragraph(pair_note(plan.config.samples))),
        section("Assumptions", *(paragraph(line) for line in assumptions(plan))),
        section("Inputs", definitions(inputs)),
    ])
