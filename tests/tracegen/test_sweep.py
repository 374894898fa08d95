"""``tracegen sweep``: rows equal direct simulations, the grid's axes (links, PS shards, a catalogue's pairs,
worker speeds) as predict and plan simulate them, the warnings and notes it gives, and each point's price
(the grid line's estimate and the time left). Resume and stops: test_sweep_resume.py; refusals, --out and
where the points run: test_sweep_cli.py."""

from __future__ import annotations

import dataclasses
import pathlib
import shutil
from collections.abc import Callable

import pandas as pd
import pytest

from parsers import read_trace
from parsers.linkprofile import read_link_profile
from parsers.singleworker import read_single_worker
from parsers.sweepdata import COLUMNS, part_paths, read_point_ids, read_rows
from tracegen.cli import main
from tracegen.config import PredictConfig
from tracegen.inputs import batch_size_of
from tracegen.instance import on_instances
from tracegen.metrics import link_utilisation, ps_cpu_utilisation, steps_per_s
from tracegen.model import build_model
from tracegen.preparation import prepared
from tracegen.simulate import SimConfig, simulate
from tracegen.sweep import build_inputs
from tracegen.units import parse_rate

from tracegen_support import ROOT
from tracegen_support import SWEEP_COMPUTED as COMPUTED
from tracegen_support import SWEEP_SMALL as SMALL
from tracegen_support import SWEEP_TRACE as TRACE


def _direct(n: int, link: str, policy: str, speed: float, seed: int) -> tuple[float, ...]:
    """What simulate() gives for one point, built here from the pieces predict and plan use."""
    model = build_model(read_trace(TRACE))
    single = read_single_worker(TRACE / "single-worker.json")
    if link.endswith(".json"):
        config = PredictConfig(link_profile=read_link_profile(link), single_worker=single)
    else:
        config = PredictConfig(bandwidth_bytes_per_s=parse_rate(link), single_worker=single)
    prep = prepared(model, config)  # tracing's cost undone, as predict does
    model, spec = prep.model, prep.links["mid"]
    if speed != 1.0:
        model = on_instances(model, dataclasses.replace(spec, ps_quota=None), worker_speed=speed, ps_speed=1.0)
    r = simulate(model, SimConfig(n_workers=n, steps=4, warmup_steps=1, seed=seed, link_spec=spec, policy=policy))
    return (steps_per_s(r), link_utilisation(r, "pull"), link_utilisation(r, "push"), ps_cpu_utilisation(r),
            r.n_events, r.end_ns)


