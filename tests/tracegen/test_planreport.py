"""The plan's report (``tracegen/planreport.py``): the answer line, the table's cells and plan.csv keep the digits
a figure needs, tiny or huge, and mark what is a lower bound."""

from __future__ import annotations

import dataclasses
import math

import pytest

from parsers import read_trace
from parsers.catalogue import Catalogue
from tracegen.model import StepModel, build_model
from tracegen.plan import NOISE_MARGIN, STEP_BUDGET, Option, Plan
from tracegen.planreport import CSV_COLUMNS, plan_csv

from tracegen_support import PLAN_CONFIG, PLAN_TRACE, hand_option, hand_plan, inst, run_plan


@pytest.fixture(scope="module")
def model() -> StepModel:
    return build_model(read_trace(PLAN_TRACE))




def test_a_small_number_of_samples_is_not_priced_at_nothing(model: StepModel) -> None:
    """'--samples 1' printed '0.00 h and $0.00 for 1 samples', and plan.csv 0.000000 hours and 0.0000 dollars: a
    figure too small for its decimals is written with its first digits (a hardening pass)."""
    from tracegen.planreport import answer

    result = run_plan(model, config=dataclasses.replace(PLAN_CONFIG, samples=1))
    line = answer(result)
    assert " 0.00 h" not in line and "$0.00 for" not in line, line
    for row in plan_csv(result).splitlines()[1:]:
        cells = dict(zip(CSV_COLUMNS, row.split(","), strict=True))
        assert float(cells["hours_for_samples"]) > 0 and float(cells["usd_for_samples"]) > 0, row
    big = plan_csv(run_plan(model))  # the usual figures keep their fixed decimals
    assert all(len(c.split(",")[9].split(".")[1]) == 6 for c in big.splitlines()[1:])


def test_a_cheap_slow_cluster_is_not_written_as_free_or_idle(model: StepModel) -> None:
    """The previous fix wrote tiny hours and dollars with their digits, but not the cluster's $/h nor the rates:
    instances at $0.00001/h on a 1 kbit/s link printed '0 samples/s, $0.00/h' and plan.csv steps_per_s,
    cluster_usd_per_hour, plateau and band 0.0000, a plan of a free cluster that does nothing."""
    from tracegen.planreport import answer, pair_cells

    tiny = Catalogue(instances=(inst("tiny", "both", 0.00001, 0.001, 1000),))
    result = run_plan(model, tiny, dataclasses.replace(PLAN_CONFIG, workers=(1, 2)))
    line = answer(result)
    assert "$0.00/h" not in line and ": 0 samples/s" not in line, line
    for row in plan_csv(result).splitlines()[1:]:
        cells = dict(zip(CSV_COLUMNS, row.split(","), strict=True))
        for column in ("steps_per_s", "samples_per_s", "cluster_usd_per_hour", "plateau_samples_per_s",
                       "band_low_samples_per_s", "band_high_samples_per_s"):
            assert float(cells[column]) > 0, (column, row)
    shown = pair_cells(result.pairs[0], result.config.samples)
    samples_per_s, usd_per_hour, plateau, band = shown[3], shown[4], shown[9], shown[10]
    assert "0" not in (samples_per_s, plateau.rstrip("+")) and usd_per_hour != "0.00" and band != "0-0", shown


def test_a_slow_clusters_years_are_written_for_people(model: StepModel) -> None:
    """A slow cluster and many samples printed '387593000040.54 h and $387593000040.54' (12 digits to count, 20
    and more at the catalogue's extremes); the table and the answer now give three digits and the exponent, and
    plan.csv keeps every digit."""
    from tracegen.planreport import answer, pair_cells

    slow = Catalogue(instances=(inst("slow", "both", 0.5, 0.001, 1000),))
    result = run_plan(model, slow, dataclasses.replace(PLAN_CONFIG, workers=(1, 2), samples=1e12))
    best = result.pairs[0].best
    hours = best.hours_for(result.config.samples)
    assert hours > 1e7  # what the test is about: the figure is that large
    shown = pair_cells(result.pairs[0], result.config.samples)
    assert "e+" in shown[6] and math.isclose(float(shown[6]), hours, rel_tol=0.01), shown
    assert math.isclose(float(shown[7]), best.usd_for(result.config.samples), rel_tol=0.01), shown
    assert f"{float(shown[6]):.3g} h" in answer(result)
    row = dict(zip(CSV_COLUMNS, plan_csv(result).splitlines()[1].split(","), strict=True))
    assert "e" not in row["hours_for_samples"]


