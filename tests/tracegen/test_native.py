"""The compiled engine (:mod:`tracegen.native`): built where the install could compile it, byte-identical to the
pure-Python one on every kind of run, and never run when its source has changed since it was built."""

from __future__ import annotations

import gc
import importlib.machinery
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from parsers import read_trace
from tracegen import native
from tracegen.config import PredictConfig
from tracegen.inputs import load_profile, load_single_worker, profile_beside, single_worker_beside
from tracegen.model import build_model
from tracegen.preparation import prepared
from tracegen.simulate import SimConfig, simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Every kind of run the engine has: the three link models, both policies, a measured link profile with the PS's
# CPU quota and request costs, PS shards, uneven workers with links of their own, recorded tasks with staleness.
RUNS = textwrap.dedent("""
    import dataclasses, hashlib, json, sys
    from parsers import read_trace
    from tracegen import native
    from tracegen.model import build_model
    from tracegen.placement import place
    from tracegen.config import PredictConfig
    from tracegen.inputs import load_profile, load_single_worker, profile_beside, single_worker_beside
    from tracegen.preparation import prepared
    from tracegen.simulate import SimConfig, simulate

    trace = sys.argv[1]  # as predict takes it: with the link profile and single-worker measurement beside it
    config = PredictConfig(link_profile=load_profile(profile_beside(trace)),
                           single_worker=load_single_worker(single_worker_beside(trace)))
    prep = prepared(build_model(read_trace(trace)), config)
    spec = prep.links["mid"]
    shards = place(prep.model, 2, "greedy").shard_of_task
    runs = [SimConfig(n_workers=n, steps=4, warmup_steps=1, seed=n, link=link, policy=policy, link_spec=spec)
            for n in (1, 4, 9) for link in ("conn", "fifo", "fair") for policy in ("tf", "tictac")]
    runs += [SimConfig(n_workers=5, steps=3, link_spec=spec, ps_shard_of_task=shards),
             SimConfig(n_workers=4, steps=3, link_spec=spec, worker_speed=(0.5, 2.0),
                       worker_link_bytes_per_s=(0, 5e6, 2e7)),
             SimConfig(n_workers=3, steps=2, record_tasks=True),
             SimConfig(n_workers=3, steps=2, link_spec=spec, record_tasks=True, ps_shard_of_task=shards)]
    digests = [hashlib.sha256(repr(simulate(prep.model, run)).encode()).hexdigest() for run in runs]
    print(json.dumps({"engine": native.engine(), "digests": digests}))
""")
TRACE = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"


def compiler() -> str | None:
    """The C compiler an install would build with, if there is one."""
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def without_pure() -> dict[str, str]:
    """This process's environment without ``TRACEGEN_PURE``."""
    return {k: v for k, v in os.environ.items() if k != native.PURE_ENV}


