"""The runs the C core (``tracegen/_core.c``) takes, and what it is handed.

:func:`tracegen.simulate.simulate` builds its run's state (``_Run``: the task graph's tables, the resources'
settings, the seeded generator) and, when :func:`takes` says so, hands the run to the C core instead of its own
event loop. The C core is a second form of the reference (``engine.py``, ``pscpu.py``, ``link.py``,
``simulate.py``): the same operations on the same values in the same order, so the result is the same to the
last bit, only sooner (``tests/tracegen/test_core.py`` holds the two to that on every bundled trace;
``benchmarks/bench_simulate.py`` says how much sooner).

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
    "simulate.py": "7a1388740c059f51198db1746e003e2bac9b65788b5186c59614ac41a03f6883",
}
CORE_SOURCE = "_core.c"
MAX_WORKER_TASKS = 1 << 26  # workers x tasks: the C core's per-worker tables then take up to 1 GiB
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


def takes(run: Any) -> bool:
    """Whether the C core takes ``run`` (a ``tracegen.simulate._Run``): module docstring."""
    config = run.config
    return (why_off() is None and not run.record and run.n_shards == 1 and not config.uneven
            and config.link in ("conn", "fifo") and (run.fixed_prio is not None or run.policy.name == "tf")
            and isinstance(run.rng.bit_generator, np.random.PCG64) and run.n_variants < 2**32
            and config.n_workers * run.n_tasks <= MAX_WORKER_TASKS)


def run(run: Any, offsets: list[int]) -> tuple[Any, ...]:
    """Run ``run`` on the C core from the workers' start ``offsets`` (drawn, as the reference draws them, from
    the run's generator): ``(step_start_ns, step_end_ns, end_ns, n_events, snapshots, staleness)``, each as
    :class:`~tracegen.simulate.SimResult` holds it."""
    config, spec = run.config, run.link_spec
    quota = spec.ps_quota
    cores = run.ps_cores
    limited = quota is not None and quota.applies(cores)  # pscpu.PsCpu's settings, worked out as it does
    speed = quota.host_cores if limited else cores
    period_ns = quota.period_ns if limited else 0
    quota_ns = cores * quota.period_ns if limited else math.inf
    free_handlers = max(1, math.ceil(speed - 1e-9))
    timings = run.workers[0].timings
    scalars = (config.n_workers, run.n_tasks, len(run.version), run.warmup_steps, run.total_steps, run.gap_ns,
               run.worker_threads, run.ps_threads, run.rpc_cpu_ns[0], run.rpc_cpu_ns[1],
               int(run.fixed_prio is None), int(config.link == "fifo"), spec.latency_ns,
               float(spec.connection_bytes_per_s[0]), float(spec.connection_bytes_per_s[1]), float(cores),
               float(speed), float(quota_ns), period_ns, free_handlers, *pcg_state(run.rng))
    arrays = (offsets, list(run.indeg), list(run.succ), list(run.succ_at), list(run.roots), list(run.where),
              list(run.rank), list(run.size_bytes), list(run.var_of), list(run.apply_var), list(run.transfer_of),
              run.transfers.tolist(), [] if run.fixed_prio is None else list(run.fixed_prio),
              [d for dur, _ in timings for d in dur], [d for _, delay in timings for d in delay])
    tables = (*spec.alone, *spec.both, *spec.queue_delay_ns)
    return _module().simulate(scalars, arrays, tables)  # type: ignore[no-any-return]