def test_a_slow_clusters_figures_keep_their_digits(model: StepModel) -> None:
    """Workers at a tenth of the traced node's speed and a PS on a 1 Mbit/s link (a catalogue's legal values): the
    table showed samples/s '1', plateau '1+' and band '1-1' for 0.714, 0.962 and 0.721 to 1.16 (a band that looks
    pinned), and plan.csv steps_per_s 0.0001 beside samples_per_s 0.0022 at a batch of 32."""
    from tracegen.planreport import pair_cells

    slow = Catalogue(instances=(inst("slow", "worker", 0.17, 0.1), inst("thin", "ps", 0.1, 1.0, 1_000_000)))
    result = run_plan(model, slow, dataclasses.replace(PLAN_CONFIG, workers=(1, 2, 3)))
    pair = result.pairs[0]
    assert pair.band_samples_per_s is not None and pair.plateau_samples_per_s < 10  # what the test is about
    shown = pair_cells(pair, result.config.samples)
    low, high = (float(end) for end in shown[10].rstrip("+").split("-"))
    assert math.isclose(float(shown[3]), pair.best.samples_per_s, rel_tol=0.01), shown
    assert math.isclose(float(shown[9].rstrip("+")), pair.plateau_samples_per_s, rel_tol=0.01), shown
    assert math.isclose(low, pair.band_samples_per_s[0], rel_tol=0.01), shown
    assert math.isclose(high, pair.band_samples_per_s[1], rel_tol=0.01), shown
    for row in plan_csv(result).splitlines()[1:]:
        cells = dict(zip(CSV_COLUMNS, row.split(","), strict=True))
        ratio = float(cells["samples_per_s"]) / float(cells["steps_per_s"])
        assert math.isclose(ratio, result.config.batch_size, rel_tol=0.01), row


def test_a_band_beside_a_plateau_not_reached_is_marked_a_lower_bound_too(model: StepModel) -> None:
    """On a 10 Gbit/s PS with N up to 7 the mlp's plateau is not reached: the table showed plateau '1956+' (a lower
    bound) beside band '1956-1956', as if the plateau were pinned at the rate it only starts from. The band,
    simulated at the same N, is marked '+' as the plateau is; a pair whose plateau is reached gets no '+'."""
    from tracegen.planreport import pair_cells

    wide = Catalogue(instances=(inst("w", "worker", 0.2, 1.0), inst("wide", "ps", 1.0, 1.0, 10_000_000_000),
                                inst("thin", "ps", 1.0, 1.0, 50_000_000)))
    result = run_plan(model, wide, dataclasses.replace(PLAN_CONFIG, workers=(1, 2, 3, 4, 5, 6, 7)))
    reached = {p.ps.name: p.plateau_reached for p in result.pairs}
    assert reached == {"wide": False, "thin": True}  # what the test is about
    for pair in result.pairs:
        plateau, band = pair_cells(pair, result.config.samples)[9:11]
        assert plateau.endswith("+") == band.endswith("+") == (not pair.plateau_reached), (plateau, band)


def test_the_table_note_says_for_how_many_samples_hours_and_dollars_are(model: StepModel) -> None:
    """The table's 'hours' and '$ total' columns were priced for --samples (1e8 unless given) with nothing in the
    table or its note saying so: only the answer line's '... for 1e+08 samples' told, and only for one option."""
    from tracegen.planreport import PAIR_HEADER, pair_cells, pair_note, plan_html

    result = run_plan(model, config=dataclasses.replace(PLAN_CONFIG, samples=3_000_000))
    note = pair_note(result.config.samples)
    assert "hours, $ total: to process 3e+06 samples (--samples)" in note, note
    cells = dict(zip(PAIR_HEADER, pair_cells(result.pairs[0], result.config.samples), strict=True))
    best = result.pairs[0].best
    assert float(cells["hours"]) == pytest.approx(3e6 / best.samples_per_s / 3600, rel=0.01)  # what the note says
    assert "to process 3e+06 samples" in plan_html(result, []).decode()


