"""``tracegen predict``: files, determinism, the link it uses, the band, the knee, and refusals."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import pathlib
import re
import shutil
import statistics
from collections.abc import Callable

import pytest

from parsers import TraceError, read_trace
from parsers.chrome import load_events
from parsers.linkprofile import PROFILE_NAME, LinkProfile, ProfilePoint, read_link_profile, write_link_profile
from parsers.perfetto import check_perfetto
from parsers.singleworker import SINGLE_WORKER_NAME, SingleWorker, write_single_worker
from tracegen.cli import main
from tracegen.cli_predict import add_predict_arguments, run_predict
from tracegen.curve import CurvePoint, knee, saturation_workers
from tracegen.errors import ConfigError
from tracegen.model import TaskKind, build_model
from tracegen.plots import CSV_COLUMNS
from tracegen.predict import batch_size_of


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tracegen predict")
    add_predict_arguments(parser)
    return parser.parse_args(argv)


def rows(path: pathlib.Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_predict_writes_curve_plot_and_traces(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(mlp_trace_dir), "--workers", "1-3,6", "--steps", "4", "--seeds", "2", "--emit-traces", "1,3"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert "knee (95% of the plateau)" in out and "estimated from the trace" in out
    table = rows(tmp_path / "a" / "curve.csv")
    assert tuple(table[0]) == CSV_COLUMNS
    assert [int(r["n_workers"]) for r in table] == [1, 2, 3, 6]
    for r in table:  # two seeds: low and high are the two runs, and the point their mean
        low, mean, high = (float(r[k]) for k in ("steps_per_s_low", "steps_per_s", "steps_per_s_high"))
        assert mean == pytest.approx((low + high) / 2, abs=1e-4)
        assert r["band_low"] == r["band_high"] == ""  # no bandwidth given: the trace's own link, no band
    assert any(float(r["steps_per_s_low"]) < float(r["steps_per_s_high"]) for r in table)  # the seeds differ
    assert (tmp_path / "a" / "curve.png").read_bytes().startswith(b"\x89PNG")
    events, _ = load_events((tmp_path / "a" / "traces" / "n3.json").read_bytes(), "n3.json")
    assert check_perfetto(events) == []
    # same trace, config and seed: byte-identical outputs
    assert run_predict(parse([*argv, "--out", str(tmp_path / "b")])) == 0
    for name in ("curve.csv", "traces/n1.json", "traces/n3.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_bandwidth_alone_gives_a_band_around_the_prediction(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = parse([str(mlp_trace_dir), "--workers", "1,2,8", "--bandwidth", "200Mbit/s", "--steps", "6",
                  "--seeds", "2", "--out", str(tmp_path)])
    assert run_predict(args) == 0
    out = capsys.readouterr().out
    assert "the plateau is NOT pinned" in out and "200 Mbit/s" in out
    saturated = rows(tmp_path / "curve.csv")[-1]  # 8 workers on 200 Mbit/s: the link is the limit
    assert float(saturated["band_high"]) > 1.2 * float(saturated["band_low"])
    # curve.csv writes each end as min(band end, seeds' low) and max(band end, seeds' high), so the band holds the
    # seeds' range whatever the ends are: on a saturated link each end must reach past it on its own side, the
    # slow end (half the two-way capacity) below the slowest seed, the fast end (full) above the fastest
    assert float(saturated["band_low"]) < float(saturated["steps_per_s_low"])
    assert float(saturated["band_high"]) > float(saturated["steps_per_s_high"])


def _profile(rate: float) -> LinkProfile:
    points = tuple(ProfilePoint(mode=m, connections=k, pull_bytes_per_s=rate if m != "push" else 0.0,
                                push_bytes_per_s=rate if m != "pull" else 0.0, probe_rtt_ns=1_000_000)
                   for m in ("pull", "push", "both") for k in (1, 2))
    return LinkProfile(tool="test", date="2026-12-01T00:00:00Z", ps={}, client={}, tensors=1, tensor_bytes=4,
                       window_s=1.0, points=points, idle_rtt_ns=1_000_000)


def test_a_profile_beside_the_trace_is_used_and_named(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    write_link_profile(_profile(5e6), trace / PROFILE_NAME)
    assert run_predict(parse([str(trace), "--workers", "1,4", "--steps", "4", "--seeds", "1",
                              "--out", str(tmp_path / "o")])) == 0
    out = capsys.readouterr().out
    assert f"link profile {trace / PROFILE_NAME}" in out
    table = rows(tmp_path / "o" / "curve.csv")
    bytes_per_step = build_model(read_trace(trace)).bytes_of(TaskKind.PULL)
    assert float(table[-1]["steps_per_s"]) <= 5e6 / bytes_per_step * 1.05  # the profile's 5 MB/s binds
    # --bandwidth wins over the profile beside the trace, and says so
    assert run_predict(parse([str(trace), "--workers", "1", "--bandwidth", "1Gbit/s", "--steps", "4",
                              "--seeds", "1", "--out", str(tmp_path / "p")])) == 0
    assert "is not used: --bandwidth was given" in capsys.readouterr().out


@pytest.mark.parametrize("name", [PROFILE_NAME, SINGLE_WORKER_NAME])
def test_a_folder_of_a_measurements_name_beside_the_trace_is_refused_not_passed_over(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """It was silently not a measurement: the prediction fell back to the trace's own link, saying nothing."""
    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    (trace / name).mkdir()
    assert main(["predict", str(trace), "--workers", "1", "--steps", "3", "--seeds", "1",
                 "--out", str(tmp_path / "o")]) == 2
    assert f"{trace / name}: a directory, not a regular file" in capsys.readouterr().err
    assert not (tmp_path / "o" / "curve.csv").exists()


