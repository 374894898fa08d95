"""The runs the C core (``tracegen/_core.c``) takes, and what it is handed.

:func:`tracegen.simulate.simulate` hands its runs to :func:`simulate` here first, which runs those the C core
takes (below) instead of the reference's event loop, and declines the rest. What a run of a model with given
settings needs beyond its workers' count, steps, seed and start spread (the task graph's tables, the resources'
settings: :class:`Settings`) is worked out once by the reference's own ``_Run`` and kept for the next runs of that
model and settings (a curve's every N and seed: up to a fifth of a small model's curve went to working them out
again).

The C core is a second form of the reference (``engine.py``, ``pscpu.py``, ``link.py``, ``simulate.py``): the
same operations on the same values in the same order, so the result is the same to the last bit, only sooner
(``tests/tracegen/test_core.py`` holds the two to that on every bundled trace; ``benchmarks/bench_simulate.py``
says how much sooner).

It takes the runs a curve, a validation, a plan or a sweep is made of: one PS shard, workers alike (no speeds
or links of their own), the ``conn`` or ``fifo`` link, the ``tf`` policy or a fixed order, nothing recorded per
task. The rest (``--emit-traces``' recorded tasks, ``--worker-classes``, ``--ps-shards``, ``--link fair``) runs
on the reference.

It is used only while it mirrors the reference as it is: :data:`MIRRORS` holds the sha256 of each reference
source it was written against, and an edit to any of them (without the same edit to the C core and a new digest
here) turns it off, as does ``TRACEGEN_PURE=1``, a build older than ``_core.c``, or a generator whose draws it
does not reproduce (checked once against numpy). ``tests/tracegen/test_core.py`` fails while it is off where it
was built, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import os
import pathlib
from typing import Any

import numpy as np

from tracegen.native import PURE_ENV, source_digest

# the reference sources the C core mirrors, as it was written against them (sha256)
MIRRORS = {
    "engine.py": "4aa76f7a0144aa91b268ab1d23587af0f127f3a868c8fdeaa6d53b0544b196a7",
    "pscpu.py": "558799bd0f0e151735b805455ea48c2b905702a123bc97d6cb6641f66d080211",
    "link.py": "b9799b87212fd463901e1b41dde2ed08ac4b6bdcd0faf9b55cab641a4280fb83",
    "simulate.py": "2b1e652ca3bebe1ad9df71952e18c7684c98e12b0f1a5cd0f5958cd0626b69d2",
}
CORE_SOURCE = "_core.c"
MAX_WORKER_TASKS = 1 << 26  # workers x tasks: the C core's per-worker counts of what each task waits for, 512 MiB
_DIR = pathlib.Path(__file__).resolve().parent
_MASK64 = (1 << 64) - 1


def _module() -> Any:
    """The compiled C core, or None where it was not built."""
    try:
        from tracegen import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _core


@functools.cache
def why_off() -> str | None:
    """Why the C core does not run in this process (None: it does)."""
    core = _module()
    if core is None:
        return "not built (no C compiler when tracegen was installed)"
    if os.environ.get(PURE_ENV) == "1":
        return f"{PURE_ENV}=1"
    source = _DIR / CORE_SOURCE
    if source.exists() and getattr(core, "SOURCE_DIGEST", None) != source_digest(source):
        return f"built from another {CORE_SOURCE} than the one beside it (reinstall to rebuild it)"
    changed = [name for name, digest in MIRRORS.items() if source_digest(_DIR / name) != digest]
    if changed:
        return (f"{', '.join(changed)} changed since the C core was written against them: make the same change "
                f"in {CORE_SOURCE} and record the new digests in tracegen/fastcore.py's MIRRORS")
    if not _draws_like_numpy(core):
        return "numpy's PCG64 draws are not the ones the C core reproduces"
    return None


def pcg_state(rng: np.random.Generator) -> tuple[int, int, int, int, int, int]:
    """The generator's PCG64 state as the C core takes it: state and increment in 64-bit halves, then the
    buffered 32-bit half."""
    st = rng.bit_generator.state
    state, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    return state >> 64, state & _MASK64, inc >> 64, inc & _MASK64, int(st["has_uint32"]), int(st["uinteger"])


def _draws_like_numpy(core: Any) -> bool:
    """Whether the C core's draws from a PCG64 state are numpy's (Generator.integers, then .permutation)."""
    for seed, below, n in ((0, 12, 1611), (7, 3, 61), (20261206, 2, 5)):
        rng = np.random.default_rng(seed)
        rng.integers(0, 1000, size=3)  # leaves half a 64-bit draw buffered
        first, perm = core.stream(*pcg_state(rng), below, n)
        if first != int(rng.integers(below)) or list(perm) != rng.permutation(n).tolist():
            return False
    return True


def takes_config(config: Any) -> bool:
    """What a ``SimConfig`` says alone of whether the C core takes its run (module docstring): the core is on,
    nothing is recorded, the workers are alike, the link is ``conn`` or ``fifo``, the tasks are on one PS shard."""
    return (why_off() is None and not config.record_tasks and not config.uneven and config.link in ("conn", "fifo")
            and len(set(config.ps_shard_of_task)) <= 1)


def _takes_settings(run: Any) -> bool:
    """Whether the C core takes runs of ``run``'s settings (a ``tracegen.simulate._Run``), whatever their size."""
    return (takes_config(run.config) and not run.record and run.n_shards == 1
            and (run.fixed_prio is not None or run.policy.name == "tf")
            and isinstance(run.rng.bit_generator, np.random.PCG64) and run.n_variants < 2**32)


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """What every run of one model with one set of settings (all but the workers' count, steps, seed and start
    spread) hands the C core, worked out once from the reference's ``_Run``: the task graph's tables, the
    resources' settings, and what the result names besides its times."""

    n_tasks: int
    n_variables: int
    link_spec: Any
    ps_threads: int
    ps_cores: float
    worker_threads: int
    critical_path_ns: int  # one uncontended step: the default start spread (tracegen.simulate.critical_path_ns)
    scalars: tuple[Any, ...]  # after the run's own counts and gap, before its generator's state
    arrays: tuple[list[int], ...]
    tables: tuple[Any, ...]


