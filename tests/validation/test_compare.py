"""Measurements in, scores out: the CSV contract, hand-computed scores, and malformed files."""

from __future__ import annotations

import pathlib

import pytest

from validation.compare import compare, comparison_csv, cpu_markdown, knee_note, knee_of, report_markdown
from validation.errors import ConfigError
from validation.measured import read_measured


def _csv(tmp_path: pathlib.Path, text: str) -> pathlib.Path:
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


def test_scores_by_hand(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "n_workers,repeat,steps_per_s\n1,0,1.0\n1,1,1.2\n2,0,2.0\n2,1,2.0\n"
                                        "3,0,1.9\n3,1,2.1\n"))
    result = compare(runs, {"good": [1.1, 2.0, 2.0], "flat": [1.1, 1.1, 1.1]})
    assert list(result.table["measured_mean"]) == pytest.approx([1.1, 2.0, 2.0])
    # the sample standard deviation (n - 1): two runs 0.2 apart are 0.2 / sqrt(2) from their mean's spread
    assert list(result.table["measured_std"]) == pytest.approx([0.2 / 2**0.5, 0.0, 0.2 / 2**0.5])
    assert list(result.table["measured_min"]) == [1.0, 2.0, 1.9]
    assert list(result.table["measured_max"]) == [1.2, 2.0, 2.1]
    good, flat = result.scores["good"], result.scores["flat"]
    assert (good.mape, good.max_error, good.inside_range) == (0.0, 0.0, 3)
    assert flat.mape == pytest.approx((0 + 0.45 + 0.45) / 3)
    assert flat.max_error == pytest.approx(0.45)
    assert (result.measured_knee_n_workers, good.knee_n_workers, flat.knee_n_workers) == (2, 2, 1)
    text = report_markdown(result, {"link": "x"}, "t")
    assert "| good | 0.0% | 0.0% | 2 | 3 of 3 N with repeats |" in text
    assert "| flat | 30.0% | 45.0% | 1 | 1 of 3 N with repeats |" in text


def test_one_run_per_n_has_no_range_to_be_inside(tmp_path: pathlib.Path) -> None:
    """A user's CSV with one run per N: every measured range is one value, and the report said 'inside measured
    range 0 of 2' of a prediction 0.1 % off, as if it had missed a range."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n2,2.0\n"))
    result = compare(runs, {"close": [1.001, 2.0]})
    assert result.scores["close"].inside_range is None
    assert "| close | 0.0% | 0.1% | 2 | - (one run per N) |" in report_markdown(result, {}, "t")
    # one N measured twice: its range counts, the other N's one value is a range of one
    twice = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n1,1.2\n2,2.0\n"))
    score = compare(twice, {"close": [1.1, 2.001]}).scores["close"]
    assert (score.inside_range, score.with_repeats) == (1, 1)


def test_inside_measured_range_counts_only_the_n_with_repeats(tmp_path: pathlib.Path) -> None:
    """N = 2 ran once: its one value was counted as a range, which a prediction of exactly that value was 'inside'
    and one 0.1 % off was not, and the count was 'of' every N measured ('2 of 3'), not of the N with a range."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n1,1.2\n2,2.0\n3,1.9\n3,2.1\n"))
    # N = 1: 1.1 inside 1.0-1.2; N = 2: one run, no range; N = 3: 3.0 above 1.9-2.1
    result = compare(runs, {"exact": [1.1, 2.0, 3.0], "off": [1.1, 2.002, 3.0], "both": [1.2, 5.0, 1.9]})
    assert {n: (s.inside_range, s.with_repeats) for n, s in result.scores.items()} == {
        "exact": (1, 2), "off": (1, 2), "both": (2, 2)}
    text = report_markdown(result, {}, "t")
    assert "| inside measured range |" in text
    for name, inside in (("exact", 1), ("off", 1), ("both", 2)):
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
        assert f" | {inside} of 2 N with repeats | " in row, row


def test_knee_is_the_first_point_reaching_95_percent() -> None:
    assert knee_of([1, 2, 3, 4], [1.0, 1.9, 2.0, 1.8]) == 2
    assert knee_of([1, 2, 4], [3.0, 2.0, 1.0]) == 1


def test_bandwidth_with_units_and_settings(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s,bandwidth,extra\n1,1.5,500Mbit/s,x\n2,2,500Mbit/s,y\n"))
    assert list(runs["bandwidth_bytes_per_s"]) == [62_500_000, 62_500_000]
    with pytest.raises(ConfigError, match=r"m\.csv:3: the link's rate is 400000000 bits/s, not 800000000 as on line 2"):
        read_measured(_csv(tmp_path, "n_workers,steps_per_s,bandwidth_bits_per_s\n1,1,8e8\n2,2,4e8\n"))


def test_where_the_cpu_went_per_n_with_the_ps_cpu_per_step(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "n_workers,repeat,steps_per_s,ps_cpu_cores,host_busy_cores,host_steal_cores\n"
                                        "1,0,10,0.1,0.5,0.0\n1,1,10,0.3,0.7,0.2\n2,0,20,0.2,,\n"))
    text = cpu_markdown(runs)
    assert "| N | PS | host busy | stolen by the hypervisor | PS CPU per step |" in text
    assert "| 1 | 0.20 | 0.60 | 0.10 | 20.0 ms |" in text  # means over the repeats; 0.2 cores / 10 steps/s
    assert "| 2 | 0.20 | - | - | 10.0 ms |" in text  # a window the host was not read for
    assert cpu_markdown(read_measured(_csv(tmp_path, "n_workers,steps_per_s,ps_cpu_cores\n1,2,\n"))) == ""


