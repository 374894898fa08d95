"""``PredictConfig``: what a prediction is asked for (the worker counts, the link, the steps and seeds, the
worker classes, the PS shards, the local processes), checked when it is made (and its policy's order against the
step model, :func:`check_config_order`), and the bounds on those values that predict, plan, sweep and validate share.
"""

from __future__ import annotations

import dataclasses

from parsers.linkprofile import LinkProfile
from parsers.singleworker import SingleWorker
from tracegen.errors import ConfigError
from tracegen.link import LINK_MODELS, LinkSpec
from tracegen.model import TIMINGS, StepModel
from tracegen.policy import check_order
from tracegen.processes import MAX_JOBS
from tracegen.simulate import SimConfig

# the fewest measured steps a curve may be simulated with: the steady window's edges cut steps into the part of
# their time inside it, while their pulls come first, so a short window reads fast (the mlp trace past its knee,
# 10 steps: up to 1.3 % over the link's bound; 3 steps: 5 %; 1 step: 50 %)
MIN_STEPS = 3

MAX_BATCH_SIZE = 10**9  # samples per step: more is a typo (a batch of a billion)

PAYLOAD_FRACTION = 1448 / 1514  # TCP payload per Ethernet frame: MTU 1500, IPv4, TCP with timestamps

# less is no protocol's overhead but a slip (TCP/IPv4 at IPv4's least MTU, 68 bytes, still carries 15 %); and at
# the least line rate (1 kbit/s) it still leaves a byte per second, to which a payload rate is rounded up at least
MIN_PAYLOAD_FRACTION = 0.01


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PredictConfig:
    """What to predict. ``bandwidth_bytes_per_s`` is a line rate, as a link or ``tc`` is configured; tensors move
    at ``payload_fraction`` of it (the rest is TCP/IP and Ethernet headers: 1448 payload bytes in a 1514-byte
    frame with TCP timestamps at a 1500-byte MTU). ``link_profile`` wins over a bandwidth."""

    workers: tuple[int, ...] = tuple(range(1, 17))
    link_profile: LinkProfile | None = None
    single_worker: SingleWorker | None = None
    bandwidth_bytes_per_s: int | None = None
    payload_fraction: float = PAYLOAD_FRACTION
    link: str = "conn"
    policy: str = "tf"
    order: tuple[str, ...] = ()
    order_file: str = ""  # where ``order`` was read from: the CLIs' ``--policy FILE``, named in errors as that
    steps: int = 30
    warmup_steps: int = 3
    seeds: int = 3
    seed: int = 0
    ps_threads: int | None = None
    batch_size: int = 1
    emit_traces: tuple[int, ...] = ()
    timing: str = "steps"
    worker_speed: tuple[float, ...] = ()  # per worker (0, 1, ...): speed relative to the traced node; others 1
    worker_link_bits_per_s: tuple[int, ...] = ()  # per worker: its own link's line rate (0: none of its own)
    ps_shards: tuple[int, ...] = ()  # also predict with these numbers of PS shards (tracegen.shards)
    placement: str = "round-robin"  # of parameters on shards: round-robin, greedy or a placement file
    ps_shard_of_task: tuple[int, ...] = ()  # the curve itself on several PS shards (tracegen.placement)
    traced_ps_task: tuple[int, ...] = ()  # the traced job's PS tasks, when it had several (on_traced_ps_tasks)
    jobs: int = 1  # local processes for the curves' simulations (tracegen.processes); the files are the same
    every_n: bool = False  # simulate every asked N, also those past a stalled rate (tracegen.plateau.stalled_after)

    def __post_init__(self) -> None:
        if not 1 <= self.jobs <= MAX_JOBS:
            raise ConfigError(f"'jobs' must be from 1 to {MAX_JOBS} (got {self.jobs})")
        if not self.workers or min(self.workers) < 1:
            raise ConfigError(f"'workers' must be worker counts >= 1 (got {self.workers!r})")
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(f"'batch_size' must be from 1 to 10^9 (got {self.batch_size})")
        if not MIN_PAYLOAD_FRACTION <= self.payload_fraction <= 1:
            raise ConfigError(f"'payload_fraction' must be from {MIN_PAYLOAD_FRACTION} to 1 "
                              f"(got {self.payload_fraction})")
        if not 1 <= self.seeds <= 1000:
            raise ConfigError(f"'seeds' must be from 1 to 1000 (got {self.seeds})")
        if self.emit_traces and min(self.emit_traces) < 1:
            raise ConfigError(f"'emit_traces' must be worker counts >= 1 (got {self.emit_traces!r})")
        if self.timing not in TIMINGS:
            raise ConfigError(f"'timing' must be one of {', '.join(TIMINGS)} (got {self.timing!r})")
        if self.link not in LINK_MODELS:
            raise ConfigError(f"'link' must be one of {', '.join(LINK_MODELS)} (got {self.link!r})")
        self.sim_config(None)  # checks steps, seeds, threads and the policy

    def sim_config(self, link_spec: LinkSpec | None) -> SimConfig:
        """The simulation settings (n_workers is set per point)."""
        return SimConfig(steps=self.steps, warmup_steps=self.warmup_steps, seed=self.seed, link_spec=link_spec,
                         link=self.link, policy=self.policy, order=self.order, ps_threads=self.ps_threads,
                         worker_speed=self.worker_speed, ps_shard_of_task=self.ps_shard_of_task,
                         worker_link_bytes_per_s=tuple(b / 8 * self.payload_fraction
                                                       for b in self.worker_link_bits_per_s))

    def one_ps(self, link_spec: LinkSpec | None) -> SimConfig:
        """:meth:`sim_config` of the traced job: its PS tasks (one, unless the trace had several) and workers like
        the traced one (what a single-worker measurement measured)."""
        return dataclasses.replace(self.sim_config(link_spec), ps_shard_of_task=self.traced_ps_task, worker_speed=(),
                                   worker_link_bytes_per_s=())

    def on_traced_ps_tasks(self, model: StepModel) -> PredictConfig:
        """This config for a model traced on several PS tasks: the traced job keeps them, and so does the curve
        unless a placement was asked for (``ps_shard_of_task``). Unchanged for a one-PS trace."""
        if not model.traced_ps_task:
            return self
        return dataclasses.replace(self, traced_ps_task=model.traced_ps_task,
                                   ps_shard_of_task=self.ps_shard_of_task or model.traced_ps_task)

    def payload_bytes_per_s(self) -> int | None:
        """The tensor bytes per second a given bandwidth carries, each way."""
        if self.bandwidth_bytes_per_s is None:
            return None
        return max(1, round(self.bandwidth_bytes_per_s * self.payload_fraction))


def check_config_order(model: StepModel, config: PredictConfig) -> None:
    """ConfigError unless every tensor of ``config.order`` is a transfer of ``model``, naming the order file and
    its line where it came from one: as the ``--policy`` it was given as (``order_file`` is that option's FILE), as
    the file's read errors name it."""
    if config.order:
        check_order(model, config.order, config.order_file, "--policy" if config.order_file else "policy")
