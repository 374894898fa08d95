"""The scaling curve's points (tracegen/curve.py): what each point says of its runs."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics

import pytest

from parsers import read_trace
from tracegen.bottleneck import BUSY_THRESHOLD, busiest_label
from tracegen.curve import Curve, CurvePoint, scaling_curve
from tracegen.errors import ConfigError
from tracegen.link import uniform_link
from tracegen.metrics import ShardUse
from tracegen.model import build_model
from tracegen.simulate import SimConfig
from tracegen.workercounts import format_workers, parse_workers

from tracegen_support import curve_of


def test_a_point_s_bottleneck_agrees_with_the_utilisations_beside_it(mlp_trace_dir: pathlib.Path) -> None:
    """The bottleneck of a point was a vote of its seeds' own labels: the quick start's table printed push 78 %
    'link-push' at N = 2 and push 80 % 'workers' at N = 4. It is now the busiest of the utilisations averaged over
    the seeds, the figures printed beside it: 80 % or more names that resource, below it none."""
    model = build_model(read_trace(mlp_trace_dir))
    spec = uniform_link((6_000_000.0, 6_000_000.0), latency_ns=100_000)
    curve = scaling_curve(model, SimConfig(steps=6, warmup_steps=1, link_spec=spec), range(1, 7), seeds=3,
                          find_plateau=False)
    labels = set()
    for p in curve.points:
        name, value = max((("link-pull", p.pull_link_utilisation), ("link-push", p.push_link_utilisation),
                           ("ps-cpu", p.ps_cpu_utilisation)), key=lambda kv: kv[1])
        expected = {name} if value >= BUSY_THRESHOLD else {"workers", "contention"}
        assert p.bottleneck in expected, (p.n_workers, p.bottleneck, value)
        labels.add(p.bottleneck in ("workers", "contention"))
    assert labels == {True, False}  # the curve has points on both sides of the threshold


def test_a_link_that_carries_less_both_ways_is_the_bottleneck_at_what_it_carries_then(
        mlp_trace_dir: pathlib.Path) -> None:
    """A link given by its bandwidth alone carries 3/4 of it each way while the other direction is busy. Measured
    against its peak a direction never reached 80 %, and `predict --bandwidth 200Mbit/s` labelled every point of
    its link-bound plateau 'contention' (pull and push 69 %). A direction is now weighed against its two-way
    share, as the stall rule weighs it."""
    from tracegen.bottleneck import two_way_share
    from tracegen.link import PULL, PUSH

    model = build_model(read_trace(mlp_trace_dir))
    spec = uniform_link((6_000_000.0, 6_000_000.0), latency_ns=100_000, two_way_bytes_per_s=(4_500_000.0, 4_500_000.0))
    assert two_way_share(spec, PULL) == two_way_share(spec, PUSH) == 0.75
    curve = scaling_curve(model, SimConfig(steps=6, warmup_steps=1, link_spec=spec), range(1, 9), seeds=2,
                          find_plateau=False)
    last = curve.points[-1]
    busiest = max(last.pull_link_utilisation, last.push_link_utilisation)
    assert 0.75 * BUSY_THRESHOLD <= busiest < BUSY_THRESHOLD  # under 80 % of the peak, over 80 % of 3/4 of it
    assert last.bottleneck in ("link-pull", "link-push")


def test_a_resource_at_the_threshold_is_the_bottleneck_by_hand() -> None:
    """80 % or more names the busiest resource, below it none ('workers'); a link direction weighed against what
    it carries while the other is busy (here half its peak: 0.4 of the peak is 80 % of that)."""
    plain = uniform_link((1e6, 1e6))
    half = uniform_link((1e6, 1e6), two_way_bytes_per_s=(5e5, 5e5))

    def use(pull: float, push: float, cpu: float) -> ShardUse:
        return ShardUse(shard=0, pull=pull, push=push, cpu=cpu)

    assert busiest_label(use(BUSY_THRESHOLD, 0.5, 0.1), plain) == "link-pull"
    assert busiest_label(use(0.5, 0.79, 0.1), plain) == "workers"
    assert busiest_label(use(0.1, 0.2, BUSY_THRESHOLD), plain) == "ps-cpu"
    assert busiest_label(use(0.3, 0.4, 0.79), half) == "link-push"  # 0.4 / 0.5: 80 %, above the CPU's 79 %
    assert busiest_label(use(0.3, 0.39, 0.5), half) == "workers"


def test_parse_workers() -> None:
    assert parse_workers("1-4") == (1, 2, 3, 4)
    assert parse_workers("1,2,4,8") == (1, 2, 4, 8)
    assert parse_workers("8,1-2") == (1, 2, 8)
    assert format_workers(parse_workers("8,1-3,5,6")) == "1-3,5-6,8"
    for bad in ("0", "a", "3-1", "", "+3", "\u0663", "1-100001"):
        with pytest.raises(ConfigError, match="'workers'"):
            parse_workers(bad)
    with pytest.raises(ConfigError, match="'emit_traces': cannot read 'x'"):  # the option the list came from
        parse_workers("x", "emit_traces")


@pytest.mark.parametrize(("text", "said"), [
    ("", "'--workers': cannot read '' in '' (nothing given); write e.g. 1-16 or 1,2,4,8"),
    ("  ", "'--workers': cannot read '' in '  ' (nothing given); write e.g. 1-16 or 1,2,4,8"),
    ("1,,2", "'--workers': cannot read '' in '1,,2' (an empty entry); write e.g. 1-16 or 1,2,4,8"),
    ("4,", "'--workers': cannot read '' in '4,' (an empty entry); write e.g. 1-16 or 1,2,4,8"),
    ("4-", "'--workers': cannot read '4-' in '4-'; write e.g. 1-16 or 1,2,4,8"),
])
def test_an_empty_worker_list_or_entry_says_what_is_missing(text: str, said: str) -> None:
    """'--workers ""' and '--workers 1,,2' said "cannot read '' in ''": the nothing it could not read, unnamed."""
    with pytest.raises(ConfigError) as refused:
        parse_workers(text, "--workers")
    assert str(refused.value) == said


@pytest.mark.parametrize(("text", "said"), [
    ("1,1,2", "'--workers': '1,1,2' lists N=1 twice; give each N once"),
    (" 2, 2", "'--workers': ' 2, 2' lists N=2 twice; give each N once"),
    ("1-4,3", "'--workers': '1-4,3' lists N=3 twice ('1-4' and '3'); give each N once"),
    ("5,1-8", "'--workers': '5,1-8' lists N=5 twice ('5' and '1-8'); give each N once"),
    ("1-4,4-6", "'--workers': '1-4,4-6' lists N=4 twice ('1-4' and '4-6'); give each N once"),
    ("1-3,1-3", "'--workers': '1-3,1-3' lists N=1 twice; give each N once"),
])
def test_a_worker_count_given_twice_is_refused_not_dropped(text: str, said: str) -> None:
    """``--workers 1,1,2`` simulated N = 1 and 2 and said nothing of the repeat, a slip of the keyboard: the list
    was not the one meant. A repeat is refused, naming the option, the list and the N, as the other errors are."""
    with pytest.raises(ConfigError) as refused:
        parse_workers(text, "--workers")
    assert str(refused.value) == said


@pytest.mark.parametrize("text", ["1" * 5000, "1-" + "9" * 5000, "0" * 5000 + "1-" + "2" * 19])
def test_a_worker_count_of_thousands_of_digits_is_refused_in_one_short_line(text: str) -> None:
    """int() refuses 4300 digits and more with a ValueError: '--workers 111...1' was a traceback."""
    with pytest.raises(ConfigError) as refused:
        parse_workers(text, "--workers")
    said = str(refused.value)
    assert said.startswith("'--workers': '") and "must be N or LO-HI with 1 <= LO <= HI <=" in said
    assert len(said) < 250


def test_leading_zeros_are_read() -> None:
    assert parse_workers("0" * 5000 + "2-03") == (2, 3)


def _t_quantile_975(df: int) -> float:
    """Student's t at 97.5 % with ``df`` degrees of freedom, from its density (Simpson's rule, bisection): an
    independent reckoning of the table the curve's confidence intervals use."""
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(x: float) -> float:
        return scale * (1 + x * x / df) ** (-(df + 1) / 2)

    def mass(t: float, n: int = 400) -> float:  # from 0 to t
        h = t / n
        return h / 3 * (density(0) + density(t) + sum((4 if i % 2 else 2) * density(i * h) for i in range(1, n)))

    low, high = 0.0, 20.0
    for _ in range(45):
        mid = (low + high) / 2
        low, high = (mid, high) if mass(mid) < 0.475 else (low, mid)
    return (low + high) / 2


