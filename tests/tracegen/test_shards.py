"""PS shards: where parameters go, that a shard is a PS of its own, and the table of how many PS."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import pathlib

import pandas as pd
import pytest

from parsers import read_trace
from parsers.linkprofile import read_link_profile
from parsers.singleworker import read_single_worker
from tracegen.cli_predict import add_predict_arguments, run_predict
from tracegen.config import PredictConfig
from tracegen.errors import ConfigError
from tracegen.link import uniform_link
from tracegen.metrics import link_bound_steps_per_s, shard_utilisations, steps_per_s
from tracegen.model import TaskKind, build_model
from tracegen.placement import creation_order, place
from tracegen.preparation import prepared
from tracegen.simulate import SimConfig, simulate
from tracegen.synthetic import synthetic_model

from tracegen_support import curve_of


def test_two_shards_of_a_balanced_link_bound_step_double_the_plateau() -> None:
    """Four equal parameters, a slow link: with two shards each link carries half the bytes, so the link bound
    and the simulated throughput of many workers double (within the simulation's noise)."""
    model = synthetic_model(n_params=4, n_layers_ops=1, param_bytes=1_000_000, op_dur_ns=100_000,
                            bandwidth_bytes_per_s=10**9)
    link = uniform_link((50e6, 50e6), latency_ns=0)
    base = SimConfig(n_workers=8, steps=6, link="fifo", link_spec=link)
    one = simulate(model, base)
    split = place(model, 2, "greedy")
    two = simulate(model, dataclasses.replace(base, ps_shard_of_task=split.shard_of_task))
    assert two.n_shards == 2 and len(shard_utilisations(two)) == 2
    assert link_bound_steps_per_s(model, two) == pytest.approx(2 * link_bound_steps_per_s(model, one), rel=0.35)
    assert steps_per_s(two) > 1.6 * steps_per_s(one)
    assert all(u.push > 0.8 for u in shard_utilisations(two))


def test_predict_of_one_number_of_shards_says_it_in_the_singular(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # --ps-shards 2 said 'simulating 1 numbers of PS shards'
    from tracegen.cli import main

    assert main(["predict", str(mlp_trace_dir), "--workers", "1,2", "--steps", "3", "--seeds", "1", "--ps-shards",
                 "2", "--out", str(tmp_path / "p")]) == 0
    assert "simulating 1 number of PS shards (" in capsys.readouterr().err


def test_predict_writes_the_shards_table(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    args = parser.parse_args([str(mlp_trace_dir), "--workers", "1,4", "--steps", "4", "--seeds", "1",
                              "--ps-shards", "1-2", "--placement", "greedy", "--out", str(tmp_path / "p")])
    assert run_predict(args) == 0
    assert "PS shards (greedy placement)" in capsys.readouterr().out
    with (tmp_path / "p" / "shards.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["n_shards"] for r in rows] == ["1", "2"]
    # Derived here, not read back from what the table is built of: each shard's pull bytes per step summed by hand
    # from the trace's pulls, and the link bound of each K from them and the link rate estimated from the trace (no
    # profile, no --bandwidth: the link predict simulates). The old check, 0 <= saturating_shard < K, held for any
    # shard the table named.
    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    pull_bytes_per_s = model.link.pull_bandwidth_bytes_per_s
    for row in rows:
        k = int(row["n_shards"])
        of_task = place(model, k, "greedy", creation_order(trace)).shard_of_task
        by_hand = [0] * k
        for t in range(model.n_tasks):
            if model.kinds[t] == TaskKind.PULL:
                by_hand[of_task[t]] += model.size_bytes[t]
        assert [int(b) for b in row["shard_pull_bytes"].split(";")] == by_hand
        heaviest = max(range(k), key=by_hand.__getitem__)
        link_bound = pull_bytes_per_s / by_hand[heaviest]  # 96.3 steps/s for one PS, 160.7 for two
        plateau = float(row["plateau_steps_per_s"])
        assert plateau <= link_bound * 1.0005  # the table's 4 decimals
        # the link binds at the plateau (98-99 % busy): the shard that saturates is the one with the most bytes,
        # its pull link as busy as the plateau's rate moves its bytes
        assert (int(row["saturating_shard"]), row["saturating_resource"]) == (heaviest, "link-pull")
        assert float(row["saturating_utilisation"]) == pytest.approx(plateau / link_bound, abs=0.03)
    assert sum(int(b) for b in rows[1]["shard_pull_bytes"].split(";")) == int(rows[0]["shard_pull_bytes"])
    with pytest.raises(ConfigError, match="'ps_shards' must be from 1 to 64"):
        place(build_model(read_trace(mlp_trace_dir)), 65, "greedy")


def _shard_table(printed: str) -> dict[int, str]:
    """The knee cell of each K in predict's printed shards table."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["K", "knee"])
    rows = [line.split() for line in lines[start + 1:] if line[:4].strip().isdigit()]
    return {int(r[0]): r[1] for r in rows}


def test_the_shards_knee_says_at_most_where_the_n_below_it_were_not_simulated(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--workers 1,2,8: the table and shards.csv said knee 8 for every K, where the words above them said "N=8 or
    earlier (N=3-7 not simulated)", and with every N simulated two shards' knee is 5. Now the table says <=8 as
    the words, the chart and plan's table do, and shards.csv keeps knee the number, knee_as_printed saying so."""
    from tracegen.cli import main

    common = [str(mlp_trace_dir), "--steps", "4", "--seeds", "1", "--ps-shards", "1-2", "--placement", "greedy"]
    assert main(["predict", *common, "--workers", "1,2,8", "--out", str(tmp_path / "sparse")]) == 0
    printed = capsys.readouterr().out
    sparse = pd.read_csv(tmp_path / "sparse" / "shards.csv").set_index("n_shards")
    assert main(["predict", *common, "--workers", "1-8", "--out", str(tmp_path / "every")]) == 0
    every_printed = capsys.readouterr().out
    every = pd.read_csv(tmp_path / "every" / "shards.csv").set_index("n_shards")
    assert sparse.knee.dtype.kind == "i" and every.knee.dtype.kind == "i"  # still numbers to pandas
    # K = 1 of a one-PS trace is predict's own curve: its knee in words and in the table say the same
    assert "knee (95% of the plateau): N=8 or earlier (N=3-7 not simulated)" in printed, printed
    table = _shard_table(printed)
    for k in (1, 2):
        assert sparse.knee[k] == 8 and sparse.knee_as_printed[k] == "<=8"
        assert table[k] == "<=8"
        # what '<=8' claims: simulated at every N, the knee lies at 8 or among the N not simulated
        assert 3 <= every.knee[k] <= 8 and str(every.knee_as_printed[k]) == str(every.knee[k])
        assert _shard_table(every_printed)[k] == str(every.knee[k])
    assert (every.knee < 8).any()  # bare 8 was wrong here: not a finding that N = 3-7 fall short


def test_a_bad_placement_file_is_refused_before_anything_is_simulated(mlp_trace_dir: pathlib.Path,
                                                                     tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """It used to be read after the whole curve had been simulated: minutes lost to a typo."""
    from tracegen.cli import main

    path = tmp_path / "placement.csv"
    path.write_text("variable,shard\nnot-a-variable,0\n")
    assert main(["predict", str(mlp_trace_dir), "--ps-shards", "1-2", "--placement", str(path),
                 "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line 2: 'not-a-variable' is not a parameter" in err and "simulating" not in err, err
    loop = tmp_path / "loop.csv"  # said to be missing, where a file of that name is there
    loop.symlink_to(loop.name)
    assert main(["predict", str(mlp_trace_dir), "--ps-shards", "1-2", "--placement", str(loop),
                 "--out", str(tmp_path / "p")]) == 2
    assert f"(got {str(loop)!r}: a symbolic link that loops)" in capsys.readouterr().err


def test_a_shard_that_holds_almost_nothing_costs_almost_nothing() -> None:
    """Round robin over two PS puts all of the campaign mlp's kernels on shard 1 (shard 0 keeps the global step
    and the biases): measured, two PS then train as fast as one (7.06 against 7.04 steps/s at N = 4,
    data/shards). Each shard's "step done" crosses its own link; with only the chief's, the workers fell into
    lockstep and the prediction dropped to 0.69 of one PS's."""
    folder = pathlib.Path(__file__).resolve().parents[2] / "data" / "shards" / "dev" / "mlp_200mbit_k1" / "trace"
    trace = read_trace(folder)
    config = PredictConfig(workers=(4,), steps=12, seeds=1,
                           link_profile=read_link_profile(folder / "link-profile.json"),
                           single_worker=read_single_worker(folder / "single-worker.json"))
    prep = prepared(build_model(trace), config)
    lopsided = place(prep.model, 2, "round-robin", creation_order(trace))
    assert min(lopsided.bytes_per_shard(prep.model)) < 0.01 * max(lopsided.bytes_per_shard(prep.model))

    def rate(shards: tuple[int, ...]) -> float:
        sim = dataclasses.replace(config.sim_config(prep.links["mid"]), n_workers=4, ps_shard_of_task=shards)
        return steps_per_s(simulate(prep.model, sim))

    assert rate(lopsided.shard_of_task) == pytest.approx(rate(()), rel=0.05)


SHARDS = pathlib.Path(__file__).resolve().parents[2] / "data" / "shards"


def test_a_placement_without_shards_is_refused(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """It was silently ignored: the user asked for a placement and got a one-PS curve without a word."""
    from tracegen.cli import main

    assert main(["predict", str(mlp_trace_dir), "--placement", "greedy", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "'--placement' 'greedy'" in err and "--ps-shards" in err and len(err.strip().splitlines()) == 1, err


def test_the_bottleneck_is_the_busiest_shards_not_the_mean(mlp_trace_dir: pathlib.Path) -> None:
    """mlp on two round-robin shards: its kernels land on one shard, whose link saturates while the other's idles,
    and the shards' mean utilisation is under the busy threshold: the bottleneck said ``workers``."""
    from tracegen.bottleneck import BUSY_THRESHOLD, bottleneck
    from tracegen.metrics import busiest_shard, link_utilisation, ps_cpu_utilisation, shard_utilisations

    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    of_task = place(model, 2, "round-robin", creation_order(trace)).shard_of_task
    result = simulate(model, SimConfig(n_workers=12, steps=6, ps_shard_of_task=of_task))
    hot = busiest_shard(result)
    name, value = hot.busiest
    assert value >= BUSY_THRESHOLD and name.startswith("link-")
    assert max(link_utilisation(result, "pull"), link_utilisation(result, "push")) < BUSY_THRESHOLD
    assert bottleneck(result) == name
    # the whole PS's figures (from the run's totals) are the shards' mean (from each shard's own counts): the
    # shards have the same link and CPU, and the bytes and CPU time of the whole are the sum of theirs
    shards = shard_utilisations(result)
    assert len(shards) == 2 and min(u.cpu for u in shards) > 0
    for direction in ("pull", "push"):
        assert link_utilisation(result, direction) == pytest.approx(sum(getattr(u, direction) for u in shards) / 2)
    assert ps_cpu_utilisation(result) == pytest.approx(sum(u.cpu for u in shards) / 2)


def test_more_ps_than_variables_are_left_out_of_plan_sweep_and_predict(mlp_trace_dir: pathlib.Path,
                                                                      tmp_path: pathlib.Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """mlp's PS holds 7 variables (6 parameters and the global step): an eighth PS would serve nothing, so plan
    used to price it (the same rate as 7, one PS dearer), and sweep and predict to simulate it (predict's
    shards.csv had a row of empty shards, without a word). All now leave it out with a note, and refuse when
    nothing is left."""
    from tracegen.cli import main
    from tracegen.shards import holding

    trace = read_trace(mlp_trace_dir)
    model = build_model(trace)
    assert holding(model, trace, (2, 7)) == ((2, 7), None)
    kept, note = holding(model, trace, (8, 1, 9))
    assert kept == (1,) and note is not None and note.startswith("8, 9 PS shards left out") and "7 variables" in note
    for k in (1, 7):  # at most as many PS as variables: each runs some task (the global step's, at least)
        assert len(set(place(model, k, "round-robin", creation_order(trace)).shard_of_task)) == k
    catalogue = pathlib.Path(__file__).parents[2] / "data/catalogue/example.csv"
    argv = ["plan", str(mlp_trace_dir), "--catalogue", str(catalogue), "--workers", "1", "--jobs", "1"]
    assert main([*argv, "--ps-shards", "7-8", "--out", str(tmp_path / "plan")]) == 0
    assert "note: 8 PS shards left out" in capsys.readouterr().out
    n_ps = {line.split(",")[2] for line in (tmp_path / "plan/plan.csv").read_text().splitlines()[1:]}
    assert n_ps == {"7"}
    assert main([*argv, "--ps-shards", "8", "--out", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "'ps_shards' 8: the trace's PS holds 7 variables" in err and err.count("\n") == 1
    assert not (tmp_path / "none/plan.csv").exists()
    assert main(["sweep", str(mlp_trace_dir), "--workers", "1", "--steps", "4", "--warmup-steps", "1", "--jobs", "1",
                 "--ps-shards", "6-8", "--out", str(tmp_path / "sweep")]) == 0
    captured = capsys.readouterr()
    assert "2 PS shard counts" in captured.out and "warning: 8 PS shards left out" in captured.err
    assert main(["predict", str(mlp_trace_dir), "--workers", "1", "--steps", "3", "--seeds", "1", "--jobs", "1",
                 "--ps-shards", "6-8", "--out", str(tmp_path / "predict")]) == 0
    assert "note: 8 PS shards left out" in capsys.readouterr().err  # with predict's other progress lines
    rows = (tmp_path / "predict/shards.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["6", "7"]
    assert main(["predict", str(mlp_trace_dir), "--ps-shards", "8", "--out", str(tmp_path / "none")]) == 2
    assert "'ps_shards' 8: the trace's PS holds 7 variables" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["predict", "plan", "sweep"])
def test_too_many_shards_quote_what_was_written(command: str, mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """--ps-shards 1-1000 said "'ps_shards' must be from 1 to 64 (got 65)": a value nobody wrote."""
    from tracegen.cli import main

    catalogue = SHARDS.parent / "catalogue" / "example.csv"
    extra = {"plan": ["--catalogue", str(catalogue)], "sweep": ["--bandwidth", "1Gbit/s"]}
    assert main([command, str(mlp_trace_dir), "--ps-shards", "1-1000", *extra.get(command, []),
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == f"tracegen {command}: error: '--ps-shards' must be from 1 to 64 shards (got '1-1000')\n"
    assert not (tmp_path / "o").exists()


def test_the_shards_table_says_or_later_as_the_words_do() -> None:
    # a curve still rising at its last N: the words say 'N=3 or later (N=3-99 not simulated)'; the table printed 100
    from tracegen.curvetext import knee_short, knee_text
    from tracegen.shards import ShardRow, knee_cell, shards_csv

    rising = curve_of((1, 2, 100), (44.0, 82.0, 96.0), reached=False)
    row = ShardRow(n_shards=1, placement="greedy", knee_n_workers=100,
                   knee_short=knee_short((1, 2, 100), 100, False), plateau_steps_per_s=96.0, plateau_workers=100,
                   saturating_shard=0, saturating_resource="link-push", saturating_utilisation=0.9,
                   shard_pull_bytes=(1,))
    assert knee_text(rising).startswith("N=3 or later") and knee_cell(row) == ">=3"
    # shards.csv said knee 100, knee_or_earlier no: the knee at 100 itself, where the table says 'N=3 or later'
    written = shards_csv([row]).splitlines()
    assert dict(zip(written[0].split(","), written[1].split(","), strict=True))["knee_as_printed"] == ">=3"


def test_a_knee_not_reached_says_by_which_n_in_the_table_and_shards_csv(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--workers 1,2: the words said "not reached by N=2", the table printed knee '-' and shards.csv left knee and
    knee_or_earlier empty, not saying by which N. Now both say '>2', the table's cell."""
    from tracegen.cli import main

    assert main(["predict", str(mlp_trace_dir), "--steps", "4", "--seeds", "1", "--ps-shards", "1-2", "--placement",
                 "greedy", "--workers", "1,2", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "knee (95% of the plateau): not reached by N=2" in printed, printed  # K = 1: predict's own curve
    written = pd.read_csv(tmp_path / "shards.csv", dtype=str, keep_default_na=False).set_index("n_shards")
    table = _shard_table(printed)
    for k in ("1", "2"):
        assert table[int(k)] == ">2" == written.knee_as_printed[k]
        assert written.knee[k] == ""  # no knee among the N simulated: still no number