def test_a_knee_above_n_not_asked_is_shown_as_at_most(model: StepModel) -> None:
    """``plan --workers 1,2,32`` printed each pair's knee as 32 on the example catalogue, where every N from 1 to 32
    put it at 11 or 13: nothing between 2 and 32 was simulated. The cell says ``<=32``, as predict's 'or
    earlier'. Here: every pair's knee is 2 with N = 1-4 and 6 asked, and 12 with 1 and 12 only."""
    from tracegen.planreport import PAIR_HEADER, knee_cell, pair_cells

    gapped = run_plan(model, config=dataclasses.replace(PLAN_CONFIG, workers=(1, 12)))
    assert {p.knee_n_workers for p in gapped.pairs} == {12}  # what the simulations found: kept, in plan.csv too
    for pair in gapped.pairs:
        cells = dict(zip(PAIR_HEADER, pair_cells(pair, gapped.config.samples), strict=True))
        assert cells["knee"] == "<=12", cells
    for row in plan_csv(gapped).splitlines()[1:]:  # plan.csv says 'or earlier' too, beside the bare 12
        written = dict(zip(CSV_COLUMNS, row.split(","), strict=True))
        assert (written["knee_n_workers"], written["knee_as_printed"]) == ("12", "<=12"), row
    whole = run_plan(model)  # every N up to the knee asked: the bare N, as before
    assert [knee_cell(p) for p in whole.pairs] == [str(p.knee_n_workers) for p in whole.pairs]


def test_the_ps_cpu_per_transfer_is_not_called_traced_when_it_was_measured_untraced(model: StepModel) -> None:
    """plan's assumptions said '534 us traced, from single-worker.json' where predict, of the same figure, says
    'measured untraced': single-worker.json is one worker run without tracing. They now agree."""
    from tracegen.planreport import assumptions

    line = next(x for x in assumptions(run_plan(model)) if "CPU per transfer" in x)
    assert "from single-worker.json, measured untraced" in line and " traced, " not in line, line


def test_a_knee_not_reached_says_by_which_n_as_predict_does(model: StepModel) -> None:
    """Where no asked N reaches 95 % of the plateau (the example catalogue's 12xlarge PS rows), the table and
    plan.html showed knee '-' and the note 'not reached by the largest N asked', never which N; predict says 'not
    reached by N=2', and its shards table now '>2' (tracegen.curvetext.knee_short). plan says the same."""
    from tracegen.curvetext import knee_short
    from tracegen.planreport import PAIR_HEADER, pair_cells, pair_note, plan_html

    wide = Catalogue(instances=(inst("w", "worker", 0.2, 1.0), inst("wide", "ps", 1.0, 1.0, 10_000_000_000)))
    result = run_plan(model, wide, dataclasses.replace(PLAN_CONFIG, workers=(1, 2)))
    (pair,) = result.pairs
    assert pair.knee_n_workers is None and max(o.n_workers for o in pair.options) == 2
    cells = dict(zip(PAIR_HEADER, pair_cells(pair, result.config.samples), strict=True))
    assert cells["knee"] == ">2" == knee_short((1, 2), None, pair.plateau_reached), cells
    assert "knee >k: not reached by N=k, the largest N asked" in pair_note(result.config.samples)
    assert "<td>&gt;2</td>" in plan_html(result, []).decode()
    # plan.csv left knee_n_workers empty, with no column saying by which N: knee_as_printed is the table's cell
    for row in plan_csv(result).splitlines()[1:]:
        written = dict(zip(CSV_COLUMNS, row.split(","), strict=True))
        assert (written["knee_n_workers"], written["knee_as_printed"]) == ("", ">2"), row


@pytest.fixture(scope="module")
def one_n(model: StepModel) -> Plan:
    """A quick plan of the plan trace at plan's default coarseness: the model and links hand-made plans borrow."""
    return run_plan(model, config=dataclasses.replace(PLAN_CONFIG, workers=(1,), step_budget=STEP_BUDGET, seeds=1))


