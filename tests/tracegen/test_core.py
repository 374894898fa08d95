"""The C core (``tracegen/_core.c``, :mod:`tracegen.fastcore`): built where the install had a C compiler, in step
with the reference it mirrors (``engine.py``, ``pscpu.py``, ``link.py``, ``simulate.py``), and the same result as
the reference to the last bit on every bundled trace and on every kind of run it takes."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers import read_trace
from tracegen import fastcore, native
from tracegen.config import PredictConfig
from tracegen.inputs import load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.link import uniform_link
from tracegen.model import StepModel, TaskKind, build_model
from tracegen.preparation import prepared
from tracegen.simulate import SimConfig, simulate
from tracegen.synthetic import synthetic_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
# every single-worker trace in data/ with the files predict reads beside it (a link profile, mostly a
# single-worker measurement: the PS's CPU quota and its cost per request), and the toy traces without them
TRACES = [p for p in sorted({*ROOT.glob("data/traces/*"), *ROOT.glob("data/**/trace")})
          if p.is_dir() and (any(p.glob("step_*")) or (p / "plugins").is_dir())]
MLP = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"

core_on = pytest.mark.skipif(fastcore.why_off() is not None, reason=f"the C core is off: {fastcore.why_off()}")


def as_predict_prepares(trace: pathlib.Path) -> tuple[StepModel, SimConfig]:
    """The model and the simulation settings ``tracegen predict TRACE`` simulates (one PS shard: a trace of a job on
    several PS tasks is simulated on one, as predict's --ps-shards 1 does)."""
    profile, single = profile_beside(str(trace)), single_worker_beside(str(trace))
    config = PredictConfig(link_profile=None if profile is None else load_profile(profile),
                           single_worker=None if single is None else load_single_worker(single))
    prep = prepared(build_model(read_trace(trace)), config)
    return prep.model, config.sim_config(prep.links["mid"])


def same_either_way(model: StepModel, config: SimConfig) -> None:
    """The run goes to the C core (which declines the runs it does not take), and its result is the reference's,
    every field."""
    assert fastcore.simulate(model, config) is not None, config
    core, reference = simulate(model, config), simulate(model, config, core=False)
    for field in dataclasses.fields(reference):
        assert getattr(core, field.name) == getattr(reference, field.name), (field.name, config)


@pytest.mark.skipif(os.environ.get(native.PURE_ENV) == "1", reason="TRACEGEN_PURE=1 asks for the reference")
def test_the_core_runs_where_the_install_had_a_compiler() -> None:
    if (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")) is None:
        pytest.skip("no C compiler here: the install has no C core, and the reference runs every simulation")
    assert fastcore.why_off() is None, f"the C core is off: {fastcore.why_off()} (pip install -e . rebuilds it)"


def test_the_model_page_counts_the_traces_this_checks() -> None:
    """docs/model.md says on how many bundled traces the core is held to the reference: as many as are here."""
    assert f"on all {len(TRACES)} bundled traces" in (ROOT / "docs" / "model.md").read_text()


@core_on
@pytest.mark.parametrize("trace", TRACES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_gives_the_references_result_on_every_bundled_trace(trace: pathlib.Path) -> None:
    model, config = as_predict_prepares(trace)
    for n in (1, 3, 6):
        for link, policy in (("conn", "tf"), ("fifo", "tictac")):
            same_either_way(model, dataclasses.replace(config, n_workers=n, steps=5, warmup_steps=2, seed=n,
                                                       link=link, policy=policy, ps_shard_of_task=()))


@core_on
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 7), steps=st.integers(1, 5), warmup=st.integers(0, 3), seed=st.integers(0, 2**32),
       link=st.sampled_from(["conn", "fifo"]), policy=st.sampled_from(["tf", "tictac", "fixed"]),
       worker_threads=st.integers(1, 4), ps_threads=st.integers(1, 3), spread=st.sampled_from([None, 0, 10**7]),
       gap=st.sampled_from([0, 3_000_000]), spec=st.sampled_from(["profile", "rate", "trace"]))
def test_the_core_gives_the_references_result_on_any_settings(
        n: int, steps: int, warmup: int, seed: int, link: str, policy: str, worker_threads: int, ps_threads: int,
        spread: int | None, gap: int, spec: str) -> None:
    model, config = _mlp()
    link_spec = {"profile": config.link_spec, "trace": None,
                 "rate": uniform_link((3e6, 2e6), connection_bytes_per_s=(1e6, 1.5e6), latency_ns=40_000,
                                      two_way_bytes_per_s=(2e6, 1e6))}[spec]
    order = tuple(model.names[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PUSH)[::-1]
    same_either_way(model, SimConfig(n_workers=n, steps=steps, warmup_steps=warmup, seed=seed, link=link,
                                     policy=policy, order=order if policy == "fixed" else (), link_spec=link_spec,
                                     worker_threads=worker_threads, ps_threads=ps_threads, start_spread_ns=spread,
                                     step_gap_ns=gap))


_MLP: list[tuple[StepModel, SimConfig]] = []


def _mlp() -> tuple[StepModel, SimConfig]:
    if not _MLP:
        _MLP.append(as_predict_prepares(MLP))
    return _MLP[0]


@core_on
def test_a_large_synthetic_step_with_many_workers() -> None:
    """The benchmark's ResNet-sized step, at more workers than the bundled traces are simulated with in tests."""
    model = synthetic_model(n_params=40, n_layers_ops=3, param_bytes=160_000, op_dur_ns=100_000,
                            bandwidth_bytes_per_s=1_250_000_000, latency_ns=50_000)
    same_either_way(model, SimConfig(n_workers=24, steps=4, warmup_steps=1, seed=3))


@core_on
@pytest.mark.parametrize("param_bytes", [0, 1, 7])
def test_transfers_of_no_bytes_or_a_few(param_bytes: int) -> None:
    """A transfer of no bytes is done the moment it starts (no queue, no event); one of a byte or a few finishes
    within the rounding allowance of its rate: paths the bundled traces may not take."""
    model = synthetic_model(n_params=5, n_layers_ops=2, param_bytes=param_bytes, op_dur_ns=1000,
                            bandwidth_bytes_per_s=10**6, latency_ns=10)
    for link in ("conn", "fifo"):
        same_either_way(model, SimConfig(n_workers=3, steps=4, link=link))


@core_on
def test_a_run_past_the_engines_last_instant_fails_the_same_way() -> None:
    model = synthetic_model(n_params=1, n_layers_ops=1)
    config = SimConfig(n_workers=2, steps=3000, warmup_steps=0, step_gap_ns=10**15)
    errors = []
    for core in (True, False):
        with pytest.raises(OverflowError) as info:
            simulate(model, config, core=core)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "past the engine's last instant" in errors[0]


def test_the_runs_it_does_not_take_go_to_the_reference() -> None:
    model, config = _mlp()
    config = dataclasses.replace(config, n_workers=3)
    others = [dataclasses.replace(config, link="fair"), dataclasses.replace(config, record_tasks=True),
              dataclasses.replace(config, worker_speed=(0.5,)),
              dataclasses.replace(config, worker_link_bytes_per_s=(1e6,)),
              dataclasses.replace(config, ps_shard_of_task=tuple(t % 2 for t in range(model.n_tasks)))]
    for other in others:
        assert fastcore.simulate(model, other) is None, other
    assert (fastcore.simulate(model, config) is not None) == (fastcore.why_off() is None)


def test_a_recorded_run_never_reaches_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose every task is handed to ``on_task`` (a synthetic trace's) is the reference's to run."""
    model, config = _mlp()

    def refuse(*_args: object) -> None:
        raise AssertionError("a recorded run was handed to the C core")

    monkeypatch.setattr(fastcore, "simulate", refuse)
    records: list[object] = []
    simulate(model, dataclasses.replace(config, n_workers=2, steps=2), on_task=records.append)
    assert records


def test_an_edit_to_a_source_it_mirrors_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(fastcore.MIRRORS, "link.py", "the digest of an older link.py")
    fastcore.why_off.cache_clear()
    try:
        why = fastcore.why_off()
        assert why is not None and ("link.py changed since" in why or "not built" in why or "PURE" in why), why
    finally:
        monkeypatch.undo()
        fastcore.why_off.cache_clear()


@core_on
def test_its_draws_are_numpys_from_any_state() -> None:
    """The C core continues the run's PCG64 stream: Generator.integers for the traced step a step replays, then
    Generator.permutation for its transfer order (tf's), from states with and without half a draw buffered."""
    from tracegen import _core  # type: ignore[attr-defined]

    for seed in range(20):
        rng = np.random.default_rng(seed)
        rng.integers(0, 10**6, size=seed % 3)
        for below, n in ((2, 1), (12, 61), (3, 1611), (2**32, 5)):
            first, perm = _core.stream(*fastcore.pcg_state(rng), below, n)
            assert first == int(rng.integers(below))
            assert list(perm) == rng.permutation(n).tolist()


@core_on
def test_ctrl_c_stops_a_long_run_in_the_core(tmp_path: pathlib.Path) -> None:
    """The C core runs without Python's eval loop, where Ctrl-C is noticed: it lets Python's signal handlers run
    every million events, so a run of minutes stops within about a second, as the reference's does."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "long.py"
    script.write_text(
        "from tracegen.synthetic import synthetic_model\n"
        "from tracegen.simulate import SimConfig, simulate\n"
        "model = synthetic_model(n_params=161, n_layers_ops=3, param_bytes=160_000, op_dur_ns=100_000,\n"
        "                        bandwidth_bytes_per_s=1_250_000_000, latency_ns=50_000)\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    simulate(model, SimConfig(n_workers=64, steps=15000))  # minutes, in the C core\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509 - only the disposition pytest's own start may have left ignored
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    time.sleep(1.0)  # into the run
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)  # the run itself would take minutes
    assert out.strip() == "interrupted" and proc.returncode == 0


def test_a_run_too_large_is_refused_as_the_reference_refuses_it() -> None:
    """The C core works out a model's tables once, on a run of one worker and one step: a run of these settings
    too large to simulate still gets the reference's refusal, before any work."""
    from tracegen.errors import ConfigError

    model, config = _mlp()
    simulate(model, dataclasses.replace(config, n_workers=2, steps=3))  # its settings known
    with pytest.raises(ConfigError, match="task instances one simulation may run"):
        simulate(model, dataclasses.replace(config, n_workers=100_000, steps=1_000_000))