def test_the_confidence_intervals_t_is_students() -> None:
    """The t of ci95_half_width (a table to 30 degrees of freedom, then 1.96 + 2.4 / df, said to be within 0.003)
    against t worked out from its density; the reckoning itself checked where t has a closed form (df 1, 2)."""
    from tracegen.curve import ci95_half_width

    assert _t_quantile_975(1) == pytest.approx(math.tan(0.475 * math.pi), abs=1e-6)
    assert _t_quantile_975(2) == pytest.approx(0.95 * math.sqrt(2 / (4 * 0.975 * 0.025)), abs=1e-6)
    for n in [*range(2, 122), 201, 1001]:
        values = [float(i % 3) for i in range(n)]  # any spread: t is the half-width over s / sqrt(n)
        t = ci95_half_width(values) / (statistics.stdev(values) / math.sqrt(n))  # type: ignore[operator]
        exact = _t_quantile_975(n - 1)
        assert t == pytest.approx(exact, abs=0.0006 if n - 1 <= 30 else 0.003), (n - 1, t, exact)


def test_workers_that_never_meet_say_workers_at_every_n_even_at_the_knee() -> None:
    """Workers that never meet (one op a step, no transfers): no resource is busy at any N and each worker steps
    as fast as one alone, so every point says ``workers`` (module docstring), the knee included. Without a plateau
    search the plateau is the largest N's rate, 4 x one's, so N = 4 is the knee; the knee rule this replaced
    called that point ``contention`` though nothing contended."""
    from tracegen.model import StepModel, StepTiming, TaskKind
    from tracegen.wire import LinkEstimate

    model = StepModel(names=("c",), kinds=(TaskKind.COMPUTE,), size_bytes=(0,), data_preds=((),),
                      control_preds=((),), rank=(0,), first_need_ns=(0,),
                      timings=(StepTiming(dur_ns=(10_000_000,), delay_ns=(0,), step_ns=0),),
                      link=LinkEstimate(pull_bandwidth_bytes_per_s=10**9, push_bandwidth_bytes_per_s=10**9,
                                        latency_ns=0, method="given"))
    curve = scaling_curve(model, SimConfig(steps=3, warmup_steps=1), [1, 2, 4], seeds=1, find_plateau=False)
    assert curve.knee_n_workers == 4
    assert [p.bottleneck for p in curve.points] == ["workers", "workers", "workers"]