def _settings(run: Any, critical_path_ns: int) -> Settings:
    """:class:`Settings` of ``run`` (a ``tracegen.simulate._Run`` the C core takes)."""
    config, spec = run.config, run.link_spec
    quota, cores = spec.ps_quota, run.ps_cores
    limited = quota is not None and quota.applies(cores)  # pscpu.PsCpu's settings, worked out as it does
    speed = quota.host_cores if limited else cores
    timings = run.workers[0].timings
    scalars = (run.worker_threads, run.ps_threads, run.rpc_cpu_ns[0], run.rpc_cpu_ns[1],
               int(run.fixed_prio is None), int(config.link == "fifo"), spec.latency_ns,
               float(spec.connection_bytes_per_s[0]), float(spec.connection_bytes_per_s[1]), float(speed),
               float(cores * quota.period_ns if limited else math.inf), quota.period_ns if limited else 0,
               max(1, math.ceil(speed - 1e-9)))
    arrays = (list(run.indeg), list(run.succ), list(run.succ_at), list(run.roots), list(run.where), list(run.rank),
              list(run.size_bytes), list(run.var_of), list(run.apply_var), list(run.transfer_of),
              run.transfers.tolist(), [] if run.fixed_prio is None else list(run.fixed_prio),
              [d for dur, _ in timings for d in dur], [d for _, delay in timings for d in delay])
    return Settings(n_tasks=run.n_tasks, n_variables=len(run.version), link_spec=spec, ps_threads=run.ps_threads,
                    ps_cores=run.ps_cores, worker_threads=run.worker_threads, critical_path_ns=critical_path_ns,
                    scalars=scalars, arrays=arrays, tables=(*spec.alone, *spec.both, *spec.queue_delay_ns))


# the settings of the last few (model, settings) simulated: a curve's every N and seed share one. Each entry keeps
# its model, so that the model's id cannot name another model while the entry lasts
_KNOWN: collections.OrderedDict[tuple[int, Any], tuple[Any, Settings | None]] = collections.OrderedDict()
_KNOWN_MOST = 8


def simulate(model: Any, config: Any) -> tuple[Settings, tuple[Any, ...]] | None:
    """``tracegen.simulate.simulate(model, config)`` in the C core, or None when it does not take the run
    (module docstring; the caller runs the reference then). The reference's ``_Run`` of the settings, made once per
    model and settings, checks them and gives the tables. Returns the settings and
    ``(step_start_ns, step_end_ns, end_ns, n_events, snapshots, staleness)``, each as
    :class:`~tracegen.simulate.SimResult` holds it."""
    from tracegen import simulate as reference  # (at the call: it imports this module)

    if not takes_config(config):
        return None
    same = dataclasses.replace(config, n_workers=1, steps=1, warmup_steps=0, seed=0, start_spread_ns=None)
    key = (id(model), same)
    known = _KNOWN.get(key)
    if known is None or known[0] is not model:
        run = reference._Run(model, same, None)  # checks the settings against the model, as the reference does
        settings = _settings(run, reference.critical_path_ns(model, run.link_spec)) if _takes_settings(run) else None
        _KNOWN[key] = (model, settings)
        while len(_KNOWN) > _KNOWN_MOST:
            _KNOWN.popitem(last=False)
    else:
        _KNOWN.move_to_end(key)
        settings = known[1]
    n = config.n_workers
    if (settings is None or n * settings.n_tasks > MAX_WORKER_TASKS
            or n * config.total_steps * settings.n_tasks > reference.MAX_TASK_INSTANCES):
        return None  # (the reference says why a run is too large)
    rng = np.random.default_rng(config.seed)  # as the reference's run draws: the start offsets, then the steps'
    spread = settings.critical_path_ns if config.start_spread_ns is None else config.start_spread_ns
    offsets = reference.start_offsets(rng, n, spread)
    scalars = (n, settings.n_tasks, settings.n_variables, config.warmup_steps, config.total_steps,
               config.step_gap_ns + model.step_gap_ns, *settings.scalars, *pcg_state(rng))
    return settings, _module().simulate(scalars, (offsets, *settings.arrays), settings.tables)