def test_the_ps_wakeups_and_preemptions_per_step(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s,ps_cpu_cores,ps_wakeups_per_s,ps_preemptions_per_s\n"
                                        "1,10,0.2,3000,50\n4,40,0.4,4000,400\n"))
    text = cpu_markdown(runs)
    assert "| N | PS | PS CPU per step | PS wake-ups per step | PS preemptions per step |" in text
    assert "| 1 | 0.20 | 20.0 ms | 300.0 | 5.0 |" in text
    assert "| 4 | 0.40 | 10.0 ms | 100.0 | 10.0 |" in text
    only = read_measured(_csv(tmp_path, "n_workers,steps_per_s,ps_wakeups_per_s\n1,10,3000\n"))
    assert "| 1 | 300.0 |" in cpu_markdown(only)  # an older file's cores missing, the switches alone still shown


def test_a_band_is_scored_by_hand(tmp_path: pathlib.Path) -> None:
    """The band's score (means inside it, ends included, and its median width over the mean) was checked only
    against scores.csv, which the same code wrote: worked out here by hand."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n2,2.0\n3,4.0\n4,5.0\n"))
    # N=1: 1.0 on the low end (inside); N=2: 2.0 on the high end (inside); N=3: 4.0 above (out); N=4: inside
    low, high = [1.0, 1.5, 3.0, 4.0], [1.35, 2.0, 3.6, 6.0]
    result = compare(runs, {"b": [1.1, 1.8, 3.3, 5.0], "plain": [1.0, 2.0, 4.0, 5.0]}, {"b": (low, high)})
    b, plain = result.scores["b"], result.scores["plain"]
    assert b.in_band == 3
    # widths over the mean: 0.35, 0.25, 0.15, 0.4 -> median (0.25 + 0.35) / 2 (their mean is 0.2875)
    assert b.band_width == pytest.approx(0.3)
    assert (plain.in_band, plain.band_width) == (None, None)
    assert list(result.table["b_band_low"]) == low and list(result.table["b_band_high"]) == high
    # errors 0.1, 0.1, 0.175, 0: MAPE 0.09375; the knee is the first N at 95 % of the highest (5.0): N = 4
    assert "| b | 9.4% | 17.5% | 4 | - (one run per N) | 3 of 4 | 30% |" in report_markdown(result, {}, "t")


def test_one_n_measured_has_no_knee_to_score(tmp_path: pathlib.Path) -> None:
    """A user's CSV of one N: the report gave 'knee (measured 4)' and a knee of 4 to every predictor, each that one
    point, as if every predictor had found the measured knee."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n4,16.8\n4,17.0\n"))
    text = report_markdown(compare(runs, {"sim": [17.0]}), {}, "t")
    assert "| knee (measured -) |" in text and "| sim | 0.6% | 0.6% | - | 1 of 1 N with repeats |" in text
    assert "One N measured (4): no knee, which needs a curve" in text
    assert knee_note([4]) is not None and knee_note([1, 2, 3]) is None


def test_a_knee_among_n_with_gaps_says_which_n_it_could_not_see(tmp_path: pathlib.Path) -> None:
    """Measured at N = 1, 2, 4, 8 the knee is 4 whether the curve flattened at 3 or at 4: the report said 'knee
    (measured 4)' as of every N. N = 1 missing is such a gap too."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,10\n2,15\n4,20\n8,20.5\n"))
    text = report_markdown(compare(runs, {"sim": [10, 15, 20, 20]}), {}, "t")
    assert "| knee (measured 4) |" in text and "| sim | 0.6% | 2.4% | 4 |" in text
    assert ("The knee is the smallest N measured (1-2, 4, 8) within 95% of the highest: a knee at an N not measured "
            "(3, 5-7) shows as the next N measured." in text)
    assert "(1) shows as the next N measured" in (knee_note([2, 3, 4, 5]) or "")


def test_the_band_is_shown_per_n_with_the_means_outside_it_named(tmp_path: pathlib.Path) -> None:
    """report.md gave 'means inside band 3 of 4' and no band: which N fell outside, and by how much, was only in
    comparison.csv, and what the band is was said nowhere in the report."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n2,2.0\n3,4.0\n4,5.0\n"))
    low, high = [1.0, 1.5, 3.0, 4.0], [1.35, 2.0, 3.6, 6.0]
    text = report_markdown(compare(runs, {"b": [1.1, 1.8, 3.3, 5.0], "plain": [1.0, 2.0, 4.0, 5.0]},
                                   {"b": (low, high)}), {}, "t")
    assert "| N | repeats | measured mean | measured range | b (error) | plain (error) | b band |" in text
    assert "| 2 | 1 | 2.000 | 2.000 to 2.000 | 1.800 (10.0%) | 2.000 (0.0%) | 1.500 to 2.000 |" in text
    assert "| 3 | 1 | 4.000 | 4.000 to 4.000 | 3.300 (17.5%) | 4.000 (0.0%) | 3.000 to 3.600 (mean outside) |" in text
    assert text.count("(mean outside)") == 1 and "Band (b): where each N's rate can lie" in text
    assert "Band (" not in report_markdown(compare(runs, {"plain": [1.0, 2.0, 4.0, 5.0]}), {}, "t")


def test_the_spread_of_one_run_is_unknown_not_zero(tmp_path: pathlib.Path) -> None:
    """comparison.csv gave a user's single runs 'measured_std 0.0000', as if each N repeated exactly."""
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,1.0\n2,2.0\n2,2.0\n3,3.0\n3,3.2\n"))
    text = comparison_csv(compare(runs, {"p": [1.0, 2.0, 3.1]})).decode()
    rows = [line.split(",") for line in text.splitlines()]
    std = rows[0].index("measured_std")
    assert [row[std] for row in rows[1:]] == ["", "0.0000", "0.1414"]