def _near_and_far(one_n: Plan) -> tuple[Plan, list[Option]]:
    """The cheapest (a), two options of b (N = 1 and 2) within half plan's margin of it, c twice the margin off."""
    cheapest = hand_option("a", 100.0)
    b1 = hand_option("b", 100 / (1 + NOISE_MARGIN / 2))
    b2 = hand_option("b", 1.5 * 100 / (1 + NOISE_MARGIN / 4), n=2)  # $3/h
    far = hand_option("c", 100 / (1 + 2 * NOISE_MARGIN))
    return hand_plan(one_n, [cheapest, b1, b2, far]), [cheapest, b1, b2, far]


def test_the_noise_line_names_the_options_plan_cannot_tell_from_the_cheapest(one_n: Plan) -> None:
    from tracegen.planreport import noise_line

    result, (_a, b1, b2, _far) = _near_and_far(one_n)
    usd = sorted(f"{o.usd_per_1000_samples:.3g}" for o in (b1, b2))
    rate = sorted((f"{o.samples_per_s:.0f}" for o in (b1, b2)), key=float)
    assert noise_line(result) == (
        f"within plan's noise ({NOISE_MARGIN:.0%}, benchmarks/plan_noise.py) of the cheapest: 2 other options, "
        f"1-2 x b + PS ps (${usd[0]}-{usd[1]} per 1000 samples, {rate[0]}-{rate[1]} samples/s); "
        "confirm with 'tracegen predict'")
    alone = hand_plan(one_n, [result.options[0], result.options[-1]])
    assert noise_line(alone) == (f"within plan's noise ({NOISE_MARGIN:.0%}, benchmarks/plan_noise.py) of the "
                                 "cheapest: no other option")
    # with a target: 'of the choice'; with other settings than the benchmark measured, said so
    targeted = hand_plan(one_n, list(result.options), target_samples_per_s=50.0)
    assert " of the choice: 2 other options, " in noise_line(targeted)
    finer = hand_plan(one_n, list(result.options), step_budget=64)
    assert f"({NOISE_MARGIN:.0%}, benchmarks/plan_noise.py, measured at --step-budget 16 and --seeds 1, not at " \
           "these) of the cheapest: " in noise_line(finer)
    none = hand_plan(one_n, list(result.options), target_samples_per_s=1000.0)
    assert noise_line(none).endswith(" below the target: no option")
    short = hand_plan(one_n, list(result.options), target_samples_per_s=b2.samples_per_s * (1 + NOISE_MARGIN / 2))
    assert short.chosen is None and " below the target: 1 option, 2 x b + PS ps (" in noise_line(short)


def test_plan_csv_marks_the_options_within_noise(one_n: Plan) -> None:
    result, options = _near_and_far(one_n)
    rows = [dict(zip(CSV_COLUMNS, line.split(","), strict=True)) for line in plan_csv(result).splitlines()[1:]]
    assert CSV_COLUMNS[-2:] == ("chosen", "within_noise")
    assert [(r["worker_type"], r["n_workers"], r["chosen"], r["within_noise"]) for r in rows] == [
        ("a", "1", "yes", "no"), ("b", "1", "no", "yes"), ("b", "2", "no", "yes"), ("c", "1", "no", "no")]
    assert len(rows) == len(options)


@pytest.mark.parametrize(("seeds", "budget", "said"), [
    (1, 16, "each point: 1 seed from 0, 16 measured steps over all workers"),
    (3, 1, "each point: 3 seeds from 0, 1 measured step over all workers"),
])
def test_the_assumptions_count_seeds_and_steps_in_words(one_n: Plan, seeds: int, budget: int, said: str) -> None:
    """The assumptions said 'each point: 1 seed(s) from 0'."""
    from tracegen.planreport import assumptions

    result = dataclasses.replace(one_n, config=dataclasses.replace(one_n.config, seeds=seeds, step_budget=budget))
    line = next(a for a in assumptions(result) if a.startswith("each point: "))
    assert line.startswith(said) and "(s)" not in line and "after 1 warm-up step each" in line, line