def test_a_point_whose_workers_slow_down_with_no_resource_busy_says_contention() -> None:
    """The bundled mlp trace with its profile: from N = 2 the workers wait on each other's transfers, each link
    direction short of busy. A point says ``workers`` exactly when its workers each step at EFFICIENT of N = 1's
    rate or more, whatever its place against the knee; the rest of the labels are busy resources'."""
    from parsers.read import read_trace
    from tracegen.bottleneck import EFFICIENT, idle_label
    from tracegen.config import PredictConfig
    from tracegen.inputs import load_profile, load_single_worker
    from tracegen.model import build_model
    from tracegen.preparation import prepared

    trace = "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    config = PredictConfig(link_profile=load_profile(f"{trace}/link-profile.json"),
                           single_worker=load_single_worker(f"{trace}/single-worker.json"))
    prep = prepared(build_model(read_trace(trace)), config)
    curve = scaling_curve(prep.model, config.sim_config(prep.links["mid"]), [1, 2, 3, 4], seeds=1,
                          find_plateau=False)
    one = curve.points[0].steps_per_s
    idle = [p for p in curve.points if p.bottleneck in ("workers", "contention")]
    assert any(p.bottleneck == "contention" for p in idle), [(p.n_workers, p.steps_per_s) for p in curve.points]
    for p in idle:
        assert p.bottleneck == idle_label(p.n_workers, p.steps_per_s, one)
        assert (p.bottleneck == "workers") == (p.steps_per_s >= EFFICIENT * one * p.n_workers)