def test_rows_equal_direct_simulations(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import tracegen.processes

    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # the points in the two processes asked for
    profile = str(TRACE / "link-profile.json")
    out = tmp_path / "o'sweep"  # a quote: the DuckDB query printed must escape it as SQL does ('')
    argv = ["sweep", str(TRACE), "--workers", "1,3", "--bandwidth", "200Mbit/s", "--link-profile", profile,
            "--policy", "tf,tictac", "--worker-speed", "1,2", "--seeds", "2", *SMALL, "--part-points", "5",
            "--jobs", "2", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "; on 2 local processes;" in printed, printed
    assert COMPUTED.search(printed).groups() == ("32", "0")  # type: ignore[union-attr]
    assert f"read_parquet('{tmp_path}/o''sweep/*.parquet')" in printed, printed
    rows = read_rows(out)
    assert list(rows.columns) == [name for name, _ in COLUMNS]
    assert len(rows) == 32 and rows.point_id.is_unique
    assert [len(pd.read_parquet(p)) for p in part_paths(out)] == [5] * 6 + [2]
    assert len(pd.read_parquet(out)) == 32  # the directory reads as one dataset
    for row in rows.itertuples():
        got = (row.steps_per_s, row.pull_link_utilisation, row.push_link_utilisation, row.ps_cpu_utilisation,
               row.n_events, row.sim_end_ns)
        assert got == _direct(row.n_workers, row.link, row.policy, row.worker_speed, row.seed), row
        assert row.samples_per_s == row.steps_per_s * batch_size_of(str(TRACE), None)
    one = rows[(rows.n_workers == 1) & (rows.policy == "tf") & (rows.seed == 0) & (rows.link == profile)]
    assert one.set_index("worker_speed").steps_per_s[2.0] > one.set_index("worker_speed").steps_per_s[1.0]
    # the same command again: every point is recognised, nothing is recomputed or added
    assert main(argv) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("0", "32")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(read_rows(out), rows)


def test_a_sweep_of_one_point_says_it_in_the_singular(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # said 'grid: 1 worker counts x 1 links x ... = 1 points' and 'computed 1 points, ...; 1 parts written', and
    # run again, 'computed 0 points, 1 were already in'
    argv = ["sweep", str(TRACE), "--workers", "2", "--bandwidth", "200Mbit/s", "--seeds", "1", *SMALL,
            "--jobs", "1", "--out", str(tmp_path / "s")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert ("grid: 1 worker count x 1 link x 1 PS shard count x 1 policy x 1 worker speed x 1 seed = 1 point, "
            in printed), printed
    assert f"computed 1 point, 0 were already in {tmp_path / 's'}; 1 part written" in printed, printed
    assert main(argv) == 0
    assert f"computed 0 points, 1 was already in {tmp_path / 's'}; 0 parts written" in capsys.readouterr().out


def test_a_job_traced_with_two_ps_tasks_is_swept_on_both(tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """mlp traced with two PS tasks (real TF, data/shards/): every point keeps each parameter on its traced PS and
    link, as predict does; on one PS the same point is far slower."""
    trace = ROOT / "data/shards/test/mlp_200mbit_k2_greedy/trace"
    out = tmp_path / "sweep"
    assert main(["sweep", str(trace), "--workers", "1,2", "--bandwidth", "200Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err  # tracing's cost undone on both PS, as predict does
    rows = read_rows(out).set_index("n_workers")
    traced = build_model(read_trace(trace))
    config = PredictConfig(bandwidth_bytes_per_s=parse_rate("200Mbit/s"),
                           single_worker=read_single_worker(trace / "single-worker.json"))
    prep = prepared(traced, config.on_traced_ps_tasks(traced))
    model, spec = prep.model, prep.links["mid"]
    assert model.traced_ps_task
    for n in (1, 2):
        config = SimConfig(n_workers=n, steps=4, warmup_steps=1, seed=0, link_spec=spec)
        on_both = simulate(model, dataclasses.replace(config, ps_shard_of_task=model.traced_ps_task))
        assert rows.steps_per_s[n] == steps_per_s(on_both)
        assert steps_per_s(simulate(model, config)) < 0.8 * steps_per_s(on_both)


def test_a_single_worker_measurement_the_replay_cannot_reach_is_warned_of(tmp_path: pathlib.Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A single-worker.json four times faster than the link lets one worker go: the sweep says so, per link, as
    predict and plan do, and still runs."""
    from parsers.singleworker import SINGLE_WORKER_NAME, write_single_worker

    trace = tmp_path / "trace"
    shutil.copytree(TRACE, trace)
    single = read_single_worker(TRACE / SINGLE_WORKER_NAME)
    write_single_worker(dataclasses.replace(single, steps_per_s=single.steps_per_s * 4,
                                            ps_cpu_s_per_step=(single.ps_cpu_s_per_step or 0) / 4),
                        trace / SINGLE_WORKER_NAME)
    assert main(["sweep", str(trace), "--workers", "1", "--bandwidth", "500Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(tmp_path / "sweep")]) == 0
    err = capsys.readouterr().err
    assert f"warning: link 500Mbit/s: {trace / SINGLE_WORKER_NAME}: one worker replays at" in err
    assert "not pinned" in err


def test_ps_shards_are_an_axis_placed_as_predict_places_them(tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Each K of --ps-shards is the simulation predict's shard table runs for K (the parameters placed on K
    shards); K = 1 of a one-PS trace is the traced PS, the same point as a sweep without shards."""
    from tracegen.placement import creation_order, place

    plain, sharded = tmp_path / "plain", tmp_path / "sharded"
    assert main(["sweep", str(TRACE), "--workers", "3", "--bandwidth", "500Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(plain)]) == 0
    assert main(["sweep", str(TRACE), "--workers", "3", "--bandwidth", "500Mbit/s", "--ps-shards", "1-3",
                 "--placement", "greedy", *SMALL, "--jobs", "1", "--out", str(sharded)]) == 0
    out = capsys.readouterr().out
    assert "3 PS shard counts" in out and "computed 3 points" in out
    rows = read_rows(sharded).set_index("ps_shards")
    assert list(rows.placement) == ["as traced", "greedy", "greedy"]  # K = 1 is the traced PS, whichever run
    assert rows.point_id[1] == read_rows(plain).point_id[0]
    assert read_point_ids(plain) < read_point_ids(sharded)  # so resuming into the plain dataset skips K = 1
    trace = read_trace(TRACE)
    prep = prepared(build_model(trace), PredictConfig(bandwidth_bytes_per_s=parse_rate("500Mbit/s"),
                                                      single_worker=read_single_worker(TRACE / "single-worker.json")))
    config = SimConfig(n_workers=3, steps=4, warmup_steps=1, seed=0, link_spec=prep.links["mid"])
    rates = []
    for k in (1, 2, 3):
        of_task = place(prep.model, k, "greedy", creation_order(trace)).shard_of_task if k > 1 else ()
        rates.append(steps_per_s(simulate(prep.model, dataclasses.replace(config, ps_shard_of_task=of_task))))
        assert rows.steps_per_s[k] == rates[-1]
        assert 0 <= rows.busiest_shard[k] < k and rows.busiest_shard_utilisation[k] >= rows.pull_link_utilisation[k]
    assert rates[0] < rates[1]  # three workers saturate one PS's link; a second shard relieves it


def test_a_job_traced_with_two_ps_tasks_swept_on_one_is_the_one_ps_simulation(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = ROOT / "data/shards/test/mlp_200mbit_k2_greedy/trace"
    out = tmp_path / "sweep"
    assert main(["sweep", str(trace), "--workers", "2", "--bandwidth", "200Mbit/s", "--ps-shards", "1,2", *SMALL,
                 "--jobs", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    rows = read_rows(out).set_index("ps_shards")
    prep = prepared(build_model(read_trace(trace)),
                    PredictConfig(bandwidth_bytes_per_s=parse_rate("200Mbit/s"),
                                  single_worker=read_single_worker(trace / "single-worker.json")))
    config = SimConfig(n_workers=2, steps=4, warmup_steps=1, seed=0, link_spec=prep.links["mid"])
    assert rows.steps_per_s[1] == steps_per_s(simulate(prep.model, config))
    assert rows.busiest_shard[1] == 0 and rows.steps_per_s[1] < rows.steps_per_s[2]


@pytest.mark.parametrize(("argv", "message"), [
    (["--placement", "greedy"], "'--placement' 'greedy' places parameters on the shards of --ps-shards"),
    (["--ps-shards", "0"], "'--ps-shards': '0' must be N or LO-HI"),
    (["--ps-shards", ""], "'--ps-shards': cannot read ''"),
    (["--ps-shards", "2", "--placement", "nowhere.csv"],
     "'--placement' must be round-robin, greedy or a placement file (got 'nowhere.csv': no such file)"),
])
def test_bad_ps_shards_are_one_line_and_no_part(argv: list[str], message: str, tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), "--workers", "1", *SMALL, *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracegen sweep: error: ") and message in err and err.count("\n") == 1
    assert part_paths(out) == []


def test_a_catalogue_sweeps_its_pairs_as_plan_moves_the_step_onto_them(tmp_path: pathlib.Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Each worker type x PS type of the example catalogue is a link of the grid: its row is the simulation plan
    runs for that pair (the PS type's link, the types' speeds), with the types and the cluster's $/hour."""
    from parsers.catalogue import read_catalogue
    from tracegen.instance import instance_links
    from tracegen.plan import traced_hosts

    catalogue = read_catalogue(ROOT / "data/catalogue/example.csv")
    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), "--workers", "2,6", "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--ps-shards", "1,2", "--worker-speed", "1,2", *SMALL, "--jobs", "2", "--out", str(out)]) == 0
    pairs = len(catalogue.workers) * len(catalogue.servers)
    assert f"x {pairs} links x 2 PS shard counts" in capsys.readouterr().out
    rows = read_rows(out)
    assert len(rows) == 2 * pairs * 2 * 2 and set(rows.link_kind) == {"instances"}
    model, traced, _ = traced_hosts(build_model(read_trace(TRACE)), read_link_profile(TRACE / "link-profile.json"),
                                    read_single_worker(TRACE / "single-worker.json"))
    checked = 0
    for worker in catalogue.workers[:2]:
        for ps in catalogue.servers[-1:]:
            spec = instance_links(model, traced, worker=worker, ps=ps, measured_rpc=True)["mid"]
            for speed in (1.0, 2.0):
                moved = on_instances(model, traced, worker_speed=worker.compute_speed * speed,
                                     ps_speed=ps.compute_speed)
                want = steps_per_s(simulate(moved, SimConfig(n_workers=6, steps=4, warmup_steps=1, seed=0,
                                                             link_spec=spec)))
                row = rows[(rows.worker_type == worker.name) & (rows.ps_type == ps.name) & (rows.n_workers == 6)
                           & (rows.ps_shards == 1) & (rows.worker_speed == speed)]
                assert len(row) == 1 and row.steps_per_s.iloc[0] == want
                assert row.link.iloc[0] == f"{worker.name}+{ps.name}"
                checked += 1
    assert checked == 4
    two = rows[rows.ps_shards == 2].iloc[0]
    price = {i.name: i.usd_per_hour for i in catalogue.instances}
    assert two.usd_per_hour == pytest.approx(two.n_workers * price[two.worker_type] + 2 * price[two.ps_type])
    assert main(["sweep", str(TRACE), "--workers", "1", "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--bandwidth", "1Gbit/s", *SMALL, "--out", str(tmp_path / "both")]) == 2
    assert "a catalogue gives each pair's PS link" in capsys.readouterr().err


def test_the_readme_sweep_runs_without_a_warning(
        readme_command: Callable[[str], list[str]], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The README's sweep, as written, began with 'warning: link 200Mbit/s: ...single-worker.json: one worker
    replays at 4.44 steps/s, 59% slower than the untraced single-worker measurement (10.82)': the trace's
    single-worker rate was measured on a 500 Mbit/s link, and one worker cannot reach it on 200 Mbit/s. Its trace,
    links and policies as written; its grid cut to one N, seed and speed (the warning is the links')."""
    argv = readme_command("### Sweeps that outgrow one machine: `tracegen sweep`")
    assert argv[0] == "sweep"
    cut = {"--workers": "1", "--seeds": "1", "--worker-speed": "1", "--out": str(tmp_path / "sweep")}
    argv = [cut.get(argv[i - 1], word) for i, word in enumerate(argv)]
    monkeypatch.chdir(ROOT)
    assert main([*argv, "--jobs", "1"]) == 0
    output = capsys.readouterr()
    assert "warning" not in output.err + output.out, output.err


def test_the_time_left_is_paced_by_each_points_priced_run_not_by_the_points(tmp_path: pathlib.Path) -> None:
    """A point costs about its N, and on the C core more (tracegen.cost): '--workers 1-3000' said '77 s left' after
    its first 128 points, the cheapest, of a grid its own grid line put at 10 minutes; paced by the workers alone,
    a point at N = 3000 weighed 300 times one at N = 10, where the C core takes about 600 times as long. A resumed
    sweep's later points weigh the same."""
    import io

    from tracegen.cli_sweep import ProgressLine, grid_seconds
    from tracegen.sweep import SweepProgress, run_seconds, sweep
    from tracegen.sweeprunner import LocalRunner

    seen: list[SweepProgress] = []
    inputs = build_inputs(str(TRACE), workers=[1, 3, 8], policies=["tf", "tictac"], steps=4, warmup_steps=1)
    price = run_seconds(inputs)
    sweep(inputs, tmp_path / "s", LocalRunner(1), progress=seen.append)
    assert (seen[0].seconds_done, seen[0].seconds_todo) == (0, pytest.approx(grid_seconds(inputs)))
    assert seen[0].seconds_todo == pytest.approx(2 * sum(price(n, 1) for n in (1, 3, 8)))
    done = [p.seconds_done for p in seen[1:]]
    assert done == sorted(done) and seen[-1].seconds_done == pytest.approx(seen[-1].seconds_todo)
    inputs = build_inputs(str(TRACE), workers=[1, 3, 8, 20], policies=["tf", "tictac"], steps=4, warmup_steps=1)
    resumed: list[SweepProgress] = []
    sweep(inputs, tmp_path / "s", LocalRunner(1), progress=resumed.append)
    assert (resumed[0].resumed, resumed[0].todo) == (6, 2)
    assert resumed[0].seconds_todo == pytest.approx(2 * price(20, 1))  # N = 20's two points only

    now = [100.0]
    stream = io.StringIO()
    line = ProgressLine(stream, clock=lambda: now[0])
    now[0] += 10.0  # 1 of 2 points done in 10 s, but a third of the work: the other point takes 20 s more, not 10
    line(SweepProgress(done=1, todo=2, resumed=0, parts_written=0, seconds_done=1.0, seconds_todo=3.0))
    assert "1/2 points (0 already done), 0.1 points/s, 20 s left" in stream.getvalue(), stream.getvalue()


def test_a_points_price_is_the_one_n_aware_price_of_tracegen_cost() -> None:
    """sweep's time left and its grid line price a point as predict and plan price a run
    (:func:`tracegen.cost.task_s`): on the C core a task instance of a run of N = 3000 costs (1 + 3000 / 1500) /
    (1 + 10 / 1500) times one of N = 10 (WORKERS_PER_COST, on the compiled engine too)."""
    from tracegen import native
    from tracegen.cost import WORKERS_PER_COST, busy_tasks, task_s
    from tracegen.sweep import run_seconds

    inputs = build_inputs(str(TRACE), workers=[10, 3000], steps=4, warmup_steps=1)
    price, engine = run_seconds(inputs), native.engine()
    per_instance = {n: price(n, 1) / (n * busy_tasks(inputs.model) * 5) for n in (10, 3000)}
    assert per_instance[10] == pytest.approx(task_s(engine, 10))
    per_cost = WORKERS_PER_COST.get(engine)
    growth = (1 + 3000 / per_cost) / (1 + 10 / per_cost) if per_cost else 1
    assert per_instance[3000] / per_instance[10] == pytest.approx(growth)


def test_a_sweep_of_a_trace_with_no_batch_size_says_samples_are_steps(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its rows' samples_per_s were steps/s with no word, where predict on the same trace says so."""
    trace = tmp_path / "trace"
    trace.mkdir()
    for step in TRACE.glob("step_00[0-3].pb.gz"):
        (trace / step.name).write_bytes(step.read_bytes())
    argv = ["sweep", str(trace), "--workers", "1", *SMALL, "--jobs", "1"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {trace / 'meta.json'} is not there" in out
    assert main([*argv, "--batch-size", "32", "--out", str(tmp_path / "b")]) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out


def test_a_points_price_counts_the_busy_tasks_as_predicts_does() -> None:
    """A TF2 trace's ops of no duration cost the engine no event of their own: predict prices the busy tasks
    (:func:`tracegen.cost.busy_tasks`), and sweep and plan priced every task, twice as many on ``tf2_pss``."""
    from tracegen import native
    from tracegen.cost import busy_tasks, run_s
    from tracegen.sweep import run_seconds

    inputs = build_inputs(str(ROOT / "data/traces/tf2_pss"), workers=[4], steps=4, warmup_steps=1)
    assert busy_tasks(inputs.model) < inputs.model.n_tasks  # what makes the two counts differ
    assert run_seconds(inputs)(4, 1) == pytest.approx(run_s(busy_tasks(inputs.model), 4, 5, native.engine()))


def test_the_bottleneck_and_the_busiest_shard_resource_differ_as_documented(tmp_path: pathlib.Path) -> None:
    """The two columns answer two questions (parsers/sweepdata.py): ``busiest_shard_resource`` is the resource
    busiest against its peak on any shard; ``bottleneck`` is the curve's label, a link direction weighed against
    what it carries while the other is busy too, on the shard busiest on that measure, and ``workers`` below 80 %.
    Checked here against each point's simulation, per shard; and on three greedy shards at N = 24 the bottleneck
    said ``workers`` (shard 2's CPU at 74 %, the busiest against the peaks) while shard 1's pull link was busy."""
    from tracegen.bottleneck import BUSY_THRESHOLD, runs_bottleneck, two_way_share
    from tracegen.link import PULL, PUSH
    from tracegen.metrics import shard_utilisations
    from tracegen.sweep import point_model

    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), "--workers", "1,8,24", "--bandwidth", "1Gbit/s", "--ps-shards", "1,3",
                 "--placement", "greedy", *SMALL, "--jobs", "1", "--out", str(out)]) == 0
    rows = read_rows(out)
    inputs = build_inputs(str(TRACE), workers=[1, 8, 24], bandwidths={"1Gbit/s": parse_rate("1Gbit/s")},
                          ps_shards=[1, 3], placement="greedy", steps=4, warmup_steps=1,
                          batch_size=batch_size_of(str(TRACE), None))
    points = {inputs.point_id(p): p for p in inputs.grid.points()}
    kinds = set()
    for row in rows.itertuples():
        point = points[row.point_id]
        result = simulate(point_model(inputs, point), inputs.grid.sim_config(point))
        spec = result.link_spec
        share = {"link-pull": two_way_share(spec, PULL), "link-push": two_way_share(spec, PUSH), "ps-cpu": 1.0}
        raw = [(value, -u.shard, u.shard, name) for u in shard_utilisations(result)
               for name, value in (("link-pull", u.pull), ("link-push", u.push), ("ps-cpu", u.cpu))]
        weighed = [(value / share[name], neg, shard, name) for value, neg, shard, name in raw]
        top, _, shard, name = max(weighed)
        assert row.bottleneck == (name if top >= BUSY_THRESHOLD else "workers"), row
        value, _, shard_raw, name_raw = max(raw)
        assert (row.busiest_shard, row.busiest_shard_resource, row.busiest_shard_utilisation) == (
            shard_raw, name_raw, value), row
        assert row.bottleneck == runs_bottleneck([result])  # the label a curve or plan gives the same run
        if row.bottleneck == "workers":  # nothing busy on the label's measure: nor against the peaks
            assert row.busiest_shard_utilisation < BUSY_THRESHOLD
            kinds.add("idle")
        elif row.bottleneck != row.busiest_shard_resource:  # only a link weighed up outranks another resource
            assert row.bottleneck.startswith("link-"), row
            kinds.add("weighed" if shard == shard_raw else "another shard")
    assert kinds == {"idle", "weighed", "another shard"}  # each way the two differ, met in this small grid
