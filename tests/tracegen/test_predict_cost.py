"""``tracegen predict``'s cost, said or refused before any work: the events it estimates (the N it likely simulates,
the plateau search's probes, a slow worker's extra steps, emitted traces and their size on disk), the line that says
how long, and undoing tracing's cost within the budget."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest

from parsers import read_trace
from tracegen.cli import main
from tracegen.cli_predict import run_predict
from tracegen.errors import ConfigError
from tracegen.model import TaskKind, build_model

from tracegen_support import parse


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


@pytest.mark.parametrize("start", [0, 3, 20, 100, 256, 1000])
@pytest.mark.parametrize("largest", [1, 8, 40, 200, 300])
def test_the_cost_estimate_counts_the_plateau_search_s_worst_case(largest: int, start: int) -> None:
    """What predict estimates for a curve still climbing at its largest N is what the search simulates when the
    rate keeps rising from where it starts: the same N, none missed (the estimate took twice the largest N for
    the start, and a search from 20 for a range up to 1 was estimated at 2, 4 and 8 workers, not 20, 40, 80)."""
    from tracegen.plateau import plateau_probes, plateau_search

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
    from tracegen.config import PredictConfig
    from tracegen.curve import scaling_curve
    from tracegen.estimate import likely_plateau_start
    from tracegen.plateau import plateau_probes
    from tracegen.preparation import resolve_links

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=(1, 2), bandwidth_bytes_per_s=1_250_000_000, steps=3, warmup_steps=1, seeds=1)
    spec = resolve_links(model, config)["mid"]
    probes = plateau_probes(2, likely_plateau_start(model, config, spec))
    curve = scaling_curve(model, config.sim_config(spec), config.workers, seeds=1)
    assert curve.saturation_workers > 2 * 2 ** 3  # the search went past what twice the range, doubled, reaches
    # the estimate's start is the roofline's, the search's the simulated single worker's: near, not the same
    assert min(abs(p - curve.saturation_workers) for p in probes) <= 0.25 * curve.saturation_workers, probes


def test_a_worker_behind_a_slow_link_of_its_own_counts_in_the_cost(mlp_trace_dir: pathlib.Path) -> None:
    # the others train until it has run its steps: the estimate must see their extra steps (it said ~1 s for a
    # run of hours, and never warned)
    from tracegen.budget import SLOW_EVENTS
    from tracegen.config import PredictConfig
    from tracegen.estimate import estimated_events

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
    from tracegen.budget import MAX_EVENTS, budget
    from tracegen.config import PredictConfig
    from tracegen.estimate import estimated_events, estimated_seconds, likely_workers
    from tracegen.outputs import OutputDir
    from tracegen.preparation import resolve_links

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


@pytest.mark.parametrize("bandwidth", [125_000_000, 1_250_000_000])
def test_the_estimate_counts_the_plateau_probes_the_search_simulates(mlp_trace_dir: pathlib.Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     bandwidth: int) -> None:
    """A curve still climbing at its largest asked N: the search's first probe is where the roofline has
    saturated and the next finds the rate no higher, so it stops there (or the first already). The estimate
    counted a third, twice the second's workers: on the resnet trace, 1-8, half what it said was that probe (108
    workers, never run)."""
    from tracegen import curve
    from tracegen.config import PredictConfig
    from tracegen.estimate import LIKELY_PROBES, likely_plateau_start
    from tracegen.plateau import plateau_probes
    from tracegen.preparation import resolve_links

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=(1, 2), bandwidth_bytes_per_s=bandwidth, steps=3, warmup_steps=1, seeds=1)
    spec = resolve_links(model, config)["mid"]
    simulated: list[int] = []
    run = curve.simulate_job
    monkeypatch.setattr(curve, "simulate_job", lambda job: simulated.append(job[1].n_workers) or run(job))
    curve.scaling_curve(model, config.sim_config(spec), config.workers, seeds=1, stop_at_plateau=True)
    probes = plateau_probes(2, likely_plateau_start(model, config, spec))
    past = [n for n in simulated if n > 2]
    assert 1 <= len(past) <= LIKELY_PROBES < len(probes), (past, probes)  # one when the first is no higher


def test_a_likely_run_under_a_second_is_not_said_to_take_0_s(mlp_trace_dir: pathlib.Path,
                                                             tmp_path: pathlib.Path) -> None:
    """``--workers 1-3000`` on the dev mlp trace, compiled: 'about 1.2e+06 simulated events: roughly 0 s on one core
    if the rate stalls by N=11, ...' (the line for a run that may climb said 0 s; the line for one that may not
    already said at least 1 s; and the part for a run that climbs, under a second too on the C core, said 0 s)."""
    from tracegen.budget import budget
    from tracegen.config import PredictConfig
    from tracegen.estimate import estimated_events, likely_workers
    from tracegen.outputs import OutputDir
    from tracegen.preparation import resolve_links

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


def test_the_cost_line_does_not_say_the_rate_both_stalls_by_and_climbs_to_the_largest_n(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """``predict data/traces/cnn --workers 1-4``: 'roughly 1 s on one core if the rate stalls by N=4, as it likely
    does; 3.3e+06 and 1 s if it climbs to N=4'. Where the likely N reach the largest asked, the two estimates differ
    in the plateau's search past it, and the line says so."""
    from tracegen.budget import budget
    from tracegen.config import PredictConfig
    from tracegen.outputs import OutputDir

    model = build_model(read_trace(mlp_trace_dir))
    config = PredictConfig(workers=(1, 2, 3, 4), bandwidth_bytes_per_s=125_000_000)
    with OutputDir(tmp_path / "out", ["curve.csv"]) as out:
        [line] = budget(model, config, out, 4e6, every_events=9e6, stalls_by=4, seconds=(2.0, 5.0))
        [fewer] = budget(model, config, out, 4e6, every_events=9e6, stalls_by=3, seconds=(2.0, 5.0))
    assert "stalls by N=4" not in line and "climbs to N=4" not in line, line
    assert "if the plateau past N=4 is found soon, as it likely is;" in line
    assert line.endswith("if the rate climbs far past it"), line
    assert "if the rate stalls by N=3, as it likely does;" in fewer and "if it climbs to N=4" in fewer  # as before


@pytest.mark.parametrize("command", ["predict", "validate"])
def test_undoing_tracings_cost_is_refused_before_it_simulates_past_the_budget(
        command: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The fit to single-worker.json runs one worker up to 27 times at --steps and --seeds before the curves'
    budget is said or refused: '--steps 1000000 --seeds 1000' sat silent for hours instead of one line."""
    def simulated(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("simulated before the budget was checked")

    monkeypatch.setattr("tracegen.preparation.fit_untraced", simulated)
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
    import tracegen.preparation
    from tracegen.untraced import MAX_RUNS

    def fit(*_args: object, **_kwargs: object) -> None:
        raise _FittingError

    monkeypatch.setattr(tracegen.preparation, "fit_untraced", fit)
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