def test_the_plateau_and_knee_in_words_say_a_lower_bound_is_one() -> None:
    from tracegen.curvetext import knee_text, plateau_text

    points = tuple(CurvePoint(n_workers=n, steps_per_s=2.0 * n, steps_per_s_low=2.0 * n, steps_per_s_high=2.0 * n,
                              pull_link_utilisation=0.0, push_link_utilisation=0.0, ps_cpu_utilisation=0.0,
                              bottleneck="workers") for n in (1, 2, 3))
    reached = Curve(points=points, plateau_steps_per_s=6.2, saturation_workers=5, knee_n_workers=3,
                    link_bound_steps_per_s=math.inf, ps_bound_steps_per_s=math.inf, link_description="x", n_events=0)
    rising = dataclasses.replace(reached, plateau_reached=False)
    assert (plateau_text(reached), knee_text(reached)) == ("6.20 steps/s (simulated at N=5)", "N=3")
    assert (plateau_text(rising), knee_text(rising)) == ("at least 6.20 steps/s (still rising at N=5)",
                                                         "N=3 or later")
    assert knee_text(dataclasses.replace(rising, knee_n_workers=None)) == "not reached by N=3"


def test_the_knee_in_words_does_not_claim_the_unsimulated_n_below_it_fall_short() -> None:
    # --workers 1,2,100 put the knee at N=100 though nothing between 2 and 100 was simulated
    from tracegen.curvetext import knee_text

    assert knee_text(curve_of((1, 2, 100), (44.0, 82.0, 96.0))) == "N=100 or earlier (N=3-99 not simulated)"
    assert knee_text(curve_of((5,), (92.0,))) == "N=5 or earlier (N=1-4 not simulated)"
    assert knee_text(curve_of((1, 3), (1.0, 3.0))) == "N=3 or earlier (N=2 not simulated)"
    rising = curve_of((1, 2, 100), (44.0, 82.0, 96.0), reached=False)
    assert knee_text(rising) == "N=3 or later (N=3-99 not simulated)"
    assert knee_text(curve_of((1, 2, 3), (1.0, 2.0, 3.0))) == "N=3"  # every N below it simulated: as before


def test_the_charts_knee_mark_says_at_most_where_the_n_below_it_were_not_simulated() -> None:
    # curve.png and report.html marked 'knee N=100' for --workers 1,2,100, as the words once did
    from tracegen.curvetext import knee_mark

    assert knee_mark(curve_of((1, 2, 100), (44.0, 82.0, 96.0))) == "N<=100"
    assert knee_mark(curve_of((1, 2, 3), (1.0, 2.0, 3.0))) == "N=3"
    assert knee_mark(curve_of((1, 2, 100), (44.0, 82.0, 96.0), reached=False)) == "N>=3"  # 'N=3 or later'


@pytest.mark.parametrize(("ns", "rates", "reached"), [
    ((1, 2, 100), (44.0, 82.0, 96.0), True), ((1, 2, 100), (44.0, 82.0, 96.0), False),
    ((1, 2, 3), (1.0, 2.0, 3.0), True), ((1, 2, 3), (1.0, 2.0, 3.0), False), ((5,), (92.0,), True),
    ((5,), (92.0,), False), ((1, 3), (1.0, 3.0), False)])
def test_the_knees_short_mark_says_what_its_words_say(ns: tuple[int, ...], rates: tuple[float, ...],
                                                      reached: bool) -> None:
    # the chart, report.html and the shards table marked a bare 'N=100' where the words said 'N=3 or later'
    from tracegen.curvetext import knee_mark, knee_short, knee_text

    curve = curve_of(ns, rates, reached=reached)
    words, mark = knee_text(curve), knee_mark(curve)
    short = knee_short(ns, curve.knee_n_workers, reached)
    n = words.split()[0]  # 'N=k', the N the words name
    qualifier = "<=" if " or earlier" in words else ">=" if " or later" in words else "="
    assert mark == n.replace("=", qualifier), (words, mark)
    assert short == mark[1:].removeprefix("=")