def runs_in(tmp_path: pathlib.Path, *, pure: bool) -> dict[str, object]:
    """The digests of :data:`RUNS` from a fresh interpreter, compiled or (``pure``) not."""
    script = tmp_path / "runs.py"
    script.write_text(RUNS)
    env = without_pure() | ({native.PURE_ENV: "1"} if pure else {})
    done = subprocess.run([sys.executable, str(script), str(TRACE)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.environ.get(native.PURE_ENV) == "1", reason="TRACEGEN_PURE=1 asks for the pure engine")
def test_the_engine_is_compiled_where_the_install_had_a_compiler() -> None:
    if compiler() is None:
        pytest.skip("no C compiler here: the install keeps the engine pure Python, as it should")
    stale = native.from_source(ROOT / "tracegen", native.MODULES, pure=False)
    assert not native.mypyc_off(), (
        f"the engine runs as pure Python although {compiler()} is here; modules edited since the build: "
        f"{stale or 'none'} (pip install -e . rebuilds it; its output says why mypyc failed)")


def test_compiled_and_pure_engines_give_the_same_bytes(tmp_path: pathlib.Path) -> None:
    if native.compiled_file(ROOT / "tracegen", "simulate") is None:
        pytest.skip("the engine is not compiled in this install: nothing to compare")
    pure, compiled = runs_in(tmp_path, pure=True), runs_in(tmp_path, pure=False)
    assert pure["engine"] == "pure Python"
    assert compiled["engine"] in ("C core", "compiled (mypyc)")  # the C core takes the runs it can (test_core.py)
    assert compiled["digests"] == pure["digests"]
    assert len(set(pure["digests"])) == len(pure["digests"])  # the runs differ: the comparison can tell


def fake_package(tmp_path: pathlib.Path, name: str) -> pathlib.Path:
    """A package whose module ``mod`` has a compiled file that is not an extension at all: importing it fails,
    so a module that imports loaded from its source."""
    package = tmp_path / name
    package.mkdir()
    (package / "mod.py").write_text("FROM = 'source'\n")
    (package / f"mod{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"not an ELF file")
    (package / "__init__.py").write_text(
        "import pathlib\nfrom tracegen import native\n"
        "STALE = native.guard(__name__, pathlib.Path(__file__).parent, ('mod',))\n")
    return package


def test_a_module_edited_since_its_build_loads_from_source(tmp_path: pathlib.Path) -> None:
    package = fake_package(tmp_path, "tg_fake_stale")
    (package / native.MANIFEST).write_text(json.dumps({"mod": "digest of an older source"}))
    done = subprocess.run([sys.executable, "-c", "import tg_fake_stale as p, tg_fake_stale.mod as m; "
                           "print(p.STALE, m.FROM)"], capture_output=True, text=True, cwd=tmp_path,
                          env=without_pure() | {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["('mod',)", "source"]


def test_which_modules_load_from_source(tmp_path: pathlib.Path) -> None:
    package = fake_package(tmp_path, "pkg")
    digest = native.source_digest(package / "mod.py")
    assert native.from_source(package, ("mod",), pure=False) == ("mod",)  # no manifest: the build is unknown
    (package / native.MANIFEST).write_text(json.dumps({"mod": digest}))
    assert native.from_source(package, ("mod",), pure=False) == ()  # built from today's source: compiled runs
    assert native.from_source(package, ("mod",), pure=True) == ("mod",)
    (package / native.MANIFEST).write_text("[not a manifest")
    assert native.from_source(package, ("mod",), pure=False) == ("mod",)
    (package / f"mod{importlib.machinery.EXTENSION_SUFFIXES[0]}").unlink()
    assert native.from_source(package, ("mod",), pure=True) == ()  # nothing compiled: nothing to steer


def test_one_stale_module_sends_all_of_them_to_source(tmp_path: pathlib.Path) -> None:
    """Compiled together, the modules check each other's types: a compiled simulate refused a LinkSpec made by a
    link.py edited since the build ("tracegen.link.LinkSpec or None object expected; got tracegen.link.LinkSpec")."""
    package = fake_package(tmp_path, "pkg")
    (package / "other.py").write_text("FROM = 'source'\n")
    (package / f"other{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"not an ELF file")
    digests = {name: native.source_digest(package / f"{name}.py") for name in ("mod", "other")}
    (package / native.MANIFEST).write_text(json.dumps(digests))
    assert native.from_source(package, ("mod", "other"), pure=False) == ()
    (package / "other.py").write_text("FROM = 'edited source'\n")
    assert native.from_source(package, ("mod", "other"), pure=False) == ("mod", "other")


def test_a_run_leaves_nothing_for_the_cycle_collector() -> None:
    """``simulate`` turns the cycle collector off while it runs, so a reference cycle made per event would stay
    until the run ends: compiled, a local function that a lambda called was one per pull (+100 MiB at 64 workers
    and 60 steps). Whichever engine this process runs, a run must make none."""
    config = PredictConfig(link_profile=load_profile(profile_beside(TRACE)),
                           single_worker=load_single_worker(single_worker_beside(TRACE)))
    prep = prepared(build_model(read_trace(TRACE)), config)
    assert min(prep.links["mid"].rpc_cpu_ns) > 0  # the PS handles every request: the paths that made cycles
    gc.collect()
    result = simulate(prep.model, SimConfig(n_workers=6, steps=3, link_spec=prep.links["mid"], record_tasks=True))
    assert result.tasks
    assert gc.collect() == 0