def test_outputs_are_never_replaced_without_asking(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    pulls = [model.names[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    order = tmp_path / "order.txt"
    order.write_text("# last pull first\n" + "\n".join(reversed(pulls)) + "\n")
    base = [str(mlp_trace_dir), "--workers", "2", "--policy", str(order), "--steps", "3", "--seeds", "1",
            "--out", str(tmp_path / "o")]
    assert run_predict(parse([*base, "--emit-traces", "2"])) == 0
    with pytest.raises(ConfigError, match=r"curve\.csv: already exists; pass --force"):
        run_predict(parse(base))
    # --force replaces the whole earlier run: its traces/n2.json does not survive beside the new curve
    assert run_predict(parse([*base, "--force"])) == 0
    assert not (tmp_path / "o" / "traces" / "n2.json").exists()
    order.write_text("no_such_tensor\n")
    with pytest.raises(ConfigError, match="no_such_tensor"):
        run_predict(parse([*base, "--force"]))


def test_bad_options_raise_config_errors(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match="'10 furlongs'"):
        run_predict(parse([str(mlp_trace_dir), "--bandwidth", "10 furlongs", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match="'--workers'"):
        run_predict(parse([str(mlp_trace_dir), "--workers", "4-2", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match="'--steps' must be from 3"):
        run_predict(parse([str(mlp_trace_dir), "--steps", "2", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match="'out' must name a directory"):
        run_predict(parse([str(mlp_trace_dir), "--out", ""]))
    # by the option's name, not predict's field ('policy', 'placement'), and --placement before the trace is read
    with pytest.raises(ConfigError, match=r"'--policy': cannot read order file 'no-such-order\.txt'"):
        run_predict(parse([str(mlp_trace_dir), "--policy", "no-such-order.txt", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match=r"'--placement' must be round-robin, greedy or a placement file \(got "
                                          r"'nowhere.csv': no such file\)"):
        run_predict(parse([str(mlp_trace_dir), "--ps-shards", "2", "--placement", "nowhere.csv", "--out",
                           str(tmp_path)]))


def test_the_batch_size_from_meta_json_is_refused_when_unclear(tmp_path: pathlib.Path) -> None:
    """A meta.json that says two things, or something that is not a batch size, was read as batch size 1."""
    assert batch_size_of(str(tmp_path), None) == 1  # no meta.json
    meta = tmp_path / "meta.json"
    meta.write_text('{"batch_size": 32}')
    assert batch_size_of(str(tmp_path), None) == 32 and batch_size_of(str(tmp_path), 8) == 8
    meta.write_text('{"batch_size": "32"}')
    with pytest.raises(ConfigError, match=r"meta\.json: 'batch_size' must be an integer from 1 to 10\^9 \(got '32'\)"):
        batch_size_of(str(tmp_path), None)
    meta.write_text('{"batch_size": 32, "batch_size": 64}')
    with pytest.raises(TraceError, match=r"meta\.json: the top-level object: key 'batch_size' appears twice"):
        batch_size_of(str(tmp_path), None)


def test_too_many_emitted_traces_are_refused_before_any_work(mlp_trace_dir: pathlib.Path,
                                                             tmp_path: pathlib.Path) -> None:
    """Each emitted trace is a simulation of its own: the estimate that refuses a too-large job counts them."""
    argv = [str(mlp_trace_dir), "--workers", "1", "--emit-traces", "1-100000", "--out", str(tmp_path / "o")]
    with pytest.raises(ConfigError, match=r"would simulate about .* of them for 'emit_traces' 1-100000; ask for"):
        run_predict(parse(argv))
    assert not (tmp_path / "o" / "curve.csv").exists()


def test_traces_larger_than_the_free_disk_space_are_refused_before_any_work(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--emit-traces 100000 passed the event budget and would have written about 100 GB, filling the disk hours
    later (a hardening pass). The traces' size is estimated before anything is simulated (about 140 bytes per
    estimated event on the bundled traces) and checked against the free space where they would go."""
    from tracegen import outputs

    free = 1_000_000  # the file system the outputs go to, as if it had 1 MB free
    monkeypatch.setattr(outputs.OutputDir, "free_bytes", lambda _self: free)
    argv = [str(mlp_trace_dir), "--workers", "1", "--steps", "4", "--seeds", "1", "--emit-traces", "40",
            "--out", str(tmp_path / "o")]
    with pytest.raises(ConfigError, match=r"'emit_traces' 40: the synthetic traces would take about \d.* MB, more "
                                          r"than the 1 MB free in .*o'; ask for fewer"):
        run_predict(parse(argv))
    assert not (tmp_path / "o" / "curve.csv").exists()
    free = 10**12  # enough: the same run goes through and writes what it estimated, within a factor of two
    assert run_predict(parse(argv)) == 0
    written = (tmp_path / "o" / "traces" / "n40.json").stat().st_size
    estimate = float(re.search(r"about ([\d.]+) MB", str(capsys.readouterr())).group(1)) * 1e6  # type: ignore[union-attr]
    assert estimate / 2 < written < estimate * 2


def test_an_emitted_trace_too_large_to_read_back_is_named_on_a_warning_line(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's event limit lowered to 100 (a real one holds 200,000): the trace is still written, and the
    run says which tools cannot open it."""
    monkeypatch.setattr("tracegen.synth.MAX_RECORDS", 100)
    argv = [str(mlp_trace_dir), "--workers", "1", "--bandwidth", "1Gbit/s", "--emit-traces", "2", "--out",
            str(tmp_path / "o")]
    assert run_predict(parse(argv)) == 0
    output = capsys.readouterr()
    warning = [line for line in (output.out + output.err).splitlines() if line.startswith("warning: n2.json is ")]
    assert len(warning) == 1 and "tracegen inspect and convert" in warning[0], output
    assert (tmp_path / "o" / "traces" / "n2.json").is_file()


def point(n: int, rate: float) -> CurvePoint:
    return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                      pull_link_utilisation=0, push_link_utilisation=0, ps_cpu_utilisation=0, bottleneck="workers")


def test_knee_is_measured_against_the_plateau_not_the_range_asked() -> None:
    curve = [point(1, 1.0), point(2, 1.89), point(3, 1.96), point(4, 2.0), point(5, 1.7)]
    assert knee(curve, plateau=2.0) == 3
    # 'reaches': a point at exactly 95 % of the plateau (0.95 x 2.0 is the float 1.9) is the knee
    assert knee([point(1, 1.0), point(2, 1.9), point(3, 2.0)], plateau=2.0) == 2
    # a curve still climbing: its largest N is no knee
    assert knee([point(n, float(n)) for n in range(1, 9)], plateau=20.0) is None


def test_a_curve_stalls_after_three_points_each_under_one_percent_above_the_best() -> None:
    from tracegen.curve import stalled_after

    assert stalled_after([1.0, 2.0, 2.01, 1.9, 2.0]) == 4
    assert stalled_after([1.0, 2.0, 2.01, 1.9, 2.03, 2.0, 2.0, 2.0]) == 7  # 2.03: 1.5 % over 2.0, counted anew
    assert stalled_after([1.0, 1.006, 1.012, 1.018]) is None  # 0.6 % a point: over 1 % in two
    assert stalled_after([float(n) for n in range(1, 20)]) is None
    # a flat stretch below saturation (workers in lock-step) starts the count again: dev mlp_500, N = 2..4
    flat = [10.8, 17.5, 17.3, 17.6, 17.4, 18.7, 19.0, 20.6, 21.2]
    busy = [False, False, False, False, False, False, False, True, True]
    assert stalled_after(flat) == 4 and stalled_after(flat, busy) is None
    assert stalled_after([*flat, 21.2, 21.3, 21.1], [*busy, True, True, True]) == 11
    # a point between saturated ones starts the count again (not merely left out of it)
    assert stalled_after([1.0] * 5, [True, True, False, True, True]) is None
    assert stalled_after([1.0] * 6, [True, True, False, True, True, True]) == 5
    # exactly 1 % above the best (1.0 x 1.01 is the float 1.01) is not above it: a stalled point
    assert stalled_after([1.0, 1.01, 1.01, 1.01]) == 3


def test_a_curve_past_its_plateau_is_not_simulated_and_each_point_simulated_is_the_same(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real mlp trace behind its own (traced) link saturates the pull direction by N = 6: by default predict
    stops there, the N after it not simulated and said so; every N it does simulate is the --every-n curve's
    point to the bit, in one process or two, and --every-n gives all of them."""
    from tracegen.curve import scaling_curve, simulate_job
    from tracegen.processes import Processes
    from tracegen.simulate import SimConfig, resolve_link

    model = build_model(read_trace(mlp_trace_dir))
    config = SimConfig(steps=6, warmup_steps=1, link_spec=resolve_link(model, SimConfig()))
    every = scaling_curve(model, config, range(1, 17), seeds=2)
    stopped = scaling_curve(model, config, range(1, 17), seeds=2, stop_at_plateau=True)
    with Processes(simulate_job, 2) as pool:
        side = scaling_curve(model, config, range(1, 17), seeds=2, stop_at_plateau=True, processes=pool)
    assert side == stopped
    kept = [p.n_workers for p in stopped.points]
    assert kept == list(range(1, kept[-1] + 1)) and 4 <= kept[-1] < 16
    assert stopped.unsimulated_workers == tuple(range(kept[-1] + 1, 17)) and not every.unsimulated_workers
    assert stopped.points == every.points[:len(kept)]
    assert stopped.plateau_steps_per_s == max(p.steps_per_s for p in stopped.points)
    assert abs(every.plateau_steps_per_s / stopped.plateau_steps_per_s - 1) < 0.03
    assert stopped.n_events < every.n_events / 2
    argv = [str(mlp_trace_dir), "--workers", "1-16", "--steps", "6", "--warmup-steps", "1", "--seeds", "2"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert re.search(r"N=\d+-16 not simulated: the rate stalled by N=\d+", out), out
    assert [int(r["n_workers"]) for r in rows(tmp_path / "a" / "curve.csv")] == kept
    assert run_predict(parse([*argv, "--every-n", "--out", str(tmp_path / "b")])) == 0
    assert "not simulated" not in capsys.readouterr().out
    assert len(rows(tmp_path / "b" / "curve.csv")) == 16


def test_a_link_given_by_its_bandwidth_saturates_at_what_it_carries_both_ways(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--bandwidth`` each direction carries 3/4 of its rate while the other is busy, so measured against
    its peak it never looked 90 % busy: the stall rule never fired, and ``--workers 1-3000`` on the mlp trace was
    still simulating N = 183 after two minutes. A direction is now saturated at 90 % of its two-way ceiling."""
    from tracegen.curve import SATURATED, saturated, two_way_share
    from tracegen.linkspec import from_bandwidth

    model = build_model(read_trace(mlp_trace_dir))
    link = from_bandwidth(125_000_000, model.link, two_way=0.75)
    assert two_way_share(link, 0) == pytest.approx(0.75) and two_way_share(link, 1) == pytest.approx(0.75)
    busy = dataclasses.replace(point(10, 30.0), pull_link_utilisation=0.7, push_link_utilisation=0.69)
    assert saturated(busy, link) and not saturated(busy)
    under = SATURATED * 0.75 - 0.01
    assert not saturated(dataclasses.replace(busy, pull_link_utilisation=under, push_link_utilisation=under), link)
    # each resource on its own: the push direction against its two-way ceiling too, the PS's CPU against 90 %
    idle = dataclasses.replace(busy, pull_link_utilisation=0.1, push_link_utilisation=0.1)
    assert saturated(dataclasses.replace(idle, push_link_utilisation=0.7), link)
    assert not saturated(dataclasses.replace(idle, push_link_utilisation=0.7))
    assert saturated(dataclasses.replace(idle, ps_cpu_utilisation=SATURATED), link)
    assert not saturated(dataclasses.replace(idle, ps_cpu_utilisation=SATURATED - 0.01), link)
    argv = [str(mlp_trace_dir), "--bandwidth", "1Gbit/s", "--workers", "1-40", "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    out = capsys.readouterr().out
    assert re.search(r"N=\d+-40 not simulated: the rate stalled by N=\d+", out), out


def test_saturation_workers_covers_the_bound() -> None:
    assert saturation_workers(1.0, 10.0, 8) == 16  # 1.5 x 10 / 1, plus one
    assert saturation_workers(1.0, float("inf"), 8) == 8
    assert saturation_workers(0.001, 10.0, 4) == 256


def test_the_plateau_search_doubles_n_while_the_rate_still_rises() -> None:
    from tracegen.curve import PLATEAU_PROBES, plateau_search

    asked: list[int] = []

    def at(rates: dict[int, float]) -> Callable[[int], float]:
        def rate(n: int) -> float:
            asked.append(n)
            return rates[n]
        return rate

    # 8 asked at 10.0: 16 adds 10 %, 32 under 1 % more: the plateau is 32's
    assert plateau_search(8, 10.0, 8, at({16: 11.0, 32: 11.05})) == (32, 11.05, True) and asked == [16, 32]
    asked.clear()  # the bound's N past the asked range comes first; a fall keeps the best before it
    assert plateau_search(4, 5.0, 10, at({10: 9.0, 20: 8.5})) == (10, 9.0, True) and asked == [10, 20]
    asked.clear()  # still rising at the last doubling: a lower bound, and never past the cap
    rising = {n: float(n) for n in (16, 32, 64, 128, 256)}
    assert plateau_search(8, 8.0, 8, at(rising)) == (8 * 2 ** PLATEAU_PROBES, float(8 * 2 ** PLATEAU_PROBES), False)
    asked.clear()  # at the cap, still rising: a lower bound too
    assert plateau_search(200, 1.0, 200, at({256: 2.0})) == (256, 2.0, False) and asked == [256]
    asked.clear()  # nothing past a range that reaches the cap: its largest N's rate, as before
    assert plateau_search(300, 1.0, 300, at({})) == (300, 1.0, True) and asked == []
    # ... but a range that reaches the cap still climbing (2 steps/s a worker up to N = 300) was called reached,
    # and its knee put near its last N: a lower bound, as past the cap
    assert plateau_search(300, 600.0, 300, at({}), rising=True) == (300, 600.0, False) and asked == []


def test_a_curve_that_reaches_the_cap_still_rising_has_not_reached_its_plateau() -> None:
    """_plateau_past tells plateau_search whether the asked curve still rose at its largest N."""
    from tracegen.curve import STALL_GAIN, CurvePoint, _plateau_past

    def point(n: int, rate: float) -> CurvePoint:
        return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                          pull_link_utilisation=0.1, push_link_utilisation=0.1, ps_cpu_utilisation=0.1,
                          bottleneck="workers")

    def never(n: int) -> float:
        raise AssertionError(f"nothing is simulated past the cap (asked N={n})")

    climbing = [point(n, 2.0 * n) for n in (1, 150, 300)]
    assert _plateau_past(climbing, 0, never) == (300, 600.0, False)
    flat = [*climbing[:2], point(300, 300.0 * (1 + STALL_GAIN / 2))]  # under 1 % above the best before it
    assert _plateau_past(flat, 0, never) == (300, 300.0 * (1 + STALL_GAIN / 2), True)
    assert _plateau_past([point(300, 600.0)], 0, never)[2] is False  # one point: not shown to have stopped


@pytest.mark.parametrize("start", [0, 3, 20, 100, 256, 1000])
@pytest.mark.parametrize("largest", [1, 8, 40, 200, 300])
def test_the_cost_estimate_counts_the_plateau_search_s_worst_case(largest: int, start: int) -> None:
    """What predict estimates for a curve still climbing at its largest N is what the search simulates when the
    rate keeps rising from where it starts: the same N, none missed (the estimate took twice the largest N for
    the start, and a search from 20 for a range up to 1 was estimated at 2, 4 and 8 workers, not 20, 40, 80)."""
    from tracegen.curve import plateau_probes, plateau_search

    asked: list[int] = []

    def rising(n: int) -> float:
        asked.append(n)
        return float(n)

    plateau_search(largest, float(largest), start, rising)
    assert plateau_probes(largest, start) == tuple(asked)


def test_the_cost_estimate_s_plateau_probes_are_near_the_n_the_search_simulates(mlp_trace_dir: pathlib.Path) -> None:
    """``--workers 1-2`` on the mlp trace at 10 Gbit/s climbs far past N = 2: the plateau search starts near the N
    that saturates the bound (one and a half times it), and the estimate must count workers like those it
    simulates there, not 4, 8 and 16 (twice the range, then doubled), a sixth of the events at most."""
    from tracegen.curve import plateau_probes, scaling_curve
    from tracegen.predict import PredictConfig, likely_plateau_start, resolve_links

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=(1, 2), bandwidth_bytes_per_s=1_250_000_000, steps=3, warmup_steps=1, seeds=1)
    spec = resolve_links(model, config)["mid"]
    probes = plateau_probes(2, likely_plateau_start(model, config, spec))
    curve = scaling_curve(model, config.sim_config(spec), config.workers, seeds=1)
    assert curve.saturation_workers > 2 * 2 ** 3  # the search went past what twice the range, doubled, reaches
    # the estimate's start is the roofline's, the search's the simulated single worker's: near, not the same
    assert min(abs(p - curve.saturation_workers) for p in probes) <= 0.25 * curve.saturation_workers, probes


def test_the_knee_does_not_move_with_the_range_asked_once_the_range_covers_it(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The quick start's trace (its profile and single-worker file beside it) climbs slowly past N = 8 (21.2
    steps/s there, about 22 from N = 12 on): asked 1-8, the plateau was the rate at N = 8 and the knee N = 7, a
    knee of the range asked, not of the curve. The plateau search past the range gives the knee that 1-12 gives."""
    trace = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    knees = []
    for workers in ("1-8", "1-12"):
        assert run_predict(parse([str(trace), "--workers", workers, "--out", str(tmp_path / workers)])) == 0
        out = capsys.readouterr().out
        found = re.search(r"plateau ([\d.]+) steps/s \(simulated at N=\d+\); knee \(95% of the plateau\): N=(\d+);",
                          out)
        assert found, out
        table = rows(tmp_path / workers / "curve.csv")
        assert float(found[1]) >= max(float(r["steps_per_s"]) for r in table)
        knees.append(int(found[2]))
    assert knees[0] == knees[1]


def test_a_single_worker_measurement_beside_the_trace_is_used_and_named(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    common = [str(trace), "--workers", "1,8", "--bandwidth", "10Gbit/s", "--steps", "4", "--seeds", "1"]
    assert run_predict(parse([*common, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert "per transfer" not in out and "binds this plateau" not in out
    measured = SingleWorker(steps_per_s=2.0, window_s=30.0, ps_cpu_s_per_step=0.2, ps_cores=0.5)
    write_single_worker(measured, trace / SINGLE_WORKER_NAME)
    assert run_predict(parse([*common, "--out", str(tmp_path / "b")])) == 0
    out = capsys.readouterr().out
    assert f"using {trace / SINGLE_WORKER_NAME}" in out and "of CPU per transfer" in out
    # bound by the PS's CPU, measured at N = 1 only: the plateau's caveat is said
    assert "note: the PS's CPU binds this plateau at the single-worker run's 200.0 ms per step" in out
    # 0.2 s of PS CPU a step on half a core: at most 2.5 steps/s, however fast the link
    assert float(rows(tmp_path / "b" / "curve.csv")[-1]["steps_per_s"]) <= 2.5 * 1.02
    assert float(rows(tmp_path / "a" / "curve.csv")[-1]["steps_per_s"]) > 5.0


def test_the_seed_spread_is_a_confidence_interval_of_the_mean(mlp_trace_dir: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    from tracegen.curve import ci95_half_width

    assert ci95_half_width([1.0, 2.0, 3.0]) == pytest.approx(4.303 / 3**0.5)  # t(2) x s / sqrt(n), s = 1
    assert ci95_half_width([5.0]) is None
    assert ci95_half_width([2.0] * 50) == 0.0
    base = [str(mlp_trace_dir), "--workers", "2,4", "--steps", "4"]
    assert run_predict(parse([*base, "--seeds", "1", "--out", str(tmp_path / "one")])) == 0
    assert run_predict(parse([*base, "--seeds", "3", "--out", str(tmp_path / "three")])) == 0
    assert all(r["steps_per_s_ci95"] == "" for r in rows(tmp_path / "one" / "curve.csv"))
    for r in rows(tmp_path / "three" / "curve.csv"):
        half = float(r["steps_per_s_ci95"])
        # three seeds: t(2) s / sqrt(3) = 2.48 s, wider than half the min-max range, which is at most s
        assert half >= (float(r["steps_per_s_high"]) - float(r["steps_per_s_low"])) / 2
        # and exactly that: the three seeds' rates are the low, the high and what makes the point their mean
        # (4-decimal figures: 1e-3 holds their rounding); a normal 1.96 s / sqrt(3) or a population s passed above
        low, mean, high = (float(r[k]) for k in ("steps_per_s_low", "steps_per_s", "steps_per_s_high"))
        seeds = [low, 3 * mean - low - high, high]
        assert low <= seeds[1] <= high and high - low > 0.01  # the seeds differ: the figure can tell
        assert half == pytest.approx(4.303 * statistics.stdev(seeds) / 3**0.5, abs=1e-3)


def test_a_single_worker_measurement_the_replay_cannot_reach_is_warned_of(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1000 steps/s for one worker of a step that moves megabytes over 100 Mbit/s: the prediction still runs, and
    says on stderr that N = 1 is not pinned to the measurement (it once said only 'tracing's cost undone 4.00x')."""
    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    write_single_worker(SingleWorker(steps_per_s=1000.0, window_s=30.0), trace / SINGLE_WORKER_NAME)
    assert run_predict(parse([str(trace), "--workers", "1", "--bandwidth", "100Mbit/s", "--steps", "4", "--seeds",
                              "1", "--out", str(tmp_path / "out")])) == 0
    err = capsys.readouterr().err
    assert f"warning: {trace / SINGLE_WORKER_NAME}: one worker replays at" in err and "not pinned" in err


def test_tracings_cost_is_worked_out_on_the_link_the_single_worker_was_measured_on() -> None:
    """The dev mlp trace's worker was measured untraced at 10.82 steps/s over 500 Mbit/s. Asked for 200 Mbit/s,
    the speed-up was fitted there, where one worker can never reach 10.82: it ran to its 4x bound (ops a quarter of
    their traced time) with a warning, and the band's N = 1 was scaled up to the link's bound. With the
    measurement's own link named in its file, the factor is the one found at 500 Mbit/s, whatever link is asked."""
    from parsers.singleworker import read_single_worker
    from tracegen.curve import scaling_curve
    from tracegen.predict import PredictConfig, band_curves, prepared
    from tracegen.untraced import MAX_SPEED

    trace = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    model = build_model(read_trace(trace))
    unnamed = read_single_worker(trace / SINGLE_WORKER_NAME)
    assert unnamed.link_bits_per_s is None  # measured before the testbed wrote it down
    named = dataclasses.replace(unnamed, link_bits_per_s=500e6)

    def prep(single: SingleWorker, mbit: int) -> tuple[float, float]:
        config = PredictConfig(workers=(1,), single_worker=single, bandwidth_bytes_per_s=mbit * 125_000, steps=4,
                               seeds=1)
        prepared_ = prepared(model, config)
        high = band_curves(prepared_, config, (1,), find_plateau=False)[1].points[0]
        mid = scaling_curve(prepared_.model, config.sim_config(prepared_.links["mid"]), (1,), seeds=1,
                            find_plateau=False).points[0]
        return prepared_.speed, high.steps_per_s / mid.steps_per_s

    at_500 = prep(named, 500)
    assert prep(unnamed, 500) == at_500  # where it was measured, naming it changes nothing
    assert prep(unnamed, 200)[0] == MAX_SPEED  # the old fit, on the asked link
    speed, band_over_point = prep(named, 200)
    assert speed == at_500[0] < MAX_SPEED
    assert band_over_point < 1.05 < prep(unnamed, 200)[1]


def test_a_ps_bound_plateau_says_what_the_profiles_points_at_the_ps_cap_allow(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real trace whose PS ran at its cap (data/remeasured, the PS at 0.1 cores), its profile beside it: the
    plateau rests on the single-worker cost, and the note gives the at-cap estimate above it."""
    trace = pathlib.Path(__file__).resolve().parents[2] / "data" / "remeasured" / "cnn_300mbit_q5_b16k_ps01_pscap"
    trace = trace / "run"
    argv = [str(trace / "trace"), "--workers", "1,6", "--steps", "6", "--seeds", "1", "--out", str(tmp_path / "p")]
    assert run_predict(parse(argv)) == 0
    out = capsys.readouterr().out
    assert "note: the PS's CPU binds this plateau" in out
    found = re.search(r"points with the PS at its cap put it at ([\d.]+) steps/s", out)
    assert found is not None
    plateau = float(rows(tmp_path / "p" / "curve.csv")[-1]["steps_per_s"])
    assert float(found[1]) > plateau * 1.2


def test_the_ps_held_at_its_cap_is_a_note_beside_the_curve(tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A real holdout trace whose single-worker.json has ps_at_cap (data/atcap): the curve is the one its file
    without ps_at_cap gives, and predict says what the held figure would bound the PS at."""
    here = pathlib.Path(__file__).resolve().parents[2] / "data" / "atcap"
    trace = here / "test" / "deep_500mbit_q100_b16k_ps03" / "trace"
    alone = tmp_path / "trace"
    shutil.copytree(trace, alone)
    shutil.copy(here / "alone" / "test" / trace.parent.name / "trace" / "single-worker.json", alone)
    argv = ["--workers", "1,3", "--steps", "4", "--seeds", "1"]
    assert run_predict(parse([str(trace), *argv, "--out", str(tmp_path / "held")])) == 0
    out = capsys.readouterr().out
    assert "one worker holding the PS at a cap of 0.124 cores cost it 32.1 ms of CPU a step" in out
    assert "a PS bound of 9.34 steps/s on its 0.3 cores; not used above" in out
    assert run_predict(parse([str(alone), *argv, "--out", str(tmp_path / "alone")])) == 0
    assert "ps_at_cap" not in capsys.readouterr().out
    assert (tmp_path / "held" / "curve.csv").read_bytes() == (tmp_path / "alone" / "curve.csv").read_bytes()


def test_a_worker_behind_a_slow_link_of_its_own_counts_in_the_cost(mlp_trace_dir: pathlib.Path) -> None:
    # the others train until it has run its steps: the estimate must see their extra steps (it said ~1 s for a
    # run of hours, and never warned)
    from tracegen.predict import SLOW_EVENTS, PredictConfig, estimated_events

    model = build_model(read_trace(mlp_trace_dir))
    even = PredictConfig(workers=(2,), steps=3, seeds=1)
    slow = PredictConfig(workers=(2,), steps=3, seeds=1, worker_link_bits_per_s=(100_000,))
    step_s = model.measured_step_ns / 1e9
    behind_s = 8 * (model.bytes_of(TaskKind.PULL) + model.bytes_of(TaskKind.PUSH)) / 100_000
    # the fast worker's steps while the slow one runs its 3 + 3, and the plateau search's 255 fast ones
    fast_steps = 6 * behind_s / step_s
    assert estimated_events(model, slow) >= 3 * model.n_tasks * (6 + 256 * fast_steps)
    assert estimated_events(model, even) < SLOW_EVENTS < estimated_events(model, slow)


def test_a_long_list_of_worker_counts_is_not_refused_when_the_rate_stalls_long_before(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """``--workers 1-3000`` on the mlp trace: predict stops where the rate stalls (N = 18 at 1 Gbit/s), but the
    estimate counted every N asked, said 'roughly 7254 s' for a run of seconds at 1-1000, and refused 1-3000 as
    more than 1e10 events. The estimate now counts the N it likely simulates, and says what every N would cost."""
    from tracegen.outputs import OutputDir
    from tracegen.predict import (
        MAX_EVENTS,
        PredictConfig,
        budget,
        estimated_events,
        estimated_seconds,
        likely_workers,
        resolve_links,
    )

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=tuple(range(1, 3001)), bandwidth_bytes_per_s=125_000_000)
    spec = resolve_links(model, config)["mid"]
    likely = likely_workers(model, config, spec)
    assert likely == config.workers[:len(likely)] and 4 <= likely[-1] < 100
    assert likely_workers(model, dataclasses.replace(config, every_n=True), spec) == config.workers
    assert likely_workers(model, config, None) == config.workers
    faster = resolve_links(model, dataclasses.replace(config, bandwidth_bytes_per_s=10 * 125_000_000))["mid"]
    assert likely_workers(model, config, faster)[-1] > likely[-1]  # more workers before the link saturates
    every = estimated_events(model, config, spec)
    assert estimated_events(model, config, spec, workers=likely) < MAX_EVENTS < every
    with OutputDir(tmp_path / "out", ["curve.csv"]) as out:
        seconds = (estimated_seconds(model, config, spec, workers=likely), estimated_seconds(model, config, spec))
        lines = budget(model, config, out, estimated_events(model, config, spec, workers=likely), every_events=every,
                       stalls_by=likely[-1], seconds=seconds)
        with pytest.raises(ConfigError, match=r"more than the 1e\+10 allowed"):
            budget(model, dataclasses.replace(config, every_n=True), out, every, seconds=(seconds[1], seconds[1]))
    assert any(f"if the rate stalls by N={likely[-1]}, as it likely does" in line and "N=3000" in line
               for line in lines)


def test_a_worker_so_slow_the_others_would_run_for_hours_is_refused_at_once(mlp_trace_dir: pathlib.Path,
                                                                           tmp_path: pathlib.Path) -> None:
    """Two workers behind 1 kbit/s links of their own (a value the file format allows): the plateau search's
    other 254 workers trained until they had run their steps, for hours with no word (a hardening pass)."""
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfar,2,1.0,1e3\n")
    argv = [str(mlp_trace_dir), "--worker-classes", str(classes), "--workers", "1-2", "--steps", "3", "--seeds",
            "1", "--jobs", "1", "--out", str(tmp_path / "out")]
    # how long it would take depends on the engine (minutes compiled, hours in pure Python): only that it is said
    with pytest.raises(ConfigError, match=r"worker 1 of the worker classes takes about .* s a step alone.* on one "):
        run_predict(parse(argv))
    assert not (tmp_path / "out").exists()


def test_worker_classes_no_n_asked_reaches_are_named(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A file of 6 workers in 3 classes with --workers 1-2: the two later classes were read and went unused, the
    curve that of 2 slow workers, with no word but the classes' list (a new user's file)."""
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nslow,2,0.5,-\n"
                       "mid,2,0.8,-\nfast,2,1.5,-\n")
    argv = [str(mlp_trace_dir), "--worker-classes", str(classes), "--workers", "1-2", "--steps", "3", "--seeds",
            "1", "--bandwidth", "10Gbit/s", "--jobs", "1", "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    assert (f"note: {classes}:4: class 'mid' and 1 more listed past the 2 workers asked: no N asked has a worker of "
            "them") in capsys.readouterr().out.splitlines()


def test_a_batch_size_from_nowhere_is_said(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The mlp trace converted to tables (its meta.json not carried) predicted 10.4 samples/s at N = 1 where the
    trace itself gives 332.8 (batch 32), with no word: samples/s were steps/s. (convert now carries meta.json;
    tables without it, as an older convert wrote them, still say so.)"""
    tables = tmp_path / "tables"
    assert main(["convert", str(mlp_trace_dir), "--to", "csv", str(tables)]) == 0
    (tables / "meta.json").unlink()
    argv = ["--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth", "10Gbit/s", "--jobs", "1"]
    capsys.readouterr()
    assert run_predict(parse([str(tables), *argv, "--out", str(tmp_path / "tables_out")])) == 0
    assert (f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {tables / 'meta.json'} is not there"
            in capsys.readouterr().out.splitlines())
    assert run_predict(parse([str(tables), *argv, "--batch-size", "32", "--out", str(tmp_path / "given")])) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out
    shutil.copy(mlp_trace_dir / "meta.json", tables)  # beside the tables, read as beside any trace
    assert run_predict(parse([str(tables), *argv, "--out", str(tmp_path / "beside")])) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out


def test_a_profile_and_a_bandwidth_together_are_refused(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """The profile won and the rate went unused, with no word, while report.html listed it (a hardening pass)."""
    profile = tmp_path / PROFILE_NAME
    shutil.copy(pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
                / PROFILE_NAME, profile)
    argv = [str(mlp_trace_dir), "--link-profile", str(profile), "--bandwidth", "1Gbit/s", "--workers", "1",
            "--out", str(tmp_path / "out")]
    with pytest.raises(ConfigError, match="both give the PS link; give one"):
        run_predict(parse(argv))


def test_the_note_on_a_single_worker_file_beside_the_trace_says_what_it_gives(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said "the PS's CPU per transfer" even for a file without 'ps_cpu_s_per_step' (a hardening pass)."""
    import json

    source = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    trace = tmp_path / "trace"
    shutil.copytree(source, trace)
    (trace / "link-profile.json").unlink()
    doc = json.loads((trace / "single-worker.json").read_text())
    argv = [str(trace), "--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth", "500Mbit/s"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "with")])) == 0
    assert ("the PS's CPU per transfer request, the PS's cores (0.3, a CPU quota)"
            in capsys.readouterr().out)
    doc["ps_cpu_s_per_step"] = None
    (trace / "single-worker.json").write_text(json.dumps(doc))
    assert run_predict(parse([*argv, "--out", str(tmp_path / "without")])) == 0
    note = next(line for line in capsys.readouterr().out.splitlines() if "single-worker.json" in line)
    assert "one untraced worker's rate, the PS's cores (0.3, a CPU quota)" in note
    assert "per transfer" not in note


def test_the_worker_classes_cover_every_worker_of_an_emitted_trace(mlp_trace_dir: pathlib.Path,
                                                                    tmp_path: pathlib.Path) -> None:
    """--emit-traces past the plateau search's largest N (256): the workers beyond it ran at speed 1, not their
    class's, in the trace written, with no word (a hardening pass)."""
    import json
    import statistics

    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfast,*,4,-\n")
    argv = [str(mlp_trace_dir), "--worker-classes", str(classes), "--workers", "1", "--emit-traces", "258",
            "--steps", "3", "--warmup-steps", "1", "--seeds", "1", "--bandwidth", "10Gbit/s", "--jobs", "1",
            "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    doc = json.loads((tmp_path / "out" / "traces" / "n258.json").read_bytes())
    task = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"}
    ops: dict[str, list[float]] = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "op":
            ops.setdefault(task[e["pid"]], []).append(e["dur"])
    first, last = (statistics.median(ops[f"/job:worker/replica:0/task:{w}/device:CPU:0"]) for w in (0, 257))
    assert last == pytest.approx(first, rel=0.5)  # both at speed 4; at speed 1 the last one's ops took ~4x as long


def test_a_payload_fraction_with_nothing_to_take_it_of_is_refused(mlp_trace_dir: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """--payload-fraction is the share of a --bandwidth (or of a worker class's own link); without either it went
    unused, and the curve was the trace's own link's with no word (a hardening pass)."""
    argv = [str(mlp_trace_dir), "--workers", "1", "--steps", "3", "--seeds", "1", "--payload-fraction", "0.5",
            "--out", str(tmp_path / "out")]
    with pytest.raises(ConfigError, match=r"^'--payload-fraction' 0\.5 is the share of a --bandwidth .*neither was "):
        run_predict(parse(argv))
    assert not (tmp_path / "out").exists()
    assert run_predict(parse([*argv[:-2], "--bandwidth", "1Gbit/s", "--out", str(tmp_path / "bw")])) == 0
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfar,*,1.0,1e9\n")
    assert run_predict(parse([*argv[:-2], "--worker-classes", str(classes), "--out", str(tmp_path / "own")])) == 0


def test_a_slow_link_s_rates_are_not_written_as_zero(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A big model on a slow link is a few thousandths of a step per second: the mlp trace on 1 kbit/s printed
    'steps/s 0.00', 'plateau 0.00 steps/s' and 'link bound 0.00 steps/s', curve.csv steps_per_s 0.0000 and
    report.html 'Plateau 0.00 steps/s, 0.0 samples/s': a curve that says nothing trains at all."""
    args = parse([str(mlp_trace_dir), "--workers", "1,2", "--bandwidth", "1kbit/s", "--steps", "3", "--seeds", "1",
                  "--html", "--out", str(tmp_path)])
    assert run_predict(args) == 0
    out = capsys.readouterr().out
    assert "plateau 0.00 steps/s" not in out and "link bound 0.00 steps/s" not in out, out
    table = out[out.index("bottleneck\n"):out.index("plateau ")]
    assert not re.search(r"(^|\s)0\.0+(\s|$)", table), table
    for r in rows(tmp_path / "curve.csv"):
        for column in ("steps_per_s", "samples_per_s", "steps_per_s_low", "steps_per_s_high", "band_low",
                       "band_high"):
            assert float(r[column]) > 0, (column, r)
    page = (tmp_path / "report.html").read_text()
    assert "Plateau 0.00 steps/s" not in page and " 0.0 samples/s" not in page and "<td>0.00</td>" not in page


@pytest.mark.parametrize("bandwidth", [125_000_000, 1_250_000_000])
def test_the_estimate_counts_the_plateau_probes_the_search_simulates(mlp_trace_dir: pathlib.Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     bandwidth: int) -> None:
    """A curve still climbing at its largest asked N: the search's first probe is where the roofline has
    saturated and the next finds the rate no higher, so it stops there (or the first already). The estimate
    counted a third, twice the second's workers: on the resnet trace, 1-8, half what it said was that probe (108
    workers, never run)."""
    from tracegen import curve
    from tracegen.predict import LIKELY_PROBES, PredictConfig, likely_plateau_start, resolve_links

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=(1, 2), bandwidth_bytes_per_s=bandwidth, steps=3, warmup_steps=1, seeds=1)
    spec = resolve_links(model, config)["mid"]
    simulated: list[int] = []
    run = curve.simulate_job
    monkeypatch.setattr(curve, "simulate_job", lambda job: simulated.append(job[1].n_workers) or run(job))
    curve.scaling_curve(model, config.sim_config(spec), config.workers, seeds=1, stop_at_plateau=True)
    probes = curve.plateau_probes(2, likely_plateau_start(model, config, spec))
    past = [n for n in simulated if n > 2]
    assert 1 <= len(past) <= LIKELY_PROBES < len(probes), (past, probes)  # one when the first is no higher


def test_a_likely_run_under_a_second_is_not_said_to_take_0_s(mlp_trace_dir: pathlib.Path,
                                                             tmp_path: pathlib.Path) -> None:
    """``--workers 1-3000`` on the dev mlp trace, compiled: 'about 1.2e+06 simulated events: roughly 0 s on one core
    if the rate stalls by N=11, ...' (the line for a run that may climb said 0 s; the line for one that may not
    already said at least 1 s; and the part for a run that climbs, under a second too on the C core, said 0 s)."""
    from tracegen.outputs import OutputDir
    from tracegen.predict import PredictConfig, budget, estimated_events, likely_workers, resolve_links

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=tuple(range(1, 3001)), bandwidth_bytes_per_s=125_000_000)
    spec = resolve_links(model, config)["mid"]
    likely = likely_workers(model, config, spec)
    with OutputDir(tmp_path / "out", ["curve.csv"]) as out:
        [line] = budget(model, config, out, estimated_events(model, config, spec, workers=likely),
                        every_events=estimated_events(model, config, spec), stalls_by=likely[-1],
                        seconds=(0.3, 20_000.0))
    assert "roughly 1 s on one core if the rate stalls by" in line and "5.6 h if it climbs to N=3000" in line
    with OutputDir(tmp_path / "fast", ["curve.csv"]) as out:  # the C core: both parts under a second
        [line] = budget(model, config, out, estimated_events(model, config, spec, workers=likely),
                        every_events=estimated_events(model, config, spec), stalls_by=likely[-1],
                        seconds=(0.05, 0.3))
    assert "roughly 1 s on one core if the rate stalls by" in line and " and 1 s if it climbs to N=3000" in line


@pytest.mark.parametrize("command", ["predict", "validate"])
def test_undoing_tracings_cost_is_refused_before_it_simulates_past_the_budget(
        command: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The fit to single-worker.json runs one worker up to 27 times at --steps and --seeds before the curves'
    budget is said or refused: '--steps 1000000 --seeds 1000' sat silent for hours instead of one line."""
    def simulated(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("simulated before the budget was checked")

    monkeypatch.setattr("tracegen.predict.fit_untraced", simulated)
    folder = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03"
    where = ["predict", str(folder / "trace"), "--workers", "1-2"] if command == "predict" else [
        "validate", "--measured", str(folder)]
    assert main([*where, "--steps", "1000000", "--seeds", "1000", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "undoing tracing's cost" in err and "more than the 1e+10 allowed" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


class _FittingError(Exception):
    """Raised where tracing's cost would be worked out: what was said before it is what a user saw meanwhile."""


@pytest.mark.parametrize(("steps", "said"), [("1000000", True), (None, False)])
def test_undoing_tracings_cost_is_said_first_when_it_is_long(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], steps: str | None,
                                                              said: bool) -> None:
    """'--steps 1000000 --seeds 1' on the dev mlp trace simulated one worker for about a minute to undo tracing's
    cost, in silence, before the curves' own estimate was printed; the default steps take no time and say nothing."""
    import tracegen.predict
    from tracegen.untraced import MAX_RUNS

    def fit(*_args: object, **_kwargs: object) -> None:
        raise _FittingError

    monkeypatch.setattr(tracegen.predict, "fit_untraced", fit)
    trace = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    with pytest.raises(_FittingError):
        run_predict(parse([str(trace), "--workers", "1", *(["--steps", steps] if steps else []), "--seeds", "1",
                           "--out", str(tmp_path / "out")]))
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if "tracing's cost" in line]
    if not said:
        assert lines == []
        return
    assert len(lines) == 1, lines
    assert re.fullmatch(rf"undoing tracing's cost: simulating one worker a few times \(at most {MAX_RUNS}\), about "
                        r"\S+ events a time: roughly [^,]+ a time on one core, [^,]+ at most", lines[0]), lines[0]


def test_the_profiles_cycle_points_are_a_note_beside_the_curve_not_part_of_it(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A campaign trace with its profile: predict names the link bound of the profile's cycle points at the last
    N (its cycle rate over the step's bytes, the busier direction's), and the curve is the one the same profile
    without those points gives, which gets no note."""
    trace = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    argv = ["--workers", "1,3", "--steps", "4", "--seeds", "1"]
    assert run_predict(parse([str(trace), *argv, "--out", str(tmp_path / "with")])) == 0
    found = re.search(r"cycle points \(.*\) bound N=3 at ([\d.]+) steps/s", capsys.readouterr().out)
    assert found is not None
    model = build_model(read_trace(trace))
    cycle = {p.connections: p.pull_bytes_per_s for p in profile_beside(trace).of_mode("cycle")}
    rate_3 = (cycle[2] + cycle[4]) / 2
    expected = rate_3 / max(model.bytes_of(TaskKind.PULL), model.bytes_of(TaskKind.PUSH))
    assert float(found[1]) == pytest.approx(expected, abs=0.006)
    bare = tmp_path / "trace"
    shutil.copytree(trace, bare)
    profile = profile_beside(trace)
    write_link_profile(dataclasses.replace(profile, points=tuple(p for p in profile.points if p.mode != "cycle")),
                       bare / PROFILE_NAME)
    assert run_predict(parse([str(bare), *argv, "--out", str(tmp_path / "without")])) == 0
    assert "cycle points" not in capsys.readouterr().out
    assert rows(tmp_path / "with" / "curve.csv") == rows(tmp_path / "without" / "curve.csv")


def profile_beside(trace: pathlib.Path) -> LinkProfile:
    return read_link_profile(trace / PROFILE_NAME)


@pytest.mark.parametrize("bad", [b"", b'{"traceEvents": [', b"\x00\xff garbage"])
def test_a_bad_trace_gives_its_one_error_line_and_no_notes(tmp_path: pathlib.Path, bad: bytes,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """predict said 'note: samples/s are steps/s (a batch of 1) ...' (and the notes of a link profile and a
    single-worker run beside the trace) before reading the trace, so a trace that could not be read gave the notes
    and then the error: a bad input gives only its one error line."""
    dev = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    for name in (PROFILE_NAME, SINGLE_WORKER_NAME):  # their notes: 'is not used: --bandwidth', 'using ...'
        shutil.copy(dev / name, trace_dir)
    trace = trace_dir / "step_000.json"
    trace.write_bytes(bad)
    capsys.readouterr()
    assert main(["predict", str(trace), "--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth",
                 "10Gbit/s", "--jobs", "1", "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(trace) in err, (out, err)


def test_a_null_batch_size_in_meta_json_is_said_as_a_batch_of_1(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """meta.json's "batch_size": null was taken as a batch of 1 (samples/s were steps/s), but the note that says
    so looked only for the key, found it, and said nothing."""
    import json

    from tracegen.cli_predict import batch_note

    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    meta = json.loads((trace / "meta.json").read_text())
    (trace / "meta.json").write_text(json.dumps({**meta, "batch_size": None}))
    assert batch_size_of(str(trace), None) == 1
    note = f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {trace / 'meta.json'} gives no batch_size"
    assert batch_note(str(trace), None) == note
    assert run_predict(parse([str(trace), "--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth", "10Gbit/s",
                              "--jobs", "1", "--out", str(tmp_path / "out")])) == 0
    assert note in capsys.readouterr().out.splitlines()