@pytest.mark.parametrize("reached", [True, False])
def test_the_knees_short_form_says_by_which_n_it_was_not_reached(reached: bool) -> None:
    # the short form was '' with no knee: the shards table printed '-', plan's table '-' and both CSVs nothing,
    # where the words say 'not reached by N=4'
    from tracegen.curvetext import knee_mark, knee_short, knee_text

    curve = dataclasses.replace(curve_of((1, 2, 4), (1.0, 2.0, 3.0), reached=reached), knee_n_workers=None)
    words = knee_text(curve)
    assert words.startswith("not reached by N=")
    assert knee_short((1, 2, 4), None, reached) == ">" + words.removeprefix("not reached by N=")
    assert knee_mark(curve) == ""  # a chart marks a knee at its N: none here

def point(n: int, rate: float, half: float | None) -> CurvePoint:
    """A curve point of ``n`` workers at ``rate`` steps/s whose seeds' 95 % half-width is ``half``."""
    return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                      pull_link_utilisation=0.0, push_link_utilisation=0.0, ps_cpu_utilisation=0.0,
                      bottleneck="workers", steps_per_s_ci95=half)


def test_a_plateau_search_stopped_inside_the_seeds_noise_is_not_called_pinned() -> None:
    # the search past the asked N ends on one comparison: a rise under 1 % from the N before. With the seeds' 95 %
    # interval wider even than the 5 % between knee and plateau, the stop says little, and the words 'plateau X
    # (simulated at N=5)' claimed it did
    from tracegen.curvetext import plateau_text
    from tracegen.plateau import KNEE_FRACTION, search_noise

    wide = 2 * (1 - KNEE_FRACTION) * 100.0
    assert search_noise(point(4, 100.0, wide), [point(5, 100.5, 0.1)]) == (5, 4, wide)
    assert search_noise(point(4, 100.0, 0.1), [point(8, 130.0, 0.2), point(16, 130.5, wide)]) == (16, 8, wide)
    assert search_noise(point(4, 100.0, 0.1), [point(5, 100.5, 0.2)]) is None  # the noise under the 1 %
    assert search_noise(point(4, 100.0, 2.0), [point(5, 100.5, 4.0)]) is None  # over 1 %, under the knee's 5 %
    assert search_noise(point(4, 100.0, None), [point(5, 100.5, None)]) is None  # one seed: no interval to judge
    assert search_noise(point(4, 100.0, wide), []) is None  # no search ran
    assert search_noise(point(4, 100.0, wide), [point(8, 120.0, wide)]) is None  # still rising: a lower bound
    assert search_noise(point(4, 100.0, wide), [point(5, 100.5, 0.1)], plateau=100.5, bound=101.0) is None  # at it
    curve = curve_of((1, 2, 4), (40.0, 70.0, 100.0))
    noisy = dataclasses.replace(curve, plateau_steps_per_s=100.5, saturation_workers=5, plateau_noise=(5, 4, wide))
    assert plateau_text(noisy).startswith(
        "100.50 steps/s (simulated at N=5; not pinned: the search stopped at N=5 on a rise under 1% from N=4, and the "
        "seeds' 95% interval there, ±10.00 steps/s, is wider than the 5% that sets the knee")
    assert plateau_text(dataclasses.replace(noisy, plateau_noise=None)) == "100.50 steps/s (simulated at N=5)"


