"""``tracegen predict`` on a measured link and worker: a --bandwidth's band, a link profile beside the trace or
given (used, named, refused with --bandwidth, its cycle points a note), and a single-worker measurement (used,
warned of when out of reach, tracing's cost worked out on its own link, the PS held at its cap)."""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil

import pytest

from parsers import read_trace
from parsers.linkprofile import PROFILE_NAME, LinkProfile, ProfilePoint, read_link_profile, write_link_profile
from parsers.singleworker import SINGLE_WORKER_NAME, SingleWorker, write_single_worker
from tracegen.cli import main
from tracegen.cli_predict import run_predict
from tracegen.errors import ConfigError
from tracegen.model import TaskKind, build_model

from tracegen_support import parse, rows


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
    from tracegen.band import band_curves
    from tracegen.config import PredictConfig
    from tracegen.curve import scaling_curve
    from tracegen.preparation import prepared
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
    note = next(line for line in capsys.readouterr().out.splitlines() if "single-worker.json" in line)
    assert note.endswith("the PS's CPU per transfer request, the PS's 0.3 cores (a CPU quota)"), note
    assert ") (" not in note  # it ended '(0.3, a CPU quota) (two hosts)'
    assert "measured on two hosts" in note
    doc["ps_cpu_s_per_step"] = None
    (trace / "single-worker.json").write_text(json.dumps(doc))
    assert run_predict(parse([*argv, "--out", str(tmp_path / "without")])) == 0
    note = next(line for line in capsys.readouterr().out.splitlines() if "single-worker.json" in line)
    assert "one untraced worker's rate, the PS's 0.3 cores (a CPU quota)" in note
    assert "per transfer" not in note


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