def test_predict_with_few_steps_says_its_plateau_is_not_pinned(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # `tracegen predict data/traces/mlp --workers 1-4 --steps 3` printed 'plateau 94.22 steps/s (simulated at
    # N=5); knee: N=4' from one probe 0.7 % over N=4 (±6.05); --steps 30 went on to 96.33 at N=20 (knee not reached)
    from tracegen.cli import main
    from tracegen.plateau import KNEE_FRACTION

    assert main(["predict", str(mlp_trace_dir), "--workers", "1-4", "--steps", "3", "--out", str(tmp_path / "o")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("plateau "))
    assert "not pinned: the search stopped at N=" in line, line
    half = float(line.split("interval there, ±")[1].split(" ")[0])
    rows = (tmp_path / "o" / "curve.csv").read_text().splitlines()
    largest = float(rows[-1].split(",")[1])  # N=4's steps/s, or the probe's before it: the 5 % is of ~that
    assert half > (1 - KNEE_FRACTION) * largest


def test_a_stall_inside_the_seeds_noise_does_not_say_more_workers_do_not_raise_it(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `predict <ps03 trace> --workers 1-16 --steps 3` said 'the rate stalled by N=14 ..., so more workers do not
    # raise it' at 20.75 steps/s with the seeds' ±3.45 there; --steps 30 simulated 21.96 at N=15
    from tracegen.cli import main
    from tracegen.plateau import KNEE_FRACTION

    from tracegen_support import PLAN_TRACE

    out = tmp_path / "o"
    assert main(["predict", str(PLAN_TRACE), "--workers", "1-16", "--steps", "3", "--jobs", "1", "--out", str(out),
                 "--html"]) == 0
    printed = capsys.readouterr().out.splitlines()
    line = next(x for x in printed if "not simulated: the rate stalled by" in x)
    assert "so more workers do not raise it" not in line, line
    assert "not pinned" in line and "more --steps or --seeds narrow it" in line, line
    half = float(line.split("interval there, ±")[1].split(" ")[0])
    rates = {int(r.split(",")[0]): float(r.split(",")[1]) for r in (out / "curve.csv").read_text().splitlines()[1:]}
    assert half > (1 - KNEE_FRACTION) * max(rates.values())  # the claim checked against the curve written
    page = (out / "report.html").read_text()
    assert "so more workers do not raise" not in page and "not pinned" in page
    # the plateau rests on that stall, and its own line said 'plateau 20.75 steps/s (simulated at N=13)' as if pinned
    plateau = next(x for x in printed if x.startswith("plateau "))
    assert "not pinned: the rate stalled at N=" in plateau.split("; knee (95%")[0], plateau
    assert page.count("not pinned: the rate stalled at N=") == 1  # the page's lead, 'Plateau ...', says it too


def test_every_n_past_a_stall_inside_the_seeds_noise_says_the_plateau_is_not_pinned(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    # with --every-n no N goes unsimulated, so no line said the stall was noise; the plateau, which no search
    # past the asked N checked because of that stall, read 'plateau 21.60 steps/s (simulated at N=15)'
    from tracegen.cli import main
    from tracegen.plateau import KNEE_FRACTION

    from tracegen_support import PLAN_TRACE

    out = tmp_path / "o"
    assert main(["predict", str(PLAN_TRACE), "--workers", "1-16", "--steps", "3", "--jobs", "1", "--every-n",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert not any("not simulated" in x for x in printed), printed
    plateau = next(x for x in printed if x.startswith("plateau "))
    assert "not pinned: the rate stalled at N=" in plateau and "more --steps or --seeds narrow it" in plateau, plateau
    before = int(plateau.split("% from N=")[1].split(",")[0])
    half = float(plateau.split("interval there, ±")[1].split(" ")[0])
    rows = {int(r.split(",")[0]): r.split(",") for r in (out / "curve.csv").read_text().splitlines()[1:]}
    assert len(rows) == 16 and half > (1 - KNEE_FRACTION) * float(rows[before][1])  # against the curve written


def test_the_stall_and_the_plateau_search_judge_the_noise_by_one_rule() -> None:
    from tracegen.curvetext import stall_consequence
    from tracegen.plateau import KNEE_FRACTION, noise_between

    wide = 2 * (1 - KNEE_FRACTION) * 100.0
    assert noise_between(point(14, 100.0, wide), point(13, 100.0, 0.1)) == (14, 13, wide)
    assert noise_between(point(14, 100.0, 0.2), point(13, 100.0, 0.1)) is None  # tight seeds: the stall holds
    curve = curve_of((1, 2, 4), (40.0, 70.0, 100.0))
    assert stall_consequence(curve) == "so more workers do not raise it"
    noisy = stall_consequence(dataclasses.replace(curve, stall_noise=(14, 13, wide)))
    assert noisy.startswith("but that is not pinned: N=14 is under 1% above N=13, and the seeds' 95% interval "
                            "there, ±10.00 steps/s"), noisy
    # the plateau line says it too: no search ran past the stall, so the plateau rests on it
    from tracegen.curvetext import plateau_text

    assert plateau_text(curve) == "100.00 steps/s (simulated at N=4)"
    assert plateau_text(dataclasses.replace(curve, stall_noise=(14, 13, wide))) == (
        "100.00 steps/s (simulated at N=4; not pinned: the rate stalled at N=14 on a rise under 1% from N=13, and "
        "the seeds' 95% interval there, ±10.00 steps/s, is wider than the 5% that sets the knee; more --steps or "
        "--seeds narrow it)")
